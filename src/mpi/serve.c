/* serve: see serve.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "server.h"

#include "infinigram/infinigram.h"
#include "serve.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"
#include "queries.h"

/* ---------------------------------------------------------------- serve */

/* The HTTP server's threads take turns on the communicator (MPI_THREAD_SERIALIZED). */
static pthread_mutex_t serve_mu = PTHREAD_MUTEX_INITIALIZER;

/* srv_config.runner: an engine request answered over the parts by the command's own code
 * (its options as the server decoded them), the dataset loaded first when it is not the
 * current one. */
static int serve_runner(void *user, const ig_op *op, const char *dataset, void *opts, char **members, ig_error *err)
{
    (void)user;
    const query_cmd *q = query_find(op, NULL);
    pthread_mutex_lock(&serve_mu);
    captured.on = 1;
    captured.failed = 0;
    captured.members = NULL;
    double t0 = now();
    if (!g.loaded || !g.current || strcmp(g.current, dataset))
        cmd_load(dataset, 1, t0);
    if (!captured.failed && !q)
        fail(op->name, IG_EUSAGE, t0, "%s is not distributed yet: infinigram-mpi serves count, predict, prob, backoff, "
             "generate, doc, spans, mix, eval, explain and search", op->name);
    else if (!captured.failed) {
        preset = opts;
        query_answer(q, NULL, t0);
        preset = NULL;
    }
    int rc = 0;
    if (captured.failed) {
        *err = captured.err;
        rc = captured.err.code ? captured.err.code : IG_EINTERNAL;
        free(captured.members);
    } else if (!captured.members) {
        rc = ig_error_set(err, IG_EINTERNAL, "%s gave no answer", op->name);
    } else {
        *members = captured.members;
    }
    captured.members = NULL;
    captured.on = 0;
    pthread_mutex_unlock(&serve_mu);
    return rc;
}

/* srv_config.whole: a dataset built over the ranks, from rank 0's record of the build (the
 * parts' sizes as each rank reported them): no round trip. */
static int serve_whole(void *user, const char *name, uint64_t *bytes, uint64_t *documents, uint64_t *shards,
                       uint64_t *parts)
{
    (void)user;
    pthread_mutex_lock(&serve_mu);
    int rc = parts_whole(name, bytes, documents, shards, parts);
    pthread_mutex_unlock(&serve_mu);
    return rc;
}

int cmd_serve(const words *ws, double t0)
{
    const char *cmd = "serve", *host = opt_value(ws, "--host"), *port = opt_value(ws, "--port"),
               *threads = opt_value(ws, "--threads");
    char *end = NULL;
    long p = port ? strtol(port, &end, 10) : 8080, th = threads ? strtol(threads, NULL, 10) : 4;
    if (port && (*end || p < 0 || p > 65535))
        return fail(cmd, IG_EUSAGE, t0, "--port takes 0 to 65535");
    if (th < 1 || th > 256)
        return fail(cmd, IG_EUSAGE, t0, "--threads takes 1 to 256");
    if (!g.cat)
        return fail(cmd, g.cat_err.code, t0, "rank 0 (host %s): home %s: %s", host_of(0), g.home, g.cat_err.msg);
    static const char *const no_settings[] = {NULL};
    srv_config cfg = {.cat = g.cat, .host = host ? host : "127.0.0.1", .port = (unsigned)p, .threads = (unsigned)th,
                      .timeout = 30, .deadline = 300, .body_limit = 1 << 20, .fake_clock = g.fake_clock,
                      .log = stderr, .settings = no_settings, .runner = serve_runner, .whole = serve_whole};
    /* SIGINT stops it: blocked in the server's threads (they inherit the mask), awaited here */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    srv_daemon *sd = srv_start(&cfg, 1);
    g.serving = sd != NULL;
    if (!sd) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return fail(cmd, IG_EIO, t0, "the server could not start on %s:%ld", cfg.host, p);
    }
    fprintf(stderr, "infinigram-mpi: serving on http://%s:%ld/v1 over %d ranks (Ctrl-C stops)\n", cfg.host, p, g.size);
    fflush(stderr);
    int sig;
    sigwait(&set, &sig);
    srv_stop(sd);
    g.serving = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    emit(cmd, "\"stopped\":true", t0);
    return 0;
}
