/*
 * serve — the HTTP/1.1 JSON API on libmicrohttpd's thread pool. Engine endpoints run
 * the shell's own command handlers in JSON mode (a request becomes a command line, the
 * handler's JSON object becomes the response), so the API and the shell cannot drift
 * apart. OpenAI-compatible completion endpoints drive the generation iterator directly,
 * streaming server-sent events when asked. Indexes are shared by all threads; when the
 * catalog changes (another shell rebuilt a dataset), the new index is opened and the
 * old one closed once the requests that use it have finished.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "serve-watch.h"
#include "shell.h"

/* ---------------------------------------------------------------- datasets */

typedef struct srv_ds {
    char *name;
    char *path;               ///< index directory
    ig_index *idx;
    int refs;                 ///< requests using it
    int retired;              ///< replaced: close when refs reaches 0
    struct srv_ds *next;
} srv_ds;

typedef struct server {
    shell *sh;                ///< owns the catalog (used under `mu`)
    pthread_mutex_t mu;
    srv_ds *live, *retired;
    int64_t data_version;
    char **allow;             ///< --datasets filter (NULL: all built datasets)
    size_t nallow;
    size_t body_limit;
    unsigned threads;
} server;

static int allowed(server *s, const char *name)
{
    if (!s->allow)
        return 1;
    for (size_t i = 0; i < s->nallow; i++)
        if (!strcmp(s->allow[i], name))
            return 1;
    return 0;
}

static void ds_free(srv_ds *d)
{
    ig_index_close(&d->idx);
    free(d->name);
    free(d->path);
    free(d);
}

/* Re-reads the catalog when another connection committed since the last look. Called
 * with the mutex held. */
static void refresh(server *s, int force)
{
    int64_t v = ig_catalog_data_version(s->sh->cat);
    if (!force && v == s->data_version)
        return;
    s->data_version = v;
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (ig_catalog_list(s->sh->cat, &list, &n, &e))
        return;
    /* retire entries whose dataset vanished or whose index changed */
    for (srv_ds **pp = &s->live; *pp;) {
        srv_ds *d = *pp;
        const char *now = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(list[i].name, d->name))
                now = list[i].index_path;
        if (now && !strcmp(now, d->path)) {
            pp = &d->next;
            continue;
        }
        *pp = d->next;
        if (d->refs == 0) {
            ds_free(d);
        } else {
            d->retired = 1;
            d->next = s->retired;
            s->retired = d;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!list[i].index_path || !allowed(s, list[i].name))
            continue;
        int have = 0;
        for (srv_ds *d = s->live; d; d = d->next)
            have |= !strcmp(d->name, list[i].name);
        if (have)
            continue;
        srv_ds *d = calloc(1, sizeof *d);
        if (!d || ig_index_open(&d->idx, list[i].index_path, &e)) {
            free(d);
            continue;
        }
        d->name = strdup(list[i].name);
        d->path = strdup(list[i].index_path);
        d->next = s->live;
        s->live = d;
    }
    ig_dataset_list_free(list, n);
}

static srv_ds *acquire(server *s, const char *name)
{
    pthread_mutex_lock(&s->mu);
    refresh(s, 0);
    srv_ds *found = NULL, *only = NULL;
    int count = 0;
    for (srv_ds *d = s->live; d; d = d->next) {
        count++;
        only = d;
        if (name && !strcmp(d->name, name))
            found = d;
    }
    if (!name && count == 1)
        found = only; /* one dataset served: it is the default */
    if (found)
        found->refs++;
    pthread_mutex_unlock(&s->mu);
    return found;
}

