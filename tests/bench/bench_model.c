/*
 * Model benchmarks (models issue): predict latency, eval throughput, and the wall time
 * of the eight SBI-table figures.
 *
 * 1. predict latency, per corpus (tinyshakespeare and the 16 MiB usr-include corpus of
 *    bench_common.h; index built untimed with default options, opened, warm). Three
 *    kinds of context, N queries each (default 3000), drawn with a fixed seed:
 *      " "    the one-byte context space (its count is printed: 10^5..10^6 occurrences);
 *      "e"    the one-byte context e;
 *      100 B  100 bytes of the index's own text at a uniform random offset (so ℓ* is
 *             long: the mean ℓ* is printed).
 *    The 3N queries are shuffled together (so a one-byte query does not find its own
 *    interval hot in cache from the previous query) and run once untimed, then once per
 *    variant timing each query on its own with clock_gettime(CLOCK_MONOTONIC) (one clock
 *    pair, ~40 ns, included):
 *      count            ig_count of the same context (the baseline);
 *      predict          ig_predict alone (ig_dist_free after the clock stops);
 *      predict+symbols  ig_predict + ig_dist_symbols(chars = 1), what `predict` in the
 *                       shell does (frees after the clock stops).
 *    Models: the default ∞-gram (ig_model_default) and interpolation K = 2
 *    (IG_MODEL_INTERP, interp_k = 2, otherwise default). Printed: median and p99 per
 *    context kind, and the ratio of the medians to the count median. Target: a one-byte
 *    context that occurs very often answers within ~100x of a count.
 *
 * 2. eval throughput: Tiny Shakespeare split 90/10 (share/doc/models.md). The index is built from
 *    datasets/tinyshakespeare.txt with the byte range 0:90% (floor(0.9 x 1115394) =
 *    1003854 bytes, one document), i.e. `:dataset add shakes-train FILE --range 0:90%`.
 *    ig_eval (IG_MODEL_INTERP, sbi = 1, max_context = 100) on the validation bytes
 *    [1003854, 1115394) for K = 1, 2, -1 with threads = 2 and threads = 1; median of
 *    --reps runs (default 3); throughput = validation bytes / median seconds.
 *
 * 3. The eight figures: validation K = 1, 2, 3, 5, -1 and training (the train bytes
 *    scored against their own index) K = 1, 2, 3, with threads = 0 (one per core, the
 *    shell's default). Each perplexity is printed to 2 decimals and compared with the
 *    published value; the total wall time of the eight ig_eval calls is the figure
 *    (target < 8 s). Repeated --reps times; median and min of the totals.
 *
 * 4. prob of a long continuation the corpus holds verbatim (Tiny Shakespeare's own text from
 *    offset 100,000, the 10 bytes before it as context): ig_prob over 8, 32 and 128 KB, for
 *    the ∞-gram and interpolation K = 2, median of --reps runs; throughput = continuation
 *    bytes / median seconds. The chain carries ℓ* from byte to byte, so the time grows with
 *    the length, not its square (a search of the whole context per byte did).
 *
 * Usage: bench_model [--queries N] [--reps N] [--max-bytes N] [--only predict|eval|prob]
 *                    [--dataset PATH]
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define CTX_LONG 100
#define NKINDS 3
#define NVARIANTS 3

static const char *kind_name[NKINDS] = {"\" \" (1 B)", "\"e\" (1 B)", "100 B"};
static const char *kind_key[NKINDS] = {"space", "e", "ctx100"};
static const char *variant_name[NVARIANTS] = {"count", "predict", "predict+symbols"};

/* xorshift64*: fixed seed */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}

typedef struct pquery {
    const uint8_t *ctx;
    size_t len;
    int kind;
} pquery;

typedef struct stat2 {
    double med_ns, p99_ns;
} stat2;

