/*
 * Builds that stop half-way give back everything they took: a build cancelled by its
 * progress callback while shards are sorting (in child processes that report through shared
 * pages) leaves no mapping and no directory behind, however often it happens, and
 * a build into an existing directory fails without touching it. Parallel builds (with
 * sorters still writing while the next ones sort, or without room for that) write the same
 * files as a serial build. A dataset built in parts (one per machine) is, part after part,
 * the dataset built whole. Builds after larger, equal and smaller ones in the same process
 * (whose sorters reuse each other's arrays) sort correctly (brute force).
 */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "infinigram/build.h"
#include "infinigram/index.h"

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Cancels at the third WRITE report: the first two come as each shard's text is written,
 * the third when a finished sort's shard is about to be recorded. */
static int cancel_cb(void *user, const ig_progress *p)
{
    int *writes = user;
    return p->phase == IG_PHASE_WRITE && ++*writes == 3;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    do {
        if (len == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 1 << 16)))
            break;
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return buf;
}

/* Every file of every shard of index a equals its namesake in index b; returns files compared. */
static int same_shards(const char *a, const char *b, int nshards)
{
    int files = 0;
    for (int s = 0; s < nshards; s++) {
        char da[512], db[512];
        snprintf(da, sizeof da, "%s/shard-%04d", a, s);
        snprintf(db, sizeof db, "%s/shard-%04d", b, s);
        DIR *d = opendir(da);
        CHECK(d != NULL, "%s: missing", da);
        if (!d)
            return files;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char pa[1024], pb[1024];
            snprintf(pa, sizeof pa, "%s/%s", da, e->d_name);
            snprintf(pb, sizeof pb, "%s/%s", db, e->d_name);
            size_t na = 0, nb = 0;
            char *x = slurp(pa, &na), *y = slurp(pb, &nb);
            CHECK(x && y && na == nb && !memcmp(x, y, na), "%s differs from %s", pa, pb);
            free(x);
            free(y);
            files++;
        }
        closedir(d);
    }
    return files;
}