static void release(server *s, srv_ds *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&s->mu);
    if (--d->refs == 0 && d->retired) {
        for (srv_ds **pp = &s->retired; *pp; pp = &(*pp)->next)
            if (*pp == d) {
                *pp = d->next;
                break;
            }
        ds_free(d);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------- responses */

typedef struct reply {
    unsigned status;
    char *body;               ///< malloc'd JSON
} reply;

static const char *status_type(unsigned st) { return st >= 500 ? "server_error" : "invalid_request_error"; }

static unsigned status_of(const char *code)
{
    if (!strcmp(code, "not_found"))
        return 404;
    if (!strcmp(code, "usage") || !strcmp(code, "invalid_input") || !strcmp(code, "exists"))
        return 400;
    if (!strcmp(code, "busy"))
        return 503;
    return 500;
}

static reply error_reply(unsigned status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddStringToObject(e, "type", status_type(status));
    cJSON_AddStringToObject(e, "code", code);
    reply r = {status, cJSON_PrintUnformatted(o)};
    cJSON_Delete(o);
    return r;
}

static reply json_reply(cJSON *o)
{
    reply r = {200, cJSON_PrintUnformatted(o)};
    cJSON_Delete(o);
    return r;
}

/* ---------------------------------------------------------------- engine commands */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

/* Appends s as one quoted word of the command line (the shell's own quoting). */
static void sb_quote(sbuf *b, const char *s, size_t n)
{
    char *q = sh_quote(s, n);
    sb_str(b, q);
    free(q);
}

/* One option from a JSON field: "max_context": 100 → --max-context 100. */
static int add_option(sbuf *b, const char *key, const cJSON *v, char *why, size_t wl)
{
    char name[96];
    snprintf(name, sizeof name, " --%s", key);
    for (char *p = name; *p; p++)
        if (*p == '_')
            *p = '-';
    if (cJSON_IsBool(v)) {
        if (cJSON_IsTrue(v))
            sb_str(b, name);
        return 0;
    }
    if (cJSON_IsNumber(v)) {
        char num[64];
        if (v->valuedouble == (double)(long long)v->valuedouble && fabs(v->valuedouble) < 9e15)
            snprintf(num, sizeof num, " %lld", (long long)v->valuedouble);
        else
            snprintf(num, sizeof num, " %.17g", v->valuedouble);
        sb_str(b, name);
        sb_str(b, num);
        return 0;
    }
    if (cJSON_IsString(v)) {
        sb_str(b, name);
        sb_str(b, " ");
        sb_quote(b, v->valuestring, strlen(v->valuestring));
        return 0;
    }
    if (cJSON_IsArray(v) && !strcmp(key, "stop")) {
        const cJSON *x;
        cJSON_ArrayForEach(x, v) {
            if (!cJSON_IsString(x)) {
                snprintf(why, wl, "\"stop\" must hold strings");
                return -1;
            }
            sb_str(b, name);
            sb_str(b, " ");
            sb_quote(b, x->valuestring, strlen(x->valuestring));
        }
        return 0;
    }
    if ((cJSON_IsArray(v) || cJSON_IsObject(v)) && !strcmp(key, "llm")) {
        char *t = cJSON_PrintUnformatted(v);
        sb_str(b, name);
        sb_str(b, " ");
        sb_quote(b, t, strlen(t));
        free(t);
        return 0;
    }
    snprintf(why, wl, "field \"%s\" has a value of the wrong type", key);
    return -1;
}

static const char *const engine_cmds[] = {"count", "predict", "prob", "backoff", "explain", "spans",
                                          "search", "doc", "generate", "mix", NULL};

/* Runs one engine request object; returns the response object (or an error object) and
 * sets *status. */
static cJSON *run_engine(server *s, const char *cmd, const cJSON *q, unsigned *status)
{
    char why[256] = "";
    if (!cJSON_IsObject(q)) {
        *status = 400;
        reply r = error_reply(400, "usage", "a query must be a JSON object");
        cJSON *o = cJSON_Parse(r.body);
        free(r.body);
        return o;
    }
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(q, "dataset");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(q, "query");
    if (!text)
        text = cJSON_GetObjectItemCaseSensitive(q, "context");
    const cJSON *cont = cJSON_GetObjectItemCaseSensitive(q, "continuation");
    sbuf line = {0};
    sb_str(&line, cmd);
    const cJSON *it;
    int bad = 0;
    cJSON_ArrayForEach(it, q) {
        if (!strcmp(it->string, "dataset") || !strcmp(it->string, "query") || !strcmp(it->string, "context") ||
            !strcmp(it->string, "continuation"))
            continue;
        if (add_option(&line, it->string, it, why, sizeof why)) {
            bad = 1;
            break;
        }
    }
    if (!bad && text && !cJSON_IsString(text) && !(cJSON_IsNumber(text) && !strcmp(cmd, "doc"))) {
        snprintf(why, sizeof why, "\"query\" must be a string");
        bad = 1;
    }
    if (!bad && cont && !cJSON_IsString(cont)) {
        snprintf(why, sizeof why, "\"continuation\" must be a string");
        bad = 1;
    }
    cJSON *out = NULL;
    if (bad) {
        *status = 400;
        out = cJSON_CreateObject();
        cJSON *e = cJSON_AddObjectToObject(out, "error");
        cJSON_AddStringToObject(e, "message", why);
        cJSON_AddStringToObject(e, "type", status_type(400));
        cJSON_AddStringToObject(e, "code", "usage");
        free(line.p);
        return out;
    }
    sb_str(&line, " -- ");
    if (text && cJSON_IsNumber(text)) {
        char num[32];
        snprintf(num, sizeof num, "%lld", (long long)text->valuedouble);
        sb_str(&line, num);
    } else if (text && !strcmp(cmd, "search")) {
        sb_str(&line, text->valuestring); /* the query language is the text */
    } else if (text) {
        sb_quote(&line, text->valuestring, strlen(text->valuestring));
    }
    if (cont) {
        sb_str(&line, " ");
        sb_quote(&line, cont->valuestring, strlen(cont->valuestring));
    }
    srv_ds *d = acquire(s, cJSON_IsString(ds) ? ds->valuestring : NULL);
    if (!d) {
        free(line.p);
        *status = cJSON_IsString(ds) ? 404 : 400;
        reply r = cJSON_IsString(ds) ? error_reply(404, "not_found", "unknown or unbuilt dataset \"%s\"", ds->valuestring)
                                     : error_reply(400, "usage", "\"dataset\" is required (several datasets are served)");
        out = cJSON_Parse(r.body);
        free(r.body);
        return out;
    }
    /* a throwaway shell for this request: JSON mode, output captured in memory */
    shell rs;
    memset(&rs, 0, sizeof rs);
    char *obuf = NULL, *ebuf = NULL;
    size_t olen = 0, elen = 0;
    rs.out = open_memstream(&obuf, &olen);
    rs.err = open_memstream(&ebuf, &elen);
    rs.json = 1;
    rs.server = 1;
    rs.fake_clock = s->sh->fake_clock;
    rs.columns = 80;
    rs.idx = d->idx;
    rs.current = d->name;
    rs.home = s->sh->home;
    sh_run_line(&rs, line.p);
    sh_lastgen_clear(&rs.last);
    fclose(rs.out);
    fclose(rs.err);
    release(s, d);
    free(ebuf);
    free(line.p);
    out = obuf ? cJSON_Parse(obuf) : NULL;
    free(obuf);
    if (!out) {
        *status = 500;
        reply r = error_reply(500, "internal", "the command produced no result");
        out = cJSON_Parse(r.body);
        free(r.body);
        return out;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(out, "command");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(out, "error");
    *status = 200;
    if (err) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
        *status = status_of(cJSON_IsString(code) ? code->valuestring : "internal");
        cJSON_AddStringToObject((cJSON *)err, "type", status_type(*status));
        cJSON_DeleteItemFromObjectCaseSensitive(out, "elapsed_ms");
    }
    return out;
}

static reply engine(server *s, const char *cmd, const cJSON *body)
{
    const cJSON *batch = cJSON_GetObjectItemCaseSensitive(body, "queries");
    if (batch) {
        if (!cJSON_IsArray(batch))
            return error_reply(400, "usage", "\"queries\" must be a list");
        cJSON *o = cJSON_CreateObject(), *res = cJSON_AddArrayToObject(o, "results");
        const cJSON *ds = cJSON_GetObjectItemCaseSensitive(body, "dataset");
        const cJSON *q;
        cJSON_ArrayForEach(q, batch) {
            /* a batch-level dataset applies to queries that name none */
            cJSON *copy = cJSON_Duplicate(q, 1);
            if (cJSON_IsObject(copy) && ds && !cJSON_GetObjectItemCaseSensitive(copy, "dataset"))
                cJSON_AddItemToObject(copy, "dataset", cJSON_Duplicate(ds, 1));
            unsigned st;
            cJSON_AddItemToArray(res, run_engine(s, cmd, copy, &st));
            cJSON_Delete(copy);
        }
        return json_reply(o);
    }
    unsigned st;
    cJSON *o = run_engine(s, cmd, body, &st);
    reply r = json_reply(o);
    r.status = st;
    return r;
}

/* ---------------------------------------------------------------- OpenAI completions */

typedef struct comp_req {
    srv_ds *ds;
    ig_gen_options o;
    char **stops;
    size_t nstop;
    char **prompts;           ///< one per prompt (chat: the joined messages)
    size_t nprompts;
    unsigned n;               ///< choices per prompt
    int echo, logprobs, stream, chat;
    uint64_t max_tokens;
    char id[40];
    long created;
} comp_req;

static void comp_free(comp_req *c)
{
    for (size_t i = 0; i < c->nstop; i++)
        free(c->stops[i]);
    free(c->stops);
    for (size_t i = 0; i < c->nprompts; i++)
        free(c->prompts[i]);
    free(c->prompts);
}

static double num_field(const cJSON *o, const char *k, double dflt, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v || cJSON_IsNull(v))
        return dflt;
    if (!cJSON_IsNumber(v)) {
        *bad = 1;
        return dflt;
    }
    return v->valuedouble;
}