typedef struct predict_result {
    char name[32];
    size_t bytes;
    uint64_t hash;
    size_t nq;                     ///< per kind
    uint64_t count1[2];            ///< counts of " " and "e"
    double mean_longest;           ///< mean ℓ* of the 100-byte contexts (∞-gram)
    double min_longest;
    stat2 count[NKINDS];
    stat2 pred[2][2][NKINDS];      ///< [model: inf, interp2][variant: predict, +symbols][kind]
} predict_result;

static volatile uint64_t g_sink;

static stat2 stats_of(const double *ns, const pquery *qs, size_t n, int kind, double *tmp)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (qs[i].kind == kind)
            tmp[k++] = ns[i];
    stat2 s = {bench_quantile(tmp, k, 0.5), bench_quantile(tmp, k, 0.99)};
    return s;
}

/* Runs one variant over all queries; ns[i] = time of query i. variant 0 count, 1 predict,
 * 2 predict+symbols. Returns 0 or -1. */
static int run_variant(const ig_index *idx, const ig_model *m, const pquery *qs, size_t n, int variant,
                       double *ns)
{
    ig_error err = {0};
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const pquery *q = &qs[i];
        if (variant == 0) {
            uint64_t a = bench_now_ns();
            sum += ig_count(idx, q->ctx, q->len);
            uint64_t b = bench_now_ns();
            ns[i] = (double)(b - a);
            continue;
        }
        ig_dist d;
        ig_symbol *syms = NULL;
        size_t nsyms = 0;
        double unseen = 0;
        uint64_t a = bench_now_ns();
        int rc = ig_predict(idx, m, q->ctx, q->len, &d, &err);
        if (!rc && variant == 2)
            rc = ig_dist_symbols(idx, &d, q->ctx, q->len, 1, &syms, &nsyms, &unseen, &err);
        uint64_t b = bench_now_ns();
        if (rc) {
            fprintf(stderr, "bench_model: predict failed: %s\n", err.msg);
            return -1;
        }
        ns[i] = (double)(b - a);
        sum += d.suffix_count + nsyms;
        free(syms);
        ig_dist_free(&d);
    }
    g_sink += sum;
    return 0;
}

