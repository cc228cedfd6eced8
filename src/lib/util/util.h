/*
 * Small internal helpers shared by the library: growable byte buffers, file I/O that
 * reports errors with path and errno text, directory creation and removal, fsync of
 * files and directories, and a fast 64-bit checksum. Nothing here prints.
 */
#ifndef IG_UTIL_H
#define IG_UTIL_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include "infinigram/error.h"
#include "infinigram/fields.h"
#include "infinigram/text.h"


/** Room for `extra` more bytes in b (ig_buf: infinigram/text.h); 0, or IG_ENOMEM marking it failed. */
int igi_buf_reserve(ig_buf *b, size_t extra);
/** Room for one more element in the array *pp (n in use, *cap allocated, elem bytes each):
 *  when full it doubles (starting at `first`). 0, or IG_ENOMEM leaving the array as it was. */
int igi_grow(void *pp, size_t n, size_t *cap, size_t elem, size_t first);
/** This machine's physical memory in bytes, or `otherwise` when the system does not say. */
uint64_t igi_phys_memory(uint64_t otherwise);
/** Asks for the 2 MiB-aligned part of a buffer of 4 MiB or more to be faulted in 2 MiB pages:
 *  a buffer filled once, such as a shard's text, then takes 512 times fewer page faults
 *  (about 2 ms less per 16 MB, a third of reading a corpus before its sort). Advice only. */
void igi_advise_huge(void *p, size_t n);

/** Frees each of the n pointers (any may be NULL). IGI_FREE(a, b, ...) is the same with the
 *  pointers listed: a structure's owned buffers released in one statement. */
