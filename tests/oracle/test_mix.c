/*
 * Mixing against an independent reference: each token's corpus probability is computed
 * with ig_prob (the byte chain rule, itself checked against brute force in
 * test_models), the mixture λ·P_c + (1−λ)·P_llm directly, then renormalised; ranks by
 * sorting. Random corpora (multi-byte text, several shards), random contexts and token
 * sets with shared prefixes, partial UTF-8 tokens and absent tokens; every λ mode.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "infinigram/infinigram.h"
#include "util/util.h"

static int close_rel(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b))); }

int main(void)
{
    const char *sc = getenv("IG_ORACLE_SCALE");
    double scale = sc ? atof(sc) : 1.0;
    test_rng r = {777};
    static const char *pieces[] = {"a", "b", "ab", "é", "\xc3", "\xa9", "abé", " ", "ba", "\xe2\x82\xac", "€a", "zz"};
    char tmpl[] = "/tmp/igmixXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    int ncorpora = (int)(12 * scale) + 1;
    for (int ci = 0; ci < ncorpora; ci++) {
        /* documents of random pieces */
        size_t nd = 1 + rng_below(&r, 8);
        ig_buf *docs = calloc(nd, sizeof *docs);
        ig_source *src = calloc(nd, sizeof *src);
        for (size_t i = 0; i < nd; i++) {
            size_t k = 5 + rng_below(&r, 200);
            for (size_t j = 0; j < k; j++) {
                const char *p = pieces[rng_below(&r, 4) == 0 ? 9 : rng_below(&r, 3) == 0 ? 3 : rng_below(&r, 3)];
                if (rng_below(&r, 9) == 0)
                    p = " ";
                ig_buf_append(&docs[i], p, strlen(p));
            }
            src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)docs[i].data, .text_len = docs[i].len};
        }
        ig_ingest_options in;
        ig_ingest_options_default(&in);
        in.normalize = 0;
        ig_build_options bo;
        ig_build_options_default(&bo);
        bo.shard_size = ci % 2 ? 64 : 1u << 30;
        char dir[256];
        snprintf(dir, sizeof dir, "%s/c%d", tmpl, ci);
        ig_build_result res;
        ig_error e;
        ig_index *idx = NULL;
        CHECK(ig_build_index(dir, src, nd, &in, &bo, NULL, NULL, NULL, &res, &e) == 0, "build: %s", e.msg);
        ig_build_result_free(&res);
        CHECK(ig_index_open(&idx, dir, &e) == 0, "open: %s", e.msg);
        for (int q = 0; idx && q < (int)(200 * scale) + 5; q++) {
            /* context: a piece of a document, sometimes empty or absent */
            const ig_buf *d = &docs[rng_below(&r, nd)];
            size_t at = rng_below(&r, d->len), cl = rng_below(&r, 12);
            if (at + cl > d->len)
                cl = d->len - at;
            uint8_t ctx[64];
            memcpy(ctx, d->data + at, cl);
            if (rng_below(&r, 10) == 0)
                ctx[cl++] = 'q';
            /* tokens: pieces and concatenations (shared prefixes), some repeated */
            size_t nt = 1 + rng_below(&r, 10);
            ig_mix_token tok[16];
            uint8_t store[16][16];
            for (size_t i = 0; i < nt; i++) {
                size_t len = 0;
                int parts = 1 + (int)rng_below(&r, 3);
                for (int k = 0; k < parts; k++) {
                    const char *p = pieces[rng_below(&r, 12)];
                    memcpy(store[i] + len, p, strlen(p));
                    len += strlen(p);
                }
                tok[i] = (ig_mix_token){store[i], len, -(double)rng_below(&r, 1000) / 100.0};
            }
            ig_mix_options o;
            ig_mix_options_default(&o);
            o.mode = (ig_lambda_mode)rng_below(&r, 3);
            o.lambda = (double)rng_below(&r, 101) / 100.0;
            if (rng_below(&r, 4) == 0)
                o.model.alpha = 0.5;
            ig_mix_out out[16];
            double lambda;
            uint64_t en;
            int sparse;
            { /* a raised cancel flag stops it before its first byte factor */
                volatile int stop = 1;
                ig_mix_options oc = o;
                oc.model.cancel = &stop;
                int some_empty = nt == 0;
                for (size_t k = 0; k < nt; k++)
                    some_empty |= tok[k].len == 0;
                CHECK(some_empty || ig_mix(idx, &oc, ctx, cl, tok, nt, out, &lambda, &en, &sparse, &e) == IG_ECANCELLED,
                      "mix ignored its cancel flag");
            }
            if (ig_mix(idx, &o, ctx, cl, tok, nt, out, &lambda, &en, &sparse, &e)) {
                CHECK(0, "mix failed: %s", e.msg);
                continue;
            }
            /* λ as documented */
            ig_dist dd;
            ig_predict(idx, &o.model, ctx, cl, &dd, &e);
            int distinct = 0;
            for (int b = 0; b < 256; b++)
                distinct += dd.prob[b] > 0;
            int sp = dd.defined && distinct == 1;
            double want_l = o.mode == IG_LAMBDA_FIXED ? o.lambda
                            : o.mode == IG_LAMBDA_SPARSE_DENSE ? (sp ? o.lambda_sparse : o.lambda_dense)
                            : o.lambda_max * (double)dd.length / ((double)dd.length + 5) *
                                  (double)dd.suffix_count / ((double)dd.suffix_count + 2);
            CHECK(sparse == sp && en == dd.length + 1 && close_rel(lambda, want_l), "lambda %g want %g", lambda, want_l);
            ig_dist_free(&dd);
            double raw[16], sum = 0;
            for (size_t i = 0; i < nt; i++) {
                ig_factor *f = NULL;
                size_t nf = 0;
                double p = 0, lp = 0;
                ig_prob(idx, &o.model, ctx, cl, tok[i].bytes, tok[i].len, 0, &f, &nf, &p, &lp, &e);
                free(f);
                CHECK(close_rel(out[i].corpus_prob, p), "corpus prob of token %zu: %.17g vs chain rule %.17g", i,
                      out[i].corpus_prob, p);
                raw[i] = lambda * p + (1 - lambda) * exp(tok[i].llm_logprob);
                sum += raw[i];
                CHECK(close_rel(out[i].llm_prob, exp(tok[i].llm_logprob)), "llm prob");
                CHECK(fabs(out[i].mixed_raw - raw[i]) <= 1e-12 * fmax(raw[i], 1e-300) + 1e-300, "raw mixture %g vs %g",
                      out[i].mixed_raw, raw[i]);
            }
            for (size_t i = 0; i < nt; i++) {
                CHECK(sum == 0 || fabs(out[i].mixed_prob - raw[i] / sum) <= 1e-12, "normalised %g vs %g", out[i].mixed_prob,
                      raw[i] / sum);
                uint32_t rb = 1, ra = 1;
                for (size_t j = 0; j < nt; j++) {
                    rb += tok[j].llm_logprob > tok[i].llm_logprob || (tok[j].llm_logprob == tok[i].llm_logprob && j < i);
                    ra += out[j].mixed_raw > out[i].mixed_raw || (out[j].mixed_raw == out[i].mixed_raw && j < i);
                }
                CHECK(out[i].rank_before == rb && out[i].rank_after == ra, "ranks");
            }
        }
        { /* what the C entry point is handed directly (the faces' parsers check these too): an
           * unknown mode used the fixed lambda unchecked (λ = 5), a log-probability above 0 or
           * NaN was mixed as given */
            ig_mix_token t[2] = {{(const uint8_t *)"e", 1, -0.5}, {(const uint8_t *)"t", 1, -1.0}};
            ig_mix_out out[2];
            double lambda;
            ig_mix_options o;
            ig_mix_options_default(&o);
            o.mode = (ig_lambda_mode)42;
            o.lambda = 5;
            int rc = ig_mix(idx, &o, (const uint8_t *)"th", 2, t, 2, out, &lambda, NULL, NULL, &e);
            CHECK(rc == IG_EUSAGE && strstr(e.msg, "mode 42"), "an unknown mode: %d %s", rc, rc ? e.msg : "");
            ig_mix_options_default(&o);
            const double bad[] = {NAN, 3.0, INFINITY};
            for (int k = 0; k < 3; k++) {
                t[1].llm_logprob = bad[k];
                rc = ig_mix(idx, &o, (const uint8_t *)"th", 2, t, 2, out, &lambda, NULL, NULL, &e);
                CHECK(rc == IG_EUSAGE && strstr(e.msg, "token 2"), "log-probability %g: %d", bad[k], rc);
            }
            t[1].llm_logprob = -INFINITY; /* probability 0: a log-probability like any other */
            rc = ig_mix(idx, &o, (const uint8_t *)"th", 2, t, 2, out, &lambda, NULL, NULL, &e);
            CHECK(rc == 0 && out[1].llm_prob == 0, "log-probability -inf: %d %s", rc, rc ? e.msg : "");
        }
        ig_index_close(&idx);
        for (size_t i = 0; i < nd; i++)
            ig_buf_free(&docs[i]);
        free(docs);
        free(src);
    }
    ig_error e;
    igi_remove_tree(tmpl, &e);
    return check_done("mix");
}