static int predict_corpus(const bench_corpus *c, const char *tmp, size_t nq, predict_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->bytes = c->len;
    r->hash = c->hash;
    r->nq = nq;

    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index-%s", tmp, c->name);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c->path};
    ig_build_result br;
    ig_error err = {0};
    if (ig_build_index(dir, &src, 1, NULL, NULL, NULL, NULL, NULL, &br, &err)) {
        fprintf(stderr, "bench_model: build of %s failed: %s\n", c->name, err.msg);
        return -1;
    }
    ig_build_result_free(&br);
    ig_index *idx = NULL;
    if (ig_index_open(&idx, dir, &err)) {
        fprintf(stderr, "bench_model: open %s: %s\n", dir, err.msg);
        return -1;
    }
    size_t tlen = SIZE_MAX;
    const uint8_t *t = ig_text(idx, 0, 0, &tlen);
    if (!t || tlen < 4 * CTX_LONG) {
        fprintf(stderr, "bench_model: no text in shard 0\n");
        ig_index_close(&idx);
        return -1;
    }

    size_t n = NKINDS * nq;
    pquery *qs = malloc(n * sizeof *qs);
    double *ns = malloc(n * sizeof *ns), *tmpv = malloc(n * sizeof *tmpv);
    if (!qs || !ns || !tmpv) {
        fprintf(stderr, "bench_model: out of memory\n");
        return -1;
    }
    static const uint8_t one[2] = {' ', 'e'};
    r->count1[0] = ig_count(idx, &one[0], 1);
    r->count1[1] = ig_count(idx, &one[1], 1);
    g_rng = 0x9E3779B97F4A7C15ull ^ c->len;
    size_t k = 0;
    for (size_t i = 0; i < nq; i++) {
        qs[k++] = (pquery){&one[0], 1, 0};
        qs[k++] = (pquery){&one[1], 1, 1};
        /* 100 bytes that do not cross a document separator */
        for (;;) {
            size_t off = (size_t)(rnd() % (tlen - CTX_LONG));
            if (!memchr(t + off, 0xFF, CTX_LONG)) {
                qs[k++] = (pquery){t + off, CTX_LONG, 2};
                break;
            }
        }
    }
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = (size_t)(rnd() % (i + 1));
        pquery x = qs[i];
        qs[i] = qs[j];
        qs[j] = x;
    }
    /* ℓ* of the long contexts */
    double lsum = 0, lmin = 1e300;
    for (size_t i = 0; i < n; i++)
        if (qs[i].kind == 2) {
            uint64_t cnt;
            double l = (double)ig_longest_suffix(idx, qs[i].ctx, qs[i].len, -1, &cnt);
            lsum += l;
            if (l < lmin)
                lmin = l;
        }
    r->mean_longest = lsum / (double)nq;
    r->min_longest = lmin;

    ig_model models[2];
    ig_model_default(&models[0]);
    ig_model_default(&models[1]);
    models[1].kind = IG_MODEL_INTERP;
    models[1].interp_k = 2;

    /* warm-up: every variant once, untimed */
    int rc = run_variant(idx, &models[0], qs, n, 2, ns) || run_variant(idx, &models[1], qs, n, 2, ns) ||
             run_variant(idx, &models[0], qs, n, 0, ns);
    if (!rc)
        rc = run_variant(idx, &models[0], qs, n, 0, ns);
    for (int kd = 0; kd < NKINDS && !rc; kd++)
        r->count[kd] = stats_of(ns, qs, n, kd, tmpv);
    for (int mi = 0; mi < 2 && !rc; mi++)
        for (int v = 0; v < 2 && !rc; v++) {
            rc = run_variant(idx, &models[mi], qs, n, v + 1, ns);
            for (int kd = 0; kd < NKINDS && !rc; kd++)
                r->pred[mi][v][kd] = stats_of(ns, qs, n, kd, tmpv);
        }
    free(qs);
    free(ns);
    free(tmpv);
    ig_index_close(&idx);
    if (bench_rmtree(dir) != 0)
        fprintf(stderr, "bench_model: warning: cannot remove %s\n", dir);
    if (rc)
        return -1;

    printf("\n== predict, %s: %zu bytes (%.2f MiB), fnv1a %016" PRIx64 "\n", c->name, c->len,
           (double)c->len / BENCH_MiB, c->hash);
    printf("   %zu queries per context kind, shuffled together; count(\" \") = %" PRIu64
           ", count(\"e\") = %" PRIu64 "; 100-byte contexts: mean l* %.1f, min %.0f\n",
           nq, r->count1[0], r->count1[1], r->mean_longest, r->min_longest);
    printf("   %-22s %-11s %12s %10s %10s\n", "model / variant", "context", "median us", "p99 us",
           "x count");
    for (int kd = 0; kd < NKINDS; kd++)
        printf("   %-22s %-11s %12.3f %10.3f %10s\n", "count", kind_name[kd], r->count[kd].med_ns / 1e3,
               r->count[kd].p99_ns / 1e3, "1");
    for (int mi = 0; mi < 2; mi++)
        for (int v = 0; v < 2; v++)
            for (int kd = 0; kd < NKINDS; kd++) {
                char label[64];
                snprintf(label, sizeof label, "%s %s", mi ? "interp2" : "inf-gram", variant_name[v + 1]);
                const stat2 *s = &r->pred[mi][v][kd];
                printf("   %-22s %-11s %12.3f %10.3f %10.1f\n", label, kind_name[kd], s->med_ns / 1e3,
                       s->p99_ns / 1e3, s->med_ns / r->count[kd].med_ns);
            }
    for (int kd = 0; kd < 2; kd++) {
        double ratio = r->pred[0][1][kd].med_ns / r->count[kd].med_ns;
        printf("   target: 1-byte context %s (count %" PRIu64 ") within ~100x of count: predict+symbols "
               "%.0fx (predict alone %.0fx): %s\n",
               kind_name[kd], r->count1[kd], ratio, r->pred[0][0][kd].med_ns / r->count[kd].med_ns,
               ratio <= 100 ? "met" : "MISSED");
    }
    return 0;
}

