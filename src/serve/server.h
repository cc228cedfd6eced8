/*
 * The HTTP server's internals, shared by its files: dataset handles (datasets.c),
 * replies and errors (reply.c), the engine endpoints (engine.c), the OpenAI-compatible
 * endpoints (openai.c) and the libmicrohttpd glue with the routing (http.c) and its compute
 * workers (workers.c). A request is answered by: body → the library's JSON codec (fields.h:
 * ig_json_read, ig_fields_from_json) → typed operation → the operation's JSON writer. No
 * command line is built and no output is parsed; the server never opens a path a request
 * names.
 */
#ifndef SRV_SERVER_H
#define SRV_SERVER_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "infinigram/infinigram.h"
#include "infinigram/fields.h"
#include "clock.h"

/** How `serve` was started (the shell's options). */

/** Whether a cancel flag (may be NULL) is up; it is raised from another thread. */
static inline int srv_flag_up(const volatile int *f) { return f && __atomic_load_n(f, __ATOMIC_RELAXED); }

typedef struct srv_config {
    ig_catalog *cat;          ///< the open catalog (borrowed; used under the server's lock)
    const char *host;
    unsigned port, threads, timeout;
    unsigned deadline;        ///< seconds a request may be answered for before it is cancelled
    const char *datasets;     ///< "a,b": serve only these, or NULL for every built dataset
    size_t body_limit;
    int fake_clock;           ///< elapsed_ms 0, fixed ids (tests)
    FILE *log;                ///< where start/stop messages go
    /** The session's settings as key, value pairs (NULL-terminated): a setting named like
     *  an operation's field is that field's default, as in the shell. */
    const char *const *settings;
    /** A corpus answered elsewhere (infinigram-mpi: its parts on the other ranks), or NULL.
     *  When set, an engine request is answered by runner(runner_user, op, dataset, opts,
     *  &members, &err) instead of op->run and op->json: 0 with *members (malloc'd, the
     *  server's) or the error. It may take the options' allocations (then it zeroes them).
     *  The completion endpoints, which generate from the index in place, are refused. */
    int (*runner)(void *user, const ig_op *op, const char *dataset, void *opts, char **members, ig_error *err);
    void *runner_user;
    /** With a runner: what /v1/datasets lists of dataset `name` when its corpus is spread over
     *  parts (called under the server's lock): the whole corpus's bytes, documents and shards,
     *  and its number of parts. 1 when they are set, 0 to list the catalog's entry as it is. */
    int (*whole)(void *user, const char *name, uint64_t *bytes, uint64_t *documents, uint64_t *shards,
                 uint64_t *parts);
} srv_config;

/* ---- datasets.c: indexes shared by all threads, reopened when the catalog changes ---- */
typedef struct srv_ds {
    char *name;
    char *path;               ///< the index key it was opened at (ig_dataset.index_key)
    ig_index *idx;
    int tokens;               ///< a token index: its files are its user's, checked before each use
    int refs;                 ///< requests using it
    int retired;              ///< replaced: close when refs reaches 0
    char *why;                ///< on the unloadable list: why its index did not open (idx NULL)
    int code;                 ///< on the unloadable list: the error's code (IG_E*)
    struct srv_ds *next;
} srv_ds;

typedef struct server {
    const srv_config *cfg;
    pthread_mutex_t mu;
    srv_ds *live, *retired;
    srv_ds *unloadable;       ///< built datasets whose index did not open at the last refresh, with why
    int64_t data_version;
    double retry_at;          ///< a dataset could not be opened at the last refresh: try again from then (0: none)
    char **allow;             ///< --datasets filter (NULL: all built datasets)
    size_t nallow;
    /* Compute (http.c, workers.c): answers are computed on cfg->threads worker threads of
     * their own, oldest request first, while the request's connection is suspended; the
     * cfg->threads + 1 libmicrohttpd threads only move bytes (and compute streams). */
    struct srv_workers *workers;
    pthread_mutex_t stop_mu;  ///< orders `stopping` against handing a request to the workers
    int stopping;             ///< the daemon is being stopped: requests are answered 503
    int inflight;             ///< requests given to the workers and not yet completed
    int loopback;             ///< listening on a loopback address (127.0.0.0/8): Host must name one
} server;

/** Loads the datasets served (cfg->datasets names them, each checked against the catalog). 0;
 *  -1 out of memory; -2 a name that is no dataset (said on cfg->log). srv_datasets_free after. */
int srv_datasets_init(server *s, const srv_config *cfg);
void srv_datasets_free(server *s);
/** Re-reads the catalog if it changed (force: always). Call with s->mu held. */
void srv_refresh(server *s, int force);
int srv_allowed(const server *s, const char *name);
/** The named dataset (NULL name: the only one served), referenced; NULL if none (why's code
 *  0; IG_ENOTFOUND when no name was given and no dataset is served), or if it is a built dataset whose index did not open (a composition whose members no
 *  longer fit) or an attached index whose files changed since it was opened (why says so, with
 *  its code). why is the caller's, and set only when NULL is returned. */
