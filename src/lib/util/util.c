/*
 * Internal helpers: buffers, checked file I/O, directory utilities, checksums, clocks.
 * Errors name the path and carry strerror text so callers can pass them straight up.
 */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int igi_buf_reserve(ig_buf *b, size_t extra)
{
    if (b->failed)
        return IG_ENOMEM;
    if (b->cap - b->len >= extra)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return IG_ENOMEM;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return IG_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    igi_advise_huge(p, cap);
    return 0;
}

void igi_advise_huge(void *p, size_t n)
{
    enum { HUGE = 2u << 20 };
    if (n < 2 * HUGE)
        return;
    uintptr_t a = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1), e = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE - 1);
    /* only advice: refused (no transparent huge pages), the pages stay small */
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}

uint64_t igi_phys_memory(uint64_t otherwise)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : otherwise;
}

int igi_grow(void *pp, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? 2 * *cap : first;
    if (nc < *cap || nc > SIZE_MAX / elem)
        return IG_ENOMEM;
    void *v = realloc(*(void **)pp, nc * elem);
    if (!v)
        return IG_ENOMEM;
    *(void **)pp = v;
    *cap = nc;
    return 0;
}

int ig_buf_append(ig_buf *b, const void *p, size_t n)
{
    if (igi_buf_reserve(b, n))
        return IG_ENOMEM;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void ig_buf_free(ig_buf *b)
{
    IGI_CLEAR(b, b->data);
}

void igi_free_all(void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ptrs[i]);
}

char *igi_strdup(const char *s) { return s ? strdup(s) : NULL; }

char *igi_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *igi_aprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

int igi_error_errno(ig_error *err, int errnum, const char *path, const char *what)
{
    int code = (errnum == ENOENT || errnum == ENOTDIR) ? IG_ENOTFOUND : IG_EIO;
    return ig_error_set(err, code, "%s: %s: %s", path, what, strerror(errnum));
}

int igi_read_file(const char *path, size_t max, char **out, size_t *len, ig_error *err)
{
    /* O_NONBLOCK: a FIFO would block the open until a writer came; a regular file ignores it */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return igi_error_errno(err, errno, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return igi_error_errno(err, e, path, "cannot stat");
    }
    if (!S_ISREG(st.st_mode)) { /* a device may never end, a FIFO never start */
        close(fd);
        return ig_error_set(err, IG_EUSAGE, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > max) { /* at once: a sparse terabyte costs no read */
        close(fd);
        return ig_error_set(err, IG_EUSAGE, "%s: larger than the %zu bytes such a file may have", path, max);
    }
    ig_buf b = {0};
    int rc = 0;
    for (;;) {
        if (b.len > max) { /* checked as it is read too: a file may grow while it is read */
            rc = ig_error_set(err, IG_EUSAGE, "%s: larger than the %zu bytes such a file may have", path, max);
            break;
        }
        if (igi_buf_reserve(&b, 65536 + 1)) {
            rc = ig_error_set(err, IG_ENOMEM, "%s: out of memory", path);
            break;
        }
        ssize_t r = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = igi_error_errno(err, errno, path, "read failed");
            break;
        }
        if (r == 0)
            break;
        b.len += (size_t)r;
    }
    close(fd);
    if (rc) {
        ig_buf_free(&b);
        return rc;
    }
    if (!b.data && igi_buf_reserve(&b, 1))
        return ig_error_set(err, IG_ENOMEM, "%s: out of memory", path);
    b.data[b.len] = '\0';
    *out = (char *)b.data;
    if (len)
        *len = b.len;
    return 0;
}

int igi_write_all(int fd, const void *p, size_t n, const char *path, ig_error *err)
{
    const uint8_t *q = p;
    while (n) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        ssize_t w = write(fd, q, chunk);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return igi_error_errno(err, errno, path, "write failed");
        }
        if (w == 0)
            return ig_error_set(err, IG_EIO, "%s: write failed: no progress", path);
        q += w;
        n -= (size_t)w;
    }
    return 0;
}

int igi_write_file_sync(const char *path, const void *p, size_t n, ig_error *err)
{
    igi_out s;
    int rc = igi_out_open(&s, path, NULL, err);
    if (rc)
        return rc;
    return igi_out_close(&s, igi_out_put(&s, p, n, err), err);
}

/* Writeback is started a MiB at a time: larger steps let a 64 MiB suffix array be
 * throttled for 100-300 ms when it is written in one call; smaller ones gain nothing
 * measurable and cost more system calls. */
