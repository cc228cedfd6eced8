/* Fuzz target: attaching a token index in the infini-gram layout, and the token queries over
 * what attach accepts. A valid index of two u16 shards (v4 names) is written once; each input
 * is a list of edits, 6 bytes each: file (1 byte, modulo the five files), shard (1 byte, modulo
 * 2), then either a byte set (offset: 3 bytes little-endian, modulo the file's size; the new
 * byte) or — when the file byte's top bit is set — a new size (3 bytes, modulo twice the size,
 * zeros past the end). The edited directory is attached; if attach accepts it, count, predict
 * (∞-gram and interpolation), prob, spans, eval, generate and doc run through the typed
 * operations. Then, for an input with table edits, a next-token table of what attach accepted
 * is written (every context seen once or more) and edited — edits whose file byte is 5 modulo 6
 * set a byte of the table, or with the top bit its size, as above — and, when it is accepted, every histogram it gives
 * must equal the one computed without it, and the token predictions run again. Nothing may
 * crash or read outside the mappings (ASan); a corruption may only ever be an error or an
 * answer, and a damaged table never a different answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "infinigram/infinigram.h"
#include "infinigram/generate.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "util/util.h"
#include "index/index_impl.h"
#include "../oracle/official_writer.h"

static const char *const files[] = {"tokenized", "table", "offset", "metadata", "metaoff"};
#define NFILES 5
#define NEDIT (NFILES + 1) /* the index's files, then the next-token table */
static uint8_t *orig[2][NFILES];
static size_t orig_len[2][NFILES];
static char base[160], work[160];

static void setup(void)
{
    snprintf(base, sizeof base, "%s/tokens", fuzz_tmpdir());
    snprintf(work, sizeof work, "%s/tokens-work", fuzz_tmpdir());
    /* 40 documents over a small vocabulary, ids above 255 among them */
    static uint32_t ids[40][30];
    official_doc docs[40];
    uint64_t x = 7;
    for (int d = 0; d < 40; d++) {
        size_t len = 1 + (size_t)(d * 7 % 30);
        for (size_t i = 0; i < len; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            ids[d][i] = (uint32_t)(x >> 33) % 5 + ((x >> 60) & 1) * 300;
        }
        docs[d] = (official_doc){ids[d], len};
    }
    official_opts o = {.token_width = 2, .ptr_width = 0, .layout = OFFICIAL_V4, .shards = 2, .metadata = true};
    ig_error e;
    if (official_write(base, docs, 40, &o, &e))
        abort();
    igi_mkdir_p(work, &e);
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++) {
            char p[256];
            snprintf(p, sizeof p, "%s/%s.%d", base, files[f], s);
            char *data;
            size_t n;
            if (igi_read_file(p, SIZE_MAX, &data, &n, &e))
                abort();
            orig[s][f] = (uint8_t *)data;
            orig_len[s][f] = n;
        }
}


/* Writes idx's next-token table, applies the input's table edits, and puts it to use when it is
 * still accepted: then each one-token histogram must be the one computed without it. */