/* Builds the generation request; on error returns a reply with status != 0. */
static reply comp_parse(server *s, const cJSON *b, int chat, comp_req *c)
{
    memset(c, 0, sizeof *c);
    c->chat = chat;
    ig_gen_options_default(&c->o);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(b, "model");
    if (model && !cJSON_IsString(model))
        return error_reply(400, "usage", "\"model\" must be a dataset name");
    int bad = 0;
    c->max_tokens = (uint64_t)num_field(b, "max_tokens", 16, &bad);
    c->o.temperature = num_field(b, "temperature", 1.0, &bad);
    c->o.top_p = num_field(b, "top_p", 1.0, &bad);
    c->n = (unsigned)num_field(b, "n", 1, &bad);
    double interp = num_field(b, "interp", 2, &bad), ngram = num_field(b, "ngram", 0, &bad);
    double seed = num_field(b, "seed", -1, &bad), lp = num_field(b, "logprobs", -1, &bad);
    double mc = num_field(b, "max_context", -1, &bad), topk = num_field(b, "top_k", 0, &bad);
    if (bad)
        return error_reply(400, "usage", "a numeric field has a value that is not a number");
    if (c->n < 1 || c->n > 16)
        return error_reply(400, "usage", "\"n\" must be between 1 and 16");
    if (c->max_tokens > 100000)
        return error_reply(400, "usage", "\"max_tokens\" is at most 100000");
    if (!(c->o.temperature >= 0) || !(c->o.top_p > 0 && c->o.top_p <= 1))
        return error_reply(400, "usage", "\"temperature\" must be >= 0 and \"top_p\" in (0, 1]");
    if (ngram > 0) {
        c->o.model.kind = IG_MODEL_NGRAM;
        c->o.model.n = (uint32_t)ngram;
    } else if (interp == 0) {
        c->o.model.kind = IG_MODEL_INFGRAM;
    } else {
        c->o.model.interp_k = (int)interp;
    }
    c->o.model.max_context = (int64_t)mc;
    c->o.top_k = (uint32_t)topk;
    c->o.max_chars = c->max_tokens;
    if (seed >= 0)
        c->o.seed = (uint64_t)seed;
    else if (getrandom(&c->o.seed, sizeof c->o.seed, 0) != sizeof c->o.seed)
        c->o.seed = (uint64_t)time(NULL);
    c->logprobs = (int)lp;
    const cJSON *echo = cJSON_GetObjectItemCaseSensitive(b, "echo"), *stream = cJSON_GetObjectItemCaseSensitive(b, "stream");
    c->echo = cJSON_IsTrue(echo);
    c->stream = cJSON_IsTrue(stream);
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(b, "stop");
    if (cJSON_IsString(stop)) {
        c->stops = calloc(1, sizeof *c->stops);
        c->stops[c->nstop++] = strdup(stop->valuestring);
    } else if (cJSON_IsArray(stop)) {
        c->stops = calloc((size_t)cJSON_GetArraySize(stop) + 1, sizeof *c->stops);
        const cJSON *x;
        cJSON_ArrayForEach(x, stop) {
            if (!cJSON_IsString(x) || !*x->valuestring)
                return error_reply(400, "usage", "\"stop\" must be a non-empty string or a list of them");
            c->stops[c->nstop++] = strdup(x->valuestring);
        }
    } else if (stop && !cJSON_IsNull(stop)) {
        return error_reply(400, "usage", "\"stop\" must be a string or a list of strings");
    }
    c->o.stop = (const char *const *)c->stops;
    c->o.nstop = c->nstop;
    if (chat) {
        const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(b, "messages"), *m;
        if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
            return error_reply(400, "usage", "\"messages\" must be a non-empty list");
        sbuf p = {0};
        /* the chat template: one "role: content" line per message, then "assistant: " */
        cJSON_ArrayForEach(m, msgs) {
            const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role"), *content = cJSON_GetObjectItemCaseSensitive(m, "content");
            if (!cJSON_IsString(role) || !cJSON_IsString(content)) {
                free(p.p);
                return error_reply(400, "usage", "each message needs string \"role\" and \"content\"");
            }
            sb_str(&p, role->valuestring);
            sb_str(&p, ": ");
            sb_str(&p, content->valuestring);
            sb_str(&p, "\n");
        }
        sb_str(&p, "assistant: ");
        c->prompts = calloc(1, sizeof *c->prompts);
        c->prompts[c->nprompts++] = p.p;
    } else {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(b, "prompt");
        if (cJSON_IsString(pr)) {
            c->prompts = calloc(1, sizeof *c->prompts);
            c->prompts[c->nprompts++] = strdup(pr->valuestring);
        } else if (cJSON_IsArray(pr)) {
            c->prompts = calloc((size_t)cJSON_GetArraySize(pr) + 1, sizeof *c->prompts);
            const cJSON *x;
            cJSON_ArrayForEach(x, pr) {
                if (!cJSON_IsString(x))
                    return error_reply(400, "usage", "\"prompt\" must be a string or a list of strings");
                c->prompts[c->nprompts++] = strdup(x->valuestring);
            }
        } else if (!pr) {
            c->prompts = calloc(1, sizeof *c->prompts);
            c->prompts[c->nprompts++] = strdup("");
        } else {
            return error_reply(400, "usage", "\"prompt\" must be a string or a list of strings");
        }
    }
    c->ds = acquire(s, model ? model->valuestring : NULL);
    if (!c->ds)
        return model ? error_reply(404, "not_found", "unknown or unbuilt dataset \"%s\"", model->valuestring)
                     : error_reply(400, "usage", "\"model\" (a dataset name) is required");
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != sizeof r)
        r = (uint64_t)time(NULL);
    snprintf(c->id, sizeof c->id, "%scmpl-%016" PRIx64, chat ? "chat" : "", s->sh->fake_clock ? (uint64_t)0 : r);
    c->created = s->sh->fake_clock ? 0 : (long)time(NULL);
    return (reply){0, NULL};
}

