/*
 * A small thread pool owned by an index handle: worker threads are created once (at
 * open) and run the tasks of one parallel section at a time, the calling thread working
 * alongside them. If a section is already running (another thread of the application
 * is using the pool), the caller simply runs its tasks itself: never a wait on another
 * query, never a thread created per query.
 */
#ifndef IG_POOL_H
#define IG_POOL_H

#include <stddef.h>

typedef struct ig_pool ig_pool;

/** Starts `workers` threads (0 is allowed: everything runs in the caller). NULL on failure. */
ig_pool *igi_pool_create(int workers);
/** Runs fn(ctx, i) for i in [0, ntasks) and returns when all are done. */
void igi_pool_run(ig_pool *p, size_t ntasks, void (*fn)(void *ctx, size_t task), void *ctx);
void igi_pool_destroy(ig_pool **p);

#endif
