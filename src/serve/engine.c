/*
 * Engine endpoints: POST /v1/<operation> with {"dataset", "query", options...}, or a
 * batch {"dataset", "queries": [...]}. Each request is decoded through the operation's
 * field table, run against the dataset's shared index, and answered with the
 * operation's JSON writer (the same writer as the shell's --json) plus elapsed_ms.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"


void srv_apply_settings(const srv_config *cfg, const ig_field *fields, void *opts)
{
    ig_error e;
    for (const char *const *kv = cfg->settings; kv && kv[0]; kv += 2)
        (void)ig_field_setting(fields, opts, kv[0], kv[1], &e); /* checked by :set */
}

/* An answer this large was written from a tree of small blocks, now freed but kept by the
 * heap: glibc keeps freed heap memory for the next allocation, so a server that once wrote a
 * 200 MB answer held 600 MB ever after. It is handed back to the system after such answers. */
#define TRIM_AFTER ((size_t)16 << 20)

/* Request keys that are not options of the operation. */
static const char *const skip_keys[] = {"dataset", NULL};

/* "context" is accepted for "query" where the operation has no field of that name. */
static const char *const *aliases(const ig_op *op)
{
    static const char *const context_is_query[] = {"context", "query", NULL};
    if (ig_field_find(op->fields, "query", 5) && !ig_field_find(op->fields, "context", 7))
        return context_is_query;
    return NULL;
}

/* contam may take its items from another served dataset, named by "eval_dataset" (never a
 * path): it is held like the main one for the request. Non-zero with *r set when it is not
 * served. */
static int contam_eval_dataset(server *s, void *opts, srv_ds **ed, reply *r)
{
    ig_contam_opts *o = opts;
    if (!o->eval_dataset.p)
        return 0;
    if (srv_name_bad("eval_dataset", (const char *)o->eval_dataset.p, o->eval_dataset.n, r))
        return 1;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)o->eval_dataset.n, (const char *)o->eval_dataset.p);
    ig_error why;
    if (!(*ed = srv_acquire(s, name, &why))) {
        *r = srv_unavailable(name, "eval_dataset", &why);
        return 1;
    }
    o->eval_index = (*ed)->idx;
    return 0;
}

/* One request: sets *status and returns the response object's text (malloc'd). */
static char *run_one(server *s, const ig_op *op, json_t *q, json_t *batch_ds, const volatile int *cancel,
                     unsigned *status, int *no_retry)
{
    ig_error e;
    reply r;
    if (!json_is_object(q)) {
        r = srv_error(400, "usage", "a query must be a JSON object");
        *status = r.status;
        return r.body;
    }
    json_t *ds = json_object_get(q, "dataset");
    if (!ds)
        ds = batch_ds;
    int bad = ds && !json_is_string(ds);
    if (bad)
        r = srv_error(400, "usage", "\"dataset\": expected a string");
    else if (ds)
        bad = srv_name_bad("dataset", json_string_value(ds), json_string_length(ds), &r);
    if (bad) {
        *status = r.status;
        return r.body;
    }
    void *opts = calloc(1, op->opts_size), *res = calloc(1, op->result_size);
    if (!opts || !res) {
        free(opts);
        free(res);
        r = srv_error(500, "internal", "out of memory");
        *status = r.status;
        return r.body;
    }
    op->defaults(opts);
    srv_apply_settings(s->cfg, op->fields, opts);
    srv_ds *d = NULL, *ed = NULL;
    ig_error why;
    int big = 0; /* the answer is large: its making's memory goes back to the system after */
    if (ig_fields_from_json(op->fields, opts, q, skip_keys, aliases(op), &e)) {
        r = srv_error_ig(&e);
    } else if (!(d = srv_acquire(s, ds ? json_string_value(ds) : NULL, &why))) {
        r = srv_unavailable(ds ? json_string_value(ds) : NULL, "dataset", &why);
    } else if (op == &ig_op_contam && contam_eval_dataset(s, opts, &ed, &r)) {
        srv_release(s, d); /* the eval dataset named is not served */
    } else {
        ig_op_ctx ctx = {d->idx, d->name, cancel};
        double t0 = srv_now();
        char *ran = NULL; /* the runner's answer */
        int rc = s->cfg->runner ? s->cfg->runner(s->cfg->runner_user, op, d->name, opts, &ran, &e)
                                : op->run(&ctx, opts, res, &e);
        double dt = srv_now() - t0;
        if (rc == IG_ECANCELLED || (!rc && srv_flag_up(cancel))) {
            /* no Ctrl-C here: the watchdog stopped it. An operation that keeps what it had
             * (generate's text so far, eval's partial score) is answered 503 too, as every
             * stopped request is: a 200 would pass a cut answer off as the whole one. */
            if (!rc && !s->cfg->runner)
                op->free_result(res);
            free(ran);
            r = srv_cancelled(s);
        } else if (rc) {
            r = srv_error_ig(&e);
        } else {
            char *members = s->cfg->runner ? ran : op->json(&ctx, opts, res), ms[64];
            srv_format_ms(dt, s->cfg->fake_clock, ms, sizeof ms);
            char *body = NULL;
            int blen = members ? asprintf(&body, "{%s%s\"elapsed_ms\":%s}", members, *members ? "," : "", ms) : -1;
            if (blen < 0)
                body = NULL;
            free(members);
            big = blen > 0 && (size_t)blen > TRIM_AFTER;
            if (body && srv_flag_up(cancel)) { /* the deadline passed while the answer was written */
                free(body);
                r = srv_cancelled(s);
            } else
                r = body ? srv_ok(body) : srv_error(500, "internal", "out of memory");
            if (!s->cfg->runner)
                op->free_result(res);
        }
        srv_release(s, d);
        if (ed)
            srv_release(s, ed);
    }
    ig_fields_free(op->fields, opts);
    free(opts);
    free(res);
    if (big)
        malloc_trim(0);
    *status = r.status;
    if (no_retry)
        *no_retry = r.no_retry;
    return r.body;
}

