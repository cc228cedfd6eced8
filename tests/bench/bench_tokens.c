/*
 * Attached token indexes (the infini-gram layout): attach time, count latency and exact
 * next-token distributions.
 *
 * The index is synthetic, written here in the layout of the infini-gram indexer: --mb MiB of
 * u16 ids (default 64) in documents of 50 to 2,000 tokens, ids drawn from a 32,000-id
 * vocabulary with a Zipf-like skew (id = ⌊V·u⁴⌋, so small ids are frequent), each document
 * preceded by the 0xFFFF separator; its suffix array comes from libdivsufsort over the bytes,
 * filtered to token starts (the order of the suffixes that remain is the same), with the
 * indexer's pointer width. With --dir DIR it is kept there and reused by later runs (e.g.
 * to run the official engine on the same files).
 *
 * Measured, on a warm page cache:
 *   - attach: ig_index_attach + ig_index_close, median of 20;
 *   - count: ig_count of --queries patterns, each timed alone (clock pair included), median:
 *     90% token runs of 1 to 4 ids taken from the corpus, 10% runs with an id never used;
 *   - next tokens: the predict operation (∞-gram) after the most frequent id (a frequent
 *     one-token context: thousands of distinct next tokens) and after a random 3-id context
 *     from the corpus: the first run (the histogram computed) and the median of 20 more
 *     (a histogram of 50,000 occurrences or more is then served from the index's cache);
 *   - next-token table: ig_next_table_write with the default min_count (the tokens ÷ 1,024),
 *     written beside DIR (DIR.next), once; then the index attached afresh (empty cache), the
 *     table put to use (timed), and the predict operation after the most frequent id and after
 *     the 20th most frequent, first run and median of 20 more, as above.
 *
 * With --dump FILE the count queries are written there, one per line in hex, so that another
 * engine can be timed on the same index and queries (BENCHMARKS.md says how). With --dir the
 * table DIR.next is kept, and `--fresh 1` then times only what a new process does: attach DIR,
 * put DIR.next to use, and one predict after the most frequent id, then one after id 19 (run
 * it several times: each run is one first request in a fresh process; `--id N` makes the first
 * one after id N instead); `--fresh 2` the same without the table. `--warm 1` times a running
 * process instead: after each of ids 0, 5 and 19, the first predict from the table and the
 * median of 20 more.
 *
 * Usage: bench_tokens [--mb N] [--queries N] [--dir DIR] [--dump FILE] [--fresh 1|2 [--id N]] [--warm 1]
 */
#include <divsufsort.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"
#include "util/util.h"

#define VOCAB 32000

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return bench_rnd(&g_rng); }
static double unit(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }
static volatile uint64_t g_sink;

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "bench_tokens: cannot write %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

/* Writes the index into dir; the token stream is returned in *text (malloc'd). */
static int make_index(const char *dir, size_t mb, uint8_t **text, size_t *n)
{
    size_t ntok = mb * 1024 * 1024 / 2, at = 0;
    uint16_t *t = malloc(ntok * 2);
    uint64_t *off = malloc((ntok / 50 + 2) * 8);
    size_t ndocs = 0;
    if (!t || !off)
        return -1;
    while (at < ntok) {
        size_t len = 50 + rnd() % 1951;
        if (at + 1 + len > ntok)
            len = ntok - at - 1;
        off[ndocs++] = (uint64_t)at * 2;
        t[at++] = 0xFFFF;
        for (size_t i = 0; i < len; i++) {
            double u = unit();
            t[at++] = (uint16_t)(VOCAB * u * u * u * u);
        }
    }
    size_t bytes = ntok * 2;
    saidx_t *sa = malloc(bytes * sizeof *sa);
    if (!sa || bytes > INT32_MAX || divsufsort((const sauchar_t *)t, sa, (saidx_t)bytes)) {
        fprintf(stderr, "bench_tokens: cannot sort %zu bytes\n", bytes);
        return -1;
    }
    uint32_t pw = (uint32_t)ceil(log2((double)bytes) / 8);
    uint8_t *table = malloc(ntok * pw);
    size_t r = 0;
    for (size_t i = 0; i < bytes; i++)
        if (sa[i] % 2 == 0) {
            for (uint32_t k = 0; k < pw; k++)
                table[r * pw + k] = (uint8_t)((uint64_t)sa[i] >> (8 * k));
            r++;
        }
    free(sa);
    char path[4200];
    int rc = 0;
    snprintf(path, sizeof path, "%s/tokenized.0", dir);
    rc |= write_file(path, t, bytes);
    snprintf(path, sizeof path, "%s/table.0", dir);
    rc |= write_file(path, table, ntok * pw);
    snprintf(path, sizeof path, "%s/offset.0", dir);
    rc |= write_file(path, off, ndocs * 8);
    free(table);
    free(off);
    *text = (uint8_t *)t;
    *n = bytes;
    return rc;
}

