/*
 * Scale benchmark helper (issue "Scale and speed"); driven by tests/bench/kernel.sh and
 * tests/bench/scale.sh. Works on an index directory that already exists (built by the
 * shell), so builds are timed from the outside with /usr/bin/time and memwatch.sh.
 *
 *   bench_scale query  --index DIR [--queries N] [--cold M] [--predict N] [--spans N]
 *       1. ig_index_open + close, 20 times: median and max.
 *       2. VmRSS/RssAnon/RssFile of this process after ig_index_open, and after 1 000
 *          random counts (the first 1 000 queries of the count set, untimed).
 *       3. count, warm: N queries (default 20 000) drawn with a fixed seed from the
 *          index's own text (shard chosen in proportion to its size): 90% present
 *          substrings of 1..30 bytes at uniform offsets, cut before any 0xFF; 10% absent
 *          (8..30 bytes with one byte replaced by a rare one, kept only if count is 0).
 *          One untimed pass, then each ig_count timed alone (CLOCK_MONOTONIC; the
 *          ~40 ns clock pair included). Median, p99, and median by length.
 *       4. count, cold: M present queries (default 200). Before each: ig_index_close,
 *          posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) on every file of the index
 *          directory, ig_index_open; then the single ig_count is timed (open timed
 *          apart). mincore() on every file checks the eviction worked (resident pages
 *          after eviction are printed for the first query, and before it for the warm
 *          index), and getrusage counts the major page faults of each cold query. Then
 *          3 "cold batches": evict once, run 1 000 queries timed one by one.
 *       5. predict, warm: ig_predict (∞-gram, ig_model_default) on P (default 2 000)
 *          1-byte contexts (a byte of the text at a uniform offset, not 0xFF) and P
 *          100-byte contexts (100 bytes at a uniform offset, no 0xFF), shuffled
 *          together; one untimed pass, then each call timed (ig_dist_free outside).
 *       6. spans, warm: ig_spans (min_len 8) of S (default 1 000) texts of 120 bytes:
 *          half "mutated" (corpus bytes with 3 bytes replaced by random lowercase
 *          letters), half "words" (words at random offsets joined by spaces, cut at
 *          120 bytes); one untimed pass, then each call timed.
 *       Ends with one line "RESULT bench_scale_query {...}".
 *
 *   bench_scale dss --index DIR [--whole] [--shards] [--parallel] [--max-bytes N]
 *       Raw single-threaded libdivsufsort on the indexed text (the shards' text files,
 *       byte for byte what the build sorted): --whole sorts the concatenation of all
 *       shards as one array; --shards sorts each shard in turn (the same work as the
 *       build's sorts); --parallel forks one process per shard, all at once. The text
 *       is in malloc'd memory and the suffix array preallocated and touched; only the
 *       divsufsort() calls are timed.
 *
 *   bench_scale prefix --index DIR --root SRCDIR --out OUTDIR --sizes MB,MB,...
 *       For each size S (MB = 10^6 bytes), the longest run of the index's first
 *       documents (in index order, which is the build's walk order) whose indexed bytes
 *       (one 0xFF per document included) are <= S; writes OUTDIR/S/ as a tree of hard
 *       links to those source files (same relative paths) and OUTDIR/S.list.
 *
 *   bench_scale phases --index SRC --out NEWDIR [--jobs J] [--shard-size BYTES]
 *       ig_build_index of SRC (file or directory, default ingest options) into NEWDIR
 *       with a progress callback: wall time attributed to each phase (the time between
 *       two callbacks goes to the phase of the first), which gives the single-threaded
 *       read (ingest) throughput. Default jobs 1.
 *
 *   bench_scale disklat --index FILE [--count N]
 *       N (default 1 000) random 4 KiB reads of FILE with O_DIRECT (bypassing the page
 *       cache), timed one by one: the latency a cold page fault pays at the device.
 *
 *   bench_scale script --index DIR --count N [--len L]
 *       Prints N shell `count "..."` commands of L-byte (default 12) printable-ASCII
 *       substrings of the text at random offsets.
 *
 *   bench_scale locate --index DIR [--count N]
 *       ig_locate (no hint: the line index alone) of N (default 1 000) positions drawn
 *       uniformly from the last 1% of the last shard's text (on a single-document corpus:
 *       the end of a long document, the case a scan from the document start would pay
 *       most), after one untimed pass (warm), each call timed alone. Median, p99, mean.
 */

#include <divsufsort.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

#define MAXQ 30

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

static volatile uint64_t g_sink;
static double g_cold_faults;

/* ---- index text access ---- */

typedef struct corpus {
    uint32_t nshards;
    const uint8_t *t[256];
    size_t len[256];
    uint64_t total;
} corpus;

static int corpus_get(const ig_index *idx, corpus *c)
{
    ig_index_info info;
    ig_index_get_info(idx, &info);
    memset(c, 0, sizeof *c);
    if (info.shards > 256)
        return -1;
    c->nshards = info.shards;
    for (uint32_t s = 0; s < info.shards; s++) {
        size_t len = SIZE_MAX;
        c->t[s] = ig_text(idx, s, 0, &len);
        c->len[s] = len;
        c->total += len;
    }
    return 0;
}

