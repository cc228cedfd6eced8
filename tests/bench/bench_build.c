/*
 * Build throughput and index size.
 *
 * For each corpus (see bench_common.h) and each repetition, in the same process:
 *   - raw libdivsufsort: divsufsort() on the corpus bytes already in memory, suffix
 *     array preallocated; only the divsufsort() call is timed (the baseline);
 *   - the whole build: ig_build_index() on the corpus file (IG_SOURCE_FILE) with
 *     default ingest options (NFC on) and default build options, into a fresh
 *     directory; timed wall clock around the call, so it includes reading,
 *     validation, normalisation, sorting, writing, checksums and every fsync.
 * Both throughputs use the corpus size in bytes (MB = 10^6 bytes); the ratio is
 * build MB/s / raw divsufsort MB/s of the medians. Target: ratio >= 0.9 for corpora of
 * 1-20 MB.
 *
 * Index size is every regular file of the built directory (apparent sizes; du block
 * usage is shown too) divided by the indexed bytes (corpus + one 0xFF per document).
 * Target: <= 5.2 bytes per indexed byte.
 *
 * Where the build time goes: the progress callback timestamps each phase change
 * (read+normalise, sort, write, sync), and this program interposes fsync() (the
 * library is linked statically into this executable, so its fsync calls land here
 * and are forwarded to the system call) to time every fsync. NFC happens inside the
 * read phase, so that phase bounds its cost.
 *
 * With --catalog the whole build is ig_catalog_build of a dataset registered in a catalog
 * under the temp dir, as the shell's `build` runs it: besides ig_build_index, the sources'
 * fingerprints, the index directory's lock and fsync, the catalog's commit (SQLite, WAL,
 * synchronous=FULL) and the removal of the index it replaces.
 *
 * Usage: bench_build [--reps N] [--max-bytes N[,N...]] [--only tinyshakespeare|usr-include]
 *                    [--dataset PATH] [--tree DIR] [--catalog]
 * Several --max-bytes sizes build one usr-include corpus of each (named usr-include-N MB
 * after the first), so that one run compares builds of several sizes. --tree DIR takes the
 * headers of DIR instead of /usr/include (a Linux source tree, say, where /usr/include is too
 * small for 16 MB); the corpus is named after DIR's last component, and --only usr-include
 * still selects it.
 * Temp files go under $IG_BENCH_TMP, else $TMPDIR, else /tmp (use a real disk:
 * fsync on tmpfs is free and would flatter the build).
 */
#include <divsufsort.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

/* ---- fsync interposition (timing only; behaviour unchanged) ---- */

static double g_fsync_seconds;
static unsigned g_fsync_calls;

int fsync(int fd)
{
    double t0 = bench_now();
    int rc = (int)syscall(SYS_fsync, fd);
    g_fsync_seconds += bench_now() - t0;
    g_fsync_calls++;
    return rc;
}

/* ---- phase timing through the progress callback ---- */

typedef struct phase_clock {
    double start;                  ///< time ig_build_index was called
    double first[IG_PHASE_DONE + 1]; ///< first report of each phase (0 = never)
} phase_clock;

static int on_progress(void *user, const ig_progress *p)
{
    phase_clock *pc = user;
    if (p->phase <= IG_PHASE_DONE && pc->first[p->phase] == 0)
        pc->first[p->phase] = bench_now();
    return 0;
}

typedef struct build_sample {
    double total, read, sort, write, sync, fsync;
    unsigned fsync_calls;
} build_sample;

/* Phase spans: from the first report of a phase to the first report of the next one
 * that happened. WRITE includes the per-file fsyncs; SYNC the directory fsyncs and the
 * manifest. */
static void phases(const phase_clock *pc, double end, build_sample *s)
{
    double t_read = pc->first[IG_PHASE_READ] ? pc->first[IG_PHASE_READ] : pc->start;
    double t_sort = pc->first[IG_PHASE_SORT] ? pc->first[IG_PHASE_SORT] : t_read;
    double t_write = pc->first[IG_PHASE_WRITE] ? pc->first[IG_PHASE_WRITE] : t_sort;
    double t_sync = pc->first[IG_PHASE_SYNC] ? pc->first[IG_PHASE_SYNC] : t_write;
    s->read = t_sort - t_read;
    s->sort = t_write - t_sort;
    s->write = t_sync - t_write;
    s->sync = end - t_sync;
}

