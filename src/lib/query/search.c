/*
 * CNF document search: a clause is an OR of terms, the query an AND of clauses. Each
 * term's occurrences (suffix-array rows) become document ids; a clause's documents are
 * the union, the query's the intersection, computed from the rarest clause. With a
 * proximity window, a document matches only if one hit per clause can be chosen with
 * all hit starts within the window. Past a budget of occurrences a clause is sampled
 * (every k-th row); the result then says it is approximate and by how much it scaled.
 */
#include "infinigram/generate.h"
#include "query.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct hit {
    uint64_t gpos;       ///< global byte position (shard bases added): corpus order
    uint32_t clause;
    uint32_t len;        ///< length of the term that hit
} hit;

/* LSD radix sort by gpos, 16 bits a pass: hits come from suffix-array order, which is
 * unrelated to corpus order, and comparison sorts of tens of thousands of them cost
 * more than everything else in a query. */
static int by_gpos(const void *a, const void *b)
{
    uint64_t x = ((const hit *)a)->gpos, y = ((const hit *)b)->gpos;
    return (x > y) - (x < y);
}

static int radix_sort(hit *v, size_t n, uint64_t max_key)
{
    if (n < 16384) { /* the 64 K-bucket passes only pay off on large inputs */
        if (n > 1)
            qsort(v, n, sizeof *v, by_gpos);
        return 0;
    }
    hit *tmp = malloc(n * sizeof *tmp);
    size_t *count = malloc(65536 * sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return -1;
    }
    for (int shift = 0; shift < 64 && (max_key >> shift); shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(v[i].gpos >> shift) & 0xFFFF]++;
        size_t sum = 0;
        for (size_t k = 0; k < 65536; k++) {
            size_t c = count[k];
            count[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i].gpos >> shift) & 0xFFFF]++] = v[i];
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
    free(count);
    return 0;
}

/* A matching document: its global byte range [start, end) (0xFF included). */
typedef struct cand {
    uint64_t doc;
    uint64_t start, end;
    int seen;            ///< hit by the clause being checked
} cand;

void ig_search_result_free(ig_search_result *r)
{
    if (r) {
        free(r->hits);
        r->hits = NULL;
        r->nhits = 0;
    }
}

typedef struct hits {
    hit *v;
    size_t n, cap;
} hits;

static int push(hits *h, hit x)
{
    if (igi_grow(&h->v, h->n, &h->cap, sizeof *h->v, 1024))
        return -1;
    h->v[h->n++] = x;
    return 0;
}

/* Smallest window over the document's hits [a, b) (sorted by position) that holds a
 * hit of every clause: the classic sliding window. */
static int within_window(const hit *v, size_t a, size_t b, size_t nclauses, uint64_t w, size_t *need)
{
    memset(need, 0, nclauses * sizeof *need);
    size_t have = 0, lo = a;
    for (size_t i = a; i < b; i++) {
        if (need[v[i].clause]++ == 0)
            have++;
        while (have == nclauses) {
            if (v[i].gpos - v[lo].gpos <= w)
                return 1;
            if (--need[v[lo].clause] == 0)
                have--;
            lo++;
        }
    }
    return 0;
}

