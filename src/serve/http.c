/*
 * The libmicrohttpd glue: routing, request bodies within --body-limit, the connection
 * watchdog (watch.c) for slow clients, GET endpoints (health, datasets, models and the
 * HTTP reference generated from the field tables), the explorer page's embedded files
 * (assets.c), and the start and stop of the daemon. Every answer but the page's files is
 * JSON, errors included, and every answer carries the security headers. The exceptions are
 * libmicrohttpd's answers to requests it cannot parse (a malformed request line, header,
 * Content-Length or chunk, an unsupported HTTP version, a head over CONNECTION_MEMORY):
 * it sends its own small HTML pages without calling us, and offers no hook to replace them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assets.h"
#include "server.h"
#include "watch.h"
#include "workers.h"

/* Longest URL and header block answered; longer ones get a JSON 414 or 431 (libmicrohttpd's
 * own pages for even larger ones are HTML, so its buffer is made larger than these). */
#define MAX_URL 8192
#define MAX_HEADERS 32768
#define CONNECTION_MEMORY (256 * 1024)
/* Connections taken at once; the watchdog frees places when SW_CROWDED of them are held. */
#define CONNECTION_LIMIT 1024u
/* Seconds a stop waits for the answers of requests it cut short to reach their clients. */
#define STOP_GRACE 2.0

static reply dumps(json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s ? srv_ok(s) : srv_error(500, "internal", "out of memory");
}

/* The value a setting of the server gives field f by default (a setting named like it), or NULL. */
static const char *setting_of(const srv_config *cfg, const ig_field *f)
{
    for (const char *const *kv = cfg->settings; kv && kv[0]; kv += 2)
        if (ig_field_find(f, kv[0], strlen(kv[0])) == f && strcmp(kv[1], "none"))
            return kv[1];
    return NULL;
}

static json_t *field_json(const srv_config *cfg, const ig_field *f)
{
    json_t *x = json_pack("{s:s,s:s,s:s}", "name", f->name, "type", ig_field_type_name(f), "help", f->help);
    if (f->type == IG_FIELD_INT || f->type == IG_FIELD_UINT || f->type == IG_FIELD_DOUBLE || f->type == IG_FIELD_SIZE) {
        json_object_set_new(x, "min", json_real(f->min));
        json_object_set_new(x, "max", json_real(f->max));
    }
    const char *def = setting_of(cfg, f); /* the server's default, as the codec applies it */
    if (def || f->def)
        json_object_set_new(x, "default", json_string(def ? def : f->def));
    if (f->choices) {
        json_t *c = json_array();
        for (size_t i = 0; f->choices[i]; i++)
            json_array_append_new(c, json_string(f->choices[i]));
        json_object_set_new(x, "choices", c);
    }
    if (f->flags & IG_FIELD_REQUIRED)
        json_object_set_new(x, "required", json_true());
    return x;
}

/* GET /v1: every endpoint with its fields, from the same tables the codecs read (a field's
 * default as this server's settings make it). */