#define OUT_FLUSH (1u << 20)

static int out_open(igi_out *s, const char *path, ig_hash *hash, int flags, const char *what, ig_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->hash = hash;
    s->flush = 1;
    s->fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
    if (s->fd < 0)
        return igi_error_errno(err, errno, path, what);
    return 0;
}

int igi_out_open(igi_out *s, const char *path, ig_hash *hash, ig_error *err)
{
    return out_open(s, path, hash, O_CREAT | O_EXCL, "cannot create", err);
}

int igi_out_reopen(igi_out *s, const char *path, ig_hash *hash, ig_error *err)
{
    return out_open(s, path, hash, O_TRUNC, "cannot open", err);
}

void igi_out_flush(igi_out *s)
{
    /* only advice: fsync still decides durability, and reports I/O errors */
    if (s->flush && s->off > s->flushed &&
        sync_file_range(s->fd, (off64_t)s->flushed, (off64_t)(s->off - s->flushed), SYNC_FILE_RANGE_WRITE) != 0)
        s->flush = 0;
    s->flushed = s->off;
}

int igi_out_put(igi_out *s, const void *p, size_t n, ig_error *err)
{
    const uint8_t *q = p;
    while (n) {
        size_t k = n < OUT_FLUSH ? n : OUT_FLUSH;
        int rc = igi_write_all(s->fd, q, k, s->path, err);
        if (rc)
            return rc;
        s->off += k;
        if (s->off - s->flushed >= OUT_FLUSH)
            igi_out_flush(s);
        /* checksummed once on its way to the disk (still in cache): the hashing overlaps
         * the disk's work instead of delaying it */
        if (s->hash)
            igi_hash_update(s->hash, q, k);
        q += k;
        n -= k;
    }
    return 0;
}

int igi_out_close(igi_out *s, int rc, ig_error *err)
{
    if (!rc && fsync(s->fd) != 0)
        rc = igi_error_errno(err, errno, s->path, "fsync failed");
    if (close(s->fd) != 0 && !rc)
        rc = igi_error_errno(err, errno, s->path, "close failed");
    s->fd = -1;
    return rc;
}

int igi_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    /* faults stay deliverable: a blocked SIGBUS would kill the process whatever its handler
     * (an index file cut short under a thread's read is handled, see index/bus.c) */
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    int e = pthread_sigmask(SIG_SETMASK, &all, &old);
    if (e)
        return e;
    e = pthread_create(t, NULL, fn, arg);
    /* cannot fail (a valid `how`, a mask just read); a started thread must not look failed */
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

int igi_fsync_dir(const char *path, ig_error *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return igi_error_errno(err, errno, path, "cannot open directory");
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = igi_error_errno(err, errno, path, "fsync failed");
    close(fd);
    return rc;
}

int igi_fsync_parent(const char *path, ig_error *err)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *parent = n == 0 ? igi_strdup(".") : igi_strndup(path, n);
    if (!parent)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = igi_fsync_dir(parent, err);
    free(parent);
    return rc;
}

int igi_mkdir_p(const char *path, ig_error *err)
{
    char *tmp = igi_strdup(path);
    if (!tmp)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = 0;
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
                rc = igi_error_errno(err, errno, tmp, "cannot create directory");
                break;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    if (!rc) {
        struct stat st;
        if (stat(path, &st) != 0)
            rc = igi_error_errno(err, errno, path, "cannot create directory");
        else if (!S_ISDIR(st.st_mode))
            rc = ig_error_set(err, IG_EIO, "%s: not a directory", path);
    }
    free(tmp);
    return rc;
}

int igi_remove_tree(const char *path, ig_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : igi_error_errno(err, errno, path, "cannot stat");
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT)
            return igi_error_errno(err, errno, path, "cannot remove");
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return igi_error_errno(err, errno, path, "cannot open directory");
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *sub = igi_path_join(path, e->d_name);
        if (!sub) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        rc = igi_remove_tree(sub, err);
        free(sub);
        if (rc)
            break;
    }
    closedir(d);
    if (!rc && rmdir(path) != 0 && errno != ENOENT)
        rc = igi_error_errno(err, errno, path, "cannot remove directory");
    return rc;
}

char *igi_path_join(const char *a, const char *b)
{
    size_t la = strlen(a);
    return igi_aprintf("%s%s%s", a, (la && a[la - 1] == '/') ? "" : "/", b);
}