/* Median ms of the predict operation after `ids` over 20 runs after a first one (*first: its
 * ms: the histogram computed, before the cache holds it). */
static double time_predict(const ig_index *idx, const char *ids, size_t *distinct, double *first)
{
    ig_op_ctx ctx = {.idx = idx};
    double ms[20];
    for (int k = 0; k < 21; k++) {
        ig_predict_opts o;
        ig_predict_defaults(&o);
        o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
        ig_predict_result r;
        ig_error e;
        double t0 = bench_now();
        if (ig_op_predict.run(&ctx, &o, &r, &e)) {
            fprintf(stderr, "bench_tokens: predict: %s\n", e.msg);
            return -1;
        }
        if (k)
            ms[k - 1] = (bench_now() - t0) * 1e3;
        else
            *first = (bench_now() - t0) * 1e3;
        *distinct = r.nsyms;
        ig_predict_result_free(&r);
    }
    return bench_median(ms, 20);
}

/* The index kept in dir by an earlier run, attached, with its table DIR.next put to use when
 * `table`: 0, or the exit status (2: no --dir given to `mode`). */
static int open_kept(const char *dir, int table, const char *mode, ig_index **idx)
{
    if (!dir) {
        fprintf(stderr, "bench_tokens: %s needs --dir (of an earlier run, whose table it uses)\n", mode);
        return 2;
    }
    char tab[4200];
    snprintf(tab, sizeof tab, "%s.next", dir);
    ig_error e;
    if (ig_index_attach(idx, dir, NULL, &e) || (table && ig_next_table_use(*idx, tab, NULL, &e))) {
        fprintf(stderr, "bench_tokens: %s\n", e.msg);
        ig_index_close(idx);
        return 1;
    }
    return 0;
}

/* A running process's requests from the table kept beside --dir: the index attached and the
 * table put to use, then after each of ids 0, 5 and 19 (frequent contexts) the first predict
 * and the median of 20 more. */
static int warm_process(const char *dir)
{
    ig_index *idx = NULL;
    int rc = open_kept(dir, 1, "--warm", &idx);
    if (rc)
        return rc;
    const char *ids[3] = {"0", "5", "19"};
    for (int k = 0; k < 3; k++) {
        size_t distinct = 0;
        double first = 0, ms = time_predict(idx, ids[k], &distinct, &first);
        if (ms < 0)
            return 1;
        printf("running process, with the table: next tokens after id %s (%zu distinct): first %.3f ms, then %.4f ms "
               "(median of 20)\n", ids[k], distinct, first, ms);
    }
    ig_index_close(&idx);
    return 0;
}

/* One fresh process's first requests, with the table kept beside --dir. */
static int fresh_process(const char *dir, int table, const char *first_id)
{
    ig_index *idx = NULL;
    ig_error e;
    double t0 = bench_now();
    int rc = open_kept(dir, table, "--fresh", &idx);
    if (rc)
        return rc;
    double open_ms = (bench_now() - t0) * 1e3;
    size_t d0 = 0, d19 = 0;
    double first0 = 0, first19 = 0;
    ig_op_ctx ctx = {.idx = idx};
    const char *ids[2] = {first_id, "19"};
    long faults[2];
    for (int k = 0; k < 2; k++) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        faults[k] = -ru.ru_minflt;
        ig_predict_opts o;
        ig_predict_defaults(&o);
        o.ids = (ig_bytes){(uint8_t *)ids[k], strlen(ids[k])};
        ig_predict_result r;
        t0 = bench_now();
        if (ig_op_predict.run(&ctx, &o, &r, &e)) {
            fprintf(stderr, "bench_tokens: predict: %s\n", e.msg);
            return 1;
        }
        *(k ? &first19 : &first0) = (bench_now() - t0) * 1e3;
        getrusage(RUSAGE_SELF, &ru);
        faults[k] += ru.ru_minflt;
        *(k ? &d19 : &d0) = r.nsyms;
        ig_predict_result_free(&r);
    }
    printf("fresh process, %s: attach%s %.3f ms; first next tokens after id %s (%zu distinct) %.3f ms "
           "(%ld page faults), then after id 19 (%zu distinct) %.3f ms (%ld page faults)\n",
           table ? "with the table" : "without a table", table ? " and table" : "", open_ms, first_id, d0, first0,
           faults[0], d19, first19, faults[1]);
    ig_index_close(&idx);
    return 0;
}