static reply reference(const srv_config *cfg)
{
    json_t *o = json_object(), *eps = json_array();
    for (const ig_op *const *op = ig_ops(); *op; op++) {
        json_t *fs = json_array();
        json_array_append_new(fs, json_pack("{s:s,s:s,s:s}", "name", "dataset", "type", "string", "help",
                                            "the dataset (optional when one is served)"));
        for (const ig_field *f = (*op)->fields; f->name; f++)
            if (!(f->flags & IG_FIELD_SHELL))
                json_array_append_new(fs, field_json(cfg, f));
        char path[64];
        snprintf(path, sizeof path, "/v1/%s", (*op)->name);
        json_array_append_new(eps, json_pack("{s:s,s:s,s:o}", "method", "POST", "path", path, "fields", fs));
    }
    const struct {
        const char *path, *body, *type, *help;
        const ig_field *fields;
    } openai[] = {
        {"/v1/completions", "prompt", "string|list", "the text to continue: a string or a list of 1 to 64 strings",
         srv_completion_fields},
        {"/v1/chat/completions", "messages", "list",
         "[{\"role\", \"content\"}]: joined as \"role: content\" lines followed by \"assistant: \"; a content is a "
         "string or a list of text parts",
         srv_chat_fields},
    };
    for (size_t i = 0; i < sizeof openai / sizeof openai[0]; i++) {
        json_t *fs = json_array();
        json_array_append_new(fs, json_pack("{s:s,s:s,s:s}", "name", openai[i].body, "type", openai[i].type, "help",
                                            openai[i].help));
        for (const ig_field *f = openai[i].fields; f->name; f++)
            json_array_append_new(fs, field_json(cfg, f));
        json_array_append_new(eps, json_pack("{s:s,s:s,s:o}", "method", "POST", "path", openai[i].path, "fields", fs));
    }
    json_object_set_new(o, "endpoints", eps);
    json_object_set_new(o, "explorer", json_pack("{s:s,s:s,s:s}", "method", "GET", "path", "/",
                                                 "help", "the web explorer (one page, served from the program)"));
    json_t *ign = json_array();
    for (size_t i = 0; srv_openai_ignored[i]; i++)
        json_array_append_new(ign, json_string(srv_openai_ignored[i]));
    json_object_set_new(o, "openai_ignored", ign);
    json_object_set_new(o, "errors", json_string("{\"error\": {\"message\", \"type\", \"code\"}} with status 400, 403, 404, "
                                                 "405, 408, 409, 413, 414, 431, 500, 501 or 503"));
    json_object_set_new(o, "binary_text", json_string("a text that is not valid UTF-8 or holds a NUL byte comes as "
                                                      "lowercase hex under its key with _hex appended (query_hex, "
                                                      "text_hex, bytes_hex)"));
    return dumps(o);
}

/* When the dataset's index in force was built, as ISO-8601 UTC: the catalog's record, else
 * (a catalog from before it kept one) the index directory's mtime. 0 when never built. */
static int built_time(const ig_dataset *d, char *buf, size_t n)
{
    time_t t = 0;
    struct stat st;
    if (d->built > 0)
        t = (time_t)d->built;
    else if (d->index_path && !stat(d->index_path, &st))
        t = st.st_mtime;
    struct tm tm;
    if (!t || !gmtime_r(&t, &tm))
        return 0;
    return strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0;
}

static reply get_endpoint(server *s, const char *url)
{
    if (!strcmp(url, "/v1"))
        return reference(s->cfg);
    pthread_mutex_lock(&s->mu);
    srv_refresh(s, 0);
    json_t *o = json_object();
    if (!strcmp(url, "/v1/health")) {
        int n = 0;
        for (srv_ds *d = s->live; d; d = d->next)
            n++;
        json_object_set_new(o, "status", json_string("ok"));
        json_object_set_new(o, "datasets", json_integer(n));
    } else if (!strcmp(url, "/v1/models")) {
        json_t *arr = json_array();
        json_object_set_new(o, "object", json_string("list"));
        for (srv_ds *d = s->live; d; d = d->next)
            if (!ig_index_token_width(d->idx)) /* completions refuse token datasets: not models here */
                json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:s}", "id", d->name, "object", "model", "created", 0,
                                                     "owned_by", "infinigram"));
        json_object_set_new(o, "data", arr);
    } else if (!strncmp(url, "/v1/models/", 11)) { /* one model, as OpenAI's retrieve answers it */
        const srv_ds *found = NULL;
        for (srv_ds *d = s->live; d && !found; d = d->next)
            if (!strcmp(d->name, url + 11) && !ig_index_token_width(d->idx))
                found = d;
        if (!found) {
            pthread_mutex_unlock(&s->mu);
            json_decref(o);
            return srv_error(404, "not_found", "no such model: %.200s", url + 11);
        }
        json_decref(o);
        o = json_pack("{s:s,s:s,s:i,s:s}", "id", found->name, "object", "model", "created", 0, "owned_by", "infinigram");
    } else { /* /v1/datasets: the catalog, as :dataset list prints it */
        ig_dataset *list = NULL;
        size_t n = 0;
        ig_error e;
        json_t *arr = json_array();
        if (!ig_catalog_list(s->cfg->cat, &list, &n, &e)) {
            for (size_t i = 0; i < n; i++) {
                if (!srv_allowed(s, list[i].name))
                    continue;
                uint64_t bytes = list[i].bytes, docs = list[i].documents, shards = list[i].shards, parts = 0;
                int whole = s->cfg->whole && s->cfg->whole(s->cfg->runner_user, list[i].name, &bytes, &docs, &shards,
                                                           &parts);
                const srv_ds *u = srv_unloadable(s, list[i].name); /* listed built, but it does not open */
                const char *status = u && !srv_passing(u->code) ? "broken" : list[i].status;
                json_t *x = json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", list[i].name, "status", status, "bytes",
                                      (json_int_t)bytes, "documents", (json_int_t)docs, "shards", (json_int_t)shards);
                if (x && u)
                    json_object_set_new(x, "error", json_string(u->why));
                if (x && whole) /* the corpus spread over the ranks of an MPI job */
                    json_object_set_new(x, "parts", json_integer((json_int_t)parts));
                char when[32];
                if (x && built_time(&list[i], when, sizeof when))
                    json_object_set_new(x, "built", json_string(when));
                if (x && list[i].ingest.casefold)
                    json_object_set_new(x, "casefold", json_true());
                if (x && (list[i].attach_dir || list[i].token_width)) /* a token dataset: queries take "ids" */
                    json_object_set_new(x, "token_width", json_integer(list[i].token_width));
                if (x && list[i].nmembers) { /* a composition: what it is made of */
                    json_t *m = json_array(), *t = json_array();
                    for (size_t k = 0; k < list[i].nmembers; k++)
                        json_array_append_new(m, json_string(list[i].members[k]));
                    for (size_t k = 0; k < list[i].nminus; k++)
                        json_array_append_new(t, json_string(list[i].minus[k]));
                    json_object_set_new(x, "members", m);
                    json_object_set_new(x, "minus", t);
                }
                json_array_append_new(arr, x);
            }
            ig_dataset_list_free(list, n);
        }
        json_object_set_new(o, "datasets", arr);
    }
    pthread_mutex_unlock(&s->mu);
    return dumps(o);
}