/* rm -r of an index directory two levels deep */
static void remove_index(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        DIR *s = opendir(p);
        if (s) {
            struct dirent *f;
            while ((f = readdir(s)))
                if (f->d_name[0] != '.') {
                    char q[768];
                    snprintf(q, sizeof q, "%s/%s", p, f->d_name);
                    unlink(q);
                }
            closedir(s);
            rmdir(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

/* The most child processes of this process seen by a progress report. */
static int children_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[300], buf[4096];
        snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(p, "r");
        size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[k] = 0;
        for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* Sorters running besides the calling thread: child processes (large shards) and threads
 * (small ones). */
static int sorters_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = -1; /* the calling thread */
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return children_now() + (n > 0 ? n : 0);
}

static int count_sorters(void *user, const ig_progress *p)
{
    (void)p;
    int *most = user, now = sorters_now();
    if (now > *most)
        *most = now;
    return 0;
}

/* Sorting in parallel, with sorters that are still writing while the next ones sort (a
 * budget with room for them) or without (a budget for `jobs` sorts only), gives the same
 * files as sorting one shard after the other in-process. */
static void parallel_same_as_serial(const char *root, const ig_source *src, size_t nsrc, size_t n)
{
    const char *names[4] = {"serial", "overlap", "tight", "in-process"};
    for (int v = 0; v < 4; v++) {
        ig_build_options bo;
        ig_build_options_default(&bo);
        bo.jobs = v ? 2 : 1;
        bo.sorter = v == 3 ? IG_SORT_IN_PROCESS : IG_SORT_PROCESSES;
        bo.shard_size = n / nsrc + 64; /* one document per shard */
        bo.prefix_min = 1024;          /* prefix tables and sampled keys on every shard */
        bo.sample_stride = 4;
        bo.memory = v == 2 ? (5 * 2 + 1) * bo.shard_size + 1 : 1ull << 30;
        char dir[256];
        snprintf(dir, sizeof dir, "%s/%s", root, names[v]);
        ig_build_result res;
        ig_error err = {0};
        int most = 0;
        int rc = ig_build_index(dir, src, nsrc, NULL, &bo, count_sorters, &most, NULL, &res, &err);
        CHECK(rc == 0 && res.shards == nsrc, "%s build: %d %s, %u shards", names[v], rc, err.msg, res.shards);
        /* threads sort these small shards unless the build is told to sort in-process */
        if (v == 3)
            CHECK(most == 0, "in-process: %d sorters seen", most);
        if (v == 1)
            CHECK(most > 0, "overlap: no sorter seen");
        ig_build_result_free(&res);
        if (v) {
            char serial[256];
            snprintf(serial, sizeof serial, "%s/serial", root);
            CHECK(same_shards(serial, dir, (int)nsrc) >= 7 * (int)nsrc, "%s: too few files compared", names[v]);
            /* the manifest records every file (sizes, checksums): a file left out is ignored */
            char ma[512], mb[512];
            snprintf(ma, sizeof ma, "%s/manifest.json", serial);
            snprintf(mb, sizeof mb, "%s/manifest.json", dir);
            size_t na = 0, nb = 0;
            char *x = slurp(ma, &na), *y = slurp(mb, &nb);
            CHECK(x && y && na == nb && !memcmp(x, y, na), "%s: manifest differs from the serial build's", names[v]);
            CHECK(x && strstr(x, "\"sample\"") && strstr(x, "\"prefix\""), "serial manifest lists no keys or prefix table");
            free(x);
            free(y);
        }
    }
    for (int v = 0; v < 4; v++) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/%s", root, names[v]);
        remove_index(dir);
    }
}

/* Documents of an index in order, each as its bytes then a NUL-free separator "\xFF", into
 * one buffer (malloc'd): what a split must keep across its parts. */
static char *all_docs(const char *dir, size_t *n, uint64_t *ndocs)
{
    ig_index *idx = NULL;
    ig_error err;
    *n = 0;
    *ndocs = 0;
    if (ig_index_open(&idx, dir, &err))
        return NULL;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    char *out = malloc(info.bytes + 1);
    for (uint64_t d = 0; out && d < info.documents; d++) {
        ig_doc doc;
        size_t len = 0;
        if (ig_doc_get(idx, d, &doc, &err))
            break;
        const uint8_t *t = ig_text(idx, doc.shard, doc.start, &len);
        len = len < doc.length ? len : doc.length;
        memcpy(out + *n, t, len);
        *n += len;
        out[(*n)++] = (char)0xFF;
    }
    *ndocs = info.documents;
    ig_index_close(&idx);
    return out;
}

/* A dataset split into parts (ig_build_options.part/parts): the parts in order hold the
 * documents of the whole, in order, each document once, the parts of near-equal size; a part
 * that does not exist, decontamination and an empty part are refused. */
static void parts_make_the_whole(const char *root)
{
    char path[256];
    snprintf(path, sizeof path, "%s/lines.txt", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    if (!f)
        return;
    test_rng r = {11};
    for (int i = 0; i < 3000; i++) {
        int len = 1 + (int)rng_below(&r, 60);
        for (int k = 0; k < len; k++)
            fputc('a' + (int)rng_below(&r, 5), f);
        fputc('\n', f);
    }
    fclose(f);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = path};
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.format = IG_FORMAT_LINES;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    ig_error err;
    char whole[300];
    snprintf(whole, sizeof whole, "%s/whole", root);
    CHECK(ig_build_index(whole, &src, 1, &in, &bo, NULL, NULL, NULL, &res, &err) == 0, "whole: %s", err.msg);
    ig_build_result_free(&res);
    size_t wn, pn[3], total = 0;
    uint64_t wd, pd[3], docs = 0;
    char *w = all_docs(whole, &wn, &wd), *joined = malloc(wn + 1);
    for (uint32_t p = 0; p < 3; p++) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/part%u", root, p);
        bo.part = p;
        bo.parts = 3;
        CHECK(ig_build_index(dir, &src, 1, &in, &bo, NULL, NULL, NULL, &res, &err) == 0, "part %u: %s", p, err.msg);
        ig_build_result_free(&res);
        char *t = all_docs(dir, &pn[p], &pd[p]);
        CHECK(t && joined && total + pn[p] <= wn, "part %u: readable and no larger than the whole", p);
        if (t && joined && total + pn[p] <= wn)
            memcpy(joined + total, t, pn[p]);
        total += pn[p];
        docs += pd[p];
        free(t);
        remove_index(dir);
    }
    CHECK(w && docs == wd && total == wn && !memcmp(w, joined, wn), "the parts in order are the whole: %llu of %llu "
          "documents, %zu of %zu bytes", (unsigned long long)docs, (unsigned long long)wd, total, wn);
    for (int p = 0; p < 3; p++)
        CHECK(pn[p] > wn / 3 - 200 && pn[p] < wn / 3 + 200, "part %d holds %zu bytes of %zu", p, pn[p], wn);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/bad", root);
    bo.part = 3;
    CHECK(ig_build_index(dir, &src, 1, &in, &bo, NULL, NULL, NULL, &res, &err) == IG_EUSAGE, "part 3 of 3: %s", err.msg);
    ig_decontam_options dc;
    ig_decontam_options_default(&dc);
    dc.eval_path = path;
    in.decontam = &dc;
    bo.part = 0;
    CHECK(ig_build_index(dir, &src, 1, &in, &bo, NULL, NULL, NULL, &res, &err) == IG_EUSAGE, "decontamination of a "
          "part: %s", err.msg);
    in.decontam = NULL;
    { /* options written by hand that the build does not know, refused before anything is made */
        ig_build_options hb;
        ig_build_options_default(&hb);
        hb.sample_stride = (1u << 30) + 1;
        CHECK(ig_build_index(dir, &src, 1, &in, &hb, NULL, NULL, NULL, &res, &err) == IG_EUSAGE, "stride 2^30+1");
        ig_build_options_default(&hb);
        hb.sorter = 7;
        CHECK(ig_build_index(dir, &src, 1, &in, &hb, NULL, NULL, NULL, &res, &err) == IG_EUSAGE, "sorter 7");
        ig_build_options_default(&hb);
        hb.jobs = -3;
        CHECK(ig_build_index(dir, &src, 1, &in, &hb, NULL, NULL, NULL, &res, &err) == IG_EUSAGE, "jobs -3");
        ig_source bad = src;
        bad.kind = (ig_source_kind)5;
        CHECK(ig_build_index(dir, &bad, 1, &in, NULL, NULL, NULL, NULL, &res, &err) == IG_EUSAGE &&
                  strstr(err.msg, "source 1"),
              "source kind 5: %s", err.msg);
        struct stat st;
        CHECK(stat(dir, &st) != 0, "a refused build left %s", dir);
        /* codes a caller can act on: no directory is not found, a taken one exists */
        ig_index *none = NULL;
        CHECK(ig_index_open(&none, dir, &err) == IG_ENOTFOUND && !none, "open of no directory: %s", err.msg);
        CHECK(ig_build_index(root, &src, 1, &in, NULL, NULL, NULL, NULL, &res, &err) == IG_EEXISTS,
              "build into an existing directory: %s", err.msg);
    }
    /* two documents over three parts: the last part has none */
    f = fopen(path, "w");
    if (f) {
        fputs("one document\nanother one\n", f);
        fclose(f);
    }
    bo.part = 2;
    int rc = ig_build_index(dir, &src, 1, &in, &bo, NULL, NULL, NULL, &res, &err);
    struct stat st;
    CHECK(rc == IG_EINVAL && strstr(err.msg, "holds no document") && stat(dir, &st) != 0, "an empty part: %d %s", rc,
          err.msg);
    /* A part reads only the files holding its documents: with a first file of 100 bytes that
     * is not UTF-8 and two of 1000 after it, the last of 3 parts (offsets 1400 on) reads the
     * third file only and builds; the first reads the bad file and fails naming it. */
    char names[3][300];
    ig_source three[3];
    for (int k = 0; k < 3; k++) {
        snprintf(names[k], sizeof names[k], "%s/src%d.txt", root, k);
        three[k] = (ig_source){.kind = IG_SOURCE_FILE, .path = names[k]};
        FILE *g = fopen(names[k], "w");
        CHECK(g != NULL, "create %s", names[k]);
        for (int line = 0; g && line < (k ? 100 : 10); line++)
            fputs(k ? "some text\n" : "bad \xC3\x28 !!\n", g); /* 10 bytes a line */
        if (g)
            fclose(g);
    }
    bo.part = 2;
    rc = ig_build_index(dir, three, 3, &in, &bo, NULL, NULL, NULL, &res, &err);
    CHECK(rc == 0 && res.documents == 70, "the last part passes over the files before its own (its lines start at "
          "1400 to 2090): %d %s", rc, rc ? err.msg : "");
    if (!rc)
        ig_build_result_free(&res);
    remove_index(dir);
    bo.part = 0;
    rc = ig_build_index(dir, three, 3, &in, &bo, NULL, NULL, NULL, &res, &err);
    CHECK(rc == IG_EINVAL && strstr(err.msg, "src0.txt"), "the first part reads the bad file: %d %s", rc, err.msg);
    for (int k = 0; k < 3; k++)
        unlink(names[k]);
    free(w);
    free(joined);
    remove_index(whole);
    unlink(path);
}

