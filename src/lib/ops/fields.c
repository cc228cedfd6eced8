/*
 * Field tables: the setters both codecs fill options through, so that every bound is
 * checked in one place, and the registry of engine operations; the words of a typed
 * command line (the shell's grammar), which the argument codecs of the shell and of the
 * cluster program read before they fill options through the same setters; and the JSON
 * codec (the one strict parser, and options filled from an object) that the server and
 * C callers use. Both codecs are here, beside the setters, so that a face reaches every
 * rule about a field's value in this one file.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "infinigram/contam.h"
#include "infinigram/dups.h"
#include "infinigram/explain.h"
#include "infinigram/fields.h"
#include "infinigram/generate.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/text.h"
#include "infinigram/tokens.h"
#include "op_impl.h"
#include "util/util.h"

/* The shortest of %.15g and %.17g that reads back as v (as JSON writers print numbers). */
static void shown_number(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, n, "%.17g", v);
}

/* Largest integer a JSON number (an IEEE double) holds exactly. */
#define JSON_EXACT 9007199254740992.0

static void *member(const ig_field *f, void *opts) { return (char *)opts + f->offset; }

const ig_field *ig_field_find(const ig_field *fields, const char *name, size_t len)
{
    for (const ig_field *f = fields; f && f->name; f++) {
        if (strlen(f->name) != len)
            continue;
        size_t i = 0;
        for (; i < len; i++) {
            char a = f->name[i], b = name[i];
            if (a != b && !(a == '_' && b == '-'))
                break;
        }
        if (i == len)
            return f;
    }
    return NULL;
}

/* Bounds as the user wrote them: integers in full, real numbers in %g. */
static int range_error(const ig_field *f, const char *shown, ig_error *err)
{
    const char *fmt = f->type == IG_FIELD_DOUBLE ? "%g" : "%.0f";
    char lo[40], hi[40];
    snprintf(lo, sizeof lo, fmt, f->min);
    snprintf(hi, sizeof hi, fmt, f->max);
    if (f->max == 9223372036854775808.0 || f->max == 18446744073709551616.0) /* the type's own limit, rounded */
        return ig_error_set(err, IG_EUSAGE, "%s is out of range (at least %s)", shown, lo);
    return ig_error_set(err, IG_EUSAGE, "%s is out of range (%s to %s)", shown, lo, hi);
}

int ig_field_set_bool(const ig_field *f, void *opts, int v, ig_error *err)
{
    if (f->type != IG_FIELD_BOOL)
        return ig_error_set(err, IG_EUSAGE, "expected %s, not a boolean", ig_field_type_name(f));
    *(int *)member(f, opts) = v != 0;
    return 0;
}

int ig_field_set_int(const ig_field *f, void *opts, long long v, ig_error *err)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%lld", v);
    switch (f->type) {
    case IG_FIELD_INT:
        if ((double)v < f->min || (double)v > f->max)
            return range_error(f, shown, err);
        *(int64_t *)member(f, opts) = v;
        return 0;
    case IG_FIELD_UINT:
    case IG_FIELD_SIZE:
        if (v < 0)
            return range_error(f, shown, err);
        return ig_field_set_uint(f, opts, (unsigned long long)v, err);
    case IG_FIELD_DOUBLE:
        return ig_field_set_number(f, opts, (double)v, err);
    default:
        return ig_error_set(err, IG_EUSAGE, "expected %s, not a number", ig_field_type_name(f));
    }
}

int ig_field_set_uint(const ig_field *f, void *opts, unsigned long long v, ig_error *err)
{
    char shown[32];
    snprintf(shown, sizeof shown, "%llu", v);
    if (f->type == IG_FIELD_INT) {
        if (v > (unsigned long long)INT64_MAX)
            return range_error(f, shown, err);
        return ig_field_set_int(f, opts, (long long)v, err);
    }
    if (f->type == IG_FIELD_DOUBLE)
        return ig_field_set_number(f, opts, (double)v, err);
    if (f->type != IG_FIELD_UINT && f->type != IG_FIELD_SIZE)
        return ig_error_set(err, IG_EUSAGE, "expected %s, not a number", ig_field_type_name(f));
    /* compare in long double: a max of 2^64-1 is not exact as a double */
    if ((long double)v < (long double)f->min || (long double)v > (long double)f->max)
        return range_error(f, shown, err);
    *(uint64_t *)member(f, opts) = v;
    return 0;
}

int ig_field_set_number(const ig_field *f, void *opts, double v, ig_error *err)
{
    char shown[40];
    shown_number(v, shown, sizeof shown);
    if (!isfinite(v))
        return ig_error_set(err, IG_EUSAGE, "not a finite number");
    switch (f->type) {
    case IG_FIELD_DOUBLE:
        if (v < f->min || v > f->max)
            return range_error(f, shown, err);
        *(double *)member(f, opts) = v;
        return 0;
    case IG_FIELD_INT:
    case IG_FIELD_UINT:
    case IG_FIELD_SIZE:
        if (v != floor(v))
            return ig_error_set(err, IG_EUSAGE, "%s is not an integer", shown);
        if (v < f->min || v > f->max)
            return range_error(f, shown, err);
        if (fabs(v) >= 9223372036854775808.0) /* read as a double: jansson keeps integers in 64 signed bits */
            return ig_error_set(err, IG_EUSAGE, "%s cannot be read exactly: a request's integers are exact up to "
                                "9223372036854775807 (a larger value is given through the shell or the C API)", shown);
        if (fabs(v) > JSON_EXACT) /* written 1e18 or 1.5e17: a double, which may not be the integer meant */
            return ig_error_set(err, IG_EUSAGE, "%s is not exact: past 2^53 give the integer's digits (JSON integers "
                                "are read exactly up to 9223372036854775807)", shown);
        if (f->type == IG_FIELD_INT)
            return ig_field_set_int(f, opts, (long long)v, err);
        if (v < 0)
            return range_error(f, shown, err);
        return ig_field_set_uint(f, opts, (unsigned long long)v, err);
    default:
        return ig_error_set(err, IG_EUSAGE, "expected %s, not a number", ig_field_type_name(f));
    }
}