typedef struct conn {
    ig_buf body;
    int too_big;
    /* A request computed on a worker (workers.h) while its connection is suspended: the job
     * fills `answer` and resumes the connection, whose next call to handle() sends it. */
    srv_job job;
    server *s;
    json_t *pending;               ///< its parsed body, until the job has run
    const ig_op *op;               ///< the engine operation, or NULL for a completion
    int chat;                      ///< completion: /v1/chat/completions
    const volatile int *cancel;    ///< the watchdog's flag for the request
    struct MHD_Connection *mc;     ///< its connection, suspended while the job waits and runs
    int answered;                  ///< `answer` holds the reply, not sent yet
    int inflight;                  ///< counted in the server's inflight until the request completes
    reply answer;
} conn;

/* allow: the methods a 405 names in its Allow header (NULL otherwise). */
/* `close`: the connection is not reused after this answer (its framing cannot be trusted, or
 * a body is left unread). */
static enum MHD_Result send_reply_with(struct MHD_Connection *c, reply r, const char *allow, int close)
{
    struct MHD_Response *res = MHD_create_response_from_buffer(strlen(r.body), r.body, MHD_RESPMEM_MUST_FREE);
    if (!res) {
        free(r.body);
        return MHD_NO;
    }
    if (MHD_add_response_header(res, "Content-Type", "application/json") != MHD_YES || srv_security_headers(res) ||
        (allow && MHD_add_response_header(res, "Allow", allow) != MHD_YES) ||
        (close && MHD_add_response_header(res, "Connection", "close") != MHD_YES) ||
        (r.no_retry && MHD_add_response_header(res, "x-should-retry", "false") != MHD_YES)) {
        MHD_destroy_response(res);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_queue_response(c, r.status, res);
    MHD_destroy_response(res);
    return ok;
}

static enum MHD_Result send_reply_allow(struct MHD_Connection *c, reply r, const char *allow)
{
    return send_reply_with(c, r, allow, 0);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, reply r) { return send_reply_with(c, r, NULL, 0); }

/* One of the page's files: static bytes, never copied. */
static enum MHD_Result send_asset(struct MHD_Connection *c, const srv_asset *a)
{
    struct MHD_Response *res = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!res)
        return MHD_NO;
    enum MHD_Result ok = MHD_NO;
    if (MHD_add_response_header(res, "Content-Type", a->type) == MHD_YES &&
        MHD_add_response_header(res, "Cache-Control", "no-cache") == MHD_YES && !srv_security_headers(res))
        ok = MHD_queue_response(c, MHD_HTTP_OK, res);
    MHD_destroy_response(res);
    return ok;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    *(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/* The headers that say where a request ends and whom it is for. libmicrohttpd 0.9.75 takes
 * the first of repeated headers and waits for a body it cannot frame; RFC 9112 asks a server
 * to refuse such requests (§3.2, §6.1, §6.3), since a proxy in front may read them otherwise. */
typedef struct framing {
    int host, cl, te, cl_differ;
    const char *cl_first, *te_value;
} framing;

static enum MHD_Result note_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    framing *f = cls;
    value = value ? value : "";
    if (!strcasecmp(key, MHD_HTTP_HEADER_HOST)) {
        f->host++;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        if (f->cl++ == 0)
            f->cl_first = value;
        else if (strcmp(f->cl_first, value))
            f->cl_differ = 1;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->te++;
        f->te_value = value;
    }
    return MHD_YES;
}

/* A request whose framing is refused before its body is read: the answer, or status 0. */
static reply framing_refused(server *s, struct MHD_Connection *c)
{
    framing f = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, note_framing, &f);
    if (f.host > 1)
        return srv_error(400, "usage", "more than one Host header");
    if (f.cl > 1 && f.cl_differ)
        return srv_error(400, "usage", "Content-Length headers that disagree");
    if (f.te && f.cl)
        return srv_error(400, "usage", "both Transfer-Encoding and Content-Length");
    if (f.te > 1)
        return srv_error(400, "usage", "more than one Transfer-Encoding header");
    if (f.te && strcasecmp(f.te_value, "chunked"))
        return srv_error(501, "usage", "Transfer-Encoding \"%.100s\" is not supported (only chunked)", f.te_value);
    char *end;
    errno = 0;
    unsigned long long cl = f.cl ? strtoull(f.cl_first, &end, 10) : 0;
    /* a client that waits for 100 Continue learns at once that its body is too big; one that
     * sends it anyway has it read (and dropped) first, or it would meet a closed connection
     * while it writes and never read the answer */
    const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    if (expect && !strcasecmp(expect, "100-continue") && f.cl && f.cl_first[0] >= '0' && f.cl_first[0] <= '9' &&
        !*end && !errno && cl > s->cfg->body_limit)
        return srv_error(413, "invalid_input", "request body over the limit of %zu bytes", s->cfg->body_limit);
    return (reply){0, NULL, 0};
}

