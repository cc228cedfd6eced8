/*
 * Next-byte distributions of every model kind. Each is a mixture of "levels": the
 * next-byte histogram of the context's suffix at some length ℓ, with a coefficient,
 * P(b) = Σ coef_ℓ · count_ℓ(b) (+ Laplace mass). The ∞-gram and the n-gram have one
 * level; the weighted mixture one per group of lengths with equal counts; selective
 * back-off interpolation its kept levels. Keeping the levels makes every probability
 * explainable and lets the character view refine each level exactly.
 */
#include "model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ig_model_default(ig_model *m)
{
    memset(m, 0, sizeof *m);
    m->kind = IG_MODEL_INFGRAM;
    m->n = 3;
    m->beta = 2.0;
    m->sig_mid = 5.0;
    m->sig_slope = 1.0;
    m->min_len = 1;
    m->interp_k = 2;
    m->max_context = -1;
    m->factor = 0.4;
    m->threshold = 1;
}

int ig_model_check(const ig_model *m, ig_error *err)
{
    if (m->kind == IG_MODEL_NGRAM && m->n < 1)
        return ig_error_set(err, IG_EUSAGE, "{n} must be at least 1");
    if (!(m->alpha >= 0) || isinf(m->alpha))
        return ig_error_set(err, IG_EUSAGE, "{alpha} must be a finite number >= 0");
    if (m->kind == IG_MODEL_INTERP && (m->interp_k == 0 || m->interp_k < -1))
        return ig_error_set(err, IG_EUSAGE, "{interp}: K must be >= 1, or -1 for all levels");
    if (m->kind == IG_MODEL_WEIGHTED) {
        if (m->weight == IG_WEIGHT_EXPONENTIAL && !(m->beta > 0))
            return ig_error_set(err, IG_EUSAGE, "{beta}: the exponential base must be > 0");
        if (m->max_len && m->min_len > m->max_len)
            return ig_error_set(err, IG_EUSAGE, "{min_len} %u is above {max_len} %u", m->min_len, m->max_len);
    }
    if (m->sbi && m->kind != IG_MODEL_INTERP)
        return ig_error_set(err, IG_EUSAGE, "the SBI conventions apply to {interp} only");
    if (!(m->factor > 0) || m->factor > 1)
        return ig_error_set(err, IG_EUSAGE, "{factor}: the backoff factor must be in (0, 1]");
    if (m->threshold < 1)
        return ig_error_set(err, IG_EUSAGE, "{threshold}: the backoff threshold must be >= 1");
    return 0;
}

void ig_dist_free(ig_dist *d)
{
    if (!d)
        return;
    free(d->levels);
    d->levels = NULL;
    d->nlevels = 0;
    d->levels_cap = 0;
}

static int push_level(ig_dist *d, size_t *cap, const ig_level *lv, ig_error *err)
{
    (void)cap;
    if (d->nlevels == d->levels_cap) {
        size_t nc = d->levels_cap ? d->levels_cap * 2 : 4;
        ig_level *p = realloc(d->levels, nc * sizeof *p);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        d->levels = p;
        d->levels_cap = nc;
    }
    d->levels[d->nlevels++] = *lv;
    return 0;
}

/* Histogram of the suffix of length ell (whose count is known to be > 0). `known` (may
 * be NULL) is the match of the longest suffix, reused when ell is that length: a long
 * context then costs no search at all. */