static int set_bytes(ig_bytes *b, const uint8_t *p, size_t n, ig_error *err)
{
    uint8_t *c = malloc(n + 1);
    if (!c)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    if (n)
        memcpy(c, p, n);
    c[n] = '\0';
    free(b->p);
    b->p = c;
    b->n = n;
    return 0;
}

/* Whether p[0, n) spells a decimal number (strtod also takes hex, "inf" and "nan"). */
static int decimal_only(const char *p, size_t n)
{
    return n && strspn(p, "0123456789+-.eE") >= n;
}

int ig_parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || isspace((unsigned char)*s) || !decimal_only(s, (size_t)(end - s)))
        return -1;
    double mul = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1024.0; break;
        case 'M': mul = 1024.0 * 1024; break;
        case 'G': mul = 1024.0 * 1024 * 1024; break;
        case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
        case 'B': mul = 1; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -1;
    }
    v *= mul;
    if (v < 1 || v > 1.8e19)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int ig_field_set_text(const ig_field *f, void *opts, const uint8_t *p, size_t n, ig_error *err)
{
    if (f->type == IG_FIELD_TEXT)
        return set_bytes(member(f, opts), p, n, err);
    if (f->type == IG_FIELD_TEXTS) {
        ig_texts *t = member(f, opts);
        ig_bytes *v = realloc(t->v, (t->n + 1) * sizeof *v);
        if (!v)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        t->v = v;
        v[t->n] = (ig_bytes){0};
        if (set_bytes(&v[t->n], p, n, err))
            return err ? err->code : IG_EINTERNAL;
        t->n++;
        return 0;
    }
    /* everything else is parsed from a NUL-free string */
    char buf[64];
    if (n >= sizeof buf || memchr(p, 0, n)) {
        if (f->type == IG_FIELD_ENUM)
            goto bad_enum;
        return ig_error_set(err, IG_EUSAGE, "not %s%s", f->type == IG_FIELD_INT || f->type == IG_FIELD_UINT ? "an " : "a ",
                            ig_field_type_name(f));
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    switch (f->type) {
    case IG_FIELD_BOOL:
        if (!strcmp(buf, "on") || !strcmp(buf, "true") || !strcmp(buf, "1"))
            return ig_field_set_bool(f, opts, 1, err);
        if (!strcmp(buf, "off") || !strcmp(buf, "false") || !strcmp(buf, "0"))
            return ig_field_set_bool(f, opts, 0, err);
        return ig_error_set(err, IG_EUSAGE, "not a boolean: \"%s\" (on or off)", buf);
    case IG_FIELD_INT: {
        long long v = strtoll(buf, &end, 10);
        if (!n || *end || isspace((unsigned char)buf[0]))
            return ig_error_set(err, IG_EUSAGE, "not an integer: \"%s\"", buf);
        if (errno)
            return range_error(f, buf, err);
        return ig_field_set_int(f, opts, v, err);
    }
    case IG_FIELD_UINT: {
        if (buf[0] == '-' && n > 1 && strspn(buf + 1, "0") == n - 1) /* -0 is 0, as a JSON number -0 is */
            return ig_field_set_uint(f, opts, 0, err);
        if (buf[0] == '-' || isspace((unsigned char)buf[0]))
            return n > 1 && buf[0] == '-' && isdigit((unsigned char)buf[1])
                       ? range_error(f, buf, err)
                       : ig_error_set(err, IG_EUSAGE, "not an integer: \"%s\"", buf);
        unsigned long long v = strtoull(buf, &end, 10);
        if (!n || *end)
            return ig_error_set(err, IG_EUSAGE, "not an integer: \"%s\"", buf);
        if (errno)
            return range_error(f, buf, err);
        return ig_field_set_uint(f, opts, v, err);
    }
    case IG_FIELD_DOUBLE: {
        double v = strtod(buf, &end);
        if (!n || *end || isspace((unsigned char)buf[0]) || isnan(v) || !decimal_only(buf, (size_t)(end - buf)))
            return ig_error_set(err, IG_EUSAGE, "not a number: \"%s\"", buf);
        if (!isfinite(v) || v < f->min || v > f->max)
            return range_error(f, buf, err);
        return ig_field_set_number(f, opts, v, err);
    }
    case IG_FIELD_SIZE: {
        uint64_t v;
        if (ig_parse_size(buf, &v))
            return ig_error_set(err, IG_EUSAGE, "not a size: \"%s\" (e.g. 4096, 64M, 1G)", buf);
        return ig_field_set_uint(f, opts, v, err);
    }
    case IG_FIELD_ENUM:
        for (int i = 0; f->choices && f->choices[i]; i++)
            if (!strcmp(f->choices[i], buf)) {
                *(int *)member(f, opts) = i;
                return 0;
            }
        goto bad_enum;
    default:
        break;
    }
    return ig_error_set(err, IG_EINTERNAL, "field of unknown type");
bad_enum: {
    char list[256] = "";
    for (int i = 0; f->choices && f->choices[i]; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i == 0 ? "" : f->choices[i + 1] ? ", " : " or ", f->choices[i]);
    }
    return ig_error_set(err, IG_EUSAGE, "expected %s", list);
}
}

int ig_fields_defaults(const ig_field *fields, void *opts, ig_error *err)
{
    for (const ig_field *f = fields; f && f->name; f++) {
        ig_error why = {0};
        if (f->def && !(f->flags & IG_FIELD_RESOLVED) &&
            ig_field_set_text(f, opts, (const uint8_t *)f->def, strlen(f->def), &why))
            return ig_error_set(err, IG_EINTERNAL, "default of {%s}: %s", f->name, why.msg);
    }
    return 0;
}