/* host[:port] without the port; a bracketed IPv6 address keeps its brackets */
static size_t host_part(const char *h)
{
    if (h[0] == '[') {
        const char *e = strchr(h, ']');
        return e ? (size_t)(e - h) + 1 : strlen(h);
    }
    return strcspn(h, ":");
}

static int loopback_name(const char *h, size_t n)
{
    static const char *const names[] = {"localhost", "[::1]", NULL};
    for (size_t i = 0; names[i]; i++)
        if (n == strlen(names[i]) && !strncasecmp(h, names[i], n))
            return 1;
    return n >= 4 && !strncmp(h, "127.", 4) && strspn(h, "0123456789.") == n;
}

/* A page in a browser on this machine can reach a server here in two ways: through a name
 * of its own that resolves to 127.0.0.1 (DNS rebinding: the request then names that host)
 * and by posting a form or text/plain body across sites (the request then carries the
 * page's Origin). A server bound to a loopback address answers only requests that name a
 * loopback host; any server answers a browser's request only from its own origin. NULL
 * when the request may go on; else why not. */
static const char *foreign_request(const server *s, struct MHD_Connection *c)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *bound = s->cfg->host ? s->cfg->host : "127.0.0.1";
    size_t hn = host ? host_part(host) : 0;
    if (host && s->loopback && !loopback_name(host, hn) && !(hn == strlen(bound) && !strncasecmp(host, bound, hn)))
        return "the Host header names no address of this machine's loopback (the server listens on a loopback address)";
    if (origin) {
        const char *o = strstr(origin, "://");
        if (!o || !host || strcasecmp(o + 3, host))
            return "a browser page of another origin cannot call this server";
    }
    return NULL;
}

/* Computes the request waiting in cn on a worker thread, then resumes its connection with
 * the answer. A request whose client left or whose deadline passed while it waited, or one
 * caught by the server's stop, is answered at once. Nothing of cn is touched after the
 * resume: the connection may then complete and free it. */
