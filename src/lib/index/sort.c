/*
 * Cancellable sorting: the child process inherits the text copy-on-write (it only
 * reads it), sorts into an anonymous shared mapping, and exits; the parent polls.
 * If fork is impossible (resource limits), the sort runs in-process, uncancellable.
 */
#include "sort.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int sort_into(const uint8_t *t, uint64_t n, int wide, void *sa, ig_error *err)
{
    return wide ? ig_sort64_into(t, n, sa, err) : ig_sort32_into(t, n, sa, err);
}

int ig_sort_cancellable(const uint8_t *t, uint64_t n, int wide, int (*tick)(void *), void *user,
                        void **out, size_t *bytes, ig_error *err)
{
    size_t len = (size_t)(n ? n : 1) * (wide ? 8 : 4);
    /* small shards sort in well under a second: not worth a process */
    int in_process = n < IG_SORT_FORK_MIN;
    void *sa = in_process ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sa == MAP_FAILED)
        return ig_error_set(err, IG_EINTERNAL, "cannot allocate %zu bytes for a suffix array: %s", len,
                            strerror(errno));
    int rc = 0;
    pid_t parent = getpid();
    pid_t pid = in_process ? -1 : fork();
    if (pid == 0) {
        ig_error e;
        /* die with the parent: an orphaned sort would hold the build's lock */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        _exit(sort_into(t, n, wide, sa, &e) ? 1 : 0);
    }
    if (pid < 0) {
        rc = sort_into(t, n, wide, sa, err);
    } else {
        /* a pidfd becomes readable when the child exits: no polling delay after the sort */
        int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
        for (;;) {
            int status;
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    rc = ig_error_set(err, IG_EINTERNAL, "suffix sorting of a %llu-byte shard failed (%s %d)",
                                      (unsigned long long)n, WIFSIGNALED(status) ? "signal" : "status",
                                      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                break;
            }
            if (w < 0 && errno != EINTR) {
                rc = ig_error_set(err, IG_EINTERNAL, "waiting for the sort failed: %s", strerror(errno));
                break;
            }
            if (tick && tick(user)) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                    ;
                rc = ig_error_set(err, IG_ECANCELLED, "build cancelled");
                break;
            }
            if (pfd >= 0) {
                struct pollfd p = {.fd = pfd, .events = POLLIN};
                poll(&p, 1, 50);
            } else {
                nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
            }
        }
        if (pfd >= 0)
            close(pfd);
    }
    if (rc) {
        munmap(sa, len);
        return rc;
    }
    *out = sa;
    *bytes = len;
    return 0;
}
