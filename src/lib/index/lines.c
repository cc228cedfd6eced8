/*
 * Lines and columns in O(1): a location (line and column of a byte offset) used to count
 * the newlines from the start of its document, which is linear in the document's length —
 * milliseconds per position in a long single-document corpus. Each shard instead has
 * prefix counts of newlines and of characters per IG_LINE_BLOCK bytes (16 bytes per 4 KiB,
 * 0.4% of the text): the shard's lines file, written by the build for shards of 8 MiB and
 * more and checked on first use, or counted in memory on the first location (one pass). A line
 * number is the difference of two newline counts plus two scans of less than a block; the
 * line's start is found backwards, skipping blocks without a newline by their counts; a
 * column is the difference of two character counts, whatever the line's length.
 */
#include "index_impl.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* Characters (UTF-8 lead bytes) in p[0, n). */
uint64_t igi_count_chars(const uint8_t *p, size_t n)
{
    /* continuation bytes are 10xxxxxx: bit 7 set and bit 6 clear, eight bytes at a time */
    uint64_t cont = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        /* one bit per continuation byte, summed by a multiply (no popcount instruction needed) */
        cont += (((x & ~(x << 1) & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56;
    }
    for (; i < n; i++)
        cont += (p[i] & 0xC0) == 0x80;
    return n - cont;
}

/* Newlines in p[0, n), eight bytes at a time: a byte of x ^ 0x0A.. is zero exactly where
 * x holds a newline, and ((t & 0x7F..) + 0x7F..) | t has the top bit of each byte set
 * exactly where t's byte is not zero (no carry crosses bytes). */
static uint64_t newlines(const uint8_t *p, size_t n)
{
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full, nl = 0x0A0A0A0A0A0A0A0Aull;
    uint64_t c = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t t = x ^ nl, y = ((t & lo7) + lo7) | t;
        c += (((~y & ~lo7) >> 7) * 0x0101010101010101ull) >> 56;
    }
    for (; i < n; i++)
        c += p[i] == '\n';
    return c;
}

void igi_lines_fill(const uint8_t *text, uint64_t n, uint64_t *l)
{
    uint64_t nblocks = n / IG_LINE_BLOCK + 1;
    l[0] = l[1] = 0;
    for (uint64_t k = 0; k < nblocks; k++) {
        uint64_t a = k * IG_LINE_BLOCK, b = a + IG_LINE_BLOCK < n ? a + IG_LINE_BLOCK : n;
        l[2 * k + 2] = l[2 * k] + (a < b ? newlines(text + a, (size_t)(b - a)) : 0);
        l[2 * k + 3] = l[2 * k + 1] + (a < b ? igi_count_chars(text + a, (size_t)(b - a)) : 0);
    }
}

/* The shard's lines file, when it is present and its checksum matches (the file holds
 * little-endian numbers: only a little-endian machine reads it in place). */
static const uint64_t *mapped_lines(const ig_shard *s)
{
    const ig_map *m = &s->maps[IG_F_LINES];
    if (!m->addr || htole64(1) != 1)
        return NULL;
    if (igi_hash_bytes(m->addr, m->len) != s->lines_sum) {
        igi_shard_corrupt(s, "lines", "checksum mismatch");
        return NULL;
    }
    /* a checksum vouches only for what the manifest says: the counts must also be counts (a
     * block adds at most its own bytes), or a location could name a line out of order */
    const uint64_t *l = m->addr;
    uint64_t nblocks = s->n / IG_LINE_BLOCK + 1;
    if (m->len < ig_lines_bytes(s->n) || l[0] || l[1])
        goto bad;
    for (uint64_t k = 0; k < nblocks; k++) {
        /* a block of b bytes holds at most b characters and at least b/4 (a character is at
         * most four bytes, and up to three may belong to the last one before it), newlines
         * being characters */
        uint64_t b = s->n - k * IG_LINE_BLOCK < IG_LINE_BLOCK ? s->n - k * IG_LINE_BLOCK : IG_LINE_BLOCK;
        uint64_t nl0 = l[2 * k], ch0 = l[2 * k + 1], nl1 = l[2 * k + 2], ch1 = l[2 * k + 3];
        if (nl1 < nl0 || ch1 < ch0 || ch1 - ch0 > b || ch1 - ch0 < b / 4 || nl1 - nl0 > ch1 - ch0)
            goto bad;
    }
    return l;
bad:
    igi_shard_corrupt(s, "lines", "the counts are not those of any text");
    return NULL;
}

const uint64_t *igi_shard_lines(const ig_index *idx, const ig_shard *s)
{
    const uint64_t *l = atomic_load_explicit(&((ig_shard *)s)->lines, memory_order_acquire);
    if (l)
        return l;
    pthread_mutex_lock(&((ig_index *)idx)->lines_mu);
    l = atomic_load_explicit(&((ig_shard *)s)->lines, memory_order_acquire);
    if (!l && !(l = mapped_lines(s))) {
        uint64_t *own = malloc((size_t)ig_lines_bytes(s->n));
        if (own) {
            igi_lines_fill(s->text, s->n, own);
            ((ig_shard *)s)->lines_owned = 1;
        }
        l = own;
    }
    if (l)
        atomic_store_explicit(&((ig_shard *)s)->lines, l, memory_order_release);
    pthread_mutex_unlock(&((ig_index *)idx)->lines_mu);
    return l;
}

/* Newlines in text[0, off) of the shard, from the index and one partial block. */
uint64_t igi_shard_newlines_before(const ig_shard *s, const uint64_t *lines, uint64_t off)
{
    uint64_t k = off / IG_LINE_BLOCK;
    return lines[2 * k] + newlines(s->text + k * IG_LINE_BLOCK, (size_t)(off - k * IG_LINE_BLOCK));
}

uint64_t igi_shard_chars_before(const ig_shard *s, const uint64_t *lines, uint64_t off)
{
    uint64_t k = off / IG_LINE_BLOCK;
    return lines[2 * k + 1] + igi_count_chars(s->text + k * IG_LINE_BLOCK, (size_t)(off - k * IG_LINE_BLOCK));
}

/* The offset just after the last newline in text[from, off), or `from` when there is none:
 * backwards a block at a time, skipping whole blocks without a newline by the index. */
uint64_t igi_shard_line_start(const ig_shard *s, const uint64_t *lines, uint64_t from, uint64_t off)
{
    uint64_t hi = off;
    while (hi > from) {
        uint64_t k = (hi - 1) / IG_LINE_BLOCK, lo = k * IG_LINE_BLOCK < from ? from : k * IG_LINE_BLOCK;
        if (lo == k * IG_LINE_BLOCK && hi == (k + 1) * IG_LINE_BLOCK && lines[2 * k + 2] == lines[2 * k]) {
            hi = lo; /* a whole block without a newline */
            continue;
        }
        const uint8_t *nl = memrchr(s->text + lo, '\n', (size_t)(hi - lo));
        if (nl)
            return (uint64_t)(nl - s->text) + 1;
        hi = lo;
    }
    return from;
}
