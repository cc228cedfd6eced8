/* models: see models.h. */
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "models.h"
#include "cluster.h"
#include "command.h"

/* The context of a model request, normalised as this part's sources were (every part
 * alike). 0, or an error with *out NULL. */
static int model_context(wire_rd *q, uint8_t **out, size_t *n, ig_error *e)
{
    size_t qn;
    const uint8_t *qp = wire_get_bytes(q, &qn);
    *out = NULL;
    int rc = request_ready(q, 1, e);
    return rc ? rc : normalize_text(qp, qn, out, n, e);
}

/* prob's text: the context and the continuation, each normalised on its own (as prob does),
 * one after the other in *buf (malloc'd); *cn bytes of context, *kn of continuation. */
static int prob_text(wire_rd *q, uint8_t **buf, size_t *cn, size_t *kn, ig_error *e)
{
    uint8_t *c = NULL, *k = NULL;
    *buf = NULL;
    int rc = model_context(q, &c, cn, e);
    if (!rc)
        rc = model_context(q, &k, kn, e);
    if (!rc && !(*buf = malloc(*cn + *kn + 1)))
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    if (!rc) {
        memcpy(*buf, c, *cn);
        memcpy(*buf + *cn, k, *kn);
    }
    free(c);
    free(k);
    return rc;
}

/* A model request's context (model_context; with `continuation`, prob's text: prob_text) and
 * its cap on the context's length, read in the order rank 0 writes them; ctx is malloc'd (free
 * it), rc the request's status so far. */
typedef struct model_req {
    ig_error e;
    uint8_t *ctx;
    size_t n;
    size_t kn;             ///< the continuation's bytes after the context's n (prob's requests)
    int64_t cap;
    int rc;
} model_req;

static void model_req_read(wire_rd *q, int continuation, model_req *r)
{
    memset(r, 0, sizeof *r);
    r->rc = continuation ? prob_text(q, &r->ctx, &r->n, &r->kn, &r->e) : model_context(q, &r->ctx, &r->n, &r->e);
    r->cap = (int64_t)wire_get_u64(q);
}

void do_longest(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 0, &m);
    uint64_t count = 0, ell = m.rc ? 0 : ig_longest_suffix(g.idx, m.ctx, m.n, m.cap, &count);
    if (!m.rc && ig_index_health(g.idx, g.dataset, &m.e))
        m.rc = IG_ECORRUPT;
    reply_status(w, m.rc, &m.e);
    wire_u64(w, ell);
    free(m.ctx);
}

/* A level's suffix count and its nonzero byte counts (as byte, count pairs). */
static void put_counts(wire *w, const ig_part_level *lv)
{
    int nz = 0;
    for (int b = 0; b < 256; b++)
        nz += lv->count[b] != 0;
    wire_u64(w, lv->suffix_count);
    wire_u32(w, (uint32_t)nz);
    for (int b = 0; b < 256; b++)
        if (lv->count[b]) {
            wire_u32(w, (uint32_t)b);
            wire_u64(w, lv->count[b]);
        }
}

/* Adds what put_counts wrote to lv's suffix count and byte counts (a byte over 255 makes the
 * reader bad). */
static void get_counts_add(wire_rd *rd, ig_part_level *lv)
{
    lv->suffix_count += wire_get_u64(rd);
    uint32_t nz = wire_get_u32(rd);
    for (uint32_t j = 0; !rd->bad && j < nz; j++) {
        uint32_t b = wire_get_u32(rd);
        uint64_t v = wire_get_u64(rd);
        if (b > 255)
            rd->bad = 1;
        else
            lv->count[b] += v;
    }
}

void put_level(wire *w, const ig_part_level *lv)
{
    put_counts(w, lv);
    wire_u64(w, lv->nsyms);
    for (size_t i = 0; i < lv->nsyms; i++) {
        wire_bytes(w, lv->syms[i].bytes, lv->syms[i].len);
        wire_u64(w, lv->syms[i].count);
    }
}

int get_level(wire_rd *rd, ig_part_level *lv)
{
    get_counts_add(rd, lv);
    uint64_t nsyms = wire_get_u64(rd);
    if (rd->bad || nsyms > rd->n || !(lv->syms = calloc(nsyms ? nsyms : 1, sizeof *lv->syms)))
        return -1;
    for (uint64_t i = 0; !rd->bad && i < nsyms; i++) {
        size_t bn;
        const uint8_t *bp = wire_get_bytes(rd, &bn);
        if (bn < 1 || bn > sizeof lv->syms[i].bytes) {
            rd->bad = 1;
            break;
        }
        memcpy(lv->syms[i].bytes, bp, bn);
        lv->syms[i].len = (uint8_t)bn;
        lv->syms[i].count = wire_get_u64(rd);
        lv->nsyms++;
    }
    if (rd->bad) {
        ig_part_level_free(lv);
        return -1;
    }
    return 0;
}

