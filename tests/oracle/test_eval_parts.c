/*
 * Oracle test of evaluation over a corpus split into parts (model.h, ig_eval_levels_get,
 * ig_eval_levels_add, ig_eval_from_levels): random corpora of a few shapes are built as one
 * index and as 2 to 4 indexes of contiguous runs of their documents (the parts); for random
 * texts (new ones of the corpus's shape, and pieces of the corpus) and every model — the ∞-gram
 * smoothed or not, n-grams smoothed or not, the weighted mixture in every weight function and
 * length bounds, interpolation with and without the SBI conventions — the evaluation from the
 * summed levels of the parts must equal ig_eval on the whole index to the bit (every count, the
 * sum of logs, perplexity, bits per byte, the effective-n histogram), for 1 to 3 threads; each
 * part's levels carried along the text in random slices (ig_eval_levels_text) must equal those
 * of each position alone (ig_eval_levels_get), and scoring them in random slices
 * (ig_eval_parts_start/score/finish) must give the same figures.
 *
 * Fixed seeds: a failure replays identically. IG_ORACLE_SCALE scales the number of cases.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

enum { SHAPES = 3 };

static void gen_text(test_rng *r, int shape, ig_buf *b, size_t len)
{
    static const char *words[] = {"the", "lord", "said", "unto", "a", "ab", "ba", "é", "日本", "\n"};
    while (b->len < len) {
        if (shape == 0) { /* small alphabet: long repeats, many change points */
            uint8_t c = (uint8_t)("abc\n"[rng_below(r, 4)]);
            ig_buf_append(b, &c, 1);
        } else if (shape == 1) { /* words */
            const char *w = words[rng_below(r, sizeof words / sizeof *words)];
            ig_buf_append(b, w, strlen(w));
            ig_buf_append(b, " ", 1);
        } else {
            put_cp(b, rng_below(r, 3) ? 'a' + (uint32_t)rng_below(r, 3) : random_cp(r));
        }
    }
}

static void random_model(test_rng *r, ig_model *m, int kind)
{
    ig_model_default(m);
    m->max_context = rng_below(r, 3) == 0 ? (int64_t)rng_below(r, 8) : -1;
    switch (kind) {
    case 0: m->alpha = rng_below(r, 2) ? 0.5 : 0; break;
    case 1:
        m->kind = IG_MODEL_NGRAM;
        m->n = 1 + (uint32_t)rng_below(r, 6);
        m->alpha = rng_below(r, 2) ? 0.01 * (double)(1 + rng_below(r, 100)) : 0;
        break;
    case 2:
        m->kind = IG_MODEL_WEIGHTED;
        m->weight = (ig_weight_fn)rng_below(r, 4);
        m->beta = 1.5;
        m->min_len = 1 + (uint32_t)rng_below(r, 3);
        m->max_len = rng_below(r, 2) ? m->min_len + (uint32_t)rng_below(r, 6) : 0;
        break;
    default:
        m->kind = IG_MODEL_INTERP;
        m->interp_k = rng_below(r, 3) ? 1 + (int)rng_below(r, 3) : -1;
        m->sbi = (int)rng_below(r, 2);
    }
}

static int same_result(const ig_eval_result *a, const ig_eval_result *b)
{
    if (a->scored != b->scored || a->zero_prob != b->zero_prob || memcmp(&a->sum_ln, &b->sum_ln, sizeof a->sum_ln) ||
        memcmp(&a->perplexity, &b->perplexity, sizeof a->perplexity) ||
        memcmp(&a->bits_per_byte, &b->bits_per_byte, sizeof a->bits_per_byte) || a->agree != b->agree ||
        a->sparse != b->sparse || a->agree_sparse != b->agree_sparse || a->dense != b->dense ||
        a->agree_dense != b->agree_dense || a->hist_len != b->hist_len || a->cancelled != b->cancelled)
        return 0;
    for (uint64_t h = 0; h < a->hist_len; h++)
        if (a->effective_n_hist[h] != b->effective_n_hist[h])
            return 0;
    return 1;
}

