/*
 * Suffix sorting through libdivsufsort. The 32-bit and 64-bit APIs live in separate
 * files because their headers declare the same helper types. A sort cannot be
 * interrupted, so the build runs it in a child process that writes into shared memory:
 * cancelling kills the child at once instead of waiting minutes for a large shard.
 */
#ifndef IG_SORT_H
#define IG_SORT_H

#include <stddef.h>
#include <stdint.h>
#include "infinigram/error.h"

/** Sorts t[0..n) into sa (n int32 entries) with the 32-bit API (n < 2^31). */
int ig_sort32_into(const uint8_t *t, uint64_t n, int32_t *sa, ig_error *err);
/** The same with the 64-bit API (n int64 entries). */
int ig_sort64_into(const uint8_t *t, uint64_t n, int64_t *sa, ig_error *err);

/** Shards smaller than this sort in-process (quick enough that cancelling can wait). */
#define IG_SORT_FORK_MIN (8ull << 20)

/**
 * Suffix array of t[0..n) (int64 entries when wide, else int32) in a fresh shared
 * mapping (*sa, *bytes: release with munmap), computed by a child process. `tick` is
 * called about every 50 ms; a non-zero return kills the sort and gives IG_ECANCELLED.
 */
int ig_sort_cancellable(const uint8_t *t, uint64_t n, int wide, int (*tick)(void *), void *user,
                        void **sa, size_t *bytes, ig_error *err);

#endif
