/* The server's compute workers (see workers.h): a FIFO under one mutex and condition. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "workers.h"

struct srv_workers {
    pthread_mutex_t mu;
    pthread_cond_t work;
    srv_job *head, *tail;
    int stopping;
    unsigned n;          ///< threads started
    pthread_t thread[];
};

static void *worker_main(void *arg)
{
    srv_workers *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->work, &w->mu);
        srv_job *j = w->head;
        if (!j) /* stopping, and nothing is left to run */
            break;
        if (!(w->head = j->next))
            w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        j->run(j);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

srv_workers *srv_workers_start(unsigned n)
{
    if (!n)
        n = 1;
    srv_workers *w = calloc(1, sizeof *w + n * sizeof(pthread_t));
    if (!w)
        return NULL;
    int rc = pthread_mutex_init(&w->mu, NULL);
    if (rc) {
        free(w);
        errno = rc;
        return NULL;
    }
    if ((rc = pthread_cond_init(&w->work, NULL))) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        errno = rc;
        return NULL;
    }
    for (; w->n < n; w->n++)
        if ((rc = pthread_create(&w->thread[w->n], NULL, worker_main, w))) {
            srv_workers_free(w);
            errno = rc;
            return NULL;
        }
    return w;
}

int srv_workers_submit(srv_workers *w, srv_job *job)
{
    pthread_mutex_lock(&w->mu);
    int refused = w->stopping;
    if (!refused) {
        job->next = NULL;
        if (w->tail)
            w->tail->next = job;
        else
            w->head = job;
        w->tail = job;
        pthread_cond_signal(&w->work);
    }
    pthread_mutex_unlock(&w->mu);
    return refused ? -1 : 0;
}

srv_job *srv_workers_sweep(srv_workers *w)
{
    srv_job *out = NULL, **tail = &out;
    pthread_mutex_lock(&w->mu);
    srv_job *prev = NULL;
    for (srv_job **x = &w->head; *x;) {
        srv_job *j = *x;
        if (!j->dead || !j->dead(j)) {
            prev = j;
            x = &j->next;
            continue;
        }
        *x = j->next;
        if (w->tail == j)
            w->tail = prev;
        j->next = NULL;
        *tail = j;
        tail = &j->next;
    }
    pthread_mutex_unlock(&w->mu);
    return out;
}

void srv_threads_stop(pthread_mutex_t *mu, pthread_cond_t *cond, int *stopping, const pthread_t *t, unsigned n)
{
    pthread_mutex_lock(mu);
    *stopping = 1;
    pthread_cond_broadcast(cond);
    pthread_mutex_unlock(mu);
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

void srv_workers_stop(srv_workers *w)
{
    if (!w)
        return;
    srv_threads_stop(&w->mu, &w->work, &w->stopping, w->thread, w->n);
    w->n = 0;
}

void srv_workers_free(srv_workers *w)
{
    if (!w)
        return;
    srv_workers_stop(w);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
