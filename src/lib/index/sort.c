/*
 * Sort jobs: the child inherits the text copy-on-write (it only reads it), sorts into
 * an anonymous shared mapping, runs the caller's `after` step (writing the files) and exits,
 * leaving its report in a small shared page; the parent learns of the exit through a pidfd
 * (no polling delay). A child dies with its parent (an orphaned sort would keep the
 * build's lock). If fork is impossible, the sort runs in-process, uncancellable.
 */
#include "sort.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The whole job of a sorter; failures are described in job->out->err. */
static int sort_into(const uint8_t *t, uint64_t n, int wide, ig_sort_job *job, uint32_t stride,
                     ig_sort_after_fn after, void *ctx)
{
    ig_error *e = &job->out->err;
    int rc = wide ? ig_sort64_into(t, n, job->sa, e) : ig_sort32_into(t, n, job->sa, e);
    if (!rc && job->sample)
        fill_sample(t, n, wide, job->sa, stride, job->sample);
    if (!rc && after)
        rc = after(job, ctx, job->out);
    return rc;
}

static void *shared_map(size_t bytes, int shared)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int ig_sort_start(const uint8_t *t, uint64_t n, int wide, int fork_child, uint32_t stride, ig_sort_after_fn after,
                  void *ctx, ig_sort_job *job, ig_error *err)
{
    memset(job, 0, sizeof *job);
    job->pidfd = -1;
    job->n = n;
    job->wide = wide;
    job->bytes = (size_t)(n ? n : 1) * (wide ? 8 : 4);
    if (!(job->sa = shared_map(job->bytes, fork_child)))
        return ig_error_set(err, IG_EINTERNAL, "cannot allocate %zu bytes for a suffix array: %s", job->bytes,
                            strerror(errno));
    if (stride && n) {
        job->sample_bytes = (size_t)((n + stride - 1) / stride) * 8;
        if (!(job->sample = shared_map(job->sample_bytes, fork_child))) {
            int e = errno;
            ig_sort_release(job);
            return ig_error_set(err, IG_EINTERNAL, "cannot allocate sampled keys: %s", strerror(e));
        }
    }
    if (!(job->out = shared_map(sizeof *job->out, fork_child))) {
        int e = errno;
        ig_sort_release(job);
        return ig_error_set(err, IG_EINTERNAL, "cannot allocate a sort report: %s", strerror(e));
    }
    pid_t parent = getpid(), pid = fork_child ? fork() : -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        _exit(sort_into(t, n, wide, job, stride, after, ctx) ? 1 : 0);
    }
    if (pid < 0) {
        int rc = sort_into(t, n, wide, job, stride, after, ctx);
        if (rc) {
            if (err)
                *err = job->out->err;
            ig_sort_release(job);
            return rc;
        }
        job->done = 1;
        return 0;
    }
    job->pid = pid;
    job->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return 0;
}

int ig_sort_wait(ig_sort_job *job, int timeout_ms, ig_error *err)
{
    if (job->done)
        return 1;
    if (!job->pid)
        return ig_error_set(err, IG_EINTERNAL, "no sort running");
    int status;
    pid_t w = waitpid(job->pid, &status, WNOHANG);
    if (w == 0) {
        if (job->pidfd >= 0) {
            struct pollfd p = {.fd = job->pidfd, .events = POLLIN};
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
    if (job->pidfd >= 0) {
        close(job->pidfd);
        job->pidfd = -1;
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

void ig_sort_release(ig_sort_job *job)
{
    if (job->pid > 0) {
        kill(job->pid, SIGKILL);
        while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (job->pidfd >= 0)
        close(job->pidfd);
    if (job->sa)
        munmap(job->sa, job->bytes);
    if (job->sample)
        munmap(job->sample, job->sample_bytes);
    if (job->out)
        munmap(job->out, sizeof *job->out);
    memset(job, 0, sizeof *job);
    job->pidfd = -1;
}
