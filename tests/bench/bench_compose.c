/*
 * Composed indexes: count latency over a composition of k members against one member's,
 * and the cost of composing.
 *
 * The corpus (Tiny Shakespeare, or --dataset) is cut at line ends into k parts of equal
 * size, each built as its own index (untimed). Queries are drawn with a fixed seed from
 * the text: 90% substrings of 1..30 bytes, 10% absent ones (a rare byte put inside). For
 * each query mix the whole set is run once untimed (warm), then each ig_count is timed
 * on its own (clock_gettime pair included); the medians compared are:
 *   - one member (the first part) alone: t1;
 *   - the composition of the k members: tk. Target: tk <= k·t1 + 1 µs (members are
 *     searched in lock step, as the shards of one index are).
 * Open: ig_index_open_composed of the k members against the sum of the members' own
 * ig_index_open, medians of 30; and with the last part subtracted (a copy built apart),
 * which looks each of its documents up in the members.
 *
 * Usage: bench_compose [--queries N] [--parts K] [--dataset PATH]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define MAXQ 30
#define OPEN_RUNS 30
#define MAXPARTS 8

typedef struct query {
    uint8_t b[MAXQ];
    uint8_t len;
} query;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return bench_rnd(&g_rng); }

static volatile uint64_t g_sink;

/* Median ns of ig_count over the queries (after an untimed warm-up pass). */
static double time_counts(const ig_index *idx, const query *qs, size_t nq, double *ns)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < nq; i++)
        sum += ig_count(idx, qs[i].b, qs[i].len);
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = bench_now_ns();
        sum += ig_count(idx, qs[i].b, qs[i].len);
        ns[i] = (double)(bench_now_ns() - a);
    }
    g_sink = sum;
    return bench_median(ns, nq);
}

/* Median ms of composing and closing the members (and subtracted sets); -1 on failure. */
static double time_opens(const ig_index_member_spec *ms, size_t n, const ig_index_member_spec *minus, size_t nminus,
                         double *ms_out)
{
    ig_error err;
    for (int r = 0; r < OPEN_RUNS; r++) {
        double a = bench_now();
        ig_index *x = NULL;
        if (ig_index_open_composed(&x, ms, n, minus, nminus, &err)) {
            fprintf(stderr, "bench_compose: compose: %s\n", err.msg);
            return -1;
        }
        ig_index_close(&x);
        ms_out[r] = (bench_now() - a) * 1e3;
    }
    return bench_median(ms_out, OPEN_RUNS);
}

static int build(const char *dir, const char *text, size_t len)
{
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = len};
    ig_build_result br;
    ig_error err;
    if (ig_build_index(dir, &src, 1, NULL, NULL, NULL, NULL, NULL, &br, &err)) {
        fprintf(stderr, "bench_compose: build %s: %s\n", dir, err.msg);
        return -1;
    }
    ig_build_result_free(&br);
    return 0;
}

