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
    while (k < lim && t[k] == p[k])
        k++;
    if (k == m)
        *cmp = 0;
    else if (k == lim)
        *cmp = -1;
    else
        *cmp = t[k] < p[k] ? -1 : 1;
    return k;
}

/* Narrows the open interval (a, b) to the first row whose suffix sorts after p (upper)
 * or at/after p (lower); la and lb are the known lcps with rows a and b. */
static int64_t bisect(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m, int64_t a,
                      size_t la, int64_t b, size_t lb, int upper)
{
    while (b - a > 1) {
        int64_t mid = a + (b - a) / 2;
        int cmp;
        size_t c = compare_at(s, ig_shard_sa(s, idx->pw, (uint64_t)mid), p, m, la < lb ? la : lb, &cmp);
        if (cmp < 0 || (upper && cmp == 0)) {
            a = mid;
            la = c;
        } else {
            b = mid;
            lb = c;
        }
    }
    return b;
}

ig_range ig_shard_find(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m,
                       uint64_t lo, uint64_t hi, size_t known)
{
    ig_range r = {lo, lo};
    if (lo >= hi)
        return r;
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
    /* lower bound in (L, M], upper bound in [M, R); M starts with p (lcp m) */
    r.lo = (uint64_t)bisect(idx, s, p, m, L, lL, M, m, 0);
    r.hi = (uint64_t)bisect(idx, s, p, m, M, m, R, lR, 1);
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