/* A batch: at most this many queries, answered in at most this many bytes in all. */
#define MAX_BATCH 1000
#define MAX_ANSWER ((size_t)512 << 20)

reply srv_engine(server *s, const ig_op *op, json_t *body, const volatile int *cancel)
{
    json_t *batch = json_object_get(body, "queries");
    if (!batch) {
        unsigned st;
        int no_retry = 0;
        char *b = run_one(s, op, body, NULL, cancel, &st, &no_retry);
        return (reply){st, b, no_retry};
    }
    if (!json_is_array(batch))
        return srv_error(400, "usage", "\"queries\": expected a list");
    if (json_array_size(batch) > MAX_BATCH)
        return srv_error(400, "usage", "\"queries\": at most %d in one request", MAX_BATCH);
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v) if (strcmp(key, "queries") && strcmp(key, "dataset")) return srv_error(
        400, "usage", "unknown field \"%s\" beside \"queries\" (options go in each query)", key);
    json_t *ds = json_object_get(body, "dataset");
    /* results are joined as text: each is already the writer's JSON */
    size_t n = json_array_size(batch), cap = 64, len = 0;
    char *out = malloc(cap);
    if (!out)
        return srv_error(500, "internal", "out of memory");
    len = (size_t)snprintf(out, cap, "{\"results\":[");
    for (size_t i = 0; i < n; i++) {
        unsigned st;
        char *one = run_one(s, op, json_array_get(batch, i), ds, cancel, &st, NULL);
        if (srv_flag_up(cancel)) { /* past the deadline (or stopping): this answer may be cut short, the rest would fail */
            free(one);
            free(out);
            return srv_cancelled(s);
        }
        size_t need = len + (one ? strlen(one) : 0) + 4;
        if (one && need > MAX_ANSWER) { /* the answers are held whole until sent: bound them */
            free(one);
            free(out);
            return srv_error(400, "usage", "\"queries[%zu]\": the answers up to this one come to over %zu MiB; "
                                          "ask in smaller batches", i, MAX_ANSWER >> 20);
        }
        if (!one || need > cap) {
            /* half as much again, not twice: the buffer stays within 1.5 times the answers' bound */
            size_t more = need + need / 2 < MAX_ANSWER + 4 ? need + need / 2 : MAX_ANSWER + 4;
            char *bigger = one ? realloc(out, cap = more) : NULL;
            if (!bigger) {
                free(one);
                free(out);
                return srv_error(500, "internal", "out of memory");
            }
            out = bigger;
        }
        len += (size_t)sprintf(out + len, "%s%s", i ? "," : "", one);
        free(one);
    }
    memcpy(out + len, "]}", 3);
    return srv_ok(out);
}
