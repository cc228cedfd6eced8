/*
 * Context handling shared by every model: which bytes of a context may be used, the
 * counts of its suffixes, ℓ* (longest occurring suffix) and the lengths at which the
 * suffix count changes — the only places where the next-byte distribution can change,
 * since a suffix whose count equals that of the next longer one has exactly the same
 * occurrences (shifted by one byte), hence the same continuations.
 */
#include "infinigram/query.h"
#include "model_impl.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

ig_ctx igi_ctx_make(const uint8_t *ctx, size_t len, int64_t cap)
{
    const uint8_t *end = len ? memrchr(ctx, IG_DOC_END, len) : NULL;
    size_t off = end ? (size_t)(end - ctx) + 1 : 0;
    size_t n = len - off;
    if (cap >= 0 && n > (uint64_t)cap) {
        off += n - (size_t)cap;
        n = (size_t)cap;
    }
    return (ig_ctx){ctx + off, n};
}

uint64_t igi_ctx_count(const ig_index *idx, ig_ctx c, uint64_t ell)
{
    return ig_count(idx, c.p + c.n - ell, ell);
}

uint64_t igi_ctx_in_count(void *u, uint64_t ell)
{
    const igi_ctx_in *in = u;
    return igi_ctx_count(in->idx, in->c, ell);
}

uint64_t igi_ctx_longest(const ig_index *idx, ig_ctx c, uint64_t *count)
{
    uint64_t lo = 0, lo_cnt = ig_count(idx, NULL, 0), hi = 0;
    /* double until a suffix is missing (or the context ends), then bisect */
    uint64_t step = 1;
    for (;;) {
        uint64_t ell = lo + step > c.n ? c.n : lo + step;
        if (ell == lo) {
            hi = lo + 1;
            break;
        }
        uint64_t k = igi_ctx_count(idx, c, ell);
        if (k == 0) {
            hi = ell;
            break;
        }
        lo = ell;
        lo_cnt = k;
        if (lo == c.n) {
            hi = lo + 1;
            break;
        }
        step *= 2;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t k = igi_ctx_count(idx, c, mid);
        if (k) {
            lo = mid;
            lo_cnt = k;
        } else {
            hi = mid;
        }
    }
    if (count)
        *count = lo_cnt;
    return lo;
}

uint64_t ig_longest_suffix(const ig_index *idx, const uint8_t *ctx, size_t len, int64_t cap, uint64_t *count)
{
    return igi_ctx_longest(idx, igi_ctx_make(ctx, len, cap), count);
}

int igi_ivcache_init(igi_ivcache *c, const ig_index *idx, size_t slots)
{
    memset(c, 0, sizeof *c);
    c->slots = slots;
    c->nshards = idx->nshards;
    c->start = calloc(slots, sizeof *c->start);
    c->end = calloc(slots, sizeof *c->end);
    c->count = calloc(slots, sizeof *c->count);
    c->r = calloc(slots * idx->nshards, sizeof *c->r);
    c->t0 = igi_match_alloc(idx);
    c->t1 = igi_match_alloc(idx);
    c->probe = igi_match_alloc(idx);
    c->total = ig_count(idx, NULL, 0);
    return c->start && c->end && c->count && c->r && c->t0.r && c->t1.r && c->probe.r ? 0 : -1;
}

void igi_ivcache_free(igi_ivcache *c)
{
    IGI_FREE(c->start, c->end, c->count, c->r);
    igi_match_release(&c->t0);
    igi_match_release(&c->t1);
    igi_match_release(&c->probe);
    memset(c, 0, sizeof *c);
}

void igi_ivcache_clear(igi_ivcache *c)
{
    memset(c->end, 0, c->slots * sizeof *c->end);
}

void igi_ivcache_put(igi_ivcache *c, const ig_index *idx, const uint8_t *p, const ig_match *m)
{
    size_t s = (size_t)(p - c->base), i = s & (c->slots - 1);
    if (!m->len)
        return;
    c->start[i] = s;
    c->end[i] = s + m->len;
    c->count[i] = m->count;
    memcpy(c->r + i * c->nshards, m->r, idx->nshards * sizeof *m->r);
}

/* Narrowing costs two bisections of the remembered interval per byte; a fresh search, two of
 * the whole suffix array with string comparisons. Beyond a few bytes the fresh search wins. */
#define IVCACHE_MAX_NARROW 4

void igi_ivcache_find(igi_ivcache *c, const ig_index *idx, const uint8_t *p, size_t len, ig_match *m)
{
    size_t s = (size_t)(p - c->base), e = s + len, i = s & (c->slots - 1);
    size_t have = c->end[i];
    if (len && have && c->start[i] == s && have <= e && e - have <= IVCACHE_MAX_NARROW) {
        ig_match *from = &c->t0, *to = &c->t1;
        from->len = have - s;
        from->count = c->count[i];
        memcpy(from->r, c->r + i * c->nshards, idx->nshards * sizeof *from->r);
        for (size_t k = have; k < e; k++) {
            igi_match_extend(idx, from, p, c->base[k], to);
            ig_match t = *from;
            *from = *to;
            *to = t;
        }
        m->len = len;
        m->count = from->count;
        memcpy(m->r, from->r, idx->nshards * sizeof *m->r);
    } else {
        igi_match_find(idx, p, len, m);
    }
    if (m->count)
        igi_ivcache_put(c, idx, p, m);
}

/* cnt(suf(ell)); with a match, also its SA intervals (into *tmp, swapped into *best
 * by the caller when this length is kept). */
static uint64_t probe(const ig_index *idx, ig_ctx c, uint64_t ell, ig_match *tmp, igi_ivcache *cache)
{
    if (!tmp)
        return igi_ctx_count(idx, c, ell);
    if (cache)
        igi_ivcache_find(cache, idx, c.p + c.n - ell, ell, tmp);
    else
        igi_match_find(idx, c.p + c.n - ell, ell, tmp);
    return tmp->count;
}

