/*
 * Mixing corpus probabilities into an LLM's next-token distribution (share/doc/models.md,
 * "Mixing with an LLM").
 * A token is a byte string; its corpus probability is the chain rule over its bytes,
 * each factor from the model at its own effective n. Tokens are visited in byte order so
 * that each reuses the factors of the prefix it shares with the previous one (the walk
 * of a trie of the tokens). The mixture λ·P_corpus + (1−λ)·P_llm is computed with
 * log-sum-exp, renormalised over the given tokens and also returned raw.
 */
#include "infinigram/tokens.h"
#include "infinigram/generate.h"
#include "model_impl.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ig_mix_options_default(ig_mix_options *o)
{
    memset(o, 0, sizeof *o);
    ig_model_default(&o->model);
    o->lambda = 0.5;
    o->lambda_sparse = 0.9;
    o->lambda_dense = 0.1;
    o->lambda_max = 0.9;
}

/* A byte factor's distribution: the caller's corpus when it gave one, else the index's. */
static int mix_predict(const ig_index *idx, const ig_mix_options *o, const uint8_t *text, size_t len, ig_dist *d,
                       ig_error *err)
{
    if (!o->backend)
        return ig_predict(idx, &o->model, text, len, d, err);
    memset(d, 0, sizeof *d);
    return o->backend->predict(o->backend->user, &o->model, text, len, d, err);
}

static int by_bytes(const void *a, const void *b, void *user)
{
    const ig_mix_token *base = user;
    const ig_mix_token *x = &base[*(const size_t *)a], *y = &base[*(const size_t *)b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->bytes, y->bytes, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static double log_add(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    double m = a > b ? a : b;
    return m + log(exp(a - m) + exp(b - m));
}

/* λ for a context whose estimate is `sparse`, of effective n ell + 1 and suffix count cnt. */
static double choose_lambda(const ig_mix_options *o, int sparse, uint64_t ell, uint64_t cnt)
{
    switch (o->mode) {
    case IG_LAMBDA_SPARSE_DENSE: return sparse ? o->lambda_sparse : o->lambda_dense;
    case IG_LAMBDA_ADAPTIVE: return o->lambda_max * ((double)ell / ((double)ell + 5.0)) * ((double)cnt / ((double)cnt + 2.0));
    default: return o->lambda;
    }
}

/* The mixture of out[i].corpus_prob and the LLM's probabilities in log space, renormalised over
 * the tokens given, and the ranks before and after. */
static void mix_finish(const ig_mix_token *tokens, size_t n, double lambda, ig_mix_out *out)
{
    double lsum = -INFINITY;
    double ll = lambda > 0 ? log(lambda) : -INFINITY, l1 = lambda < 1 ? log1p(-lambda) : -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double lc = out[i].corpus_prob > 0 ? log(out[i].corpus_prob) : -INFINITY;
        double lm = log_add(ll + lc, l1 + tokens[i].llm_logprob);
        out[i].llm_prob = exp(tokens[i].llm_logprob);
        out[i].mixed_raw = exp(lm);
        lsum = log_add(lsum, lm);
    }
    for (size_t i = 0; i < n; i++) {
        double lc = out[i].corpus_prob > 0 ? log(out[i].corpus_prob) : -INFINITY;
        double lm = log_add(ll + lc, l1 + tokens[i].llm_logprob);
        out[i].mixed_prob = lsum == -INFINITY ? 0 : exp(lm - lsum);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t rb = 1, ra = 1;
        for (size_t j = 0; j < n; j++) {
            /* ties keep the given order */
            rb += tokens[j].llm_logprob > tokens[i].llm_logprob || (tokens[j].llm_logprob == tokens[i].llm_logprob && j < i);
            ra += out[j].mixed_raw > out[i].mixed_raw || (out[j].mixed_raw == out[i].mixed_raw && j < i);
        }
        out[i].rank_before = rb;
        out[i].rank_after = ra;
    }
}

/* ig_mix over a token index: the LLM's candidates are token ids (tw bytes each) of the same
 * vocabulary, so each one's corpus probability is one factor, the model's next-token
 * probability — no marginalising over bytes. */
static int token_mix(const ig_index *idx, const ig_mix_options *o, const uint8_t *ctx, size_t len,
                     const ig_mix_token *tokens, size_t n, ig_mix_out *out, double *lambda_out, uint64_t *en_out,
                     int *sparse_out, ig_error *err)
{
    const uint32_t tw = ig_index_token_width(idx);
    igi_token_dist td;
    int rc = igi_token_dist_get(idx, &o->model, ctx, len, &td, err);
    if (rc) {
        igi_token_dist_free(&td);
        return rc;
    }
    int sparse = ig_dist_sparse(&td.d, td.syms, td.ns, td.unseen);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        if (tokens[i].len != tw) {
            rc = ig_error_set(err, IG_EUSAGE, "token %zu is not one token id of this dataset", i + 1);
            break;
        }
        out[i].corpus_prob = igi_token_sym_prob(idx, td.syms, td.ns, td.unseen, tokens[i].bytes);
        out[i].effective_n = td.d.length + 1;
    }
    double lambda = choose_lambda(o, sparse, td.d.length, td.d.suffix_count);
    uint64_t en = td.d.length + 1;
    igi_token_dist_free(&td);
    if (rc)
        return rc;
    mix_finish(tokens, n, lambda, out);
    if (lambda_out)
        *lambda_out = lambda;
    if (en_out)
        *en_out = en;
    if (sparse_out)
        *sparse_out = sparse;
    return 0;
}

