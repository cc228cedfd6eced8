/*
 * Probability of a continuation by the chain rule, and Stupid Backoff scores.
 */
#include "model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The distribution after buf[0, n), the context followed by the first `step` bytes of the
 * continuation: from an index, or from the levels the parts of a corpus gave. */
typedef int (*step_fn)(void *user, const uint8_t *buf, size_t n, size_t step, ig_dist *d, ig_error *err);

/* The chain over an index carries ℓ* from byte to byte, as generation does: the context
 * grows by one byte a step, so ℓ* grows by at most one, and the suffix one byte longer than
 * the last ℓ* starts where it started — its intervals are the last ones narrowed by a byte.
 * A step then costs a narrowing and the distribution, not a search for ℓ* over the whole
 * context (which made a continuation the corpus holds verbatim quadratic in its length). The
 * distributions are ig_predict's to the bit: the same ℓ*, the same model code. */
typedef struct index_step {
    const ig_index *idx;
    const ig_model *model;
    const uint8_t *base;   ///< the whole text (context and continuation)
    size_t doc;            ///< where the document of the text's end starts (after its last 0xFF)
    int have;              ///< ell, cnt and m hold the last step's ℓ*
    uint64_t ell, cnt;
    ig_match m;            ///< intervals of suf(ell) (m.len == ell when valid)
    uint64_t hints[IG_LEVEL_HINTS];
    igi_ivcache cache;
} index_step;

/* The usable context of base[0, n): igi_ctx_make without its search for the last 0xFF, which
 * the steps track (a search per step would be quadratic too). */
static ig_ctx step_ctx(index_step *s, size_t n)
{
    if (n && s->base[n - 1] == IG_DOC_END)
        s->doc = n;
    size_t off = s->doc, len = n - off;
    if (s->model->max_context >= 0 && len > (uint64_t)s->model->max_context) {
        off += len - (size_t)s->model->max_context;
        len = (size_t)s->model->max_context;
    }
    return (ig_ctx){s->base + off, len};
}

/* ℓ* of c, knowing ℓ* of c without its last byte was s->ell: the longest occurring suffix is at
 * most one byte longer, and counts only fall as a suffix grows, so the first length tried is
 * ℓ* + 1 (a narrowing of the last intervals), then ℓ*, then lengths galloping down and a
 * bisection between the last that failed and the first that occurs. */
static void step_longest(index_step *s, ig_ctx c)
{
    uint64_t top = s->have && s->ell + 1 < c.n ? s->ell + 1 : c.n;
    if (!s->have) { /* the first step: the same search ig_predict makes */
        s->ell = igi_ctx_longest(s->idx, c, &s->cnt);
        s->have = 1;
        igi_ivcache_find(&s->cache, s->idx, c.p + c.n - s->ell, s->ell, &s->m);
        return;
    }
    uint64_t lo = 0, hi = top + 1; /* suf(lo) occurs (the empty one does); suf(hi) does not */
    for (uint64_t step = 1, ell = top; ell > 0; step *= 2) {
        igi_ivcache_find(&s->cache, s->idx, c.p + c.n - ell, ell, &s->m);
        if (s->m.count) {
            lo = ell;
            break;
        }
        hi = ell;
        ell = ell > step ? ell - step : 0;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        igi_ivcache_find(&s->cache, s->idx, c.p + c.n - mid, mid, &s->m);
        if (s->m.count)
            lo = mid;
        else
            hi = mid;
    }
    if (s->m.len != lo || (lo && !s->m.count))
        igi_ivcache_find(&s->cache, s->idx, c.p + c.n - lo, lo, &s->m);
    s->ell = lo;
    s->cnt = lo ? s->m.count : s->cache.total;
}

static int predict_index(void *user, const uint8_t *buf, size_t n, size_t step, ig_dist *d, ig_error *err)
{
    (void)step;
    index_step *s = user;
    memset(d, 0, sizeof *d);
    if (ig_cancelled(s->model->cancel))
        return ig_error_set(err, IG_ECANCELLED, "cancelled");
    s->base = s->cache.base = buf;
    ig_ctx c = step_ctx(s, n);
    step_longest(s, c);
    return igi_predict_cached(s->idx, s->model, c, buf, n, s->ell, s->cnt, s->ell ? &s->m : NULL, s->hints, NULL,
                              &s->cache, d, err);
}

typedef struct levels_step {
    const ig_model *model;
    const uint64_t *longest;
    const ig_part_level *levels;
} levels_step;