/* Rows of shard-0000/sa under dir are every position of shard-0000/text once, in the order
 * of their suffixes (brute force: each row against the next). */
static void check_sorted(const char *dir, const char *what)
{
    char pt[512], ps[512];
    snprintf(pt, sizeof pt, "%s/shard-0000/text", dir);
    snprintf(ps, sizeof ps, "%s/shard-0000/sa", dir);
    size_t nt = 0, ns = 0;
    unsigned char *t = (unsigned char *)slurp(pt, &nt), *sa = (unsigned char *)slurp(ps, &ns);
    char *seen = calloc(nt ? nt : 1, 1);
    CHECK(t && sa && seen && ns == 4 * nt, "%s: text of %zu bytes, suffix array of %zu", what, nt, ns);
    int bad = 0;
    uint64_t prev = 0;
    for (size_t r = 0; t && sa && seen && ns == 4 * nt && r < nt && !bad; r++) {
        uint64_t pos = sa[4 * r] | (uint64_t)sa[4 * r + 1] << 8 | (uint64_t)sa[4 * r + 2] << 16 |
                       (uint64_t)sa[4 * r + 3] << 24;
        if (pos >= nt || seen[pos]) {
            bad = 1;
            CHECK(0, "%s: row %zu holds %llu, out of range or seen before", what, r, (unsigned long long)pos);
            break;
        }
        seen[pos] = 1;
        if (r) {
            size_t a = prev, b = pos, k = 0;
            while (a + k < nt && b + k < nt && t[a + k] == t[b + k])
                k++;
            /* a suffix that is a prefix of the other comes first */
            if (!(a + k == nt || (b + k < nt && t[a + k] < t[b + k]))) {
                bad = 1;
                CHECK(0, "%s: rows %zu and %zu out of order (positions %zu, %zu)", what, r - 1, r, a, b);
            }
        }
        prev = pos;
    }
    free(t);
    free(sa);
    free(seen);
}

