/*
 * Arguments: the shell's only tokenizer and its option codec. A line is split into the
 * command word, positional words and options: `--name`, `--name VALUE` or `--name=VALUE`
 * anywhere, `--` ends them; quoted strings with the escapes \n \t \\ \" \xHH are
 * single words and never options; unquoted words join, with single spaces, into a TEXT
 * argument. Whether an option takes a value comes from the command's option table, so
 * parsing, completion and help agree. For commands backed by a typed operation that table
 * is generated from the operation's field rows (names with dashes); the same rows fill
 * and validate the options struct, so an error names the option as typed, with a caret
 * under it, and the shell and the server validate with one bound.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* ---- tokenizer: the library's (ig_words_split), with the shell's caret on errors ---- */

typedef ig_word tok;

static int tokenize(shell *sh, sh_args *a, const char *line, char *arena, int grammar, tok **out, int *n)
{
    size_t nw = 0, col;
    ig_error e;
    int rc = ig_words_split(line, grammar, arena, out, &nw, &col, &e);
    *n = (int)nw;
    if (rc == IG_EUSAGE)
        return sh_fail_at(sh, a, col, "usage", "%s", e.msg);
    if (rc)
        return sh_fail(sh, a, "internal", "%s", e.msg);
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
    a->def = cmd;
    size_t len = strlen(line);
    a->line = strdup(line);
    a->arena = malloc(2 * len + 1);
    a->cmd = sh_first_word(line); /* before tokenising, so errors can name the command */
    if (!a->line || !a->arena || !a->cmd)
        return sh_fail(sh, a, "internal", "out of memory reading the command line");
    int grammar = 0;
    for (const ig_field *f = cmd && cmd->op ? cmd->op->fields : NULL; f && f->name; f++)
        grammar |= (f->flags & IG_FIELD_GRAMMAR) != 0;
    tok *t = NULL;
    int n = 0, rc = tokenize(sh, a, line, a->arena, grammar, &t, &n);
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
                if (!o && cmd && !eq && nlen == 4 && !strncmp(name, "help", 4)) {
                    a->help = 1; /* `count --help` asks for `:help count`; nothing runs */
                    continue;
                }
                if (!o) {
                    sh_near near;
                    sh_near_init(&near, name, nlen);
                    for (const sh_opt *x = cmd ? sh_cmd_opts(cmd) : NULL; x && x->name; x++)
                        sh_near_add(&near, x->name);
                    char hint[96];
                    rc = sh_fail_at(sh, a, k->col, "usage", "unknown option --%.*s for %s%s", (int)nlen, name,
                                    cmd ? cmd->name : a->cmd, sh_near_hint(&near, "--", hint, sizeof hint));
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
        /* names, paths and settings are C strings: cut at a NUL they would name something else */
        for (int i = 1; cmd && !cmd->op && rc == SH_OK && i < n; i++)
            if (memchr(t[i].text, 0, t[i].len))
                rc = sh_fail_at(sh, a, t[i].col, "usage", "a NUL byte (\\x00) can only be part of a query's text");
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

int sh_need_words(shell *sh, sh_args *a, int min, int max, const char *usage)
{
    if (a->nwords < min)
        return sh_fail(sh, a, "usage", "missing argument; usage: %s", usage);
    if (max >= 0 && a->nwords > max)
        return sh_fail_at(sh, a, a->words[max].col, "usage", "unexpected argument; usage: %s", usage);
    return SH_OK;
}

int sh_path_arg(shell *sh, sh_args *a, sh_word *w)
{
    /* the path would be cut at the NUL and name another file */
    if (memchr(w->text, 0, w->len))
        return sh_fail_at(sh, a, w->col, "usage", "a file name cannot hold a NUL byte (\\x00)");
    sh_expand_tilde(w);
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
            if (ig_field_missing(op->fields, f, mask)) {
                usage_line(c, usage, sizeof usage);
                return sh_fail(sh, a, "usage", "missing %s; usage: %s", f->arg ? f->arg : f->name, usage);
            }
            continue;
        }
        int rc;
        size_t col = a->words[w].col;
        if (f->flags & IG_FIELD_REST) {
            size_t len;
            char *text = NULL;
            ig_word *ws = malloc((size_t)(a->nwords - w) * sizeof *ws);
            if (!ws)
                return sh_fail(sh, a, "internal", "out of memory");
            for (int k = w; k < a->nwords; k++)
                ws[k - w] = (ig_word){a->words[k].text, a->words[k].len, a->words[k].col, 0, a->words[k].quoted};
            size_t bad;
            int jr = ig_words_text(ws, (size_t)(a->nwords - w), (f->flags & IG_FIELD_GRAMMAR) != 0, &text, &len, &bad, &e);
            free(ws);
            if (jr == IG_EUSAGE)
                return sh_fail_at(sh, a, bad, "usage", "%s is %s", f->arg ? f->arg : f->name, e.msg);
            if (jr)
                return sh_fail(sh, a, "internal", "%s", e.msg);
            /* 'text' as most shells quote it: the quotes are text here, which is seldom meant */
            if (!a->words[w].quoted && len >= 2 && text[0] == '\'' && text[len - 1] == '\'' && !sh->server)
                sh_warn(sh, "the single quotes are part of %s here (quote with \"...\" to leave them out)",
                        f->arg ? f->arg : f->name);
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

int sh_need_index(shell *sh, sh_args *a)
{
    if (!sh->idx)
        return sh_fail(sh, a, "usage", "no dataset loaded (use: load NAME)");
    ig_error e;
    /* a token index's files or tokenizer may change under us; a built one is replaced whole */
    if (sh->idx_tokens && ig_index_changed(sh->idx, &e))
        return sh_fail_ig(sh, a, &e);
    return SH_OK;
}

int sh_op_begin(shell *sh, sh_args *a, const ig_op *op, void *opts, uint64_t *given)
{
    op->defaults(opts);
    if (sh_need_index(sh, a) || sh_fill_opts(sh, a, a->def, opts, given)) {
        ig_fields_free(op->fields, opts);
        return SH_ERR;
    }
    return SH_OK;
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

int sh_fail_field(shell *sh, sh_args *a, const ig_error *e)
{
    const sh_cmd *c = a ? a->def : NULL;
    caret k = {a, c ? c->op : NULL, -1};
    char msg[IG_ERRMSG_MAX + 256];
    ig_field_msg_shell(k.op ? k.op->fields : NULL, e->msg, msg, sizeof msg, caret_seen, &k);
    if (k.col >= 0)
        return sh_fail_at(sh, a, (size_t)k.col, ig_error_code_name(e->code), "%s", msg);
    return sh_fail(sh, a, ig_error_code_name(e->code), "%s", msg);
}

int sh_op_run(shell *sh, sh_args *a, const ig_op *op, const void *opts, void *result)
{
    ig_op_ctx ctx = {sh->idx, sh->current, (const volatile int *)&sh_interrupted};
    ig_error e;
    memset(result, 0, op->result_size);
    if (!sh->idx)
        return sh_fail(sh, a, "usage", "no dataset loaded (use: load NAME)");
    if (SH_TIMED(sh, op->run(&ctx, opts, result, &e))) /* a failed run holds nothing */
        return sh_fail_field(sh, a, &e);
    return SH_OK;
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

int sh_face_run(shell *sh, sh_args *a, const sh_face *f, void *self)
{
    const ig_op *op = a->def->op;
    void *opts = malloc(op->opts_size), *result = malloc(op->result_size);
    uint64_t given = 0;
    if (!opts || !result) {
        free(opts);
        free(result);
        return sh_fail(sh, a, "internal", "out of memory");
    }
    int rc = sh_op_begin(sh, a, op, opts, &given); /* on failure nothing is left allocated */
    if (rc == SH_OK) {
        rc = f->prepare ? f->prepare(sh, a, opts, given, self) : SH_OK;
        if (rc == SH_OK)
            rc = f->run ? f->run(sh, a, opts, result, self) : sh_op_run(sh, a, op, opts, result);
        if (rc == SH_OK) { /* a failed run holds nothing */
            if (sh->json)
                sh_op_json(sh, a, op, opts, result);
            else
                f->render(sh, opts, result, given, self);
            if (f->finish)
                rc = f->finish(sh, a, result, self);
            op->free_result(result);
        }
        ig_fields_free(op->fields, opts);
    }
    free(opts);
    free(result);
    return rc == SH_OK ? SH_OK : SH_ERR;
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