/* One generated choice: text, finish reason, and legacy logprobs if asked. */
static cJSON *run_choice(server *s, comp_req *c, size_t prompt, unsigned k, unsigned index, char **text_out,
                         const char **finish)
{
    (void)s;
    ig_gen_options o = c->o;
    o.seed = c->o.seed + k; /* each choice its own, reproducible, stream */
    const char *p = c->prompts[prompt];
    ig_gen *g = NULL;
    ig_error e;
    cJSON *lp = NULL, *toks = NULL, *tlp = NULL, *top = NULL, *off = NULL;
    if (c->logprobs >= 0) {
        lp = cJSON_CreateObject();
        toks = cJSON_AddArrayToObject(lp, "tokens");
        tlp = cJSON_AddArrayToObject(lp, "token_logprobs");
        top = cJSON_AddArrayToObject(lp, "top_logprobs");
        off = cJSON_AddArrayToObject(lp, "text_offset");
    }
    *finish = "stop";
    sbuf t = {0};
    sb_str(&t, "");
    if (c->echo)
        sb_str(&t, p);
    if (ig_gen_start(&g, c->ds->idx, &o, (const uint8_t *)p, strlen(p), &e)) {
        *text_out = t.p;
        return lp;
    }
    sbuf ctx = {0};
    sb_str(&ctx, p);
    ig_gen_step st;
    int r;
    while ((r = ig_gen_next(g, &st, &e)) == IG_STOP_NONE) {
        if (lp) {
            char tok[8];
            memcpy(tok, st.bytes, st.len);
            tok[st.len] = '\0';
            cJSON_AddItemToArray(toks, cJSON_CreateString(tok));
            cJSON_AddItemToArray(tlp, cJSON_CreateNumber(st.prob > 0 ? log(st.prob) : -1e30));
            cJSON_AddItemToArray(off, cJSON_CreateNumber((double)(t.len)));
            /* the most probable characters at this step */
            cJSON *alts = cJSON_CreateObject();
            ig_dist d;
            ig_symbol *sy = NULL;
            size_t ns = 0;
            if (c->logprobs > 0 && !ig_predict(c->ds->idx, &o.model, (const uint8_t *)ctx.p, ctx.len, &d, &e)) {
                if (!ig_dist_symbols(c->ds->idx, &d, (const uint8_t *)ctx.p, ctx.len, 1, &sy, &ns, NULL, &e))
                    for (size_t i = 0; i < ns && i < (size_t)c->logprobs; i++) {
                        char a[8];
                        memcpy(a, sy[i].bytes, sy[i].len);
                        a[sy[i].len] = '\0';
                        if (sy[i].prob > 0 && ig_utf8_valid(sy[i].bytes, sy[i].len, NULL))
                            cJSON_AddNumberToObject(alts, a, log(sy[i].prob));
                    }
                free(sy);
                ig_dist_free(&d);
            }
            cJSON_AddItemToArray(top, alts);
        }
        sb_add(&t, (const char *)st.bytes, st.len);
        sb_add(&ctx, (const char *)st.bytes, st.len);
    }
    if (r == IG_STOP_MAX)
        *finish = "length";
    /* a stop string was withdrawn: take the final text from the generator */
    size_t gl;
    const uint8_t *gt = ig_gen_text(g, &gl);
    free(t.p);
    t = (sbuf){0};
    sb_str(&t, "");
    if (c->echo)
        sb_str(&t, p);
    sb_add(&t, (const char *)gt, gl);
    ig_gen_free(&g);
    free(ctx.p);
    (void)index;
    *text_out = t.p;
    return lp;
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static reply completions(server *s, const cJSON *body, int chat)
{
    comp_req c;
    reply r = comp_parse(s, body, chat, &c);
    if (r.status) {
        release(s, c.ds);
        comp_free(&c);
        return r;
    }
    cJSON *o = cJSON_CreateObject(), *choices;
    cJSON_AddStringToObject(o, "id", c.id);
    cJSON_AddStringToObject(o, "object", chat ? "chat.completion" : "text_completion");
    cJSON_AddNumberToObject(o, "created", (double)c.created);
    cJSON_AddStringToObject(o, "model", c.ds->name);
    choices = cJSON_AddArrayToObject(o, "choices");
    uint64_t prompt_chars = 0, out_chars = 0;
    unsigned index = 0;
    for (size_t p = 0; p < c.nprompts; p++) {
        prompt_chars += utf8_chars(c.prompts[p]);
        for (unsigned k = 0; k < c.n; k++, index++) {
            char *text = NULL;
            const char *finish;
            cJSON *lp = run_choice(s, &c, p, k, index, &text, &finish);
            out_chars += utf8_chars(text) - (c.echo ? utf8_chars(c.prompts[p]) : 0);
            cJSON *ch = cJSON_CreateObject();
            cJSON_AddNumberToObject(ch, "index", index);
            if (chat) {
                cJSON *m = cJSON_AddObjectToObject(ch, "message");
                cJSON_AddStringToObject(m, "role", "assistant");
                cJSON_AddStringToObject(m, "content", text);
            } else {
                cJSON_AddStringToObject(ch, "text", text);
            }
            if (lp)
                cJSON_AddItemToObject(ch, "logprobs", lp);
            else
                cJSON_AddNullToObject(ch, "logprobs");
            cJSON_AddStringToObject(ch, "finish_reason", finish);
            cJSON_AddItemToArray(choices, ch);
            free(text);
        }
    }
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)prompt_chars);
    cJSON_AddNumberToObject(u, "completion_tokens", (double)out_chars);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(prompt_chars + out_chars));
    release(s, c.ds);
    comp_free(&c);
    return json_reply(o);
}