static void check_table(ig_index *idx, const uint8_t *data, size_t size)
{
    int edits = 0; /* a table is written (and fsynced: slow) only for inputs that edit it */
    for (size_t i = 0; i + 6 <= size; i += 6)
        edits += (data[i] & 0x7F) % NEDIT == NFILES;
    if (!edits)
        return;
    char tab[256];
    snprintf(tab, sizeof tab, "%s/next.tab", fuzz_tmpdir());
    ig_error e;
    if (ig_next_table_write(idx, tab, 1, NULL, NULL, &e)) {
        if (!e.msg[0])
            abort();
        return;
    }
    char *t;
    size_t n;
    if (igi_read_file(tab, SIZE_MAX, &t, &n, &e))
        abort();
    uint8_t *b = calloc(2 * n + 1, 1);
    memcpy(b, t, n);
    free(t);
    size_t len = n;
    for (size_t i = 0; i + 6 <= size; i += 6) {
        if ((data[i] & 0x7F) % NEDIT != NFILES)
            continue;
        size_t v = (size_t)data[i + 2] | (size_t)data[i + 3] << 8 | (size_t)data[i + 4] << 16;
        if (data[i] & 0x80)
            len = v % (2 * n + 1);
        else if (len)
            b[v % len] = data[i + 5];
    }
    fuzz_put(tab, b, len);
    free(b);
    if (ig_next_table_use(idx, tab, NULL, &e)) {
        if (!e.msg[0])
            abort();
        return;
    }
    ig_range r[2];
    static const uint32_t ids[] = {0, 1, 2, 3, 4, 300, 301, 302, 65535};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        uint8_t p[2] = {(uint8_t)ids[k], (uint8_t)(ids[k] >> 8)};
        ig_find(idx, p, 2, r);
        for (int by_count = 0; by_count < 2; by_count++) {
            ig_token_count *a = NULL, *x = NULL;
            size_t na = 0, nx = 0;
            int ra = igi_token_hist(idx, r, 2, by_count, &a, &na, &e);
            if (ra && !e.msg[0])
                abort();
            if (!ra && !igi_token_hist_exact(idx, r, 2, &x, &nx, &e)) {
                if (by_count)
                    qsort(x, nx, sizeof *x, igi_token_count_cmp);
                if (na != nx)
                    abort(); /* a table gave another histogram than the index */
                for (size_t i = 0; i < na; i++)
                    if (a[i].id != x[i].id || a[i].count != x[i].count)
                        abort();
                /* the symbols predict borrows: the same tokens and counts, each probability count ÷ Σ */
                const ig_symbol *sy;
                size_t ns;
                int served;
                uint64_t total = 0;
                for (size_t i = 0; i < nx; i++)
                    total += x[i].count;
                if (by_count && !igi_next_table_syms(idx, r, 2, &sy, &ns, &served, &e) && served) {
                    if (ns != nx)
                        abort();
                    for (size_t i = 0; i < ns; i++)
                        if (ig_token_at(sy[i].bytes, 2) != x[i].id || sy[i].len != 2 || sy[i].count != x[i].count ||
                            sy[i].prob != (double)x[i].count / (double)total)
                            abort();
                }
            }
            free(a);
            free(x);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base[0])
        setup();
    uint8_t *cur[2][NFILES];
    size_t len[2][NFILES];
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++) {
            len[s][f] = orig_len[s][f];
            cur[s][f] = malloc(2 * orig_len[s][f] + 1);
            memset(cur[s][f], 0, 2 * orig_len[s][f] + 1);
            memcpy(cur[s][f], orig[s][f], orig_len[s][f]);
        }
    for (size_t i = 0; i + 6 <= size; i += 6) {
        int f = (data[i] & 0x7F) % NEDIT, s = data[i + 1] % 2;
        if (f == NFILES)
            continue; /* the table's edits: applied once it is written */
        size_t v = (size_t)data[i + 2] | (size_t)data[i + 3] << 8 | (size_t)data[i + 4] << 16;
        if (data[i] & 0x80) { /* a new size: cut, or zeros added */
            len[s][f] = v % (2 * orig_len[s][f] + 1);
            continue;
        }
        if (len[s][f])
            cur[s][f][v % len[s][f]] = data[i + 5];
    }
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < NFILES; f++) {
            char p[256];
            snprintf(p, sizeof p, "%s/%s.%d", work, files[f], s);
            fuzz_put(p, cur[s][f], len[s][f]);
            free(cur[s][f]);
        }
    ig_index *idx = NULL;
    ig_error err;
    if (ig_index_attach(&idx, work, NULL, &err) == 0) {
        ig_op_ctx ctx = {idx, "fuzz", NULL};
        static const char *const q1[] = {"ids", "0,1", "positions", "5", NULL};
        static const char *const q2[] = {"ids", "300,65535", "positions", "3", NULL};
        static const char *const q3[] = {"ids", "2", NULL};
        static const char *const q4[] = {"ids", "1,301,2", "interp", "2", NULL};
        static const char *const q5[] = {"ids", "0,1,2,3", "weighted", "linear", NULL};
        static const char *const q6[] = {"query", "3", NULL};
        static const char *const q7[] = {"ids", "0,1,2,3,4,300,301,0,1", "min_len", "1", NULL};
        static const char *const q8[] = {"ids", "0,1,2,300,4,1", NULL};
        static const char *const q9[] = {"ids", "1", "max", "20", "seed", "3", NULL};
        static const char *const q10[] = {"ids", "1,2", "next_ids", "3,4", NULL};
        fuzz_run_op(&ig_op_count, &ctx, q1);
        fuzz_run_op(&ig_op_count, &ctx, q2);
        fuzz_run_op(&ig_op_predict, &ctx, q3);
        fuzz_run_op(&ig_op_predict, &ctx, q4);
        fuzz_run_op(&ig_op_predict, &ctx, q5);
        fuzz_run_op(&ig_op_doc, &ctx, q6);
        fuzz_run_op(&ig_op_spans, &ctx, q7);
        fuzz_run_op(&ig_op_eval, &ctx, q8);
        fuzz_run_op(&ig_op_generate, &ctx, q9);
        fuzz_run_op(&ig_op_prob, &ctx, q10);
        check_table(idx, data, size);
        fuzz_run_op(&ig_op_predict, &ctx, q3);
        fuzz_run_op(&ig_op_predict, &ctx, q4);
        fuzz_run_op(&ig_op_generate, &ctx, q9);
        ig_index_close(&idx);
    } else if (!err.msg[0]) {
        abort();
    }
    return 0;
}