/* A uniform random position of the whole corpus. */
static const uint8_t *pick(const corpus *c, size_t *avail)
{
    uint64_t g = rnd_below(c->total);
    for (uint32_t s = 0; s < c->nshards; s++) {
        if (g < c->len[s]) {
            *avail = c->len[s] - g;
            return c->t[s] + g;
        }
        g -= c->len[s];
    }
    *avail = 0;
    return NULL;
}

/* ---- memory ---- */

static void proc_status(long *rss, long *anon, long *file)
{
    *rss = *anon = *file = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            *rss = atol(line + 6);
        else if (!strncmp(line, "RssAnon:", 8))
            *anon = atol(line + 8);
        else if (!strncmp(line, "RssFile:", 8))
            *file = atol(line + 8);
    }
    fclose(f);
}

/* ---- page cache ---- */

/* Evicts (POSIX_FADV_DONTNEED) every regular file below dir (the shard files are in
 * shard-NNNN/ subdirectories), or with `resident` counts resident pages with mincore.
 * Returns the number of files seen. */
static int g_evict, g_nf;
static uint64_t g_res, g_pages;
/* resident pages by file name (text, sa, sample, ...: summed over shards), for the
 * attribution of a cold query's faults to the files they read */
#define NKIND 16
static char g_kind[NKIND][16];
static uint64_t g_kres[NKIND];

static void kind_add(const char *path, uint64_t res)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    int i = 0;
    while (i < NKIND && g_kind[i][0] && strcmp(g_kind[i], b))
        i++;
    if (i == NKIND)
        return;
    if (!g_kind[i][0])
        snprintf(g_kind[i], sizeof g_kind[i], "%s", b);
    g_kres[i] += res;
}

static int page_visit(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    g_nf++;
    if (g_evict)
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    else if (st->st_size > 0) {
        long psz = sysconf(_SC_PAGESIZE);
        size_t np = ((size_t)st->st_size + (size_t)psz - 1) / (size_t)psz;
        void *a = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_SHARED, fd, 0);
        unsigned char *v = malloc(np);
        if (a != MAP_FAILED && v && mincore(a, (size_t)st->st_size, v) == 0) {
            uint64_t r = 0;
            for (size_t i = 0; i < np; i++)
                r += v[i] & 1;
            g_res += r;
            g_pages += np;
            kind_add(p, r);
        }
        free(v);
        if (a != MAP_FAILED)
            munmap(a, (size_t)st->st_size);
    }
    close(fd);
    return 0;
}

static int dir_pages(const char *dir, int evict, uint64_t *resident, uint64_t *pages)
{
    g_evict = evict;
    g_nf = 0;
    g_res = g_pages = 0;
    memset(g_kres, 0, sizeof g_kres);
    nftw(dir, page_visit, 16, FTW_PHYS);
    if (resident) {
        *resident = g_res;
        *pages = g_pages;
    }
    return g_nf;
}

/* ---- queries ---- */

typedef struct query {
    uint8_t b[MAXQ];
    uint8_t len;
    uint8_t absent;
} query;

static int take(const corpus *c, size_t minlen, query *q)
{
    size_t len = minlen + rnd_below(MAXQ - minlen + 1), avail;
    const uint8_t *p = pick(c, &avail);
    if (!p)
        return -1;
    if (len > avail)
        len = avail;
    const uint8_t *ff = memchr(p, 0xFF, len);
    if (ff)
        len = (size_t)(ff - p);
    if (len < minlen)
        return -1;
    memcpy(q->b, p, len);
    q->len = (uint8_t)len;
    q->absent = 0;
    return 0;
}

static size_t make_queries(const ig_index *idx, const corpus *c, query *qs, size_t nq, int only_present)
{
    static const uint8_t rare[] = "QZXJ~^`|@#$%\x01\x02\x7f";
    size_t k = 0, tries = 0;
    while (k < nq && tries++ < nq * 100) {
        query *q = &qs[k];
        int want_absent = !only_present && (k % 10) == 9;
        if (take(c, want_absent ? 8 : 1, q))
            continue;
        if (want_absent) {
            size_t pos = 1 + rnd_below(q->len - 1);
            q->b[pos] = rare[rnd_below(sizeof rare - 1)];
            if (ig_count(idx, q->b, q->len) != 0)
                continue;
            q->absent = 1;
        }
        k++;
    }
    return k;
}

typedef struct stats {
    double med, p99, mean, max;
} stats;

static stats summarize(double *v, size_t n)
{
    stats s = {0};
    if (!n)
        return s;
    double tot = 0;
    for (size_t i = 0; i < n; i++)
        tot += v[i];
    s.mean = tot / (double)n;
    s.med = bench_quantile(v, n, 0.5);
    s.p99 = bench_quantile(v, n, 0.99);
    s.max = v[n - 1];
    return s;
}

static int open_idx(ig_index **idx, const char *dir)
{
    ig_error err = {0};
    if (ig_index_open(idx, dir, &err)) {
        fprintf(stderr, "bench_scale: open %s: %s\n", dir, err.msg);
        return -1;
    }
    return 0;
}

/* The command line, for the RESULT lines. */
static int g_argc;
static char **g_argv;