int ig_mix(const ig_index *idx, const ig_mix_options *o, const uint8_t *ctx, size_t len, const ig_mix_token *tokens,
           size_t n, ig_mix_out *out, double *lambda_out, uint64_t *en_out, int *sparse_out, ig_error *err)
{
    int rc = ig_model_check(&o->model, err);
    if (rc)
        return rc;
    if ((unsigned)o->mode > IG_LAMBDA_ADAPTIVE)
        return ig_error_set(err, IG_EUSAGE, "mode %d is not a way of choosing lambda (fixed 0, sparse-dense 1, "
                            "adaptive 2)", (int)o->mode);
    if (o->mode == IG_LAMBDA_FIXED && !(o->lambda >= 0 && o->lambda <= 1))
        return ig_error_set(err, IG_EUSAGE, "lambda must be between 0 and 1");
    if (o->mode == IG_LAMBDA_SPARSE_DENSE && !(o->lambda_sparse >= 0 && o->lambda_sparse <= 1 &&
                                               o->lambda_dense >= 0 && o->lambda_dense <= 1))
        return ig_error_set(err, IG_EUSAGE, "lambda-sparse and lambda-dense must be between 0 and 1");
    if (o->mode == IG_LAMBDA_ADAPTIVE && !(o->lambda_max >= 0 && o->lambda_max <= 1))
        return ig_error_set(err, IG_EUSAGE, "the adaptive lambda ceiling must be between 0 and 1");
    for (size_t i = 0; i < n; i++) {
        if (!tokens[i].len)
            return ig_error_set(err, IG_EUSAGE, "token %zu is empty", i + 1);
        /* a log-probability: at most 0; −∞ (probability 0) is one */
        if (!(tokens[i].llm_logprob <= 0))
            return ig_error_set(err, IG_EUSAGE, "token %zu: its LLM log-probability %g is not at most 0", i + 1,
                                tokens[i].llm_logprob);
    }
    if (ig_index_token_width(idx))
        return token_mix(idx, o, ctx, len, tokens, n, out, lambda_out, en_out, sparse_out, err);
    /* the context itself: effective n, count and sparsity decide λ */
    ig_dist d;
    if ((rc = mix_predict(idx, o, ctx, len, &d, err)))
        return rc;
    int distinct = 0;
    for (int b = 0; b < 256; b++)
        distinct += d.prob[b] > 0;
    int sparse = d.defined && distinct == 1;
    uint64_t ell = d.length, cnt = d.suffix_count;
    ig_dist_free(&d);
    double lambda = choose_lambda(o, sparse, ell, cnt);
    /* chain rule over each token's bytes, sharing common prefixes */
    size_t maxlen = 0;
    for (size_t i = 0; i < n; i++)
        maxlen = tokens[i].len > maxlen ? tokens[i].len : maxlen;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    uint8_t *buf = malloc(len + maxlen + 1);
    double *cum = malloc((maxlen + 1) * sizeof *cum);      /* log P of the first k bytes */
    uint64_t *fen = malloc((maxlen + 1) * sizeof *fen);
    if (!order || !buf || !cum || !fen) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, by_bytes, (void *)tokens);
    memcpy(buf, ctx, len);
    cum[0] = 0;
    const ig_mix_token *prev = NULL;
    for (size_t k = 0; k < n; k++) {
        const ig_mix_token *t = &tokens[order[k]];
        size_t common = 0;
        if (prev)
            while (common < prev->len && common < t->len && prev->bytes[common] == t->bytes[common])
                common++;
        for (size_t i = common; i < t->len; i++) {
            memcpy(buf + len + i, t->bytes + i, 1);
            if (cum[i] == -INFINITY) {
                cum[i + 1] = -INFINITY;
                fen[i] = 0;
                continue;
            }
            if ((rc = mix_predict(idx, o, buf, len + i, &d, err)))
                goto out;
            double p = d.defined ? d.prob[t->bytes[i]] : 0;
            fen[i] = d.length + 1;
            ig_dist_free(&d);
            cum[i + 1] = cum[i] + (p > 0 ? log(p) : -INFINITY);
        }
        /* buf keeps this token's bytes: the next token reuses the common prefix */
        for (size_t i = 0; i < t->len; i++)
            buf[len + i] = t->bytes[i];
        ig_mix_out *r = &out[order[k]];
        memset(r, 0, sizeof *r);
        r->corpus_prob = exp(cum[t->len]);
        r->effective_n = fen[0];
        prev = t;
    }
    mix_finish(tokens, n, lambda, out);
    if (lambda_out)
        *lambda_out = lambda;
    if (en_out)
        *en_out = ell + 1;
    if (sparse_out)
        *sparse_out = sparse;
out:
    IGI_FREE(order, buf, cum, fen);
    return rc;
}
