/*
 * Models over a token index: the ∞-gram and the fixed n-gram of next tokens, with Laplace
 * smoothing over the vocabulary. Lengths count tokens. A context is the tokens after its
 * last separator (documents are independent), capped at max_context tokens.
 *
 *   ∞-gram:  ℓ* = the longest suffix of the context that occurs (counts only fall as a
 *            suffix grows, so ℓ* is found by bisection over lengths),
 *            P(t) = cnt(suffix(ℓ*)·t) / cnt(suffix(ℓ*)).
 *   n-gram:  the suffix of n − 1 tokens; undefined when it never occurs (or the context is
 *            shorter), unless smoothed.
 *   Laplace: P(t) = (cnt(t) + α) / (Σ cnt + α·V) over the V ids of the vocabulary (the
 *            separator included, as <end>); without a vocabulary V = 2^(8·tw) for ids of
 *            one or two bytes.
 */
#include "infinigram/tokens.h"
#include "infinigram/query.h"
#include "model_impl.h"
#include "../query/query.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t count_suffix(const ig_index *idx, const uint8_t *ids, size_t ntok, size_t k)
{
    return ig_count(idx, ids + (ntok - k) * idx->tw, k * idx->tw);
}

/* Most probable (or best scored) first, ties by id: the order of every token list shown. */
static int by_value_then_id(double a, double b, const uint8_t *xa, const uint8_t *xb, uint8_t len)
{
    if (a != b)
        return a > b ? -1 : 1;
    uint32_t u = ig_token_at(xa, len), v = ig_token_at(xb, len);
    return u < v ? -1 : u > v;
}

static int cmp_sym(const void *a, const void *b)
{
    const ig_symbol *x = a, *y = b;
    return by_value_then_id(x->prob, y->prob, x->bytes, y->bytes, x->len);
}

uint64_t igi_token_outcomes(const ig_index *idx)
{
    const uint32_t tw = idx->tw;
    uint64_t v = ig_vocab_size(idx);
    if (!v && tw <= 2)
        return (uint64_t)1 << (8 * tw);
    return v && v <= ig_token_end(tw) ? v + 1 : v; /* <end> is an outcome too */
}

/* Laplace smoothing shares alpha among the vocabulary's ids: an id the vocabulary does not
 * hold would take mass nobody set aside, and the probabilities would sum past 1. An attached
 * index's vocabulary is not checked against every id at attach (that reads the whole index),
 * so a smoothed answer checks the ids it meets. */
static int beyond_vocab(const ig_index *idx, uint32_t id, ig_error *err)
{
    uint64_t v = ig_vocab_size(idx);
    if (!v || id < v || id == ig_token_end(idx->tw))
        return 0;
    return ig_error_set(err, IG_EUSAGE, "token id %" PRIu32 " occurs in the index, but the vocabulary has only %" PRIu64
                        " entries: {alpha} shares its mass among the vocabulary's ids, so it needs the vocabulary "
                        "of the tokenizer that made the index", id, v);
}

double igi_token_sym_prob(const ig_index *idx, const ig_symbol *syms, size_t ns, double unseen, const uint8_t *t)
{
    for (size_t k = 0; k < ns; k++)
        if (!memcmp(syms[k].bytes, t, idx->tw))
            return syms[k].prob;
    uint64_t v = igi_token_outcomes(idx); /* smoothing: the unseen mass shared by the ids never seen */
    return unseen > 0 && v > ns ? unseen / (double)(v - ns) : 0;
}

int igi_token_dist_get(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, igi_token_dist *t,
                       ig_error *err)
{
    memset(t, 0, sizeof *t);
    return igi_token_predict(idx, m, ctx, len, &t->d, &t->syms, &t->ns, &t->borrowed, &t->unseen, err);
}

void igi_token_dist_free(igi_token_dist *t)
{
    if (!t->borrowed)
        free(t->syms);
    t->syms = NULL;
    ig_dist_free(&t->d);
}