/* Whether scalar member f of a and of b hold the same bytes. */
static int same_member(const ig_field *f, const void *a, const void *b)
{
    size_t n = f->type == IG_FIELD_BOOL || f->type == IG_FIELD_ENUM ? sizeof(int) : sizeof(uint64_t);
    return !memcmp((const char *)a + f->offset, (const char *)b + f->offset, n);
}

int ig_fields_check(const ig_field *fields, const void *opts, const void *defaults, ig_error *err)
{
    for (const ig_field *f = fields; f && f->name; f++) {
        const void *m = (const char *)opts + f->offset;
        if (defaults && f->type != IG_FIELD_TEXT && f->type != IG_FIELD_TEXTS && same_member(f, opts, defaults))
            continue;
        char shown[40];
        ig_error why = {0};
        int bad = 0;
        switch (f->type) {
        case IG_FIELD_BOOL:
            if ((bad = *(const int *)m != 0 && *(const int *)m != 1))
                ig_error_set(&why, IG_EUSAGE, "%d is not 0 or 1", *(const int *)m);
            break;
        case IG_FIELD_ENUM: {
            size_t k = 0;
            while (f->choices && f->choices[k])
                k++;
            if ((bad = *(const int *)m < 0 || (size_t) * (const int *)m >= k))
                ig_error_set(&why, IG_EUSAGE, "%d is not one of its %zu choices", *(const int *)m, k);
            break;
        }
        case IG_FIELD_INT: {
            int64_t v = *(const int64_t *)m;
            snprintf(shown, sizeof shown, "%lld", (long long)v);
            if ((bad = (double)v < f->min || (double)v > f->max))
                range_error(f, shown, &why);
            break;
        }
        case IG_FIELD_UINT:
        case IG_FIELD_SIZE: {
            uint64_t v = *(const uint64_t *)m;
            snprintf(shown, sizeof shown, "%llu", (unsigned long long)v);
            if ((bad = (long double)v < (long double)f->min || (long double)v > (long double)f->max))
                range_error(f, shown, &why);
            break;
        }
        case IG_FIELD_DOUBLE: {
            double v = *(const double *)m;
            shown_number(v, shown, sizeof shown);
            if ((bad = !isfinite(v)))
                ig_error_set(&why, IG_EUSAGE, "not a finite number");
            else if ((bad = v < f->min || v > f->max))
                range_error(f, shown, &why);
            break;
        }
        case IG_FIELD_TEXT:
            if ((bad = !((const ig_bytes *)m)->p && ((const ig_bytes *)m)->n))
                ig_error_set(&why, IG_EUSAGE, "a length of %zu without bytes", ((const ig_bytes *)m)->n);
            break;
        case IG_FIELD_TEXTS: {
            const ig_texts *t = m;
            if ((bad = !t->v && t->n))
                ig_error_set(&why, IG_EUSAGE, "%zu texts without a list", t->n);
            for (size_t i = 0; !bad && i < t->n; i++)
                if ((bad = !t->v[i].p && t->v[i].n))
                    ig_error_set(&why, IG_EUSAGE, "text %zu: a length of %zu without bytes", i + 1, t->v[i].n);
            break;
        }
        }
        if (bad)
            return ig_error_set(err, IG_EUSAGE, "{%s}: %s", f->name, why.msg);
    }
    /* a required text left as the defaults leave it (no bytes at all: an empty text has some)
     * is missing, as the codecs say when a face's request lacks it */
    uint64_t given = 0;
    for (const ig_field *f = fields; f && f->name; f++) {
        if (f - fields >= 64) /* "given" has a bit a row, as the codecs' */
            return ig_error_set(err, IG_EINTERNAL, "a table of more than 64 fields");
        const void *m = (const char *)opts + f->offset;
        int set = f->type == IG_FIELD_TEXT    ? ((const ig_bytes *)m)->p != NULL
                  : f->type == IG_FIELD_TEXTS ? ((const ig_texts *)m)->n > 0
                                              : 1;
        given |= (uint64_t)set << (f - fields);
    }
    for (const ig_field *f = fields; f && f->name; f++)
        if (!(f->flags & IG_FIELD_SHELL) && ig_field_missing(fields, f, given))
            return ig_error_set(err, IG_EUSAGE, "{%s} is required", f->name);
    return 0;
}

void ig_fields_free(const ig_field *fields, void *opts)
{
    for (const ig_field *f = fields; f && opts && f->name; f++) {
        if (f->type == IG_FIELD_TEXT) {
            ig_bytes *b = member(f, opts);
            free(b->p);
            *b = (ig_bytes){0};
        } else if (f->type == IG_FIELD_TEXTS) {
            ig_texts *t = member(f, opts);
            for (size_t i = 0; i < t->n; i++)
                free(t->v[i].p);
            free(t->v);
            *t = (ig_texts){0};
        }
    }
}