static int predict_levels(void *user, const uint8_t *buf, size_t n, size_t step, ig_dist *d, ig_error *err)
{
    const levels_step *s = user;
    return igi_predict_from_level(s->model, buf, n, s->longest[step], &s->levels[step], d, err);
}

static int chain(step_fn predict, void *user, const uint8_t *ctx, size_t len, const uint8_t *cont, size_t clen,
                 int chars, ig_factor **factors, size_t *nfactors, double *prob, double *log2p, ig_error *err)
{
    *factors = NULL;
    *nfactors = 0;
    uint8_t *buf = malloc(len + clen + 1);
    ig_factor *f = calloc(clen ? clen : 1, sizeof *f);
    if (!buf || !f) {
        free(buf);
        free(f);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    if (len) /* (NULL, 0) is an empty text: memcpy must not be handed NULL */
        memcpy(buf, ctx, len);
    if (clen)
        memcpy(buf + len, cont, clen);
    double lp = 0;
    size_t nf = 0;
    int rc = 0;
    /* bytes still expected by the character being grouped: the rest of the context's
     * last character first, then each lead byte's own length */
    int expect = chars ? igi_utf8_pending(ctx, len) : 0, first_partial = expect > 0;
    for (size_t i = 0; i < clen; i++) {
        ig_dist d;
        if ((rc = predict(user, buf, len + i, i, &d, err)))
            break;
        double p = d.defined ? d.prob[cont[i]] : 0;
        uint64_t en = d.length + 1;
        ig_dist_free(&d);
        /* a new factor starts at each byte, or at each character in the character view
         * (a stray continuation byte is a factor of its own, as in the symbol lists) */
        int joins = chars && expect > 0 && (cont[i] & 0xC0) == 0x80 && (nf > 0 || first_partial);
        int starts = !joins || nf == 0;
        if (joins)
            expect--;
        else
            expect = chars ? ((cont[i] & 0xC0) == 0x80 ? 0 : igi_utf8_char_len(cont[i]) - 1) : 0;
        if (starts) {
            f[nf] = (ig_factor){.prob = p, .effective_n = en};
            f[nf].bytes[0] = cont[i];
            f[nf].len = 1;
            nf++;
        } else {
            f[nf - 1].bytes[f[nf - 1].len++] = cont[i];
            f[nf - 1].prob *= p;
        }
        lp += p > 0 ? log2(p) : -INFINITY;
    }
    free(buf);
    if (rc) {
        free(f);
        return rc;
    }
    *factors = f;
    *nfactors = nf;
    *log2p = lp;
    *prob = exp2(lp);
    return 0;
}

int ig_prob(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len, const uint8_t *cont,
            size_t clen, int chars, ig_factor **factors, size_t *nfactors, double *prob, double *log2p,
            ig_error *err)
{
    *factors = NULL;
    *nfactors = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    index_step s = {.idx = idx, .model = model};
    for (int i = 0; i < IG_LEVEL_HINTS; i++)
        s.hints[i] = UINT64_MAX;
    s.m = igi_match_alloc(idx);
    if (!s.m.r || igi_ivcache_init(&s.cache, idx, 256))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    else
        rc = chain(predict_index, &s, ctx, len, cont, clen, chars, factors, nfactors, prob, log2p, err);
    igi_match_release(&s.m);
    igi_ivcache_free(&s.cache);
    return rc;
}

int ig_prob_from_levels(const ig_model *model, const uint8_t *ctx, size_t len, const uint8_t *cont, size_t clen,
                        int chars, const uint64_t *longest, const ig_part_level *levels, ig_factor **factors,
                        size_t *nfactors, double *prob, double *log2p, ig_error *err)
{
    *factors = NULL;
    *nfactors = 0;
    levels_step s = {model, longest, levels};
    return chain(predict_levels, &s, ctx, len, cont, clen, chars, factors, nfactors, prob, log2p, err);
}

typedef struct hook_step {
    int (*predict)(void *user, const ig_model *model, const uint8_t *text, size_t n, ig_dist *d, ig_error *err);
    void *user;
    const ig_model *model;
} hook_step;

static int predict_hook(void *user, const uint8_t *buf, size_t n, size_t step, ig_dist *d, ig_error *err)
{
    (void)step;
    const hook_step *s = user;
    memset(d, 0, sizeof *d);
    int rc = s->predict(s->user, s->model, buf, n, d, err);
    if (rc)
        ig_dist_free(d); /* chain frees a distribution only when it got one */
    return rc;
}

int ig_prob_with(int (*predict)(void *user, const ig_model *model, const uint8_t *text, size_t n, ig_dist *d,
                                ig_error *err),
                 void *user, const ig_model *model, const uint8_t *ctx, size_t len, const uint8_t *cont, size_t clen,
                 int chars, ig_factor **factors, size_t *nfactors, double *prob, double *log2p, ig_error *err)
{
    hook_step s = {predict, user, model};
    return chain(predict_hook, &s, ctx, len, cont, clen, chars, factors, nfactors, prob, log2p, err);
}

typedef struct bo_list {
    ig_backoff_cand *v;
    size_t n, cap;
} bo_list;

static ig_backoff_cand *bo_find(bo_list *l, const uint8_t *s, int len)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].len == len && !memcmp(l->v[i].bytes, s, (size_t)len))
            return &l->v[i];
    return NULL;
}

