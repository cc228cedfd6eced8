/*
 * Occurrence listing in corpus order. The suffix array gives occurrences in suffix
 * order, so the first K in corpus order are selected with a bounded max-heap over
 * (shard, offset): O(count · log K) time and O(K) memory even for a pattern that occurs
 * millions of times, then sorted.
 */
#include "infinigram/query.h"
#include "index/index_impl.h"
#include "query.h"
#include "util/util.h"

#include <stdlib.h>

static inline int pos_less(ig_pos a, ig_pos b)
{
    return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
}

/* the heap keeps the latest of the earliest positions on top, to be replaced first */
static inline int pos_later(const ig_pos *a, const ig_pos *b) { return pos_less(*b, *a); }
IGI_HEAP_DEFINE(pos_heap, ig_pos, pos_later)

/* Offers the occurrences of SA rows [r.lo, r.hi) of shard `sh` to a max-heap that keeps
 * the `max` earliest positions seen (h holds *n of them). */
static void heap_offer(const ig_index *idx, uint32_t sh, ig_range r, ig_pos *h, size_t *n, size_t max)
{
    const ig_shard *s = &idx->shards[sh];
    if (s->neg)
        return;
    for (uint64_t row = r.lo; row < r.hi; row++) {
        ig_pos p = {sh, ig_shard_sa(s, s->pw, row)};
        if (s->nremoved && igi_shard_doc_id(s, igi_shard_doc_of(s, p.offset)) == UINT64_MAX)
            continue;
        if (*n < max) {
            h[*n] = p;
            pos_heap_up(h, (*n)++);
        } else if (pos_less(p, h[0])) {
            h[0] = p;
            pos_heap_down(h, *n, 0);
        }
    }
}

static int cmp_pos(const void *a, const void *b)
{
    ig_pos x = *(const ig_pos *)a, y = *(const ig_pos *)b;
    return pos_less(x, y) ? -1 : pos_less(y, x) ? 1 : 0;
}

/* Per shard: the first `max` occurrences of its interval, in offset order. */
typedef struct shard_job {
    const ig_index *idx;
    const uint8_t *pattern;
    size_t len, max;
    ig_range *ranges;
    ig_pos **out;            ///< per shard, max entries
    size_t *n;
} shard_job;

/* The occurrence a token index's suffix array cannot show (igi_token_tail_match). */
static void tail_offer(const ig_index *idx, uint32_t sh, const uint8_t *p, size_t len, ig_pos *h, size_t *n,
                       size_t max, uint64_t *count)
{
    uint64_t off;
    if (!igi_token_tail_match(idx, &idx->shards[sh], p, len, &off))
        return;
    if (count)
        ++*count;
    ig_pos x = {sh, off};
    if (*n < max) {
        h[*n] = x;
        pos_heap_up(h, (*n)++);
    } else if (max && pos_less(x, h[0])) {
        h[0] = x;
        pos_heap_down(h, *n, 0);
    }
}

static void shard_task(void *ctx, size_t si)
{
    shard_job *j = ctx;
    ig_pos *h = j->out[si];
    size_t n = 0;
    heap_offer(j->idx, (uint32_t)si, j->ranges[si], h, &n, j->max);
    tail_offer(j->idx, (uint32_t)si, j->pattern, j->len, h, &n, j->max, NULL);
    if (n)
        qsort(h, n, sizeof *h, cmp_pos);
    j->n[si] = n;
}

/* Rows above which the shards are scanned in parallel (below, threads cost more). */
#define PARALLEL_ROWS 100000

/* The separator alone on a token index ("a document ends here"): its rows are the separators
 * that precede documents, which stand for the end of the document before — but not before a
 * shard's first document, and the end of a shard's last one has none. So the ends are listed
 * from the documents themselves: where each one's last token ends (the shard's end for the
 * last), in corpus order. */
static size_t document_ends(const ig_index *idx, ig_pos *out, size_t max, uint64_t *total)
{
    uint64_t count = 0;
    size_t n = 0;
    for (uint32_t sh = 0; sh < idx->npos; sh++) {
        const ig_shard *s = &idx->shards[sh];
        for (uint64_t d = 0; d < s->ndocs; d++) {
            if (igi_shard_doc_id(s, d) == UINT64_MAX)
                continue;
            count++;
            if (n < max)
                out[n++] = (ig_pos){sh, d + 1 < s->ndocs ? ig_shard_doc_start(s, d + 1) - idx->tw : s->n};
        }
    }
    if (total)
        *total = count;
    return n;
}

size_t ig_positions(const ig_index *idx, const uint8_t *pattern, size_t len, ig_pos *out, size_t max,
                    uint64_t *total)
{
    if (idx->tw && len == idx->tw && ig_token_at(pattern, idx->tw) == ig_token_end(idx->tw))
        return document_ends(idx, out, max, total);
    uint64_t count = 0;
    size_t n = 0;
    if (igi_pattern_crosses_documents(idx, pattern, len))
        goto done;
    if (idx->pool && max > 0) {
        ig_range *ranges = malloc(idx->nshards * sizeof *ranges);
        count = ranges ? ig_find(idx, pattern, len, ranges) : 0;
        if (ranges && count > PARALLEL_ROWS) {
            shard_job j = {idx, pattern, len, max, ranges, calloc(idx->nshards, sizeof *j.out),
                           calloc(idx->nshards, sizeof *j.n)};
            int ok = j.out && j.n;
            for (uint32_t s = 0; ok && s < idx->nshards; s++)
                ok = (j.out[s] = malloc(max * sizeof **j.out)) != NULL;
            if (ok) {
                igi_pool_run(idx->pool, idx->nshards, shard_task, &j);
                /* shards are in corpus order: concatenating their sorted lists is sorted */
                for (uint32_t s = 0; s < idx->nshards && n < max; s++)
                    for (size_t k = 0; k < j.n[s] && n < max; k++)
                        out[n++] = j.out[s][k];
            }
            for (uint32_t s = 0; j.out && s < idx->nshards; s++)
                free(j.out[s]);
            IGI_FREE(j.out, j.n, ranges);
            if (ok)
                goto done;
            n = 0;
        } else {
            free(ranges);
        }
        count = 0;
    }
    for (uint32_t sh = 0; sh < idx->nshards; sh++) {
        const ig_shard *s = &idx->shards[sh];
        ig_range r = igi_shard_find(idx, s, pattern, len, 0, s->rows, 0);
        count += igi_shard_signed(s, r.hi - r.lo);
        /* Shards are in corpus order: once the heap is full of earlier shards' hits,
         * later shards cannot contribute. */
        if (max == 0 || (n == max && out[0].shard < sh)) {
            uint64_t off;
            count += (uint64_t)igi_token_tail_match(idx, s, pattern, len, &off);
            continue;
        }
        heap_offer(idx, sh, r, out, &n, max);
        tail_offer(idx, sh, pattern, len, out, &n, max, &count);
    }
    if (n)
        qsort(out, n, sizeof *out, cmp_pos);
done:
    if (total)
        *total = count;
    return n;
}

int igi_ranges_first_shown(const ig_index *idx, const ig_range *r, ig_pos *out)
{
    for (uint32_t sh = 0; sh < idx->npos; sh++) {
        const ig_shard *s = &idx->shards[sh];
        for (uint64_t row = r[sh].lo; row < r[sh].hi; row++) {
            uint64_t off = ig_shard_sa(s, s->pw, row);
            if (!s->nremoved || igi_shard_doc_id(s, igi_shard_doc_of(s, off)) != UINT64_MAX) {
                *out = (ig_pos){sh, off};
                return 1;
            }
        }
    }
    return 0;
}
