/* spans: see spans.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "spans.h"
#include "cluster.h"
#include "command.h"
#include "generate.h"
#include "parts.h"

void do_matching(wire_rd *q, wire *w)
{
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = 1;
    ig_error e = {0};
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    ig_span *sp = NULL;
    size_t nsp = 0;
    uint64_t *ms = NULL;
    int rc = request_ready(q, 1, &e);
    if (!rc)
        rc = ig_spans(g.idx, p ? p : (const uint8_t *)"", n, &so, &sp, &nsp, &ms, NULL, &e);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, rc ? 0 : n);
    for (size_t i = 0; !rc && i < n; i++)
        wire_u64(w, ms[i]);
    free(sp);
    free(ms);
}

/* Appends ids[n] to a growing array. -1 when memory ran out. */
static int grow_u64(uint64_t **a, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    uint64_t *p = realloc(*a, c * sizeof *p);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* spans --rank bm25, this part's side: its BM25 statistics for the text's terms, then each
 * document of ids[0, n) (this part's numbering; sorted here, repeats dropped) with its length
 * in terms, hash, size and term frequencies. */
static int put_bm25(wire *out, const uint8_t *text, size_t tn, uint64_t *ids, size_t n, ig_error *e)
{
    qsort(ids, n, sizeof *ids, cmp_u64);
    size_t u = 0;
    for (size_t j = 0; j < n; j++)
        if (!u || ids[u - 1] != ids[j])
            ids[u++] = ids[j];
    ig_bm25_part st;
    ig_bm25_doc *d = calloc(u ? u : 1, sizeof *d);
    int rc = d ? ig_bm25_part_get(g.idx, text, tn, NULL, &st, e) : ig_error_set(e, IG_ENOMEM, "out of memory");
    if (!rc && (rc = ig_bm25_docs_get(g.idx, text, tn, ids, u, NULL, d, e)))
        ig_bm25_part_free(&st);
    if (rc) {
        free(d);
        return rc;
    }
    wire_u64(out, st.docs);
    wire_u64(out, st.total_terms);
    wire_u64(out, st.nterms);
    for (size_t i = 0; i < st.nterms; i++) {
        wire_u32(out, st.qf[i]);
        wire_u64(out, st.df[i]);
    }
    wire_u64(out, u);
    for (size_t j = 0; j < u; j++) {
        wire_u64(out, d[j].id);
        wire_u32(out, d[j].dl);
        wire_u64(out, d[j].hash);
        wire_u64(out, d[j].len);
        for (size_t i = 0; i < st.nterms; i++)
            wire_u32(out, d[j].tf[i]);
    }
    ig_bm25_docs_free(d, u);
    free(d);
    ig_bm25_part_free(&st);
    return 0;
}

void do_doctexts(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint64_t n = wire_get_u64(q);
    int rc = request_ready(q, n <= q->n, &e);
    wire out = {0};
    for (uint64_t i = 0; !rc && i < n; i++) {
        uint32_t r = wire_get_u32(q);
        uint64_t id = wire_get_u64(q);
        if (q->bad) {
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
            break;
        }
        if ((int)r != g.rank)
            continue;
        ig_doc doc;
        if ((rc = ig_doc_get(g.idx, id, &doc, &e)))
            break;
        size_t len = (size_t)doc.length;
        const uint8_t *t = ig_text(g.idx, doc.shard, doc.start, &len);
        wire_u64(&out, id);
        wire_bytes(&out, t, (size_t)doc.length);
    }
    reply_answer(w, rc, &e, &out);
}

void do_spans(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t tn;
    const uint8_t *text = wire_get_bytes(q, &tn);
    ig_spans_opts so;
    ig_spans_defaults(&so);
    so.positions = wire_get_u64(q);
    int bm25 = (int)wire_get_u32(q);
    uint64_t n = wire_get_u64(q);
    ig_span *sp = !q->bad && n <= q->n ? calloc(n ? n : 1, sizeof *sp) : NULL;
    int rc = q->bad || n > q->n ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !sp              ? ig_error_set(&e, IG_ENOMEM, "out of memory")
             : !g.idx           ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                                : 0;
    for (uint64_t i = 0; !rc && i < n; i++) {
        sp[i].start = wire_get_u64(q);
        sp[i].length = wire_get_u64(q);
        if (q->bad || sp[i].start > tn || sp[i].length > tn - sp[i].start)
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
        else
            sp[i].count = ig_count(g.idx, text + sp[i].start, (size_t)sp[i].length);
    }
    ig_error scratch;
    int list = !rc && so.positions && !ig_spans_check_listed(&so, sp, (size_t)n, &scratch);
    wire out = {0};
    uint64_t *ids = NULL; /* ranked: the documents listed */
    size_t nids = 0, idcap = 0;
    for (uint64_t i = 0; !rc && i < n; i++) {
        wire_u64(&out, sp[i].count);
        wire_u32(&out, (uint32_t)list);
        if (!list)
            continue;
        ig_occurrence *occ = NULL;
        size_t nocc = 0;
        uint64_t total;
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        if ((rc = ig_occurrences(&ctx, text + sp[i].start, (size_t)sp[i].length, (size_t)so.positions, -1, &occ, &nocc,
                                 &total, &e)))
            break;
        wire_u64(&out, nocc);
        for (size_t k = 0; k < nocc; k++) {
            put_occ(&out, &occ[k]);
            if (bm25 && !(nids && ids[nids - 1] == occ[k].loc.doc)) {
                if (grow_u64(&ids, nids, &idcap)) {
                    rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
                    break;
                }
                ids[nids++] = occ[k].loc.doc;
            }
        }
        ig_occurrences_free(occ, nocc);
    }
    if (!rc && bm25)
        rc = put_bm25(&out, text, tn, ids, nids, &e);
    reply_answer(w, rc, &e, &out);
    free(ids);
    free(sp);
}

/* The parts' matching statistics of a text of len bytes, their maxima per position in m. */
typedef struct matching_max {
    size_t len;
    uint64_t *m;
} matching_max;

/* Rank k's matching statistics (do_matching's reply) into the maxima u (made at the first). */
static int max_matching(void *u, int k, wire_rd *rd, ig_error *err)
{
    matching_max *s = u;
    if (k == 0 && !(s->m = calloc(s->len ? s->len : 1, sizeof *s->m)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    return wire_get_max_u64s(rd, s->m, s->len) ? garbled(err, k) : 0;
}

int gen_matching(void *user, const uint8_t *text, size_t len, uint64_t **ms, ig_error *err)
{
    (void)user;
    wire w = {0};
    wire_u32(&w, OP_MATCHING);
    wire_bytes(&w, text, len);
    matching_max s = {len, NULL};
    int rc = ask_each(&w, 0, max_matching, &s, err);
    if (rc) {
        free(s.m);
        return rc;
    }
    *ms = s.m;
    return 0;
}

/* ---- spans: maximal over the union of the parts */

/* spans --rank bm25 on rank 0: the parts' statistics summed, and every document they listed
 * (numbered in the corpus, by rank then id) with the rank holding it. */
typedef struct ranked_parts {
    ig_bm25_part sum;
    int have;              ///< sum holds a part's statistics
    ig_bm25_doc *d;
    int *rank;             ///< d[i] is held by rank[i], numbered there d[i].id − base[i]
    uint64_t *base;
    size_t n, cap;
} ranked_parts;

static void ranked_parts_free(ranked_parts *rp)
{
    ig_bm25_part_free(&rp->sum);
    ig_bm25_docs_free(rp->d, rp->n);
    free(rp->d);
    free(rp->rank);
    free(rp->base);
    memset(rp, 0, sizeof *rp);
}

/* Reads rank k's statistics and documents (put_bm25) into rp, its documents numbered `base` more. */
static int get_bm25(wire_rd *lr, int k, uint64_t base, ranked_parts *rp, ig_error *e)
{
    ig_bm25_part st = {0};
    st.docs = wire_get_u64(lr);
    st.total_terms = wire_get_u64(lr);
    uint64_t nt = wire_get_u64(lr);
    if (lr->bad || nt > lr->n)
        return garbled(e, k);
    st.nterms = (size_t)nt;
    if (!(st.qf = calloc(nt ? nt : 1, sizeof *st.qf)) || !(st.df = calloc(nt ? nt : 1, sizeof *st.df))) {
        ig_bm25_part_free(&st);
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    }
    for (uint64_t i = 0; i < nt; i++) {
        st.qf[i] = wire_get_u32(lr);
        st.df[i] = wire_get_u64(lr);
    }
    int rc = 0;
    if (lr->bad) {
        rc = garbled(e, k);
    } else if (!rp->have) { /* the first part's: the sum so far */
        rp->sum = st;
        rp->have = 1;
        memset(&st, 0, sizeof st);
    } else {
        rc = ig_bm25_part_add(&rp->sum, &st, e);
    }
    ig_bm25_part_free(&st);
    uint64_t nd = rc ? 0 : wire_get_u64(lr);
    if (!rc && (lr->bad || nd > lr->n))
        rc = garbled(e, k);
    for (uint64_t j = 0; !rc && j < nd; j++) {
        if (rp->n == rp->cap) {
            size_t c = rp->cap ? 2 * rp->cap : 64;
            ig_bm25_doc *d = realloc(rp->d, c * sizeof *d);
            if (d)
                rp->d = d;
            int *r = d ? realloc(rp->rank, c * sizeof *r) : NULL;
            if (r)
                rp->rank = r;
            uint64_t *b = r ? realloc(rp->base, c * sizeof *b) : NULL;
            if (b)
                rp->base = b;
            if (!b) {
                rc = ig_error_set(e, IG_ENOMEM, "out of memory");
                break;
            }
            rp->cap = c;
        }
        ig_bm25_doc *d = &rp->d[rp->n];
        d->id = base + wire_get_u64(lr);
        d->dl = wire_get_u32(lr);
        d->hash = wire_get_u64(lr);
        d->len = wire_get_u64(lr);
        if (!(d->tf = calloc(nt ? nt : 1, sizeof *d->tf))) {
            rc = ig_error_set(e, IG_ENOMEM, "out of memory");
            break;
        }
        for (uint64_t i = 0; i < nt; i++)
            d->tf[i] = wire_get_u32(lr);
        rp->rank[rp->n] = k;
        rp->base[rp->n++] = base;
        if (lr->bad)
            rc = garbled(e, k);
    }
    return rc;
}

static int cmp_cand_id(const void *key, const void *elt)
{
    uint64_t k = *(const uint64_t *)key, id = ((const ig_rank_cand *)elt)->id;
    return k < id ? -1 : k > id;
}

static int cmp_cand_hash(const void *a, const void *b)
{
    const ig_rank_cand *x = *(ig_rank_cand *const *)a, *y = *(ig_rank_cand *const *)b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* spans --rank bm25 over the parts: each candidate source document scored with the corpus's
 * statistics (the parts' sums) as one index scores it; documents that may be identical (equal
 * hash and size) have their bytes fetched from their parts to compare (1 round trip, only
 * then); ig_spans_rank orders and folds as one index does. */
static int rank_parts(ig_spans_result *r, const ig_spans_opts *o, ranked_parts *rp, ig_error *e)
{
    /* rp->d is in corpus order: rank by rank, each part's ids sorted */
    ig_rank_cand *c = calloc(rp->n ? rp->n : 1, sizeof *c);
    ig_rank_cand **byhash = calloc(rp->n ? rp->n : 1, sizeof *byhash);
    REPLIES(rep, nrep);
    int rc = !c || !byhash ? ig_error_set(e, IG_ENOMEM, "out of memory ranking sources") : 0;
    if (!rc && !rp->have)
        rc = ig_error_set(e, IG_EINTERNAL, "no part sent its BM25 statistics");
    for (size_t j = 0; !rc && j < rp->n; j++) {
        c[j] = (ig_rank_cand){rp->d[j].id, ig_bm25_score(&rp->sum, rp->d[j].dl, rp->d[j].tf, o->k1, o->b),
                              rp->d[j].hash, rp->d[j].len, NULL};
        byhash[j] = &c[j];
    }
    size_t nfetch = 0;
    if (!rc) {
        qsort(byhash, rp->n, sizeof *byhash, cmp_cand_hash);
        for (size_t j = 0; j < rp->n; j++) {
            int same_prev = j && byhash[j - 1]->hash == byhash[j]->hash && byhash[j - 1]->len == byhash[j]->len;
            int same_next = j + 1 < rp->n && byhash[j + 1]->hash == byhash[j]->hash && byhash[j + 1]->len == byhash[j]->len;
            if (same_prev || same_next) {
                byhash[j]->text = (const uint8_t *)""; /* marked: to fetch */
                nfetch++;
            }
        }
    }
    if (!rc && nfetch) {
        wire w = {0};
        wire_u32(&w, OP_DOCTEXTS);
        wire_u64(&w, nfetch);
        for (size_t j = 0; j < rp->n; j++)
            if (c[j].text) {
                wire_u32(&w, (uint32_t)rp->rank[j]);
                wire_u64(&w, c[j].id - rp->base[j]);
            }
        rc = ask_all(&w, rep, nrep, e);
        for (size_t j = 0; !rc && j < rp->n; j++)
            c[j].text = NULL;
        uint64_t base = 0;
        for (int k = 0; !rc && k < g.size; base += g.docs[k], k++) {
            wire_rd lr = answer_of(rep, nrep, k);
            while (!lr.bad && lr.at < lr.n) {
                uint64_t id = base + wire_get_u64(&lr);
                size_t bn;
                const uint8_t *bp = wire_get_bytes(&lr, &bn);
                ig_rank_cand *hit = bsearch(&id, c, rp->n, sizeof *c, cmp_cand_id);
                if (lr.bad || !hit || bn != hit->len)
                    lr.bad = 1;
                else
                    hit->text = bp;
            }
            if (lr.bad)
                rc = garbled(e, k);
        }
    }
    if (!rc) /* c is sorted by id: rank by rank, and each rank's ids sorted and numbered past the ranks' before */
        rc = ig_spans_rank(r, c, rp->n, (size_t)o->positions, e);
    free_replies(rep);
    free(byhash);
    free(c);
    return rc;
}

/* The parts' counts of spans sp[0, n) of text, summed into sp[i].count, and when `listed` is
 * not 0 each span's first `listed` occurrences in corpus order (rank 0's first, documents
 * numbered past the ranks' before) appended to src[i] (malloc'd, with malloc'd names): 1 round
 * trip. *unlisted is set when a part held its occurrences back (a request listing too many). */
static int parts_spans(const uint8_t *text, size_t len, ig_span *sp, size_t n, uint64_t listed, ig_occurrence **src,
                       size_t *nsrc, int *unlisted, ranked_parts *rp, ig_error *e)
{
    REPLIES(rep, nrep);
    wire w = {0};
    wire_u32(&w, OP_SPANS);
    wire_bytes(&w, text, len);
    wire_u64(&w, listed);
    wire_u32(&w, rp != NULL);
    wire_u64(&w, n);
    for (size_t i = 0; i < n; i++) {
        wire_u64(&w, sp[i].start);
        wire_u64(&w, sp[i].length);
        sp[i].count = 0;
    }
    round_trip(&w, 0, g.size, g.timeout, rep, nrep);
    wire_free(&w);
    *unlisted = 0;
    int rc = replies_error(rep, nrep, 0, g.size, e);
    uint64_t base = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (size_t i = 0; !rc && !lr.bad && i < n; i++) {
            sp[i].count += wire_get_u64(&lr);
            int has = (int)wire_get_u32(&lr);
            *unlisted |= listed && !has;
            uint64_t nocc = has ? wire_get_u64(&lr) : 0;
            for (uint64_t j = 0; !rc && !lr.bad && j < nocc; j++) {
                ig_occurrence oc;
                get_occ(&lr, base, &oc);
                if (lr.bad || nsrc[i] >= listed) {
                    free((char *)oc.loc.name);
                    free(oc.snippet);
                    continue;
                }
                ig_occurrence *grown = realloc(src[i], (nsrc[i] + 1) * sizeof *grown);
                if (!grown) {
                    free((char *)oc.loc.name);
                    free(oc.snippet);
                    rc = ig_error_set(e, IG_ENOMEM, "out of memory");
                    break;
                }
                free(oc.snippet); /* a span's sources have none */
                oc.snippet = NULL;
                src[i] = grown;
                src[i][nsrc[i]++] = oc;
            }
        }
        if (!rc && !lr.bad && rp)
            rc = get_bm25(&lr, k, base, rp, e);
        if (!rc && lr.bad)
            rc = garbled(e, k);
        base += g.docs[k];
    }
    free_replies(rep);
    return rc;
}

/* spans --max-count: the candidates' counts decide which are kept, so every candidate is
 * counted first (one round trip for all): a first pass records them (each "counted" past the
 * limit, so that none is kept and none hides a later one), the second reads their sums. */
typedef struct span_tally {
    ig_span *c;
    size_t n, cap, next;
    uint64_t over;
} span_tally;

static int tally_record(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err)
{
    span_tally *t = user;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        ig_span *p = realloc(t->c, cap * sizeof *p);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        t->c = p;
        t->cap = cap;
    }
    t->c[t->n++] = (ig_span){start, length, 0};
    *count = t->over;
    return 0;
}

static int tally_read(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err)
{
    span_tally *t = user; /* the candidates come in the same order, some skipped */
    while (t->next < t->n && (t->c[t->next].start != start || t->c[t->next].length != length))
        t->next++;
    if (t->next == t->n)
        return ig_error_set(err, IG_EINTERNAL, "span %" PRIu64 "+%" PRIu64 " was not counted", start, length);
    *count = t->c[t->next].count;
    return 0;
}

int cmd_spans(void *opts, void *result, const words *ws, double t0)
{
    ig_spans_opts *o = opts;
    ig_spans_result *r = result;
    ig_error e;
    (void)ws;
    uint64_t *ms = NULL;
    span_tally t = {0};
    int rc = 0, unlisted = 0;
    const ig_generation *lg = generation_last();
    if (o->last && o->query.p) /* --last: the last generation's text, as the shell traces it */
        rc = ig_error_set(&e, IG_EUSAGE, "give TEXT or --last, not both");
    else if (o->last && !lg->dataset)
        rc = ig_error_set(&e, IG_EUSAGE, "no previous generation (run generate first)");
    else if (o->last)
        rc = ig_field_set_text(ig_field_find(ig_spans_fields, "query", 5), o, lg->text, lg->tlen, &e);
    else if (!o->query.p)
        rc = ig_error_set(&e, IG_EUSAGE, "{query}: missing TEXT");
    if (!rc)
        rc = ig_query_normalize(g.idx, o->query.p, o->query.n, &r->text, &r->len, &e);
    if (!rc)
        rc = gen_matching(NULL, r->text, r->len, &ms, &e);
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = o->min_len;
    so.max_count = o->max_count;
    so.words = o->words;
    if (!rc && o->max_count) {
        t.over = o->max_count + 1;
        rc = ig_spans_from_matching(r->text, r->len, ms, &so, tally_record, &t, &r->spans, &r->nspans, &e);
        free(r->spans);
        r->spans = NULL;
        if (!rc && t.n)
            rc = parts_spans(r->text, r->len, t.c, t.n, 0, NULL, NULL, &unlisted, NULL, &e);
        if (!rc)
            rc = ig_spans_from_matching(r->text, r->len, ms, &so, tally_read, &t, &r->spans, &r->nspans, &e);
    } else if (!rc) {
        rc = ig_spans_from_matching(r->text, r->len, ms, &so, NULL, NULL, &r->spans, &r->nspans, &e);
    }
    size_t n = r->nspans ? r->nspans : 1;
    if (!rc && (!(r->sources = calloc(n, sizeof *r->sources)) || !(r->nsources = calloc(n, sizeof *r->nsources)) ||
                !(r->totals = calloc(n, sizeof *r->totals))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    /* ranked: each span's first `candidates` sources, with what BM25 reads of them */
    int ranked = o->rank == IG_RANK_BM25;
    ranked_parts rp = {0};
    if (!rc && r->nspans)
        rc = parts_spans(r->text, r->len, r->spans, r->nspans, ranked ? o->candidates : o->positions, r->sources,
                         r->nsources, &unlisted, ranked ? &rp : NULL, &e);
    if (!rc)
        rc = ig_spans_check_listed(o, r->spans, r->nspans, &e);
    if (!rc && unlisted)
        rc = ig_error_set(&e, IG_EINTERNAL, "a part held back occurrences that the corpus may list");
    if (!rc && ranked && r->nspans)
        rc = rank_parts(r, o, &rp, &e);
    ranked_parts_free(&rp);
    if (!rc) {
        for (size_t i = 0; i < r->nspans; i++)
            r->totals[i] = r->spans[i].count;
        r->novelty = ig_novelty(ms, r->len, o->min_len);
        r->searches = ig_spans_searches(ms, r->len);
    }
    rc = answer_or_fail(&ig_op_spans, rc, &e, o, r, t0);
    for (size_t i = 0; r->sources && r->nsources && i < r->nspans; i++)
        for (size_t k = 0; k < r->nsources[i]; k++)
            free((char *)r->sources[i][k].loc.name);
    free(ms);
    free(t.c);
    return rc;
}
