/*
 * Maximal matching spans (OLMoTrace) from matching statistics: m(i) is the length of
 * the longest prefix of text[i..] that occurs in the corpus. Since m(i+1) ≥ m(i) − 1,
 * each position starts from the previous answer: one full search for m(i−1) bytes
 * (known to occur, so it can be skipped: we search for one byte more), then one narrowing
 * search per extra byte. Over the whole text that is at most 2·|text| + O(1) searches
 * (reported in *searches; spans that are kept are counted once more when needed).
 */
#include "infinigram/generate.h"
#include "query.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static int is_word(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int cmp_span(const void *a, const void *b)
{
    const ig_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->length > y->length ? -1 : x->length < y->length;
}

void ig_span_options_default(ig_span_options *o)
{
    memset(o, 0, sizeof *o);
    o->min_len = 8;
}

/* What ig_spans knows of a candidate's count: the match's, when the candidate is the whole
 * prefix matched at its start (not cut to words), else a count of its own. */
typedef struct span_counts {
    const ig_index *idx;
    const uint8_t *text;
    const uint64_t *ms, *cnt;
} span_counts;

static int count_known(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err)
{
    (void)err;
    const span_counts *k = user;
    *count = k->ms[start] == length && k->cnt[start] != UINT64_MAX ? k->cnt[start]
                                                                   : ig_count(k->idx, k->text + start, (size_t)length);
    return 0;
}

int ig_spans_from_matching(const uint8_t *text, size_t len, const uint64_t *m, const ig_span_options *o,
                           ig_span_count_fn count, void *user, ig_span **spans, size_t *nspans, ig_error *err)
{
    *spans = NULL;
    *nspans = 0;
    ig_span *out = NULL;
    size_t nout = 0;
    int rc = 0;
    /* candidate spans: trimmed to words if asked, recounted, filtered, then maximal */
    uint64_t reach = 0, kept_reach = 0;
    size_t cap = 0;
    for (size_t i = 0; i < len; i++) {
        if (!m[i])
            continue;
        uint64_t a = i, b = i + m[i], c = 0;
        if (o && o->words) {
            while (a < b && !(a == 0 || !is_word(text[a - 1]) || !is_word(text[a])))
                a++;
            while (b > a && !(b == len || !is_word(text[b]) || !is_word(text[b - 1])))
                b--;
            /* a span may not start or end in the middle of a non-word run of spaces */
            while (a < b && text[a] == ' ')
                a++;
            while (b > a && text[b - 1] == ' ')
                b--;
            if (a >= b)
                continue;
        }
        uint64_t min_len = o && o->min_len ? o->min_len : 8;
        if (b - a < min_len)
            continue;
        /* Starts and ends only grow with i (m(i+1) >= m(i) - 1, and trimming keeps the
         * order), so a candidate ending within one already kept is not maximal: the pass
         * below would drop it. Skipping it before its count keeps a text that is one long
         * copy linear instead of one long count per position. */
        if (b <= kept_reach)
            continue;
        if ((i & 255) == 0 && o && ig_cancelled(o->cancel)) {
            rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
            goto done;
        }
        if (count && (rc = count(user, a, b - a, &c, err))) /* kept spans only: not matching-statistics work */
            goto done;
        if (o && o->max_count && c > o->max_count)
            continue;
        if (igi_grow(&out, nout, &cap, sizeof *out, 16)) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            goto done;
        }
        out[nout++] = (ig_span){a, b - a, c};
        kept_reach = b;
    }
    /* Keep the maximal ones: trimming to words can move a start forward onto a later
     * span's start, so sort by start (longest first on ties) before dropping every span
     * that ends within an earlier one. */
    if (nout)
        qsort(out, nout, sizeof *out, cmp_span);
    size_t kept = 0;
    for (size_t k = 0; k < nout; k++) {
        uint64_t end = out[k].start + out[k].length;
        if (end <= reach)
            continue;
        reach = end;
        out[kept++] = out[k];
    }
    nout = kept;
