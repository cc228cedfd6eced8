/*
 * Suffix sorting through libdivsufsort. The 32-bit and 64-bit APIs live in separate
 * files because their headers declare the same helper types. A sort cannot be
 * interrupted, so large shards are sorted by a child process that writes its own files
 * and reports through a shared page: cancelling kills the child at once, and several children sort several shards
 * at the same time (`build --jobs N`) while the parent reads the next documents. Small
 * shards are sorted by threads, which cost no fork and exit; a cancel waits for them.
 */
#ifndef IG_SORT_H
#define IG_SORT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "infinigram/build.h"
#include "infinigram/error.h"
#include "format.h"

/** Sorts t[0..n) into sa (n int32 entries) with the 32-bit API (n < 2^31). */
int igi_sort32_into(const uint8_t *t, uint64_t n, int32_t *sa, ig_error *err);
/** The same with the 64-bit API (n int64 entries). */
int igi_sort64_into(const uint8_t *t, uint64_t n, int64_t *sa, ig_error *err);
/** What rc, the answer of `lib` (either API) sorting an n-byte shard, means: 0 or the error. */
int igi_sort_result(int rc, const char *lib, uint64_t n, ig_error *err);

/** Shards smaller than this sort in a thread rather than a child process (quick enough
 *  that cancelling can wait). */
#define IG_SORT_FORK_MIN (8ull << 20)

/** Where a sort runs. */
typedef enum ig_sorter {
    IG_SORTER_HERE,   ///< in the calling thread, before igi_sort_start returns
    IG_SORTER_THREAD, ///< in a thread of this process
    IG_SORTER_CHILD,  ///< in a child process (killed on release)
} ig_sorter;

/** What the sorter reports back (shared memory when it is a child process). */
typedef struct ig_sort_out {
    ig_error err;            ///< why sorting or `after` failed
    ig_file_meta sa, sample, lcp; ///< the files `after` wrote
    int sorted;              ///< set (atomically) once the sort is over (keys and writing remain)
} ig_sort_out;

struct ig_sort_job;
/** Runs in the sorter once the suffix array (and samples) are complete: writes them out, so that
 *  the parent can start the next sort at once and the write overlaps other sorts. */
typedef int (*ig_sort_after_fn)(const struct ig_sort_job *job, void *ctx, ig_sort_out *out);

/** A suffix sort in progress (or finished). */
typedef struct ig_sort_job {
    pid_t pid;             ///< child, or 0
    pthread_t thread;      ///< the sorting thread, when `sorter` is set
    struct sorter *sorter; ///< what the sorting thread owns, or NULL
    int waitfd;            ///< readable when the sorter ends (the child's pidfd, the thread's eventfd), or -1
    /* the sorter's own arrays, valid only inside `after` (the parent never sees them) */
    void *sa;              ///< the suffix array (int64 entries when wide, else int32)
    size_t bytes;          ///< size of the mapping
    uint8_t *sample;       ///< sampled keys (format.h); NULL if none
    size_t sample_bytes;   ///< their size (set from the start: 0 when there are none)
    uint8_t *lcp;          ///< the lcp file (format.h, lcp.h); NULL if none
    size_t lcp_bytes;      ///< its size (set from the start: 0 when there is none)
    ig_sort_out *out;      ///< the sorter's report (valid once done)
    uint64_t n;
    int wide;
    int done;              ///< finished successfully
    ig_build_cache *cache; ///< where a thread's arrays come from and go back to (borrowed), or NULL
} ig_sort_job;

/**
 * Starts sorting t[0..n) where `where` says. A child or a thread sorts a copy of the text
 * (the caller may reuse its buffer at once) and gets `after` with its own copy of the
 * ctx_size bytes at ctx; in the calling thread, or if neither can start, the sort runs now
 * and the job is done on return. A sort in this process takes its arrays from `cache`
 * (borrowed; NULL: fresh memory, unmapped after) and gives them back. With stride > 0 the sorter also fills the sampled keys of
 * every stride-th row (it still has the text then), and with lcp as well the lcp file.
 */
int igi_sort_start(const uint8_t *t, uint64_t n, int wide, ig_sorter where, uint32_t stride, int lcp,
                  ig_sort_after_fn after, const void *ctx, size_t ctx_size, ig_build_cache *cache, ig_sort_job *job,
                  ig_error *err);

/** 1 once the job's sorting is over (its sorter may still be writing: a processor is free). */
int igi_sort_sorted(const ig_sort_job *job);

/** Waits up to timeout_ms for the job; 1 when done, 0 still running, < 0 error. */
int igi_sort_wait(ig_sort_job *job, int timeout_ms, ig_error *err);

/** Kills a running child (a thread is waited for) and releases the job's memory. */
void igi_sort_release(ig_sort_job *job);

#endif