static int cmd_query(const char *dir, size_t nq, size_t ncold, size_t npred, size_t nspans)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    printf("bench_scale query: %s\nmachine: %s\nbuild type: %s\n", dir, machine, bench_build_type());

    /* 1. open */
    double ot[20];
    for (int i = 0; i < 20; i++) {
        ig_index *x = NULL;
        double t0 = bench_now();
        if (open_idx(&x, dir))
            return 1;
        ig_index_close(&x);
        ot[i] = (bench_now() - t0) * 1e3;
    }
    stats os = summarize(ot, 20);

    long rss0, anon0, file0, rss1, anon1, file1, rss2, anon2, file2;
    proc_status(&rss0, &anon0, &file0);
    ig_index *idx = NULL;
    if (open_idx(&idx, dir))
        return 1;
    proc_status(&rss1, &anon1, &file1);
    ig_index_info info;
    ig_index_get_info(idx, &info);
    corpus c;
    if (corpus_get(idx, &c)) {
        fprintf(stderr, "bench_scale: too many shards\n");
        return 1;
    }
    uint64_t apparent = 0, alloc = 0;
    size_t nfiles = 0;
    bench_dir_size(dir, &apparent, &alloc, &nfiles);
    printf("index: %" PRIu64 " bytes, %" PRIu64 " documents, %u shards, pointer width %u, "
           "%zu files, %" PRIu64 " bytes on disk (%.3f bytes/byte, du %.3f)\n",
           info.bytes, info.documents, info.shards, info.pointer_width, nfiles, apparent,
           (double)apparent / (double)info.bytes, (double)alloc / (double)info.bytes);
    printf("open+close (20 runs): median %.3f ms, max %.3f ms\n", os.med, os.max);

    /* 2-3. count, warm */
    query *qs = malloc(nq * sizeof *qs);
    double *ns = malloc((nq > 4000 ? nq : 4000) * sizeof *ns);
    double *sub = malloc((nq > 4000 ? nq : 4000) * sizeof *sub);
    if (!qs || !ns || !sub)
        return 1;
    g_rng = 0x9E3779B97F4A7C15ull ^ info.bytes;
    nq = make_queries(idx, &c, qs, nq, 0);
    uint64_t sum = 0;
    /* RSS after 1 000 counts on a fresh mapping: reopen so make_queries' absent checks
     * do not count */
    ig_index_close(&idx);
    if (open_idx(&idx, dir))
        return 1;
    corpus_get(idx, &c);
    for (size_t i = 0; i < 1000 && i < nq; i++)
        sum += ig_count(idx, qs[i].b, qs[i].len);
    proc_status(&rss2, &anon2, &file2);
    printf("VmRSS: before open %ld KiB; after open %ld KiB (anon %ld, file %ld); "
           "after 1000 counts %ld KiB (anon %ld, file %ld)\n",
           rss0, rss1, anon1, file1, rss2, anon2, file2);

    for (size_t i = 0; i < nq; i++)
        sum += ig_count(idx, qs[i].b, qs[i].len);
    for (size_t i = 0; i < nq; i++) {
        uint64_t a = bench_now_ns();
        sum += ig_count(idx, qs[i].b, qs[i].len);
        ns[i] = (double)(bench_now_ns() - a);
    }
    double bk[3];
    static const int hi[3] = {3, 10, MAXQ};
    for (int b = 0; b < 3; b++) {
        size_t m = 0;
        for (size_t i = 0; i < nq; i++)
            if (!qs[i].absent && qs[i].len <= hi[b] && (b == 0 || qs[i].len > hi[b - 1]))
                sub[m++] = ns[i];
        bk[b] = bench_median(sub, m);
    }
    stats cw = summarize(ns, nq);
    printf("count warm: %zu queries: median %.3f us, p99 %.3f us, mean %.3f us, max %.1f us; "
           "median by length 1-3 %.3f, 4-10 %.3f, 11-30 %.3f us\n",
           nq, cw.med / 1e3, cw.p99 / 1e3, cw.mean / 1e3, cw.max / 1e3, bk[0] / 1e3, bk[1] / 1e3,
           bk[2] / 1e3);

    /* 4. count, cold */
    uint64_t res_w = 0, pg = 0, res_c = 0, res_c_first = 0, pg_c = 0;
    dir_pages(dir, 0, &res_w, &pg);
    stats cc = {0}, co = {0}, cb[3] = {{0}};
    double cold_s = 0;
    if (ncold) {
        query *cq = malloc(ncold * sizeof *cq);
        double *ons = malloc(ncold * sizeof *ons);
        g_rng ^= 0x5151;
        ncold = make_queries(idx, &c, cq, ncold, 1);
        double t00 = bench_now();
        double *flt = malloc(ncold * sizeof *flt);
        double open_pages[NKIND] = {0}, query_pages[NKIND] = {0};
        for (size_t i = 0; i < ncold; i++) {
            ig_index_close(&idx);
            dir_pages(dir, 1, NULL, NULL);
            if (i == 0 || i == ncold - 1) {
                dir_pages(dir, 0, &res_c, &pg_c);
                if (i == 0)
                    res_c_first = res_c;
            }
            uint64_t a = bench_now_ns();
            if (open_idx(&idx, dir))
                return 1;
            uint64_t before[NKIND];
            dir_pages(dir, 0, NULL, NULL);
            for (int f = 0; f < NKIND; f++)
                open_pages[f] += (double)g_kres[f];
            memcpy(before, g_kres, sizeof before);
            struct rusage ru0, ru1;
            getrusage(RUSAGE_SELF, &ru0);
            uint64_t b = bench_now_ns();
            sum += ig_count(idx, cq[i].b, cq[i].len);
            uint64_t e = bench_now_ns();
            getrusage(RUSAGE_SELF, &ru1);
            flt[i] = (double)(ru1.ru_majflt - ru0.ru_majflt);
            dir_pages(dir, 0, NULL, NULL);
            for (int f = 0; f < NKIND; f++)
                query_pages[f] += (double)(g_kres[f] - before[f]);
            ons[i] = (double)(b - a);
            ns[i] = (double)(e - b);
        }
        stats fs = summarize(flt, ncold);
        printf("count cold: major page faults per query: median %.0f, mean %.1f, p99 %.0f\n", fs.med, fs.mean,
               fs.p99);
        g_cold_faults = fs.mean;
        /* pages that became resident (mincore) during open and during the count itself, by
         * file: with MADV_RANDOM each major fault reads one page, so the second set is where
         * the count's faults went */
        printf("cold pages read, mean per query, by file (open | count):");
        for (int f = 0; f < NKIND && g_kind[f][0]; f++)
            printf(" %s %.1f | %.1f;", g_kind[f], open_pages[f] / (double)ncold, query_pages[f] / (double)ncold);
        printf("\n");
        free(flt);
        cold_s = bench_now() - t00;
        cc = summarize(ns, ncold);
        co = summarize(ons, ncold);
        free(cq);
        free(ons);
        printf("eviction check (mincore): warm index %" PRIu64 "/%" PRIu64 " pages resident; "
               "after POSIX_FADV_DONTNEED %" PRIu64 " (first) and %" PRIu64 " (last) of %" PRIu64 "\n",
               res_w, pg, res_c_first, res_c, pg_c);
        printf("count cold (evict + reopen before each): %zu queries in %.1f s: median %.1f us, "
               "p99 %.1f us, mean %.1f us, max %.1f us; open cold median %.1f us, p99 %.1f us\n",
               ncold, cold_s, cc.med / 1e3, cc.p99 / 1e3, cc.mean / 1e3, cc.max / 1e3,
               co.med / 1e3, co.p99 / 1e3);
        /* cold batches */
        size_t nb = nq < 1000 ? nq : 1000;
        for (int r = 0; r < 3; r++) {
            ig_index_close(&idx);
            dir_pages(dir, 1, NULL, NULL);
            if (open_idx(&idx, dir))
                return 1;
            size_t off = (size_t)r * nb % (nq - nb + 1);
            double t0 = bench_now();
            for (size_t i = 0; i < nb; i++) {
                uint64_t a = bench_now_ns();
                sum += ig_count(idx, qs[off + i].b, qs[off + i].len);
                ns[i] = (double)(bench_now_ns() - a);
            }
            double el = bench_now() - t0;
            /* first 100 vs last 100 */
            double f = 0, l = 0;
            for (size_t i = 0; i < 100; i++) {
                f += ns[i];
                l += ns[nb - 100 + i];
            }
            cb[r] = summarize(ns, nb);
            printf("cold batch %d (evict once, %zu queries): %.2f s total, median %.1f us, p99 %.1f us, "
                   "mean %.1f us; mean of first 100 %.1f us, of last 100 %.1f us\n",
                   r, nb, el, cb[r].med / 1e3, cb[r].p99 / 1e3, cb[r].mean / 1e3, f / 100e3, l / 100e3);
        }
        /* re-warm */
        for (size_t i = 0; i < nq; i++)
            sum += ig_count(idx, qs[i].b, qs[i].len);
    }

    /* 5. predict, warm */
    stats p1 = {0}, p100 = {0};
    uint64_t ell_sum = 0;
    if (npred) {
        size_t np = 2 * npred;
        uint8_t(*ctx)[100] = malloc(np * 100);
        uint8_t *clen = malloc(np);
        size_t k = 0;
        g_rng ^= 0xA11CE;
        while (k < np) {
            size_t avail;
            const uint8_t *p = pick(&c, &avail);
            size_t want = (k % 2) ? 100 : 1;
            if (avail < want || memchr(p, 0xFF, want))
                continue;
            memcpy(ctx[k], p, want);
            clen[k] = (uint8_t)want;
            k++;
        }
        for (size_t i = np - 1; i > 0; i--) { /* shuffle */
            size_t j = rnd_below(i + 1);
            uint8_t tmp[100];
            memcpy(tmp, ctx[i], 100);
            memcpy(ctx[i], ctx[j], 100);
            memcpy(ctx[j], tmp, 100);
            uint8_t tl = clen[i];
            clen[i] = clen[j];
            clen[j] = tl;
        }
        ig_model m;
        ig_model_default(&m);
        double *t = malloc(np * sizeof *t);
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < np; i++) {
                ig_dist d;
                ig_error err = {0};
                uint64_t a = bench_now_ns();
                int rc = ig_predict(idx, &m, ctx[i], clen[i], &d, &err);
                uint64_t b = bench_now_ns();
                if (rc) {
                    fprintf(stderr, "bench_scale: predict: %s\n", err.msg);
                    return 1;
                }
                if (pass && clen[i] == 100)
                    ell_sum += d.longest;
                ig_dist_free(&d);
                t[i] = (double)(b - a);
            }
        }
        size_t m1 = 0, m100 = 0;
        for (size_t i = 0; i < np; i++)
            if (clen[i] == 1)
                ns[m1++] = t[i];
        for (size_t i = 0; i < np; i++)
            if (clen[i] == 100)
                sub[m100++] = t[i];
        p1 = summarize(ns, m1);
        p100 = summarize(sub, m100);
        printf("predict (inf-gram) warm: 1-byte contexts (%zu): median %.2f us, p99 %.2f us; "
               "100-byte contexts (%zu, mean longest match %.1f): median %.2f us, p99 %.2f us\n",
               m1, p1.med / 1e3, p1.p99 / 1e3, m100, (double)ell_sum / (double)m100, p100.med / 1e3,
               p100.p99 / 1e3);
        free(ctx);
        free(clen);
        free(t);
    }

    /* 6. spans, warm */
    stats sp = {0};
    double mean_spans = 0;
    if (nspans) {
        uint8_t(*tx)[120] = malloc(nspans * 120);
        size_t *tl = malloc(nspans * sizeof *tl);
        size_t k = 0;
        g_rng ^= 0x5BA5;
        while (k < nspans) {
            size_t avail;
            if (k % 2 == 0) {
                const uint8_t *p = pick(&c, &avail);
                if (avail < 120 || memchr(p, 0xFF, 120))
                    continue;
                memcpy(tx[k], p, 120);
                for (int r = 0; r < 3; r++)
                    tx[k][rnd_below(120)] = (uint8_t)('a' + rnd_below(26));
                tl[k++] = 120;
            } else {
                size_t n = 0;
                while (n < 120) {
                    const uint8_t *p = pick(&c, &avail);
                    /* move to the start of the next word */
                    size_t i = 0;
                    while (i < avail && i < 200 && p[i] != ' ' && p[i] != '\n' && p[i] != 0xFF)
                        i++;
                    while (i < avail && i < 200 && (p[i] == ' ' || p[i] == '\n' || p[i] == '\t'))
                        i++;
                    size_t j = i;
                    while (j < avail && j < i + 40 && p[j] != ' ' && p[j] != '\n' && p[j] != '\t' && p[j] != 0xFF)
                        j++;
                    if (j == i)
                        continue;
                    if (n)
                        tx[k][n++] = ' ';
                    for (size_t q = i; q < j && n < 120; q++)
                        tx[k][n++] = p[q];
                }
                /* cut at a character boundary */
                while (n > 0 && (tx[k][n - 1] & 0xC0) == 0x80)
                    n--;
                if (n > 0 && tx[k][n - 1] >= 0xC0)
                    n--;
                tl[k++] = n;
            }
        }
        ig_span_options so = {.min_len = 8};
        double *t = malloc(nspans * sizeof *t);
        uint64_t tot_spans = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < nspans; i++) {
                ig_span *s = NULL;
                size_t nsp = 0;
                ig_error err = {0};
                uint64_t a = bench_now_ns();
                int rc = ig_spans(idx, tx[i], tl[i], &so, &s, &nsp, NULL, NULL, &err);
                uint64_t b = bench_now_ns();
                if (rc) {
                    fprintf(stderr, "bench_scale: spans: %s\n", err.msg);
                    return 1;
                }
                free(s);
                if (pass)
                    tot_spans += nsp;
                t[i] = (double)(b - a);
            }
        }
        mean_spans = (double)tot_spans / (double)nspans;
        sp = summarize(t, nspans);
        printf("spans (120-byte texts, min_len 8) warm: %zu texts: median %.1f us, p99 %.1f us, "
               "mean %.1f spans per text\n",
               nspans, sp.med / 1e3, sp.p99 / 1e3, mean_spans);
        free(tx);
        free(tl);
        free(t);
    }
    g_sink = sum;
    ig_index_close(&idx);
    bench_result_begin("bench_scale_query", g_argc, g_argv);
    printf(",\"bytes\":%" PRIu64 ",\"documents\":%" PRIu64 ",\"shards\":%u,"
           "\"index_bytes\":%" PRIu64 ",\"open_ms\":%.4f,\"rss_open_kib\":%ld,\"rss_1000_kib\":%ld,"
           "\"count_med_us\":%.4f,\"count_p99_us\":%.4f,\"cold_med_us\":%.2f,\"cold_p99_us\":%.2f,"
           "\"cold_open_med_us\":%.2f,\"cold_resident_after_evict\":%" PRIu64 ","
           "\"coldbatch_med_us\":%.2f,\"coldbatch_mean_us\":%.2f,"
           "\"predict1_med_us\":%.3f,\"predict1_p99_us\":%.3f,\"predict100_med_us\":%.3f,"
           "\"predict100_p99_us\":%.3f,\"spans_med_us\":%.2f,\"spans_p99_us\":%.2f,\"cold_majflt_mean\":%.1f}\n",
           info.bytes, info.documents, info.shards, apparent, os.med, rss1, rss2, cw.med / 1e3,
           cw.p99 / 1e3, cc.med / 1e3, cc.p99 / 1e3, co.med / 1e3, res_c_first, cb[0].med / 1e3,
           cb[0].mean / 1e3, p1.med / 1e3, p1.p99 / 1e3, p100.med / 1e3, p100.p99 / 1e3,
           sp.med / 1e3, sp.p99 / 1e3, g_cold_faults);
    free(qs);
    free(ns);
    free(sub);
    return 0;
}