void ig_field_msg_render(const char *msg, const char *prefix, char sep, const char *suffix, char *out, size_t outlen)
{
    size_t o = 0;
    if (!outlen)
        return;
#define PUT(c)                                                                                                         \
    do {                                                                                                               \
        if (o + 1 < outlen)                                                                                            \
            out[o++] = (c);                                                                                            \
    } while (0)
    for (const char *p = msg; *p; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        int name = close && close > p + 1;
        for (const char *q = p + 1; name && q < close; q++)
            name = islower((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_';
        if (!name) {
            PUT(*p);
            continue;
        }
        for (const char *q = prefix; *q; q++)
            PUT(*q);
        for (const char *q = p + 1; q < close; q++)
            PUT(*q == '_' ? sep : *q);
        for (const char *q = suffix; *q; q++)
            PUT(*q);
        p = close;
    }
#undef PUT
    out[o] = '\0';
}

void ig_field_msg_shell(const ig_field *fields, const char *msg, char *out, size_t cap,
                        void (*seen)(void *ctx, const char *name, size_t len, int value), void *ctx)
{
    size_t o = 0;
    if (!cap)
        return;
    for (const char *p = msg; *p && o + 1 < cap; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close || close == p + 1 || memchr(p + 1, ' ', (size_t)(close - p - 1))) {
            out[o++] = *p;
            continue;
        }
        size_t len = (size_t)(close - p - 1);
        const ig_field *f = ig_field_find(fields, p + 1, len);
        if (seen)
            seen(ctx, p + 1, len, p == msg && close[1] == ':');
        int positional = f && (f->flags & IG_FIELD_POSITIONAL);
        if (positional && p == msg && !strncmp(close, "}: ", 3)) {
            p = close + 2;
            continue;
        }
        if (positional && f->arg)
            o += (size_t)snprintf(out + o, cap - o, "%s", f->arg);
        else {
            o += (size_t)snprintf(out + o, cap - o, "--%.*s", (int)len, p + 1);
            for (size_t k = o >= len ? o - len : 0; k < o && k < cap; k++)
                if (out[k] == '_')
                    out[k] = '-';
        }
        if (o >= cap)
            o = cap - 1;
        p = close;
    }
    out[o] = '\0';
}

const char *ig_field_type_name(const ig_field *f)
{
    switch (f->type) {
    case IG_FIELD_BOOL: return "boolean";
    case IG_FIELD_INT:
    case IG_FIELD_UINT: return "integer";
    case IG_FIELD_DOUBLE: return "number";
    case IG_FIELD_ENUM: return "string (one of the choices)";
    case IG_FIELD_TEXT: return "string";
    case IG_FIELD_TEXTS: return "list of strings";
    case IG_FIELD_SIZE: return "size";
    }
    return "value";
}

int ig_field_missing(const ig_field *fields, const ig_field *f, uint64_t given)
{
    if (!(f->flags & IG_FIELD_REQUIRED) || (given >> (f - fields) & 1))
        return 0;
    if (f->flags & IG_FIELD_UNLESS_IDS) {
        const ig_field *ids = ig_field_find(fields, "ids", 3);
        if (ids && (given >> (ids - fields) & 1))
            return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- command-line words */

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
            /* a plain word with one dash is most often an option mistyped (-p for --positions) */
            for (size_t d = 0; d < n; d++)
                if (!w[d].quoted && w[d].len >= 2 && w[d].text[0] == '-' && w[d].text[1] != '-') {
                    *errcol = w[d].col;
                    return ig_error_set(err, IG_EUSAGE, "one quoted text or plain words, not both: %.40s is a word "
                                        "of the text here (options start with two dashes)", w[d].text);
                }
            *errcol = w[k == 0 ? 1 : k].col;
            return ig_error_set(err, IG_EUSAGE, "one quoted text or plain words, not both: quote the whole text");
        }
    /* plain words opening with one like -p or -top are an option mistyped ("count -p 2 Hello"
     * would count "-p 2 Hello"); a text that really starts so is quoted */
    int letters = !grammar && n > 1 && !w[0].quoted && !w[0].literal && w[0].len >= 2 && w[0].text[0] == '-' &&
                  isalpha((unsigned char)w[0].text[1]);
    for (size_t c = 1; letters && c < w[0].len; c++)
        letters = isalpha((unsigned char)w[0].text[c]) || w[0].text[c] == '-';
    if (letters) {
        *errcol = w[0].col;
        return ig_error_set(err, IG_EUSAGE, "plain words opening with %.40s, which looks like an option (options start "
                            "with two dashes): quote the text, or put it after --, if it starts so", w[0].text);
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

int ig_word_path(const ig_word *w, char **path, ig_error *err)
{
    *path = NULL;
    if (memchr(w->text, 0, w->len))
        return ig_error_set(err, IG_EUSAGE, "a file name cannot hold a NUL byte (\\x00)");
    const char *home = getenv("HOME");
    int tilde = !w->quoted && home && w->text[0] == '~' && (!w->text[1] || w->text[1] == '/');
    if (tilde ? asprintf(path, "%s%s", home, w->text + 1) < 0 : !(*path = strdup(w->text))) {
        *path = NULL;
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    return 0;
}

/* ---------------------------------------------------------------- command lines */

int ig_fields_lookup(const void *table, const char *name, size_t len, const char **canon, const char **arg)
{
    /* spelled with dashes: a dash stands for the field name's underscore, nothing else does */
    const ig_field *f = memchr(name, '_', len) ? NULL : ig_field_find(table, name, len);
    if (!f || (f->flags & (IG_FIELD_POSITIONAL | IG_FIELD_HTTP)))
        return -1;
    *canon = f->name;
    *arg = f->type == IG_FIELD_BOOL ? NULL : f->arg ? f->arg : "VALUE";
    return f->type != IG_FIELD_BOOL;
}

int ig_options_lookup(const void *table, const char *name, size_t len, const char **canon, const char **arg)
{
    for (const ig_option *o = table; o && o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) {
            *canon = o->name;
            *arg = o->arg;
            return o->arg != NULL;
        }
    return -1;
}

int ig_option_int(const char *name, const char *text, long long min, long long max, long long *out, ig_error *err)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || isspace((unsigned char)*text))
        return ig_error_set(err, IG_EUSAGE, "--%s: not an integer: \"%s\"", name, text);
    if (v < min || v > max)
        return ig_error_set(err, IG_EUSAGE, "--%s: %lld is out of range (%lld to %lld)", name, v, min, max);
    *out = v;
    return 0;
}

int ig_option_size(const char *name, const char *text, uint64_t *out, ig_error *err)
{
    if (ig_parse_size(text, out))
        return ig_error_set(err, IG_EUSAGE, "--%s: not a size: \"%s\" (e.g. 4096, 64M, 1G)", name, text);
    return 0;
}

int ig_line_read(const char *line, int grammar, ig_option_lookup lookup, const void *table, const char *command,
                 ig_line *l, ig_error *err)
{
    memset(l, 0, sizeof *l);
    if (!(l->arena = malloc(2 * strlen(line) + 1)))
        return ig_error_set(err, IG_ENOMEM, "out of memory reading the command line");
    int rc = ig_words_split(line, grammar, l->arena, &l->words, &l->nwords, &l->errcol, err);
    if (rc)
        return rc;
    /* the options, the arguments and the options' typed names: one block, freed as opts */
    size_t cap = l->nwords ? l->nwords : 1, len = strlen(line);
    if (!(l->opts = calloc(1, cap * (sizeof *l->opts + sizeof *l->args) + len + 1)))
        return ig_error_set(err, IG_ENOMEM, "out of memory reading the command line");
    l->args = (ig_word *)(l->opts + cap);
    char *names = (char *)(l->args + cap);
    int options_done = 0;
    for (size_t i = 1; i < l->nwords; i++) {
        ig_word *k = &l->words[i];
        if (!options_done && !k->quoted && k->len == 2 && !memcmp(k->text, "--", 2)) {
            options_done = 1;
            continue;
        }
        if (options_done || k->quoted || k->len <= 2 || memcmp(k->text, "--", 2)) {
            l->args[l->nargs] = *k;
            l->args[l->nargs++].literal = options_done;
            continue;
        }
        const char *name = k->text + 2, *eq = memchr(name, '=', k->len - 2), *canon = NULL, *arg = NULL;
        size_t nlen = eq ? (size_t)(eq - name) : k->len - 2;
        int kind = lookup(table, name, nlen, &canon, &arg);
        if (kind < 0 && !eq && nlen == 4 && !memcmp(name, "help", 4)) {
            l->help = 1; /* `count --help` asks for the command's help; nothing runs */
            continue;
        }
        if (kind < 0 || (kind == 0 && eq) || (kind == 1 && !eq && i + 1 >= l->nwords))
            l->errcol = k->col; /* the message below is about this word */
        if (kind < 0) {
            l->unknown = 1;
            return ig_error_set(err, IG_EUSAGE, "unknown option --%.*s for %s", (int)nlen, name, command);
        }
        ig_line_opt *o = &l->opts[l->nopts++];
        o->name = canon;
        o->typed = memcpy(names, name, nlen); /* the words stay as they were read */
        names[nlen] = '\0';
        names += nlen + 1;
        o->col = k->col;
        if (kind == 0 && eq)
            return ig_error_set(err, IG_EUSAGE, "option --%.*s takes no value", (int)nlen, name);
        if (kind == 0)
            continue;
        o->has_value = 1;
        if (eq) /* --name=VALUE: the value is the rest of the word */
            o->value = (ig_word){(char *)eq + 1, k->len - nlen - 3, k->col + nlen + 3, k->end, 0, 0};
        else if (i + 1 < l->nwords)
            o->value = l->words[++i];
        else
            return ig_error_set(err, IG_EUSAGE, "option --%.*s needs a value (%s)", (int)nlen, name, arg ? arg : "VALUE");
    }
    return 0;
}

void ig_line_free(ig_line *l)
{
    if (l) {
        free(l->words);
        free(l->arena);
        free(l->opts); /* and the arguments after them */
        memset(l, 0, sizeof *l);
    }
}

int ig_line_names(ig_line *l, ig_error *err)
{
    for (size_t i = 1; i < l->nwords; i++)
        if (memchr(l->words[i].text, 0, l->words[i].len)) {
            l->errcol = l->words[i].col;
            return ig_error_set(err, IG_EUSAGE, "a NUL byte (\\x00) can only be part of a query's text");
        }
    return 0;
}

/* A field as a line names it: a positional one by its placeholder, an option as --name. */
static void line_name(const ig_field *f, char *out, size_t cap)
{
    int pos = (f->flags & IG_FIELD_POSITIONAL) != 0;
    if (pos && f->arg) {
        snprintf(out, cap, "%s", f->arg);
        return;
    }
    int n = snprintf(out, cap, "%s%s", pos ? "" : "--", f->name);
    for (int k = 0; k < n && (size_t)k < cap; k++)
        if (out[k] == '_')
            out[k] = '-';
}

/* The message in err says what is wrong, not with which field: the line's name goes first,
 * then `sep` ("FIELD: why", "TEXT is why"). */
static int line_fault(ig_line_fill *fill, const ig_field *f, size_t col, int rc, const char *sep, ig_error *err)
{
    char name[96], msg[IG_ERRMSG_MAX];
    line_name(f, name, sizeof name);
    snprintf(msg, sizeof msg, "%s", err->msg);
    fill->field = f;
    fill->errcol = col;
    return ig_error_set(err, rc, "%s%s%s", name, sep, msg);
}

int ig_fields_from_line(const ig_field *fields, const ig_line *l, void *opts, ig_line_fill *fill, ig_error *err)
{
    ig_error local; /* the messages are made from the setters' */
    if (!err)
        err = &local;
    memset(fill, 0, sizeof *fill);
    for (size_t i = 0; i < l->nopts; i++) {
        const ig_line_opt *o = &l->opts[i];
        const ig_field *f = ig_field_find(fields, o->name, strlen(o->name));
        if (!f)
            return ig_error_set(err, IG_EINTERNAL, "option --%s is no field of the command", o->name);
        int rc = f->type == IG_FIELD_BOOL ? ig_field_set_bool(f, opts, 1, err)
                                          : ig_field_set_text(f, opts, (const uint8_t *)o->value.text, o->value.len, err);
        if (rc)
            return line_fault(fill, f, f->type == IG_FIELD_BOOL ? o->col : o->value.col, rc, ": ", err);
        fill->given |= (uint64_t)1 << (f - fields);
    }
    size_t w = 0;
    for (const ig_field *f = fields; f->name; f++) {
        if (!(f->flags & IG_FIELD_POSITIONAL))
            continue;
        if (w >= l->nargs) {
            if (ig_field_missing(fields, f, fill->given)) {
                fill->field = f;
                fill->missing = 1;
                return ig_error_set(err, IG_EUSAGE, "missing %s", f->arg ? f->arg : f->name);
            }
            continue;
        }
        const ig_word *a = &l->args[w];
        int rc;
        if (f->flags & IG_FIELD_REST) { /* the arguments left make one text */
            char *text = NULL;
            size_t len = 0, bad = 0;
            if ((rc = ig_words_text(a, l->nargs - w, (f->flags & IG_FIELD_GRAMMAR) != 0, &text, &len, &bad, err)))
                return rc == IG_EUSAGE ? line_fault(fill, f, bad, rc, " is ", err) : rc;
            if (!a->quoted && len >= 2 && text[0] == '\'' && text[len - 1] == '\'')
                fill->single_quoted = f;
            rc = ig_field_set_text(f, opts, (const uint8_t *)text, len, err);
            free(text);
            w = l->nargs;
        } else {
            rc = ig_field_set_text(f, opts, (const uint8_t *)a->text, a->len, err);
            w++;
        }
        if (rc)
            return line_fault(fill, f, a->col, rc, ": ", err);
        fill->given |= (uint64_t)1 << (f - fields);
    }
    if (w < l->nargs) {
        fill->extra = 1;
        fill->errcol = l->args[w].col;
        return ig_error_set(err, IG_EUSAGE, "unexpected argument");
    }
    return 0;
}

/* ---- the engine operations, for faces that dispatch by name ---- */

static const ig_op *const ops[] = {
    &ig_op_count, &ig_op_predict, &ig_op_prob,   &ig_op_backoff, &ig_op_eval,   &ig_op_explain, &ig_op_spans,
    &ig_op_search, &ig_op_doc,    &ig_op_generate, &ig_op_mix,   &ig_op_contam, &ig_op_dups,    NULL,
};

const ig_op *const *ig_ops(void) { return ops; }

const ig_op *ig_op_find(const char *name)
{
    for (size_t i = 0; ops[i]; i++)
        if (!strcmp(ops[i]->name, name))
            return ops[i];
    return NULL;
}

/* ---- JSON: the one parser, and options filled from a JSON object ---- */

/* One pass over a JSON text, brackets and quotes inside strings being text: returns the byte
 * of the first bracket nested past IG_JSON_MAX_DEPTH (n when none), and sets *cost (when not
 * NULL) to what jansson would allocate to hold the values, estimated from the bytes: an object
 * about 224 bytes, an array 128, a string (a key too) 80 and its bytes, a number 48 with its
 * slot in an array; true, false and null none (measured with glibc's malloc on jansson 2.14). */
static size_t json_scan(const char *p, size_t n, uint64_t *cost)
{
    uint64_t total = 0;
    size_t depth = 0, deep = n;
    int in_str = 0, in_num = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            total++;
            if (c == '\\')
                i++; /* the escaped byte cannot end the string */
            else if (c == '"')
                in_str = 0;
            continue;
        }
        int num = (c >= '0' && c <= '9') || c == '-';
        num |= in_num && (c == '+' || c == '.' || c == 'e' || c == 'E');
        if (num && !in_num)
            total += 48;
        in_num = num;
        total += c == '{' ? 224 : c == '[' ? 128 : c == '"' ? 80 : 0;
        in_str = c == '"';
        if ((c == '[' || c == '{') && ++depth > IG_JSON_MAX_DEPTH && deep == n)
            deep = i;
        else if ((c == ']' || c == '}') && depth)
            depth--;
    }
    if (cost)
        *cost = total;
    return deep;
}

