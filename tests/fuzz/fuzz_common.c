/* See fuzz_common.h. */
#include "fuzz_common.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infinigram/infinigram.h"

const char *const fuzz_docs[3] = {
    "the cat sat on the mat.\nthe dog sat on the log.\nA cat and a dog: the end.\n",
    "ROMEO: O Romeo, Romeo! wherefore art thou Romeo?\nJULIET: Deny thy father and refuse thy name.\n",
    "caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xf0\x9f\x98\x80 the the the mat mat\n",
};

static char tmpdir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

void fuzz_rmtree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void cleanup(void)
{
    if (tmpdir[0])
        fuzz_rmtree(tmpdir);
}

const char *fuzz_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/ig-fuzz-XXXXXX");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(cleanup);
    }
    return tmpdir;
}

void fuzz_build_index(const char *dir)
{
    ig_source src[3];
    for (int i = 0; i < 3; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = fuzz_docs[i], .text_len = strlen(fuzz_docs[i])};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    bo.shard_size = 120;   /* two shards */
    bo.prefix_min = 16;    /* prefix tables and sampled keys on both */
    bo.sample_stride = 4;
    ig_build_result res;
    ig_error err;
    if (ig_build_index(dir, src, 3, NULL, &bo, NULL, NULL, NULL, &res, &err)) {
        fprintf(stderr, "fuzz: cannot build the corpus: %s\n", err.msg);
        abort();
    }
    ig_build_result_free(&res);
}

ig_catalog *fuzz_catalog(void)
{
    char home[200];
    snprintf(home, sizeof home, "%s/home", fuzz_tmpdir());
    ig_error e;
    ig_catalog *cat;
    if (ig_catalog_open(&cat, home, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        abort();
    }
    ig_source src[3];
    for (int i = 0; i < 3; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = fuzz_docs[i], .text_len = strlen(fuzz_docs[i])};
    ig_ingest_options io;
    ig_ingest_options_default(&io);
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    if (ig_catalog_add(cat, "fz", src, 3, &io, NULL, &e) ||
        ig_catalog_build(cat, "fz", &bo, NULL, NULL, NULL, &res, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        abort();
    }
    ig_build_result_free(&res);
    return cat;
}

void fuzz_run_op(const ig_op *op, const ig_op_ctx *ctx, const char *const *kv)
{
    void *o = calloc(1, op->opts_size), *r = calloc(1, op->result_size);
    ig_error e;
    op->defaults(o);
    for (; kv[0]; kv += 2) {
        const ig_field *f = ig_field_find(op->fields, kv[0], strlen(kv[0]));
        if (!f || ig_field_set_text(f, o, (const uint8_t *)kv[1], strlen(kv[1]), &e))
            abort();
    }
    if (op->run(ctx, o, r, &e) == 0) {
        char *j = op->json(ctx, o, r);
        free(j);
        op->free_result(r);
    }
    ig_fields_free(op->fields, o);
    free(o);
    free(r);
}

void fuzz_put(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(b, 1, n, f) != n))
        abort();
    fclose(f);
}