/* ---- raw divsufsort ---- */

static double g_cpu; /* CPU seconds of the last sort_one */

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double sort_one(const uint8_t *t, size_t n)
{
    saidx_t *sa = malloc((n ? n : 1) * sizeof *sa);
    if (!sa)
        return -1;
    memset(sa, 0, (n ? n : 1) * sizeof *sa);
    double c0 = cpu_now(), t0 = bench_now();
    int rc = divsufsort(t, sa, (saidx_t)n);
    double el = bench_now() - t0;
    g_cpu = cpu_now() - c0;
    free(sa);
    return rc ? -1 : el;
}

static int cmd_dss(const char *dir, int whole, int shards, int parallel, uint64_t max_bytes)
{
    ig_index *idx = NULL;
    if (open_idx(&idx, dir))
        return 1;
    corpus c;
    corpus_get(idx, &c);
    printf("bench_scale dss: %s: %" PRIu64 " bytes in %u shards\n", dir, c.total, c.nshards);
    if (c.total >= (1ull << 31) - 1) {
        printf("dss: %" PRIu64 " bytes is beyond the 32-bit divsufsort API; skipped\n", c.total);
        return 0;
    }
    double tw = -1, ts = 0, tp = -1, tcpu = 0;
    if (whole && c.total <= max_bytes) {
        uint8_t *buf = malloc(c.total);
        size_t o = 0;
        for (uint32_t s = 0; s < c.nshards; s++) {
            memcpy(buf + o, c.t[s], c.len[s]);
            o += c.len[s];
        }
        tw = sort_one(buf, c.total);
        free(buf);
        printf("dss whole (%" PRIu64 " bytes, one array): %.2f s, %.2f MB/s; CPU %.2f s (%.2f MB per CPU-s)\n",
               c.total, tw, (double)c.total / 1e6 / tw, g_cpu, (double)c.total / 1e6 / g_cpu);
    } else if (whole) {
        printf("dss whole: skipped (%" PRIu64 " bytes > --max-bytes %" PRIu64 ")\n", c.total, max_bytes);
    }
    if (shards) {
        for (uint32_t s = 0; s < c.nshards; s++) {
            uint8_t *buf = malloc(c.len[s]);
            memcpy(buf, c.t[s], c.len[s]);
            double t = sort_one(buf, c.len[s]);
            free(buf);
            printf("dss shard %u (%zu bytes): %.2f s, %.2f MB/s; CPU %.2f s\n", s, c.len[s], t,
                   (double)c.len[s] / 1e6 / t, g_cpu);
            ts += t;
            tcpu += g_cpu;
        }
        printf("dss shards in turn: %.2f s, %.2f MB/s; CPU %.2f s (%.2f MB per CPU-s)\n", ts,
               (double)c.total / 1e6 / ts, tcpu, (double)c.total / 1e6 / tcpu);
    }
    if (parallel && c.nshards > 1) {
        uint8_t *buf[256];
        for (uint32_t s = 0; s < c.nshards; s++) {
            buf[s] = malloc(c.len[s]);
            memcpy(buf[s], c.t[s], c.len[s]);
        }
        double t0 = bench_now();
        pid_t pid[256];
        for (uint32_t s = 0; s < c.nshards; s++) {
            pid[s] = fork();
            if (pid[s] == 0) {
                double t = sort_one(buf[s], c.len[s]);
                printf("dss parallel: shard %u sorted in %.2f s (CPU %.2f s)\n", s, t, g_cpu);
                fflush(stdout);
                _exit(t < 0);
            }
        }
        int bad = 0;
        for (uint32_t s = 0; s < c.nshards; s++) {
            int st;
            waitpid(pid[s], &st, 0);
            bad |= !WIFEXITED(st) || WEXITSTATUS(st);
        }
        tp = bench_now() - t0;
        for (uint32_t s = 0; s < c.nshards; s++)
            free(buf[s]);
        printf("dss %u shards in parallel (%u processes): %.2f s wall, %.2f MB/s%s\n", c.nshards, c.nshards,
               tp, (double)c.total / 1e6 / tp, bad ? " (a child failed)" : "");
    }
    bench_result_begin("bench_scale_dss", g_argc, g_argv);
    printf(",\"bytes\":%" PRIu64 ",\"shards\":%u,\"whole_s\":%.3f,\"shards_s\":%.3f,"
           "\"parallel_s\":%.3f}\n",
           c.total, c.nshards, tw, shards ? ts : -1.0, tp);
    ig_index_close(&idx);
    return 0;
}

