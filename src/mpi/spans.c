/* spans: see spans.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "spans.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"

void do_matching(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = 1;
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

void do_spans(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t tn;
    const uint8_t *text = wire_get_bytes(q, &tn);
    ig_spans_opts so;
    ig_spans_defaults(&so);
    so.positions = wire_get_u64(q);
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
        for (size_t k = 0; k < nocc; k++)
            put_occ(&out, &occ[k]);
        ig_occurrences_free(occ, nocc);
    }
    reply_answer(w, rc, &e, &out);
    free(sp);
}

int gen_matching(void *user, const uint8_t *text, size_t len, uint64_t **ms, ig_error *err)
{
    (void)user;
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_MATCHING);
    wire_bytes(&w, text, len);
    round_trip(&w, 0, g.size, g.timeout, rep, nrep);
    wire_free(&w);
    int rc = replies_error(rep, nrep, 0, g.size, err);
    uint64_t *m = rc ? NULL : calloc(len ? len : 1, sizeof *m);
    if (!rc && !m)
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        if (wire_get_u64(&rd) != len)
            rd.bad = 1;
        for (size_t i = 0; !rd.bad && i < len; i++) {
            uint64_t v = wire_get_u64(&rd);
            if (v > m[i])
                m[i] = v;
        }
        if (rd.bad)
            rc = garbled(err, k);
    }
    free_replies(rep);
    if (rc) {
        free(m);
        return rc;
    }
    *ms = m;
    return 0;
}

/* ---- spans: maximal over the union of the parts */

/* The parts' counts of spans sp[0, n) of text, summed into sp[i].count, and when `listed` is
 * not 0 each span's first `listed` occurrences in corpus order (rank 0's first, documents
 * numbered past the ranks' before) appended to src[i] (malloc'd, with malloc'd names): 1 round
 * trip. *unlisted is set when a part held its occurrences back (a request listing too many). */
static int parts_spans(const uint8_t *text, size_t len, ig_span *sp, size_t n, uint64_t listed, ig_occurrence **src,
                       size_t *nsrc, int *unlisted, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_SPANS);
    wire_bytes(&w, text, len);
    wire_u64(&w, listed);
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

int cmd_spans(const words *ws, double t0)
{
    const char *cmd = "spans";
    ig_spans_opts o;
    ig_spans_defaults(&o);
    ig_spans_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    uint64_t *ms = NULL;
    span_tally t = {0};
    if (need_loaded(cmd, t0))
        return -1;
    int rc = fill_opts(&ig_op_spans, &o, ws, &e), unlisted = 0;
    if (!rc && o.rank == IG_RANK_BM25)
        rc = ig_error_set(&e, IG_EUSAGE, "spans --rank bm25 is not distributed yet: run it with infinigram on one machine");
    if (!rc && !o.query.p)
        rc = ig_error_set(&e, IG_EUSAGE, "{query}: missing TEXT");
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p, o.query.n, &r.text, &r.len, &e);
    if (!rc)
        rc = gen_matching(NULL, r.text, r.len, &ms, &e);
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = o.min_len;
    so.max_count = o.max_count;
    so.words = o.words;
    if (!rc && o.max_count) {
        t.over = o.max_count + 1;
        rc = ig_spans_from_matching(r.text, r.len, ms, &so, tally_record, &t, &r.spans, &r.nspans, &e);
        free(r.spans);
        r.spans = NULL;
        if (!rc && t.n)
            rc = parts_spans(r.text, r.len, t.c, t.n, 0, NULL, NULL, &unlisted, &e);
        if (!rc)
            rc = ig_spans_from_matching(r.text, r.len, ms, &so, tally_read, &t, &r.spans, &r.nspans, &e);
    } else if (!rc) {
        rc = ig_spans_from_matching(r.text, r.len, ms, &so, NULL, NULL, &r.spans, &r.nspans, &e);
    }
    size_t n = r.nspans ? r.nspans : 1;
    if (!rc && (!(r.sources = calloc(n, sizeof *r.sources)) || !(r.nsources = calloc(n, sizeof *r.nsources)) ||
                !(r.totals = calloc(n, sizeof *r.totals))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc && r.nspans)
        rc = parts_spans(r.text, r.len, r.spans, r.nspans, o.positions, r.sources, r.nsources, &unlisted, &e);
    if (!rc)
        rc = ig_spans_check_listed(&o, r.spans, r.nspans, &e);
    if (!rc && unlisted)
        rc = ig_error_set(&e, IG_EINTERNAL, "a part held back occurrences that the corpus may list");
    if (!rc) {
        for (size_t i = 0; i < r.nspans; i++)
            r.totals[i] = r.spans[i].count;
        r.novelty = ig_novelty(ms, r.len, o.min_len);
        r.searches = ig_spans_searches(ms, r.len);
    }
    rc = answer_or_fail(&ig_op_spans, rc, &e, &o, &r, t0);
    for (size_t i = 0; r.sources && r.nsources && i < r.nspans; i++)
        for (size_t k = 0; k < r.nsources[i]; k++)
            free((char *)r.sources[i][k].loc.name);
    ig_spans_result_free(&r);
    free(ms);
    free(t.c);
    ig_fields_free(ig_spans_fields, &o);
    return rc;
}