/* One way of writing `len` bytes of `buf` to a new file and making them durable: direct = 1
 * with O_DIRECT (no copy into the page cache; EINVAL where the file system lacks it), else a
 * plain write handing each MiB to the disk as it goes (sync_file_range), as the build does;
 * then fsync. Seconds, or -1 (errno set). */
static double durable_write(const char *path, const void *buf, size_t len, int direct)
{
    double t0 = bench_now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        size_t want = direct ? len - off : (len - off < (1u << 20) ? len - off : (1u << 20));
        ssize_t k = pwrite(fd, (const char *)buf + off, want, (off_t)off);
        if (k <= 0 || (!direct && sync_file_range(fd, (off_t)off, k, SYNC_FILE_RANGE_WRITE) != 0)) {
            close(fd);
            return -1;
        }
        off += (size_t)k;
    }
    int rc = fsync(fd);
    double t = bench_now() - t0;
    if (close(fd) != 0 || rc != 0 || unlink(path) != 0)
        return -1;
    return t;
}

/* The least a build that keeps its suffix array on disk must spend after the sort: the
 * array's bytes (`bytes`, 4 per text byte for the 32-bit sorter) written to a new file and
 * made durable (the data's transfer, the disk's cache flush, the journal commit), the cheaper
 * of two ways (durable_write). No such build can finish sooner than divsufsort + this, so
 * dss / (dss + floor) bounds its ratio whatever the rest of the build does. The buffer is
 * the caller's, aligned to 4 KiB, of `bytes` rounded up to 4 KiB (O_DIRECT's unit), which
 * is the length written. Seconds, or -1 (errno set). */
static double durable_floor(const char *tmp, const void *buf, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/floor.sa", tmp);
    size_t len = (bytes + 4095) & ~(size_t)4095;
    double plain = durable_write(path, buf, len, 0);
    double direct = durable_write(path, buf, len, 1);
    if (direct < 0 && errno == EINVAL)
        direct = plain;
    return plain < 0 || direct < 0 ? -1 : plain < direct ? plain : direct;
}

/* With --catalog: the catalog the corpus is registered in (as dataset "bench"). */
static ig_catalog *g_cat;

static int build_once(const bench_corpus *c, const char *tmp, int rep,
                      build_sample *s, uint64_t *indexed, uint64_t *docs, uint64_t *apparent,
                      uint64_t *allocated, size_t *nfiles)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index-%s-%d", tmp, c->name, rep);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c->path};
    ig_ingest_options in;
    ig_build_options bo;
    ig_ingest_options_default(&in);
    ig_build_options_default(&bo);
    /* as a session builds: the sort's memory kept from one build to the next (the catalog
     * keeps its own) */
    static ig_build_cache *cache;
    if (!g_cat && !cache)
        cache = ig_build_cache_new(0);
    bo.cache = g_cat ? NULL : cache;
    ig_build_result res;
    ig_error err = {0};
    phase_clock pc = {0};
    g_fsync_seconds = 0;
    g_fsync_calls = 0;
    pc.start = bench_now();
    int rc = g_cat ? ig_catalog_build(g_cat, "bench", &bo, on_progress, &pc, NULL, &res, &err)
                   : ig_build_index(dir, &src, 1, &in, &bo, on_progress, &pc, NULL, &res, &err);
    double end = bench_now();
    if (rc) {
        fprintf(stderr, "bench_build: build of %s failed: %s\n", c->name, err.msg);
        return -1;
    }
    ig_dataset d = {0};
    if (g_cat) { /* sized where the catalog put it; the next build replaces it */
        if (ig_catalog_get(g_cat, "bench", &d, &err) || !d.index_path) {
            fprintf(stderr, "bench_build: no index recorded for %s: %s\n", c->name, err.msg);
            ig_build_result_free(&res);
            return -1;
        }
        snprintf(dir, sizeof dir, "%s", d.index_path);
        ig_dataset_free(&d);
    }
    memset(s, 0, sizeof *s);
    s->total = end - pc.start;
    phases(&pc, end, s);
    s->fsync = g_fsync_seconds;
    s->fsync_calls = g_fsync_calls;
    if (indexed)
        *indexed = res.bytes;
    if (docs)
        *docs = res.documents;
    if (apparent && bench_dir_size(dir, apparent, allocated, nfiles) != 0) {
        fprintf(stderr, "bench_build: cannot size %s\n", dir);
        ig_build_result_free(&res);
        return -1;
    }
    ig_build_result_free(&res);
    if (!g_cat && bench_rmtree(dir) != 0)
        fprintf(stderr, "bench_build: warning: cannot remove %s\n", dir);
    return 0;
}