/* Streaming: server-sent events, one chunk per character, then "data: [DONE]". */
typedef struct stream_state {
    server *s;
    comp_req c;
    size_t prompt;
    unsigned k, index;
    ig_gen *g;
    int started, finished;
    sbuf pending;             ///< bytes not yet handed to the connection
    size_t sent;
} stream_state;

static void emit_chunk(stream_state *st, const char *text, const char *finish)
{
    cJSON *o = cJSON_CreateObject(), *choices, *ch = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", st->c.id);
    cJSON_AddStringToObject(o, "object", st->c.chat ? "chat.completion.chunk" : "text_completion");
    cJSON_AddNumberToObject(o, "created", (double)st->c.created);
    cJSON_AddStringToObject(o, "model", st->c.ds->name);
    choices = cJSON_AddArrayToObject(o, "choices");
    cJSON_AddNumberToObject(ch, "index", st->index);
    if (st->c.chat) {
        cJSON *d = cJSON_AddObjectToObject(ch, "delta");
        if (!st->started)
            cJSON_AddStringToObject(d, "role", "assistant");
        if (text)
            cJSON_AddStringToObject(d, "content", text);
    } else {
        cJSON_AddStringToObject(ch, "text", text ? text : "");
        cJSON_AddNullToObject(ch, "logprobs");
    }
    if (finish)
        cJSON_AddStringToObject(ch, "finish_reason", finish);
    else
        cJSON_AddNullToObject(ch, "finish_reason");
    cJSON_AddItemToArray(choices, ch);
    char *j = cJSON_PrintUnformatted(o);
    sb_str(&st->pending, "data: ");
    sb_str(&st->pending, j);
    sb_str(&st->pending, "\n\n");
    free(j);
    cJSON_Delete(o);
    st->started = 1;
}