int main(int argc, char **argv)
{
    size_t nq = 100000;
    int k = 4;
    const char *dataset = IG_BENCH_DATASET;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nq = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--parts") && i + 1 < argc)
            k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dataset") && i + 1 < argc)
            dataset = argv[++i];
        else {
            fprintf(stderr, "usage: bench_compose [--queries N] [--parts K] [--dataset PATH]\n");
            return 2;
        }
    }
    if (k < 2 || k > MAXPARTS || nq == 0) {
        fprintf(stderr, "bench_compose: --parts must be 2..%d and --queries positive\n", MAXPARTS);
        return 2;
    }
    bench_corpus c;
    if (bench_corpus_shakespeare(&c, dataset))
        return 1;
    char *tmp = bench_mkdtemp("compose");
    if (!tmp)
        return 1;
    const char *text = (const char *)c.data;
    size_t cut[MAXPARTS + 1] = {0};
    for (int p = 1; p < k; p++) {
        size_t at = c.len * (size_t)p / (size_t)k;
        const char *nl = memchr(text + at, '\n', c.len - at);
        cut[p] = nl ? (size_t)(nl - text) + 1 : c.len;
    }
    cut[k] = c.len;
    char dirs[MAXPARTS + 1][4200];
    ig_index_member_spec ms[MAXPARTS];
    int rc = 0;
    for (int p = 0; p < k && !rc; p++) {
        snprintf(dirs[p], sizeof dirs[p], "%s/part-%d", tmp, p);
        ms[p] = (ig_index_member_spec){"part", dirs[p]};
        rc = build(dirs[p], text + cut[p], cut[p + 1] - cut[p]);
    }
    snprintf(dirs[k], sizeof dirs[k], "%s/minus", tmp);
    ig_index_member_spec mt = {"minus", dirs[k]};
    rc = rc || build(dirs[k], text + cut[k - 1], cut[k] - cut[k - 1]);
    ig_index *one = NULL, *comp = NULL;
    ig_error err;
    if (!rc && (ig_index_open(&one, dirs[0], &err) || ig_index_open_composed(&comp, ms, (size_t)k, NULL, 0, &err))) {
        fprintf(stderr, "bench_compose: open: %s\n", err.msg);
        rc = 1;
    }
    query *qs = malloc(nq * sizeof *qs);
    double *ns = malloc((nq > OPEN_RUNS ? nq : OPEN_RUNS) * sizeof *ns);
    if (!rc && (!qs || !ns))
        rc = 1;
    if (!rc) {
        /* queries from the whole text: present in one member or another, or absent */
        static const uint8_t rare[] = "QZXJ~^`|@#$%\x01\x02\x7f";
        for (size_t i = 0; i < nq; i++) {
            size_t len = 1 + rnd() % MAXQ, off = rnd() % c.len;
            if (off + len > c.len)
                len = c.len - off;
            memcpy(qs[i].b, c.data + off, len);
            qs[i].len = (uint8_t)len;
            if (i % 10 == 9 && len > 1)
                qs[i].b[1 + rnd() % (len - 1)] = rare[rnd() % (sizeof rare - 1)];
        }
        double t1 = time_counts(one, qs, nq, ns), tk = time_counts(comp, qs, nq, ns);
        double t1b = time_counts(one, qs, nq, ns); /* A/B/A: the machine's drift shows */
        double topen[2] = {0, 0}, tminus = 0;
        for (int r = 0; r < OPEN_RUNS; r++) {
            double a = bench_now();
            for (int p = 0; p < k; p++) {
                ig_index *x = NULL;
                if (!ig_index_open(&x, dirs[p], &err))
                    ig_index_close(&x);
            }
            ns[r] = (bench_now() - a) * 1e3;
        }
        topen[0] = bench_median(ns, OPEN_RUNS);
        topen[1] = time_opens(ms, (size_t)k, NULL, 0, ns);
        tminus = time_opens(ms, (size_t)k, &mt, 1, ns);
        rc = topen[1] < 0 || tminus < 0;
        char machine[256];
        bench_machine(machine, sizeof machine);
        printf("== composed count: %s, %zu bytes cut into %d members; %s build; %s\n", dataset, c.len, k,
               bench_build_type(), machine);
        printf("   %zu queries (10%% absent), lengths 1..%d, warm; medians, clock_gettime pair included\n", nq, MAXQ);
        printf("   one member: %.0f ns (again after: %.0f ns); composition of %d: %.0f ns\n", t1, t1b, k, tk);
        double lim = (double)k * (t1 < t1b ? t1 : t1b) + 1000;
        printf("   target composition <= %d x member + 1 us = %.0f ns: %s (%.2fx one member)\n", k, lim,
               tk <= lim ? "met" : "MISSED", tk / t1);
        printf("   open: %d members one by one %.3f ms; composed %.3f ms; composed minus a part (%zu bytes, 1 doc) %.3f ms\n",
               k, topen[0], topen[1], cut[k] - cut[k - 1], tminus);
        if (!rc) {
            bench_result_begin("bench_compose", argc, argv);
            printf(",\"bytes\":%zu,\"parts\":%d,\"queries\":%zu,\"member_median_ns\":%.0f,"
                   "\"member_again_median_ns\":%.0f,\"composed_median_ns\":%.0f,\"limit_ns\":%.0f,"
                   "\"members_open_ms\":%.3f,\"composed_open_ms\":%.3f,\"minus_open_ms\":%.3f}\n",
                   c.len, k, nq, t1, t1b, tk, lim, topen[0], topen[1], tminus);
        }
    }
    ig_index_close(&one);
    ig_index_close(&comp);
    free(qs);
    free(ns);
    bench_rmtree(tmp);
    free(tmp);
    bench_corpus_free(&c);
    return rc;
}
