/* command: see command.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "infinigram/infinigram.h"
#include "command.h"
#include "cluster.h"

captured_answer captured;

void emit(const char *cmd, const char *members, double t0)
{
    if (captured.on) {
        free(captured.members);
        if (!(captured.members = strdup(members))) {
            captured.failed = 1;
            ig_error_set(&captured.err, IG_ENOMEM, "out of memory");
        }
        return;
    }
    cJSON *ms = cJSON_CreateNumber(g.fake_clock ? 0 : round((now() - t0) * 1e9) / 1e6);
    char *m = ms ? cJSON_PrintUnformatted(ms) : NULL;
    cJSON *c = cJSON_CreateString(cmd);
    char *cs = c ? cJSON_PrintUnformatted(c) : NULL;
    if (m && cs)
        printf("{\"command\":%s%s%s,\"elapsed_ms\":%s}\n", cs, *members ? "," : "", members, m);
    else
        printf("{\"command\":\"%s\",\"error\":{\"message\":\"out of memory\",\"code\":\"out_of_memory\"}}\n", cmd);
    fflush(stdout);
    cJSON_Delete(ms);
    cJSON_Delete(c);
    free(m);
    free(cs);
}

/* The error answer: msg as it is. */
static int fail_msg(const char *cmd, int code, double t0, const char *msg)
{
    if (captured.on) {
        captured.failed = 1;
        ig_error_set(&captured.err, code, "%s", msg);
        return -1;
    }
    cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
    char *s = NULL, *text = ig_utf8_repair(strdup(msg)); /* a message may quote bytes of the line or a file name */
    if (o && e && text) {
        cJSON_AddStringToObject(e, "message", text);
        cJSON_AddStringToObject(e, "code", ig_error_code_name(code));
        cJSON_AddItemToObject(o, "error", e);
        e = NULL;
        s = cJSON_PrintUnformatted(o);
    }
    if (s) { /* the members without the braces */
        s[strlen(s) - 1] = '\0';
        emit(cmd, s + 1, t0);
    } else {
        emit(cmd, "\"error\":{\"message\":\"out of memory\",\"code\":\"out_of_memory\"}", t0);
    }
    free(s);
    free(text);
    cJSON_Delete(o);
    cJSON_Delete(e);
    g.failed = 1;
    return -1;
}

