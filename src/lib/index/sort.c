/*
 * Sort jobs. A child process inherits the text copy-on-write, sorts it into memory of its
 * own, runs the caller's `after` step (writing the files) and exits, leaving its report in
 * a small shared page; the parent learns of the exit through a pidfd (no polling delay). A
 * child dies with its parent (an orphaned sort would keep the build's lock). A thread does
 * the same for shards small enough that a cancel may wait for their sort, without the fork
 * and exit, and tells of its end through an eventfd. If neither can start, the sort runs in
 * the calling thread, uncancellable.
 */
#include "sort.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "lcp.h"

int igi_sort_result(int rc, const char *lib, uint64_t n, ig_error *err)
{
    if (rc == -2) /* its only allocation failed */
        return ig_error_set(err, IG_ENOMEM, "out of memory sorting a %llu-byte shard", (unsigned long long)n);
    if (rc != 0)
        return ig_error_set(err, IG_EINTERNAL, "%s failed on a %llu-byte shard", lib, (unsigned long long)n);
    return 0;
}

/* Key i: the first 8 bytes of the suffix at row i * stride, big-endian, zero-padded. */
static void fill_sample(const uint8_t *t, uint64_t n, int wide, const void *sa, uint32_t stride, uint8_t *out)
{
    for (uint64_t r = 0; r < n; r += stride, out += 8) {
        uint64_t pos = wide ? (uint64_t)((const int64_t *)sa)[r] : (uint32_t)((const int32_t *)sa)[r];
        uint64_t k = n - pos < 8 ? n - pos : 8;
        memset(out, 0, 8);
        memcpy(out, t + pos, (size_t)k);
    }
}

static void *shared_map(size_t bytes, int shared)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A build cache keeps the arrays of the sorts that run in this process (threads) for the
 * next sort rather than unmapping them: memory the process never touched costs a page fault
 * a page when first written (a fresh 4.4 MB suffix array took 15-17 ms of faults on a virtual
 * machine, more than a quarter of sorting the 1.1 MB it indexes; the same memory written
 * again, 0.3 ms). At most `cap` bytes are kept, lazily freed (MADV_FREE): under memory
 * pressure the kernel takes them back and they are faulted in again. A child sorter never
 * uses them: its copies of the parent's mappings are the parent's pages, shared until
 * written. The cache is the caller's (ig_build_options.cache): without one, every sort maps
 * fresh memory and unmaps it. */
#define POOL_SLOTS 8
#define POOL_CAP (64u << 20)
#define POOL_GRAIN (2u << 20) ///< sizes are rounded up to this, so that near sizes share

struct pool_slot {
    void *p;
    size_t bytes; ///< of the mapping (a multiple of POOL_GRAIN)
    int lent;     ///< in use by a sort
};

struct ig_build_cache {
    struct pool_slot slot[POOL_SLOTS];
    size_t bytes; ///< of the mappings in slot[], lent or not
    size_t cap;
    pthread_mutex_t lock;
};

ig_build_cache *ig_build_cache_new(uint64_t cap)
{
    ig_build_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cap = cap == 0 ? POOL_CAP : cap > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)cap;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void ig_build_cache_free(ig_build_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < POOL_SLOTS; i++)
        if (c->slot[i].p)
            munmap(c->slot[i].p, c->slot[i].bytes);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* A mapping of at least `bytes` from the cache, or NULL when none is free and large enough. */
static void *pool_take(ig_build_cache *c, size_t bytes)
{
    struct pool_slot *best = NULL;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < POOL_SLOTS; i++)
        if (c->slot[i].p && !c->slot[i].lent && c->slot[i].bytes >= bytes && (!best || c->slot[i].bytes < best->bytes))
            best = &c->slot[i];
    if (best)
        best->lent = 1;
    pthread_mutex_unlock(&c->lock);
    return best ? best->p : NULL;
}

/* Records a new mapping of `bytes` (a multiple of POOL_GRAIN) as lent; 0 when the cache has
 * no room for it. */
static int pool_add(ig_build_cache *c, void *p, size_t bytes)
{
    int added = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < POOL_SLOTS && c->bytes + bytes <= c->cap && !added; i++)
        if (!c->slot[i].p) {
            c->slot[i] = (struct pool_slot){p, bytes, 1};
            c->bytes += bytes;
            added = 1;
        }
    pthread_mutex_unlock(&c->lock);
    return added;
}

