/*
 * Allocation failure injection, as SQLite's malloc tests do it: each library call below is
 * run once to count the allocations it makes, then once more for every one of them with
 * that allocation failing. Each run must end in success (a failure the call could absorb)
 * or in IG_ENOMEM with a message — never a crash or an abort — and leave nothing allocated:
 * every block allocated during a run is tracked until it is freed, and once the run is over
 * and the index it used is closed (its lazily built tables go with it), none may remain.
 * Each run starts from the same state: the index reopened, its one-time caches cold.
 *
 * malloc, calloc, realloc and free are replaced here (glibc lets a program interpose them,
 * its own internal calls included); the test is skipped under sanitizers, which own them.
 */
#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "infinigram/infinigram.h"
#include "infinigram/generate.h"
#include "infinigram/explain.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/contam.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
int main(void)
{
    printf("nomem: skipped under a sanitizer\n");
    return 77; /* meson: skipped */
}
#else

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long calls, fail_at; /* fail the fail_at-th allocation while armed (0: none) */
static int armed;

/* The blocks allocated while armed and not yet freed: open addressing on the address,
 * deletion by backward shift. Its storage comes from glibc directly. */
#define LIVE_SLOTS (1u << 20)
static struct live {
    void *p;
    size_t n;
    void *where[6]; /* the allocation's callers (IG_NOMEM_TRACE=1), printed for a block left */
} *live;
static int tracing, in_trace;
static size_t nlive;

static size_t live_slot(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 44) & (LIVE_SLOTS - 1); }

static void live_add(void *p, size_t n)
{
    if (!p || !live || nlive >= LIVE_SLOTS / 2)
        return;
    size_t i = live_slot(p);
    while (live[i].p)
        i = (i + 1) & (LIVE_SLOTS - 1);
    live[i] = (struct live){p, n, {0}};
    if (tracing && !in_trace) {
        in_trace = 1;
        backtrace(live[i].where, 6);
        in_trace = 0;
    }
    nlive++;
}

static int live_remove(void *p)
{
    if (!p || !live || !nlive)
        return 0;
    size_t i = live_slot(p);
    while (live[i].p && live[i].p != p)
        i = (i + 1) & (LIVE_SLOTS - 1);
    if (!live[i].p)
        return 0;
    live[i].p = NULL;
    nlive--;
    /* shift back the entries of the run after i that would no longer be found */
    for (size_t j = (i + 1) & (LIVE_SLOTS - 1); live[j].p; j = (j + 1) & (LIVE_SLOTS - 1)) {
        size_t h = live_slot(live[j].p);
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            live[i] = live[j];
            live[j].p = NULL;
            i = j;
        }
    }
    return 1;
}

