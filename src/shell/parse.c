/*
 * Command-line parsing per CONTRACT.md: options (`--name` or `--name VALUE`) anywhere,
 * `--` ends them, quoted strings with C escapes are single words and never options,
 * unquoted words join into the TEXT argument. Whether an option takes a value comes
 * from the command's option table, so parsing, completion and help agree.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

typedef struct tok {
    char *text;
    size_t len, col;
    int quoted;
} tok;

/* Splits into tokens whose decoded text goes into `arena` (len + 1 bytes: a token never
 * decodes longer than it is written, and each is followed by a separator or the end, which
 * pays for its NUL), so a line costs memory in proportion to its length. On error reports
 * with a caret and returns SH_ERR. */
static int tokenize(shell *sh, sh_args *a, const char *line, char *arena, tok **out, int *n)
{
    size_t cap = 16, i = 0, len = strlen(line), o = 0;
    tok *t = malloc(cap * sizeof *t);
    *n = 0;
    *out = t;
    if (!t)
        return sh_fail(sh, a, "internal", "out of memory reading the command line");
    while (i < len) {
        while (i < len && isspace((unsigned char)line[i]))
            i++;
        if (i >= len)
            break;
        if (*n == (int)cap) {
            tok *bigger = realloc(t, 2 * cap * sizeof *t);
            if (!bigger)
                return sh_fail(sh, a, "internal", "out of memory reading the command line");
            *out = t = bigger;
            cap *= 2;
        }
        tok *k = &t[*n];
        k->col = i;
        k->quoted = line[i] == '"';
        k->text = arena + o;
        size_t start_o = o;
        if (k->quoted) {
            size_t start = i++;
            for (;;) {
                if (i >= len)
                    return sh_fail_at(sh, a, start, "usage", "unterminated quote");
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
                    if (h1 < 0 || h2 < 0)
                        return sh_fail_at(sh, a, esc, "usage", "invalid escape: \\x needs two hex digits");
                    arena[o++] = (char)(h1 * 16 + h2);
                    i += 2;
                    break;
                }
                default:
                    return sh_fail_at(sh, a, esc, "usage", "invalid escape \"\\%c\" (allowed: \\n \\t \\\\ \\\" \\xHH)",
                                      e ? e : ' ');
                }
            }
        } else {
            while (i < len && !isspace((unsigned char)line[i]))
                arena[o++] = line[i++];
        }
        arena[o++] = '\0';
        k->len = o - 1 - start_o;
        (*n)++;
    }
    return SH_OK;
}

static const sh_opt *find_opt(const sh_cmd *cmd, const char *name, size_t nlen)
{
    for (const sh_opt *o = cmd ? sh_cmd_opts(cmd) : NULL; o && o->name; o++)
        if (strlen(o->name) == nlen && !strncmp(o->name, name, nlen))
            return o;
    return NULL;
}

char *sh_first_word(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    size_t n = 0;
    while (line[n] && !isspace((unsigned char)line[n]))
        n++;
    return n ? strndup(line, n) : NULL;
}

int sh_parse(shell *sh, const char *line, const sh_cmd *cmd, sh_args *a)
{
    memset(a, 0, sizeof *a);
    size_t len = strlen(line);
    a->line = strdup(line);
    a->arena = malloc(len + 1);
    a->cmd = sh_first_word(line); /* before tokenising, so errors can name the command */
    if (!a->line || !a->arena || !a->cmd)
        return sh_fail(sh, a, "internal", "out of memory reading the command line");
    tok *t = NULL;
    int n = 0, rc = tokenize(sh, a, line, a->arena, &t, &n);
    if (rc == SH_OK && n > 0) {
        a->words = calloc((size_t)n, sizeof *a->words);
        a->opts = calloc((size_t)n, sizeof *a->opts);
        if (!a->words || !a->opts)
            rc = sh_fail(sh, a, "internal", "out of memory reading the command line");
        int options_done = 0;
        for (int i = 1; i < n && rc == SH_OK; i++) {
            tok *k = &t[i];
            if (!options_done && !k->quoted && k->len == 2 && !strcmp(k->text, "--")) {
                options_done = 1;
                continue;
            }
            if (!options_done && !k->quoted && k->len > 2 && !strncmp(k->text, "--", 2)) {
                const char *name = k->text + 2, *eq = strchr(name, '=');
                size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
                const sh_opt *o = find_opt(cmd, name, nlen);
                if (!o) {
                    rc = sh_fail_at(sh, a, k->col, "usage", "unknown option --%.*s for %s", (int)nlen, name,
                                    cmd ? cmd->name : a->cmd);
                    break;
                }
                sh_optval *ov = &a->opts[a->nopts++];
                ov->name = o->name;
                ov->col = k->col;
                if (o->arg) {
                    if (eq) { /* --name=VALUE: the value is the rest of the word */
                        ov->value = (sh_word){(char *)eq + 1, strlen(eq + 1), 0, k->col + (size_t)(eq - k->text) + 1, 0};
                    } else if (i + 1 < n) {
                        tok *v = &t[++i];
                        ov->value = (sh_word){v->text, v->len, v->quoted, v->col, 0};
                    } else {
                        rc = sh_fail_at(sh, a, k->col, "usage", "option --%s needs a value (%s)", o->name, o->arg);
                    }
                } else if (eq) {
                    rc = sh_fail_at(sh, a, k->col, "usage", "option --%s takes no value", o->name);
                }
                continue;
            }
            a->words[a->nwords++] = (sh_word){k->text, k->len, k->quoted, k->col, 0};
        }
    }
    free(t);
    return rc;
}