/* Produces more event text; returns 0 when everything has been produced. */
static int stream_more(stream_state *st)
{
    ig_error e;
    while (st->prompt < st->c.nprompts) {
        if (!st->g) {
            ig_gen_options o = st->c.o;
            o.seed = st->c.o.seed + st->k;
            const char *p = st->c.prompts[st->prompt];
            st->started = 0;
            if (ig_gen_start(&st->g, st->c.ds->idx, &o, (const uint8_t *)p, strlen(p), &e)) {
                emit_chunk(st, NULL, "stop");
                goto next;
            }
            if (st->c.echo) {
                emit_chunk(st, p, NULL);
                return 1;
            }
        }
        ig_gen_step step;
        int r = ig_gen_next(st->g, &step, &e);
        if (r == IG_STOP_NONE) {
            /* with stop strings, a character may still be withdrawn: send only what the
             * generator keeps (its text never shrinks below what was sent before) */
            size_t gl;
            const uint8_t *gt = ig_gen_text(st->g, &gl);
            size_t hold = ig_gen_held(st->g);
            if (gl - hold > st->sent) {
                char *piece = strndup((const char *)gt + st->sent, gl - hold - st->sent);
                st->sent = gl - hold;
                emit_chunk(st, piece, NULL);
                free(piece);
                return 1;
            }
            continue;
        }
        size_t gl;
        const uint8_t *gt = ig_gen_text(st->g, &gl);
        if (gl > st->sent) {
            char *piece = strndup((const char *)gt + st->sent, gl - st->sent);
            emit_chunk(st, piece, NULL);
            free(piece);
        }
        emit_chunk(st, NULL, r == IG_STOP_MAX ? "length" : "stop");
    next:
        ig_gen_free(&st->g);
        st->sent = 0;
        st->index++;
        if (++st->k == st->c.n) {
            st->k = 0;
            st->prompt++;
        }
        return 1;
    }
    if (!st->finished) {
        sb_str(&st->pending, "data: [DONE]\n\n");
        st->finished = 1;
        return 1;
    }
    return 0;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_state *st = cls;
    while (st->pending.len == 0)
        if (!stream_more(st))
            return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = st->pending.len < max ? st->pending.len : max;
    memcpy(buf, st->pending.p, n);
    memmove(st->pending.p, st->pending.p + n, st->pending.len - n);
    st->pending.len -= n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream_state *st = cls;
    ig_gen_free(&st->g);
    release(st->s, st->c.ds);
    comp_free(&st->c);
    free(st->pending.p);
    free(st);
}