static int same_levels(const ig_eval_levels *a, const ig_eval_levels *b)
{
    size_t n = a->prof.n * sizeof(uint64_t);
    return a->prof.n == b->prof.n && !memcmp(a->prof.ell, b->prof.ell, n) && !memcmp(a->prof.count, b->prof.count, n) &&
           !memcmp(a->next, b->next, n) && !memcmp(a->end, b->end, n) && a->distinct == b->distinct &&
           (a->distinct != 1 || a->only == b->only);
}

static long levels_compared;

/* The corpus's levels of every position of text under model, summed over the parts: each part's
 * by ig_eval_levels_text (ℓ* and change points carried along the text), which must equal
 * ig_eval_levels_get at every position. */
static int parts_levels(test_rng *r, ig_index **parts, int np, const ig_model *m, const uint8_t *text, size_t len,
                        ig_eval_levels *lv)
{
    uint64_t floor = ig_eval_floor(m);
    int64_t L = m->max_context;
    ig_eval_levels *part = calloc(len, sizeof *part);
    int rc = part ? 0 : -1;
    for (int k = 0; !rc && k < np; k++) {
        ig_error e;
        for (size_t from = 1, to; !rc && from < len; from = to) { /* in random slices */
            to = from + 1 + rng_below(r, len - from);
            rc = ig_eval_levels_text(parts[k], text, len, L, floor, from, to, part + from - 1, &e);
            CHECK(rc == 0, "levels of the text: %s", e.msg);
        }
        for (size_t i = 1; !rc && i < len; i++) {
            size_t lo = L >= 0 && i > (size_t)L ? i - (size_t)L : 0;
            ig_eval_levels one;
            rc = ig_eval_levels_get(parts[k], text + lo, i - lo, text[i], floor, &one, &e);
            CHECK(rc == 0, "levels: %s", e.msg);
            if (rc)
                break;
            CHECK(same_levels(&one, &part[i - 1]), "position %zu of part %d: the levels carried along the text differ", i, k);
            levels_compared++;
            ig_eval_levels_free(&one);
            if (k == 0) {
                lv[i - 1] = part[i - 1];
                memset(&part[i - 1], 0, sizeof part[i - 1]);
                continue;
            }
            rc = ig_eval_levels_add(&lv[i - 1], &part[i - 1], &e);
            CHECK(rc == 0, "add: %s", e.msg);
        }
        for (size_t i = 0; i + 1 < len; i++)
            ig_eval_levels_free(&part[i]);
    }
    free(part);
    return rc;
}