int fail(const char *cmd, int code, double t0, const char *fmt, ...)
{
    char msg[IG_ERRMSG_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_msg(cmd, code, t0, msg);
}

int fail_error(const char *cmd, const ig_error *e, double t0)
{
    if (captured.on) /* the server renders it in its own words */
        return fail_msg(cmd, e->code, t0, e->msg);
    char msg[IG_ERRMSG_MAX + 1024];
    const ig_op *op = ig_op_find(cmd); /* fields named as infinigram names them, so that the answers match */
    ig_field_msg_shell(op ? op->fields : NULL, e->msg, msg, sizeof msg, NULL, NULL);
    return fail_msg(cmd, e->code, t0, msg);
}

int emit_answer(const char *cmd, char *members, double t0)
{
    int rc = 0;
    if (members)
        emit(cmd, members, t0);
    else
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory writing the answer");
    free(members);
    return rc;
}

int ask_all_or_fail(const char *cmd, double t0, wire *q, uint8_t **rep, size_t *nrep)
{
    round_trip(q, 0, g.size, g.timeout, rep, nrep);
    wire_free(q);
    return report_failures(cmd, t0, rep, nrep, 0, g.size);
}

int answer_or_fail(const ig_op *op, int rc, const ig_error *e, const void *opts, const void *result, double t0)
{
    if (rc)
        return fail_error(op->name, e, t0);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    return emit_answer(op->name, op->json(&ctx, opts, result), t0);
}

int report_failures(const char *cmd, double t0, uint8_t **rep, size_t *nrep, int from, int to)
{
    ig_error e;
    if (!replies_error(rep, nrep, from, to, &e))
        return 0;
    fail_error(cmd, &e, t0);
    return -1;
}

void words_free(words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    free(ws->w);
    free(ws->len); /* and at, end, quoted */
    memset(ws, 0, sizeof *ws);
}

int split(const char *s, words *ws, char *why, size_t whylen)
{
    memset(ws, 0, sizeof *ws);
    ws->line = s;
    size_t len = strlen(s), first = strspn(s, " \t"), n = 0, col = 0;
    size_t flen = strcspn(s + first, " \t");
    char *arena = malloc(2 * len + 1);
    ig_word *iw = NULL;
    ig_error e;
    int rc = arena ? ig_words_split(s, flen == 6 && !strncmp(s + first, "search", 6), arena, &iw, &n, &col, &e)
                   : ig_error_set(&e, IG_ENOMEM, "out of memory");
    size_t cap = n ? n : 1;
    if (!rc && (!(ws->w = calloc(cap, sizeof *ws->w)) || !(ws->len = calloc(4 * cap, sizeof *ws->len))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc) {
        ws->at = ws->len + cap;
        ws->end = ws->at + cap;
        ws->quoted = ws->end + cap;
    }
    for (size_t i = 0; !rc && i < n; i++, ws->n++) {
        if (!(ws->w[i] = malloc(iw[i].len + 1))) {
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
            break;
        }
        memcpy(ws->w[i], iw[i].text, iw[i].len + 1);
        ws->len[i] = iw[i].len;
        ws->at[i] = iw[i].col;
        ws->end[i] = iw[i].end;
        ws->quoted[i] = iw[i].quoted;
    }
    free(iw);
    free(arena);
    if (rc)
        snprintf(why, whylen, "%s", e.msg); /* as the shell's JSON says it (its caret is for a terminal) */
    return rc ? -1 : 0;
}

void *preset;

/* A cluster's datasets index bytes: token ids are refused as one machine refuses them on a
 * byte dataset, never read as an empty text. */
static int no_token_ids(const ig_op *op, const void *opts, ig_error *e)
{
    for (const ig_field *f = op->fields; f->name; f++)
        if (f->type == IG_FIELD_TEXT && (!strcmp(f->name, "ids") || !strcmp(f->name, "next_ids")) &&
            ((const ig_bytes *)((const char *)opts + f->offset))->p)
            return ig_error_set(e, IG_EUSAGE, "{%s} needs a token dataset (this one indexes bytes: give text)", f->name);
    return 0;
}

int fill_opts(const ig_op *op, void *opts, const words *ws, ig_error *e)
{
    if (!ws) {
        if (!preset)
            return ig_error_set(e, IG_EINTERNAL, "no options");
        memcpy(opts, preset, op->opts_size);
        memset(preset, 0, op->opts_size);
        return no_token_ids(op, opts, e);
    }
    /* the shell's reader and codec, on the line the words came from: the same options, the
     * same messages */
    int grammar = 0;
    for (const ig_field *f = op->fields; f->name; f++)
        grammar |= (f->flags & IG_FIELD_GRAMMAR) != 0;
    ig_line l;
    ig_line_fill fill;
    int rc = ig_line_read(ws->line, grammar, ig_fields_lookup, op->fields, op->name, &l, e);
    if (!rc && l.help)
        rc = ig_error_set(e, IG_EUSAGE, "--help: the cluster answers commands (see the shell's :help %s)", op->name);
    if (!rc)
        rc = ig_fields_from_line(op->fields, &l, opts, &fill, e);
    ig_line_free(&l);
    if (!rc && (rc = no_token_ids(op, opts, e))) { /* spelled as the line spells options, as the codec's messages are */
        char msg[IG_ERRMSG_MAX];
        ig_field_msg_shell(op->fields, e->msg, msg, sizeof msg, NULL, NULL);
        ig_error_set(e, rc, "%s", msg);
    }
    return rc;
}

const char *opt_value(const words *ws, const char *name)
{
    for (size_t i = 1; i + 1 < ws->n; i++)
        if (!strcmp(ws->w[i], name))
            return ws->w[i + 1];
    return NULL;
}

int need_loaded(const char *cmd, double t0)
{
    if (g.loaded)
        return 0;
    return fail(cmd, IG_EUSAGE, t0, "no dataset loaded (use: load NAME)");
}

int normalize_text(const uint8_t *p, size_t n, uint8_t **out, size_t *len, ig_error *e)
{
    return ig_query_normalize(g.idx, p ? p : (const uint8_t *)"", n, out, len, e);
}

int cmd_begin(const ig_op *op, void *opts, void *result, double t0)
{
    op->defaults(opts);
    if (result)
        memset(result, 0, op->result_size);
    return need_loaded(op->name, t0);
}

int read_own(const char *cmd, const words *ws, const ig_option *table, ig_line *l, double t0)
{
    ig_error e;
    int rc = ig_line_read(ws->line, 0, ig_options_lookup, table, cmd, l, &e);
    if (!rc)
        rc = ig_line_names(l, &e);
    if (!rc && l->help)
        rc = ig_error_set(&e, IG_EUSAGE, "--help: see :help %s", cmd);
    return rc ? fail(cmd, e.code, t0, "%s", e.msg) : 0;
}

const char *own_value(const ig_line *l, const char *name)
{
    const char *v = NULL; /* the last one given wins, as in the shell */
    for (size_t i = 0; i < l->nopts; i++)
        if (!strcmp(l->opts[i].name, name))
            v = l->opts[i].has_value ? l->opts[i].value.text : "";
    return v;
}

int value_quoted(const ig_op *op, const words *ws, const char *field)
{
    ig_line l;
    ig_error e;
    int quoted = 0;
    if (ws && !ig_line_read(ws->line, 0, ig_fields_lookup, op->fields, op->name, &l, &e)) {
        size_t k = 0; /* the field's place among the positional ones */
        for (const ig_field *f = op->fields; f->name; f++) {
            int here = !strcmp(f->name, field);
            if (here && !(f->flags & IG_FIELD_POSITIONAL)) {
                for (size_t i = 0; i < l.nopts; i++)
                    if (!strcmp(l.opts[i].name, field))
                        quoted = l.opts[i].value.quoted; /* the last one given wins */
                break;
            }
            if (here) {
                quoted = k < l.nargs && l.args[k].quoted;
                break;
            }
            k += (f->flags & IG_FIELD_POSITIONAL) != 0;
        }
    }
    ig_line_free(&l);
    return quoted;
}
