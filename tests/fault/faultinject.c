/*
 * An LD_PRELOAD shim that fails one I/O call, for the fault-injection sweeps
 * (tests/scripts/fault_test.py). Only calls on files under IG_FAULT_PATH count, so the
 * terminal and other files are never touched.
 *
 *   IG_FAULT_PATH=DIR      the tree whose files are subject to faults (required)
 *   IG_FAULT_CALL=NAME     write, fsync, rename, mmap or open (write covers write and
 *                          pwrite; fsync covers fsync and fdatasync; rename covers
 *                          rename and renameat; open covers open, openat and mkdir)
 *   IG_FAULT_N=K           the K-th such call (1-based) fails ...
 *   IG_FAULT_ERRNO=E       ... with ENOSPC, EIO or EACCES (default EIO)
 *   IG_FAULT_COUNTS=FILE   instead of failing, append "NAME COUNT" lines at exit
 *
 * A failed call returns -1 (MAP_FAILED for mmap) with errno set, as the kernel would.
 */
/* both the plain and the 64-bit names are defined here: no redirection of one to the other */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { C_WRITE, C_FSYNC, C_RENAME, C_MMAP, C_OPEN, C_N };
static const char *const names[C_N] = {"write", "fsync", "rename", "mmap", "open"};
static long counts[C_N];
static int target = -1, err_no = EIO, inited;
static long nth;
static const char *root;
static size_t rootlen;

static void report(void)
{
    const char *f = getenv("IG_FAULT_COUNTS");
    FILE *o = f ? fopen(f, "a") : NULL;
    if (!o)
        return;
    for (int i = 0; i < C_N; i++)
        fprintf(o, "%s %ld\n", names[i], counts[i]);
    fclose(o);
}

static void init(void)
{
    if (inited)
        return;
    inited = 1;
    root = getenv("IG_FAULT_PATH");
    rootlen = root ? strlen(root) : 0;
    const char *c = getenv("IG_FAULT_CALL"), *n = getenv("IG_FAULT_N"), *e = getenv("IG_FAULT_ERRNO");
    for (int i = 0; c && i < C_N; i++)
        if (!strcmp(c, names[i]))
            target = i;
    nth = n ? atol(n) : 0;
    if (e && !strcmp(e, "ENOSPC"))
        err_no = ENOSPC;
    else if (e && !strcmp(e, "EACCES"))
        err_no = EACCES;
    if (getenv("IG_FAULT_COUNTS"))
        atexit(report);
}

static int under_root(const char *path)
{
    if (!root || !path)
        return 0;
    char abs[PATH_MAX];
    if (path[0] != '/') {
        if (!getcwd(abs, sizeof abs))
            return 0;
        size_t l = strlen(abs);
        snprintf(abs + l, sizeof abs - l, "/%s", path);
        path = abs;
    }
    return !strncmp(path, root, rootlen) && (path[rootlen] == '/' || path[rootlen] == '\0');
}

static int fd_under_root(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return under_root(path);
}

/* 1 when this call must fail. */
static int fault(int call, int subject)
{
    init();
    if (!subject)
        return 0;
    long k = __atomic_add_fetch(&counts[call], 1, __ATOMIC_RELAXED);
    if (call == target && k == nth) {
        errno = err_no;
        return 1;
    }
    return 0;
}

#define REAL(ret, name, ...)                                                                                           \
    static ret (*real_##name)(__VA_ARGS__);                                                                            \
    if (!real_##name)                                                                                                  \
        real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)
/* the same, with the parameter list in parentheses */
#define REALP(ret, name, params)                                                                                       \
    static ret(*real_##name) params;                                                                                   \
    if (!real_##name)                                                                                                  \
        real_##name = (ret(*) params)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *b, size_t n)
{
    REAL(ssize_t, write, int, const void *, size_t);
    if (fd > 2 && fault(C_WRITE, fd_under_root(fd)))
        return -1;
    return real_write(fd, b, n);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (fault(C_WRITE, fd_under_root(fd)))
        return -1;
    return real_pwrite(fd, b, n, off);
}

ssize_t pwrite64(int fd, const void *b, size_t n, off_t off)
{
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    if (fault(C_WRITE, fd_under_root(fd)))
        return -1;
    return real_pwrite64(fd, b, n, off);
}

int fsync(int fd)
{
    REAL(int, fsync, int);
    if (fault(C_FSYNC, fd_under_root(fd)))
        return -1;
    return real_fsync(fd);
}

int fdatasync(int fd)
{
    REAL(int, fdatasync, int);
    if (fault(C_FSYNC, fd_under_root(fd)))
        return -1;
    return real_fdatasync(fd);
}

int rename(const char *a, const char *b)
{
    REAL(int, rename, const char *, const char *);
    if (fault(C_RENAME, under_root(a) || under_root(b)))
        return -1;
    return real_rename(a, b);
}

int renameat(int da, const char *a, int db, const char *b)
{
    REAL(int, renameat, int, const char *, int, const char *);
    if (fault(C_RENAME, under_root(a) || under_root(b)))
        return -1;
    return real_renameat(da, a, db, b);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    REAL(void *, mmap, void *, size_t, int, int, int, off_t);
    if (fd >= 0 && fault(C_MMAP, fd_under_root(fd)))
        return MAP_FAILED;
    return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    REAL(void *, mmap64, void *, size_t, int, int, int, off_t);
    if (fd >= 0 && fault(C_MMAP, fd_under_root(fd)))
        return MAP_FAILED;
    return real_mmap64(addr, len, prot, flags, fd, off);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* open, open64 and openat: the mode argument exists only when a file may be created. */
#define OPEN_WRAPPER(name, params, args)                                                                               \
    int name params                                                                                                    \
    {                                                                                                                  \
        REALP(int, name, params);                                                                                      \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode_t m = mode_arg(flags, ap);                                                                                \
        va_end(ap);                                                                                                    \
        if (fault(C_OPEN, under_root(p)))                                                                              \
            return -1;                                                                                                 \
        return real_##name args;                                                                                       \
    }
OPEN_WRAPPER(open, (const char *p, int flags, ...), (p, flags, m))
OPEN_WRAPPER(open64, (const char *p, int flags, ...), (p, flags, m))
OPEN_WRAPPER(openat, (int d, const char *p, int flags, ...), (d, p, flags, m))

int mkdir(const char *p, mode_t m)
{
    REAL(int, mkdir, const char *, mode_t);
    if (fault(C_OPEN, under_root(p)))
        return -1;
    return real_mkdir(p, m);
}
