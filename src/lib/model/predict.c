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
    if ((unsigned)m->kind > IG_MODEL_INTERP)
        return ig_error_set(err, IG_EUSAGE, "model kind %d is not one of the four", (int)m->kind);
    if (m->kind == IG_MODEL_WEIGHTED && (unsigned)m->weight > IG_WEIGHT_SIGMOID)
        return ig_error_set(err, IG_EUSAGE, "{weighted}: weight function %d is not one of the four", (int)m->weight);
    if (!isfinite(m->beta) || !isfinite(m->sig_mid) || !isfinite(m->sig_slope))
        return ig_error_set(err, IG_EUSAGE, "{beta} and the sigmoid's midpoint and slope must be finite numbers");
    if (m->max_context < -1)
        return ig_error_set(err, IG_EUSAGE, "{max_context}: %lld (at least -1, meaning all)", (long long)m->max_context);
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
    if (d) { /* the levels only: the distribution itself (prob, count, ...) stays readable */
        free(d->levels);
        d->levels = NULL;
        d->nlevels = d->levels_cap = 0;
    }
}

static int push_level(ig_dist *d, size_t *cap, const ig_level *lv, ig_error *err)
{
    (void)cap;
    if (igi_grow(&d->levels, d->nlevels, &d->levels_cap, sizeof *d->levels, 4))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
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

/* log σ(s·(x − mid)), computed without overflow for any finite slope and midpoint. */
static double log_sigmoid(const ig_model *m, double x)
{
    double z = fmax(fmin(m->sig_slope * (x - m->sig_mid), 1e300), -1e300);
    return z < 0 ? z - log1p(exp(z)) : -log1p(exp(-z));
}

double igi_model_weight(const ig_model *m, uint64_t ell, uint64_t bottom, uint64_t top)
{
    double x = (double)ell;
    switch (m->weight) {
    case IG_WEIGHT_LINEAR: return x;
    case IG_WEIGHT_QUADRATIC: return x * x;
    case IG_WEIGHT_EXPONENTIAL: return pow(m->beta, x - (double)(m->beta >= 1 ? top : bottom));
    default:
        /* σ(s·(ℓ − mid)) over its largest value on [bottom, top] (at an end: σ is monotone);
         * the mixture normalises by Σw, so only ratios count, and a midpoint far from the
         * lengths no longer makes every weight underflow to 0 (and the mixture 0/0) */
        return exp(log_sigmoid(m, x) - fmax(log_sigmoid(m, (double)bottom), log_sigmoid(m, (double)top)));
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

/* Where a mixture (weighted, interpolation) reads its levels: the suffix counts, the change
 * points and the histograms of one context. From an index, with the matches, hints and caches
 * that make a step of a text cheap; or from the parts of a corpus (their summed count profile
 * and their histograms at its change points). */
typedef struct igi_level_src {
    /** cnt(suf(ell)) */
    uint64_t (*count)(void *u, uint64_t ell);
    /** The step-th change point under ell (cnt_ell = cnt(ell)): the largest ℓ' < ell with
     *  cnt(ℓ') > cnt_ell, its count in *cnt; UINT64_MAX when none (igi_ctx_next_level). */
    uint64_t (*next)(void *u, int step, uint64_t ell, uint64_t cnt_ell, uint64_t *cnt);
    /** The histogram of suf(ell) as level_hist makes it. */
    int (*hist)(void *u, uint64_t ell, ig_level *lv, ig_error *err);
    void *u;
} igi_level_src;

typedef struct index_src {
    igi_ctx_in in;         ///< first: igi_ctx_in_count reads it
    const ig_match *known;
    uint64_t *hints;
    ig_match *below;
    int have_below;
    uint64_t below_len, below_cnt;
    igi_ivcache *cache;
    int weighted;          ///< the weighted mixture searches without hints, cache or kept intervals
    ig_match found;        ///< the last change point's intervals (len UINT64_MAX: none)
} index_src;

static uint64_t index_next(void *u, int step, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    index_src *s = u;
    if (s->weighted)
        return igi_ctx_next_level(s->in.idx, s->in.c, ell, cnt, ell - 1, ncnt, NULL);
    /* the j-th change point moves little from one step of a text to the next */
    uint64_t hint = s->hints && step < IG_LEVEL_HINTS && s->hints[step] != UINT64_MAX ? s->hints[step] + 1 : ell - 1;
    uint64_t next;
    if (step == 0 && s->have_below) { /* the caller derived it: no search */
        next = s->below_len;
        *ncnt = s->below_cnt;
        igi_match_copy(s->in.idx, &s->found, s->below);
        s->found.len = s->below_len; /* below->len was cleared on entry */
    } else {
        next = igi_ctx_next_level_cached(s->in.idx, s->in.c, ell, cnt, hint, ncnt, &s->found, s->cache);
    }
    if (step == 0 && s->below && next != UINT64_MAX && s->found.len == next)
        igi_match_copy(s->in.idx, s->below, &s->found);
    if (s->hints && step < IG_LEVEL_HINTS)
        s->hints[step] = next;
    return next;
}

static int index_hist(void *u, uint64_t ell, ig_level *lv, ig_error *err)
{
    const index_src *s = u;
    return level_hist(s->in.idx, s->in.c, ell, s->found.len == ell ? &s->found : s->known, lv, err);
}

/* The weighted mixture and selective interpolation from their levels (d->longest and
 * d->context_used set; lcount = cnt(ℓ*)). */
static int mixture(const igi_level_src *src, const ig_model *model, const uint8_t *ctx, size_t len, uint64_t lcount,
                   ig_dist *d, size_t *cap, ig_error *err)
{
    int rc = 0;
    if (model->kind == IG_MODEL_WEIGHTED) {
        uint64_t top = d->longest;
        if (model->max_len && model->max_len < top)
            top = model->max_len;
        uint64_t bottom = model->min_len ? model->min_len : 1;
        if (top == 0 || bottom > top) {
            d->fallback = 1;
            ig_level lv;
            if ((rc = src->hist(src->u, d->longest, &lv, err)))
                return rc;
            return level_apply(model, ctx, len, d->longest, lv, d, cap, err);
        }
        /* walk the groups of equal counts from the top length down */
        double wsum = 0;
        uint64_t ell = top, cnt = src->count(src->u, top);
        while (ell >= bottom && !rc) {
            if ((d->nlevels & 63) == 63 && ig_cancelled(model->cancel)) {
                rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
                break;
            }
            uint64_t ncnt = 0, next = src->next(src->u, 0, ell, cnt, &ncnt);
            uint64_t low = (next == UINT64_MAX || next < bottom) ? bottom : next + 1;
            double w = 0;
            for (uint64_t k = low; k <= ell; k++)
                w += igi_model_weight(model, k, bottom, top);
            ig_level lv;
            if ((rc = src->hist(src->u, ell, &lv, err)))
                break;
            lv.coef = w / (double)lv.total; /* normalised by Σw below */
            wsum += w;
            rc = push_level(d, cap, &lv, err);
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
        return rc;
    }
    d->length = d->longest;
    d->suffix_count = lcount;
    if (d->longest == 0)
        return 0; /* ℓ = 0 is never a level */
    uint64_t ell = d->longest, cnt = lcount, last_total = 0;
    double wsum = 0, w = 1;
    int first = 1, step = 0;
    while (!rc) {
        ig_level lv;
        if ((step & 63) == 63 && ig_cancelled(model->cancel)) {
            rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
            break;
        }
        if ((rc = src->hist(src->u, ell, &lv, err)))
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
            rc = push_level(d, cap, &lv, err);
            if (model->interp_k > 0 && d->nlevels == (size_t)model->interp_k)
                break;
        }
        uint64_t ncnt = 0, next = src->next(src->u, step, ell, cnt, &ncnt);
        step++;
        if (next == UINT64_MAX || next == 0)
            break;
        ell = next;
        cnt = ncnt;
    }
    if (!rc && d->nlevels) {
        for (size_t j = 0; j < d->nlevels; j++)
            d->levels[j].coef /= wsum;
        d->defined = 1;
    }
    d->end_excluded = model->sbi;
    return rc;
}

int ig_predict(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len,
               ig_dist *d, ig_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    if (ig_cancelled(model->cancel))
        return ig_error_set(err, IG_ECANCELLED, "cancelled");
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
    case IG_MODEL_WEIGHTED:
    case IG_MODEL_INTERP: {
        int weighted = model->kind == IG_MODEL_WEIGHTED;
        index_src is = {{idx, c}, known, hints, below, have_below, below_len, below_cnt, cache, weighted,
                        weighted ? (ig_match){0} : igi_match_alloc(idx)};
        /* interpolation's next level's intervals come back from the change-point search */
        is.found.len = UINT64_MAX;
        if (!weighted && !is.found.r) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        igi_level_src src = {igi_ctx_in_count, index_next, index_hist, &is};
        rc = mixture(&src, model, ctx, len, lcount, d, &cap, err);
        igi_match_release(&is.found);
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

/* ---------------------------------------------------------------- parts of a corpus */

int ig_part_profile_get(const ig_index *idx, const uint8_t *ctx, size_t len, int64_t cap, ig_part_profile *out,
                        ig_error *err)
{
    memset(out, 0, sizeof *out);
    ig_ctx c = igi_ctx_make(ctx, len, cap);
    uint64_t cnt, ell = igi_ctx_longest(idx, c, &cnt);
    size_t room = 0;
    for (;;) {
        if (out->n == room) {
            room = room ? room * 2 : 16;
            uint64_t *a = realloc(out->ell, room * sizeof *a), *b = a ? realloc(out->count, room * sizeof *b) : NULL;
            if (a)
                out->ell = a;
            if (b)
                out->count = b;
            if (!a || !b) {
                ig_part_profile_free(out);
                return ig_error_set(err, IG_ENOMEM, "out of memory");
            }
        }
        out->ell[out->n] = ell;
        out->count[out->n++] = cnt;
        uint64_t ncnt = 0, next = igi_ctx_next_level(idx, c, ell, cnt, ell - 1, &ncnt, NULL);
        if (next == UINT64_MAX)
            return 0;
        ell = next;
        cnt = ncnt;
    }
}

size_t igi_profile_at(const ig_part_profile *p, uint64_t ell)
{
    if (!p->n || ell > p->ell[0])
        return SIZE_MAX;
    size_t lo = 0, hi = p->n - 1; /* p->ell[lo] >= ell; find the last such */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (p->ell[mid] >= ell)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

uint64_t igi_profile_count(const ig_part_profile *p, uint64_t ell)
{
    size_t at = igi_profile_at(p, ell);
    return at == SIZE_MAX ? 0 : p->count[at];
}

int igi_profile_union_next(const ig_part_profile *a, const ig_part_profile *b, size_t *i, size_t *j, uint64_t *ell)
{
    if (*i >= a->n && *j >= b->n)
        return 0;
    uint64_t e = *j >= b->n || (*i < a->n && a->ell[*i] > b->ell[*j]) ? a->ell[*i] : b->ell[*j];
    if (*i < a->n && a->ell[*i] == e)
        ++*i;
    if (*j < b->n && b->ell[*j] == e)
        ++*j;
    *ell = e;
    return 1;
}

int ig_part_profile_add(ig_part_profile *to, const ig_part_profile *from, ig_error *err)
{
    /* the sum changes wherever a term does: at every change point of either */
    size_t n = 0, i = 0, j = 0, room = to->n + from->n;
    uint64_t *ell = malloc((room ? room : 1) * sizeof *ell), *cnt = malloc((room ? room : 1) * sizeof *cnt);
    if (!ell || !cnt) {
        free(ell);
        free(cnt);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    uint64_t e;
    while (igi_profile_union_next(to, from, &i, &j, &e)) {
        ell[n] = e;
        cnt[n++] = igi_profile_count(to, e) + igi_profile_count(from, e);
    }
    free(to->ell);
    free(to->count);
    to->ell = ell;
    to->count = cnt;
    to->n = n;
    return 0;
}

void ig_part_profile_free(ig_part_profile *p)
{
    IGI_CLEAR(p, p->ell, p->count);
}

const ig_part_level *igi_part_level_for(const ig_part_level *levels, size_t n, uint64_t ell)
{
    /* a suffix has the occurrences, hence the continuations, of the shortest change point at
     * or above it: levels are kept at change points only, longest first */
    const ig_part_level *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (levels[i].ell >= ell)
            best = &levels[i];
    return best;
}

typedef struct parts_src {
    const ig_part_profile *prof;
    const ig_part_level *levels;
} parts_src;

static uint64_t parts_count(void *u, uint64_t ell)
{
    const parts_src *s = u;
    return igi_profile_count(s->prof, ell);
}

uint64_t igi_profile_next(const ig_part_profile *p, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    /* the largest change point under ell: its count is the next larger one */
    for (size_t i = 0; i < p->n; i++)
        if (p->ell[i] < ell && p->count[i] > cnt) {
            *ncnt = p->count[i];
            return p->ell[i];
        }
    return UINT64_MAX;
}

static uint64_t parts_next(void *u, int step, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    (void)step;
    const parts_src *s = u;
    return igi_profile_next(s->prof, ell, cnt, ncnt);
}

static int parts_hist(void *u, uint64_t ell, ig_level *lv, ig_error *err)
{
    const parts_src *s = u;
    const ig_part_level *pl = igi_part_level_for(s->levels, s->prof->n, ell);
    memset(lv, 0, sizeof *lv);
    lv->length = ell;
    if (!pl)
        return ig_error_set(err, IG_EUSAGE, "no level at or above length %llu", (unsigned long long)ell);
    memcpy(lv->count, pl->count, sizeof lv->count);
    lv->suffix_count = lv->total = pl->suffix_count;
    return 0;
}

int igi_predict_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                           const ig_part_level *levels, ig_dist *d, ig_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    if (!prof->n)
        return ig_error_set(err, IG_EUSAGE, "an empty count profile");
    for (size_t i = 0; i < prof->n; i++)
        if (levels[i].ell != prof->ell[i])
            return ig_error_set(err, IG_EUSAGE, "level %zu is of length %llu, the profile's change point is %llu", i,
                                (unsigned long long)levels[i].ell, (unsigned long long)prof->ell[i]);
    ig_ctx c = igi_ctx_make(ctx, len, model->max_context);
    d->context_used = c.n;
    d->longest = prof->ell[0];
    parts_src ps = {prof, levels};
    igi_level_src src = {parts_count, parts_next, parts_hist, &ps};
    size_t cap = 0;
    ig_level lv;
    switch (model->kind) {
    case IG_MODEL_INFGRAM:
        if (!(rc = parts_hist(&ps, d->longest, &lv, err)))
            rc = level_apply(model, ctx, len, d->longest, lv, d, &cap, err);
        break;
    case IG_MODEL_NGRAM: {
        uint64_t ell = model->n - 1;
        d->length = ell;
        if (ell > c.n || igi_profile_count(prof, ell) == 0) {
            ngram_unseen(model, ctx, len, d);
            break;
        }
        if (!(rc = parts_hist(&ps, ell, &lv, err)))
            rc = level_apply(model, ctx, len, ell, lv, d, &cap, err);
        break;
    }
    default:
        rc = mixture(&src, model, ctx, len, prof->count[0], d, &cap, err);
    }
    if (rc) {
        ig_dist_free(d);
        return rc;
    }
    finish(d);
    return 0;
}
