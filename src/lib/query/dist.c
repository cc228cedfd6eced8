/*
 * Next-byte histograms without visiting every occurrence. Inside the SA interval of a
 * pattern P, suffixes are sorted by the byte that follows P, so each next byte owns a
 * contiguous sub-interval; we walk them left to right, finding each one's end by binary
 * search on that byte. The cost depends on the number of distinct next bytes, not on
 * how often P occurs: a one-byte context seen millions of times costs the same as a
 * rare one.
 */
#include "infinigram/query.h"
#include "query.h"

#include <stdlib.h>
#include <string.h>

/* Byte after the pattern at SA row r; 256 when the suffix ends first (only possible
 * for a pattern ending in 0xFF at the very end of the text). */
static inline int next_at(const ig_index *idx, const ig_shard *s, uint64_t r, size_t len)
{
    (void)idx;
    uint64_t pos = ig_shard_sa(s, s->pw, r) + len;
    return pos < s->n ? s->text[pos] : 256;
}

void igi_match_find(const ig_index *idx, const uint8_t *p, size_t len, ig_match *m)
{
    m->len = len;
    m->count = ig_find(idx, p, len, m->r);
}

/* Rows of [lo, hi) — all starting with the same m-byte pattern — whose byte at depth m
 * is b: two bisections comparing that one byte. A suffix that ends at depth m (possible
 * only at the very end of a shard) sorts first. */
static ig_range narrow(const ig_index *idx, const ig_shard *s, uint64_t lo, uint64_t hi, size_t m, uint8_t b)
{
    uint64_t a = lo, z = hi;
    while (a < z) { /* first row whose byte is >= b */
        uint64_t mid = a + (z - a) / 2;
        if (next_at(idx, s, mid, m) < b || next_at(idx, s, mid, m) == 256)
            a = mid + 1;
        else
            z = mid;
    }
    uint64_t first = a;
    z = hi;
    while (a < z) { /* first row whose byte is > b */
        uint64_t mid = a + (z - a) / 2;
        if (next_at(idx, s, mid, m) == b)
            a = mid + 1;
        else
            z = mid;
    }
    return (ig_range){first, a};
}

/* Shard s's rows of the pattern grown by byte b (from's rows of it, `never` when the pattern
 * already ends a document: nothing follows). */
static ig_range extend_shard(const ig_index *idx, uint32_t s, ig_range r, size_t len, int never, uint8_t b)
{
    return never || r.lo >= r.hi ? (ig_range){r.lo, r.lo} : narrow(idx, &idx->shards[s], r.lo, r.hi, len, b);
}

void igi_match_extend(const ig_index *idx, const ig_match *from, const uint8_t *p, uint8_t b, ig_match *to)
{
    /* No copy of the pattern: inside the interval every suffix already starts with it,
     * so only the byte at depth len is compared. A pattern may hold 0xFF only last. */
    int never = from->len > 0 && p[from->len - 1] == IG_DOC_END;
    to->count = 0;
    to->len = from->len + 1;
    for (uint32_t s = 0; s < idx->nshards; s++) {
        to->r[s] = extend_shard(idx, s, from->r[s], from->len, never, b);
        to->count += igi_shard_signed(&idx->shards[s], to->r[s].hi - to->r[s].lo);
    }
}

uint64_t igi_match_count_next(const ig_index *idx, const ig_match *m, const uint8_t *p, uint8_t b)
{
    /* shard by shard, so that no allocation is needed (nor a copy of the index, whose
     * lazily made members other threads may be setting) */
    int never = m->len > 0 && p[m->len - 1] == IG_DOC_END;
    uint64_t total = 0;
    for (uint32_t s = 0; s < idx->nshards; s++) {
        ig_range r = extend_shard(idx, s, m->r[s], m->len, never, b);
        total += igi_shard_signed(&idx->shards[s], r.hi - r.lo);
    }
    return total;
}

/* Histogram of a pattern of at most one byte from the prefix table: the rows of each one- or
 * two-byte prefix are already known, so no suffix is visited. Returns 0 when the table cannot
 * answer (no table, or a longer pattern). */
