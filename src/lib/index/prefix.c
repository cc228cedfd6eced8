/*
 * Two-byte prefix tables: the first suffix-array row of every two-byte key, from one
 * sequential pass over the text (suffixes sort by their first bytes, so the running sums of
 * the keys' counts are their first rows; no access to the suffix array). The build writes
 * one into shards of 8 MiB and more (the `prefix` file); smaller shards, whose index it
 * would weigh on, get one in memory on their first search instead, so that their searches
 * also start inside the pattern's two-byte interval rather than bisecting the whole array.
 */
#include "index_impl.h"

#include <stdatomic.h>
#include <stdlib.h>

void igi_prefix_fill(const uint8_t *t, uint64_t n, uint64_t *starts)
{
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++)
        starts[k] = 0;
    for (uint64_t i = 0; i + 1 < n; i++)
        starts[t[i] * 257u + t[i + 1] + 1]++;
    if (n)
        starts[t[n - 1] * 257u]++; /* the last suffix is one byte long */
    uint64_t sum = 0;
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++) {
        uint64_t v = starts[k];
        starts[k] = sum;
        sum += k < IG_PREFIX_KEYS ? v : 0;
    }
}

const uint64_t *igi_shard_mem_prefix(const ig_shard *s)
{
    const uint64_t *t = atomic_load_explicit(&s->mem_prefix, memory_order_acquire);
    if (t || s->prefix || s->rows != s->n || !s->n) /* a token shard indexes token starts only */
        return t;
    uint64_t *fresh = malloc((size_t)(IG_PREFIX_KEYS + 1) * sizeof *fresh);
    if (!fresh)
        return NULL; /* searches bisect the whole array, as before */
    igi_prefix_fill(s->text, s->n, fresh);
    const uint64_t *none = NULL;
    ig_shard *w = (ig_shard *)s; /* a cache of what the text says, not a change: made once */
    if (atomic_compare_exchange_strong_explicit(&w->mem_prefix, &none, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free(fresh); /* another thread made it first */
    return none;
}