/* ---- prefix corpora ---- */

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0755) && errno != EEXIST) {
                *p = '/';
                return -1;
            }
            *p = '/';
        }
    }
    return 0;
}

static int cmd_prefix(const char *dir, const char *root, const char *out, const char *sizes)
{
    ig_index *idx = NULL;
    if (open_idx(&idx, dir))
        return 1;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    mkdir(out, 0755);
    char *s = strdup(sizes), *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t target = (uint64_t)(strtod(tok, NULL) * 1e6);
        char d[4200], lp[4200];
        snprintf(d, sizeof d, "%s/%s", out, tok);
        snprintf(lp, sizeof lp, "%s/%s.list", out, tok);
        mkdir(d, 0755);
        FILE *lf = fopen(lp, "w");
        uint64_t cum = 0, ndocs = 0;
        for (uint64_t id = 0; id < info.documents; id++) {
            ig_doc doc;
            ig_error err = {0};
            if (ig_doc_get(idx, id, &doc, &err)) {
                fprintf(stderr, "bench_scale: doc %" PRIu64 ": %s\n", id, err.msg);
                return 1;
            }
            if (cum + doc.length + 1 > target)
                break;
            if (strncmp(doc.name, root, rl) || doc.name[rl] != '/') {
                fprintf(stderr, "bench_scale: %s is not under %s\n", doc.name, root);
                return 1;
            }
            char dst[8400];
            snprintf(dst, sizeof dst, "%s%s", d, doc.name + rl);
            if (mkdirs(dst) || (link(doc.name, dst) && errno != EEXIST)) {
                fprintf(stderr, "bench_scale: link %s -> %s: %s\n", doc.name, dst, strerror(errno));
                return 1;
            }
            fprintf(lf, "%s\n", doc.name);
            cum += doc.length + 1;
            ndocs++;
        }
        fclose(lf);
        printf("prefix %s MB: %" PRIu64 " documents, %" PRIu64 " indexed bytes -> %s\n", tok, ndocs, cum, d);
    }
    free(s);
    ig_index_close(&idx);
    return 0;
}