int main(void)
{
    char tmpl[] = "/tmp/igevalpartsXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    test_rng rng = {20261129};
    long cases = 0, kinds[4] = {0};
    int ncorpora = scaled(12);
    for (int ci = 0; ci < ncorpora; ci++) {
        int shape = ci % SHAPES, np = 2 + (int)rng_below(&rng, 3);
        size_t nd = (size_t)np + rng_below(&rng, 20);
        ig_buf *docs = calloc(nd, sizeof *docs);
        ig_source *src = calloc(nd, sizeof *src);
        for (size_t i = 0; i < nd; i++) {
            gen_text(&rng, shape, &docs[i], 1 + rng_below(&rng, 300));
            src[i] = oracle_inline_source(&docs[i], "x");
        }
        /* the parts: contiguous runs of documents, none empty */
        size_t cut[5];
        oracle_cut_parts(&rng, nd, np, cut);
        ig_index *whole = NULL, *parts[4] = {0};
        char dir[300];
        snprintf(dir, sizeof dir, "%s/c%d", tmpl, ci);
        int ok = !oracle_build(dir, src, nd, 1ull << 30, 0, 0, &whole);
        for (int k = 0; ok && k < np; k++) {
            snprintf(dir, sizeof dir, "%s/c%d-p%d", tmpl, ci, k);
            ok = !oracle_build(dir, src + cut[k], cut[k + 1] - cut[k], 1 + rng_below(&rng, 4000), (int)rng_below(&rng, 2), 0,
                               &parts[k]);
        }
        for (int t = 0; ok && t < scaled(4); t++) {
            ig_buf text = {0};
            if (t % 2 == 0) {
                gen_text(&rng, shape, &text, 2 + rng_below(&rng, 400));
            } else { /* a piece of one document */
                ig_buf *d = &docs[rng_below(&rng, nd)];
                size_t a = rng_below(&rng, d->len), n = 2 + rng_below(&rng, 300);
                ig_buf_append(&text, d->data + a, a + n > d->len ? d->len - a : n);
                if (text.len < 2)
                    ig_buf_append(&text, "ab", 2);
            }
            for (int kind = 0; kind < 4; kind++) {
                for (int rep = 0; rep < 3; rep++) {
                    ig_model m;
                    random_model(&rng, &m, kind);
                    ig_eval_levels *lv = calloc(text.len, sizeof *lv);
                    if (!lv || parts_levels(&rng, parts, np, &m, text.data, text.len, lv)) {
                        CHECK(0, "levels of c%d", ci);
                        free(lv);
                        continue;
                    }
                    for (int threads = 1; threads <= 3; threads++) {
                        ig_eval_result want, got;
                        ig_error e;
                        int rc = ig_eval(whole, &m, text.data, text.len, threads, NULL, NULL, NULL, &want, &e);
                        CHECK(rc == 0, "eval: %s", e.msg);
                        int rc2 = ig_eval_from_levels(&m, text.data, text.len, threads, lv, &got, &e);
                        CHECK(rc2 == 0, "eval from levels: %s", e.msg);
                        if (!rc && !rc2) {
                            char what[128];
                            ig_model_name(&m, what, sizeof what);
                            CHECK(same_result(&want, &got),
                                  "c%d (%d parts) text %d, %s, max-context %lld, %d threads: sum_ln %.17g vs %.17g, "
                                  "zero %llu vs %llu, agree %llu vs %llu, sparse %llu vs %llu",
                                  ci, np, t, what, (long long)m.max_context, threads, want.sum_ln, got.sum_ln,
                                  (unsigned long long)want.zero_prob, (unsigned long long)got.zero_prob,
                                  (unsigned long long)want.agree, (unsigned long long)got.agree,
                                  (unsigned long long)want.sparse, (unsigned long long)got.sparse);
                            cases++;
                            kinds[kind]++;
                        }
                        if (!rc2)
                            ig_eval_result_free(&got);
                        /* the same scored a slice at a time */
                        ig_eval_parts *ep;
                        rc2 = ig_eval_parts_start(&m, text.len, threads, &ep, &e);
                        CHECK(rc2 == 0, "start: %s", e.msg);
                        for (size_t from = 1, to; !rc2 && from < text.len; from = to) {
                            to = from + 1 + rng_below(&rng, text.len - from);
                            rc2 = ig_eval_parts_score(ep, text.data, from, to, lv + from - 1, &e);
                            CHECK(rc2 == 0, "score: %s", e.msg);
                        }
                        if (ep) {
                            rc2 = ig_eval_parts_finish(ep, &got, &e);
                            CHECK(rc2 == 0, "finish: %s", e.msg);
                            CHECK(rc || rc2 || same_result(&want, &got), "c%d text %d: scored in slices, it differs", ci, t);
                            if (!rc2)
                                ig_eval_result_free(&got);
                        }
                        if (!rc)
                            ig_eval_result_free(&want);
                    }
                    for (size_t i = 0; i + 1 < text.len; i++)
                        ig_eval_levels_free(&lv[i]);
                    free(lv);
                }
            }
            ig_buf_free(&text);
        }
        ig_index_close(&whole);
        for (int k = 0; k < np; k++)
            ig_index_close(&parts[k]);
        oracle_docs_free(docs, nd, src);
    }
    printf("eval from parts: %ld evaluations compared (∞-gram %ld, n-gram %ld, weighted %ld, interpolation %ld), "
           "%ld positions' levels along a text and alone\n", cases, kinds[0], kinds[1], kinds[2], kinds[3], levels_compared);
    ig_error e;
    igi_remove_tree(tmpl, &e);
    return check_done("eval_parts");
}