static int hist_from_prefix(const ig_index *idx, const ig_shard *s, uint32_t si, const ig_match *m,
                            uint64_t cnt[256], ig_range *sub, uint64_t *bits)
{
    uint64_t lo = m->r[si].lo, hi = m->r[si].hi;
    if (!s->prefix || m->len > 1 || (m->len == 0 && (lo != 0 || hi != s->rows)))
        return 0;
    if (lo >= hi)
        return 1;
    /* one byte c: its two-byte keys c*257 + b + 1; none: the one-byte keys' groups */
    uint32_t base = m->len ? (uint32_t)s->text[ig_shard_sa(s, idx->pw, lo)] * 257 + 1 : 0;
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t k = m->len ? base + b : b * 257;
        ig_range g = ig_shard_prefix_range(s, idx->pw, k, m->len ? k + 1 : k + 257);
        uint64_t a = g.lo, z = g.hi;
        if (z > a) {
            cnt[b] += igi_shard_signed(s, z - a);
            if (bits)
                bits[b >> 6] |= 1ull << (b & 63);
            if (sub)
                sub[(size_t)b * idx->nshards + si] = (ig_range){a, z};
        }
    }
    return 1;
}

static inline void match_hist(const ig_index *idx, const ig_match *m, uint64_t cnt[256], ig_range *sub,
                              uint64_t *bits)
{
    for (uint32_t si = 0; si < idx->nshards; si++) {
        const ig_shard *s = &idx->shards[si];
        if (hist_from_prefix(idx, s, si, m, cnt, sub, bits))
            continue;
        uint64_t r = m->r[si].lo, hi = m->r[si].hi;
        while (r < hi) {
            int b = next_at(idx, s, r, m->len);
            /* first row after r whose next byte differs: gallop, then bisect, so that
             * small groups (the common case) cost O(log group size) */
            uint64_t a = r, step = 1, z;
            for (;;) {
                z = a + step;
                if (z >= hi || next_at(idx, s, z, m->len) != b) {
                    if (z > hi)
                        z = hi;
                    break;
                }
                a = z;
                step *= 2;
            }
            while (z - a > 1) {
                uint64_t mid = a + (z - a) / 2;
                if (next_at(idx, s, mid, m->len) == b)
                    a = mid;
                else
                    z = mid;
            }
            if (b < 256) {
                cnt[b] += igi_shard_signed(s, z - r);
                if (bits)
                    bits[b >> 6] |= 1ull << (b & 63);
                if (sub)
                    sub[(size_t)b * idx->nshards + si] = (ig_range){r, z};
            }
            r = z;
        }
    }
}

void igi_match_hist(const ig_index *idx, const ig_match *m, uint64_t cnt[256], ig_range *sub)
{
    match_hist(idx, m, cnt, sub, NULL);
}

void igi_match_hist_bits(const ig_index *idx, const ig_match *m, uint64_t cnt[256], ig_range *sub, uint64_t bits[4])
{
    match_hist(idx, m, cnt, sub, bits);
}

int igi_match_single_next(const ig_index *idx, const ig_match *m, int *byte)
{
    int seen = -1;
    if (idx->npos < idx->nshards) {
        /* what a subtracted set takes away may leave one next byte where there were several */
        uint64_t cnt[256] = {0};
        igi_match_hist(idx, m, cnt, NULL);
        for (int b = 0; b < 256; b++)
            if (cnt[b]) {
                if (seen >= 0)
                    return 0;
                seen = b;
            }
        if (byte)
            *byte = seen;
        return seen >= 0;
    }
    for (uint32_t si = 0; si < idx->nshards; si++) {
        const ig_shard *s = &idx->shards[si];
        if (m->r[si].lo >= m->r[si].hi)
            continue;
        int a = next_at(idx, s, m->r[si].lo, m->len), b = next_at(idx, s, m->r[si].hi - 1, m->len);
        if (a != b || (seen >= 0 && seen != a))
            return 0;
        seen = a;
    }
    if (byte)
        *byte = seen;
    return seen >= 0;
}
