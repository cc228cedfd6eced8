/*
 * Thread pool: one section at a time; tasks are claimed with an atomic counter so that
 * the caller and the workers share them dynamically.
 */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct ig_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t *threads;
    int nthreads;
    int stop;
    unsigned long generation;     ///< bumped for each section
    /* the section being run */
    void (*fn)(void *, size_t);
    void *ctx;
    size_t ntasks;
    atomic_size_t next;           ///< next task to claim
    int active;                   ///< workers still in the section
    pthread_mutex_t section;      ///< held by the caller for the whole section
};

static void work(ig_pool *p)
{
    size_t i;
    while ((i = atomic_fetch_add(&p->next, 1)) < p->ntasks)
        p->fn(p->ctx, i);
}

static void *worker(void *arg)
{
    ig_pool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        work(p);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

ig_pool *igi_pool_create(int workers)
{
    ig_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->section, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (workers > 0 && !(p->threads = calloc((size_t)workers, sizeof *p->threads))) {
        free(p);
        return NULL;
    }
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        p->nthreads++;
    }
    return p;
}

void igi_pool_run(ig_pool *p, size_t ntasks, void (*fn)(void *ctx, size_t task), void *ctx)
{
    if (!p || p->nthreads == 0 || ntasks < 2 || pthread_mutex_trylock(&p->section) != 0) {
        for (size_t i = 0; i < ntasks; i++)
            fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->ntasks = ntasks;
    atomic_store(&p->next, 0);
    p->active = p->nthreads;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    work(p);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->section);
}

void igi_pool_destroy(ig_pool **pp)
{
    if (!pp || !*pp)
        return;
    ig_pool *p = *pp;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->section);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p);
    *pp = NULL;
}