int ig_json_depth_check(const char *p, size_t n, size_t *pos)
{
    size_t deep = json_scan(p, n, NULL);
    if (deep == n)
        return 0;
    *pos = deep;
    return -1;
}

uint64_t ig_json_cost(const char *p, size_t n)
{
    uint64_t cost;
    json_scan(p, n, &cost);
    return cost;
}

json_t *ig_json_parse(const char *p, size_t n, size_t extra, json_error_t *je, int *why)
{
    uint64_t cost, most = IG_JSON_COST_MAX(n);
    size_t deep = json_scan(p, n, &cost); /* one pass: both bounds before any allocation */
    if (cost > most) {
        memset(je, 0, sizeof *je);
        je->line = 1;
        snprintf(je->text, sizeof je->text,
                 "holds too many values for its size: reading it would take about %" PRIu64 " MB (at most %" PRIu64
                 " MB for %zu bytes)", cost >> 20, most >> 20, n);
        *why = IG_JSON_HEAVY;
        return NULL;
    }
    if (deep < n) {
        memset(je, 0, sizeof *je);
        je->position = (int)deep;
        je->line = 1;
        for (size_t i = 0; i < deep && i < n; i++) /* the line of the bracket, as jansson counts */
            je->line += p[i] == '\n';
        snprintf(je->text, sizeof je->text, "nested more than %d deep (at byte %zu)", IG_JSON_MAX_DEPTH, deep);
        *why = IG_JSON_DEEP;
        return NULL;
    }
    size_t flags = JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | extra;
    *why = IG_JSON_OK;
    json_t *v = json_loadb(p, n, flags, je);
    if (v)
        return v;
    json_error_t again;
    v = json_loadb(p, n, flags, &again);
    if (v)
        return v; /* the first failure was an allocation's */
    *why = json_error_code(je) == json_error_out_of_memory || again.position != je->position ||
                   strcmp(again.text, je->text) != 0
               ? IG_JSON_NOMEM
               : IG_JSON_BAD;
    return NULL;
}

