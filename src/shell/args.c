/*
 * Arguments of the shell's own commands and messages about a line. The line itself is read
 * by the library (ig_line_read: the one tokenizer; sh_parse in repl.c calls it) and an
 * operation's options are filled by the library's codec from the same field rows the server's
 * JSON codec reads. Here: the option helpers the shell's own commands (:dataset, build, …)
 * read their options with, the option tables generated from field rows (completion, help,
 * the man page), and the words of the messages about a line — a caret under the word at
 * fault, the nearest option for one misspelled, the usage line, and a field named by a
 * library error spelled as the option that was typed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

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
    ig_error e;
    if (o && ig_option_int(name, o->value.text, min, max, out, &e))
        return sh_fail_at(sh, a, o->value.col, "usage", "%s", e.msg);
    return SH_OK;
}

int sh_parse_size(const char *s, uint64_t *out) { return ig_parse_size(s, out); }

int sh_opt_size(shell *sh, sh_args *a, const char *name, uint64_t *out)
{
    sh_optval *o = sh_opt_get(a, name);
    ig_error e;
    if (o && ig_option_size(name, o->value.text, out, &e))
        return sh_fail_at(sh, a, o->value.col, "usage", "%s", e.msg);
    return SH_OK;
}

int sh_need_words(shell *sh, sh_args *a, int min, int max, const char *usage)
{
    if (a->nwords < min)
        return sh_fail(sh, a, "usage", "missing argument; usage: %s", usage);
    if (max >= 0 && a->nwords > max)
        return sh_fail_at(sh, a, a->words[max].col, "usage", "unexpected argument; usage: %s", usage);
    return SH_OK;
}

/* The word as the library's path reader takes it: ~ expanded, a NUL byte refused. */
static int word_path(sh_word *w, ig_error *e)
{
    char *p = NULL;
    int rc = ig_word_path(&(ig_word){w->text, w->len, w->col, 0, w->quoted, 0}, &p, e);
    if (rc)
        return rc;
    if (w->heap)
        free(w->text);
    w->text = p;
    w->len = strlen(p);
    w->heap = 1;
    return 0;
}

int sh_path_arg(shell *sh, sh_args *a, sh_word *w)
{
    ig_error e;
    int rc = word_path(w, &e);
    return !rc ? SH_OK : rc == IG_EUSAGE ? sh_fail_at(sh, a, w->col, "usage", "%s", e.msg) : sh_fail_ig(sh, a, &e);
}

void sh_expand_tilde(sh_word *w)
{
    ig_error e;
    (void)word_path(w, &e); /* left as typed on failure: the path then fails to open, with its name */
}

/* ---- messages about a line ---- */

int sh_parse_fail(shell *sh, sh_args *a, const ig_error *e)
{
    const ig_line *l = &a->parsed;
    if (e->code != IG_EUSAGE)
        return sh_fail(sh, a, "internal", "%s", e->msg);
    char hint[96] = "";
    if (l->unknown && a->def) { /* the nearest option the command has */
        const char *name = l->words[0].text;
        for (size_t i = 1; i < l->nwords; i++)
            if (l->words[i].col == l->errcol)
                name = l->words[i].text + 2;
        sh_near near;
        sh_near_init(&near, name, strcspn(name, "="));
        for (const sh_opt *x = sh_cmd_opts(a->def); x && x->name; x++)
            sh_near_add(&near, x->name);
        sh_near_hint(&near, "--", hint, sizeof hint);
    }
    return sh_fail_at(sh, a, l->errcol, "usage", "%s%s", e->msg, hint);
}

int sh_fail_usage(shell *sh, sh_args *a, const char *why)
{
    const sh_cmd *c = a->def;
    return sh_fail(sh, a, "usage", "%s%susage: %s %s", why ? why : "", why ? "; " : "", c ? c->name : a->cmd,
                   c ? c->args : "");
}

int sh_fill_fail(shell *sh, sh_args *a, const sh_cmd *c, const ig_line_fill *fill, const ig_error *e)
{
    if (fill->missing)
        return sh_fail_usage(sh, a, e->msg);
    if (fill->extra)
        return sh_fail_at(sh, a, fill->errcol, "usage", "%s; usage: %s %s", e->msg, c->name, c->args);
    if (!fill->field)
        return sh_fail(sh, a, "internal", "%s", e->msg);
    return sh_fail_at(sh, a, fill->errcol, ig_error_code_name(e->code), "%s", e->msg);
}

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

