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

#include <stdlib.h>
#include <string.h>

typedef struct hit {
    uint64_t doc;
    uint64_t gpos;       ///< global byte position (shard bases added) for ordering
    ig_pos pos;
    uint32_t len;
    uint32_t clause;
} hit;

static int cmp_hit(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    if (x->doc != y->doc)
        return x->doc < y->doc ? -1 : 1;
    if (x->gpos != y->gpos)
        return x->gpos < y->gpos ? -1 : 1;
    return (int)x->clause - (int)y->clause;
}

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
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 1024;
        hit *p = realloc(h->v, nc * sizeof *p);
        if (!p)
            return -1;
        h->v = p;
        h->cap = nc;
    }
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

int ig_search(const ig_index *idx, const uint8_t *const *const *terms, const size_t *const *lens,
              const size_t *nterms, size_t nclauses, uint64_t within, uint64_t budget, uint64_t offset,
              uint64_t limit, ig_search_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    r->scale = 1;
    if (nclauses == 0)
        return ig_error_set(err, IG_EUSAGE, "empty query");
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint64_t *base = calloc(info.shards + 1, sizeof *base);
    ig_range *rg = calloc(info.shards, sizeof *rg);
    hits all = {0};
    size_t *need = calloc(nclauses, sizeof *need);
    int rc = 0;
    if (!base || !rg || !need)
        goto oom;
    for (uint32_t s = 0; s < info.shards; s++) {
        size_t n = SIZE_MAX;
        ig_text(idx, s, 0, &n);
        base[s + 1] = base[s] + n;
    }
    for (size_t c = 0; c < nclauses; c++) {
        uint64_t total = 0;
        for (size_t t = 0; t < nterms[c]; t++) {
            if (lens[c][t] == 0) {
                rc = ig_error_set(err, IG_EUSAGE, "empty term in clause %zu", c + 1);
                goto out;
            }
            total += ig_find(idx, terms[c][t], lens[c][t], rg);
        }
        uint64_t step = 1;
        if (budget && total > budget) {
            step = (total + budget - 1) / budget;
            r->approximate = 1;
            r->scale = (double)total / (double)((total + step - 1) / step);
        }
        for (size_t t = 0; t < nterms[c]; t++) {
            ig_find(idx, terms[c][t], lens[c][t], rg);
            for (uint32_t s = 0; s < info.shards; s++)
                for (uint64_t row = rg[s].lo; row < rg[s].hi; row += step) {
                    uint64_t off = ig_sa_at(idx, s, row);
                    ig_location loc;
                    if (ig_locate_doc(idx, (ig_pos){s, off}, &loc.doc))
                        continue;
                    if (push(&all, (hit){loc.doc, base[s] + off, {s, off}, (uint32_t)lens[c][t], (uint32_t)c}))
                        goto oom;
                }
        }
    }
    if (all.n)
        qsort(all.v, all.n, sizeof *all.v, cmp_hit);
    /* walk documents in order; a document matches if every clause has a hit there */
    size_t cap = 0;
    for (size_t a = 0; a < all.n;) {
        size_t b = a;
        while (b < all.n && all.v[b].doc == all.v[a].doc)
            b++;
        memset(need, 0, nclauses * sizeof *need);
        size_t have = 0;
        for (size_t i = a; i < b; i++)
            if (need[all.v[i].clause]++ == 0)
                have++;
        int ok = have == nclauses && (!within || within_window(all.v, a, b, nclauses, within, need));
        if (ok) {
            if (r->documents_total >= offset && r->documents_total - offset < limit) { /* no overflow */
                if (r->nhits == cap) {
                    cap = cap ? cap * 2 : 16;
                    ig_search_hit *p = realloc(r->hits, cap * sizeof *p);
                    if (!p)
                        goto oom;
                    r->hits = p;
                }
                r->hits[r->nhits++] = (ig_search_hit){all.v[a].doc, b - a, all.v[a].pos, all.v[a].len};
            }
            r->documents_total++;
        }
        a = b;
    }
    goto out;
oom:
    rc = ig_error_set(err, IG_EINTERNAL, "out of memory");
out:
    free(base);
    free(rg);
    free(all.v);
    free(need);
    if (rc)
        ig_search_result_free(r);
    return rc;
}