/* --catalog: a fresh catalog under tmp holding the corpus as dataset "bench". */
static int catalog_start(const bench_corpus *c, const char *tmp)
{
    char home[4200];
    snprintf(home, sizeof home, "%s/home-%s", tmp, c->name);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = c->path};
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    ig_error err = {0};
    if (ig_catalog_open(&g_cat, home, &err) || ig_catalog_add(g_cat, "bench", &src, 1, &in, NULL, &err)) {
        fprintf(stderr, "bench_build: catalog for %s: %s\n", c->name, err.msg);
        ig_catalog_close(&g_cat);
        return -1;
    }
    return 0;
}

typedef struct corpus_result {
    char name[32];
    size_t bytes, nfiles;
    uint64_t hash, indexed, docs;
    double build_mbps, dss_mbps, ratio, bpb, bpb_du;
    double med_total, med_dss, med_read, med_sort, med_write, med_sync, med_fsync;
    double min_total, min_dss, ratio_min, ratio_paired;
    double med_floor, ratio_floor; ///< durable_floor's median, and dss / (dss + it)
    unsigned fsync_calls;
} corpus_result;

static double med_field(const build_sample *bs, int reps, size_t off, double *col)
{
    for (int i = 0; i < reps; i++)
        col[i] = *(const double *)((const char *)&bs[i] + off);
    return bench_median(col, (size_t)reps);
}

static double mbps(size_t bytes, double s)
{
    return s > 0 ? (double)bytes / 1e6 / s : 0;
}

static int run_corpus(const bench_corpus *c, const char *tmp, int reps, corpus_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->bytes = c->len;
    r->nfiles = c->nfiles;
    r->hash = c->hash;

    saidx_t *sa = NULL;
    size_t sa_bytes = ((c->len ? c->len : 1) * sizeof *sa + 4095) & ~(size_t)4095;
    if (posix_memalign((void **)&sa, 4096, sa_bytes) != 0)
        sa = NULL;
    double *t_dss = calloc((size_t)reps, sizeof(double));
    double *t_floor = calloc((size_t)reps, sizeof(double));
    build_sample *bs = calloc((size_t)reps, sizeof *bs);
    double *col = calloc((size_t)reps, sizeof(double));
    if (!sa || !t_dss || !t_floor || !bs || !col) {
        fprintf(stderr, "bench_build: out of memory\n");
        return -1;
    }
    uint64_t apparent = 0, allocated = 0;
    size_t nfiles = 0;
    build_sample warm;
    /* Warm-up (untimed): page cache, allocator, libdivsufsort code. */
    if (divsufsort(c->data, sa, (saidx_t)c->len) != 0 ||
        build_once(c, tmp, -1, &warm, &r->indexed, &r->docs, &apparent, &allocated, &nfiles))
        return -1;
    for (int i = 0; i < reps; i++) {
        /* Alternate which goes first so drift (thermal, neighbours) hits both. */
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == (i % 2 == 0)) {
                double t0 = bench_now();
                if (divsufsort(c->data, sa, (saidx_t)c->len) != 0) {
                    fprintf(stderr, "bench_build: divsufsort failed\n");
                    return -1;
                }
                t_dss[i] = bench_now() - t0;
            } else if (build_once(c, tmp, i, &bs[i], NULL, NULL, NULL, NULL, NULL)) {
                return -1;
            }
        }
        /* after the build's own fsyncs, so that it does not flush the builds' data */
        if ((t_floor[i] = durable_floor(tmp, sa, c->len * sizeof *sa)) < 0) {
            fprintf(stderr, "bench_build: cannot write %s/floor.sa: %s\n", tmp, strerror(errno));
            return -1;
        }
    }

    /* Paired ratios: each build against the divsufsort run next to it, which cancels
     * slow drift of the machine's speed (shared VMs are noisy). */
    for (int i = 0; i < reps; i++)
        col[i] = t_dss[i] / bs[i].total;
    r->ratio_paired = bench_median(col, (size_t)reps);
    r->med_dss = bench_median(t_dss, (size_t)reps);
    r->min_dss = t_dss[0];