/* Where Stupid Backoff reads the corpus: the suffix counts and change points of the context,
 * and the symbols of the ∞-gram of a suffix taken as the whole context. From an index, or
 * from the parts of a corpus (their summed profile, and their levels at the lengths walked). */
typedef struct bo_src {
    uint64_t (*count)(void *u, uint64_t ell);
    uint64_t (*next)(void *u, uint64_t ell, uint64_t cnt, uint64_t *ncnt);
    /** The ∞-gram's symbols after exactly s[0, ell) (*syms malloc'd). */
    int (*symbols)(void *u, const uint8_t *s, uint64_t ell, int chars, ig_symbol **syms, size_t *ns, ig_error *err);
    void *u;
} bo_src;

static uint64_t bo_index_next(void *u, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    const igi_ctx_in *b = u;
    return igi_ctx_next_level(b->idx, b->c, ell, cnt, ell - 1, ncnt, NULL);
}

static int bo_index_symbols(void *u, const uint8_t *s, uint64_t ell, int chars, ig_symbol **syms, size_t *ns,
                            ig_error *err)
{
    const igi_ctx_in *b = u;
    ig_model inf;
    ig_model_default(&inf);
    ig_dist d = {0};
    /* the ∞-gram of exactly this suffix: the suffix itself is the context */
    int rc = ig_predict(b->idx, &inf, s, ell, &d, err);
    if (!rc)
        rc = ig_dist_symbols(b->idx, &d, s, ell, chars, syms, ns, NULL, err);
    ig_dist_free(&d);
    return rc;
}

/* Stupid Backoff over a source. With `lens` (room for every change point plus one), only the
 * lengths walked are written there (*nlens of them) and no symbol is asked for. */
static int backoff_with(const bo_src *src, const ig_model *model, ig_ctx c, int chars, ig_backoff_cand **out,
                        size_t *n, uint64_t *ltau, uint64_t *lens, size_t *nlens, ig_error *err)
{
    *out = NULL;
    *n = 0;
    /* ℓτ: the longest suffix seen at least τ times (counts fall as ℓ grows) */
    uint64_t lo = 0, hi = c.n + 1;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (src->count(src->u, mid) >= model->threshold)
            lo = mid;
        else
            hi = mid;
    }
    *ltau = lo;
    bo_list l = {0};
    uint64_t ell = lo, cnt = src->count(src->u, ell);
    int rc = 0;
    /* walk the lengths where the distribution changes, longest first; a symbol's score
     * comes from the first (longest) length where it was seen */
    for (size_t walked = 1;; walked++) {
        if ((walked & 63) == 0 && ig_cancelled(model->cancel)) {
            rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
            break;
        }
        if (lens)
            lens[(*nlens)++] = ell;
        ig_symbol *syms = NULL;
        size_t ns = 0;
        if (!lens && (rc = src->symbols(src->u, c.p + c.n - ell, ell, chars, &syms, &ns, err)))
            break;
        double scale = pow(model->factor, (double)(*ltau - ell));
        for (size_t i = 0; i < ns && !rc; i++) {
            if (bo_find(&l, syms[i].bytes, syms[i].len))
                continue;
            if (igi_grow(&l.v, l.n, &l.cap, sizeof *l.v, 32)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            ig_backoff_cand *b = &l.v[l.n++];
            memset(b, 0, sizeof *b);
            memcpy(b->bytes, syms[i].bytes, syms[i].len);
            b->len = syms[i].len;
            b->count = syms[i].count;
            b->length = ell;
            b->score = scale * syms[i].prob;
        }
        free(syms);
        if (rc || ell == 0)
            break;
        uint64_t ncnt = 0, next = src->next(src->u, ell, cnt, &ncnt);
        if (next == UINT64_MAX)
            break;
        ell = next;
        cnt = ncnt;
    }
    if (rc) {
        free(l.v);
        return rc;
    }
    double sum = 0;
    for (size_t i = 0; i < l.n; i++)
        sum += l.v[i].score;
    for (size_t i = 0; i < l.n; i++)
        l.v[i].normalized = sum > 0 ? l.v[i].score / sum : 0;
    for (size_t i = 1; i < l.n; i++) /* best first; stable on ties by bytes */
        for (size_t j = i; j > 0; j--) {
            ig_backoff_cand *x = &l.v[j - 1], *y = &l.v[j];
            int k = x->len < y->len ? x->len : y->len;
            int later = x->score < y->score ||
                        (x->score == y->score && memcmp(x->bytes, y->bytes, (size_t)k) > 0);
            if (!later)
                break;
            ig_backoff_cand t = *x;
            *x = *y;
            *y = t;
        }
    *out = l.v;
    *n = l.n;
    return 0;
}