static void run_job(srv_job *j)
{
    conn *cn = (conn *)((char *)j - offsetof(conn, job));
    server *s = cn->s;
    reply r;
    if (srv_flag_up(cn->cancel) || __atomic_load_n(&s->stopping, __ATOMIC_RELAXED))
        r = srv_cancelled(s);
    else if (cn->op)
        r = srv_engine(s, cn->op, cn->pending, cn->cancel);
    else
        r = srv_completions(s, cn->pending, cn->chat, cn->cancel);
    json_decref(cn->pending);
    cn->pending = NULL;
    cn->answer = r;
    cn->answered = 1;
    MHD_resume_connection(cn->mc);
}

/* A request whose answer a stop must let out before it closes the connections (srv_stop);
 * counted until libmicrohttpd completes it. */
static void count_inflight(server *s, conn *cn)
{
    if (!cn->inflight) {
        cn->inflight = 1;
        __atomic_add_fetch(&s->inflight, 1, __ATOMIC_RELAXED);
    }
}

/* A waiting request that need not wait: its client left, its deadline passed, or the server
 * stops. */
static int job_dead(srv_job *j)
{
    const conn *cn = (const conn *)((const char *)j - offsetof(conn, job));
    return srv_flag_up(cn->cancel) || __atomic_load_n(&cn->s->stopping, __ATOMIC_RELAXED);
}

/* The watchdog raised a cancel flag: requests still waiting behind running ones are answered
 * now (each in a moment: they only say so), rather than holding their connections until a
 * compute thread is free. */
static void answer_dead(void *arg)
{
    server *s = arg;
    for (srv_job *j = srv_workers_sweep(s->workers), *next; j; j = next) {
        next = j->next;
        j->run(j);
    }
}

int srv_hand_over(server *s, struct MHD_Connection *c, srv_job *job)
{
    /* under stop_mu, srv_stop cannot stop the workers between the check and the submit: a
     * connection suspended here is always resumed by its job */
    pthread_mutex_lock(&s->stop_mu);
    int stopping = s->stopping;
    if (!stopping) {
        MHD_suspend_connection(c); /* before the submit: the job may resume it at once */
        if (srv_workers_submit(s->workers, job))
            job->run(job); /* cannot happen (see above); the job resumes the connection itself */
    }
    pthread_mutex_unlock(&s->stop_mu);
    return stopping ? -1 : 0;
}

/* Hands the request in cn (its parsed body, taken) to the workers, its connection suspended
 * until the answer is ready; answered at once when the server is stopping. */
static enum MHD_Result compute(server *s, struct MHD_Connection *c, conn *cn, json_t *body, const ig_op *op, int chat)
{
    cn->pending = body;
    cn->op = op;
    cn->chat = chat;
    cn->s = s;
    cn->mc = c;
    cn->job.run = run_job;
    cn->job.dead = job_dead;
    count_inflight(s, cn); /* the stop's 503 below too: it must get out before the daemon stops */
    if (!srv_hand_over(s, c, &cn->job))
        return MHD_YES;
    json_decref(body);
    cn->pending = NULL;
    return send_reply(c, srv_cancelled(s));
}

/* A whole request, its body read into cn->body: routed to its endpoint and answered, or handed
 * to the compute workers. */