/* Gives p back to the cache; 0 when it is not the cache's (the caller unmaps it). */
static int pool_give(ig_build_cache *c, void *p)
{
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < POOL_SLOTS && !found; i++)
        if (c->slot[i].p == p && c->slot[i].lent) {
            /* only advice: if refused the pages stay, as if the kernel had not needed them */
            madvise(p, c->slot[i].bytes, MADV_FREE);
            c->slot[i].lent = 0;
            found = 1;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* A private mapping of `bytes` for a sorter's array; with a cache (sorters of this process
 * only), from it, and back to it through unmap. Its contents are undefined. */
static void *private_map(size_t bytes, ig_build_cache *c)
{
    void *p = c ? pool_take(c, bytes) : NULL;
    if (p)
        return p;
    int grain = bytes <= SIZE_MAX - 2 * POOL_GRAIN;
    size_t size = grain ? (bytes + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN : bytes;
    /* Mappings start on a 2 MiB boundary, so that every 2 MiB of them can be a huge
     * page: mapped anywhere, a 1.1 MB text gets none and its 4.4 MB array one or two. */
    size_t extra = grain ? POOL_GRAIN : 0;
    uint8_t *m = mmap(NULL, size + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    uint8_t *a = grain ? (uint8_t *)(((uintptr_t)m + POOL_GRAIN - 1) & ~(uintptr_t)(POOL_GRAIN - 1)) : m;
    if (a > m)
        munmap(m, (size_t)(a - m));
    if (a + size < m + size + extra)
        munmap(a + size, (size_t)(m + size + extra - (a + size)));
    if (grain && !(c && pool_add(c, a, size))) { /* not kept: an ordinary mapping of the size asked for */
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), end = (bytes + pg - 1) / pg * pg;
        if (end < size)
            munmap(a + end, size - end);
        size = end;
    }
    /* divsufsort reads and writes both arrays at random: with 2 MiB pages a shard of the
     * Linux kernel sorts 5-6% faster (fewer TLB misses) and takes 512 times fewer faults.
     * Only advice: without transparent huge pages nothing changes. */
    madvise(a, size, MADV_HUGEPAGE);
    return a;
}

/* Unmaps what private_map gave (`bytes` as asked for, the same cache), or gives it back to
 * the cache. */
static void unmap(void *p, size_t bytes, ig_build_cache *c)
{
    if (p && !(c && pool_give(c, p)))
        munmap(p, bytes);
}

/* A copy of the text in huge pages, which sorts 7-8% faster than the caller's buffer (fewer
 * TLB misses: measured at 4 and 16 MB) and leaves the caller free to refill its buffer. A
 * child also lets go of the parent's pages it inherited, so that the parent refilling its
 * buffer does not copy them (and the shard is not held twice). NULL when memory ran out. */
static uint8_t *copy_text(const uint8_t *t, uint64_t n, int drop, ig_build_cache *c)
{
    uint8_t *copy = private_map((size_t)(n ? n : 1), drop ? NULL : c);
    if (!copy)
        return NULL;
    /* piece by piece, so that pages the parent rewrites meanwhile are seldom still shared */
    enum { PIECE = 64 << 20 };
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), dropped = ((uintptr_t)t + pg - 1) & ~(pg - 1);
    for (uint64_t off = 0; off < n; off += PIECE) {
        size_t k = n - off < PIECE ? (size_t)(n - off) : PIECE;
        memcpy(copy + off, t + off, k);
        uintptr_t end = ((uintptr_t)t + off + k) & ~(pg - 1);
        if (drop && end > dropped) {
            madvise((void *)dropped, end - dropped, MADV_DONTNEED);
            dropped = end;
        }
    }
    return copy;
}

/* The whole job of a sorter; failures are described in job->out->err. `copy` (NULL when
 * sorting t itself) is the sorter's own copy of t, unmapped once sorted. The arrays are
 * the sorter's own: the parent never reads them, `after` writes them out. */