/* ---- eval ---- */

typedef struct eval_fig {
    int validation;
    int k;
    double expect;
} eval_fig;

static const eval_fig g_figs[8] = {
    {1, 1, 4036.19}, {1, 2, 97.73}, {1, 3, 18.24}, {1, 5, 7.10}, {1, -1, 6.06},
    {0, 1, 1.00},    {0, 2, 1.17},  {0, 3, 1.28},
};

static int eval_once(const ig_index *idx, int k, const uint8_t *text, size_t len, int threads,
                     double *secs, ig_eval_result *out)
{
    ig_model m;
    ig_model_default(&m);
    m.kind = IG_MODEL_INTERP;
    m.sbi = 1;
    m.interp_k = k;
    m.max_context = 100;
    ig_eval_result r;
    ig_error err = {0};
    double t0 = bench_now();
    int rc = ig_eval(idx, &m, text, len, threads, NULL, NULL, NULL, &r, &err);
    *secs = bench_now() - t0;
    if (rc) {
        fprintf(stderr, "bench_model: eval failed: %s\n", err.msg);
        return -1;
    }
    if (out)
        *out = r;
    else
        ig_eval_result_free(&r);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct eval_summary {
    double tput[3][2];    ///< [K = 1, 2, -1][threads 2, 1] bytes/s (median run)
    double secs[3][2];
    double eight_med, eight_min, eight_max;
    double fig_secs[8];   ///< per figure, from the median total run
    double ppl[8];
    uint64_t zero[8], scored[8];
    int all_match;
    double build_s;
} eval_summary;

static int eval_bench(const char *dataset, const char *tmp, int reps, eval_summary *s)
{
    memset(s, 0, sizeof *s);
    bench_corpus c;
    if (bench_corpus_shakespeare(&c, dataset))
        return -1;
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    ig_error err = {0};
    in.has_range = 1;
    if (ig_byte_range_parse("0:90%", &in.range, &err)) {
        fprintf(stderr, "bench_model: range: %s\n", err.msg);
        return -1;
    }
    uint64_t a = 0, b = 0;
    if (ig_byte_range_resolve(&in.range, c.len, &a, &b, &err)) {
        fprintf(stderr, "bench_model: range: %s\n", err.msg);
        return -1;
    }
    size_t split = (size_t)b;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index-shakes-train", tmp);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c.path};
    ig_build_result br;
    double t0 = bench_now();
    if (ig_build_index(dir, &src, 1, &in, NULL, NULL, NULL, NULL, &br, &err)) {
        fprintf(stderr, "bench_model: build of shakes-train failed: %s\n", err.msg);
        return -1;
    }
    s->build_s = bench_now() - t0;
    printf("\n== eval: tinyshakespeare (%zu bytes, fnv1a %016" PRIx64 "), index of bytes [0, %zu) as one "
           "document (%" PRIu64 " indexed bytes, %" PRIu64 " document(s)), built in %.2f s\n",
           c.len, c.hash, split, br.bytes, br.documents, s->build_s);
    ig_build_result_free(&br);
    if (a != 0 || split != 1003854)
        fprintf(stderr, "bench_model: warning: train split is [%" PRIu64 ", %zu), not [0, 1003854)\n", a, split);
    ig_index *idx = NULL;
    if (ig_index_open(&idx, dir, &err)) {
        fprintf(stderr, "bench_model: open %s: %s\n", dir, err.msg);
        return -1;
    }
    const uint8_t *val = c.data + split, *train = c.data;
    size_t vlen = c.len - split, trlen = split;
    int rc = 0;
    double sec;

    /* warm-up: one untimed validation run */
    rc = eval_once(idx, 2, val, vlen, 0, &sec, NULL);

    /* 2. throughput */
    static const int ks[3] = {1, 2, -1};
    printf("   eval throughput on the validation text (%zu bytes, %zu positions scored), IG_MODEL_INTERP, "
           "sbi = 1, max_context = 100, median of %d runs:\n",
           vlen, vlen - 1, reps);
    printf("   %-6s %8s %12s %14s\n", "K", "threads", "seconds", "bytes/s");
    double *t = malloc((size_t)reps * sizeof *t);
    for (int ki = 0; ki < 3 && !rc; ki++)
        for (int ti = 0; ti < 2 && !rc; ti++) {
            int th = ti == 0 ? 2 : 1;
            for (int r = 0; r < reps && !rc; r++)
                rc = eval_once(idx, ks[ki], val, vlen, th, &t[r], NULL);
            if (rc)
                break;
            s->secs[ki][ti] = bench_median(t, (size_t)reps);
            s->tput[ki][ti] = (double)vlen / s->secs[ki][ti];
            printf("   %-6d %8d %12.3f %14.0f\n", ks[ki], th, s->secs[ki][ti], s->tput[ki][ti]);
        }

    /* 3. the eight figures */
    double *tot = malloc((size_t)reps * sizeof *tot);
    double (*figs)[8] = malloc((size_t)reps * sizeof *figs);
    s->all_match = 1;
    for (int r = 0; r < reps && !rc; r++) {
        tot[r] = 0;
        for (int f = 0; f < 8 && !rc; f++) {
            ig_eval_result er;
            const eval_fig *g = &g_figs[f];
            rc = eval_once(idx, g->k, g->validation ? val : train, g->validation ? vlen : trlen, 0, &figs[r][f], &er);
            if (rc)
                break;
            tot[r] += figs[r][f];
            s->ppl[f] = er.perplexity;
            s->zero[f] = er.zero_prob;
            s->scored[f] = er.scored;
            if (fabs(round(er.perplexity * 100) / 100 - g->expect) > 0.001)
                s->all_match = 0;
            ig_eval_result_free(&er);
        }
    }
    if (!rc) {
        double *sorted = malloc((size_t)reps * sizeof *sorted);
        memcpy(sorted, tot, (size_t)reps * sizeof *sorted);
        qsort(sorted, (size_t)reps, sizeof *sorted, cmp_d);
        s->eight_med = reps % 2 ? sorted[reps / 2] : (sorted[reps / 2 - 1] + sorted[reps / 2]) / 2;
        s->eight_min = sorted[0];
        s->eight_max = sorted[reps - 1];
        int rm = 0; /* the run whose total is closest to the median */
        for (int r = 1; r < reps; r++)
            if (fabs(tot[r] - s->eight_med) < fabs(tot[rm] - s->eight_med))
                rm = r;
        memcpy(s->fig_secs, figs[rm], sizeof s->fig_secs);
        free(sorted);
        printf("\n   the eight SBI figures (threads = 0: one per core), %d runs:\n", reps);
        printf("   %-10s %4s %12s %10s %10s %9s %9s\n", "text", "K", "perplexity", "published", "match",
               "floored", "seconds");
        for (int f = 0; f < 8; f++) {
            const eval_fig *g = &g_figs[f];
            int ok = fabs(round(s->ppl[f] * 100) / 100 - g->expect) < 0.001;
            printf("   %-10s %4d %12.2f %10.2f %10s %9" PRIu64 " %9.3f\n", g->validation ? "validation" : "training",
                   g->k, s->ppl[f], g->expect, ok ? "yes" : "NO", s->zero[f], s->fig_secs[f]);
        }
        printf("   total wall time of the eight: median %.3f s, min %.3f s, max %.3f s  (target < 8 s: %s)\n",
               s->eight_med, s->eight_min, s->eight_max, s->eight_med < 8 ? "met" : "MISSED");
        printf("   all eight perplexities reproduce the published table: %s\n", s->all_match ? "yes" : "NO");
    }
    free(t);
    free(tot);
    free(figs);
    ig_index_close(&idx);
    bench_rmtree(dir);
    bench_corpus_free(&c);
    return rc ? -1 : 0;
}

#define PROB_LENS 3
static const size_t prob_lens[PROB_LENS] = {8192, 32768, 131072};

typedef struct prob_summary {
    double secs[2][PROB_LENS]; ///< [∞-gram, interp 2][length]: median seconds
    double log2p[2][PROB_LENS];
} prob_summary;

static int prob_bench(const char *dataset, const char *tmp, int reps, prob_summary *ps)
{
    bench_corpus c;
    if (bench_corpus_shakespeare(&c, dataset))
        return -1;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index-prob", tmp);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c.path};
    ig_build_result br;
    ig_error err = {0};
    ig_index *idx = NULL;
    int rc = ig_build_index(dir, &src, 1, NULL, NULL, NULL, NULL, NULL, &br, &err);
    if (!rc) {
        ig_build_result_free(&br);
        rc = ig_index_open(&idx, dir, &err);
    }
    const size_t at = 100000;
    if (!rc && c.len < at + prob_lens[PROB_LENS - 1])
        rc = ig_error_set(&err, IG_EUSAGE, "corpus too short");
    double *t = calloc((size_t)reps, sizeof *t);
    for (int mi = 0; !rc && mi < 2; mi++)
        for (int li = 0; !rc && li < PROB_LENS; li++) {
            ig_model m;
            ig_model_default(&m);
            if (mi) {
                m.kind = IG_MODEL_INTERP;
                m.interp_k = 2;
            }
            for (int r = 0; !rc && t && r < reps; r++) {
                ig_factor *f = NULL;
                size_t nf = 0;
                double p, l2;
                double t0 = bench_now();
                rc = ig_prob(idx, &m, c.data + at - 10, 10, c.data + at, prob_lens[li], 0, &f, &nf, &p, &l2, &err);
                t[r] = bench_now() - t0;
                ps->log2p[mi][li] = l2;
                free(f);
            }
            if (t)
                ps->secs[mi][li] = bench_median(t, (size_t)reps);
            printf("prob %-8s %6zu B: %.4f s  (%.0f bytes/s)  log2 P = %.2f\n", mi ? "interp2" : "infgram",
                   prob_lens[li], ps->secs[mi][li], (double)prob_lens[li] / ps->secs[mi][li], ps->log2p[mi][li]);
        }
    if (rc)
        fprintf(stderr, "bench_model: prob: %s\n", err.msg);
    free(t);
    ig_index_close(&idx);
    bench_corpus_free(&c);
    return rc ? -1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_model [--queries N] [--reps N] [--max-bytes N] [--only predict|eval|prob] "
                    "[--dataset PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t nq = 3000, max_bytes = 16u << 20;
    int reps = 3;
    const char *only = NULL, *dataset = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nq = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
            max_bytes = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--dataset") && i + 1 < argc)
            dataset = argv[++i];
        else
            usage();
    }
    if (nq < 100 || reps < 1 || (only && strcmp(only, "predict") && strcmp(only, "eval") && strcmp(only, "prob")))
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *tmp = bench_mkdtemp("model");
    if (!tmp)
        return 1;
    printf("bench_model: predict latency, eval throughput, the eight SBI figures\n");
    printf("machine: %s\nbuild type: %s\ntemp dir: %s\n", machine, bench_build_type(), tmp);

    predict_result pr[2];
    int npr = 0, rc = 0;
    if (!only || !strcmp(only, "predict"))
        for (int which = 0; which < 2 && !rc; which++) {
            bench_corpus c;
            rc = which == 0 ? bench_corpus_shakespeare(&c, dataset)
                            : bench_corpus_usr_include(&c, tmp, max_bytes, 4u << 20);
            if (!rc)
                rc = predict_corpus(&c, tmp, nq, &pr[npr]);
            if (!rc)
                npr++;
            bench_corpus_free(&c);
        }
    eval_summary es;
    int have_eval = 0;
    if (!rc && (!only || !strcmp(only, "eval"))) {
        rc = eval_bench(dataset, tmp, reps, &es);
        have_eval = !rc;
    }
    prob_summary ps;
    int have_prob = 0;
    if (!rc && (!only || !strcmp(only, "prob"))) {
        rc = prob_bench(dataset, tmp, reps, &ps);
        have_prob = !rc;
    }
    bench_rmtree(tmp);
    free(tmp);
    if (rc)
        return 1;

    bench_result_begin("bench_model", argc, argv);
    printf(",\"predict\":[");
    for (int i = 0; i < npr; i++) {
        const predict_result *r = &pr[i];
        printf("%s{\"name\":\"%s\",\"bytes\":%zu,\"fnv1a\":\"%016" PRIx64 "\",\"queries_per_kind\":%zu,"
               "\"count_space\":%" PRIu64 ",\"count_e\":%" PRIu64 ",\"ctx100_mean_longest\":%.2f",
               i ? "," : "", r->name, r->bytes, r->hash, r->nq, r->count1[0], r->count1[1], r->mean_longest);
        for (int kd = 0; kd < NKINDS; kd++) {
            printf(",\"%s\":{\"count_median_us\":%.4f,\"count_p99_us\":%.4f", kind_key[kd],
                   r->count[kd].med_ns / 1e3, r->count[kd].p99_ns / 1e3);
            static const char *mk[2] = {"infgram", "interp2"};
            static const char *vk[2] = {"predict", "predict_symbols"};
            for (int mi = 0; mi < 2; mi++)
                for (int v = 0; v < 2; v++)
                    printf(",\"%s_%s_median_us\":%.4f,\"%s_%s_p99_us\":%.4f", mk[mi], vk[v],
                           r->pred[mi][v][kd].med_ns / 1e3, mk[mi], vk[v], r->pred[mi][v][kd].p99_ns / 1e3);
            printf("}");
        }
        printf("}");
    }
    printf("]");
    if (have_eval) {
        printf(",\"eval\":{\"reps\":%d,\"build_s\":%.4f,\"throughput_bytes_per_s\":{", reps, es.build_s);
        static const char *kk[3] = {"1", "2", "-1"};
        for (int ki = 0; ki < 3; ki++)
            printf("%s\"k%s_t2\":%.0f,\"k%s_t1\":%.0f", ki ? "," : "", kk[ki], es.tput[ki][0], kk[ki], es.tput[ki][1]);
        printf("},\"eight_total_s_median\":%.4f,\"eight_total_s_min\":%.4f,\"eight_total_s_max\":%.4f,"
               "\"all_match\":%s,\"perplexities\":[",
               es.eight_med, es.eight_min, es.eight_max, es.all_match ? "true" : "false");
        for (int f = 0; f < 8; f++)
            printf("%s{\"text\":\"%s\",\"k\":%d,\"perplexity\":%.4f,\"published\":%.2f,\"floored\":%" PRIu64 ","
                   "\"seconds\":%.4f}", f ? "," : "", g_figs[f].validation ? "validation" : "training",
                   g_figs[f].k, es.ppl[f], g_figs[f].expect, es.zero[f], es.fig_secs[f]);
        printf("]}");
    }
    if (have_prob) {
        printf(",\"prob\":{\"reps\":%d", reps);
        for (int mi = 0; mi < 2; mi++)
            for (int li = 0; li < PROB_LENS; li++)
                printf(",\"%s_%zu_s\":%.4f", mi ? "interp2" : "infgram", prob_lens[li], ps.secs[mi][li]);
        printf("}");
    }
    printf("}\n");
    return have_eval && !es.all_match ? 1 : 0;
}