/* With a build cache, sorts that run in this process keep their arrays for the next one
 * (sort.c): a build after a larger one gets memory still holding the larger one's text and
 * rows, and must sort its own text all the same; so must one after a build of the same size
 * and one after a smaller, and one larger than any before. Then two threads build at once sharing the cache, and a build
 * without one. */
static void pooled_build(const char *root, ig_build_cache *cache, size_t n, int i, test_rng *r)
{
    char *text = malloc(n);
    for (size_t j = 0; text && j < n; j++) /* a few letters: long repeats, deep comparisons */
        text[j] = (char)('a' + rng_below(r, i % 2 ? 3 : 26));
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = n};
    char dir[256], what[64];
    snprintf(dir, sizeof dir, "%s/pooled%d", root, i);
    snprintf(what, sizeof what, "build %d (%zu bytes%s)", i, n, cache ? "" : ", no cache");
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.cache = cache;
    ig_build_result res;
    ig_error err = {0};
    int rc = text ? ig_build_index(dir, &src, 1, NULL, &bo, NULL, NULL, NULL, &res, &err) : -1;
    CHECK(rc == 0, "%s: %s", what, err.msg);
    if (!rc) {
        check_sorted(dir, what);
        ig_build_result_free(&res);
    }
    remove_index(dir);
    free(text);
}