static enum MHD_Result route(server *s, struct MHD_Connection *c, conn *cn, const char *url, const char *method,
                             const char *version)
{
    size_t hdr = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &hdr);
    if (strlen(url) > MAX_URL)
        return send_reply(c, srv_error(414, "usage", "URL over %d bytes", MAX_URL));
    if (hdr > MAX_HEADERS)
        return send_reply(c, srv_error(431, "usage", "request headers over %d bytes", MAX_HEADERS));
    /* HTTP/1.1 makes Host mandatory (RFC 9112 §3.2): without it the loopback rule has nothing to judge */
    if (!strcmp(version, MHD_HTTP_VERSION_1_1) && !MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
        return send_reply(c, srv_error(400, "usage", "an HTTP/1.1 request needs a Host header"));
    const char *foreign = foreign_request(s, c);
    if (foreign)
        return send_reply(c, srv_error(403, "forbidden", "%s", foreign));
    /* HEAD is a GET without the body (libmicrohttpd leaves the body out) */
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    int is_get_path = !strcmp(url, "/v1") || !strcmp(url, "/v1/health") || !strcmp(url, "/v1/datasets") ||
                      !strcmp(url, "/v1/models") || (!strncmp(url, "/v1/models/", 11) && url[11]);
    const ig_op *op = !strncmp(url, "/v1/", 4) ? ig_op_find(url + 4) : NULL;
    int completions = !strcmp(url, "/v1/completions"), chat = !strcmp(url, "/v1/chat/completions");
    int is_post_path = op || completions || chat;
    const srv_asset *asset = is_post_path ? NULL : srv_asset_find(url); /* engine paths are never pages */
    if (asset)
        return get ? send_asset(c, asset)
                   : send_reply_allow(c, srv_error(405, "usage", "%s takes GET", url), "GET, HEAD");
    if (!is_get_path && !is_post_path)
        return send_reply(c, srv_error(404, "not_found", "no such endpoint: %.200s", url));
    if ((is_get_path && !get) || (is_post_path && !post))
        return send_reply_allow(c, srv_error(405, "usage", "%s takes %s", url, is_get_path ? "GET" : "POST"),
                                is_get_path ? "GET, HEAD" : "POST");
    if (cn->too_big)
        return send_reply(c, srv_error(413, "invalid_input", "request body over the limit of %zu bytes",
                                       s->cfg->body_limit));
    if (is_get_path)
        return send_reply(c, get_endpoint(s, url));
    ig_error e;
    json_t *body = ig_json_read(cn->body.data ? (const char *)cn->body.data : "", cn->body.len, "the request body", &e);
    if (!body)
        return send_reply(c, srv_error_ig(&e));
    if (!json_is_object(body)) {
        json_decref(body);
        return send_reply(c, srv_error(400, "invalid_input", "the request body must be a JSON object"));
    }
    reply r;
    if ((completions || chat) && s->cfg->runner) {
        r = srv_error(400, "usage", "%s is not distributed yet: the completions generate from one index",
                      chat ? "/v1/chat/completions" : "/v1/completions");
    } else if ((completions || chat) && json_is_true(json_object_get(body, "stream"))) {
        /* a stream computes a character at a time as its client reads: it takes no compute
         * thread; it counts as in flight, so that a stop lets its last event out */
        int rc = srv_completions_stream(s, c, body, chat, cn->cancel, &r);
        json_decref(body);
        if (rc < 0)
            return send_reply(c, r);
        if (rc == 0)
            count_inflight(s, cn);
        return rc == 0 ? MHD_YES : MHD_NO;
    } else {
        return compute(s, c, cn, body, completions || chat ? NULL : op, chat);
    }
    json_decref(body);
    return send_reply(c, r);
}

/* libmicrohttpd's access handler: called once as a request's headers arrive, then for each
 * piece of its body, then once more when the body is in (and once more after a computed
 * answer resumes the connection). */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    server *s = cls;
    conn *cn = *con_cls;
    if (!cn) {
        if (!(cn = calloc(1, sizeof *cn)))
            return MHD_NO;
        *con_cls = cn;
        cn->cancel = sw_cancel_flag(c);
        /* refused before its body is read (an Expect: 100-continue gets no 100 then) */
        reply no = framing_refused(s, c);
        return no.status ? send_reply_with(c, no, NULL, 1) : MHD_YES;
    }
    if (cn->answered) { /* resumed: its job has answered */
        cn->answered = 0;
        return send_reply(c, cn->answer);
    }
    if (*upload_size) {
        if (cn->too_big || cn->body.len + *upload_size > s->cfg->body_limit)
            cn->too_big = 1;
        else if (ig_buf_append(&cn->body, upload, *upload_size))
            cn->too_big = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    if (sw_request_complete(c))
        return MHD_NO; /* too late: the watchdog has answered 408 */
    return route(s, c, cn, url, method, version);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)t;
    sw_request_done(c);
    conn *cn = *con_cls;
    if (cn && cn->answered) /* computed, but its client left before the answer could go out */
        free(cn->answer.body);
    if (cn && cn->inflight)
        __atomic_sub_fetch(&((server *)cls)->inflight, 1, __ATOMIC_RELAXED);
    if (cn) {
        ig_buf_free(&cn->body);
        json_decref(cn->pending);
        free(cn);
        *con_cls = NULL;
    }
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = (char)(ch | 0x20);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* libmicrohttpd's URL unescaping, except that "%00" stays as it is: decoded, it would end the
 * path as C reads it, and "/v1/health%00.html" would be answered as "/v1/health". */