void do_profile(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 0, &m);
    ig_part_profile pr = {0};
    if (!m.rc)
        m.rc = ig_part_profile_get(g.idx, m.ctx, m.n, m.cap, &pr, &m.e);
    if (!m.rc && ig_index_health(g.idx, g.dataset, &m.e))
        m.rc = IG_ECORRUPT;
    reply_status(w, m.rc, &m.e);
    wire_u64(w, pr.n);
    for (size_t i = 0; i < pr.n; i++) {
        wire_u64(w, pr.ell[i]);
        wire_u64(w, pr.count[i]);
    }
    ig_part_profile_free(&pr);
    free(m.ctx);
}

void do_levels(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 0, &m);
    uint32_t flags = wire_get_u32(q);
    int chars = flags & 1, suffixes = (flags >> 1) & 1;
    uint64_t k = wire_get_u64(q);
    if (!m.rc && (q->bad || k > q->n))
        m.rc = ig_error_set(&m.e, IG_EINTERNAL, "garbled request");
    wire out = {0};
    for (uint64_t i = 0; !m.rc && i < k; i++) {
        ig_part_level lv;
        uint64_t ell = wire_get_u64(q);
        if (suffixes && ell > m.n)
            m.rc = ig_error_set(&m.e, IG_EINTERNAL, "garbled request");
        else if (suffixes) /* backoff: the suffix itself is the whole context */
            m.rc = ig_part_level_get(g.idx, m.ctx + m.n - ell, ell, -1, ell, chars, &lv, &m.e);
        else
            m.rc = ig_part_level_get(g.idx, m.ctx, m.n, m.cap, ell, chars, &lv, &m.e);
        if (m.rc)
            break;
        put_level(&out, &lv);
        ig_part_level_free(&lv);
    }
    reply_answer(w, m.rc, &m.e, &out);
    free(m.ctx);
}

void do_level(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 0, &m);
    uint64_t ell = wire_get_u64(q);
    int chars = (int)wire_get_u32(q);
    ig_part_level lv;
    memset(&lv, 0, sizeof lv);
    uint64_t count, longest = m.rc ? 0 : ig_longest_suffix(g.idx, m.ctx, m.n, m.cap, &count); /* the n-gram reports it too */
    if (!m.rc)
        m.rc = ig_part_level_get(g.idx, m.ctx, m.n, m.cap, ell, chars, &lv, &m.e);
    if (!m.rc && ig_index_health(g.idx, g.dataset, &m.e))
        m.rc = IG_ECORRUPT;
    reply_status(w, m.rc, &m.e);
    wire_u64(w, longest);
    put_level(w, &lv);
    ig_part_level_free(&lv);
    free(m.ctx);
}

void do_plongest(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 1, &m);
    if (!m.rc && ig_index_health(g.idx, g.dataset, &m.e))
        m.rc = IG_ECORRUPT;
    reply_status(w, m.rc, &m.e);
    wire_u64(w, m.rc ? 0 : m.kn);
    for (size_t i = 0; !m.rc && i < m.kn; i++) {
        uint64_t count;
        wire_u64(w, ig_longest_suffix(g.idx, m.ctx, m.n + i, m.cap, &count));
    }
    free(m.ctx);
}

void do_plevels(wire_rd *q, wire *w)
{
    model_req m;
    model_req_read(q, 1, &m);
    uint64_t n = wire_get_u64(q);
    if (!m.rc && (q->bad || n != m.kn))
        m.rc = ig_error_set(&m.e, IG_EINTERNAL, "garbled request");
    wire out = {0};
    for (size_t i = 0; !m.rc && i < m.kn; i++) {
        ig_part_level lv;
        if ((m.rc = ig_part_level_get(g.idx, m.ctx, m.n + i, m.cap, wire_get_u64(q), 0, &lv, &m.e)))
            break;
        put_counts(&out, &lv);
        ig_part_level_free(&lv);
    }
    reply_answer(w, m.rc, &m.e, &out);
    free(m.ctx);
}