/* ---- fields as options ---- */

uint64_t sh_field_bit(const ig_op *op, const char *name)
{
    const ig_field *f = ig_field_find(op->fields, name, strlen(name));
    return f ? (uint64_t)1 << (f - op->fields) : 0;
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

/* The caret goes under the first field of the message that the typed line holds. */
typedef struct caret {
    const sh_args *a;
    const ig_op *op;
    long col;
} caret;

static void caret_seen(void *ctx, const char *name, size_t len, int value)
{
    caret *c = ctx;
    if (c->col < 0 && c->a)
        c->col = field_col(c->a, c->op, name, len, value);
}

/* " (did you mean NAME?)" after the library's `unknown dataset "X"`, from the catalog's names,
 * as mistyped commands and options get; appended to msg (cap bytes). */
static void dataset_hint(shell *sh, const ig_error *e, char *msg, size_t cap)
{
    static const char head[] = "unknown dataset \"";
    const char *name = e->code == IG_ENOTFOUND ? strstr(e->msg, head) : NULL, *end;
    if (!name || !sh->cat || !(end = strchr(name += sizeof head - 1, '"')))
        return;
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error le;
    if (ig_catalog_list(sh->cat, &list, &n, &le))
        return;
    sh_near near;
    sh_near_init(&near, name, (size_t)(end - name));
    for (size_t i = 0; i < n; i++)
        sh_near_add(&near, list[i].name);
    char hint[200];
    size_t len = strlen(msg);
    snprintf(msg + len, cap - len, "%s", sh_near_hint(&near, NULL, hint, sizeof hint));
    ig_dataset_list_free(list, n);
}

int sh_fail_field(shell *sh, sh_args *a, const ig_error *e)
{
    const sh_cmd *c = a ? a->def : NULL;
    caret k = {a, c ? c->op : NULL, -1};
    char msg[IG_ERRMSG_MAX + 256];
    ig_field_msg_shell(k.op ? k.op->fields : NULL, e->msg, msg, sizeof msg, caret_seen, &k);
    dataset_hint(sh, e, msg, sizeof msg);
    if (k.col >= 0)
        return sh_fail_at(sh, a, (size_t)k.col, ig_error_code_name(e->code), "%s", msg);
    return sh_fail(sh, a, ig_error_code_name(e->code), "%s", msg);
}

/* What an operation's progress callback draws with: the shell and the operation's name. */
typedef struct op_progress {
    shell *sh;
    const char *label;
} op_progress;

static int op_progress_draw(void *user, uint64_t done, uint64_t total)
{
    const op_progress *p = user;
    if (sh_interrupted)
        return 1;
    sh_progress_draw(p->sh, p->label, done, total);
    return 0;
}

int sh_op_run_progress(shell *sh, sh_args *a, const ig_op *op, void *opts, void *result,
                       int (**progress)(void *user, uint64_t done, uint64_t total), void **user)
{
    op_progress p = {sh, op->name};
    *progress = sh->progress ? op_progress_draw : NULL;
    *user = &p;
    int rc = sh_op_run(sh, a, op, opts, result);
    sh_progress_clear(sh);
    *progress = NULL;
    *user = NULL;
    return rc;
}

int sh_op_json(shell *sh, sh_args *a, const ig_op *op, const void *opts, const void *result)
{
    ig_op_ctx ctx = {sh->idx, sh->current, NULL};
    char *members = op->json(&ctx, opts, result);
    cJSON *head = cJSON_CreateObject();
    cJSON_AddStringToObject(head, "command", a && a->def ? a->def->name : a && a->cmd ? a->cmd : op->name);
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
        return sh_fail(sh, a, "out_of_memory", "out of memory writing the answer");
    }
    h[strlen(h) - 1] = '\0'; /* drop the closing brace */
    fprintf(sh->out, "%s%s%s,\"elapsed_ms\":%s}\n", h, *members ? "," : "", members, m);
    fflush(sh->out);
    free(members);
    free(h);
    free(m);
    return SH_OK;
}