static size_t unescape_url(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    size_t r = 0, w = 0;
    while (s[r]) {
        int hi, lo;
        if (s[r] == '%' && (hi = hexval(s[r + 1])) >= 0 && (lo = hexval(s[r + 2])) >= 0 && (hi | lo)) {
            s[w++] = (char)(hi << 4 | lo);
            r += 3;
        } else {
            s[w++] = s[r++];
        }
    }
    s[w] = '\0';
    return w;
}

struct srv_daemon {
    server s;
    sw_watch *w;
    struct MHD_Daemon *d;
    int ndatasets; ///< served at the start, for the start message
};

/* --host as an IPv4 address: written as one, or a name (localhost, the machine's name) the
 * resolver maps to one. */
static int resolve_host(const char *host, struct in_addr *a)
{
    if (inet_pton(AF_INET, host, a) == 1)
        return 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) || !res)
        return -1;
    *a = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

srv_daemon *srv_start(const srv_config *cfg, int listening)
{
    srv_daemon *sd = calloc(1, sizeof *sd);
    int bad = sd ? srv_datasets_init(&sd->s, cfg) : -1;
    if (bad) {
        if (sd)
            srv_datasets_free(&sd->s);
        free(sd);
        if (bad == -1)
            fprintf(cfg->log, "error: out of memory\n");
        return NULL;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)cfg->port);
    if (listening && resolve_host(cfg->host, &addr.sin_addr)) {
        fprintf(cfg->log, "error: --host %s: neither an IPv4 address nor a name this machine resolves to one\n",
                cfg->host);
        srv_datasets_free(&sd->s);
        free(sd);
        return NULL;
    }
    /* a name given as --host counts by the address it resolves to: localhost, or a machine
     * name that Debian maps to 127.0.1.1, is a loopback address like 127.0.0.1 */
    sd->s.loopback = !listening || (ntohl(addr.sin_addr.s_addr) >> 24) == 127;
    pthread_mutex_init(&sd->s.stop_mu, NULL);
    for (srv_ds *x = sd->s.live; x; x = x->next) /* before the workers start: they may refresh the list */
        sd->ndatasets++;
    reply late = srv_error(408, "io", "no complete request within %u s", cfg->timeout),
          crowded = srv_error(408, "io", "no complete request within %d s: the server is crowded (%u connections "
                                         "or more), and idle ones are closed", SW_CROWDED_TIMEOUT,
                              SW_CROWDED(CONNECTION_LIMIT));
    sd->w = late.body && crowded.body ? sw_start(cfg->timeout, cfg->deadline, CONNECTION_LIMIT, late.body, crowded.body)
                                      : NULL;
    free(late.body);
    free(crowded.body);
    if (!sd->w) {
        fprintf(cfg->log, "error: cannot start the request watchdog: %s\n", strerror(errno));
        pthread_mutex_destroy(&sd->s.stop_mu);
        srv_datasets_free(&sd->s);
        free(sd);
        return NULL;
    }
    if (!(sd->s.workers = srv_workers_start(cfg->threads))) {
        fprintf(cfg->log, "error: cannot start %u compute threads: %s\n", cfg->threads, strerror(errno));
        sw_stop(sd->w);
        pthread_mutex_destroy(&sd->s.stop_mu);
        srv_datasets_free(&sd->s);
        free(sd);
        return NULL;
    }
    /* The watchdog enforces --timeout with a 408; libmicrohttpd's own inactivity timeout stays as a
     * backstop for answers the client does not read. Without a listening socket, connections come
     * from srv_add_connection, and the inter-thread channel wakes the workers for them. */
    /* The pool threads only move bytes (answers are computed on the workers), except for
     * streams, which compute as their client reads: one thread more than the workers keeps one
     * free for new connections while streams run. */
    sw_on_cancel(sd->w, answer_dead, &sd->s);
    /* Each connection holds a descriptor: the usual soft limit of 1024 would run out before
     * CONNECTION_LIMIT connections, the index files and the catalog besides. */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < CONNECTION_LIMIT + 256) {
        rl.rlim_cur = rl.rlim_max < CONNECTION_LIMIT + 256 ? rl.rlim_max : CONNECTION_LIMIT + 256;
        (void)setrlimit(RLIMIT_NOFILE, &rl); /* what is left is only a lower ceiling */
    }
    /* poll(), not epoll: with epoll, libmicrohttpd's MHD_quiesce_daemon (the stop's first step)
     * races the pool threads to take the listening socket out of their epoll sets, and the
     * loser aborts the process (an open defect of libmicrohttpd 0.9.75; seen here as a SIGABRT
     * at Ctrl-C under load). With poll() each thread leaves the socket out of its next poll,
     * woken by the inter-thread channel. A pool thread polls at most its share of the 1,024
     * connections. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    if (!listening)
        flags |= MHD_USE_NO_LISTEN_SOCKET;
    sd->d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, handle, &sd->s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, cfg->threads + 1, MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout + 2,
        MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, completed, &sd->s, MHD_OPTION_NOTIFY_CONNECTION, sw_notify_connection, sd->w,
        MHD_OPTION_URI_LOG_CALLBACK, sw_request_started, sd->w, MHD_OPTION_UNESCAPE_CALLBACK, unescape_url, NULL,
        MHD_OPTION_END);
    if (!sd->d) {
        if (listening)
            fprintf(cfg->log, "error: cannot listen on %s:%u: %s\n", cfg->host, cfg->port, strerror(errno));
        else
            fprintf(cfg->log, "error: cannot start the HTTP daemon: %s\n", strerror(errno));
        sw_stop(sd->w);
        srv_workers_free(sd->s.workers);
        pthread_mutex_destroy(&sd->s.stop_mu);
        srv_datasets_free(&sd->s);
        free(sd);
        return NULL;
    }
    return sd;
}

int srv_add_connection(srv_daemon *sd, int fd)
{
    /* libmicrohttpd records the peer's address; a socket pair has none, so loopback stands in. */
    struct sockaddr_in peer;
    memset(&peer, 0, sizeof peer);
    peer.sin_family = AF_INET;
    peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return MHD_add_connection(sd->d, fd, (struct sockaddr *)&peer, sizeof peer) == MHD_YES ? 0 : -1;
}