/* Adds rank k's count profile (do_profile's reply) to the sum u. */
static int add_profile(void *u, int k, wire_rd *rd, ig_error *e)
{
    ig_part_profile *sum = u;
    uint64_t n = wire_get_u64(rd);
    ig_part_profile pr = {0};
    int rc = 0;
    if (!rd->bad && n <= rd->n && (!(pr.ell = calloc(n ? n : 1, 8)) || !(pr.count = calloc(n ? n : 1, 8))))
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    for (uint64_t i = 0; !rc && pr.ell && pr.count && !rd->bad && i < n; i++) {
        pr.ell[i] = wire_get_u64(rd);
        pr.count[i] = wire_get_u64(rd);
        pr.n++;
    }
    if (!rc && (rd->bad || n > rd->n))
        rc = garbled(e, k);
    if (!rc)
        rc = ig_part_profile_add(sum, &pr, e);
    ig_part_profile_free(&pr);
    return rc;
}

/* The parts' count profiles of the context q[0, qn) capped at `cap`, summed into *sum: 1 round
 * trip. */
static int parts_profile(const uint8_t *q, size_t qn, int64_t cap, ig_part_profile *sum, ig_error *e)
{
    memset(sum, 0, sizeof *sum);
    wire w = {0};
    wire_u32(&w, OP_PROFILE);
    wire_bytes(&w, q, qn);
    wire_u64(&w, (uint64_t)cap);
    int rc = ask_each(&w, 0, add_profile, sum, e);
    if (rc)
        ig_part_profile_free(sum);
    return rc;
}

/* The sums parts_levels adds each rank's levels to. */
typedef struct levels_sum {
    const uint64_t *lens;
    size_t n;
    ig_part_level *lv;
} levels_sum;

/* Adds rank k's levels (do_levels' answer) to the sums u. */
static int add_levels(void *u, int k, wire_rd *lr, ig_error *e)
{
    levels_sum *s = u;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        ig_part_level one;
        memset(&one, 0, sizeof one);
        one.ell = s->lens[i];
        if (get_level(lr, &one))
            rc = garbled(e, k);
        else
            rc = ig_part_level_add(&s->lv[i], &one, e);
        ig_part_level_free(&one);
    }
    return rc;
}

/* The parts' levels at lengths lens[0, n) of the context q[0, qn), summed into lv[i] (ell
 * set by the caller): 1 round trip. `suffixes`: each level with its suffix as the whole
 * context (backoff), else of the context capped at `cap`. */
static int parts_levels(const uint8_t *q, size_t qn, int64_t cap, int chars, int suffixes, const uint64_t *lens,
                        size_t n, ig_part_level *lv, ig_error *e)
{
    wire w = {0};
    wire_u32(&w, OP_LEVELS);
    wire_bytes(&w, q, qn);
    wire_u64(&w, (uint64_t)cap);
    wire_u32(&w, (uint32_t)chars | (uint32_t)suffixes << 1);
    wire_u64(&w, n);
    for (size_t i = 0; i < n; i++)
        wire_u64(&w, lens[i]);
    levels_sum s = {lens, n, lv};
    return ask_each(&w, 1, add_levels, &s, e);
}

int parts_dist(const ig_model *model, const uint8_t *q, size_t qn, int chars, ig_dist *d, ig_symbol **syms,
               size_t *nsyms, double *unseen, int *sparse, ig_error *e)
{
    *syms = NULL;
    *nsyms = 0;
    ig_part_profile sum = {0};
    int rc = parts_profile(q, qn, model->max_context, &sum, e);
    ig_part_level *lv = rc ? NULL : calloc(sum.n ? sum.n : 1, sizeof *lv);
    if (!rc && !lv)
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    for (size_t i = 0; lv && i < sum.n; i++)
        lv[i].ell = sum.ell[i];
    if (!rc)
        rc = parts_levels(q, qn, model->max_context, chars, 0, sum.ell, sum.n, lv, e);
    if (!rc)
        rc = ig_predict_from_parts(model, q, qn, &sum, lv, chars, d, syms, nsyms, unseen, sparse, e);
    for (size_t i = 0; lv && i < sum.n; i++)
        ig_part_level_free(&lv[i]);
    free(lv);
    ig_part_profile_free(&sum);
    return rc;
}

