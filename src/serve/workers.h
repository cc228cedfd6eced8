/*
 * The server's compute workers: a fixed number of threads that run jobs in the order they
 * were submitted. libmicrohttpd ties each connection to the pool thread that accepted it, so
 * a request computed on that thread holds every other connection of the thread (a waiting
 * request, a keep-alive client's next one) behind it. The glue (http.c) instead suspends the
 * connection, submits a job here, and the job resumes the connection with its answer: its
 * threads only move bytes, and at most `n` answers are computed at once, oldest first,
 * whichever thread accepted them. Knows nothing of HTTP.
 */
#ifndef IG_SERVE_WORKERS_H
#define IG_SERVE_WORKERS_H

#include <pthread.h>

/** A unit of work. The submitter owns it; run() is called once on a worker thread, and the
 *  pool does not touch the job after run() returns (run may free it or hand it on). */
typedef struct srv_job {
    void (*run)(struct srv_job *job);
    /** Whether the job may be swept out of the queue (srv_workers_sweep asks it, under the
     *  pool's lock); NULL: never. */
    int (*dead)(struct srv_job *job);
    struct srv_job *next; ///< the pool's queue link
} srv_job;

typedef struct srv_workers srv_workers;

/** Starts n (≥ 1) worker threads. NULL with errno set when a thread or memory is lacking. */
srv_workers *srv_workers_start(unsigned n);
/** Queues job behind those submitted before it. 0; -1 once srv_workers_stop has begun (the
 *  job is not queued and stays the caller's). */
int srv_workers_submit(srv_workers *w, srv_job *job);
/** Takes out of the queue every job whose dead(job) is true, in order, and returns them
 *  linked through `next` (NULL: none): the caller runs or drops them. For jobs whose
 *  requester has gone: they need not wait behind running ones to be answered. */
srv_job *srv_workers_sweep(srv_workers *w);
/** Refuses further jobs, lets the workers run every job already queued and joins them. The
 *  pool stays valid (empty, refusing) until srv_workers_free. Jobs that must end quickly at a
 *  stop check their own flag. */
void srv_workers_stop(srv_workers *w);
/** Sets *stopping under mu, wakes every thread waiting on cond and joins the n threads t: how
 *  each of the server's threads (the compute workers, the watchdog) is told to end. */
void srv_threads_stop(pthread_mutex_t *mu, pthread_cond_t *cond, int *stopping, const pthread_t *t, unsigned n);
/** Frees a stopped pool (NULL: nothing). */
void srv_workers_free(srv_workers *w);

#endif