/* The key whose value holds byte `pos` of the body: the last "key": before it. Used to
 * name the field when the body itself does not parse. */
static int key_before(const char *p, size_t n, size_t pos, char *out, size_t outlen)
{
    if (pos > n)
        pos = n;
    for (size_t i = pos; i-- > 0;) {
        if (p[i] != ':')
            continue;
        size_t j = i;
        while (j > 0 && isspace((unsigned char)p[j - 1]))
            j--;
        if (j == 0 || p[j - 1] != '"')
            continue;
        size_t end = --j;
        while (j > 0 && !(p[j - 1] == '"' && (j < 2 || p[j - 2] != '\\')))
            j--;
        if (j == 0 || end - j >= outlen || end - j > 64)
            continue;
        memcpy(out, p + j, end - j);
        out[end - j] = '\0';
        size_t bad;
        return ig_utf8_valid((const uint8_t *)out, end - j, &bad) && !strchr(out, '\\');
    }
    return 0;
}

/* Whether byte pos of a JSON text falls in an object's key, inside it or after it before its
 * ':' (where jansson reports a key it refuses): the key before pos is then another member's. */
static int in_key(const char *p, size_t n, size_t pos)
{
    unsigned char stack[IG_JSON_MAX_DEPTH + 1];
    size_t depth = 0;
    int expect_key = 0, in_str = 0, str_key = 0, after_key = 0;
    for (size_t i = 0; i < pos && i < n; i++) {
        char c = p[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0, after_key = str_key;
            continue;
        }
        int obj = depth && stack[depth - 1] == '{';
        switch (c) {
        case '"': in_str = 1, str_key = obj && expect_key, expect_key = 0; break;
        case '{':
        case '[':
            if (depth <= IG_JSON_MAX_DEPTH)
                stack[depth++] = (unsigned char)c;
            expect_key = c == '{', after_key = 0;
            break;
        case '}':
        case ']': depth -= depth > 0; break;
        case ',': expect_key = obj, after_key = 0; break;
        case ':': after_key = 0; break;
        }
    }
    return (in_str && str_key) || after_key;
}