void srv_stop(srv_daemon *sd)
{
    if (!sd)
        return;
    server *s = &sd->s;
    /* No new connection; no request handed to the workers from now on (each is answered 503,
     * "the server is stopping", as are streams at their next character); every request
     * being computed is cancelled, so the workers soon run out of work: those still waiting
     * are answered at once. libmicrohttpd must not be stopped with a connection suspended,
     * and the answers must go out before it closes the connections: it is stopped when every
     * request given to the workers has completed, or after a grace for clients that do not
     * read. The listening socket stops listening at once (new clients are refused, not
     * accepted and then reset), but stays open until the daemon has stopped: each pool thread
     * leaves it out of its poll set in its own time. */
    MHD_socket listen_fd = MHD_quiesce_daemon(sd->d);
    if (listen_fd != MHD_INVALID_SOCKET)
        (void)shutdown(listen_fd, SHUT_RD); /* on Linux, a listening socket so shut stops listening */
    pthread_mutex_lock(&s->stop_mu);
    __atomic_store_n(&s->stopping, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->stop_mu);
    sw_cancel_all(sd->w);
    answer_dead(s);
    srv_workers_stop(s->workers);
    for (double until = srv_now() + STOP_GRACE; __atomic_load_n(&s->inflight, __ATOMIC_RELAXED) && srv_now() < until;)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    MHD_stop_daemon(sd->d);
    if (listen_fd != MHD_INVALID_SOCKET)
        close(listen_fd);
    sw_stop(sd->w);
    srv_workers_free(s->workers);
    pthread_mutex_destroy(&s->stop_mu);
    srv_datasets_free(s);
    free(sd);
}

int srv_run(const srv_config *cfg)
{
    /* SIGINT stops the server: block it in the pool's threads, wait for it here */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    srv_daemon *sd = srv_start(cfg, 1);
    if (!sd) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    int n = sd->ndatasets;
    unsigned port = cfg->port;
    const union MHD_DaemonInfo *bound = port ? NULL : MHD_get_daemon_info(sd->d, MHD_DAEMON_INFO_BIND_PORT);
    if (bound) /* --port 0: the port the system chose, the one a client needs */
        port = bound->port;
    fprintf(cfg->log, "serving %d dataset%s on http://%s:%u/v1, computing %u request%s at a time (Ctrl-C stops)\n", n,
            n == 1 ? "" : "s", cfg->host, port, cfg->threads, cfg->threads == 1 ? "" : "s");
    fflush(cfg->log);
    int sig;
    sigwait(&set, &sig);
    srv_stop(sd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    fprintf(cfg->log, "server stopped\n");
    return 0;
}