static int sort_into(const uint8_t *t, uint8_t *copy, ig_sort_job *job, uint32_t stride, ig_sort_after_fn after,
                     void *ctx, ig_build_cache *pool)
{
    ig_error *e = &job->out->err;
    uint64_t n = job->n;
    int wide = job->wide, rc = 0;
    job->bytes = (size_t)(n ? n : 1) * (wide ? 8 : 4);
    if (!(job->sa = private_map(job->bytes, pool)))
        rc = ig_error_set(e, IG_EINTERNAL, "cannot allocate %zu bytes for a suffix array: %s", job->bytes,
                          strerror(errno));
    else if (job->sample_bytes && !(job->sample = private_map(job->sample_bytes, pool)))
        rc = ig_error_set(e, IG_EINTERNAL, "cannot allocate sampled keys: %s", strerror(errno));
    else if (job->lcp_bytes && !(job->lcp = private_map(job->lcp_bytes, NULL)))
        rc = ig_error_set(e, IG_EINTERNAL, "cannot allocate the lcp file (%zu bytes): %s", job->lcp_bytes,
                          strerror(errno));
    if (copy)
        t = copy;
    if (!rc)
        rc = wide ? igi_sort64_into(t, n, job->sa, e) : igi_sort32_into(t, n, job->sa, e);
    /* What is left (a pass for the keys, then mostly waiting for the disk) need not hold a
     * processor: the parent may start the next sort now. */
    __atomic_store_n(&job->out->sorted, 1, __ATOMIC_RELEASE);
    if (!rc && job->sample)
        fill_sample(t, n, wide, job->sa, stride, job->sample);
    if (!rc && job->lcp)
        igi_lcp_fill(t, n, wide, job->sa, stride, job->sample, job->lcp);
    unmap(copy, (size_t)(n ? n : 1), pool); /* writing the arrays needs no text */
    if (!rc && after)
        rc = after(job, ctx, job->out);
    unmap(job->sa, job->bytes, pool);
    unmap(job->sample, job->sample_bytes, pool);
    unmap(job->lcp, job->lcp_bytes, NULL); /* not pooled: igi_lcp_fill is not known to write every byte */
    job->sa = job->sample = job->lcp = NULL;
    return rc;
}

/* What a sorting thread owns: its own view of the job (the caller's may move in memory) and a
 * copy of the caller's context. */
struct sorter {
    ig_sort_job job;
    uint8_t *copy;
    uint32_t stride;
    ig_sort_after_fn after;
    int rc;
    int efd;
    max_align_t ctx[];
};

static void *sort_thread(void *arg)
{
    struct sorter *s = arg;
    s->rc = sort_into(s->copy, s->copy, &s->job, s->stride, s->after, s->ctx, s->job.cache);
    uint64_t one = 1;
    while (write(s->efd, &one, sizeof one) < 0 && errno == EINTR)
        ; /* an eventfd write of 1 fails only on overflow, after 2^64 - 2 of them */
    return NULL;
}

/* Starts a thread sorting a copy of t; -1 (nothing started, errno set) when it cannot. */
static int start_thread(const uint8_t *t, uint32_t stride, ig_sort_after_fn after, const void *ctx,
                        size_t ctx_size, ig_sort_job *job)
{
    struct sorter *s = calloc(1, sizeof *s + ctx_size);
    if (!s)
        return -1;
    if (!(s->copy = copy_text(t, job->n, 0, job->cache))) {
        free(s);
        return -1;
    }
    memcpy(s->ctx, ctx, ctx_size);
    s->job = *job;
    s->stride = stride;
    s->after = after;
    if ((s->efd = eventfd(0, EFD_CLOEXEC)) < 0) {
        unmap(s->copy, (size_t)(job->n ? job->n : 1), job->cache);
        free(s);
        return -1;
    }
    int e = igi_thread_start(&s->job.thread, sort_thread, s);
    if (e) {
        close(s->efd);
        unmap(s->copy, (size_t)(job->n ? job->n : 1), job->cache);
        free(s);
        errno = e;
        return -1;
    }
    job->thread = s->job.thread;
    job->sorter = s;
    job->waitfd = s->efd;
    return 0;
}

/* Joins a sorting thread (waiting for it: a sort cannot be stopped) and frees what it owned;
 * its return code. */
static int join_thread(ig_sort_job *job)
{
    struct sorter *s = job->sorter;
    pthread_join(job->thread, NULL);
    int rc = s->rc;
    close(s->efd);
    free(s);
    job->sorter = NULL;
    job->waitfd = -1;
    return rc;
}