int cmd_predict(void *opts, void *result, const words *ws, double t0)
{
    const char *cmd = "predict";
    ig_predict_opts *o = opts;
    ig_predict_result *r = result;
    ig_error e;
    (void)ws;
    int rc = ig_model_resolve(&o->model, &r->model, &e);
    if (!rc)
        rc = normalize_text(o->query.p, o->query.n, &r->context, &r->clen, &e);
    if (rc)
        return fail_error(cmd, &e, t0);
    if (r->model.kind != IG_MODEL_INFGRAM && r->model.kind != IG_MODEL_NGRAM) {
        /* a mixture (weighted, interpolation) over the parts: parts_dist, 2 round trips */
        rc = parts_dist(&r->model, o->query.p, o->query.n, !o->bytes, &r->dist, &r->syms, &r->nsyms, &r->unseen,
                        &r->sparse, &e);
        return answer_or_fail(&ig_op_predict, rc, &e, o, r, t0);
    }
    REPLIES(rep, nrep);
    uint64_t longest = 0;
    if (r->model.kind == IG_MODEL_INFGRAM) {
        wire q = {0};
        wire_u32(&q, OP_LONGEST);
        wire_bytes(&q, o->query.p, o->query.n);
        wire_u64(&q, (uint64_t)r->model.max_context);
        rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
        for (int k = 0; !rc && k < g.size; k++) {
            wire_rd rd = reply_of(rep, nrep, k);
            uint64_t ell = wire_get_u64(&rd);
            if (ell > longest)
                longest = ell;
        }
        free_replies(rep);
    }
    uint64_t ell = r->model.kind == IG_MODEL_NGRAM ? r->model.n - 1 : longest;
    ig_part_level sum;
    memset(&sum, 0, sizeof sum);
    sum.ell = ell;
    if (!rc) {
        wire q = {0};
        wire_u32(&q, OP_LEVEL);
        wire_bytes(&q, o->query.p, o->query.n);
        wire_u64(&q, (uint64_t)r->model.max_context);
        wire_u64(&q, ell);
        wire_u32(&q, !o->bytes);
        rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
    }
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        ig_part_level lv;
        memset(&lv, 0, sizeof lv);
        lv.ell = ell;
        uint64_t part_longest = wire_get_u64(&rd);
        if (r->model.kind == IG_MODEL_NGRAM && part_longest > longest)
            longest = part_longest;
        if (get_level(&rd, &lv))
            rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", k, host_of(k));
        if (!rc && ig_part_level_add(&sum, &lv, &e))
            rc = fail_error(cmd, &e, t0);
        ig_part_level_free(&lv);
    }
    free_replies(rep);
    if (!rc && ig_predict_from_level(&r->model, r->context, r->clen, longest, &sum, !o->bytes, &r->dist, &r->syms,
                                     &r->nsyms, &r->unseen, &r->sparse, &e))
        rc = fail_error(cmd, &e, t0);
    if (!rc) {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_predict_json(&ctx, o, r), t0);
    }
    ig_part_level_free(&sum);
    return rc;
}

int parts_predict(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d, ig_error *err)
{
    (void)user;
    ig_symbol *syms = NULL;
    size_t nsyms = 0;
    double unseen;
    int sparse;
    ig_dist_free(d);
    int rc = parts_dist(model, text, len, 0, d, &syms, &nsyms, &unseen, &sparse, err);
    free(syms);
    return rc;
}

int prob_words(const words *ws, double t0)
{
    /* as the shell reads prob: unquoted words would join into one text, so both are quoted */
    ig_line l;
    ig_error e;
    int read = !ig_line_read(ws->line, 0, ig_fields_lookup, ig_prob_fields, "prob", &l, &e), ids = 0;
    for (size_t i = 0; read && i < l.nopts; i++) /* token ids are given, and refused, as such */
        ids |= !strcmp(l.opts[i].name, "ids");
    /* a line the reader refuses is reported by fill_opts, in the shell's words */
    int two = !read || ids || (l.nargs == 2 && l.args[0].quoted && l.args[1].quoted);
    ig_line_free(&l);
    return two ? 0 : fail("prob", IG_EUSAGE, t0, "prob needs two quoted texts; usage: prob [MODEL OPTIONS] \"TEXT\" \"CONTINUATION\"");
}