/* The key jansson's "duplicate object key near '\"KEY\"'" names, when it can be quoted as it
 * is (at most 64 bytes of UTF-8, no escapes). */
static int repeated_key(const char *text, char *out, size_t outlen)
{
    const char *near = strstr(text, "near '\""), *end = near ? strstr(near + 7, "\"'") : NULL;
    if (!end)
        return 0;
    near += 7;
    size_t len = (size_t)(end - near);
    if (len >= outlen || len > 64 || memchr(near, '\\', len) || !ig_utf8_valid((const uint8_t *)near, len, NULL))
        return 0;
    memcpy(out, near, len);
    out[len] = '\0';
    return 1;
}

json_t *ig_json_read(const char *p, size_t n, const char *what, ig_error *err)
{
    json_error_t je;
    int why;
    /* integers stay exact (a seed past 2^53 means what it says); one past 2^63 cannot be held
     * as one, so the body is read again with every number a double, for the field's range
     * check to refuse it by name */
    json_t *v = ig_json_parse(p, n, 0, &je, &why);
    if (!v && why == IG_JSON_BAD && json_error_code(&je) == json_error_numeric_overflow)
        v = ig_json_parse(p, n, JSON_DECODE_INT_AS_REAL, &je, &why);
    if (v)
        return v;
    if (why == IG_JSON_HEAVY) {
        ig_error_set(err, IG_EUSAGE, "%s %s: send fewer values", what, je.text);
        return NULL;
    }
    if (why == IG_JSON_DEEP) {
        ig_error_set(err, IG_EINVAL, "%s is not valid JSON: nested more than %d deep (byte %d)", what,
                     IG_JSON_MAX_DEPTH, je.position);
        return NULL;
    }
    if (why == IG_JSON_NOMEM) {
        ig_error_set(err, IG_ENOMEM, "out of memory parsing %s", what);
        return NULL;
    }
    char key[80];
    if (json_error_code(&je) == json_error_duplicate_key) {
        /* jansson names the repeated key itself; the key before the position is another */
        if (repeated_key(je.text, key, sizeof key))
            ig_error_set(err, IG_EINVAL, "%s is not valid JSON: \"%s\": given twice (byte %d)", what, key,
                         je.position);
        else
            ig_error_set(err, IG_EINVAL, "%s is not valid JSON: %s (byte %d)", what, je.text, je.position);
    } else if (in_key(p, n, (size_t)je.position)) {
        ig_error_set(err, IG_EINVAL, "%s is not valid JSON: in a key: %s (byte %d)", what, je.text, je.position);
    } else if (json_error_code(&je) != json_error_end_of_input_expected && /* text after the whole value */
               !strstr(je.text, "string or '}' expected") && /* a key was due: the one before is not at fault */
               key_before(p, n, (size_t)je.position, key, sizeof key))
        ig_error_set(err, IG_EINVAL, "%s is not valid JSON: \"%s\": %s (byte %d)", what, key, je.text,
                     je.position);
    else
        ig_error_set(err, IG_EINVAL, "%s is not valid JSON: %s (byte %d)", what, je.text, je.position);
    return NULL;
}

/* key names the field, or one element of a list field ("stop[1]"), which should be a string */
static int wrong_type(const char *key, const ig_field *f, json_t *v, ig_error *err)
{
    static const char *const names[] = {"an object", "an array", "a string", "an integer", "a number",
                                        "true", "false", "null"};
    int t = json_typeof(v);
    size_t kn = strlen(key);
    const char *want = f->type == IG_FIELD_TEXTS && kn && key[kn - 1] == ']' ? "a string" : ig_field_type_name(f);
    return ig_error_set(err, IG_EUSAGE, "\"%s\": expected %s, not %s", key, want,
                        t >= 0 && t < 8 ? names[t] : "this value");
}

