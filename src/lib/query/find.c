/*
 * Pattern search over a shard's suffix array. Two bisections find the first row whose
 * suffix starts with the pattern and the first row past them. Each comparison starts at
 * min(lcp with the lower bound, lcp with the upper bound), since every suffix between
 * two bounds shares at least that much with the pattern (the "mlr" heuristic); both
 * searches run together until they first meet a matching row, then split. A search can
 * start inside a known interval (range narrowing when a pattern grows by one byte).
 */
#include "index/index_impl.h"

#include <stdlib.h>
#include <string.h>

/* Compares p with the suffix at text offset `pos`, skipping the first k bytes (known
 * equal). Returns the new common prefix length; *cmp < 0 when the suffix sorts before
 * p (including a suffix that is a proper prefix of p), 0 when it starts with p. */
static inline size_t compare_at(const ig_shard *s, uint64_t pos, const uint8_t *p, size_t m,
                                size_t k, int *cmp)
{
    uint64_t avail = s->n - pos;
    size_t lim = (uint64_t)m < avail ? m : (size_t)avail;
    const uint8_t *t = s->text + pos;
    /* eight bytes at a time: long patterns (long contexts) are compared at memory speed */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (k + 8 <= lim) {
        uint64_t a, b;
        memcpy(&a, t + k, 8);
        memcpy(&b, p + k, 8);
        if (a != b) {
            k += (size_t)__builtin_ctzll(a ^ b) / 8; /* little-endian: first differing byte */
            goto mismatch;
        }
        k += 8;
    }
#endif
    while (k < lim && t[k] == p[k])
        k++;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
mismatch:
#endif
    if (k == m)
        *cmp = 0;
    else if (k == lim)
        *cmp = -1;
    else
        *cmp = t[k] < p[k] ? -1 : 1;
    return k;
}

ig_range ig_shard_find(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m,
                       uint64_t lo, uint64_t hi, size_t known)
{
    ig_range r = {lo, lo};
    if (lo >= hi)
        return r;
    if (s->prefix && known == 0 && lo == 0 && hi == s->n && m > 0) {
        /* start inside the interval of the first one or two bytes */
        uint32_t k = (uint32_t)p[0] * 257;
        if (m == 1) {
            lo = ig_shard_prefix(s, idx->pw, k);
            hi = ig_shard_prefix(s, idx->pw, k + 257);
            known = 1;
        } else {
            k += (uint32_t)p[1] + 1;
            lo = ig_shard_prefix(s, idx->pw, k);
            hi = ig_shard_prefix(s, idx->pw, k + 1);
            known = 2;
        }
        if (lo >= hi)
            return (ig_range){lo, lo};
    }
    if (m <= known)
        return (ig_range){lo, hi};
    const uint32_t pw = idx->pw;
    /* Open interval (L, R): rows L and R are virtual bounds with known lcps. */
    int64_t L = (int64_t)lo - 1, R = (int64_t)hi;
    size_t lL = known, lR = known;
    int64_t M = -1;
    while (R - L > 1) {
        int64_t mid = L + (R - L) / 2;
        int cmp;
        size_t c = compare_at(s, ig_shard_sa(s, pw, (uint64_t)mid), p, m, lL < lR ? lL : lR, &cmp);
        if (cmp == 0) {
            M = mid;
            break;
        }
        if (cmp < 0) {
            L = mid;
            lL = c;
        } else {
            R = mid;
            lR = c;
        }
    }
    if (M < 0)
        return (ig_range){(uint64_t)R, (uint64_t)R};
    /* Lower bound in (L, M], upper bound in [M, R); M starts with p (lcp m). The two
     * bisections are independent, so they advance in lock step: the processor then
     * waits for both chains' cache misses at once instead of one after the other. */
    int64_t a1 = L, b1 = M, a2 = M, b2 = R;
    size_t la1 = lL, lb1 = m, la2 = m, lb2 = lR;
    const uint32_t pw2 = idx->pw;
    while (b1 - a1 > 1 || b2 - a2 > 1) {
        int64_t m1 = a1 + (b1 - a1) / 2, m2 = a2 + (b2 - a2) / 2;
        int c1 = 0, c2 = 0;
        size_t k1 = 0, k2 = 0;
        if (idx->prefetch && b1 - a1 > 1)
            __builtin_prefetch(s->sa + (uint64_t)m1 * pw2);
        if (idx->prefetch && b2 - a2 > 1)
            __builtin_prefetch(s->sa + (uint64_t)m2 * pw2);
        uint64_t p1 = b1 - a1 > 1 ? ig_shard_sa(s, pw2, (uint64_t)m1) : 0;
        uint64_t p2 = b2 - a2 > 1 ? ig_shard_sa(s, pw2, (uint64_t)m2) : 0;
        if (idx->prefetch && b1 - a1 > 1)
            __builtin_prefetch(s->text + p1 + (la1 < lb1 ? la1 : lb1));
        if (idx->prefetch && b2 - a2 > 1)
            __builtin_prefetch(s->text + p2 + (la2 < lb2 ? la2 : lb2));
        if (b1 - a1 > 1) {
            k1 = compare_at(s, p1, p, m, la1 < lb1 ? la1 : lb1, &c1);
            if (c1 < 0) {
                a1 = m1;
                la1 = k1;
            } else {
                b1 = m1;
                lb1 = k1;
            }
        }
        if (b2 - a2 > 1) {
            k2 = compare_at(s, p2, p, m, la2 < lb2 ? la2 : lb2, &c2);
            if (c2 <= 0) {
                a2 = m2;
                la2 = k2;
            } else {
                b2 = m2;
                lb2 = k2;
            }
        }
    }
    r.lo = (uint64_t)b1;
    r.hi = (uint64_t)b2;
    return r;
}

int ig_pattern_crosses_documents(const uint8_t *p, size_t m)
{
    return m > 1 && memchr(p, IG_DOC_END, m - 1) != NULL;
}

uint64_t ig_find(const ig_index *idx, const uint8_t *pattern, size_t len, ig_range *ranges)
{
    uint64_t total = 0;
    int never = ig_pattern_crosses_documents(pattern, len);
    for (uint32_t i = 0; i < idx->nshards; i++) {
        const ig_shard *s = &idx->shards[i];
        ranges[i] = never ? (ig_range){0, 0} : ig_shard_find(idx, s, pattern, len, 0, s->n, 0);
        total += ranges[i].hi - ranges[i].lo;
    }
    return total;
}

uint64_t ig_count(const ig_index *idx, const uint8_t *pattern, size_t len)
{
    uint64_t total = 0;
    if (ig_pattern_crosses_documents(pattern, len))
        return 0;
    for (uint32_t i = 0; i < idx->nshards; i++) {
        const ig_shard *s = &idx->shards[i];
        ig_range r = ig_shard_find(idx, s, pattern, len, 0, s->n, 0);
        total += r.hi - r.lo;
    }
    return total;
}
