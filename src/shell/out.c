/*
 * The output sink. Results go to sh->out, messages to sh->err; in JSON mode every
 * command prints exactly one JSON line on stdout (an error object when it fails), and
 * human text never reaches stdout. Errors can point at a column of the command line
 * with a caret, like SQLite's shell.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shell.h"


const char *sh_c(shell *sh, const char *ansi) { return sh->color ? ansi : ""; }

void sh_printf(shell *sh, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(sh->out, fmt, ap);
    va_end(ap);
}

void sh_puts(shell *sh, const char *s) { fputs(s, sh->out); }

void sh_write(shell *sh, const void *p, size_t n) { fwrite(p, 1, n, sh->out); }

/* Writes n bytes to f with the controls that would drive a terminal shown instead: C0
 * controls but tab and newline as ^X, DEL as ^?, C1 controls as <U+XXXX>, between dim and
 * reset. */
static void shown_write(FILE *f, const char *dim, const char *reset, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t run = 0; /* bytes since the last one replaced, written in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        int c1 = c == 0xC2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F; /* U+0080..U+009F */
        if (!c1 && (c >= 0x20 || c == '\t' || c == '\n') && c != 0x7F)
            continue;
        fwrite(s + run, 1, i - run, f);
        if (c1)
            fprintf(f, "%s<U+%04X>%s", dim, s[++i], reset);
        else
            fprintf(f, "%s^%c%s", dim, c == 0x7F ? '?' : c + '@', reset);
        run = i + 1;
    }
    fwrite(s + run, 1, n - run, f);
}

void sh_write_text(shell *sh, const void *p, size_t n)
{
    if (!sh->out_tty)
        sh_write(sh, p, n);
    else
        shown_write(sh->out, sh_c(sh, SH_DIM), sh_c(sh, SH_RESET), p, n);
}

/* A message on sh->err: it carries file names and corpus bytes, whatever their makers chose,
 * so its controls are shown, never sent to the terminal (nor into a log as escapes). */
static void err_write(shell *sh, const char *msg)
{
    shown_write(sh->err, sh->err_color ? SH_DIM : "", sh->err_color ? SH_RESET : "", msg, strlen(msg));
}

static void prefix(shell *sh, const char *kind, const char *color)
{
    sh_progress_clear(sh);
    fflush(sh->out);
    fprintf(sh->err, "%s%s:%s ", sh->err_color ? color : "", kind, sh->err_color ? SH_RESET : "");
    if (sh->src_name && sh->lineno) /* no line: what went wrong is the source itself */
        fprintf(sh->err, "%s%d: ", sh->src_name, sh->lineno);
}

void sh_warn(shell *sh, const char *fmt, ...)
{
    va_list ap;
    prefix(sh, "warning", SH_YELLOW);
    char *msg = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        msg = NULL; /* undefined after a failure */
    err_write(sh, n < 0 ? "(a warning, with no memory left to say it)" : msg);
    free(msg);
    fputc('\n', sh->err);
}

/* Optimal string alignment distance, case-insensitive, of two short words: a typo is a
 * letter wrong, missing, extra or two swapped. Words over 48 bytes are never near. */
static unsigned osa_distance(const char *a, size_t n, const char *b, size_t m)
{
    enum { MAX = 48 };
    if (n > MAX || m > MAX)
        return UINT32_MAX;
    unsigned d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            unsigned v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

void sh_near_init(sh_near *n, const char *word, size_t len) { *n = (sh_near){word, len, NULL, UINT32_MAX}; }

void sh_near_add(sh_near *n, const char *name)
{
    size_t m = strlen(name);
    unsigned d = n->len >= 2 && n->len < m && !strncmp(name, n->word, n->len) ? 1 : osa_distance(n->word, n->len, name, m);
    unsigned reach = n->len <= 4 ? 1 : 2; /* two typos in a three-letter word make any other word */
    if (d <= reach && d < n->dist) {
        n->best = name;
        n->dist = d;
    }
}

const char *sh_near_hint(const sh_near *n, const char *prefix, char *buf, size_t size)
{
    if (!n->best || !size)
        return "";
    snprintf(buf, size, " (did you mean %s%s?)", prefix ? prefix : "", n->best);
    return buf;
}

cJSON *sh_json_new(shell *sh, sh_args *a)
{
    (void)sh;
    cJSON *o = cJSON_CreateObject(); /* NULL when memory ran out: sh_json_emit reports it */
    cJSON_AddStringToObject(o, "command", a && a->def ? a->def->name : a && a->cmd ? a->cmd : "");
    return o;
}

void sh_json_u64(cJSON *o, const char *k, uint64_t v) { cJSON_AddNumberToObject(o, k, (double)v); }

void sh_json_strings(shell *sh, sh_args *a, ...)
{
    cJSON *o = sh_json_new(sh, a);
    va_list ap;
    va_start(ap, a);
    for (const char *k; (k = va_arg(ap, const char *));) {
        const char *v = va_arg(ap, const char *);
        cJSON_AddStringToObject(o, k, v);
    }
    va_end(ap);
    sh_json_emit(sh, o);
}

void sh_json_emit(shell *sh, cJSON *o)
{
    /* nanosecond resolution: round to 6 decimals of a millisecond */
    double ms = sh->fake_clock ? 0 : round(sh->elapsed * 1e9) / 1e6;
    cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "elapsed_ms");
    if (e)
        cJSON_SetNumberValue(e, ms);
    else
        cJSON_AddNumberToObject(o, "elapsed_ms", ms);
    char *s = o ? ig_utf8_repair(cJSON_PrintUnformatted(o)) : NULL; /* source paths are any bytes */
    if (!s) {
        cJSON_Delete(o);
        sh_fail(sh, NULL, "out_of_memory", "out of memory");
        return;
    }
    fputs(s, sh->out);
    fputc('\n', sh->out);
    fflush(sh->out);
    free(s);
    cJSON_Delete(o);
}

static void emit_error_json(shell *sh, sh_args *a, const char *code, const char *msg)
{
    if (!sh->json)
        return;
    cJSON *o = sh_json_new(sh, a);
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddStringToObject(e, "code", code);
    sh_json_emit(sh, o);
}

static int vfail(shell *sh, sh_args *a, long col, const char *code, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    prefix(sh, "error", SH_RED);
    err_write(sh, msg);
    fputc('\n', sh->err);
    const char *line = a && a->line ? a->line : sh->cmdline;
    if (col >= 0 && line) {
        fprintf(sh->err, "  %s\n  %*s^\n", line, (int)col, "");
    }
    /* a pointer to the help only where a caret shows a mistake in the words typed */
    if (col >= 0 && !strcmp(code, "usage") && a && a->cmd) {
        const sh_cmd *c = a->def;
        if (c)
            fprintf(sh->err, "Use \":help %s\" for usage.\n", c->name);
    }
    emit_error_json(sh, a, code, msg);
    sh->cmd_failed = 1;
    return SH_ERR;
}

int sh_fail(shell *sh, sh_args *a, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(sh, a, -1, code, fmt, ap);
    va_end(ap);
    return rc;
}

int sh_fail_at(shell *sh, sh_args *a, size_t col, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(sh, a, (long)col, code, fmt, ap);
    va_end(ap);
    return rc;
}

int sh_fail_ig(shell *sh, sh_args *a, const ig_error *e) { return sh_fail_field(sh, a, e); }
