/*
 * The cost of a case-folded index (:dataset add --casefold) beside a plain one of the same
 * corpus: build time, bytes on disk per corpus byte (the fold file's share apart), and
 * ig_count latency, A/B in one run.
 *
 * The corpus is usr-include (bench_common.h; --max-bytes, default 64 MiB), ASCII-heavy
 * text with capitals. Both indexes are built (and timed) with default options (one shard;
 * NFC) into fresh temp directories. Queries are drawn with a fixed seed from the corpus's
 * original bytes (substrings of 1..30 bytes at random offsets, widened to whole
 * characters), then prepared for each index with
 * ig_query_normalize (untimed: the casefold index folds them). Each round runs the whole
 * set on both indexes, alternating which goes first; every ig_count is timed on its own.
 * Medians and p99 are over all rounds; their ratio is the latency cost.
 *
 * Usage: bench_casefold [--queries N] [--rounds R] [--max-bytes N]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define MAXQ 30

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return bench_rnd(&g_rng); }

typedef struct prepared {
    uint8_t *p[2];
    size_t n[2];
} prepared;

static int build(const char *dir, const char *path, int casefold, double *secs)
{
    ig_source src = {.kind = IG_SOURCE_FILE, .path = path};
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.casefold = casefold;
    ig_build_result br;
    ig_error err;
    double t0 = bench_now();
    if (ig_build_index(dir, &src, 1, &in, NULL, NULL, NULL, NULL, &br, &err)) {
        fprintf(stderr, "build: %s\n", err.msg);
        return -1;
    }
    *secs = bench_now() - t0;
    ig_build_result_free(&br);
    return 0;
}

int main(int argc, char **argv)
{
    size_t nq = 100000, rounds = 5, max_bytes = 64u << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--queries"))
            nq = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--max-bytes"))
            max_bytes = strtoull(argv[i + 1], NULL, 10);
    }
    char machine[256];
    bench_machine(machine, sizeof machine);
    printf("machine: %s, build type %s\n", machine, bench_build_type());
    char *tmp = bench_mkdtemp("casefold");
    bench_corpus c;
    if (!tmp || bench_corpus_usr_include(&c, tmp, max_bytes, 4u << 20)) {
        fprintf(stderr, "no corpus\n");
        return 1;
    }
    printf("corpus: %s, %zu bytes, %zu files, fnv1a %016" PRIx64 "\n", c.name, c.len, c.nfiles, c.hash);
    size_t upper = 0;
    for (size_t i = 0; i < c.len; i++)
        upper += c.data[i] >= 'A' && c.data[i] <= 'Z';
    printf("ASCII capitals: %.2f%% of the bytes\n", 100.0 * (double)upper / (double)c.len);

    const char *names[2] = {"plain", "casefold"};
    char *dirs[2];
    ig_index *idx[2] = {NULL, NULL};
    uint64_t size[2];
    double secs[2];
    for (int k = 0; k < 2; k++) {
        ig_error err;
        uint64_t alloc;
        size_t nfiles;
        dirs[k] = bench_mkdtemp(names[k]);
        bench_rmtree(dirs[k]); /* the build creates it */
        if (!dirs[k] || build(dirs[k], c.path, k, &secs[k]) || bench_dir_size(dirs[k], &size[k], &alloc, &nfiles) ||
            ig_index_open(&idx[k], dirs[k], &err)) {
            fprintf(stderr, "%s index failed\n", names[k]);
            return 1;
        }
        printf("%-8s build %.2f s (%.1f MB/s), %" PRIu64 " bytes on disk: %.3f bytes per corpus byte\n", names[k],
               secs[k], (double)c.len / BENCH_MiB / secs[k], size[k], (double)size[k] / (double)c.len);
    }
    long fold_bytes = -1;
    {
        char path[4200];
        snprintf(path, sizeof path, "%s/shard-0000/fold", dirs[1]);
        FILE *f = fopen(path, "rb");
        long fl = -1;
        if (f && !fseek(f, 0, SEEK_END))
            fl = ftell(f);
        if (f)
            fclose(f);
        printf("fold file: %ld bytes, %.4f bytes per corpus byte; casefold/plain size %.4f, build time %.3f\n", fl,
               (double)fl / (double)c.len, (double)size[1] / (double)size[0], secs[1] / secs[0]);
        fold_bytes = fl;
    }

    prepared *q = calloc(nq, sizeof *q);
    double *t[2] = {malloc(nq * rounds * sizeof(double)), malloc(nq * rounds * sizeof(double))};
    if (!q || !t[0] || !t[1])
        return 1;
    for (size_t i = 0; i < nq; i++) {
        size_t len = 1 + rnd() % MAXQ, at = rnd() % (c.len - MAXQ);
        while (at && (c.data[at] & 0xC0) == 0x80)
            at--;
        while (len < MAXQ && (c.data[at + len] & 0xC0) == 0x80)
            len++;
        for (int k = 0; k < 2; k++) {
            ig_error err;
            if (ig_query_normalize(idx[k], c.data + at, len, &q[i].p[k], &q[i].n[k], &err)) {
                fprintf(stderr, "normalize: %s\n", err.msg);
                return 1;
            }
        }
    }
    uint64_t sink = 0;
    for (int k = 0; k < 2; k++) /* warm: page cache and page tables of both mappings */
        for (size_t i = 0; i < nq; i++)
            sink += ig_count(idx[k], q[i].p[k], q[i].n[k]);
    for (size_t r = 0; r < rounds; r++) {
        for (int j = 0; j < 2; j++) {
            int k = (int)((r + (size_t)j) % 2);
            for (size_t i = 0; i < nq; i++) {
                uint64_t a = bench_now_ns();
                sink += ig_count(idx[k], q[i].p[k], q[i].n[k]);
                t[k][r * nq + i] = (double)(bench_now_ns() - a);
            }
        }
    }
    double med[2], p99[2];
    for (int k = 0; k < 2; k++) {
        med[k] = bench_median(t[k], nq * rounds);
        p99[k] = bench_quantile(t[k], nq * rounds, 0.99);
        printf("%-8s count median %.0f ns, p99 %.0f ns (%zu queries x %zu rounds)\n", names[k], med[k], p99[k], nq,
               rounds);
    }
    printf("casefold/plain count latency: median %.3f, p99 %.3f (checksum %" PRIu64 ")\n", med[1] / med[0],
           p99[1] / p99[0], sink);
    bench_result_begin("bench_casefold", argc, argv);
    printf(",\"corpus\":\"%s\",\"bytes\":%zu,\"queries\":%zu,\"rounds\":%zu", c.name, c.len, nq, rounds);
    for (int k = 0; k < 2; k++)
        printf(",\"%s\":{\"build_s\":%.3f,\"bytes_per_byte\":%.4f,\"count_median_ns\":%.0f,\"count_p99_ns\":%.0f}",
               names[k], secs[k], (double)size[k] / (double)c.len, med[k], p99[k]);
    printf(",\"fold_bytes_per_byte\":%.4f,\"count_median_ratio\":%.3f,\"count_p99_ratio\":%.3f,"
           "\"build_ratio\":%.3f}\n", (double)fold_bytes / (double)c.len, med[1] / med[0], p99[1] / p99[0],
           secs[1] / secs[0]);
    for (size_t i = 0; i < nq; i++)
        for (int k = 0; k < 2; k++)
            free(q[i].p[k]);
    free(q);
    free(t[0]);
    free(t[1]);
    for (int k = 0; k < 2; k++) {
        ig_index_close(&idx[k]);
        bench_rmtree(dirs[k]);
        free(dirs[k]);
    }
    bench_corpus_free(&c);
    bench_rmtree(tmp);
    free(tmp);
    return 0;
}