int cmd_prob(void *opts, void *result, const words *ws, double t0)
{
    const char *cmd = "prob";
    ig_prob_opts *o = opts;
    ig_prob_result *r = result;
    ig_error e;
    uint8_t *c = NULL, *k = NULL;
    size_t cn = 0, kn = 0;
    (void)ws;
    int rc = ig_model_resolve(&o->model, &r->model, &e);
    if (!rc)
        rc = normalize_text(o->query.p, o->query.n, &c, &cn, &e);
    if (!rc)
        rc = normalize_text(o->continuation.p, o->continuation.n, &k, &kn, &e);
    if (!rc && kn == 0)
        rc = ig_error_set(&e, IG_EUSAGE, "{continuation}: empty continuation");
    if (!rc && r->model.kind != IG_MODEL_INFGRAM && r->model.kind != IG_MODEL_NGRAM) {
        /* a mixture: each byte's distribution over the parts (2 round trips a byte) */
        rc = ig_prob_with(parts_predict, NULL, &r->model, c, cn, k, kn, !o->bytes, &r->factors, &r->nfactors, &r->prob,
                          &r->log2p, &e);
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = rc ? fail_error(cmd, &e, t0) : emit_answer(cmd, ig_prob_json(&ctx, o, r), t0);
        free(c);
        free(k);
        return rc;
    }
    uint64_t *longest = rc ? NULL : calloc(kn, sizeof *longest);
    ig_part_level *lv = rc ? NULL : calloc(kn, sizeof *lv);
    if (!rc && (!longest || !lv))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (rc) {
        free(c);
        free(k);
        free(longest);
        free(lv);
        return fail_error(cmd, &e, t0);
    }
    REPLIES(rep, nrep);
    if (r->model.kind == IG_MODEL_INFGRAM) {
        wire q = {0};
        wire_u32(&q, OP_PLONGEST);
        wire_bytes(&q, o->query.p, o->query.n);
        wire_bytes(&q, o->continuation.p, o->continuation.n);
        wire_u64(&q, (uint64_t)r->model.max_context);
        rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
        for (int p = 0; !rc && p < g.size; p++) {
            wire_rd rd = reply_of(rep, nrep, p);
            if (wire_get_max_u64s(&rd, longest, kn))
                rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", p, host_of(p));
        }
        free_replies(rep);
    }
    for (size_t i = 0; i < kn; i++)
        lv[i].ell = r->model.kind == IG_MODEL_NGRAM ? r->model.n - 1 : longest[i];
    if (!rc) {
        wire q = {0};
        wire_u32(&q, OP_PLEVELS);
        wire_bytes(&q, o->query.p, o->query.n);
        wire_bytes(&q, o->continuation.p, o->continuation.n);
        wire_u64(&q, (uint64_t)r->model.max_context);
        wire_u64(&q, kn);
        for (size_t i = 0; i < kn; i++)
            wire_u64(&q, lv[i].ell);
        rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
    }
    for (int p = 0; !rc && p < g.size; p++) {
        wire_rd lr = answer_of(rep, nrep, p);
        for (size_t i = 0; !lr.bad && i < kn; i++)
            get_counts_add(&lr, &lv[i]);
        if (lr.bad)
            rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", p, host_of(p));
    }
    free_replies(rep);
    if (!rc && ig_prob_from_levels(&r->model, c, cn, k, kn, !o->bytes, longest, lv, &r->factors, &r->nfactors, &r->prob,
                                   &r->log2p, &e))
        rc = fail_error(cmd, &e, t0);
    if (!rc) {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_prob_json(&ctx, o, r), t0);
    }
    free(c);
    free(k);
    free(longest);
    free(lv);
    return rc;
}

int cmd_backoff(void *opts, void *result, const words *ws, double t0)
{
    ig_backoff_opts *o = opts;
    ig_backoff_result *r = result;
    ig_error e;
    ig_model m;
    (void)ws;
    ig_part_profile sum = {0};
    uint64_t *lens = NULL;
    size_t nl = 0;
    ig_part_level *lv = NULL;
    int rc = ig_backoff_model(o, &m, &e);
    if (!rc)
        rc = normalize_text(o->query.p, o->query.n, &r->context, &r->clen, &e);
    if (!rc)
        rc = parts_profile(o->query.p, o->query.n, m.max_context, &sum, &e);
    if (!rc)
        rc = ig_backoff_lengths(&m, r->context, r->clen, &sum, &lens, &nl, &e);
    if (!rc && !(lv = calloc(nl ? nl : 1, sizeof *lv)))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nl; i++)
        lv[i].ell = lens[i];
    if (!rc)
        rc = parts_levels(o->query.p, o->query.n, m.max_context, !o->bytes, 1, lens, nl, lv, &e);
    if (!rc)
        rc = ig_backoff_from_parts(&m, r->context, r->clen, !o->bytes, &sum, lv, nl, &r->cands, &r->ncands, &r->ltau,
                                   &e);
    rc = answer_or_fail(&ig_op_backoff, rc, &e, o, r, t0);
    for (size_t i = 0; lv && i < nl; i++)
        ig_part_level_free(&lv[i]);
    free(lv);
    free(lens);
    ig_part_profile_free(&sum);
    return rc;
}