/* ---- shell script of counts ---- */

static int cmd_script(const char *dir, size_t n, size_t len)
{
    ig_index *idx = NULL;
    if (open_idx(&idx, dir))
        return 1;
    corpus c;
    corpus_get(idx, &c);
    size_t k = 0;
    while (k < n) {
        size_t avail;
        const uint8_t *p = pick(&c, &avail);
        if (avail < len)
            continue;
        int ok = 1;
        for (size_t i = 0; i < len && ok; i++)
            ok = p[i] >= 0x20 && p[i] < 0x7F && p[i] != '"' && p[i] != '\\';
        if (!ok || p[0] == ' ' || p[len - 1] == ' ')
            continue;
        printf("count \"%.*s\"\n", (int)len, (const char *)p);
        k++;
    }
    ig_index_close(&idx);
    return 0;
}

/* ---- phases of a build (library API, progress callback) ---- */

static double g_ph_time[IG_PHASE_DONE + 1], g_ph_first[IG_PHASE_DONE + 1], g_last_t;
static int g_last_ph = -1;

static int phase_cb(void *user, const ig_progress *p)
{
    (void)user;
    double now = bench_now();
    if (g_last_ph >= 0)
        g_ph_time[g_last_ph] += now - g_last_t;
    if (p->phase <= IG_PHASE_DONE && g_ph_first[p->phase] == 0)
        g_ph_first[p->phase] = now;
    g_last_ph = (int)p->phase;
    g_last_t = now;
    return 0;
}

