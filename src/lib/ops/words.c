/*
 * Command-line words: the one tokenizer of the shell's grammar, shared by every face that
 * reads a typed line (the shell, the cluster program). See fields.h (ig_words_split).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/fields.h"
#include "infinigram/text.h"
#include "util/util.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ig_words_split(const char *line, int grammar, char *arena, ig_word **out, size_t *n, size_t *errcol, ig_error *err)
{
    size_t cap = 16, i = 0, len = strlen(line), o = 0;
    ig_word *t = malloc(cap * sizeof *t);
    *n = 0;
    *out = t;
    *errcol = 0;
    if (!t)
        return ig_error_set(err, IG_ENOMEM, "out of memory reading the command line");
    while (i < len) {
        while (i < len && isspace((unsigned char)line[i]))
            i++;
        if (i >= len)
            break;
        if (*n == cap) {
            ig_word *bigger = realloc(t, 2 * cap * sizeof *t);
            if (!bigger)
                return ig_error_set(err, IG_ENOMEM, "out of memory reading the command line");
            *out = t = bigger;
            cap *= 2;
        }
        ig_word *k = &t[*n];
        k->col = i;
        k->quoted = line[i] == '"';
        k->text = arena + o;
        size_t start_o = o;
        if (k->quoted) {
            size_t start = i++;
            for (;;) {
                if (i >= len) {
                    *errcol = start;
                    return ig_error_set(err, IG_EUSAGE, "unterminated quote");
                }
                char c = line[i];
                if (c == '"') {
                    i++;
                    break;
                }
                if (c != '\\') {
                    arena[o++] = c;
                    i++;
                    continue;
                }
                size_t esc = i;
                char e = i + 1 < len ? line[i + 1] : '\0';
                i += 2;
                switch (e) {
                case 'n': arena[o++] = '\n'; break;
                case 't': arena[o++] = '\t'; break;
                case '\\': arena[o++] = '\\'; break;
                case '"': arena[o++] = '"'; break;
                case 'x': {
                    int h1 = i < len ? hexval(line[i]) : -1, h2 = i + 1 < len ? hexval(line[i + 1]) : -1;
                    if (h1 < 0 || h2 < 0) {
                        *errcol = esc;
                        return ig_error_set(err, IG_EUSAGE, "invalid escape: \\x needs two hex digits");
                    }
                    arena[o++] = (char)(h1 * 16 + h2);
                    i += 2;
                    break;
                }
                default: {
                    /* the whole character after the backslash, never a piece of one; a byte
                     * that begins no character is named by its value (messages are UTF-8) */
                    unsigned char lead = (unsigned char)e;
                    size_t cl = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3
                                : (lead & 0xF8) == 0xF0 ? 4 : 0;
                    *errcol = esc;
                    if (!e)
                        return ig_error_set(err, IG_EUSAGE, "invalid escape \"\\\" at the end (allowed: \\n \\t \\\\ \\\" \\xHH)");
                    if (cl && esc + 1 + cl <= len && ig_utf8_valid((const uint8_t *)line + esc + 1, cl, NULL))
                        return ig_error_set(err, IG_EUSAGE, "invalid escape \"\\%.*s\" (allowed: \\n \\t \\\\ \\\" \\xHH)",
                                            (int)cl, line + esc + 1);
                    return ig_error_set(err, IG_EUSAGE, "invalid escape: a backslash before byte 0x%02x (allowed: \\n \\t "
                                        "\\\\ \\\" \\xHH)", lead);
                }
                }
            }
        } else if (grammar && (line[i] == '(' || line[i] == ')')) {
            arena[o++] = line[i++];
        } else {
            while (i < len && !isspace((unsigned char)line[i]) &&
                   !(grammar && (line[i] == '(' || line[i] == ')' || line[i] == '"')))
                arena[o++] = line[i++];
        }
        arena[o++] = '\0';
        k->len = o - 1 - start_o;
        k->end = i;
        (*n)++;
    }
    return 0;
}

int ig_words_text(const ig_word *w, size_t n, int grammar, char **text, size_t *len, size_t *errcol, ig_error *err)
{
    *text = NULL;
    *len = 0;
    *errcol = 0;
    /* plain words are joined by spaces; a quoted text is the whole text, so one mixed with
     * other words ("a" "b", "Juliet"x) would be joined in a way no one wrote */
    for (size_t k = 0; !grammar && n > 1 && k < n; k++)
        if (w[k].quoted) {
            *errcol = w[k == 0 ? 1 : k].col;
            return ig_error_set(err, IG_EUSAGE, "one quoted text or plain words, not both: quote the whole text");
        }
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += w[i].len + 1;
    char *s = malloc(total), *p = s;
    if (!s)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ' ';
        memcpy(p, w[i].text, w[i].len);
        p += w[i].len;
    }
    *p = '\0';
    *text = s;
    *len = (size_t)(p - s);
    return 0;
}