done:
    if (rc) {
        free(out);
        return rc;
    }
    *spans = out;
    *nspans = nout;
    return 0;
}

uint64_t ig_spans_searches(const uint64_t *m, size_t len)
{
    uint64_t searches = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t L = i == 0 || m[i - 1] == 0 ? 0 : m[i - 1] - 1;
        if (i + L >= len)
            continue;
        searches++; /* the L+1 bytes */
        if (m[i] > L) /* then one more byte at a time, up to the one that fails or the text's end */
            searches += m[i] - L - 1 + (i + m[i] < len);
    }
    return searches;
}

int ig_spans(const ig_index *idx, const uint8_t *text, size_t len, const ig_span_options *o, ig_span **spans,
             size_t *nspans, uint64_t **ms_out, uint64_t *searches_out, ig_error *err)
{
    *spans = NULL;
    *nspans = 0;
    if (ms_out)
        *ms_out = NULL;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint64_t *m = calloc(len ? len : 1, sizeof *m), *cnt = calloc(len ? len : 1, sizeof *cnt);
    ig_range *r1 = calloc(info.shards, sizeof *r1), *r2 = calloc(info.shards, sizeof *r2);
    ig_span *out = NULL;
    size_t nout = 0;
    uint64_t searches = 0;
    int rc = 0;
    if (!m || !cnt || !r1 || !r2) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < len; i++) {
        if ((i & 255) == 0 && o && ig_cancelled(o->cancel)) {
            rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
            goto done;
        }
        uint64_t L = i == 0 || m[i - 1] == 0 ? 0 : m[i - 1] - 1;
        if (i + L >= len) {
            m[i] = L;
            cnt[i] = UINT64_MAX; /* counted later if the span is kept */
            continue;
        }
        ig_match cur = {.r = r1}, nxt = {.r = r2};
        igi_match_find(idx, text + i, L + 1, &cur);
        searches++;
        if (cur.count == 0) {
            m[i] = L;
            /* the count of the L-byte prefix is only needed for spans that are kept;
             * it is computed then */
            cnt[i] = UINT64_MAX;
            continue;
        }
        L++;
        while (i + L < len) {
            if ((L & 255) == 0 && o && ig_cancelled(o->cancel)) { /* one match can run the text's length */
                rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
                goto done;
            }
            igi_match_extend(idx, &cur, text + i, text[i + L], &nxt);
            searches++;
            if (nxt.count == 0)
                break;
            ig_match t = cur;
            cur = nxt;
            nxt = t;
            L++;
        }
        m[i] = L;
        cnt[i] = cur.count;
    }
    rc = ig_spans_from_matching(text, len, m, o, count_known, &(span_counts){idx, text, m, cnt}, &out, &nout, err);
done:
    IGI_FREE(cnt, r1, r2);
    if (rc) {
        free(out);
        free(m);
        return rc;
    }
    *spans = out;
    *nspans = nout;
    if (searches_out)
        *searches_out = searches;
    if (ms_out)
        *ms_out = m;
    else
        free(m);
    return 0;
}

void igi_matching_from_ends(const uint64_t *e, size_t len, uint64_t *m)
{
    size_t j = 0; /* the ends j (exclusive, 1..len) with j − e[j − 1] ≤ i are exactly j ≤ this */
    for (size_t i = 0; i < len; i++) {
        if (j < i)
            j = i;
        while (j < len && j + 1 - e[j] <= i)
            j++;
        m[i] = j - i;
    }
}

double ig_novelty(const uint64_t *ms, size_t len, uint64_t n)
{
    if (!len)
        return 0;
    uint64_t reach = 0, uncovered = 0;
    for (size_t j = 0; j < len; j++) {
        if (ms[j] >= n && j + ms[j] > reach)
            reach = j + ms[j];
        uncovered += reach <= j;
    }
    return (double)uncovered / (double)len;
}
