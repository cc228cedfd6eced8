/*
 * Suffix sorting through libdivsufsort. The 32-bit and 64-bit APIs live in separate
 * files because their headers declare the same helper types. A sort cannot be
 * interrupted, so large shards are sorted by a child process that writes its own files
 * and reports through a shared page: cancelling kills the child at once, and several children sort several shards
 * at the same time (`build --jobs N`) while the parent reads the next documents.
 */
#ifndef IG_SORT_H
#define IG_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "infinigram/error.h"
#include "format.h"

/** Sorts t[0..n) into sa (n int32 entries) with the 32-bit API (n < 2^31). */
int igi_sort32_into(const uint8_t *t, uint64_t n, int32_t *sa, ig_error *err);
/** The same with the 64-bit API (n int64 entries). */
int igi_sort64_into(const uint8_t *t, uint64_t n, int64_t *sa, ig_error *err);

/** Shards smaller than this sort in-process when building with one job (quick enough
 *  that cancelling can wait). */
#define IG_SORT_FORK_MIN (8ull << 20)

/** What the sorter reports back (shared memory when it is a child process). */
typedef struct ig_sort_out {
    ig_error err;            ///< why sorting or `after` failed
    ig_file_meta sa, sample; ///< the files `after` wrote
    int sorted;              ///< set (atomically) once the sort is over (keys and writing remain)
} ig_sort_out;

struct ig_sort_job;
/** Runs in the sorter once the suffix array (and samples) are complete: writes them out, so that
 *  the parent can start the next sort at once and the write overlaps other sorts. */
typedef int (*ig_sort_after_fn)(const struct ig_sort_job *job, void *ctx, ig_sort_out *out);

/** A suffix sort in progress (or finished). */
typedef struct ig_sort_job {
    pid_t pid;             ///< child, or 0 when sorted in-process
    int pidfd;             ///< readable when the child exits, or -1
    /* the sorter's own arrays, valid only inside `after` (the parent never sees them) */
    void *sa;              ///< the suffix array (int64 entries when wide, else int32)
    size_t bytes;          ///< size of the mapping
    uint8_t *sample;       ///< sampled keys (format.h); NULL if none
    size_t sample_bytes;   ///< their size (set from the start: 0 when there are none)
    ig_sort_out *out;      ///< the sorter's report (valid once done)
    uint64_t n;
    int wide;
    int done;              ///< finished successfully
} ig_sort_job;

/**
 * Starts sorting t[0..n). With fork = 1 a child process sorts (it copies the text: the
 * caller may reuse its buffer at once); with fork = 0, or if fork
 * fails, the sort runs now and the job is done on return. With stride > 0 the sorter
 * also fills the sampled keys of every stride-th row (it still has the text then).
 */
int igi_sort_start(const uint8_t *t, uint64_t n, int wide, int fork_child, uint32_t stride, ig_sort_after_fn after,
                  void *ctx, ig_sort_job *job, ig_error *err);

/** 1 once the job's sorting is over (its sorter may still be writing: a processor is free). */
int igi_sort_sorted(const ig_sort_job *job);

/** Waits up to timeout_ms for the job; 1 when done, 0 still running, < 0 error. */
int igi_sort_wait(ig_sort_job *job, int timeout_ms, ig_error *err);

/** Kills a running sort (if any) and releases the job's memory. */
void igi_sort_release(ig_sort_job *job);

#endif
