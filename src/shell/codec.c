/*
 * The shell's side of the typed operations: fills an operation's options from a parsed
 * command line through its field table (the same table the server's JSON codec reads),
 * runs it, and prints its JSON line. Option names are the fields' names with dashes;
 * errors name the option as typed, with a caret under its value.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* ---- option tables generated from field tables (for parsing, completion, help, man) ---- */

static sh_opt *generated[128];
static pthread_once_t generated_once = PTHREAD_ONCE_INIT;

static char *dashed(const char *name)
{
    char *s = strdup(name);
    for (char *p = s; p && *p; p++)
        if (*p == '_')
            *p = '-';
    return s;
}

static void generate_all(void)
{
    for (size_t i = 0; i < sh_ncmds && i < sizeof generated / sizeof generated[0]; i++) {
        const ig_op *op = sh_cmds[i].op;
        if (!op)
            continue;
        size_t n = 0;
        for (const ig_field *f = op->fields; f->name; f++)
            n++;
        sh_opt *t = calloc(n + 1, sizeof *t);
        if (!t)
            continue; /* the command then shows no options; parsing still reads the fields */
        size_t k = 0;
        for (const ig_field *f = op->fields; f->name; f++) {
            if (f->flags & (IG_FIELD_POSITIONAL | IG_FIELD_HTTP))
                continue;
            char *help = NULL;
            if (f->def && asprintf(&help, "%s (default %s)", f->help, f->def) < 0)
                help = NULL;
            t[k].name = dashed(f->name);
            t[k].arg = f->type == IG_FIELD_BOOL ? NULL : f->arg ? f->arg : "VALUE";
            t[k].help = help ? help : f->help;
            k++;
        }
        generated[i] = t;
    }
}

const sh_opt *sh_cmd_opts(const sh_cmd *c)
{
    if (!c->op)
        return c->opts;
    pthread_once(&generated_once, generate_all);
    size_t i = (size_t)(c - sh_cmds);
    return i < sizeof generated / sizeof generated[0] && generated[i] ? generated[i] : c->opts;
}

/* ---- filling options ---- */

uint64_t sh_field_bit(const ig_op *op, const char *name)
{
    const ig_field *f = ig_field_find(op->fields, name, strlen(name));
    return f ? (uint64_t)1 << (f - op->fields) : 0;
}

static int field_fail(shell *sh, sh_args *a, size_t col, const ig_field *f, const ig_error *e)
{
    char *name = dashed(f->name);
    int rc = (f->flags & IG_FIELD_POSITIONAL)
                 ? sh_fail_at(sh, a, col, ig_error_code_name(e->code), "%s: %s", f->arg ? f->arg : name, e->msg)
                 : sh_fail_at(sh, a, col, ig_error_code_name(e->code), "--%s: %s", name, e->msg);
    free(name);
    return rc;
}

static void usage_line(const sh_cmd *c, char *buf, size_t n) { snprintf(buf, n, "%s %s", c->name, c->args); }

int sh_fill_opts(shell *sh, sh_args *a, const sh_cmd *c, void *opts, uint64_t *given)
{
    const ig_op *op = c->op;
    uint64_t mask = 0;
    ig_error e;
    /* a setting named like a field is its default ("none": the operation's own) */
    for (size_t i = 0; sh->settings && i < sh_nsettings; i++) {
        const char *k = sh_settings[i].key;
        const ig_field *f = ig_field_find(op->fields, k, strlen(k));
        const char *v = sh->settings[i];
        if (f && v && strcmp(v, "none") && !(f->flags & IG_FIELD_POSITIONAL))
            (void)ig_field_set_text(f, opts, (const uint8_t *)v, strlen(v), &e); /* checked by :set */
    }
    for (int i = 0; i < a->nopts; i++) {
        sh_optval *ov = &a->opts[i];
        const ig_field *f = ig_field_find(op->fields, ov->name, strlen(ov->name));
        if (!f || (f->flags & (IG_FIELD_POSITIONAL | IG_FIELD_HTTP)))
            continue; /* not a field: the handler reads it itself */
        ov->used = 1;
        int rc = f->type == IG_FIELD_BOOL
                     ? ig_field_set_bool(f, opts, 1, &e)
                     : ig_field_set_text(f, opts, (const uint8_t *)ov->value.text, ov->value.len, &e);
        if (rc)
            return field_fail(sh, a, f->type == IG_FIELD_BOOL ? ov->col : ov->value.col, f, &e);
        mask |= (uint64_t)1 << (f - op->fields);
    }
    int w = 0;
    char usage[512];
    for (const ig_field *f = op->fields; f->name; f++) {
        if (!(f->flags & IG_FIELD_POSITIONAL))
            continue;
        if (w >= a->nwords) {
            if (f->flags & IG_FIELD_REQUIRED) {
                usage_line(c, usage, sizeof usage);
                return sh_fail(sh, a, "usage", "missing %s; usage: %s", f->arg ? f->arg : f->name, usage);
            }
            continue;
        }
        int rc;
        size_t col = a->words[w].col;
        if (f->flags & IG_FIELD_REST) {
            size_t len;
            char *text = sh_text_arg(a, w, &len);
            if (!text)
                return sh_fail(sh, a, "internal", "out of memory");
            rc = ig_field_set_text(f, opts, (const uint8_t *)text, len, &e);
            free(text);
            w = a->nwords;
        } else {
            rc = ig_field_set_text(f, opts, (const uint8_t *)a->words[w].text, a->words[w].len, &e);
            w++;
        }
        if (rc)
            return field_fail(sh, a, col, f, &e);
        mask |= (uint64_t)1 << (f - op->fields);
    }
    if (w < a->nwords) {
        usage_line(c, usage, sizeof usage);
        return sh_fail_at(sh, a, a->words[w].col, "usage", "unexpected argument; usage: %s", usage);
    }
    if (given)
        *given = mask;
    return SH_OK;
}