int igi_is_home(const char *dir)
{
    char *cat = igi_path_join(dir, "catalog.db"), *idx = igi_path_join(dir, "indexes");
    struct stat a, b;
    int home = cat && idx && lstat(cat, &a) == 0 && S_ISREG(a.st_mode) && lstat(idx, &b) == 0 && S_ISDIR(b.st_mode);
    free(cat);
    free(idx);
    return home;
}

const char *const igi_sqlite_beside[] = {"", "-wal", "-shm", "-journal", NULL};

/* Whether `base`, an entry of a home, is one of the home's own: its catalog with SQLite's
 * files beside it, its history, its indexes/ and tables/ folders. */
static int home_entry(const char *base)
{
    if (!strcmp(base, "history") || !strcmp(base, "indexes") || !strcmp(base, "tables"))
        return 1;
    for (size_t i = 0; strncmp(base, "catalog.db", 10) == 0 && igi_sqlite_beside[i]; i++)
        if (!strcmp(base + 10, igi_sqlite_beside[i]))
            return 1;
    return 0;
}

char *igi_home_file(const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    /* the path's folder: "." for a bare name, "/" for "/x" */
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!real)
        return NULL;
    char below[256] = ""; /* the entry of `real` that holds the path, once above its folder */
    for (int in_home = 1;; in_home = 0) { /* in_home: the file is an entry of `real` itself */
        if (igi_is_home(real)) {
            int hit = in_home ? home_entry(base) : !strcmp(below, "indexes") || !strcmp(below, "tables");
            if (hit)
                return real;
        }
        char *up = strrchr(real, '/');
        if (!up || (up == real && !real[1]))
            break;
        snprintf(below, sizeof below, "%s", up + 1);
        up[up == real] = '\0'; /* "/x" keeps its "/" */
    }
    free(real);
    return NULL;
}

char *igi_abs_path(const char *path)
{
    char buf[PATH_MAX];
    if (realpath(path, buf))
        return igi_strdup(buf);
    if (path[0] == '/')
        return igi_strdup(path);
    if (!getcwd(buf, sizeof buf))
        return igi_strdup(path);
    return igi_path_join(buf, path);
}

/* Four independent multiply-rotate lanes over 8-byte words: fast enough to checksum
 * while writing multi-GB files, and order-sensitive. Not cryptographic. */
#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t lane(uint64_t h, uint64_t w) { return rotl(h + w * H_P2, 31) * H_P1; }
static inline uint64_t load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

void igi_hash_init(ig_hash *s)
{
    memset(s, 0, sizeof *s);
    s->h[0] = H_P1 + H_P2;
    s->h[1] = H_P2;
    s->h[2] = 0;
    s->h[3] = (uint64_t)0 - H_P1;
}

static void hash_block(ig_hash *s, const uint8_t *p)
{
    s->h[0] = lane(s->h[0], load64(p));
    s->h[1] = lane(s->h[1], load64(p + 8));
    s->h[2] = lane(s->h[2], load64(p + 16));
    s->h[3] = lane(s->h[3], load64(p + 24));
}

void igi_hash_update(ig_hash *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->total += n;
    if (s->ntail) {
        size_t take = 32 - s->ntail < n ? 32 - s->ntail : n;
        memcpy(s->tail + s->ntail, p, take);
        s->ntail += take;
        p += take;
        n -= take;
        if (s->ntail < 32)
            return;
        hash_block(s, s->tail);
        s->ntail = 0;
    }
    while (n >= 32) {
        hash_block(s, p);
        p += 32;
        n -= 32;
    }
    memcpy(s->tail, p, n);
    s->ntail = n;
}

uint64_t igi_hash_final(const ig_hash *s)
{
    uint64_t h = rotl(s->h[0], 1) + rotl(s->h[1], 7) + rotl(s->h[2], 12) + rotl(s->h[3], 18);
    h ^= s->total * H_P1;
    for (size_t i = 0; i < s->ntail; i++)
        h = rotl(h ^ (s->tail[i] * H_P2), 11) * H_P1;
    h ^= h >> 33;
    h *= H_P2;
    h ^= h >> 29;
    return h;
}

uint64_t igi_hash_bytes(const void *p, size_t n)
{
    ig_hash s;
    igi_hash_init(&s);
    igi_hash_update(&s, p, n);
    return igi_hash_final(&s);
}

size_t igi_lower_bound(const uint64_t *a, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double igi_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double igi_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