struct pooled_thread {
    const char *root;
    ig_build_cache *cache;
    int first;
};

static void *pooled_thread_main(void *arg)
{
    struct pooled_thread *p = arg;
    test_rng r = {(uint64_t)p->first};
    for (int k = 0; k < 2; k++)
        pooled_build(p->root, p->cache, k ? 300000 : 700000, p->first + k, &r);
    return NULL;
}

static void pooled_arrays(const char *root)
{
    static const size_t sizes[] = {3u << 20, 200000, 200000, 1u << 20, 5u << 20};
    ig_build_cache *cache = ig_build_cache_new(0);
    CHECK(cache != NULL, "ig_build_cache_new");
    test_rng r = {11};
    for (int i = 0; i < (int)(sizeof sizes / sizeof *sizes); i++)
        pooled_build(root, cache, sizes[i], i, &r);
    struct pooled_thread th[2] = {{root, cache, 10}, {root, cache, 20}};
    pthread_t t[2];
    int started[2];
    for (int i = 0; i < 2; i++)
        started[i] = pthread_create(&t[i], NULL, pooled_thread_main, &th[i]) == 0;
    for (int i = 0; i < 2; i++)
        if (started[i])
            pthread_join(t[i], NULL);
        else
            pooled_thread_main(&th[i]);
    ig_build_cache_free(cache);
    pooled_build(root, NULL, 500000, 30, &r);
    ig_build_cache_free(NULL);
}

int main(void)
{
    /* one malloc arena: a thread that starts while another holds the arena would otherwise get
     * a new arena (a new mapping) at random, and the mapping count below would be flaky */
    mallopt(M_ARENA_MAX, 1);
    char tmpl[] = "/tmp/ig-test-build-XXXXXX";
    const char *root = mkdtemp(tmpl);
    CHECK(root != NULL, "mkdtemp");
    if (!root)
        return check_done("build");
    /* 2 MiB of varied text in two shards, sorted by two child processes */
    size_t n = 2u << 20;
    char *text = malloc(n);
    test_rng r = {7};
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + rng_below(&r, 20));
    /* eight documents (a document never crosses shards) */
    ig_source src[8];
    for (int i = 0; i < 8; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = text + i * (n / 8), .text_len = n / 8};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 2;
    bo.shard_size = n / 2 + 64; /* four documents per shard: two shards */
    int before = -1;
    for (int round = 0; round < 3; round++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/idx%d", root, round);
        int writes = 0;
        ig_build_result res;
        ig_error err = {0};
        int rc = ig_build_index(dir, src, 8, NULL, &bo, cancel_cb, &writes, NULL, &res, &err);
        CHECK(rc == IG_ECANCELLED, "round %d: cancelled build returned %d (%s)", round, rc, err.msg);
        struct stat st;
        CHECK(stat(dir, &st) != 0, "round %d: the cancelled build's directory is gone", round);
        int now = count_maps();
        if (round == 0)
            before = now;
        else if (!UNDER_ASAN) /* the first round may leave allocator state; later rounds must add nothing
                                * (AddressSanitizer keeps a mapping of every thread it saw: small shards sort in
                                * a thread, so there the count grows by design) */
            CHECK(now <= before, "round %d: %d mappings after a cancelled build, %d after the first", round, now,
                  before);
        ig_build_result_free(&res);
    }
    parallel_same_as_serial(root, src, 8, n);
    /* a build into an existing directory fails and leaves it alone */
    char dir[128];
    snprintf(dir, sizeof dir, "%s/exists", root);
    CHECK(mkdir(dir, 0755) == 0, "mkdir");
    ig_build_result res;
    ig_error err = {0};
    int rc = ig_build_index(dir, src, 8, NULL, &bo, NULL, NULL, NULL, &res, &err);
    struct stat st;
    CHECK(rc != 0 && strstr(err.msg, "cannot create index directory") && stat(dir, &st) == 0,
          "existing directory: %d %s", rc, err.msg);
    ig_build_result_free(&res);
    rmdir(dir);
    parts_make_the_whole(root);
    pooled_arrays(root);
    rmdir(root);
    free(text);
    return check_done("build");
}