static int level_hist(const ig_index *idx, ig_ctx c, uint64_t ell, const ig_match *known, ig_level *lv,
                      ig_error *err)
{
    memset(lv, 0, sizeof *lv);
    lv->length = ell;
    if (known && known->len == ell) {
        igi_match_hist(idx, known, lv->count, NULL);
        lv->suffix_count = lv->total = known->count;
        return 0;
    }
    ig_match m = igi_match_alloc(idx);
    if (!m.r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    igi_match_find(idx, c.p + c.n - ell, ell, &m);
    igi_match_hist(idx, &m, lv->count, NULL);
    lv->suffix_count = m.count;
    lv->total = m.count;
    igi_match_release(&m);
    return 0;
}

static double weight_of(const ig_model *m, uint64_t ell, uint64_t top)
{
    double x = (double)ell;
    switch (m->weight) {
    case IG_WEIGHT_LINEAR: return x;
    case IG_WEIGHT_QUADRATIC: return x * x;
    case IG_WEIGHT_EXPONENTIAL: return pow(m->beta, x - (double)top);
    default: return 1.0 / (1.0 + exp(-m->sig_slope * (x - m->sig_mid)));
    }
}

/* Fills prob[] from the levels and the smoothing mass. */
static void finish(ig_dist *d)
{
    memset(d->prob, 0, sizeof d->prob);
    for (size_t j = 0; j < d->nlevels; j++)
        for (int b = 0; b < 256; b++)
            if (d->levels[j].count[b])
                d->prob[b] += d->levels[j].denom > 0 ? (double)d->levels[j].count[b] / d->levels[j].denom
                                                     : d->levels[j].coef * (double)d->levels[j].count[b];
    for (int b = 0; b < 256; b++)
        d->prob[b] += d->smooth[b];
}

/* The distribution of one level lv (its histogram at length ell) with optional Laplace
 * smoothing: the ∞-gram and the n-gram, whether lv comes from this index or from the parts of
 * a corpus split over several machines (ig_predict_from_level). */
static int level_apply(const ig_model *model, const uint8_t *full, size_t full_len, uint64_t ell, ig_level lv,
                       ig_dist *d, size_t *cap, ig_error *err)
{
    d->length = ell;
    d->suffix_count = lv.suffix_count;
    memcpy(d->count, lv.count, sizeof d->count);
    double denom = (double)lv.total;
    if (model->alpha > 0) {
        uint8_t valid[256];
        int v = igi_utf8_valid_next(full, full_len, valid);
        denom += model->alpha * v;
        for (int b = 0; b < 256; b++)
            d->smooth[b] = valid[b] ? model->alpha / denom : 0;
    }
    if (denom <= 0)
        return 0; /* no estimate: leave undefined */
    lv.coef = lv.total ? 1.0 / denom : 0;
    lv.denom = lv.total ? denom : 0; /* count/denom, as the definition writes it */
    d->defined = 1;
    return push_level(d, cap, &lv, err);
}

/* One level at length ell of this index (∞-gram and n-gram). */
static int single_level(const ig_index *idx, const ig_model *model, ig_ctx c, const uint8_t *full,
                        size_t full_len, uint64_t ell, const ig_match *known, ig_dist *d, size_t *cap, ig_error *err)
{
    ig_level lv;
    int hrc = level_hist(idx, c, ell, known, &lv, err);
    return hrc ? hrc : level_apply(model, full, full_len, ell, lv, d, cap, err);
}

/* The n-gram's context never occurs: only smoothing can give an estimate. */
static void ngram_unseen(const ig_model *model, const uint8_t *ctx, size_t len, ig_dist *d)
{
    if (model->alpha > 0) {
        uint8_t valid[256];
        int v = igi_utf8_valid_next(ctx, len, valid);
        for (int b = 0; b < 256; b++)
            d->smooth[b] = valid[b] ? 1.0 / v : 0;
        d->defined = 1;
    }
}

int igi_predict_from_level(const ig_model *model, const uint8_t *ctx, size_t len, uint64_t longest,
                           const ig_part_level *pl, ig_dist *d, ig_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    if (model->kind != IG_MODEL_INFGRAM && model->kind != IG_MODEL_NGRAM)
        return ig_error_set(err, IG_EUSAGE, "only the ∞-gram and the n-gram read a single level");
    ig_ctx c = igi_ctx_make(ctx, len, model->max_context);
    uint64_t ell = model->kind == IG_MODEL_NGRAM ? model->n - 1 : longest;
    if (pl->ell != ell)
        return ig_error_set(err, IG_EUSAGE, "the level is of length %llu and the model reads length %llu",
                            (unsigned long long)pl->ell, (unsigned long long)ell);
    d->context_used = c.n;
    d->longest = longest;
    size_t cap = 0;
    if (model->kind == IG_MODEL_NGRAM && (ell > c.n || pl->suffix_count == 0)) {
        d->length = ell;
        ngram_unseen(model, ctx, len, d);
    } else {
        ig_level lv;
        memset(&lv, 0, sizeof lv);
        lv.length = ell;
        lv.suffix_count = lv.total = pl->suffix_count;
        memcpy(lv.count, pl->count, sizeof lv.count);
        if ((rc = level_apply(model, ctx, len, ell, lv, d, &cap, err))) {
            ig_dist_free(d);
            return rc;
        }
    }
    finish(d);
    return 0;
}

int ig_predict(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len,
               ig_dist *d, ig_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    ig_ctx c = igi_ctx_make(ctx, len, model->max_context);
    uint64_t lcount, longest = igi_ctx_longest(idx, c, &lcount);
    return igi_predict_known(idx, model, c, ctx, len, longest, lcount, NULL, NULL, NULL, d, err);
}

int igi_predict_known(const ig_index *idx, const ig_model *model, ig_ctx c, const uint8_t *ctx, size_t len,
                     uint64_t longest, uint64_t lcount, const ig_match *known, uint64_t *hints, ig_match *below,
                     ig_dist *d, ig_error *err)
{
    return igi_predict_cached(idx, model, c, ctx, len, longest, lcount, known, hints, below, NULL, d, err);
}

int igi_predict_cached(const ig_index *idx, const ig_model *model, ig_ctx c, const uint8_t *ctx, size_t len,
                      uint64_t longest, uint64_t lcount, const ig_match *known, uint64_t *hints, ig_match *below,
                      igi_ivcache *cache, ig_dist *d, ig_error *err)
{
    /* `below` is consumed here and, for interpolation, refilled with this context's change point */
    int have_below = below && below->len != UINT64_MAX && below->len < longest && below->count > lcount;
    uint64_t below_len = have_below ? below->len : UINT64_MAX, below_cnt = have_below ? below->count : 0;
    if (below)
        below->len = UINT64_MAX;
    /* d is cleared but its level buffer kept: a caller predicting step after step
     * (generation, evaluation) allocates it once */
    ig_level *keep = d->levels;
    size_t keep_cap = d->levels_cap;
    memset(d, 0, sizeof *d);
    d->levels = keep;
    d->levels_cap = keep_cap;
    int rc = 0;
    size_t cap = 0;
    d->context_used = c.n;
    d->longest = longest;

    switch (model->kind) {
    case IG_MODEL_INFGRAM:
        rc = single_level(idx, model, c, ctx, len, d->longest, known, d, &cap, err);
        break;
    case IG_MODEL_NGRAM: {
        uint64_t ell = model->n - 1;
        d->length = ell;
        if (ell > c.n || igi_ctx_count(idx, c, ell) == 0) {
            ngram_unseen(model, ctx, len, d);
            break;
        }
        rc = single_level(idx, model, c, ctx, len, ell, NULL, d, &cap, err);
        break;
    }
    case IG_MODEL_WEIGHTED: {
        uint64_t top = d->longest;
        if (model->max_len && model->max_len < top)
            top = model->max_len;
        uint64_t bottom = model->min_len ? model->min_len : 1;
        if (top == 0 || bottom > top) {
            d->fallback = 1;
            rc = single_level(idx, model, c, ctx, len, d->longest, known, d, &cap, err);
            break;
        }
        /* walk the groups of equal counts from the top length down */
        double wsum = 0;
        uint64_t ell = top, cnt = igi_ctx_count(idx, c, top);
        while (ell >= bottom && !rc) {
            uint64_t ncnt = 0, next = igi_ctx_next_level(idx, c, ell, cnt, ell - 1, &ncnt, NULL);
            uint64_t low = (next == UINT64_MAX || next < bottom) ? bottom : next + 1;
            double w = 0;
            for (uint64_t k = low; k <= ell; k++)
                w += weight_of(model, k, top);
            ig_level lv;
            if ((rc = level_hist(idx, c, ell, known, &lv, err)))
                break;
            lv.coef = w / (double)lv.total; /* normalised by Σw below */
            wsum += w;
            rc = push_level(d, &cap, &lv, err);
            if (next == UINT64_MAX || next < bottom)
                break;
            ell = next;
            cnt = ncnt;
        }
        for (size_t j = 0; j < d->nlevels; j++)
            d->levels[j].coef /= wsum;
        if (!rc) {
            d->length = top;
            d->suffix_count = d->levels[0].suffix_count;
            memcpy(d->count, d->levels[0].count, sizeof d->count);
            d->defined = 1;
        }
        break;
    }
    case IG_MODEL_INTERP: {
        d->length = d->longest;
        d->suffix_count = lcount;
        if (d->longest == 0)
            break; /* ℓ = 0 is never a level */
        uint64_t ell = d->longest, cnt = lcount, last_total = 0;
        double wsum = 0, w = 1;
        int first = 1, step = 0;
        /* the next level's intervals come back from the change-point search */
        ig_match found = igi_match_alloc(idx);
        found.len = UINT64_MAX;
        if (!found.r)
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        while (!rc) {
            ig_level lv;
            if ((rc = level_hist(idx, c, ell, found.len == ell ? &found : known, &lv, err)))
                break;
            if (first) {
                memcpy(d->count, lv.count, sizeof d->count);
                first = 0;
            }
            if (model->sbi) {
                lv.total -= lv.count[IG_DOC_END];
                lv.count[IG_DOC_END] = 0;
            }
            if (lv.total > last_total) {
                lv.coef = w;
                wsum += w * (double)lv.total;
                w *= IGI_INTERP_DECAY;
                last_total = lv.total;
                rc = push_level(d, &cap, &lv, err);
                if (model->interp_k > 0 && d->nlevels == (size_t)model->interp_k)
                    break;
            }
            /* the j-th change point moves little from one step of a text to the next */
            uint64_t hint = hints && step < IG_LEVEL_HINTS && hints[step] != UINT64_MAX ? hints[step] + 1 : ell - 1;
            uint64_t ncnt = 0, next;
            if (step == 0 && have_below) { /* the caller derived it: no search */
                next = below_len;
                ncnt = below_cnt;
                igi_match_copy(idx, &found, below);
                found.len = below_len; /* below->len was cleared on entry */
            } else {
                next = igi_ctx_next_level_cached(idx, c, ell, cnt, hint, &ncnt, &found, cache);
            }
            if (step == 0 && below && next != UINT64_MAX && found.len == next)
                igi_match_copy(idx, below, &found);
            if (hints && step < IG_LEVEL_HINTS)
                hints[step] = next;
            step++;
            if (next == UINT64_MAX || next == 0)
                break;
            ell = next;
            cnt = ncnt;
        }
        igi_match_release(&found);
        if (!rc && d->nlevels) {
            for (size_t j = 0; j < d->nlevels; j++)
                d->levels[j].coef /= wsum;
            d->defined = 1;
        }
        d->end_excluded = model->sbi;
        break;
    }
    }
    if (rc) {
        ig_dist_free(d);
        return rc;
    }
    finish(d);
    return 0;
}