void sh_args_free(sh_args *a)
{
    for (int i = 0; i < a->nwords; i++)
        if (a->words[i].heap)
            free(a->words[i].text);
    for (int i = 0; i < a->nopts; i++)
        if (a->opts[i].value.heap)
            free(a->opts[i].value.text);
    free(a->words);
    free(a->opts);
    free(a->arena);
    free((char *)a->cmd);
    free(a->line);
    memset(a, 0, sizeof *a);
}

sh_optval *sh_opt_get(sh_args *a, const char *name)
{
    sh_optval *last = NULL;
    for (int i = 0; i < a->nopts; i++)
        if (!strcmp(a->opts[i].name, name)) {
            a->opts[i].used = 1;
            last = &a->opts[i];
        }
    return last;
}

int sh_opt_has(sh_args *a, const char *name) { return sh_opt_get(a, name) != NULL; }

int sh_opt_int(shell *sh, sh_args *a, const char *name, long long min, long long max, long long *out)
{
    sh_optval *o = sh_opt_get(a, name);
    if (!o)
        return SH_OK;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(o->value.text, &end, 10);
    if (!o->value.len || *end || errno)
        return sh_fail_at(sh, a, o->value.col, "usage", "--%s: not an integer: \"%s\"", name, o->value.text);
    if (v < min || v > max)
        return sh_fail_at(sh, a, o->value.col, "usage", "--%s: %lld is out of range (%lld to %lld)", name, v, min, max);
    *out = v;
    return SH_OK;
}

int sh_parse_size(const char *s, uint64_t *out) { return ig_parse_size(s, out); }

int sh_opt_size(shell *sh, sh_args *a, const char *name, uint64_t *out)
{
    sh_optval *o = sh_opt_get(a, name);
    if (!o)
        return SH_OK;
    if (sh_parse_size(o->value.text, out))
        return sh_fail_at(sh, a, o->value.col, "usage", "--%s: not a size: \"%s\" (e.g. 4096, 64M, 1G)", name,
                          o->value.text);
    return SH_OK;
}

char *sh_text_arg(sh_args *a, int from, size_t *len)
{
    size_t total = 0;
    for (int i = from; i < a->nwords; i++)
        total += a->words[i].len + 1;
    char *s = malloc(total + 1), *p = s;
    if (!s)
        return NULL;
    for (int i = from; i < a->nwords; i++) {
        if (i > from)
            *p++ = ' ';
        memcpy(p, a->words[i].text, a->words[i].len);
        p += a->words[i].len;
    }
    *p = '\0';
    *len = (size_t)(p - s);
    return s;
}

int sh_need_words(shell *sh, sh_args *a, int min, int max, const char *usage)
{
    if (a->nwords < min)
        return sh_fail(sh, a, "usage", "missing argument; usage: %s", usage);
    if (max >= 0 && a->nwords > max)
        return sh_fail_at(sh, a, a->words[max].col, "usage", "unexpected argument; usage: %s", usage);
    return SH_OK;
}

void sh_expand_tilde(sh_word *w)
{
    const char *home = getenv("HOME");
    if (w->quoted || !home || w->text[0] != '~' || (w->text[1] && w->text[1] != '/'))
        return;
    size_t n = strlen(home) + w->len;
    char *s = malloc(n + 1);
    if (!s)
        return; /* left as typed: the path then fails to open, with its name */
    snprintf(s, n + 1, "%s%s", home, w->text + 1);
    if (w->heap)
        free(w->text);
    w->text = s;
    w->len = strlen(s);
    w->heap = 1;
}