/* Clauses rarest first, ties in clause order (an insertion sort: there are few). */
static void rarest_first(const uint64_t *total, size_t nclauses, size_t *order)
{
    for (size_t c = 0; c < nclauses; c++)
        order[c] = c;
    for (size_t i = 1; i < nclauses; i++)
        for (size_t j = i; j > 0 && total[order[j]] < total[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

/* A clause's sampling step: every row, or past the budget every ⌈total / budget⌉-th. */
static uint64_t sample_step(uint64_t total, uint64_t budget)
{
    return budget && total > budget ? (total + budget - 1) / budget : 1;
}

void ig_search_sampling(const uint64_t *totals, size_t nclauses, uint64_t budget, size_t processed, int *approximate,
                        double *scale)
{
    *approximate = 0;
    *scale = 1;
    size_t *order = malloc((nclauses ? nclauses : 1) * sizeof *order);
    if (!order) { /* the order only decides which clauses count: without it, all of them do */
        processed = nclauses;
    }
    if (order)
        rarest_first(totals, nclauses, order);
    for (size_t k = 0; k < processed && k < nclauses; k++) {
        uint64_t t = totals[order ? order[k] : k], step = sample_step(t, budget);
        if (step == 1)
            continue;
        *approximate = 1;
        double sc = (double)t / (double)((t + step - 1) / step);
        if (sc > *scale)
            *scale = sc;
    }
    free(order);
}

int ig_search(const ig_index *idx, const uint8_t *const *const *terms, const size_t *const *lens,
              const size_t *nterms, size_t nclauses, uint64_t within, uint64_t budget, uint64_t offset,
              uint64_t limit, ig_search_result *r, ig_error *err)
{
    size_t processed;
    return ig_search_part(idx, terms, lens, nterms, nclauses, within, budget, offset, limit, NULL, &processed, NULL,
                          r, err);
}

int ig_search_part(const ig_index *idx, const uint8_t *const *const *terms, const size_t *const *lens,
                   const size_t *nterms, size_t nclauses, uint64_t within, uint64_t budget, uint64_t offset,
                   uint64_t limit, const uint64_t *totals, size_t *processed, const volatile int *cancel,
                   ig_search_result *r, ig_error *err)
{
    *processed = 0;
    memset(r, 0, sizeof *r);
    r->scale = 1;
    if (nclauses == 0)
        return ig_error_set(err, IG_EUSAGE, "empty query");
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint64_t *base = calloc(info.shards + 1, sizeof *base), *total = calloc(nclauses, sizeof *total);
    size_t *order = calloc(nclauses, sizeof *order), *need = calloc(nclauses, sizeof *need);
    /* each term's suffix-array range in every shard, found once: term k of the query (in
     * clause order) at rgs[k × shards] */
    size_t allterms = 0;
    for (size_t c = 0; c < nclauses; c++)
        allterms += nterms[c];
    ig_range *rgs = calloc((allterms ? allterms : 1) * info.shards, sizeof *rgs), *rg;
    hits all = {0}, ch = {0};
    cand *cands = NULL;
    size_t ncands = 0, cands_cap = 0;
    int rc = 0;
    if (!base || !rgs || !need || !total || !order)
        goto oom;
    for (uint32_t s = 0; s < info.shards; s++) {
        size_t n = SIZE_MAX;
        ig_text(idx, s, 0, &n);
        base[s + 1] = base[s] + n;
    }
    rg = rgs;
    for (size_t c = 0; c < nclauses; c++) {
        for (size_t t = 0; t < nterms[c]; t++, rg += info.shards) {
            if (lens[c][t] == 0) {
                rc = ig_error_set(err, IG_EUSAGE, "empty term in clause %zu", c + 1);
                goto out;
            }
            total[c] += ig_find(idx, terms[c][t], lens[c][t], rg);
        }
        if (totals) /* a part: the corpus's totals decide the order and the sampling */
            total[c] = totals[c];
    }
    /* the rows this search will read, before it holds any: its memory is bounded */
    uint64_t rows = 0;
    rg = rgs;
    for (size_t c = 0; c < nclauses; c++) {
        uint64_t step = sample_step(total[c], budget);
        for (size_t t = 0; t < nterms[c]; t++, rg += info.shards) {
            for (uint32_t s = 0; s < info.shards; s++)
                rows += (rg[s].hi - rg[s].lo + step - 1) / step;
        }
    }
    if (rows > IG_SEARCH_MAX_ROWS) {
        rc = ig_error_set(err, IG_EUSAGE,
                          "{budget}: this search would read %llu occurrences, more than %llu; give a smaller budget "
                          "(each clause is then sampled) or rarer terms",
                          (unsigned long long)rows, (unsigned long long)IG_SEARCH_MAX_ROWS);
        goto out;
    }
    /* rarest clause first: it bounds the candidate documents of all the others */
    rarest_first(total, nclauses, order);
    size_t k;
    for (k = 0; k < nclauses; k++) {
        size_t c = order[k];
        uint64_t step = sample_step(total[c], budget);
        ch.n = 0;
        size_t at = 0; /* the clause's first term among all */
        for (size_t j = 0; j < c; j++)
            at += nterms[j];
        rg = rgs + at * info.shards;
        for (size_t t = 0; t < nterms[c]; t++, rg += info.shards) {
            for (uint32_t s = 0; s < info.shards; s++)
                for (uint64_t row = rg[s].lo; row < rg[s].hi; row += step) {
                    if ((ch.n & 0xFFFF) == 0 && ig_cancelled(cancel))
                        goto cancelled;
                    if (push(&ch, (hit){base[s] + ig_sa_at(idx, s, row), (uint32_t)c, (uint32_t)lens[c][t]}))
                        goto oom;
                }
        }
        if (radix_sort(ch.v, ch.n, base[info.shards]))
            goto oom;
        if (k == 0) {
            /* the candidates: documents of the rarest clause, found once per document */
            for (size_t i = 0; i < ch.n; i++) {
                if ((i & 0xFFFF) == 0 && ig_cancelled(cancel))
                    goto cancelled;
                if (ncands && ch.v[i].gpos < cands[ncands - 1].end)
                    continue;
                uint32_t s = 0;
                while (ch.v[i].gpos >= base[s + 1])
                    s++;
                ig_doc d;
                uint64_t id;
                ig_error e2;
                if (ig_locate_doc(idx, (ig_pos){s, ch.v[i].gpos - base[s]}, &id) || ig_doc_get(idx, id, &d, &e2))
                    continue;
                if (igi_grow(&cands, ncands, &cands_cap, sizeof *cands, 64))
                    goto oom;
                cands[ncands++] = (cand){id, base[s] + d.start, base[s] + d.start + d.length + 1, 0};
            }
        }
        /* keep the hits inside candidates (one merge walk), and the candidates hit */
        size_t ci = 0;
        for (size_t i = 0; i < ch.n; i++) {
            while (ci < ncands && cands[ci].end <= ch.v[i].gpos)
                ci++;
            if (ci == ncands)
                break;
            if (ch.v[i].gpos < cands[ci].start)
                continue;
            cands[ci].seen = 1;
            if (push(&all, ch.v[i]))
                goto oom;
        }
        size_t kept = 0;
        for (size_t i = 0; i < ncands; i++)
            if (cands[i].seen) {
                cands[i].seen = 0;
                cands[kept++] = cands[i];
            }
        ncands = kept;
        if (!ncands) {
            k++;
            break;
        }
    }
    *processed = k;
    ig_search_sampling(total, nclauses, budget, k, &r->approximate, &r->scale);
    if (radix_sort(all.v, all.n, base[info.shards]))
        goto oom;
    /* each surviving candidate has hits of every clause; check proximity and page */
    size_t cap = 0, a = 0;
    for (size_t ci = 0; ci < ncands; ci++) {
        if ((ci & 0xFFFF) == 0 && ig_cancelled(cancel))
            goto cancelled;
        while (a < all.n && all.v[a].gpos < cands[ci].start)
            a++;
        size_t b = a;
        while (b < all.n && all.v[b].gpos < cands[ci].end)
            b++;
        if (within && !within_window(all.v, a, b, nclauses, within, need)) {
            a = b;
            continue;
        }
        if (r->documents_total >= offset && r->documents_total - offset < limit) { /* no overflow */
            if (igi_grow(&r->hits, r->nhits, &cap, sizeof *r->hits, 16))
                goto oom;
            uint32_t s = 0;
            while (all.v[a].gpos >= base[s + 1])
                s++;
            r->hits[r->nhits++] = (ig_search_hit){cands[ci].doc, b - a, {s, all.v[a].gpos - base[s]}, all.v[a].len};
        }
        r->documents_total++;
        a = b;
    }
    goto out;
cancelled:
    rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
    goto out;
oom:
    rc = ig_error_set(err, IG_ENOMEM, "out of memory");
out:
    IGI_FREE(base, total, order, rgs, all.v, ch.v, cands, need);
    if (rc)
        ig_search_result_free(r);
    return rc;
}