void igi_free_all(void *const *ptrs, size_t n);
#define IGI_FREE(...) \
    igi_free_all((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/** Defines the two sift functions of a binary heap of T, in which before(&a, &b) non-zero
 *  means a belongs nearer the top: NAME_up(h, i) after h[i] was placed at the end, and
 *  NAME_down(h, n, i) after h[i] of the n was replaced. A macro, so that each heap's
 *  comparison is inlined (the occurrence listing offers millions of positions to one). */
#define IGI_HEAP_DEFINE(NAME, T, before)                                                           \
    static inline void NAME##_up(T *h, size_t i)                                                   \
    {                                                                                              \
        while (i && before(&h[i], &h[(i - 1) / 2])) {                                              \
            T t_ = h[i];                                                                           \
            h[i] = h[(i - 1) / 2];                                                                 \
            h[(i - 1) / 2] = t_;                                                                   \
            i = (i - 1) / 2;                                                                       \
        }                                                                                          \
    }                                                                                              \
    static inline void NAME##_down(T *h, size_t n, size_t i)                                       \
    {                                                                                              \
        for (;;) {                                                                                 \
            size_t l = 2 * i + 1, r = l + 1, m = i;                                                \
            if (l < n && before(&h[l], &h[m]))                                                     \
                m = l;                                                                             \
            if (r < n && before(&h[r], &h[m]))                                                     \
                m = r;                                                                             \
            if (m == i)                                                                            \
                return;                                                                            \
            T t_ = h[i];                                                                           \
            h[i] = h[m];                                                                           \
            h[m] = t_;                                                                             \
            i = m;                                                                                 \
        }                                                                                          \
    }

/** A structure's release: frees the listed pointers (its members) and zeroes *obj; nothing at
 *  all when obj is NULL (the members are not read then). obj is evaluated twice: a plain
 *  pointer, never an expression with a side effect. */
#define IGI_CLEAR(obj, ...)                                                                        \
    do {                                                                                           \
        if (obj) {                                                                                 \
            IGI_FREE(__VA_ARGS__);                                                                 \
            memset((obj), 0, sizeof *(obj));                                                       \
        }                                                                                          \
    } while (0)

/** malloc/strdup that never return NULL silently: NULL means out of memory. */
char *igi_strdup(const char *s);
char *igi_strndup(const char *s, size_t n);
/** asprintf into a fresh string, NULL on out of memory. */
char *igi_aprintf(const char *fmt, ...) IG_PRINTF(1, 2);

/** Reads a whole regular file of at most `max` bytes into a NUL-terminated buffer (*out, the
 *  caller frees it); IG_EUSAGE naming the path for anything else (a FIFO, a device, a larger
 *  file), without blocking or reading more than about `max` bytes. */
int igi_read_file(const char *path, size_t max, char **out, size_t *len, ig_error *err);

/** The most bytes a manifest or another JSON file describing an index may have. */
#define IGI_DESCRIPTOR_MAX ((size_t)64 << 20)
/** Writes all bytes to fd, retrying on EINTR/short writes; names `path` in errors. */
int igi_write_all(int fd, const void *p, size_t n, const char *path, ig_error *err);
/** Creates and writes a file (O_EXCL), fsyncs and closes it. */
int igi_write_file_sync(const char *path, const void *p, size_t n, ig_error *err);

/** A new file written in pieces and made durable (igi_out_open, _put, _close). Each MiB
 *  is handed to the disk as soon as it is written, so that the closing fsync has little
 *  left to wait for and a large file never piles up enough dirty pages for the kernel to
 *  throttle the writer; what is written is checksummed on the way, while it is in cache. */
typedef struct igi_out {
    int fd;
    uint64_t off, flushed;   ///< bytes written, bytes handed to the disk
    int flush;               ///< 0 once the file system refused to start writeback early
    const char *path;        ///< borrowed, for errors
    struct ig_hash *hash;    ///< NULL when no checksum is wanted
} igi_out;
/** Creates path (O_EXCL); hash (may be NULL) must have been initialised. */
int igi_out_open(igi_out *s, const char *path, struct ig_hash *hash, ig_error *err);
/** The same on a file created beforehand (truncated, not created), so that its directory
 *  entry could be made durable before its contents exist. */
int igi_out_reopen(igi_out *s, const char *path, struct ig_hash *hash, ig_error *err);
int igi_out_put(igi_out *s, const void *p, size_t n, ig_error *err);
/** Hands what is written but not yet handed to the disk (a file to be closed later). */
void igi_out_flush(igi_out *s);
/** fsyncs (unless a previous error, rc != 0, makes it moot) and closes; returns rc or the
 *  first failure. */
int igi_out_close(igi_out *s, int rc, ig_error *err);
/** pthread_create with every signal blocked in the new thread, so that signals stay with
 *  the caller's threads (the shell's Ctrl-C handler, say); 0 or an errno value. */
int igi_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/** fsync of a directory. */
int igi_fsync_dir(const char *path, ig_error *err);
/** fsync of the directory holding path (its entry there made durable). */
int igi_fsync_parent(const char *path, ig_error *err);
/** mkdir -p (mode 0755). */
int igi_mkdir_p(const char *path, ig_error *err);
/** rm -rf; missing path is not an error. */
int igi_remove_tree(const char *path, ig_error *err);
/** Absolute, normalised path (realpath when it exists). Returns NULL on out of memory. */
char *igi_abs_path(const char *path);
/** Joins two path parts with one '/'. */
char *igi_path_join(const char *a, const char *b);
/** What SQLite keeps beside a database file, by suffix ("" the file itself; NULL-terminated). */
extern const char *const igi_sqlite_beside[];
/** Whether dir is an infinigram home: its catalog (a regular file) beside its indexes/ folder. */
int igi_is_home(const char *dir);
/** When `path` names one of an infinigram home's own files (its catalog.db and SQLite's files
 *  beside it, its history, anything below its indexes/ or tables/), existing or not: that
 *  home, malloc'd; else NULL. Links in the path's folders are followed. */
char *igi_home_file(const char *path);

/** Checksum (64-bit, word-wise, seeded); stream with igi_hash_update. */
typedef struct ig_hash { uint64_t h[4]; uint8_t tail[32]; size_t ntail; uint64_t total; } ig_hash;
void igi_hash_init(ig_hash *s);
void igi_hash_update(ig_hash *s, const void *p, size_t n);
uint64_t igi_hash_final(const ig_hash *s);

/** Whether a cancel flag (may be NULL) is raised. The flag is raised from a signal handler
 *  (the shell's Ctrl-C) or from another thread (the server's watchdog): read atomically. */
static inline int ig_cancelled(const volatile int *flag)
{
    return flag && __atomic_load_n(flag, __ATOMIC_RELAXED);
}

uint64_t igi_hash_bytes(const void *p, size_t n);

/** Whether time a is later than time b (file times: a file changed after another). */
static inline int igi_time_after(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

/** The value of one hexadecimal digit (either case), -1 for any other byte. */
static inline int igi_hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/** The first index of sorted a[0..n) whose value is not below key; n when every one is. */
size_t igi_lower_bound(const uint64_t *a, size_t n, uint64_t key);

/** Current time: CLOCK_REALTIME seconds, CLOCK_MONOTONIC seconds. */
double igi_now_real(void);
double igi_now_mono(void);

/** Error helpers: set err with "<path>: <what>: <strerror(errno)>" and return IG_EIO (or IG_ENOTFOUND for ENOENT). */
int igi_error_errno(ig_error *err, int errnum, const char *path, const char *what);

#endif
