/*
 * Throughput of one generation command, as a user types it:
 *
 *   generate --max 486 --interp 2 --temperature 0.8 --seed S --no-stop-at-end "First Citizen:"
 *
 * on an index of the first 90% of Tiny Shakespeare (datasets/tinyshakespeare.txt with the
 * ingest range 0:90%, default ingest and build options, as `:dataset add … --range 0:90%`).
 *
 * Two timings per seed, seeds 1..S (default 100), the whole set repeated R times (default 5):
 *   library  ig_gen_start, the ig_gen_next loop and ig_gen_free (the generator alone);
 *   command  ig_generate_run, the operation behind the shell's and the server's generate:
 *            the same generation plus its summary (median effective n, spans of the output,
 *            the longest span's source), no terminal output.
 * chars/s = characters generated over all seeds / time over all seeds; the median over the
 * R repetitions is printed (and min, max), also per second of process CPU time (steadier on a
 * shared machine). One untimed pass over every seed comes first.
 *
 * It also prints an FNV-1a hash of every seed's text and of every step's fields (bytes,
 * probability bits, effective n, suffix count, sparse, source), so that two builds can be
 * checked to generate byte-identical output step for step (compare the `outputs` hashes), and
 * one of every seed's summary (median effective n, longest span, its source, the share inside
 * spans of 20 bytes, the stop reason: compare the `summaries` hashes).
 *
 * --tables builds the index with its prefix table and sampled search keys (by default only
 * shards of 8 MiB or more get them), to show what they are worth to generation.
 *
 * Usage: bench_gen_command [--seeds N] [--reps N] [--tables] [--dataset PATH]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define PROMPT "First Citizen:"
#define MAX_CHARS 486

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* One generation with the library; adds its characters to *chars and folds its output into *h. */
static int lib_run(const ig_index *idx, uint64_t seed, uint64_t *chars, uint64_t *h)
{
    ig_gen_options o;
    ig_gen_options_default(&o);
    o.model.kind = IG_MODEL_INTERP;
    o.model.interp_k = 2;
    o.model.max_context = -1;
    o.temperature = 0.8;
    o.stop_at_end = 0;
    o.max_chars = MAX_CHARS;
    o.seed = seed;
    ig_gen *g = NULL;
    ig_error err = {0};
    if (ig_gen_start(&g, idx, &o, (const uint8_t *)PROMPT, strlen(PROMPT), &err)) {
        fprintf(stderr, "bench_gen_command: gen_start: %s\n", err.msg);
        return -1;
    }
    ig_gen_step st;
    int rc;
    while ((rc = ig_gen_next(g, &st, &err)) == IG_STOP_NONE) {
        (*chars)++;
        if (h) {
            *h = fnv(*h, st.bytes, st.len);
            *h = fnv(*h, &st.prob, sizeof st.prob);
            *h = fnv(*h, &st.effective_n, sizeof st.effective_n);
            *h = fnv(*h, &st.suffix_count, sizeof st.suffix_count);
            *h = fnv(*h, &st.sparse, sizeof st.sparse);
            *h = fnv(*h, &st.has_source, sizeof st.has_source);
            if (st.has_source)
                *h = fnv(*h, &st.source, sizeof st.source);
        }
    }
    if (rc < 0)
        fprintf(stderr, "bench_gen_command: gen_next: %s\n", err.msg);
    ig_gen_free(&g);
    return rc < 0 ? -1 : 0;
}

/* The same generation through the operation (summary included); *h folds in its text and
 * *hs its whole summary (every field, the source's name by content). */
static int op_run(const ig_index *idx, uint64_t seed, uint64_t *chars, uint64_t *h, uint64_t *hs)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "bench"};
    ig_generate_opts o;
    ig_generate_defaults(&o);
    o.query = (ig_bytes){(uint8_t *)PROMPT, strlen(PROMPT)};
    o.model.interp = 2;
    o.temperature = 0.8;
    o.seed = seed;
    o.max = MAX_CHARS;
    o.no_stop_at_end = 1;
    ig_generate_result r;
    ig_error err = {0};
    if (ig_generate_run(&ctx, &o, &r, &err)) {
        fprintf(stderr, "bench_gen_command: generate: %s\n", err.msg);
        return -1;
    }
    *chars += r.chars;
    if (h) {
        *h = fnv(*h, r.text, r.len);
        *h = fnv(*h, &r.longest_span, sizeof r.longest_span);
        *h = fnv(*h, &r.median_effective_n, sizeof r.median_effective_n);
    }
    if (hs) {
        *hs = fnv(*hs, &r.stop_reason, sizeof r.stop_reason);
        *hs = fnv(*hs, &r.median_effective_n, sizeof r.median_effective_n);
        *hs = fnv(*hs, &r.longest_span, sizeof r.longest_span);
        *hs = fnv(*hs, &r.inside_spans_20, sizeof r.inside_spans_20);
        *hs = fnv(*hs, &r.has_source, sizeof r.has_source);
        if (r.has_source) {
            const ig_location *l = &r.longest_source;
            uint64_t f[5] = {l->doc, l->source_line, l->offset, l->line, l->column};
            *hs = fnv(*hs, f, sizeof f);
            if (l->name)
                *hs = fnv(*hs, l->name, strlen(l->name));
        }
    }
    ig_generate_result_free(&r);
    return 0;
}