int igi_sort_start(const uint8_t *t, uint64_t n, int wide, ig_sorter where, uint32_t stride, int lcp,
                  ig_sort_after_fn after, const void *ctx, size_t ctx_size, ig_build_cache *cache, ig_sort_job *job,
                  ig_error *err)
{
    memset(job, 0, sizeof *job);
    job->cache = cache;
    job->waitfd = -1;
    job->n = n;
    job->wide = wide;
    job->sample_bytes = (size_t)ig_sample_bytes(n, stride);
    job->lcp_bytes = lcp ? (size_t)ig_lcp_bytes(n, stride) : 0;
    if (!(job->out = shared_map(sizeof *job->out, where == IG_SORTER_CHILD)))
        return ig_error_set(err, IG_EINTERNAL, "cannot allocate a sort report: %s", strerror(errno));
    if (where == IG_SORTER_THREAD && start_thread(t, stride, after, ctx, ctx_size, job) == 0)
        return 0;
    pid_t parent = getpid(), pid = where == IG_SORTER_CHILD ? fork() : -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        uint8_t *copy = copy_text(t, n, 1, NULL);
        _exit(sort_into(t, copy, job, stride, after, (void *)ctx, NULL) ? 1 : 0);
    }
    if (pid < 0) {
        int rc = sort_into(t, NULL, job, stride, after, (void *)ctx, cache);
        if (rc) {
            if (err)
                *err = job->out->err;
            igi_sort_release(job);
            return rc;
        }
        job->done = 1;
        return 0;
    }
    job->pid = pid;
    job->waitfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return 0;
}

int igi_sort_sorted(const ig_sort_job *job)
{
    return job->done || (job->out && __atomic_load_n(&job->out->sorted, __ATOMIC_ACQUIRE));
}

int igi_sort_wait(ig_sort_job *job, int timeout_ms, ig_error *err)
{
    if (job->done)
        return 1;
    if (job->sorter) {
        struct pollfd p = {.fd = job->waitfd, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno != EINTR)
            return ig_error_set(err, IG_EINTERNAL, "waiting for the sort failed: %s", strerror(errno));
        if (r <= 0)
            return 0;
        if (join_thread(job)) {
            if (err)
                *err = job->out->err;
            return job->out->err.code ? job->out->err.code : IG_EINTERNAL;
        }
        job->done = 1;
        return 1;
    }
    if (!job->pid)
        return ig_error_set(err, IG_EINTERNAL, "no sort running");
    int status;
    pid_t w = waitpid(job->pid, &status, WNOHANG);
    if (w == 0) {
        if (job->waitfd >= 0) {
            struct pollfd p = {.fd = job->waitfd, .events = POLLIN};
            poll(&p, 1, timeout_ms);
        } else {
            nanosleep(&(struct timespec){0, (timeout_ms < 5 ? timeout_ms : 5) * 1000000L}, NULL);
        }
        w = waitpid(job->pid, &status, WNOHANG);
    }
    if (w == 0)
        return 0;
    if (w < 0)
        return errno == EINTR ? 0 : ig_error_set(err, IG_EINTERNAL, "waiting for the sort failed: %s", strerror(errno));
    job->pid = 0;
    if (job->waitfd >= 0) {
        close(job->waitfd);
        job->waitfd = -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && job->out->err.code) {
        if (err) /* the sorter said why: a full disk, say, with the path */
            *err = job->out->err;
        return job->out->err.code;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return ig_error_set(err, IG_EINTERNAL, "suffix sorting of a %llu-byte shard failed (%s %d)",
                            (unsigned long long)job->n, WIFSIGNALED(status) ? "signal" : "status",
                            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    job->done = 1;
    return 1;
}

void igi_sort_release(ig_sort_job *job)
{
    if (job->sorter)
        join_thread(job); /* its outcome no longer matters: the build is failing */
    if (job->pid > 0) {
        kill(job->pid, SIGKILL);
        while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (job->waitfd >= 0)
        close(job->waitfd);
    if (job->out)
        munmap(job->out, sizeof *job->out);
    memset(job, 0, sizeof *job);
    job->waitfd = -1;
}