static int prefixed(const char *key, int rc, ig_error *err)
{
    if (!rc || !err)
        return rc;
    char msg[IG_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    ig_error_set(err, rc, "\"%s\": %s", key, msg);
    return rc;
}

/* A JSON string's exact bytes (NULs too) through the field's text setter, the message prefixed with the key. */
static int set_string(const ig_field *f, void *opts, const char *key, json_t *v, ig_error *err)
{
    return prefixed(key, ig_field_set_text(f, opts, (const uint8_t *)json_string_value(v), json_string_length(v), err),
                    err);
}

int ig_field_set_json(const ig_field *f, void *opts, const char *key, json_t *v, ig_error *err)
{
    switch (f->type) {
    case IG_FIELD_BOOL:
        if (!json_is_boolean(v))
            return wrong_type(key, f, v, err);
        return prefixed(key, ig_field_set_bool(f, opts, json_is_true(v), err), err);
    case IG_FIELD_INT:
    case IG_FIELD_UINT:
    case IG_FIELD_DOUBLE:
    case IG_FIELD_SIZE:
        if (f->type == IG_FIELD_SIZE && json_is_string(v)) /* "4G", as the shell and the help spell sizes */
            return set_string(f, opts, key, v, err);
        if (!json_is_number(v))
            return wrong_type(key, f, v, err);
        if (json_is_integer(v) && f->type != IG_FIELD_DOUBLE) /* exact to 2^63, where a double stops at 2^53 */
            return prefixed(key, ig_field_set_int(f, opts, (long long)json_integer_value(v), err), err);
        return prefixed(key, ig_field_set_number(f, opts, json_number_value(v), err), err);
    case IG_FIELD_ENUM:
    case IG_FIELD_TEXT:
        if ((f->flags & IG_FIELD_JSON) && (json_is_array(v) || json_is_object(v))) {
            /* JSON given as JSON: the operation parses its text (strings keep their NULs) */
            char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (!t)
                return ig_error_set(err, IG_EINTERNAL, "\"%s\": out of memory", key);
            int rc = ig_field_set_text(f, opts, (const uint8_t *)t, strlen(t), err);
            free(t);
            return prefixed(key, rc, err);
        }
        if ((f->flags & IG_FIELD_NUMBER_AS_TEXT) && json_is_number(v)) {
            double d = json_number_value(v);
            char num[32];
            if (!(d >= 0 && d <= 9007199254740992.0 && d == (double)(uint64_t)d))
                return ig_error_set(err, IG_EUSAGE, "\"%s\": %.17g is not a valid id", key, d);
            snprintf(num, sizeof num, "%llu", (unsigned long long)d);
            return prefixed(key, ig_field_set_text(f, opts, (const uint8_t *)num, strlen(num), err), err);
        }
        if (!json_is_string(v))
            return wrong_type(key, f, v, err);
        return set_string(f, opts, key, v, err);
    case IG_FIELD_TEXTS:
        if (json_is_string(v))
            return set_string(f, opts, key, v, err);
        if (json_is_array(v)) {
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) {
                char k[96];
                snprintf(k, sizeof k, "%s[%zu]", key, i);
                if (!json_is_string(x))
                    return wrong_type(k, f, x, err);
                int rc = ig_field_set_text(f, opts, (const uint8_t *)json_string_value(x), json_string_length(x), err);
                if (rc)
                    return prefixed(k, rc, err);
            }
            return 0;
        }
        return wrong_type(key, f, v, err);
    }
    return ig_error_set(err, IG_EINTERNAL, "\"%s\": field of unknown type", key);
}

static int listed(const char *const *list, const char *key)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], key))
            return 1;
    return 0;
}

int ig_fields_from_json(const ig_field *fields, void *opts, json_t *req, const char *const *skip,
                        const char *const *alias, ig_error *err)
{
    if (!json_is_object(req))
        return ig_error_set(err, IG_EUSAGE, "a query must be a JSON object");
    const char *key;
    json_t *v;
    uint64_t given = 0;
    json_object_foreach(req, key, v) {
        if (listed(skip, key))
            continue;
        const char *name = key;
        for (size_t i = 0; alias && alias[i]; i += 2)
            if (!strcmp(alias[i], key))
                name = alias[i + 1];
        const ig_field *f = ig_field_find(fields, name, strlen(name));
        if (!f || strcmp(f->name, name) || (f->flags & IG_FIELD_SHELL))
            return ig_error_set(err, IG_EUSAGE, "unknown field \"%s\"", key);
        if (json_is_null(v))
            continue; /* null: the default, as OpenAI clients send for unset options */
        if (f - fields >= 64)
            return ig_error_set(err, IG_EINTERNAL, "\"%s\": a field table of more than 64 rows", key);
        uint64_t bit = (uint64_t)1 << (f - fields);
        if (given & bit)
            return ig_error_set(err, IG_EUSAGE, "\"%s\": given twice (as \"%s\" and an alias)", key, f->name);
        given |= bit;
        int rc = ig_field_set_json(f, opts, key, v, err);
        if (rc)
            return rc;
    }
    for (const ig_field *f = fields; f->name; f++)
        if (!(f->flags & IG_FIELD_SHELL) && ig_field_missing(fields, f, given))
            return ig_error_set(err, IG_EUSAGE, "\"%s\" is required", f->name);
    return 0;
}

int ig_field_setting(const ig_field *fields, void *opts, const char *key, const char *value, ig_error *err)
{
    const ig_field *f = ig_field_find(fields, key, strlen(key));
    if (!f || !value || !strcmp(value, "none") || (f->flags & IG_FIELD_POSITIONAL))
        return 0;
    return ig_field_set_text(f, opts, (const uint8_t *)value, strlen(value), err);
}