static int fail_now(void)
{
    if (!armed)
        return 0;
    if (++calls == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

/* A build sorts small shards in a thread that allocates too. Recursive: backtrace() may
 * allocate while a block is being recorded. */
static pthread_mutex_t mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void *malloc(size_t n)
{
    pthread_mutex_lock(&mu);
    void *p = fail_now() ? NULL : __libc_malloc(n);
    if (p && armed)
        live_add(p, n);
    pthread_mutex_unlock(&mu);
    return p;
}

void *calloc(size_t a, size_t b)
{
    pthread_mutex_lock(&mu);
    void *p = fail_now() ? NULL : __libc_calloc(a, b);
    if (p && armed)
        live_add(p, a * b);
    pthread_mutex_unlock(&mu);
    return p;
}

void *realloc(void *p, size_t n)
{
    pthread_mutex_lock(&mu);
    void *q = fail_now() ? NULL : __libc_realloc(p, n);
    if (q || !n) { /* on failure p is untouched */
        int tracked = live_remove(p);
        if (armed || tracked)
            live_add(q, n);
    }
    pthread_mutex_unlock(&mu);
    return q;
}

void free(void *p)
{
    pthread_mutex_lock(&mu);
    live_remove(p);
    __libc_free(p);
    pthread_mutex_unlock(&mu);
}

static ig_index *idx;
static char dir[64];
/* The JSON an operation wrote in the run without faults: a run with a fault must write the
 * same, or nothing (NULL, reported as out of memory) — never a document with members lost. */
static char *ref_json;

typedef int (*scenario)(ig_error *err);

/* Runs an operation through its generic view, with fields given as text. */
static int run_op(const ig_op *op, const char *const *kv, ig_error *err)
{
    void *o = calloc(1, op->opts_size), *r = calloc(1, op->result_size);
    int rc = o && r ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    if (!rc) {
        op->defaults(o);
        for (; !rc && kv[0]; kv += 2)
            rc = ig_field_set_text(ig_field_find(op->fields, kv[0], strlen(kv[0])), o, (const uint8_t *)kv[1],
                                   strlen(kv[1]), err);
    }
    ig_op_ctx ctx = {idx, "t", NULL};
    if (!rc && !(rc = op->run(&ctx, o, r, err))) {
        char *j = op->json(&ctx, o, r);
        if (!j) /* the writer may fail too: it says so by returning NULL */
            rc = ig_error_set(err, IG_ENOMEM, "out of memory writing JSON");
        int was = armed;
        armed = 0;
        if (j && !was && !ref_json)
            ref_json = strdup(j);
        else if (j && was && ref_json)
            CHECK(!strcmp(j, ref_json), "%s: JSON written under a failed allocation differs:\n%s\nnot\n%s", op->name, j,
                  ref_json);
        armed = was;
        free(j);
        op->free_result(r);
    }
    if (o)
        ig_fields_free(op->fields, o);
    free(o);
    free(r);
    return rc;
}

#define OP_SCENARIO(fn, op, ...)                                                                                       \
    static int fn(ig_error *err)                                                                                       \
    {                                                                                                                  \
        static const char *const kv[] = {__VA_ARGS__, NULL};                                                           \
        return run_op(&op, kv, err);                                                                                   \
    }
OP_SCENARIO(s_count, ig_op_count, "query", "the", "positions", "3")
OP_SCENARIO(s_predict, ig_op_predict, "query", "the c", "interp", "3")
OP_SCENARIO(s_prob, ig_op_prob, "query", "the ", "continuation", "cat")
OP_SCENARIO(s_backoff, ig_op_backoff, "query", "the ca")
OP_SCENARIO(s_spans, ig_op_spans, "query", "the cat sat on the log", "min_len", "4")
OP_SCENARIO(s_search, ig_op_search, "query", "\"the\" AND (\"cat\" OR \"dog\")")
OP_SCENARIO(s_doc, ig_op_doc, "query", "1", "lines", "1:2")
OP_SCENARIO(s_generate, ig_op_generate, "query", "the", "max", "30", "seed", "3")
OP_SCENARIO(s_explain, ig_op_explain, "query", "the ca")
OP_SCENARIO(s_contam, ig_op_contam, "items", "the cat sat on the mat. the dog sat", "items", "a cat and", "n", "3")
OP_SCENARIO(s_mix, ig_op_mix, "query", "the c", "llm", "{\"a\": -0.5, \"t\": -1.25}")

static int s_open(ig_error *err)
{
    ig_index *x = NULL;
    int rc = ig_index_open(&x, dir, err);
    ig_index_close(&x);
    return rc;
}

/* Two copies of the index composed, less a third: every document is looked up. */
static int s_compose(ig_error *err)
{
    ig_index *x = NULL;
    ig_index_member_spec m[2] = {{"a", dir}, {"b", dir}}, t = {"t", dir};
    int rc = ig_index_open_composed(&x, m, 2, &t, 1, err);
    if (!rc && ig_count(x, (const uint8_t *)"the", 3) != 4)
        rc = ig_error_set(err, IG_EINTERNAL, "a composition counts wrong");
    ig_index_close(&x);
    return rc;
}

static int s_cnf(ig_error *err)
{
    static const char q[] = "(\"a\" OR \"b\") AND \"c\" AND (\"d\" OR \"e\" OR \"f\")";
    ig_cnf *c = NULL;
    int rc = ig_cnf_parse((const uint8_t *)q, sizeof q - 1, &c, NULL, err);
    ig_cnf_free(&c);
    return rc;
}

static const char *const docs[] = {"the cat sat on the mat.\nthe dog sat on the log.\n", "A cat and a dog.\n"};

/* Builds the two documents into d, in this process. */
static int build_docs(const char *d, ig_error *err)
{
    ig_source src[2];
    for (int i = 0; i < 2; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = docs[i], .text_len = strlen(docs[i])};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    int rc = ig_build_index(d, src, 2, NULL, &bo, NULL, NULL, NULL, &res, err);
    if (!rc)
        ig_build_result_free(&res);
    return rc;
}

static int s_build(ig_error *err)
{
    char d[80];
    snprintf(d, sizeof d, "%s-b", dir);
    int rc = build_docs(d, err);
    if (!rc) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", d);
        armed = 0; /* the shell's allocations are not the library's */
        rc = system(cmd) == 0 ? 0 : ig_error_set(err, IG_EIO, "cannot remove %s", d);
        armed = 1;
    }
    return rc;
}

/* A build decontaminated against an eval set (read, cut into n-grams, each document tested). */
static int s_decontam(ig_error *err)
{
    char d[80], ev[80];
    snprintf(d, sizeof d, "%s-dc", dir);
    snprintf(ev, sizeof ev, "%s-eval.txt", dir);
    ig_source src[2];
    for (int i = 0; i < 2; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = docs[i], .text_len = strlen(docs[i])};
    ig_decontam_options dc;
    ig_decontam_options_default(&dc);
    dc.eval_path = ev;
    dc.n = 2;
    dc.lowercase = 1;
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.decontam = &dc;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    int rc = ig_build_index(d, src, 2, &in, &bo, NULL, NULL, NULL, &res, err);
    if (!rc) {
        ig_build_result_free(&res);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", d);
        armed = 0;
        rc = system(cmd) == 0 ? 0 : ig_error_set(err, IG_EIO, "cannot remove %s", d);
        armed = 1;
    }
    return rc;
}

static int s_catalog(ig_error *err)
{
    char home[80];
    snprintf(home, sizeof home, "%s-home", dir);
    ig_catalog *c = NULL;
    int rc = ig_catalog_open(&c, home, err);
    ig_dataset *list = NULL;
    size_t n = 0;
    if (!rc)
        rc = ig_catalog_list(c, &list, &n, err);
    if (!rc)
        ig_dataset_list_free(list, n);
    ig_catalog_close(&c);
    return rc;
}

/* The index reopened, so that every run starts with its lazily built tables cold. */
static void reopen(void)
{
    ig_error err;
    ig_index_close(&idx);
    if (ig_index_open(&idx, dir, &err))
        fprintf(stderr, "reopen: %s\n", err.msg);
}

/* Runs f with the k-th allocation failing (0: none), then closes the index and reports
 * the blocks allocated during the run that are still allocated. */
static long leaked_runs; /* runs of the current sweep that left blocks allocated */

static int run_once(const char *name, scenario f, long k, ig_error *err)
{
    reopen();
    calls = 0;
    fail_at = k;
    memset(err, 0, sizeof *err);
    armed = 1;
    int rc = f(err);
    armed = 0;
    ig_index_close(&idx);
    if (nlive) {
        size_t shown = 0;
        for (size_t i = 0; i < LIVE_SLOTS && shown < 3; i++)
            if (live[i].p) {
                fprintf(stderr, "%s: allocation %ld failing: a block of %zu bytes is never freed\n", name, k, live[i].n);
                if (tracing)
                    backtrace_symbols_fd(live[i].where, 6, 2);
                shown++;
            }
        CHECK(0, "%s: allocation %ld failing leaves %zu blocks allocated", name, k, nlive);
        leaked_runs++;
        for (size_t i = 0; i < LIVE_SLOTS; i++)
            live[i].p = NULL;
        nlive = 0;
    }
    reopen();
    return rc;
}

static void sweep(const char *name, scenario f)
{
    ig_error err;
    /* warm-up: one-time caches of the process (SQLite's, the C library's) are not leaks */
    armed = 0;
    CHECK(f(&err) == 0, "%s: runs without faults: %s", name, err.msg);
    CHECK(f(&err) == 0, "%s: runs twice", name);
    leaked_runs = 0;
    run_once(name, f, 0, &err);
    long n = calls;
    long failures = 0, absorbed = 0;
    for (long k = 1; k <= n; k++) {
        int rc = run_once(name, f, k, &err);
        if (rc == 0) {
            absorbed++;
        } else {
            failures++;
            CHECK(rc == IG_ENOMEM && err.code == IG_ENOMEM && strstr(err.msg, "memory"),
                  "%s: allocation %ld of %ld: %d %s", name, k, n, rc, err.msg);
        }
    }
    free(ref_json);
    ref_json = NULL;
    printf("%-10s %5ld allocations: %ld failed cleanly, %ld absorbed; %ld runs left blocks allocated\n", name, n, failures,
           absorbed, leaked_runs);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ig-test-nomem-%ld", (long)getpid());
    if (!(live = __libc_calloc(LIVE_SLOTS, sizeof *live)))
        return 1;
    if (getenv("IG_NOMEM_TRACE")) {
        void *w[2];
        backtrace(w, 2); /* loads what backtrace needs before any allocation is tracked */
        tracing = 1;
    }
    ig_error err;
    if (build_docs(dir, &err) || ig_index_open(&idx, dir, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 1;
    }
    sweep("open", s_open);
    sweep("count", s_count);
    sweep("predict", s_predict);
    sweep("prob", s_prob);
    sweep("backoff", s_backoff);
    sweep("spans", s_spans);
    sweep("search", s_search);
    sweep("doc", s_doc);
    sweep("generate", s_generate);
    sweep("explain", s_explain);
    sweep("mix", s_mix);
    sweep("contam", s_contam);
    {
        char ev[80];
        snprintf(ev, sizeof ev, "%s-eval.txt", dir);
        FILE *f = fopen(ev, "w");
        if (f) {
            fputs("A cat and a dog.\nnothing here\n", f);
            fclose(f);
        }
        sweep("decontam", s_decontam);
        unlink(ev);
    }
    sweep("compose", s_compose);
    sweep("cnf", s_cnf);
    sweep("build", s_build);
    sweep("catalog", s_catalog);
    ig_index_close(&idx);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %.60s %.60s-home %.60s-b", dir, dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return check_done("nomem");
}
#endif