static int cmd_phases(const char *src, const char *out, int jobs, uint64_t shard_size)
{
    ig_source so = {.kind = IG_SOURCE_FILE, .path = src};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = jobs;
    if (shard_size)
        bo.shard_size = shard_size;
    ig_build_result br;
    ig_error err = {0};
    double c0 = cpu_now(), t0 = bench_now();
    g_last_t = t0;
    if (ig_build_index(out, &so, 1, NULL, &bo, phase_cb, NULL, NULL, &br, &err)) {
        fprintf(stderr, "bench_scale: build: %s\n", err.msg);
        return 1;
    }
    double wall = bench_now() - t0, cpu = cpu_now() - c0;
    if (g_last_ph >= 0)
        g_ph_time[g_last_ph] += bench_now() - g_last_t;
    static const char *names[] = {"scan", "read", "sort", "write", "sync", "commit", "done"};
    printf("build phases of %s: %" PRIu64 " bytes, %u shards, jobs %d, wall %.2f s (%.2f MB/s), "
           "CPU of this process %.2f s (sorts run in children)\n",
           src, br.bytes, br.shards, br.jobs, wall, (double)br.bytes / 1e6 / wall, cpu);
    for (int i = 0; i <= IG_PHASE_SYNC; i++)
        printf("  %-6s %8.2f s  (%.1f%%)  first at %.2f s\n", names[i], g_ph_time[i], 100 * g_ph_time[i] / wall,
               g_ph_first[i] ? g_ph_first[i] - t0 : -1);
    printf("  read throughput (indexed bytes / time in the read phase): %.1f MB/s\n",
           (double)br.bytes / 1e6 / g_ph_time[IG_PHASE_READ]);
    ig_build_result_free(&br);
    return 0;
}

/* ---- raw random-read latency of the disk (O_DIRECT, 4 KiB) ---- */