/* ---------------------------------------------------------------- GET endpoints */

static reply get_endpoint(server *s, const char *url)
{
    pthread_mutex_lock(&s->mu);
    refresh(s, 0);
    cJSON *o = cJSON_CreateObject();
    if (!strcmp(url, "/v1/health")) {
        int n = 0;
        for (srv_ds *d = s->live; d; d = d->next)
            n++;
        cJSON_AddStringToObject(o, "status", "ok");
        cJSON_AddNumberToObject(o, "datasets", n);
    } else if (!strcmp(url, "/v1/models")) {
        cJSON_AddStringToObject(o, "object", "list");
        cJSON *arr = cJSON_AddArrayToObject(o, "data");
        for (srv_ds *d = s->live; d; d = d->next) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "id", d->name);
            cJSON_AddStringToObject(m, "object", "model");
            cJSON_AddNumberToObject(m, "created", 0);
            cJSON_AddStringToObject(m, "owned_by", "infinigram");
            cJSON_AddItemToArray(arr, m);
        }
    } else { /* /v1/datasets: the catalog, as :dataset list prints it */
        ig_dataset *list = NULL;
        size_t n = 0;
        ig_error e;
        cJSON *arr = cJSON_AddArrayToObject(o, "datasets");
        if (!ig_catalog_list(s->sh->cat, &list, &n, &e)) {
            for (size_t i = 0; i < n; i++) {
                if (!allowed(s, list[i].name))
                    continue;
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "name", list[i].name);
                cJSON_AddStringToObject(x, "status", list[i].status);
                sh_json_u64(x, "bytes", list[i].bytes);
                sh_json_u64(x, "documents", list[i].documents);
                sh_json_u64(x, "shards", list[i].shards);
                cJSON_AddItemToArray(arr, x);
            }
            ig_dataset_list_free(list, n);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return json_reply(o);
}

/* ---------------------------------------------------------------- libmicrohttpd glue */

typedef struct conn {
    sbuf body;
    int too_big;
} conn;