srv_ds *srv_acquire(server *s, const char *name, ig_error *why);
/** The entry of the datasets whose index did not open at the last refresh named `name`, or
 *  NULL. Call with s->mu held. */
const srv_ds *srv_unloadable(const server *s, const char *name);
/** Whether an index's failure to open may pass (memory, I/O such as too many open files, a lock). */
static inline int srv_passing(int code) { return code == IG_ENOMEM || code == IG_EIO || code == IG_EBUSY; }
void srv_release(server *s, srv_ds *d);

/* ---- reply.c ---- */
typedef struct reply {
    unsigned status;
    char *body;               ///< malloc'd JSON text
    int no_retry;             ///< a 503 that asking again would only repeat (a deadline): says x-should-retry: false
} reply;

/** {"error": {"message", "type", "code"}}: the one error shape of every status. */
reply srv_error(unsigned status, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** The same from a library error; {field} names in its message are shown as "field". */
reply srv_error_ig(const ig_error *e);
/** 1, with *r the 400 naming `field`, when the dataset name p[0, n) of a request holds a NUL
 *  byte (no name does, and the string cut there could name another dataset); else 0. */
int srv_name_bad(const char *field, const char *p, size_t n, reply *r);
/** The answer for a dataset srv_acquire did not give, by its why: 409 when the dataset cannot be
 *  used as it is, 503 (to retry) when its index failed to open for a passing reason (memory,
 *  open files, a lock), 404 when it is unknown or unbuilt, 400 when none was named and several
 *  are served. `field` names where the name came from ("dataset", "model"). */
reply srv_unavailable(const char *name, const char *field, const ig_error *why);
/** HTTP status of a library error code. */
unsigned srv_status_of(int code);
/** 503 for a request its cancel flag stopped (the deadline passed or the client left), or
 *  one the server's stop caught. */
reply srv_cancelled(const server *s);
/** An error object (not text), for batches. */
json_t *srv_error_json(unsigned status, const char *code, const char *msg);
/** 200 with the given body text (taken). */
reply srv_ok(char *body);
/** The elapsed_ms value, formatted as the shell formats it. */
void srv_format_ms(double seconds, int fake, char *buf, size_t n);

/* ---- engine.c / openai.c ---- */
/** The rule the shell follows for scripts and the server alike: a saved setting named like a
 *  field (max-context and max_context alike) is that field's default, "none" leaving the
 *  operation's own (ig_field_setting). Applied to opts after the table's defaults, before the
 *  request's members. */
void srv_apply_settings(const srv_config *cfg, const ig_field *fields, void *opts);
/** An engine endpoint (/v1/count, …): one request or {"queries": [...]}. `cancel` (may be
 *  NULL) stops the operation when raised: 503 naming the deadline. */
reply srv_engine(server *s, const ig_op *op, json_t *body, const volatile int *cancel);
/** /v1/completions and /v1/chat/completions without streaming; `cancel` as for srv_engine. */
reply srv_completions(server *s, json_t *body, int chat, const volatile int *cancel);
/** The streaming variant: queues a server-sent-event response on the connection; `cancel`
 *  (may be NULL) ends the stream with an error event when raised. */
struct MHD_Connection;
int srv_completions_stream(server *s, struct MHD_Connection *c, json_t *body, int chat, const volatile int *cancel,
                           reply *err);

/** The fields of /v1/completions and of /v1/chat/completions, and the OpenAI parameters they
 *  accept and ignore (NULL-terminated), for the references. */
extern const ig_field srv_completion_fields[];
extern const ig_field srv_chat_fields[];
extern const char *const srv_openai_ignored[];

/* ---- http.c ---- */
struct srv_job;
/** Gives `job` to the compute threads, connection c suspended until the job resumes it (the
 *  job must: MHD_resume_connection as its last act). Call from libmicrohttpd's callbacks for
 *  c. 0; -1 when the server is stopping (nothing was suspended or queued). */
int srv_hand_over(server *s, struct MHD_Connection *c, struct srv_job *job);
/** A running server: its datasets, the request watchdog and libmicrohttpd's daemon. */
typedef struct srv_daemon srv_daemon;
/** Starts one on cfg->host:cfg->port, or with `listening` 0 on no socket at all: connections
 *  are then handed over with srv_add_connection (the fuzz target drives the whole server
 *  so, through socket pairs). NULL after printing why to cfg->log. */
srv_daemon *srv_start(const srv_config *cfg, int listening);
/** Serves the connected socket `fd` (taken, even on failure). 0, or -1. */
int srv_add_connection(srv_daemon *sd, int fd);
/** Stops the daemon, closing its connections, and frees everything (NULL: nothing). */
void srv_stop(srv_daemon *sd);
/** Serves until SIGINT or SIGTERM. 0, or -1 after printing why to cfg->log. */
int srv_run(const srv_config *cfg);

#endif