static int cmd_disklat(const char *file, size_t n)
{
    int fd = open(file, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "bench_scale: %s: %s\n", file, strerror(errno));
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    void *buf;
    if (posix_memalign(&buf, 4096, 4096))
        return 1;
    double *t = malloc(n * sizeof *t);
    uint64_t pages = (uint64_t)st.st_size / 4096;
    for (size_t i = 0; i < n; i++) {
        off_t off = (off_t)(rnd_below(pages) * 4096);
        uint64_t a = bench_now_ns();
        if (pread(fd, buf, 4096, off) != 4096) {
            fprintf(stderr, "bench_scale: pread: %s\n", strerror(errno));
            return 1;
        }
        t[i] = (double)(bench_now_ns() - a);
    }
    stats s = summarize(t, n);
    printf("disk random 4 KiB O_DIRECT reads of %s (%.1f GB): %zu reads: median %.1f us, p99 %.1f us, "
           "mean %.1f us\n", file, (double)st.st_size / 1e9, n, s.med / 1e3, s.p99 / 1e3, s.mean / 1e3);
    close(fd);
    free(t);
    free(buf);
    return 0;
}

/* ---- ig_locate near the end of the text ---- */

static int cmd_locate(const char *dir, size_t n)
{
    ig_index *idx = NULL;
    if (open_idx(&idx, dir))
        return 1;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint32_t sh = info.shards - 1;
    size_t len = SIZE_MAX;
    ig_text(idx, sh, 0, &len);
    ig_pos *ps = malloc(n * sizeof *ps);
    double *t = malloc(n * sizeof *t);
    if (!ps || !t || len < 100)
        return 1;
    for (size_t i = 0; i < n; i++)
        ps[i] = (ig_pos){sh, len - 1 - rnd_below(len / 100)};
    ig_location loc;
    ig_error err;
    uint64_t sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            uint64_t a = bench_now_ns();
            if (ig_locate(idx, ps[i], NULL, &loc, &err)) {
                fprintf(stderr, "bench_scale: locate: %s\n", err.msg);
                return 1;
            }
            t[i] = (double)(bench_now_ns() - a);
            sum += loc.line + loc.column;
        }
    g_sink += sum;
    stats s = summarize(t, n);
    printf("ig_locate, no hint, %zu positions in the last 1%% of shard %u (%zu bytes; %" PRIu64 " documents in the "
           "index), warm: median %.3f us, p99 %.3f us, mean %.3f us; last: document %" PRIu64 ", line %" PRIu64 "\n",
           n, sh, len, info.documents, s.med / 1e3, s.p99 / 1e3, s.mean / 1e3, loc.doc, loc.line);
    free(ps);
    free(t);
    ig_index_close(&idx);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_scale query --index DIR [--queries N] [--cold M] [--predict N] [--spans N]\n"
                    "       bench_scale dss --index DIR [--whole] [--shards] [--parallel] [--max-bytes N]\n"
                    "       bench_scale prefix --index DIR --root SRCDIR --out OUTDIR --sizes MB,MB,...\n"
                    "       bench_scale script --index DIR --count N [--len L]\n"
                    "       bench_scale disklat --index FILE [--count N]\n"
                    "       bench_scale locate --index DIR [--count N]\n"
                    "       bench_scale phases --index SRC --out NEWDIR [--jobs J] [--shard-size BYTES]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    g_argc = argc;
    g_argv = argv;
    const char *cmd = argv[1], *dir = NULL, *root = NULL, *out = NULL, *sizes = NULL;
    size_t nq = 20000, ncold = 200, npred = 2000, nspans = 1000, count = 1000, len = 12;
    int whole = 0, shards = 0, parallel = 0, jobs = 1;
    uint64_t shard_size = 0;
    uint64_t max_bytes = UINT64_MAX;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && ++i)
        if (ARG("--index"))
            dir = v;
        else if (ARG("--queries"))
            nq = strtoull(v, NULL, 10);
        else if (ARG("--cold"))
            ncold = strtoull(v, NULL, 10);
        else if (ARG("--predict"))
            npred = strtoull(v, NULL, 10);
        else if (ARG("--spans"))
            nspans = strtoull(v, NULL, 10);
        else if (ARG("--root"))
            root = v;
        else if (ARG("--out"))
            out = v;
        else if (ARG("--sizes"))
            sizes = v;
        else if (ARG("--count"))
            count = strtoull(v, NULL, 10);
        else if (ARG("--len"))
            len = strtoull(v, NULL, 10);
        else if (ARG("--jobs"))
            jobs = atoi(v);
        else if (ARG("--shard-size"))
            shard_size = strtoull(v, NULL, 10);
        else if (ARG("--max-bytes"))
            max_bytes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--whole"))
            whole = 1;
        else if (!strcmp(a, "--shards"))
            shards = 1;
        else if (!strcmp(a, "--parallel"))
            parallel = 1;
        else
            usage();
#undef ARG
    }
    if (!dir)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(cmd, "query"))
        return cmd_query(dir, nq < 2000 ? 2000 : nq, ncold, npred, nspans);
    if (!strcmp(cmd, "dss"))
        return cmd_dss(dir, whole, shards, parallel, max_bytes);
    if (!strcmp(cmd, "prefix") && root && out && sizes)
        return cmd_prefix(dir, root, out, sizes);
    if (!strcmp(cmd, "phases") && out)
        return cmd_phases(dir, out, jobs, shard_size);
    if (!strcmp(cmd, "disklat"))
        return cmd_disklat(dir, count);
    if (!strcmp(cmd, "locate"))
        return cmd_locate(dir, count);
    if (!strcmp(cmd, "script") && len > 0 && len < 200)
        return cmd_script(dir, count, len);
    usage();
    return 2;
}