static enum MHD_Result send_reply(struct MHD_Connection *c, reply r)
{
    struct MHD_Response *res = MHD_create_response_from_buffer(strlen(r.body), r.body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(res, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(c, r.status, res);
    MHD_destroy_response(res);
    return ok;
}

static int is_engine(const char *cmd)
{
    for (const char *const *p = engine_cmds; *p; p++)
        if (!strcmp(*p, cmd))
            return 1;
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    server *s = cls;
    conn *cn = *con_cls;
    if (!cn) {
        if (!(cn = calloc(1, sizeof *cn)))
            return MHD_NO;
        *con_cls = cn;
        return MHD_YES;
    }
    if (*upload_size) {
        if (cn->body.len + *upload_size > s->body_limit)
            cn->too_big = 1;
        else
            sb_add(&cn->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (sw_request_complete(c))
        return MHD_NO; /* too late: the watchdog has answered 408 */
    int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    int is_get_path = !strcmp(url, "/v1/health") || !strcmp(url, "/v1/datasets") || !strcmp(url, "/v1/models");
    const char *cmd = !strncmp(url, "/v1/", 4) ? url + 4 : "";
    int is_post_path = is_engine(cmd) || !strcmp(url, "/v1/completions") || !strcmp(url, "/v1/chat/completions");
    if (!is_get_path && !is_post_path)
        return send_reply(c, error_reply(404, "not_found", "no such endpoint: %s", url));
    if ((is_get_path && !get) || (is_post_path && !post))
        return send_reply(c, error_reply(405, "usage", "%s takes %s", url, is_get_path ? "GET" : "POST"));
    if (cn->too_big)
        return send_reply(c, error_reply(413, "invalid_input", "request body over the limit of %zu bytes", s->body_limit));
    if (is_get_path)
        return send_reply(c, get_endpoint(s, url));
    cJSON *body = cn->body.p ? cJSON_ParseWithLength(cn->body.p, cn->body.len) : NULL;
    if (!cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return send_reply(c, error_reply(400, "invalid_input", "the request body must be a JSON object"));
    }
    reply r;
    if (!strcmp(url, "/v1/completions") || !strcmp(url, "/v1/chat/completions")) {
        int chat = !strcmp(url, "/v1/chat/completions");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "stream"))) {
            stream_state *st = calloc(1, sizeof *st);
            st->s = s;
            r = comp_parse(s, body, chat, &st->c);
            cJSON_Delete(body);
            if (r.status) {
                release(s, st->c.ds);
                comp_free(&st->c);
                free(st);
                return send_reply(c, r);
            }
            struct MHD_Response *res = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_reader, st,
                                                                         stream_free);
            MHD_add_response_header(res, "Content-Type", "text/event-stream");
            MHD_add_response_header(res, "Cache-Control", "no-cache");
            enum MHD_Result ok = MHD_queue_response(c, 200, res);
            MHD_destroy_response(res);
            return ok;
        }
        r = completions(s, body, chat);
    } else {
        r = engine(s, cmd, body);
    }
    cJSON_Delete(body);
    return send_reply(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls;
    (void)t;
    sw_request_done(c);
    conn *cn = *con_cls;
    if (cn) {
        free(cn->body.p);
        free(cn);
        *con_cls = NULL;
    }
}

int sh_serve(shell *sh, const char *host, unsigned port, unsigned threads, const char *datasets, size_t body_limit,
             unsigned timeout)
{
    server s;
    memset(&s, 0, sizeof s);
    s.sh = sh;
    s.body_limit = body_limit;
    s.threads = threads;
    pthread_mutex_init(&s.mu, NULL);
    if (datasets) {
        char *copy = strdup(datasets), *save = NULL;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            s.allow = realloc(s.allow, (s.nallow + 1) * sizeof *s.allow);
            s.allow[s.nallow++] = strdup(w);
        }
        free(copy);
    }
    refresh(&s, 1);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(sh->err, "error: --host %s: not an IPv4 address\n", host);
        return SH_ERR;
    }
    /* SIGINT stops the server: block it in the pool's threads, wait for it here */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    int n = 0; /* counted before the workers start: they may refresh the list */
    for (srv_ds *x = s.live; x; x = x->next)
        n++;
    reply late = error_reply(408, "io", "no complete request within %u s", timeout);
    sw_watch *w = late.body ? sw_start(timeout, late.body) : NULL;
    free(late.body);
    if (!w) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        fprintf(sh->err, "error: cannot start the request watchdog: %s\n", strerror(errno));
        return SH_ERR;
    }
    /* The watchdog enforces --timeout with a 408; libmicrohttpd's own inactivity timeout stays as a
     * backstop for answers the client does not read. */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, &s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout + 2, MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024,
        MHD_OPTION_NOTIFY_COMPLETED, completed, &s, MHD_OPTION_NOTIFY_CONNECTION, sw_notify_connection, w,
        MHD_OPTION_URI_LOG_CALLBACK, sw_request_started, w, MHD_OPTION_END);
    if (!d) {
        sw_stop(w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        fprintf(sh->err, "error: cannot listen on %s:%u: %s\n", host, port, strerror(errno));
        return SH_ERR;
    }
    fprintf(sh->err, "serving %d dataset%s on http://%s:%u/v1 with %u threads (Ctrl-C stops)\n", n, n == 1 ? "" : "s",
            host, port, threads);
    fflush(sh->err);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    sw_stop(w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fprintf(sh->err, "server stopped\n");
    while (s.live) {
        srv_ds *x = s.live;
        s.live = x->next;
        ds_free(x);
    }
    while (s.retired) {
        srv_ds *x = s.retired;
        s.retired = x->next;
        ds_free(x);
    }
    for (size_t i = 0; i < s.nallow; i++)
        free(s.allow[i]);
    free(s.allow);
    pthread_mutex_destroy(&s.mu);
    return SH_OK;
}

int cmd_serve(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 0, "serve [--host 127.0.0.1] [--port N] [--threads N] [--datasets a,b]"))
        return SH_ERR;
    long long port = 8080, threads = 0, limit = 1 << 20, timeout = 30;
    if (sh_opt_int(sh, a, "port", 0, 65535, &port) || sh_opt_int(sh, a, "threads", 0, 256, &threads) ||
        sh_opt_int(sh, a, "body-limit", 1024, 1LL << 30, &limit) || sh_opt_int(sh, a, "timeout", 1, 3600, &timeout))
        return SH_ERR;
    sh_optval *h = sh_opt_get(a, "host"), *ds = sh_opt_get(a, "datasets");
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? n : 2;
    }
    return sh_serve(sh, h ? h->value.text : "127.0.0.1", (unsigned)port, (unsigned)threads, ds ? ds->value.text : NULL,
                    (size_t)limit, (unsigned)timeout);
}
