/*
 * Allocation failure injection, as SQLite's malloc tests do it: each library call below is
 * run once to count the allocations it makes, then once more for every one of them with
 * that allocation failing. Each run must end in success (a failure the call could absorb)
 * or in IG_ENOMEM with a message — never a crash or an abort. Memory still in use after a
 * failed run (glibc's count of bytes in use, against a warm-up run) is reported per call
 * as "grew" — a hint at leaks, not a verdict: error paths also fill one-time caches
 * (IG_NOMEM_VERBOSE=1 lists each).
 *
 * malloc, calloc and realloc are replaced here (glibc lets a program interpose them, its
 * own internal calls included); the test is skipped under sanitizers, which own them.
 */
#include <errno.h>
#include <malloc.h>
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

static long calls, fail_at; /* fail the fail_at-th allocation while armed (0: none) */
static int armed;

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

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t a, size_t b) { return fail_now() ? NULL : __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }

static size_t in_use(void) { return mallinfo2().uordblks; }

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

static void sweep(const char *name, scenario f)
{
    ig_error err;
    /* warm-up: one-time caches and lazily built tables are not leaks */
    armed = 0;
    CHECK(f(&err) == 0, "%s: runs without faults: %s", name, err.msg);
    CHECK(f(&err) == 0, "%s: runs twice", name);
    size_t base = in_use();
    calls = 0;
    fail_at = 0;
    armed = 1;
    f(&err);
    armed = 0;
    long n = calls;
    long failures = 0, absorbed = 0, leaks = 0;
    for (long k = 1; k <= n; k++) {
        calls = 0;
        fail_at = k;
        memset(&err, 0, sizeof err);
        armed = 1;
        int rc = f(&err);
        armed = 0;
        if (rc == 0) {
            absorbed++;
        } else {
            failures++;
            CHECK(rc == IG_ENOMEM && err.code == IG_ENOMEM && strstr(err.msg, "memory"),
                  "%s: allocation %ld of %ld: %d %s", name, k, n, rc, err.msg);
        }
        size_t now = in_use();
        if (now != base) { /* reported, not failed: error paths also fill one-time caches */
            leaks++;
            if (getenv("IG_NOMEM_VERBOSE"))
                fprintf(stderr, "%s: allocation %ld of %ld failing: %zd more bytes in use\n", name, k, n,
                        (ssize_t)(now - base));
            base = now;
        }
    }
    free(ref_json);
    ref_json = NULL;
    printf("%-10s %5ld allocations: %ld failed cleanly, %ld absorbed, memory grew after %ld\n", name, n, failures, absorbed,
           leaks);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ig-test-nomem-%ld", (long)getpid());
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
