/*
 * Writer of the official infini-gram layout; the layout is described in official_writer.h.
 */
#include "official_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

uint32_t official_sep_id(int token_width)
{
    return token_width >= 4 ? UINT32_MAX : (uint32_t)((1ull << (8 * token_width)) - 1);
}

int official_min_ptr_width(uint64_t ds_size)
{
    /* ceil(log2(size) / 8) is the smallest P with size <= 2^(8P); at least one byte, as a
     * one-byte file would otherwise get none. */
    int p = 1;
    while (p < 8 && ds_size > (1ull << (8 * p)))
        p++;
    return p;
}

char *official_shard_path(const char *dir, official_layout layout, size_t s, const char *name)
{
    if (layout == OFFICIAL_V6)
        return igi_aprintf("%s/%zu/%s", dir, s, name);
    return igi_aprintf("%s/%s.%zu", dir, name, s);
}

static void put_le(uint8_t *p, uint64_t v, int width)
{
    for (int i = 0; i < width; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Replaces path with bytes p[0..n). */
static int write_whole(const char *path, const void *p, size_t n, ig_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return igi_error_errno(err, errno, path, "open"), -1;
    if (igi_write_all(fd, p, n, path, err) != 0) {
        close(fd);
        return -1;
    }
    if (close(fd) != 0)
        return igi_error_errno(err, errno, path, "close"), -1;
    return 0;
}

static int write_shard_file(const char *dir, const official_opts *o, size_t s, const char *name,
                            const void *p, size_t n, ig_error *err)
{
    char *path = official_shard_path(dir, o->layout, s, name);
    if (!path)
        return ig_error_set(err, IG_ENOMEM, "out of memory"), -1;
    int rc = write_whole(path, p, n, err);
    free(path);
    return rc;
}

/* The suffix order of the official table: bytes to the end of the shard, a proper prefix
 * first (the shorter suffix wins a tie of the common length). */
static int suffix_cmp(const uint8_t *ds, uint64_t size, uint64_t a, uint64_t b)
{
    uint64_t la = size - a, lb = size - b, l = la < lb ? la : lb;
    /* in steps of 64 bytes: the same order, but the work follows the common prefix, not the
     * suffixes' length (a sanitizer checks every byte memcmp is allowed to read: quadratic) */
    for (uint64_t k = 0; k < l; k += 64) {
        int c = memcmp(ds + a + k, ds + b + k, l - k < 64 ? l - k : 64);
        if (c)
            return c;
    }
    return la < lb ? -1 : la > lb ? 1 : 0;
}

/* Bottom-up merge sort of the pointers (qsort has no context argument for the text). */
static int sort_suffixes(uint64_t *sa, size_t n, const uint8_t *ds, uint64_t size)
{
    uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    uint64_t *src = sa, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = suffix_cmp(ds, size, src[i], src[j]) <= 0 ? src[i++] : src[j++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != sa)
        memcpy(sa, src, n * sizeof *sa);
    free(tmp);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* unigram: "ID COUNT\n" per distinct id in ascending order, the separator included. */
static int unigram_text(const official_doc *docs, size_t d0, size_t d1, uint32_t sep, ig_buf *out)
{
    size_t n = d1 - d0;
    for (size_t d = d0; d < d1; d++)
        n += docs[d].len;
    uint32_t *ids = malloc(n * sizeof *ids);
    if (!ids)
        return -1;
    size_t k = 0;
    for (size_t d = d0; d < d1; d++) {
        ids[k++] = sep;
        if (docs[d].len) /* an empty document may have no array */
            memcpy(ids + k, docs[d].ids, docs[d].len * sizeof *ids);
        k += docs[d].len;
    }
    qsort(ids, n, sizeof *ids, cmp_u32);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && ids[j] == ids[i])
            j++;
        char line[48];
        int len = snprintf(line, sizeof line, "%" PRIu32 " %zu\n", ids[i], j - i);
        rc = ig_buf_append(out, line, (size_t)len);
        i = j;
    }
    free(ids);
    return rc ? -1 : 0;
}

/* Shard s: documents [d0, d1). */
static int write_shard(const char *dir, const official_doc *docs, size_t d0, size_t d1, size_t s,
                       const official_opts *o, ig_error *err)
{
    const int T = o->token_width;
    const uint32_t sep = official_sep_id(T);
    uint64_t toks = 0;
    for (size_t d = d0; d < d1; d++)
        toks += 1 + docs[d].len;
    const uint64_t size = toks * (uint64_t)T;
    const int P = o->ptr_width ? o->ptr_width : official_min_ptr_width(size);
    /* The largest pointer is the last token's offset. */
    if (P < 8 && size - (uint64_t)T >= (1ull << (8 * P)))
        return ig_error_set(err, IG_EUSAGE, "shard %zu: %" PRIu64 " bytes need pointers wider than %d byte(s)",
                            s, size, P), -1;

    int rc = -1;
    uint8_t *ds = malloc(size), *table = malloc(toks * (uint64_t)P);
    uint8_t *offs = malloc((d1 - d0) * 8), *metaoff = malloc((d1 - d0) * 8);
    uint64_t *sa = malloc(toks * sizeof *sa);
    ig_buf meta = {0}, uni = {0};
    if (!ds || !table || !offs || !metaoff || !sa) {
        ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    uint64_t at = 0;
    for (size_t d = d0; d < d1; d++) {
        put_le(offs + (d - d0) * 8, at, 8);
        put_le(ds + at, sep, T);
        at += (uint64_t)T;
        for (size_t i = 0; i < docs[d].len; i++) {
            uint32_t id = docs[d].ids[o->reversed ? docs[d].len - 1 - i : i];
            if (id >= sep) {
                ig_error_set(err, IG_EUSAGE, "document %zu: token id %" PRIu32 " is not below the separator %" PRIu32,
                             d, id, sep);
                goto out;
            }
            put_le(ds + at, id, T);
            at += (uint64_t)T;
        }
        if (o->metadata) {
            put_le(metaoff + (d - d0) * 8, meta.len, 8);
            char line[96];
            int len = snprintf(line, sizeof line, "{\"path\": \"doc-%zu\", \"linenum\": %zu, \"metadata\": {}}\n", d, d);
            if (ig_buf_append(&meta, line, (size_t)len) != 0) {
                ig_error_set(err, IG_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    for (uint64_t i = 0; i < toks; i++)
        sa[i] = i * (uint64_t)T;
    if (sort_suffixes(sa, toks, ds, size) != 0) {
        ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    for (uint64_t i = 0; i < toks; i++)
        put_le(table + i * (uint64_t)P, sa[i], P);
    if (o->unigram && unigram_text(docs, d0, d1, sep, &uni) != 0) {
        ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }

    if (o->layout == OFFICIAL_V6) {
        char *sub = igi_aprintf("%s/%zu", dir, s);
        if (!sub) {
            ig_error_set(err, IG_ENOMEM, "out of memory");
            goto out;
        }
        int mk = igi_mkdir_p(sub, err);
        free(sub);
        if (mk != 0)
            goto out;
    }
    if (write_shard_file(dir, o, s, "tokenized", ds, size, err) != 0 ||
        write_shard_file(dir, o, s, "table", table, toks * (uint64_t)P, err) != 0 ||
        write_shard_file(dir, o, s, "offset", offs, (d1 - d0) * 8, err) != 0)
        goto out;
    if (o->metadata && (write_shard_file(dir, o, s, "metadata", meta.data, meta.len, err) != 0 ||
                        write_shard_file(dir, o, s, "metaoff", metaoff, (d1 - d0) * 8, err) != 0))
        goto out;
    if (o->unigram && write_shard_file(dir, o, s, "unigram", uni.data, uni.len, err) != 0)
        goto out;
    rc = 0;
out:
    free(ds);
    free(table);
    free(offs);
    free(metaoff);
    free(sa);
    ig_buf_free(&meta);
    ig_buf_free(&uni);
    return rc;
}

int official_write(const char *dir, const official_doc *docs, size_t n, const official_opts *o,
                   ig_error *err)
{
    if (o->token_width != 1 && o->token_width != 2 && o->token_width != 4)
        return ig_error_set(err, IG_EUSAGE, "token width %d is not 1, 2 or 4", o->token_width), -1;
    if (o->ptr_width < 0 || o->ptr_width > 5)
        return ig_error_set(err, IG_EUSAGE, "pointer width %d is not 1..5 (or 0 for the minimal one)", o->ptr_width), -1;
    if (o->shards < 1 || o->shards > n)
        return ig_error_set(err, IG_EUSAGE, "%zu shard(s) for %zu document(s): every shard needs one", o->shards, n), -1;
    if (igi_mkdir_p(dir, err) != 0)
        return -1;
    for (size_t s = 0; s < o->shards; s++)
        if (write_shard(dir, docs, s * n / o->shards, (s + 1) * n / o->shards, s, o, err) != 0)
            return -1;
    return 0;
}

int official_truncate(const char *path, uint64_t size, ig_error *err)
{
    if (truncate(path, (off_t)size) != 0)
        return igi_error_errno(err, errno, path, "truncate"), -1;
    return 0;
}

int official_flip_byte(const char *path, uint64_t offset, uint8_t mask, ig_error *err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return igi_error_errno(err, errno, path, "open"), -1;
    uint8_t b;
    ssize_t r = pread(fd, &b, 1, (off_t)offset);
    if (r != 1) {
        if (r < 0)
            igi_error_errno(err, errno, path, "read");
        else
            ig_error_set(err, IG_EUSAGE, "%s: offset %" PRIu64 " is past the end", path, offset);
        close(fd);
        return -1;
    }
    b ^= mask;
    if (pwrite(fd, &b, 1, (off_t)offset) != 1) {
        igi_error_errno(err, errno, path, "write");
        close(fd);
        return -1;
    }
    if (close(fd) != 0)
        return igi_error_errno(err, errno, path, "close"), -1;
    return 0;
}