int ig_backoff(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len, int chars,
               ig_backoff_cand **out, size_t *n, uint64_t *ltau, ig_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    igi_ctx_in b = {idx, igi_ctx_make(ctx, len, model->max_context)};
    bo_src src = {igi_ctx_in_count, bo_index_next, bo_index_symbols, &b};
    return backoff_with(&src, model, b.c, chars, out, n, ltau, NULL, NULL, err);
}

typedef struct bo_parts {
    const ig_part_profile *prof;
    const ig_part_level *levels;
    size_t nlevels;
} bo_parts;

static uint64_t bo_parts_count(void *u, uint64_t ell)
{
    const bo_parts *b = u;
    return igi_profile_count(b->prof, ell);
}

static uint64_t bo_parts_next(void *u, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    const bo_parts *b = u;
    return igi_profile_next(b->prof, ell, cnt, ncnt);
}

static int bo_parts_symbols(void *u, const uint8_t *s, uint64_t ell, int chars, ig_symbol **syms, size_t *ns,
                            ig_error *err)
{
    const bo_parts *b = u;
    const ig_part_level *lv = NULL;
    for (size_t i = 0; i < b->nlevels && !lv; i++)
        if (b->levels[i].ell == ell)
            lv = &b->levels[i];
    if (!lv)
        return ig_error_set(err, IG_EUSAGE, "no level of length %llu was given", (unsigned long long)ell);
    ig_model inf;
    ig_model_default(&inf);
    ig_dist d = {0};
    double unseen;
    int sparse;
    /* the ∞-gram of exactly this suffix: it occurs, so its ℓ* is its length */
    int rc = ig_predict_from_level(&inf, s, ell, ell, lv, chars, &d, syms, ns, &unseen, &sparse, err);
    ig_dist_free(&d);
    return rc;
}

int ig_backoff_lengths(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                       uint64_t **lens, size_t *n, ig_error *err)
{
    *lens = NULL;
    *n = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    /* ℓτ, then change points of the profile only: prof->n + 1 lengths at most */
    uint64_t *v = malloc((prof->n + 2) * sizeof *v), ltau;
    if (!v)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    bo_parts b = {prof, NULL, 0};
    bo_src src = {bo_parts_count, bo_parts_next, bo_parts_symbols, &b};
    ig_backoff_cand *cands = NULL;
    size_t nc = 0;
    rc = backoff_with(&src, model, igi_ctx_make(ctx, len, model->max_context), 0, &cands, &nc, &ltau, v, n, err);
    free(cands);
    if (rc) {
        free(v);
        *n = 0;
        return rc;
    }
    *lens = v;
    return 0;
}

int ig_backoff_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, int chars,
                          const ig_part_profile *prof, const ig_part_level *levels, size_t nlevels,
                          ig_backoff_cand **out, size_t *n, uint64_t *ltau, ig_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    bo_parts b = {prof, levels, nlevels};
    bo_src src = {bo_parts_count, bo_parts_next, bo_parts_symbols, &b};
    return backoff_with(&src, model, igi_ctx_make(ctx, len, model->max_context), chars, out, n, ltau, NULL, NULL,
                        err);
}
