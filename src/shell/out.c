/*
 * The output sink. Results go to sh->out, messages to sh->err; in JSON mode every
 * command prints exactly one JSON line on stdout (an error object when it fails), and
 * human text never reaches stdout. Errors can point at a column of the command line
 * with a caret, like SQLite's shell.
 */
#include <math.h>
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
    va_start(ap, fmt);
    vfprintf(sh->err, fmt, ap);
    va_end(ap);
    fputc('\n', sh->err);
}

cJSON *sh_json_new(shell *sh, sh_args *a)
{
    (void)sh;
    cJSON *o = cJSON_CreateObject(); /* NULL when memory ran out: sh_json_emit reports it */
    cJSON_AddStringToObject(o, "command", a && a->cmd ? a->cmd : "");
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
    fprintf(sh->err, "%s\n", msg);
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
