/*
 * Query latency (ig_count) on a warm index, and load time (ig_index_open).
 *
 * For each corpus (see bench_common.h) an index is built untimed (default options,
 * NFC on) into a fresh temp directory and opened. Queries are drawn with a fixed seed
 * from the index's own text (ig_text of shard 0, so they match what was indexed):
 *   - present (90%): a substring of length 1..30 (uniform) at a uniform random offset,
 *     cut before any 0xFF document separator;
 *   - absent (10%): a substring of length 8..30 with one byte (not the first) replaced
 *     by a random byte from a set of rare characters; kept only if its count is 0.
 * The whole query set is run once untimed (warm: page cache and page tables of the
 * mapping), then once more timing every ig_count individually with
 * clock_gettime(CLOCK_MONOTONIC); median and p99 are of those individual times, which
 * include one clock read (its cost, measured back-to-back, is printed and not
 * subtracted). A second pass times batches of 16 consecutive queries as a cross-check
 * free of timer overhead. Target: median <= 2 µs.
 *
 * Load: ig_index_open + ig_index_close, 50 times, median (and max). Target < 20 ms
 * whatever the size.
 *
 * Usage: bench_count [--queries N] [--max-bytes N] [--only NAME] [--dataset PATH]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define MAXQ 30
#define LOAD_RUNS 50

typedef struct query {
    uint8_t b[MAXQ];
    uint8_t len;
    uint8_t absent;
} query;

/* xorshift64*: fixed seed, same queries on every run and machine for the same corpus. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}
static uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

static int take(const uint8_t *t, size_t n, size_t minlen, query *q)
{
    size_t len = minlen + rnd_below(MAXQ - minlen + 1);
    size_t off = rnd_below(n);
    if (off + len > n)
        len = n - off;
    const uint8_t *ff = memchr(t + off, 0xFF, len);
    if (ff)
        len = (size_t)(ff - (t + off));
    if (len < minlen)
        return -1;
    memcpy(q->b, t + off, len);
    q->len = (uint8_t)len;
    q->absent = 0;
    return 0;
}

static size_t make_queries(const ig_index *idx, const uint8_t *t, size_t n, query *qs, size_t nq,
                           size_t *nabsent)
{
    static const uint8_t rare[] = "QZXJ~^`|@#$%\x01\x02\x7f";
    size_t k = 0, tries = 0;
    *nabsent = 0;
    while (k < nq && tries++ < nq * 100) {
        query *q = &qs[k];
        int want_absent = (k % 10) == 9;
        if (take(t, n, want_absent ? 8 : 1, q))
            continue;
        if (want_absent) {
            size_t pos = 1 + rnd_below(q->len - 1);
            q->b[pos] = rare[rnd_below(sizeof rare - 1)];
            if (ig_count(idx, q->b, q->len) != 0)
                continue;
            q->absent = 1;
            (*nabsent)++;
        }
        k++;
    }
    return k;
}

typedef struct count_result {
    char name[32];
    size_t bytes;
    uint64_t hash;
    size_t nq, nabsent;
    double med_ns, p99_ns, p999_ns, max_ns, mean_ns, med_present_ns, med_absent_ns, batch_med_ns;
    double timer_ns;
    double med_bucket_ns[3];       ///< lengths 1-3, 4-10, 11-30 (present queries)
    double load_med_ms, load_max_ms;
} count_result;

static volatile uint64_t g_sink;

static int run_corpus(const bench_corpus *c, const char *tmp, size_t nq, count_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->bytes = c->len;
    r->hash = c->hash;

    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index-%s", tmp, c->name);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c->path};
    ig_build_result br;
    ig_error err = {0};
    if (ig_build_index(dir, &src, 1, NULL, NULL, NULL, NULL, NULL, &br, &err)) {
        fprintf(stderr, "bench_count: build of %s failed: %s\n", c->name, err.msg);
        return -1;
    }
    uint64_t indexed = br.bytes;
    ig_build_result_free(&br);

    /* load */
    double lt[LOAD_RUNS];
    for (int i = 0; i < LOAD_RUNS; i++) {
        ig_index *idx = NULL;
        double t0 = bench_now();
        if (ig_index_open(&idx, dir, &err)) {
            fprintf(stderr, "bench_count: open %s: %s\n", dir, err.msg);
            return -1;
        }
        ig_index_close(&idx);
        lt[i] = (bench_now() - t0) * 1e3;
    }
    r->load_med_ms = bench_median(lt, LOAD_RUNS);
    r->load_max_ms = lt[LOAD_RUNS - 1];

    ig_index *idx = NULL;
    if (ig_index_open(&idx, dir, &err)) {
        fprintf(stderr, "bench_count: open %s: %s\n", dir, err.msg);
        return -1;
    }
    ig_index_info info;
    ig_index_get_info(idx, &info);
    size_t tlen = SIZE_MAX;
    const uint8_t *t = ig_text(idx, 0, 0, &tlen);
    if (info.shards != 1 || !t || tlen != info.bytes) {
        fprintf(stderr, "bench_count: expected one shard of %" PRIu64 " bytes\n", info.bytes);
        ig_index_close(&idx);
        return -1;
    }
    query *qs = malloc(nq * sizeof *qs);
    double *ns = malloc(nq * sizeof *ns), *sub = malloc(nq * sizeof *sub);
    if (!qs || !ns || !sub) {
        fprintf(stderr, "bench_count: out of memory\n");
        return -1;
    }
    g_rng = 0x9E3779B97F4A7C15ull ^ c->len;
    nq = make_queries(idx, t, tlen, qs, nq, &r->nabsent);
    r->nq = nq;

    /* timer cost */
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = bench_now_ns();
        uint64_t b = bench_now_ns();
        ns[i] = (double)(b - a);
    }
    r->timer_ns = bench_median(ns, nq);

    /* warm-up pass (untimed) */
    uint64_t sum = 0;
    for (size_t i = 0; i < nq; i++)
        sum += ig_count(idx, qs[i].b, qs[i].len);
    /* individually timed pass */
    double total = 0;
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = bench_now_ns();
        sum += ig_count(idx, qs[i].b, qs[i].len);
        uint64_t b = bench_now_ns();
        ns[i] = (double)(b - a);
        total += ns[i];
    }
    r->mean_ns = total / (double)nq;
    size_t np = 0, na = 0;
    for (size_t i = 0; i < nq; i++)
        if (!qs[i].absent)
            sub[np++] = ns[i];
    r->med_present_ns = bench_median(sub, np);
    for (size_t i = 0; i < nq; i++)
        if (qs[i].absent)
            sub[na++] = ns[i];
    r->med_absent_ns = bench_median(sub, na);
    static const int bucket_hi[3] = {3, 10, MAXQ};
    for (int bk = 0; bk < 3; bk++) {
        size_t nbk = 0;
        for (size_t i = 0; i < nq; i++)
            if (!qs[i].absent && qs[i].len <= bucket_hi[bk] && (bk == 0 || qs[i].len > bucket_hi[bk - 1]))
                sub[nbk++] = ns[i];
        r->med_bucket_ns[bk] = bench_median(sub, nbk);
    }
    r->med_ns = bench_quantile(ns, nq, 0.5);
    r->p99_ns = bench_quantile(ns, nq, 0.99);
    r->p999_ns = bench_quantile(ns, nq, 0.999);
    r->max_ns = ns[nq - 1];
    /* batches of 16 */
    size_t nb = 0;
    for (size_t i = 0; i + 16 <= nq; i += 16) {
        uint64_t a = bench_now_ns();
        for (size_t j = i; j < i + 16; j++)
            sum += ig_count(idx, qs[j].b, qs[j].len);
        uint64_t b = bench_now_ns();
        sub[nb++] = (double)(b - a) / 16.0;
    }
    r->batch_med_ns = bench_median(sub, nb);
    g_sink = sum;
    ig_index_close(&idx);

    printf("\n== %s: %zu bytes (%.2f MiB), %" PRIu64 " indexed bytes, fnv1a %016" PRIx64 "\n", c->name,
           c->len, (double)c->len / BENCH_MiB, indexed, c->hash);
    printf("   load (ig_index_open+close, %d runs): median %.3f ms, max %.3f ms  (target < 20 ms: %s)\n",
           LOAD_RUNS, r->load_med_ms, r->load_max_ms, r->load_max_ms < 20 ? "met" : "MISSED");
    printf("   count: %zu queries (%zu absent), lengths 1..%d, warm index\n", nq, r->nabsent, MAXQ);
    printf("     individually timed: median %.0f ns, p99 %.0f ns, p99.9 %.0f ns, max %.0f ns, mean %.0f ns\n",
           r->med_ns, r->p99_ns, r->p999_ns, r->max_ns, r->mean_ns);
    printf("     median present %.0f ns, absent %.0f ns; clock_gettime pair costs %.0f ns (included)\n",
           r->med_present_ns, r->med_absent_ns, r->timer_ns);
    printf("     median present by length: 1-3 bytes %.0f ns, 4-10 %.0f ns, 11-30 %.0f ns\n",
           r->med_bucket_ns[0], r->med_bucket_ns[1], r->med_bucket_ns[2]);
    printf("     batches of 16: median %.0f ns per query\n", r->batch_med_ns);
    printf("     target median <= 2 us: %s\n", r->med_ns <= 2000 ? "met" : "MISSED");
    free(qs);
    free(ns);
    free(sub);
    if (bench_rmtree(dir) != 0)
        fprintf(stderr, "bench_count: warning: cannot remove %s\n", dir);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_count [--queries N] [--max-bytes N] [--only NAME] [--dataset PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t nq = 100000;
    size_t max_bytes = 16u << 20;
    const char *only = NULL, *dataset = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nq = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
            max_bytes = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--dataset") && i + 1 < argc)
            dataset = argv[++i];
        else
            usage();
    }
    if (nq < 100)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *tmp = bench_mkdtemp("count");
    if (!tmp)
        return 1;
    printf("bench_count: ig_count latency on a warm index, ig_index_open time\n");
    printf("machine: %s\nbuild type: %s\ntemp dir: %s\n", machine, bench_build_type(), tmp);

    count_result res[2];
    int nres = 0, rc = 0;
    for (int which = 0; which < 2 && !rc; which++) {
        const char *name = which == 0 ? "tinyshakespeare" : "usr-include";
        if (only && strcmp(only, name))
            continue;
        bench_corpus c;
        rc = which == 0 ? bench_corpus_shakespeare(&c, dataset)
                        : bench_corpus_usr_include(&c, tmp, max_bytes, 4u << 20);
        if (!rc)
            rc = run_corpus(&c, tmp, nq, &res[nres]);
        if (!rc)
            nres++;
        bench_corpus_free(&c);
    }
    bench_rmtree(tmp);
    free(tmp);
    if (rc)
        return 1;

    printf("\n%-16s %10s %8s %11s %9s %12s %9s\n", "corpus", "bytes", "queries", "median ns",
           "p99 ns", "batch16 ns", "load ms");
    for (int i = 0; i < nres; i++)
        printf("%-16s %10zu %8zu %11.0f %9.0f %12.0f %9.3f\n", res[i].name, res[i].bytes, res[i].nq,
               res[i].med_ns, res[i].p99_ns, res[i].batch_med_ns, res[i].load_med_ms);
    bench_result_begin("bench_count", argc, argv);
    printf(",\"corpora\":[");
    for (int i = 0; i < nres; i++) {
        const count_result *r = &res[i];
        printf("%s{\"name\":\"%s\",\"bytes\":%zu,\"fnv1a\":\"%016" PRIx64 "\",\"queries\":%zu,"
               "\"absent\":%zu,\"count_median_us\":%.4f,\"count_p99_us\":%.4f,"
               "\"count_p999_us\":%.4f,\"count_batch16_us\":%.4f,\"timer_ns\":%.0f,"
               "\"load_median_ms\":%.4f,\"load_max_ms\":%.4f,\"present_by_length_median_us\":"
               "[%.4f,%.4f,%.4f],\"absent_median_us\":%.4f}",
               i ? "," : "", r->name, r->bytes, r->hash, r->nq, r->nabsent, r->med_ns / 1e3,
               r->p99_ns / 1e3, r->p999_ns / 1e3, r->batch_med_ns / 1e3, r->timer_ns,
               r->load_med_ms, r->load_max_ms, r->med_bucket_ns[0] / 1e3, r->med_bucket_ns[1] / 1e3,
               r->med_bucket_ns[2] / 1e3, r->med_absent_ns / 1e3);
    }
    printf("]}\n");
    return 0;
}
