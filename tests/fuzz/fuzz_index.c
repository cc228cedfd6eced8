/* Fuzz target: the index loader and the query paths over a mutated index directory. The
 * input is a list of edits, 6 bytes each: file (1 byte, modulo the shard files), shard (1
 * byte, modulo 2), offset (3 bytes, little-endian, modulo the file's size), new byte. The
 * edited index is opened; if open accepts it, a fixed set of queries runs through the
 * typed operations. Nothing may crash or read outside the mappings (ASan); a corruption
 * may only ever be an error or an answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "infinigram/infinigram.h"
#include "infinigram/generate.h"
#include "infinigram/explain.h"
#include "infinigram/model.h"
#include "infinigram/query.h"

static const char *const files[] = {"text", "sa", "docs", "docmeta", "names", "prefix", "sample"};
#define NFILES 7
static uint8_t *orig[2][NFILES];
static size_t orig_len[2][NFILES];
static char base[160], work[160];

static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && len > 0 && fread(b, 1, (size_t)len, f) != (size_t)len)
        abort();
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void setup(void)
{
    snprintf(base, sizeof base, "%s/index", fuzz_tmpdir());
    snprintf(work, sizeof work, "%s/work", fuzz_tmpdir());
    fuzz_build_index(base);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp -r %s %s", base, work);
    if (system(cmd) != 0)
        abort();
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++) {
            char p[256];
            snprintf(p, sizeof p, "%s/shard-%04d/%s", base, s, files[f]);
            orig[s][f] = slurp(p, &orig_len[s][f]);
        }
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base[0])
        setup();
    /* restore, then edit */
    uint8_t *cur[2][NFILES];
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++) {
            cur[s][f] = orig[s][f] ? malloc(orig_len[s][f] ? orig_len[s][f] : 1) : NULL;
            if (cur[s][f])
                memcpy(cur[s][f], orig[s][f], orig_len[s][f]);
        }
    for (size_t i = 0; i + 6 <= size; i += 6) {
        int f = data[i] % NFILES, s = data[i + 1] % 2;
        size_t n = orig_len[s][f];
        if (!cur[s][f] || !n)
            continue;
        size_t off = ((size_t)data[i + 2] | (size_t)data[i + 3] << 8 | (size_t)data[i + 4] << 16) % n;
        cur[s][f][off] = data[i + 5];
    }
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++)
            if (cur[s][f]) {
                char p[256];
                snprintf(p, sizeof p, "%s/shard-%04d/%s", work, s, files[f]);
                fuzz_put(p, cur[s][f], orig_len[s][f]);
                free(cur[s][f]);
            }
    ig_index *idx = NULL;
    ig_error err;
    if (ig_index_open(&idx, work, &err) == 0) {
        ig_op_ctx ctx = {idx, "fuzz", NULL};
        static const char *const q1[] = {"query", "the", "positions", "5", NULL};
        static const char *const q2[] = {"query", "Romeo", "positions", "3", NULL};
        static const char *const q3[] = {"query", "t", NULL};
        static const char *const q4[] = {"query", "the cat", NULL};
        static const char *const q5[] = {"query", "", NULL};
        static const char *const q6[] = {"query", "1", NULL};
        static const char *const q7[] = {"query", "the mat sat on the log", "min_len", "3", NULL};
        static const char *const q8[] = {"query", "\"the\" AND \"mat\"", NULL};
        fuzz_run_op(&ig_op_count, &ctx, q1);
        fuzz_run_op(&ig_op_count, &ctx, q2);
        fuzz_run_op(&ig_op_predict, &ctx, q3);
        fuzz_run_op(&ig_op_predict, &ctx, q4);
        fuzz_run_op(&ig_op_predict, &ctx, q5);
        fuzz_run_op(&ig_op_doc, &ctx, q6);
        fuzz_run_op(&ig_op_spans, &ctx, q7);
        fuzz_run_op(&ig_op_search, &ctx, q8);
        ig_index_close(&idx);
    } else if (!err.msg[0]) {
        abort();
    }
    return 0;
}