int main(int argc, char **argv)
{
    size_t mb = 64, nq = 2000;
    int fresh = 0, warm = 0;
    const char *first_id = "0";
    const char *keep = NULL, *dump = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mb"))
            mb = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--queries"))
            nq = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir"))
            keep = argv[i + 1];
        else if (!strcmp(argv[i], "--dump"))
            dump = argv[i + 1];
        else if (!strcmp(argv[i], "--fresh"))
            fresh = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--id"))
            first_id = argv[i + 1];
        else if (!strcmp(argv[i], "--warm"))
            warm = atoi(argv[i + 1]);
    }
    if (warm)
        return warm_process(keep);
    if (fresh)
        return fresh_process(keep, fresh == 1, first_id);
    char *dir = keep ? strdup(keep) : bench_mkdtemp("tokens");
    mkdir(dir, 0755);
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenized.0", dir);
    size_t n = 0;
    char *kept = NULL; /* a --dir corpus from an earlier run, reused if whole */
    uint8_t *text = igi_read_file(path, SIZE_MAX, &kept, &n, NULL) ? NULL : (uint8_t *)kept;
    double t_make = 0;
    if (!text || n != mb * 1024 * 1024) {
        free(text);
        double t0 = bench_now();
        if (make_index(dir, mb, &text, &n))
            return 1;
        t_make = bench_now() - t0;
    }
    /* attach */
    double att[20];
    ig_index *idx = NULL;
    ig_error e;
    for (int k = 0; k < 21; k++) {
        double t0 = bench_now();
        if (ig_index_attach(&idx, dir, NULL, &e)) {
            fprintf(stderr, "bench_tokens: attach: %s\n", e.msg);
            return 1;
        }
        double t = bench_now() - t0;
        if (k)
            att[k - 1] = t * 1e3;
        if (k < 20)
            ig_index_close(&idx);
    }
    double attach_ms = bench_median(att, 20);
    /* counts */
    typedef struct { uint8_t b[8]; size_t len; } query;
    query *qs = malloc(nq * sizeof *qs);
    double *ns = malloc(nq * sizeof *ns);
    size_t ntok = n / 2;
    for (size_t i = 0; i < nq; i++) {
        size_t len = 1 + rnd() % 4, at;
        do
            at = rnd() % (ntok - len);
        while (memchr(text + at * 2, 0xFF, len * 2) && text[at * 2] == 0xFF);
        memcpy(qs[i].b, text + at * 2, len * 2);
        if (rnd() % 10 == 0) /* an id no document uses */
            qs[i].b[0] = 0xFE, qs[i].b[1] = 0xFF;
        qs[i].len = len * 2;
    }
    FILE *df = dump ? fopen(dump, "w") : NULL;
    for (size_t i = 0; df && i < nq; i++) {
        for (size_t k = 0; k < qs[i].len; k++)
            fprintf(df, "%02x", qs[i].b[k]);
        fputc('\n', df);
    }
    if (df)
        fclose(df);
    uint64_t sum = 0;
    for (size_t i = 0; i < nq; i++)
        sum += ig_count(idx, qs[i].b, qs[i].len);
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = bench_now_ns();
        sum += ig_count(idx, qs[i].b, qs[i].len);
        ns[i] = (double)(bench_now_ns() - a);
    }
    g_sink = sum;
    double count_ns = bench_median(ns, nq);
    /* next tokens: the most frequent id (0), and a 3-id context from the corpus */
    size_t d1 = 0, d3 = 0;
    double first1, first3;
    double frequent_ms = time_predict(idx, "0", &d1, &first1);
    size_t at = (rnd() % (ntok - 4)) | 1;
    char ctx3[64];
    snprintf(ctx3, sizeof ctx3, "%u,%u,%u", text[at * 2] | text[at * 2 + 1] << 8,
             text[at * 2 + 2] | text[at * 2 + 3] << 8, text[at * 2 + 4] | text[at * 2 + 5] << 8);
    double three_ms = time_predict(idx, ctx3, &d3, &first3);
    uint64_t cnt0 = ig_count(idx, (const uint8_t *)"\0\0", 2);
    /* the next-token table: made once, then used by an index attached afresh */
    char tab[4200];
    snprintf(tab, sizeof tab, "%s.next", dir);
    ig_next_table_info ti;
    double t0 = bench_now();
    if (ig_next_table_write(idx, tab, 0, NULL, &ti, &e)) {
        fprintf(stderr, "bench_tokens: next-token table: %s\n", e.msg);
        return 1;
    }
    double prepare_s = bench_now() - t0;
    ig_index_close(&idx);
    if (ig_index_attach(&idx, dir, NULL, &e)) {
        fprintf(stderr, "bench_tokens: attach: %s\n", e.msg);
        return 1;
    }
    t0 = bench_now();
    if (ig_next_table_use(idx, tab, NULL, &e)) {
        fprintf(stderr, "bench_tokens: next-token table: %s\n", e.msg);
        return 1;
    }
    double use_ms = (bench_now() - t0) * 1e3;
    size_t dt1 = 0, dt20 = 0;
    double tfirst1, tfirst20;
    double table_ms = time_predict(idx, "0", &dt1, &tfirst1);
    double table20_ms = time_predict(idx, "19", &dt20, &tfirst20);
    uint64_t cnt19 = ig_count(idx, (const uint8_t *)"\x13\0", 2);
    char machine[256];
    bench_machine(machine, sizeof machine);
    printf("attached u16 index: %zu MiB, %zu tokens (made in %.1f s)\n", mb, ntok, t_make);
    printf("attach %.3f ms; count median %.0f ns over %zu queries; next tokens after the most frequent id "
           "(%" PRIu64 " occurrences, %zu distinct next): first %.3f ms, then %.3f ms; after a 3-id context (%zu "
           "distinct): %.3f ms\n",
           attach_ms, count_ns, nq, cnt0, d1, first1, frequent_ms, d3, three_ms);
    printf("next-token table (contexts seen %" PRIu64 "+ times): %" PRIu64 " contexts, %" PRIu64 " entries, %" PRIu64
           " bytes, made in %.2f s, put to use in %.3f ms; then, attached afresh, after the most frequent id: first "
           "%.3f ms, then %.4f ms; after id 19 (%" PRIu64 " occurrences, %zu distinct next): first %.3f ms, then %.4f ms\n",
           ti.min_count, ti.contexts, ti.entries, ti.bytes, prepare_s, use_ms, tfirst1, table_ms, cnt19, dt20, tfirst20,
           table20_ms);
    bench_result_begin("bench_tokens", argc, argv);
    printf(",\"mib\":%zu,\"tokens\":%zu,\"queries\":%zu,\"attach_ms\":%.3f,\"count_median_ns\":%.0f,"
           "\"frequent_context_count\":%" PRIu64 ",\"frequent_next_distinct\":%zu,\"frequent_ntd_first_ms\":%.3f,"
           "\"frequent_ntd_ms\":%.3f,\"context3_ntd_ms\":%.3f,\"table_min_count\":%" PRIu64 ",\"table_contexts\":%"
           PRIu64 ",\"table_entries\":%" PRIu64 ",\"table_bytes\":%" PRIu64 ",\"table_make_s\":%.3f,"
           "\"table_use_ms\":%.3f,\"table_frequent_ntd_first_ms\":%.3f,\"table_frequent_ntd_ms\":%.4f,"
           "\"table_id19_ntd_first_ms\":%.3f}\n",
           mb, ntok, nq, attach_ms, count_ns, cnt0, d1, first1, frequent_ms, three_ms, ti.min_count, ti.contexts,
           ti.entries, ti.bytes, prepare_s, use_ms, tfirst1, table_ms, tfirst20);
    ig_index_close(&idx);
    free(qs);
    free(ns);
    free(text);
    if (!keep) /* with --dir the table stays for --fresh runs */
        unlink(tab);
    if (!keep)
        bench_rmtree(dir);
    free(dir);
    return 0;
}