#define MED(field) med_field(bs, reps, offsetof(build_sample, field), col)
    r->med_total = MED(total);
    r->med_read = MED(read);
    r->med_sort = MED(sort);
    r->med_write = MED(write);
    r->med_sync = MED(sync);
    r->med_fsync = MED(fsync);
#undef MED
    for (int i = 0; i < reps; i++)
        col[i] = bs[i].total;
    r->min_total = bench_quantile(col, (size_t)reps, 0);
    r->ratio_min = r->min_total > 0 ? r->min_dss / r->min_total : 0;
    r->fsync_calls = bs[0].fsync_calls;
    r->build_mbps = mbps(c->len, r->med_total);
    r->dss_mbps = mbps(c->len, r->med_dss);
    r->ratio = r->dss_mbps > 0 ? r->build_mbps / r->dss_mbps : 0;
    r->med_floor = bench_median(t_floor, (size_t)reps);
    r->ratio_floor = r->med_dss / (r->med_dss + r->med_floor);
    r->bpb = (double)apparent / (double)r->indexed;
    r->bpb_du = (double)allocated / (double)r->indexed;

    printf("\n== %s: %zu bytes (%.2f MiB), %zu file(s) concatenated, fnv1a %016" PRIx64 "\n",
           c->name, c->len, (double)c->len / BENCH_MiB, c->nfiles, c->hash);
    printf("   source: %s\n", c->path);
    printf("   %d repetitions (after 1 warm-up of each); medians\n", reps);
    printf("   raw divsufsort   %8.1f ms  %7.2f MB/s\n", r->med_dss * 1e3, r->dss_mbps);
    printf("   whole build      %8.1f ms  %7.2f MB/s   ratio %.3f (target >= 0.9: %s)\n",
           r->med_total * 1e3, r->build_mbps, r->ratio, r->ratio >= 0.9 ? "met" : "MISSED");
    printf("   other estimates: ratio of minimums %.3f (%.1f / %.1f ms), median of paired ratios %.3f\n",
           r->ratio_min, r->min_dss * 1e3, r->min_total * 1e3, r->ratio_paired);
    printf("   floor: the suffix array (%zu bytes) written durably after the sort %.1f ms; no durable build "
           "beats ratio %.3f\n", c->len * sizeof *sa, r->med_floor * 1e3, r->ratio_floor);
    printf("   sort phase inside the build / raw divsufsort: %.3f\n", r->med_sort / r->med_dss);
    printf("     read+validate+NFC %7.1f ms  (%4.1f%%)\n", r->med_read * 1e3, 100 * r->med_read / r->med_total);
    printf("     sort              %7.1f ms  (%4.1f%%)\n", r->med_sort * 1e3, 100 * r->med_sort / r->med_total);
    printf("     write+file fsync  %7.1f ms  (%4.1f%%)\n", r->med_write * 1e3, 100 * r->med_write / r->med_total);
    printf("     dir fsync+manifest%7.1f ms  (%4.1f%%)\n", r->med_sync * 1e3, 100 * r->med_sync / r->med_total);
    printf("     of which fsync()  %7.1f ms  (%4.1f%%, %u calls)\n", r->med_fsync * 1e3,
           100 * r->med_fsync / r->med_total, r->fsync_calls);
    printf("   index: %zu files, %" PRIu64 " bytes apparent, %" PRIu64 " bytes on disk (du), %" PRIu64
           " indexed bytes, %" PRIu64 " document(s)\n",
           nfiles, apparent, allocated, r->indexed, r->docs);
    printf("   index size %.3f bytes/indexed byte (du: %.3f)  (target <= 5.2: %s)\n", r->bpb, r->bpb_du,
           r->bpb <= 5.2 && r->bpb_du <= 5.2 ? "met" : "MISSED");
    free(sa);
    free(t_dss);
    free(t_floor);
    free(bs);
    free(col);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_build [--reps N] [--max-bytes N[,N...]] [--only NAME] [--dataset PATH] [--tree DIR] "
                    "[--catalog]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int reps = 5;
    enum { MAX_SIZES = 8 };
    size_t sizes[MAX_SIZES] = {16u << 20};
    int nsizes = 1;
    const char *only = NULL, *dataset = NULL, *tree = NULL;
    int catalog = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) {
            char *p = argv[++i];
            for (nsizes = 0; *p && nsizes < MAX_SIZES; nsizes++) {
                sizes[nsizes] = (size_t)strtoull(p, &p, 10);
                if (*p && *p++ != ',')
                    usage();
            }
            if (*p || !nsizes)
                usage();
        }
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--dataset") && i + 1 < argc)
            dataset = argv[++i];
        else if (!strcmp(argv[i], "--tree") && i + 1 < argc)
            tree = argv[++i];
        else if (!strcmp(argv[i], "--catalog"))
            catalog = 1;
        else
            usage();
    }
    if (reps < 1)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *tmp = bench_mkdtemp("build");
    if (!tmp)
        return 1;
    printf("bench_build: whole %s vs raw divsufsort, index size\n", catalog ? "ig_catalog_build" : "ig_build_index");
    printf("machine: %s\nbuild type: %s\ntemp dir: %s\n", machine, bench_build_type(), tmp);

    corpus_result res[1 + MAX_SIZES];
    int nres = 0, rc = 0;
    for (int which = 0; which < 1 + nsizes && !rc; which++) {
        const char *name = which == 0 ? "tinyshakespeare" : "usr-include";
        if (only && strcmp(only, name))
            continue;
        bench_corpus c;
        rc = which == 0 ? bench_corpus_shakespeare(&c, dataset)
                        : bench_corpus_headers(&c, tree ? tree : "/usr/include", tmp, sizes[which - 1], 4u << 20);
        if (!rc && which > 1) { /* the first size keeps the plain name the front page knows */
            char base[sizeof c.name];
            snprintf(base, sizeof base, "%s", c.name);
            snprintf(c.name, sizeof c.name, "%.18s-%uMB", base, (unsigned)((sizes[which - 1] + 500000) / 1000000));
        }
        if (!rc && catalog)
            rc = catalog_start(&c, tmp);
        if (!rc)
            rc = run_corpus(&c, tmp, reps, &res[nres]);
        ig_catalog_close(&g_cat);
        if (!rc)
            nres++;
        bench_corpus_free(&c);
    }
    bench_rmtree(tmp);
    free(tmp);
    if (rc)
        return 1;

    printf("\n%-16s %10s %11s %10s %7s %9s %9s\n", "corpus", "bytes", "build MB/s", "dss MB/s",
           "ratio", "idx B/B", "fsync %");
    for (int i = 0; i < nres; i++)
        printf("%-16s %10zu %11.2f %10.2f %7.3f %9.3f %8.1f%%\n", res[i].name, res[i].bytes,
               res[i].build_mbps, res[i].dss_mbps, res[i].ratio, res[i].bpb,
               100 * res[i].med_fsync / res[i].med_total);

    bench_result_begin("bench_build", argc, argv);
    printf(",\"reps\":%d,\"corpora\":[", reps);
    for (int i = 0; i < nres; i++) {
        const corpus_result *r = &res[i];
        printf("%s{\"name\":\"%s\",\"bytes\":%zu,\"files\":%zu,\"fnv1a\":\"%016" PRIx64 "\","
               "\"indexed\":%" PRIu64 ",\"build_mbps\":%.3f,\"dss_mbps\":%.3f,\"ratio\":%.4f,"
               "\"bytes_per_byte\":%.4f,\"bytes_per_byte_du\":%.4f,\"build_ms\":%.2f,\"dss_ms\":%.2f,"
               "\"read_ms\":%.2f,\"sort_ms\":%.2f,\"write_ms\":%.2f,\"sync_ms\":%.2f,"
               "\"fsync_ms\":%.2f,\"ratio_min\":%.4f,\"ratio_paired\":%.4f,\"floor_ms\":%.2f,\"ratio_floor\":%.4f}",
               i ? "," : "", r->name, r->bytes, r->nfiles, r->hash, r->indexed, r->build_mbps,
               r->dss_mbps, r->ratio, r->bpb, r->bpb_du, r->med_total * 1e3, r->med_dss * 1e3,
               r->med_read * 1e3, r->med_sort * 1e3, r->med_write * 1e3, r->med_sync * 1e3,
               r->med_fsync * 1e3, r->ratio_min, r->ratio_paired, r->med_floor * 1e3, r->ratio_floor);
    }
    printf("]}\n");
    return 0;
}
