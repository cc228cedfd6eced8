/*
 * Making and checking the lcp file's windows (lcp.h, format.h).
 */
#include "lcp.h"
#include "index_impl.h"
#include "../util/util.h"

#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

uint64_t igi_lcp_block_sum(uint64_t b, const uint8_t *block)
{
    ig_hash h;
    uint64_t le = htole64(b);
    igi_hash_init(&h);
    igi_hash_update(&h, &le, 8);
    igi_hash_update(&h, block, 4096);
    return igi_hash_final(&h);
}

uint64_t igi_lcp_window_sum(uint64_t w, const uint8_t *key, const uint8_t *rec, uint32_t stride)
{
    ig_hash h;
    uint64_t le = htole64(w);
    igi_hash_init(&h);
    igi_hash_update(&h, &le, 8);
    igi_hash_update(&h, key, 8);
    igi_hash_update(&h, rec, 2 * (size_t)stride);
    return igi_hash_final(&h);
}

#define SA_AT(r) (wide ? (uint64_t)((const int64_t *)sa)[r] : (uint64_t)(uint32_t)((const int32_t *)sa)[r])
void igi_lcp_fill(const uint8_t *t, uint64_t n, int wide, const void *sa, uint32_t stride, const uint8_t *sample,
                  uint8_t *out)
{
    const uint64_t rec = ig_lcp_record(stride), nkeys = ig_lcp_nkeys(n, stride), tb = ig_lcp_top_bytes(n, stride);
    const uint64_t ntop = ig_lcp_ntop(n, stride), nblk = ig_lcp_nblocks(n, stride);
    memset(out, 0, tb + nblk * 4096);
    for (uint64_t i = 0; i < nkeys; i += IG_LCP_TOP_EVERY)
        memcpy(out + i / IG_LCP_TOP_EVERY * 8, sample + i * 8, 8);
    /* the key lcps: the same as a window's, over the sampled rows */
    uint8_t *kl = out + tb;
    for (uint64_t i = 1; i < nkeys; i++) {
        uint64_t a = SA_AT((i - 1) * stride), b = SA_AT(i * stride);
        uint64_t lim = n - (a > b ? a : b), k = 0;
        if (lim > IG_LCP_CAP)
            lim = IG_LCP_CAP;
        while (k < lim && t[a + k] == t[b + k])
            k++;
        kl[2 * i] = (uint8_t)k;
        kl[2 * i + 1] = k < IG_LCP_CAP && b + k < n ? t[b + k] : 0;
    }
    for (uint64_t b = 0; b < nblk; b++) {
        uint64_t sum = htole64(igi_lcp_block_sum(b, kl + b * 4096));
        memcpy(out + (ntop + b) * 8, &sum, 8);
    }
    out += tb + nblk * 4096;
    /* the rows' text is read at random: fetch a few rows ahead (one cache miss a row, not
     * one after the other) */
    enum { AHEAD = 16 };
    uint64_t prev = 0;
    for (uint64_t r = 0; r < n; r++) {
        if (r + AHEAD < n)
            __builtin_prefetch(t + SA_AT(r + AHEAD));
        uint64_t pos = SA_AT(r), w = r / stride, i = r % stride;
        uint8_t *l = out + w * rec, *d = l + stride;
        uint64_t k = 0;
        if (r) {
            uint64_t lim = n - (pos > prev ? pos : prev);
            if (lim > IG_LCP_CAP)
                lim = IG_LCP_CAP;
            /* eight bytes at a time: the kernel's rows share 100 bytes and more where it repeats */
            while (k + 8 <= lim) {
                uint64_t x, y;
                memcpy(&x, t + prev + k, 8);
                memcpy(&y, t + pos + k, 8);
                if (x != y)
                    break;
                k += 8;
            }
            while (k < lim && t[prev + k] == t[pos + k])
                k++;
        }
        l[i] = (uint8_t)k;
        /* a row sorts after the one before, so it has a byte at their common prefix */
        d[i] = k < IG_LCP_CAP && pos + k < n ? t[pos + k] : 0;
        prev = pos;
    }
#undef SA_AT
    uint64_t nwin = (n + stride - 1) / stride;
    for (uint64_t w = 0; w < nwin; w++) {
        uint8_t *l = out + w * rec;
        uint64_t used = n - w * stride < stride ? n - w * stride : stride;
        memset(l + used, 0, stride - used); /* rows past the last */
        memset(l + stride + used, 0, stride - used);
        uint64_t sum = htole64(igi_lcp_window_sum(w, sample + w * 8, l, stride));
        memcpy(l + 2 * (uint64_t)stride, &sum, 8);
    }
}

int igi_lcp_window_ok(const ig_shard *s, uint64_t w)
{
    uint64_t nkeys = (s->n + s->stride - 1) / s->stride, bit = IG_CHECK_LCP_BIT(nkeys, w);
    if (ig_shard_checked(s, bit))
        return 1;
    const uint8_t *rec = s->lcp + w * ig_lcp_record(s->stride);
    uint64_t sum = igi_lcp_window_sum(w, s->sample + w * 8, rec, s->stride);
    if (ig_load_le64(rec + 2 * (uint64_t)s->stride) != sum)
        return 0;
    atomic_fetch_or_explicit(&s->checked[bit / 64], (uint64_t)1 << (bit % 64), memory_order_relaxed);
    return 1;
}

int igi_lcp_spot_check(const ig_shard *s)
{
    uint64_t nwin = (s->n + s->stride - 1) / s->stride;
    uint64_t k = nwin < IG_LCP_CHECK_WINDOWS ? nwin : IG_LCP_CHECK_WINDOWS;
    for (uint64_t i = 0; i < k; i++)
        if (!igi_lcp_window_ok(s, k > 1 ? i * (nwin - 1) / (k - 1) : 0))
            return 0;
    return 1;
}

int igi_lcp_open(ig_shard *s, ig_error *err)
{
    const uint8_t *f = s->maps[IG_F_LCP].addr;
    uint64_t ntop = ig_lcp_ntop(s->n, s->stride), nblk = ig_lcp_nblocks(s->n, s->stride);
    uint64_t tb = ig_lcp_top_bytes(s->n, s->stride);
    /* read in one go (their pages would each be a fault of a first search) */
    madvise((void *)f, (size_t)tb, MADV_WILLNEED);
    if (!(s->lcp_top = malloc((size_t)(ntop + nblk) * sizeof *s->lcp_top)))
        return ig_error_set(err, IG_ENOMEM, "out of memory for the top keys of a %" PRIu64 "-byte shard", s->n);
    for (uint64_t t = 0; t < ntop + nblk; t++) {
        uint64_t v;
        memcpy(&v, f + t * 8, 8);
        s->lcp_top[t] = t < ntop ? be64toh(v) : le64toh(v);
    }
    s->ntop = ntop;
    s->lcp_keys = f + tb;
    s->lcp = f + tb + nblk * 4096;
    return 0;
}

int igi_lcp_block_ok(const ig_shard *s, uint64_t b)
{
    uint64_t nkeys = ig_lcp_nkeys(s->n, s->stride), bit = IG_CHECK_LCP_BIT(nkeys, nkeys + b);
    if (ig_shard_checked(s, bit))
        return 1;
    if (igi_lcp_block_sum(b, s->lcp_keys + b * 4096) != s->lcp_top[s->ntop + b])
        return 0;
    atomic_fetch_or_explicit(&s->checked[bit / 64], (uint64_t)1 << (bit % 64), memory_order_relaxed);
    return 1;
}
