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

typedef struct index_step {
    const ig_index *idx;
    const ig_model *model;
} index_step;

static int predict_index(void *user, const uint8_t *buf, size_t n, size_t step, ig_dist *d, ig_error *err)
{
    (void)step;
    const index_step *s = user;
    return ig_predict(s->idx, s->model, buf, n, d, err);
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
    memcpy(buf, ctx, len);
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
    index_step s = {idx, model};
    return chain(predict_index, &s, ctx, len, cont, clen, chars, factors, nfactors, prob, log2p, err);
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

int ig_backoff(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len, int chars,
               ig_backoff_cand **out, size_t *n, uint64_t *ltau, ig_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    ig_ctx c = igi_ctx_make(ctx, len, model->max_context);
    /* ℓτ: the longest suffix seen at least τ times (counts fall as ℓ grows) */
    uint64_t lo = 0, hi = c.n + 1;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (igi_ctx_count(idx, c, mid) >= model->threshold)
            lo = mid;
        else
            hi = mid;
    }
    *ltau = lo;
    bo_list l = {0};
    uint64_t ell = lo, cnt = igi_ctx_count(idx, c, ell);
    /* walk the lengths where the distribution changes, longest first; a symbol's score
     * comes from the first (longest) length where it was seen */
    ig_model inf;
    ig_model_default(&inf);
    for (;;) {
        ig_dist d = {0};
        /* the ∞-gram of exactly this suffix: the suffix itself is the context */
        if ((rc = ig_predict(idx, &inf, c.p + c.n - ell, ell, &d, err)))
            break;
        ig_symbol *syms = NULL;
        size_t ns = 0;
        rc = ig_dist_symbols(idx, &d, c.p + c.n - ell, ell, chars, &syms, &ns, NULL, err);
        ig_dist_free(&d);
        if (rc)
            break;
        double scale = pow(model->factor, (double)(*ltau - ell));
        for (size_t i = 0; i < ns && !rc; i++) {
            if (bo_find(&l, syms[i].bytes, syms[i].len))
                continue;
            if (l.n == l.cap) {
                size_t nc = l.cap ? l.cap * 2 : 32;
                ig_backoff_cand *p = realloc(l.v, nc * sizeof *p);
                if (!p) {
                    rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                    break;
                }
                l.v = p;
                l.cap = nc;
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
        uint64_t ncnt = 0, next = igi_ctx_next_level(idx, c, ell, cnt, ell - 1, &ncnt, NULL);
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