/* The part of a context of len bytes a model reads: the tokens after its last separator
 * (documents are independent), at most max_context of them. *ctx moves to its start. */
static size_t usable_context(const ig_index *idx, const ig_model *m, const uint8_t **ctx, size_t len)
{
    const uint32_t tw = idx->tw, end = ig_token_end(tw);
    size_t ntok = len / tw, from = 0;
    for (size_t i = 0; i < ntok; i++)
        if (ig_token_at(*ctx + i * tw, tw) == end)
            from = i + 1;
    *ctx += from * tw;
    ntok -= from;
    if (m->max_context >= 0 && (uint64_t)m->max_context < ntok) {
        *ctx += (ntok - (size_t)m->max_context) * tw;
        ntok = (size_t)m->max_context;
    }
    return ntok;
}

static int cmp_tc_id(const void *a, const void *b)
{
    const ig_token_count *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* One level of a mixture: the histogram at suffix length `len` tokens, in id order. */
typedef struct tlevel {
    uint64_t len, total;
    double coef;            ///< P(t) gets coef · count(t)
    ig_token_count *v;
    size_t n;
} tlevel;

static int level_at(const ig_index *idx, const uint8_t *ctx, size_t ntok, uint64_t len, int sbi, tlevel *lv,
                    ig_error *err)
{
    const uint32_t tw = idx->tw;
    ig_range *r = calloc(idx->nshards, sizeof *r);
    if (!r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    ig_find(idx, ctx + (ntok - len) * tw, len * tw, r);
    int rc = igi_token_hist(idx, r, len * tw, 0, &lv->v, &lv->n, err);
    free(r);
    if (rc)
        return rc;
    lv->len = len;
    lv->total = 0;
    size_t w = 0;
    for (size_t i = 0; i < lv->n; i++) {
        if (sbi && lv->v[i].id == ig_token_end(tw))
            continue; /* the published conventions: <end> is not a symbol of the levels */
        lv->total += lv->v[i].count;
        lv->v[w++] = lv->v[i];
    }
    lv->n = w;
    return 0;
}

/* The weighted mixture and selective back-off interpolation over next tokens, as over next
 * bytes (model.h): weighted, Σ_ℓ w(ℓ)·P_ℓ(t) / Σ_ℓ w(ℓ) for ℓ in [min_len, min(max_len, ℓ*)],
 * lengths of equal count (equal distributions) grouped; interpolation, from ℓ* down to 1 a
 * level kept when its total exceeds the last kept one's, K levels at most, weighted by
 * 0.1^j and normalised over the raw counts. */
static int mixture(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t ntok, size_t star, ig_dist *d,
                   ig_symbol **syms, size_t *nsyms, ig_error *err)
{
    const uint32_t tw = idx->tw;
    tlevel *lv = NULL;
    size_t nlv = 0, cap = 0;
    int rc = 0;
    double wsum = 0;
    d->length = star;
    d->suffix_count = count_suffix(idx, ctx, ntok, star);
    if (m->kind == IG_MODEL_WEIGHTED) {
        uint64_t top = star, bottom = m->min_len ? m->min_len : 1;
        if (m->max_len && m->max_len < top)
            top = m->max_len;
        if (top == 0 || bottom > top) { /* no length in range: the ∞-gram, and say so */
            ig_model inf = *m;
            inf.kind = IG_MODEL_INFGRAM;
            double unseen;
            rc = igi_token_predict(idx, &inf, ctx, ntok * tw, d, syms, nsyms, NULL, &unseen, err);
            d->fallback = 1;
            return rc;
        }
        uint64_t ell = top;
        while (!rc && ell >= bottom) {
            if ((nlv & 63) == 63 && ig_cancelled(m->cancel)) {
                rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
                break;
            }
            uint64_t c = count_suffix(idx, ctx, ntok, ell), low = ell;
            double w = igi_model_weight(m, ell, bottom, top);
            while (low > bottom && count_suffix(idx, ctx, ntok, low - 1) == c)
                w += igi_model_weight(m, --low, bottom, top);
            if (igi_grow(&lv, nlv, &cap, sizeof *lv, 8)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            memset(&lv[nlv], 0, sizeof lv[nlv]);
            if (!(rc = level_at(idx, ctx, ntok, ell, 0, &lv[nlv], err))) {
                lv[nlv].coef = lv[nlv].total ? w / (double)lv[nlv].total : 0;
                wsum += w;
                nlv++;
            }
            if (low <= bottom)
                break;
            ell = low - 1;
        }
    } else {
        uint64_t last_total = 0, last_count = UINT64_MAX;
        double w = 1;
        for (uint64_t ell = star; !rc && ell >= 1; ell--) {
            if (((star - ell) & 63) == 63 && ig_cancelled(m->cancel)) {
                rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
                break;
            }
            uint64_t c = count_suffix(idx, ctx, ntok, ell);
            if (c == last_count)
                continue; /* the same occurrences: the same histogram */
            last_count = c;
            tlevel x = {0};
            if ((rc = level_at(idx, ctx, ntok, ell, m->sbi, &x, err)))
                break;
            if (x.total <= last_total) {
                free(x.v);
                continue;
            }
            if (igi_grow(&lv, nlv, &cap, sizeof *lv, 8)) {
                free(x.v);
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            x.coef = w;
            wsum += w * (double)x.total;
            w *= IGI_INTERP_DECAY;
            last_total = x.total;
            lv[nlv++] = x;
            if (m->interp_k > 0 && nlv == (size_t)m->interp_k)
                break;
        }
        for (size_t j = 0; j < nlv; j++)
            lv[j].coef /= wsum > 0 ? wsum : 1;
        d->end_excluded = m->sbi;
    }
    /* the levels merged by id: every token of any level, its probability and its count at
     * the longest level */
    size_t all = 0;
    for (size_t j = 0; j < nlv; j++)
        all += lv[j].n;
    ig_token_count *ids = rc ? NULL : malloc((all ? all : 1) * sizeof *ids);
    if (!rc && !ids)
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    size_t nid = 0;
    for (size_t j = 0; !rc && j < nlv; j++)
        for (size_t i = 0; i < lv[j].n; i++)
            ids[nid++] = (ig_token_count){lv[j].v[i].id, 0};
    ig_symbol *s = NULL;
    size_t ns = 0;
    if (!rc) {
        qsort(ids, nid, sizeof *ids, cmp_tc_id);
        for (size_t i = 0; i < nid; i++)
            if (!ns || ids[i].id != ids[ns - 1].id)
                ids[ns++] = ids[i];
        if (!(s = calloc(ns ? ns : 1, sizeof *s)))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < ns; i++) {
        for (uint32_t k = 0; k < tw; k++)
            s[i].bytes[k] = (uint8_t)(ids[i].id >> (8 * k));
        s[i].len = (uint8_t)tw;
    }
    for (size_t j = 0; !rc && j < nlv; j++) { /* each level's tokens are in id order, as s is */
        size_t at = 0;
        for (size_t i = 0; i < lv[j].n; i++) {
            while (ig_token_at(s[at].bytes, tw) != lv[j].v[i].id)
                at++;
            s[at].prob += lv[j].coef * (double)lv[j].v[i].count;
            if (j == 0)
                s[at].count = lv[j].v[i].count;
        }
    }
    d->nlevels = 0;
    for (size_t j = 0; !rc && j < nlv; j++) { /* what the levels were, for the faces */
        ig_level one;
        memset(&one, 0, sizeof one);
        one.length = lv[j].len;
        one.total = lv[j].total;
        one.coef = m->kind == IG_MODEL_WEIGHTED ? lv[j].coef / wsum : lv[j].coef;
        ig_level *grown = realloc(d->levels, (d->nlevels + 1) * sizeof *grown);
        if (!grown) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        d->levels = grown;
        d->levels_cap = d->nlevels + 1;
        d->levels[d->nlevels++] = one;
    }
    if (!rc && m->kind == IG_MODEL_WEIGHTED)
        for (size_t i = 0; i < ns; i++)
            s[i].prob /= wsum;
    for (size_t j = 0; j < nlv; j++)
        free(lv[j].v);
    free(lv);
    free(ids);
    if (rc) {
        free(s);
        return rc;
    }
    qsort(s, ns, sizeof *s, cmp_sym);
    d->defined = nlv > 0 && wsum > 0;
    *syms = s;
    *nsyms = ns;
    return 0;
}

int igi_token_predict(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, ig_dist *d,
                      ig_symbol **syms, size_t *nsyms, int *borrowed, double *unseen, ig_error *err)
{
    const uint32_t tw = idx->tw;
    *syms = NULL;
    *nsyms = 0;
    if (borrowed)
        *borrowed = 0;
    *unseen = 0;
    if (len % tw)
        return ig_error_set(err, IG_EUSAGE, "a context of %zu bytes is not a whole number of %u-byte tokens", len, tw);
    size_t ntok = usable_context(idx, m, &ctx, len);
    uint64_t vsize = igi_token_outcomes(idx);
    if (m->alpha > 0 && !vsize)
        return ig_error_set(err, IG_EUSAGE, "{alpha} on a dataset of 4-byte ids needs its vocabulary (attach it with a "
                                            "vocabulary) to know how many ids share the smoothing");
    memset(d->prob, 0, sizeof d->prob);
    memset(d->count, 0, sizeof d->count);
    memset(d->smooth, 0, sizeof d->smooth);
    d->nlevels = 0;
    d->context_used = ntok;
    /* ℓ*: the count of the empty suffix is every token, so lo = 0 always occurs */
    size_t lo = 0, hi = ntok;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (count_suffix(idx, ctx, ntok, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    d->longest = lo;
    size_t ell = lo;
    if (m->kind == IG_MODEL_NGRAM) {
        ell = m->n - 1;
        d->length = ell;
        if (ell > ntok || ell > lo) { /* the (n−1)-suffix never occurs */
            d->suffix_count = 0;
            d->defined = m->alpha > 0;
            if (d->defined)
                *unseen = 1.0;
            return 0;
        }
    }
    if (m->kind == IG_MODEL_WEIGHTED || m->kind == IG_MODEL_INTERP)
        return mixture(idx, m, ctx, ntok, lo, d, syms, nsyms, err);
    d->length = ell;
    ig_range *r = calloc(idx->nshards, sizeof *r);
    if (!r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    const uint8_t *p = ctx + (ntok - ell) * tw;
    d->suffix_count = ig_find(idx, p, ell * tw, r);
    int rc = 0, served = 0;
    if (m->alpha == 0) { /* unsmoothed: the next-token table holds the very answer */
        const ig_symbol *held;
        rc = igi_next_table_syms(idx, r, ell * tw, &held, nsyms, &served, err);
        if (!rc && served && borrowed) {
            *syms = (ig_symbol *)held; /* read-only, as the caller was told */
            *borrowed = 1;
        } else if (!rc && served && (*syms = malloc(*nsyms * sizeof **syms)))
            memcpy(*syms, held, *nsyms * sizeof **syms);
        else if (!rc && served)
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        if (rc || served) {
            free(r);
            if (rc)
                *nsyms = 0;
            d->defined = !rc; /* a table holds contexts that occur */
            return rc;
        }
    }
    ig_token_count *tc;
    size_t ntc;
    rc = igi_token_hist(idx, r, ell * tw, 1, &tc, &ntc, err);
    free(r);
    if (rc)
        return rc;
    uint64_t total = 0;
    for (size_t i = 0; i < ntc; i++) {
        total += tc[i].count;
        if (m->alpha > 0 && (rc = beyond_vocab(idx, tc[i].id, err))) {
            free(tc);
            return rc;
        }
    }
    /* The symbols take the histogram's place: its block grows (a large one by remapping, without a
     * copy) and is filled from the last entry down, each symbol (larger than an entry) landing
     * only on entries already read. A frequent context has tens of thousands of next tokens, and
     * in a new process every page of a fresh block costs a fault: this spares the histogram's. */
    _Static_assert(sizeof(ig_symbol) >= sizeof(ig_token_count), "symbols are filled in place from the last");
    ig_symbol *s = realloc(tc, (ntc ? ntc : 1) * sizeof *s);
    if (!s) {
        free(tc);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    double denom = (double)total + m->alpha * (double)vsize;
    for (size_t i = ntc; i-- > 0;) {
        ig_token_count t;
        memcpy(&t, (const char *)s + i * sizeof t, sizeof t);
        ig_symbol y = {.len = (uint8_t)tw, .count = t.count};
        for (uint32_t k = 0; k < tw; k++)
            y.bytes[k] = (uint8_t)(t.id >> (8 * k));
        y.prob = m->alpha > 0 ? ((double)t.count + m->alpha) / denom : (double)t.count / (double)total;
        memcpy(&s[i], &y, sizeof y);
    }
    if (m->alpha > 0 && vsize > ntc)
        *unseen = m->alpha * (double)(vsize - ntc) / denom;
    d->defined = total > 0;
    *syms = s;
    *nsyms = ntc;
    return 0;
}

int igi_token_prob(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t clen, const uint8_t *cont,
                   size_t klen, ig_factor **factors, size_t *nf, double *prob, double *log2p, ig_error *err)
{
    const uint32_t tw = idx->tw;
    *factors = NULL;
    *nf = 0;
    *prob = 1;
    *log2p = 0;
    if (clen % tw || klen % tw || !klen)
        return ig_error_set(err, IG_EUSAGE, "{continuation}: give at least one token id");
    ig_buf all = {0};
    ig_factor *f = calloc(klen / tw, sizeof *f);
    if (!f || ig_buf_append(&all, ctx, clen)) {
        free(f);
        ig_buf_free(&all);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < klen / tw; i++) { /* P(t_i | context, t_0 … t_{i−1}) */
        igi_token_dist td;
        if ((rc = igi_token_dist_get(idx, m, all.data, all.len, &td, err))) {
            igi_token_dist_free(&td);
            break;
        }
        const uint8_t *t = cont + i * tw;
        double p = igi_token_sym_prob(idx, td.syms, td.ns, td.unseen, t);
        memcpy(f[i].bytes, t, tw);
        f[i].len = (uint8_t)tw;
        f[i].prob = p;
        f[i].effective_n = td.d.length + 1;
        *prob *= p;
        *log2p = p > 0 && !isinf(*log2p) ? *log2p + log2(p) : -INFINITY;
        igi_token_dist_free(&td);
        if (ig_buf_append(&all, t, tw))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    ig_buf_free(&all);
    if (rc) {
        free(f);
        return rc;
    }
    *factors = f;
    *nf = klen / tw;
    return 0;
}

/* The token after suffix s (k tokens ending at ids + at·tw) at one of its occurrences, or the
 * separator when that occurrence ends its shard's text: with cnt(s·u) = cnt(s), it tells a
 * sparse estimate (one possible next token) without the whole histogram. */
static uint32_t some_next(const ig_index *idx, const uint8_t *s, size_t k)
{
    const uint32_t tw = idx->tw;
    ig_pos p;
    uint64_t total;
    if (ig_positions(idx, s, k * tw, &p, 1, &total) != 1)
        return ig_token_end(tw);
    size_t n = tw;
    const uint8_t *t = ig_text(idx, p.shard, p.offset + k * tw, &n);
    return n == tw ? ig_token_at(t, tw) : ig_token_end(tw);
}

int igi_token_eval(const ig_index *idx, const ig_model *m, const uint8_t *ids, size_t len,
                   const volatile int *cancel, ig_eval_result *r, ig_error *err)
{
    const uint32_t tw = idx->tw, end = ig_token_end(tw);
    memset(r, 0, sizeof *r);
    if (len / tw < 2) /* the first token has no context: nothing would be scored */
        return ig_error_set(err, IG_EUSAGE, "nothing to score: the text needs at least 2 tokens (it gives %zu)",
                            len / tw);
    const int64_t L = m->max_context;
    r->hist_len = (L >= 0 && L < 4096 ? (size_t)L : 4096) + 2;
    if (!(r->effective_n_hist = calloc(r->hist_len, sizeof *r->effective_n_hist)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    uint64_t vsize = igi_token_outcomes(idx);
    if (m->alpha > 0 && !vsize)
        return ig_error_set(err, IG_EUSAGE, "{alpha} on a dataset of 4-byte ids needs its vocabulary");
    r->floor_ln = log(1e-10);
    size_t n = len / tw, doc = 0;
    for (size_t i = 1; i < n; i++) {
        if ((i & 255) == 0 && cancel && *cancel) {
            r->cancelled = 1;
            break;
        }
        if (ig_token_at(ids + (i - 1) * tw, tw) == end)
            doc = i; /* documents are independent: the context starts after a separator */
        size_t from = doc;
        if (L >= 0 && i - from > (uint64_t)L)
            from = i - (size_t)L;
        const uint8_t *t = ids + i * tw;
        int rc;
        if (m->alpha > 0 && (rc = beyond_vocab(idx, ig_token_at(t, tw), err)))
            return rc;
        size_t lo = 0, hi = i - from; /* ℓ*: counts only fall as the suffix grows */
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (ig_count(idx, t - mid * tw, mid * tw))
                lo = mid;
            else
                hi = mid - 1;
        }
        size_t star = lo, k = m->kind == IG_MODEL_NGRAM ? m->n - 1 : star;
        double p;
        if (m->kind == IG_MODEL_WEIGHTED || m->kind == IG_MODEL_INTERP) { /* from the whole mixture */
            ig_dist dd;
            memset(&dd, 0, sizeof dd);
            ig_symbol *sy = NULL;
            size_t ns = 0;
            double unseen;
            int rc = igi_token_predict(idx, m, ids + from * tw, (i - from) * tw, &dd, &sy, &ns, NULL, &unseen, err);
            if (rc) {
                ig_dist_free(&dd);
                return rc;
            }
            p = 0;
            for (size_t q = 0; q < ns; q++)
                if (!memcmp(sy[q].bytes, t, tw))
                    p = sy[q].prob;
            k = dd.length;
            free(sy);
            ig_dist_free(&dd);
        } else if (k > star) /* the (n−1)-suffix never occurs (or the context is shorter) */
            p = m->alpha > 0 ? 1.0 / (double)vsize : 0;
        else {
            uint64_t ck = ig_count(idx, t - k * tw, k * tw), ct = ig_count(idx, t - k * tw, (k + 1) * tw);
            p = m->alpha > 0 ? ((double)ct + m->alpha) / ((double)ck + m->alpha * (double)vsize)
                             : ck ? (double)ct / (double)ck : 0;
        }
        /* the ∞-gram's own estimate: agreement (P > 0.5), and whether it is sparse */
        uint64_t cs = ig_count(idx, t - star * tw, star * tw), cst = ig_count(idx, t - star * tw, (star + 1) * tw);
        int sparse = cst == cs;
        if (!sparse) {
            uint32_t u = some_next(idx, t - star * tw, star);
            uint8_t pat[4 * 4096 + 4];
            if (star < 4096) {
                memcpy(pat, t - star * tw, star * tw);
                for (uint32_t b = 0; b < tw; b++)
                    pat[star * tw + b] = (uint8_t)(u >> (8 * b));
                sparse = ig_count(idx, pat, (star + 1) * tw) == cs;
            }
        }
        int agree = cs && 2 * cst > cs;
        r->agree += (uint64_t)agree;
        if (sparse) {
            r->sparse++;
            r->agree_sparse += (uint64_t)agree;
        } else {
            r->dense++;
            r->agree_dense += (uint64_t)agree;
        }
        r->effective_n_hist[k + 1 < r->hist_len ? k + 1 : r->hist_len - 1]++;
        r->scored++;
        if (p > 0)
            r->sum_ln += log(p);
        else {
            r->zero_prob++;
            r->sum_ln += r->floor_ln;
        }
    }
    r->perplexity = r->scored ? exp(-r->sum_ln / (double)r->scored) : 0;
    r->bits_per_byte = r->scored ? -r->sum_ln / ((double)r->scored * log(2)) : 0;
    return 0;
}

typedef struct scored_tok {
    uint32_t id;
    uint64_t len, count;
    double score;
} scored_tok;

static int cmp_scored_id(const void *a, const void *b)
{
    const scored_tok *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->len > y->len ? -1 : x->len < y->len; /* the longest suffix first */
}

static int cmp_scored(const void *a, const void *b)
{
    const ig_backoff_cand *x = a, *y = b;
    return by_value_then_id(x->score, y->score, x->bytes, y->bytes, x->len);
}

int igi_token_backoff(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, ig_backoff_cand **out,
                      size_t *n, uint64_t *ltau, ig_error *err)
{
    const uint32_t tw = idx->tw;
    *out = NULL;
    *n = 0;
    size_t ntok = usable_context(idx, m, &ctx, len);
    size_t lo = 0, hi = ntok; /* ℓτ: the longest suffix seen at least τ times (counts fall as it grows) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (count_suffix(idx, ctx, ntok, mid) >= m->threshold)
            lo = mid;
        else
            hi = mid - 1;
    }
    *ltau = lo;
    /* every next token of every suffix from ℓτ down to the empty one; lengths of equal count
     * have the same next tokens, so only the longest of them is read */
    scored_tok *v = NULL;
    size_t nv = 0, cap = 0;
    uint64_t last = UINT64_MAX;
    int rc = 0;
    ig_range *r = calloc(idx->nshards, sizeof *r);
    if (!r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t ell = lo + 1; !rc && ell-- > 0;) {
        uint64_t c = ig_find(idx, ctx + (ntok - ell) * tw, ell * tw, r);
        if (c == last || !c)
            continue;
        last = c;
        ig_token_count *h;
        size_t nh;
        if ((rc = igi_token_hist(idx, r, ell * tw, 0, &h, &nh, err)))
            break;
        double f = pow(m->factor, (double)(lo - ell));
        for (size_t i = 0; i < nh; i++) {
            if (igi_grow(&v, nv, &cap, sizeof *v, 256)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            v[nv++] = (scored_tok){h[i].id, ell, h[i].count, f * (double)h[i].count / (double)c};
        }
        free(h);
    }
    free(r);
    ig_backoff_cand *cands = NULL;
    size_t k = 0;
    if (!rc) {
        qsort(v, nv, sizeof *v, cmp_scored_id);
        if (!(cands = calloc(nv ? nv : 1, sizeof *cands)))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    double sum = 0;
    for (size_t i = 0; !rc && i < nv; i++) {
        if (i && v[i].id == v[i - 1].id)
            continue; /* scored at a longer suffix already */
        ig_backoff_cand *x = &cands[k++];
        for (uint32_t b = 0; b < tw; b++)
            x->bytes[b] = (uint8_t)(v[i].id >> (8 * b));
        x->len = (uint8_t)tw;
        x->score = v[i].score;
        x->length = v[i].len;
        x->count = v[i].count;
        sum += x->score;
    }
    free(v);
    if (rc) {
        free(cands);
        return rc;
    }
    for (size_t i = 0; i < k; i++)
        cands[i].normalized = sum > 0 ? cands[i].score / sum : 0;
    qsort(cands, k, sizeof *cands, cmp_scored);
    *out = cands;
    *n = k;
    return 0;
}