/* CPU time of this process: on a machine shared with other work, time spent waiting for a core
 * is not counted, so runs compare better than by the wall clock (cache contention remains). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_gen_command [--seeds N] [--reps N] [--tables] [--dataset PATH]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int seeds = 100, reps = 5, tables = 0;
    const char *dataset = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tables"))
            tables = 1;
        else if (!strcmp(argv[i], "--dataset") && i + 1 < argc)
            dataset = argv[++i];
        else
            usage();
    }
    if (seeds < 1 || reps < 1 || reps > 1000)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    char machine[512];
    bench_machine(machine, sizeof machine);
    bench_corpus c;
    if (bench_corpus_shakespeare(&c, dataset))
        return 1;
    char *tmp = bench_mkdtemp("gencmd");
    if (!tmp)
        return 1;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index", tmp);
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    ig_error err = {0};
    in.has_range = 1;
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c.path};
    ig_build_result br;
    ig_index *idx = NULL;
    ig_build_options bo;
    ig_build_options_default(&bo);
    if (tables)
        bo.prefix_min = 1;
    if (ig_byte_range_parse("0:90%", &in.range, &err) ||
        ig_build_index(dir, &src, 1, &in, &bo, NULL, NULL, NULL, &br, &err) || ig_index_open(&idx, dir, &err)) {
        fprintf(stderr, "bench_gen_command: %s\n", err.msg);
        return 1;
    }
    ig_build_result_free(&br);
    printf("bench_gen_command: generate --max %d --interp 2 --temperature 0.8 --seed S --no-stop-at-end \"%s\"\n",
           MAX_CHARS, PROMPT);
    printf("machine: %s\nbuild type: %s\ncorpus: first 90%% of %s (%" PRIu64 " bytes indexed)%s\nseeds 1..%d, %d reps\n",
           machine, bench_build_type(), c.path, ig_count(idx, NULL, 0),
           tables ? ", prefix table and sampled keys" : "", seeds, reps);

    /* untimed pass: output hashes, and the pages of the index in memory */
    uint64_t hl = 0xcbf29ce484222325ull, ho = hl, hs = hl, nl = 0, no = 0;
    int rc = 0;
    for (int s = 1; s <= seeds && !rc; s++)
        rc = lib_run(idx, (uint64_t)s, &nl, &hl) || op_run(idx, (uint64_t)s, &no, &ho, &hs);
    double *lib = calloc((size_t)reps, sizeof *lib), *cmd = calloc((size_t)reps, sizeof *cmd);
    double *libc = calloc((size_t)reps, sizeof *libc), *cmdc = calloc((size_t)reps, sizeof *cmdc);
    if (!lib || !cmd || !libc || !cmdc)
        rc = -1;
    for (int r = 0; r < reps && !rc; r++) {
        uint64_t n = 0;
        double t0 = bench_now(), c0 = cpu_now();
        for (int s = 1; s <= seeds && !rc; s++)
            rc = lib_run(idx, (uint64_t)s, &n, NULL);
        lib[r] = (double)n / (bench_now() - t0);
        libc[r] = (double)n / (cpu_now() - c0);
        n = 0;
        t0 = bench_now();
        c0 = cpu_now();
        for (int s = 1; s <= seeds && !rc; s++)
            rc = op_run(idx, (uint64_t)s, &n, NULL, NULL);
        cmd[r] = (double)n / (bench_now() - t0);
        cmdc[r] = (double)n / (cpu_now() - c0);
        printf("  rep %d: library %.0f chars/s (%.0f per CPU second), command %.0f chars/s (%.0f per CPU second)\n",
               r + 1, lib[r], libc[r], cmd[r], cmdc[r]);
    }
    if (!rc) {
        double lmed = bench_median(lib, (size_t)reps), cmed = bench_median(cmd, (size_t)reps);
        double lcpu = bench_median(libc, (size_t)reps), ccpu = bench_median(cmdc, (size_t)reps);
        printf("library: %.0f chars/s median (min %.0f, max %.0f)\n", lmed, lib[0], lib[reps - 1]);
        printf("library per CPU second: %.0f chars median (min %.0f, max %.0f)\n", lcpu, libc[0], libc[reps - 1]);
        printf("command: %.0f chars/s median (min %.0f, max %.0f)\n", cmed, cmd[0], cmd[reps - 1]);
        printf("command per CPU second: %.0f chars median (min %.0f, max %.0f)\n", ccpu, cmdc[0], cmdc[reps - 1]);
        printf("outputs: library %016" PRIx64 " (%" PRIu64 " chars), command %016" PRIx64 " (%" PRIu64 " chars)\n", hl,
               nl, ho, no);
        printf("summaries: %016" PRIx64 "\n", hs);
        printf("RESULT bench_gen_command {\"buildtype\":\"%s\",\"machine\":\"%s\",\"seeds\":%d,\"reps\":%d,"
               "\"library_chars_per_s\":%.0f,\"library_chars_per_cpu_s\":%.0f,\"command_chars_per_s\":%.0f,"
               "\"command_chars_per_cpu_s\":%.0f,\"library_hash\":\"%016" PRIx64 "\",\"command_hash\":\"%016" PRIx64 "\","
               "\"summary_hash\":\"%016" PRIx64 "\"}\n",
               bench_build_type(), machine, seeds, reps, lmed, lcpu, cmed, ccpu, hl, ho, hs);
    }
    free(lib);
    free(libc);
    free(cmd);
    free(cmdc);
    ig_index_close(&idx);
    bench_rmtree(tmp);
    free(tmp);
    bench_corpus_free(&c);
    return rc ? 1 : 0;
}
