/*
 * Occurrence listing in corpus order. The suffix array gives occurrences in suffix
 * order, so the first K in corpus order are selected with a bounded max-heap over
 * (shard, offset): O(count · log K) time and O(K) memory even for a pattern that occurs
 * millions of times, then sorted.
 */
#include "index/index_impl.h"

#include <stdlib.h>

static inline int pos_less(ig_pos a, ig_pos b)
{
    return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
}

static void sift_down(ig_pos *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < n && pos_less(h[big], h[l]))
            big = l;
        if (r < n && pos_less(h[big], h[r]))
            big = r;
        if (big == i)
            return;
        ig_pos t = h[i];
        h[i] = h[big];
        h[big] = t;
        i = big;
    }
}

static void sift_up(ig_pos *h, size_t i)
{
    while (i && pos_less(h[(i - 1) / 2], h[i])) {
        ig_pos t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static int cmp_pos(const void *a, const void *b)
{
    ig_pos x = *(const ig_pos *)a, y = *(const ig_pos *)b;
    return pos_less(x, y) ? -1 : pos_less(y, x) ? 1 : 0;
}

size_t ig_positions(const ig_index *idx, const uint8_t *pattern, size_t len, ig_pos *out,
                    size_t max, uint64_t *total)
{
    uint64_t count = 0;
    size_t n = 0;
    if (ig_pattern_crosses_documents(pattern, len))
        goto done;
    for (uint32_t sh = 0; sh < idx->nshards; sh++) {
        const ig_shard *s = &idx->shards[sh];
        ig_range r = ig_shard_find(idx, s, pattern, len, 0, s->n, 0);
        count += r.hi - r.lo;
        /* Shards are in corpus order: once the heap is full of earlier shards' hits,
         * later shards cannot contribute. */
        if (max == 0 || (n == max && out[0].shard < sh))
            continue;
        for (uint64_t row = r.lo; row < r.hi; row++) {
            ig_pos p = {sh, ig_shard_sa(s, idx->pw, row)};
            if (n < max) {
                out[n] = p;
                sift_up(out, n++);
            } else if (pos_less(p, out[0])) {
                out[0] = p;
                sift_down(out, n, 0);
            }
        }
    }
    if (n)
        qsort(out, n, sizeof *out, cmp_pos);
done:
    if (total)
        *total = count;
    return n;
}