static void keep(ig_match *best, ig_match *tmp)
{
    if (best) {
        ig_match t = *best;
        *best = *tmp;
        *tmp = t;
    }
}

uint64_t igi_ctx_next_level(const ig_index *idx, ig_ctx c, uint64_t ell, uint64_t cnt_ell, uint64_t hint,
                           uint64_t *cnt, ig_match *best)
{
    return igi_ctx_next_level_cached(idx, c, ell, cnt_ell, hint, cnt, best, NULL);
}

uint64_t igi_ctx_next_level_cached(const ig_index *idx, ig_ctx c, uint64_t ell, uint64_t cnt_ell, uint64_t hint,
                                  uint64_t *cnt, ig_match *best, igi_ivcache *cache)
{
    uint64_t total = cache ? cache->total : ig_count(idx, NULL, 0);
    if (ell == 0 || cnt_ell >= total)
        return UINT64_MAX;
    /* Find the largest ℓ' < ell with cnt(ℓ') > cnt_ell; counts fall as ℓ grows. Keep
     * lo with cnt(lo) > cnt_ell and hi with cnt(hi) <= cnt_ell, starting near the hint
     * (the answer at the previous position of a text, which moves little) and galloping
     * away from it, so that a good hint costs two or three searches. With `best`, the
     * SA intervals of the answer come back too, so its histogram needs no new search. */
    ig_match scratch = {0}, *tmp = NULL;
    if (best && cache) {
        best->len = UINT64_MAX;
        scratch = cache->probe;
        tmp = &scratch;
    } else if (best) {
        best->len = UINT64_MAX; /* not valid until a length is kept */
        scratch = igi_match_alloc(idx);
        if (scratch.r)
            tmp = &scratch;
        else
            best = NULL; /* out of memory: the caller searches the answer's intervals itself */
    }
    uint64_t lo = 0, lo_cnt = total, hi = ell;
    uint64_t g = hint < ell ? hint : ell - 1;
    uint64_t kg = probe(idx, c, g, tmp, cache);
    if (kg > cnt_ell) {
        lo = g;
        lo_cnt = kg;
        keep(best, tmp);
        for (uint64_t step = 1; lo + step < hi; step *= 2) {
            uint64_t k = probe(idx, c, lo + step, tmp, cache);
            if (k > cnt_ell) {
                lo += step;
                lo_cnt = k;
                keep(best, tmp);
            } else {
                hi = lo + step;
                break;
            }
        }
    } else {
        hi = g;
        for (uint64_t step = 1; hi > step; step *= 2) {
            uint64_t k = probe(idx, c, hi - step, tmp, cache);
            if (k > cnt_ell) {
                lo = hi - step;
                lo_cnt = k;
                keep(best, tmp);
                break;
            }
            hi -= step;
        }
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t km = probe(idx, c, mid, tmp, cache);
        if (km > cnt_ell) {
            lo = mid;
            lo_cnt = km;
            keep(best, tmp);
        } else {
            hi = mid;
        }
    }
    if (best && cache)
        cache->probe = scratch; /* kept swaps may have exchanged it with best's storage */
    else if (best)
        igi_match_release(&scratch);
    *cnt = lo_cnt;
    return lo;
}

int igi_utf8_char_len(uint8_t b)
{
    if (b >= 0xC2 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF)
        return 3;
    if (b >= 0xF0 && b <= 0xF4)
        return 4;
    return 1;
}

/* Position of the last character's lead byte within the last 4 bytes, and how many
 * bytes it still needs; 0 when the context ends on a character boundary. */
int igi_utf8_pending(const uint8_t *ctx, size_t len)
{
    for (size_t k = 1; k <= 4 && k <= len; k++) {
        uint8_t b = ctx[len - k];
        if ((b & 0xC0) == 0x80)
            continue;
        int need = igi_utf8_char_len(b);
        return need > (int)k ? need - (int)k : 0;
    }
    return 0;
}

int igi_utf8_cont_range(const uint8_t *ctx, size_t len, uint8_t *lo, uint8_t *hi)
{
    if (!igi_utf8_pending(ctx, len))
        return 0;
    /* the byte right after a lead has a narrower range for some leads */
    uint8_t prev = ctx[len - 1];
    *lo = prev == 0xE0 ? 0xA0 : prev == 0xF0 ? 0x90 : 0x80;
    *hi = prev == 0xED ? 0x9F : prev == 0xF4 ? 0x8F : 0xBF;
    return 1;
}

int igi_utf8_valid_next(const uint8_t *ctx, size_t len, uint8_t valid[256])
{
    memset(valid, 0, 256);
    uint8_t lo, hi;
    int n = 0;
    if (igi_utf8_cont_range(ctx, len, &lo, &hi)) {
        for (int b = lo; b <= hi; b++, n++)
            valid[b] = 1;
        return n;
    }
    for (int b = 0; b < 256; b++)
        if (ig_utf8_starts_char(b) || b == IG_DOC_END) {
            valid[b] = 1;
            n++;
        }
    return n;
}

ig_match igi_match_alloc(const ig_index *idx)
{
    ig_match m = {0};
    m.r = calloc(idx->nshards, sizeof *m.r); /* NULL when out of memory: callers check */
    return m;
}

void igi_match_release(ig_match *m)
{
    free(m->r);
    m->r = NULL;
}

void igi_match_copy(const ig_index *idx, ig_match *to, const ig_match *from)
{
    to->len = from->len;
    to->count = from->count;
    memcpy(to->r, from->r, idx->nshards * sizeof *to->r);
}