/* The column of a field in the typed line: under its option's value (or the option, for
 * a switch or a message about the option itself), or under its positional word; -1. */
static long field_col(const sh_args *a, const ig_op *op, const char *name, size_t len, int value)
{
    const ig_field *f = op ? ig_field_find(op->fields, name, len) : NULL;
    if (f && (f->flags & IG_FIELD_POSITIONAL)) {
        int k = 0;
        for (const ig_field *g = op->fields; g < f; g++)
            k += (g->flags & IG_FIELD_POSITIONAL) != 0;
        return k < a->nwords ? (long)a->words[k].col : -1;
    }
    for (int i = 0; i < a->nopts; i++) {
        const char *n = a->opts[i].name;
        size_t k = 0;
        for (; k < len && n[k]; k++)
            if (n[k] != name[k] && !(n[k] == '-' && name[k] == '_'))
                break;
        if (k == len && !n[k])
            return (long)(value && a->opts[i].value.text ? a->opts[i].value.col : a->opts[i].col);
    }
    return -1;
}

int sh_op_begin(shell *sh, sh_args *a, const ig_op *op, void *opts, uint64_t *given)
{
    op->defaults(opts);
    if (sh_need_index(sh, a) || sh_fill_opts(sh, a, sh_find_cmd(sh, op->name, NULL), opts, given)) {
        ig_fields_free(op->fields, opts);
        return SH_ERR;
    }
    return SH_OK;
}

int sh_fail_field(shell *sh, sh_args *a, const ig_error *e)
{
    const sh_cmd *c = a && a->cmd ? sh_find_cmd(sh, a->cmd, NULL) : NULL;
    const ig_op *op = c ? c->op : NULL;
    char msg[IG_ERRMSG_MAX + 256];
    size_t o = 0;
    long col = -1;
    /* {name}: --name for an option, its placeholder (TEXT) for a positional argument */
    for (const char *p = e->msg; *p && o + 1 < sizeof msg; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close || close == p + 1 || memchr(p + 1, ' ', (size_t)(close - p - 1))) {
            msg[o++] = *p;
            continue;
        }
        size_t len = (size_t)(close - p - 1);
        const ig_field *f = op ? ig_field_find(op->fields, p + 1, len) : NULL;
        if (col < 0 && a)
            col = field_col(a, op, p + 1, len, p == e->msg && close[1] == ':');
        if (f && (f->flags & IG_FIELD_POSITIONAL) && p == e->msg && !strncmp(close, "}: ", 3)) {
            p = close + 2; /* "TEXT: …" at the start says no more than the caret under the word */
            continue;
        }
        if (f && (f->flags & IG_FIELD_POSITIONAL) && f->arg)
            o += (size_t)snprintf(msg + o, sizeof msg - o, "%s", f->arg);
        else
            o += (size_t)snprintf(msg + o, sizeof msg - o, "--%.*s", (int)len, p + 1);
        for (size_t k = o - len; k < o && k < sizeof msg; k++)
            if (msg[k] == '_')
                msg[k] = '-';
        p = close;
        if (o >= sizeof msg)
            o = sizeof msg - 1;
    }
    msg[o] = '\0';
    if (col >= 0)
        return sh_fail_at(sh, a, (size_t)col, ig_error_code_name(e->code), "%s", msg);
    return sh_fail(sh, a, ig_error_code_name(e->code), "%s", msg);
}

int sh_op_run(shell *sh, sh_args *a, const ig_op *op, const void *opts, void *result)
{
    ig_op_ctx ctx = {sh->idx, sh->current, (const volatile int *)&sh_interrupted};
    ig_error e;
    memset(result, 0, op->result_size);
    if (!sh->idx)
        return sh_fail(sh, a, "usage", "no dataset loaded (use: load NAME)");
    if (SH_TIMED(sh, op->run(&ctx, opts, result, &e))) {
        op->free_result(result);
        return sh_fail_field(sh, a, &e);
    }
    return SH_OK;
}

void sh_op_json(shell *sh, sh_args *a, const ig_op *op, const void *opts, const void *result)
{
    ig_op_ctx ctx = {sh->idx, sh->current, NULL};
    char *members = op->json(&ctx, opts, result);
    cJSON *head = cJSON_CreateObject();
    cJSON_AddStringToObject(head, "command", a && a->cmd ? a->cmd : op->name);
    char *h = cJSON_PrintUnformatted(head);
    cJSON_Delete(head);
    /* nanosecond resolution: round to 6 decimals of a millisecond */
    cJSON *ms = cJSON_CreateNumber(sh->fake_clock ? 0 : round(sh->elapsed * 1e9) / 1e6);
    char *m = cJSON_PrintUnformatted(ms);
    cJSON_Delete(ms);
    if (!members || !h || !m) {
        free(members);
        free(h);
        free(m);
        sh_fail(sh, a, "internal", "out of memory");
        return;
    }
    h[strlen(h) - 1] = '\0'; /* drop the closing brace */
    fprintf(sh->out, "%s%s%s,\"elapsed_ms\":%s}\n", h, *members ? "," : "", members, m);
    fflush(sh->out);
    free(members);
    free(h);
    free(m);
}
