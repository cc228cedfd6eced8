/*
 * The one-process side of the cluster benchmark (mpi_bench.py): the parts an
 * infinigram-mpi build wrote, opened together as one composed index (the same shards, in
 * one process), and the count command timed on it as rank 0 of infinigram-mpi runs it:
 * the count operation plus its JSON. Queries are read one per line from a file (exact
 * bytes, no newline). The whole set runs once untimed (warm), then each query is timed on
 * its own; prints the median and the 90th percentile in microseconds, and the sum of the
 * counts (to check both sides counted the same).
 *
 * Usage: bench_parts QUERIES DIR...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

static uint64_t run(const ig_op_ctx *ctx, const char *q)
{
    ig_count_opts o;
    ig_count_defaults(&o);
    o.query.p = (uint8_t *)q;
    o.query.n = strlen(q);
    ig_count_result r;
    ig_error e;
    uint64_t n = 0;
    if (ig_op_count.run(ctx, &o, &r, &e) == 0) {
        char *j = ig_count_json(ctx, &o, &r);
        free(j);
        n = r.count;
        ig_count_result_free(&r);
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_parts QUERIES DIR...\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    char **qs = NULL, *line = NULL;
    size_t nq = 0, cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        char **p = realloc(qs, (nq + 1) * sizeof *qs);
        if (!p || !(p[nq] = strdup(line))) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        qs = p;
        nq++;
    }
    free(line);
    fclose(f);
    size_t n = (size_t)argc - 2;
    ig_index_member_spec *ms = calloc(n, sizeof *ms);
    for (size_t i = 0; ms && i < n; i++) {
        ms[i].dir = argv[i + 2];
        ms[i].name = argv[i + 2];
    }
    ig_index *idx = NULL;
    ig_error e;
    if (!ms || ig_index_open_composed(&idx, ms, n, NULL, 0, &e)) {
        fprintf(stderr, "bench_parts: %s\n", ms ? e.msg : "out of memory");
        return 1;
    }
    ig_op_ctx ctx = {idx, "bench", NULL};
    double *ns = malloc((nq ? nq : 1) * sizeof *ns);
    uint64_t sum = 0;
    for (size_t i = 0; i < nq; i++)
        run(&ctx, qs[i]);
    for (size_t i = 0; ns && i < nq; i++) {
        uint64_t a = bench_now_ns();
        sum += run(&ctx, qs[i]);
        ns[i] = (double)(bench_now_ns() - a);
    }
    if (!ns)
        return 1;
    double med = bench_median(ns, nq);
    double p90 = bench_quantile(ns, nq, 0.9);
    printf("%.1f %.1f %" PRIu64 "\n", med / 1e3, p90 / 1e3, sum);
    free(ns);
    for (size_t i = 0; i < nq; i++)
        free(qs[i]);
    free(qs);
    free(ms);
    ig_index_close(&idx);
    return 0;
}
