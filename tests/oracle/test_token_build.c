/*
 * Oracle for token datasets of our own (ig_token_options): random id corpora (u16 and u32 ids
 * in the file; vocabularies small, above 255 and above 65,535 so that every stored width is
 * met; with and without a vocabulary file) are written as flat id arrays or JSONL, built with
 * ig_build_index (one or several shards, one to three jobs), opened as an index of tokens,
 * and every answer is checked against brute force over the id sequences with
 * test_tokens.c's checks: counts and positions, every model's distributions, backoff,
 * search, explain, mix, seeded generation, spans and eval. Then hostile inputs: an odd byte
 * count, an id beyond the vocabulary, a missing separator, bad JSONL, a field of the wrong
 * type, a missing file and a corrupted index give errors naming the file and the offset or
 * line, and a failed build leaves nothing behind.
 */
#define TEST_TOKENS_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "test_tokens.c"
#pragma GCC diagnostic warning "-Wunused-function"
#include "index/build_tokens.h"

#include <fcntl.h>

static void put_id(FILE *f, uint32_t id, uint32_t w)
{
    uint8_t b[4] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), (uint8_t)(id >> 24)};
    fwrite(b, 1, w, f);
}

/* The corpus as a flat array of w-byte ids, each document followed by `sep`. */
static void write_ids(const corpus *c, const char *path, uint32_t w, uint32_t sep)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    for (size_t d = 0; d < c->ndocs; d++) {
        for (size_t i = 0; i < c->len[d]; i++)
            put_id(f, c->doc[d][i], w);
        put_id(f, sep, w);
    }
    fclose(f);
}

/* The corpus as JSONL records {"toks": [...]}, with a blank line now and then (skipped). */
static void write_jsonl(const corpus *c, const char *path, test_rng *r)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    for (size_t d = 0; d < c->ndocs; d++) {
        if (rng_below(r, 4) == 0)
            fputs("\n", f);
        fputs("{\"n\": 1, \"toks\": [", f);
        for (size_t i = 0; i < c->len[d]; i++)
            fprintf(f, "%s%" PRIu32, i ? ", " : "", c->doc[d][i]);
        fputs("]}\n", f);
    }
    fclose(f);
}

/* A vocabulary of V ids as a JSON array of strings. */
static void write_vocab(const char *path, uint32_t V)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs("[", f);
    for (uint32_t i = 0; i < V; i++)
        fprintf(f, "%s\"t%" PRIu32 "\"", i ? "," : "", i);
    fputs("]", f);
    fclose(f);
}

static int build(const char *dir, const char *src, const ig_token_options *to, uint64_t shard, int jobs, ig_error *e)
{
    igi_remove_tree(dir, NULL);
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.tokens = to;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.shard_size = shard;
    bo.jobs = jobs;
    ig_source s = {.kind = IG_SOURCE_FILE, .path = src};
    ig_build_result res;
    int rc = ig_build_index(dir, &s, 1, &in, &bo, NULL, NULL, NULL, &res, e);
    if (!rc)
        ig_build_result_free(&res);
    return rc;
}

/* Documents: their tokens, the source they are named by and their number in it. */
static void check_built_docs(const corpus *c, ig_index *idx, const char *src, const char *what)
{
    for (size_t d = 0; d < c->ndocs; d++) {
        ig_doc info;
        int rc = ig_doc_get(idx, d, &info, NULL);
        CHECK(rc == 0 && info.length == c->len[d] * c->tw, "%s: doc %zu length", what, d);
        if (rc)
            continue;
        CHECK(!strcmp(info.name, src), "%s: doc %zu is named %s", what, d, info.name);
        size_t n = (size_t)info.length;
        const uint8_t *t = ig_text(idx, info.shard, info.start, &n);
        int same = n == c->len[d] * c->tw;
        for (size_t i = 0; same && i < c->len[d]; i++)
            same = ig_token_at(t + i * c->tw, c->tw) == c->doc[d][i];
        CHECK(same, "%s: doc %zu tokens", what, d);
    }
}

static void oracle_build_cases(const char *tmp)
{
    test_rng r = {20261127};
    char dir[512], src[512], vocab[512];
    snprintf(dir, sizeof dir, "%s/idx", tmp);
    snprintf(vocab, sizeof vocab, "%s/vocab.json", tmp);
    int cases = scaled(24);
    for (int k = 0; k < cases; k++) {
        /* vocabularies: below 256 (stored u8), above 255 (u16), above 65,535 (u32) */
        int kind = k % 3;
        uint32_t V = kind == 0 ? 2 + (uint32_t)rng_below(&r, 250) : kind == 1 ? 256 + (uint32_t)rng_below(&r, 700)
                                                                                 : 65536 + (uint32_t)rng_below(&r, 9000);
        int with_vocab = rng_below(&r, 2), jsonl = rng_below(&r, 3) == 0;
        uint32_t dtype = kind == 2 || rng_below(&r, 2) ? 4 : 2;
        corpus c;
        random_corpus(&c, &r, 0, V, 1 + rng_below(&r, 12));
        if (kind == 2) /* ids of the whole range, so that u32 is what they need */
            for (size_t d = 0; d < c.ndocs; d++)
                for (size_t i = 0; i < c.len[d]; i++)
                    if (rng_below(&r, 3) == 0)
                        c.doc[d][i] = V - 1 - (uint32_t)rng_below(&r, 50);
        uint32_t maxid = 0;
        for (size_t d = 0; d < c.ndocs; d++)
            for (size_t i = 0; i < c.len[d]; i++)
                maxid = c.doc[d][i] > maxid ? c.doc[d][i] : maxid;
        uint64_t span = with_vocab ? V : (uint64_t)maxid + 1;
        c.tw = span <= 255 ? 1 : span <= 65535 ? 2 : 4;
        uint32_t sep = dtype == 2 ? 65535 : (rng_below(&r, 2) ? UINT32_MAX : V + (uint32_t)rng_below(&r, 5));
        ig_token_options to = {.format = jsonl ? IG_TOKENS_JSONL_IDS : IG_TOKENS_IDS, .dtype = dtype, .separator = sep,
                               .field = "toks", .vocab = with_vocab ? vocab : NULL};
        snprintf(src, sizeof src, "%s/src.%s", tmp, jsonl ? "jsonl" : "ids");
        if (jsonl)
            write_jsonl(&c, src, &r);
        else
            write_ids(&c, src, dtype, sep);
        if (with_vocab)
            write_vocab(vocab, V);
        uint64_t shard = rng_below(&r, 2) ? 0 : 16 + rng_below(&r, 200);
        int jobs = 1 + (int)rng_below(&r, 3);
        char what[160];
        snprintf(what, sizeof what, "build case %d (V %u, %s u%u, %s vocabulary, stored u%u, shard %" PRIu64 ", %d jobs, %zu docs)",
                 k, V, jsonl ? "jsonl" : "ids", dtype * 8, with_vocab ? "with" : "no", c.tw * 8, shard, jobs, c.ndocs);
        ig_error e;
        int rc = build(dir, src, &to, shard, jobs, &e);
        CHECK(rc == 0, "%s: build: %s", what, e.msg);
        ig_index *idx = NULL;
        ig_attach_options ao = {.vocab = with_vocab ? vocab : NULL};
        if (!rc) {
            CHECK((rc = igi_tokens_verify_files(dir, 0, &e)) == 0, "%s: verify: %s", what, e.msg);
            rc = ig_index_attach(&idx, dir, &ao, &e);
            CHECK(rc == 0, "%s: open: %s", what, e.msg);
        }
        if (!rc) {
            CHECK(ig_index_token_width(idx) == c.tw, "%s: stored width %u", what, ig_index_token_width(idx));
            CHECK(ig_vocab_size(idx) == (with_vocab ? V : 0), "%s: vocabulary size", what);
            /* the bytes a token takes on disk: its id, a pointer, no more than 7 below 4 GiB for u16 */
            uint64_t tokens = 0;
            for (size_t d = 0; d < c.ndocs; d++)
                tokens += c.len[d] + 1;
            ig_index_info info;
            ig_index_get_info(idx, &info);
            CHECK(info.bytes == tokens * c.tw, "%s: %" PRIu64 " bytes of tokens", what, info.bytes);
            check_queries(&c, idx, &r, V, what);
            check_built_docs(&c, idx, src, what);
        }
        ig_index_close(&idx);
        corpus_free(&c);
    }
}

/* A memory budget too small for one shard: the build splits the documents into shards that
 * fit it, and the answers are the same. */
static void memory_case(const char *tmp)
{
    test_rng r = {99};
    corpus c;
    random_corpus(&c, &r, 2, 600, 40);
    for (size_t d = 0; d < c.ndocs; d++) { /* 40 documents of 20,000 tokens: 1.6 MB of u16 */
        free(c.doc[d]);
        c.len[d] = 20000;
        c.doc[d] = malloc(c.len[d] * sizeof *c.doc[d]);
        for (size_t i = 0; i < c.len[d]; i++)
            c.doc[d][i] = 256 + (uint32_t)rng_below(&r, rng_below(&r, 2) ? 4 : 300);
    }
    char dir[512], src[512];
    snprintf(dir, sizeof dir, "%s/mem", tmp);
    snprintf(src, sizeof src, "%s/mem.u16", tmp);
    write_ids(&c, src, 2, 65535);
    igi_remove_tree(dir, NULL);
    ig_token_options to = {.format = IG_TOKENS_IDS, .dtype = 2, .separator = 65535};
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.tokens = &to;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.memory = 8u << 20; /* less the 3.2 MB of ids held, room for 0.24 MB a shard: the 1 MiB floor */
    bo.jobs = 2;
    ig_source s = {.kind = IG_SOURCE_FILE, .path = src};
    ig_build_result res;
    ig_error e;
    int rc = ig_build_index(dir, &s, 1, &in, &bo, NULL, NULL, NULL, &res, &e);
    CHECK(rc == 0, "memory budget: build: %s", e.msg);
    if (!rc) {
        CHECK(res.shards >= 2 && res.memory_limited && res.largest_shard <= (1u << 20),
              "memory budget: %u shards, largest %" PRIu64 " bytes, limited %d", res.shards, res.largest_shard,
              res.memory_limited);
        ig_build_result_free(&res);
        ig_index *idx = NULL;
        CHECK((rc = ig_index_attach(&idx, dir, NULL, &e)) == 0, "memory budget: open: %s", e.msg);
        if (!rc) {
            check_counts(&c, idx, &r, 600, "memory budget");
            check_built_docs(&c, idx, src, "memory budget");
        }
        ig_index_close(&idx);
    }
    corpus_free(&c);
}

/* A build that must fail with a message holding every needle, and leave no directory. */
static void expect_build_error(const char *tmp, const char *src, const ig_token_options *to, const char *n1,
                               const char *n2, const char *what)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bad", tmp);
    ig_error e = {0};
    int rc = build(dir, src, to, 0, 2, &e);
    CHECK(rc != 0, "%s: the build succeeded", what);
    CHECK(rc == 0 || (strstr(e.msg, n1) && (!n2 || strstr(e.msg, n2))), "%s: message \"%s\" names %s%s%s", what,
          e.msg, n1, n2 ? " and " : "", n2 ? n2 : "");
    CHECK(access(dir, F_OK) != 0, "%s: the failed build left %s", what, dir);
}

static void write_bytes(const char *path, const char *p, size_t n) { write_file(path, p, n); }

static void hostile_build_cases(const char *tmp)
{
    char p[512], v[512];
    ig_token_options ids16 = {.format = IG_TOKENS_IDS, .dtype = 2, .separator = 65535};
    /* an odd byte count: the bytes left over are named by offset */
    snprintf(p, sizeof p, "%s/odd.u16", tmp);
    write_bytes(p, "\x05\x00\x06\x00\xff\xff\x07", 7);
    expect_build_error(tmp, p, &ids16, "odd.u16", "byte offset 6", "odd byte count");
    /* the last document without its separator */
    snprintf(p, sizeof p, "%s/nosep.u16", tmp);
    write_bytes(p, "\x05\x00\xff\xff\x07\x00\x08\x00", 8);
    expect_build_error(tmp, p, &ids16, "nosep.u16", "byte offset 4", "missing separator");
    /* an empty file */
    snprintf(p, sizeof p, "%s/empty.u16", tmp);
    write_bytes(p, "", 0);
    expect_build_error(tmp, p, &ids16, "empty.u16", "empty", "empty file");
    /* an id beyond the vocabulary (3 ids): named with its offset */
    snprintf(v, sizeof v, "%s/v3.json", tmp);
    write_bytes(v, "[\"a\",\"b\",\"c\"]", 13);
    snprintf(p, sizeof p, "%s/big.u16", tmp);
    write_bytes(p, "\x01\x00\xff\xff\x02\x00\x03\x00\xff\xff", 10);
    ig_token_options withv = ids16;
    withv.vocab = v;
    expect_build_error(tmp, p, &withv, "big.u16", "byte offset 6", "id beyond the vocabulary");
    /* u32: the separator must be what ends the file */
    ig_token_options ids32 = {.format = IG_TOKENS_IDS, .dtype = 4, .separator = 7};
    snprintf(p, sizeof p, "%s/t.u32", tmp);
    write_bytes(p, "\x01\x00\x00\x00\x07\x00\x00\x00\x02\x00\x00\x00", 12);
    expect_build_error(tmp, p, &ids32, "t.u32", "separator 7", "u32 missing separator");
    /* an id of 2^32 − 1 in a u32 file where it is not the separator: no width holds it */
    write_bytes(p, "\xff\xff\xff\xff\x07\x00\x00\x00", 8);
    expect_build_error(tmp, p, &ids32, "t.u32", "byte offset 0", "id 2^32-1");
    /* JSONL: bad JSON, no field, a field of the wrong type, an item that is not an id */
    ig_token_options jl = {.format = IG_TOKENS_JSONL_IDS, .field = "ids"};
    snprintf(p, sizeof p, "%s/bad.jsonl", tmp);
    write_bytes(p, "{\"ids\": [1, 2]}\n{\"ids\": [1,\n", 28);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "line 2", "bad JSON");
    write_bytes(p, "{\"ids\": [1, 2]}\n\n{\"other\": [1]}\n", 32);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "line 3", "no field");
    write_bytes(p, "{\"ids\": \"1 2\"}\n", 15);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "not an array", "field of the wrong type");
    write_bytes(p, "{\"ids\": [1, -2]}\n", 17);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "item 1", "negative id");
    write_bytes(p, "{\"ids\": [1, 2.5]}\n", 18);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "item 1", "fractional id");
    write_bytes(p, "[1, 2]\n", 7);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "JSON object", "a record that is no object");
    jl.vocab = v;
    write_bytes(p, "{\"ids\": [0, 1, 2, 3]}\n", 22);
    expect_build_error(tmp, p, &jl, "bad.jsonl", "beyond the vocabulary", "JSONL id beyond the vocabulary");
    /* a missing source, a missing vocabulary, a vocabulary that is not one */
    snprintf(p, sizeof p, "%s/missing.u16", tmp);
    expect_build_error(tmp, p, &ids16, "missing.u16", NULL, "missing source");
    snprintf(p, sizeof p, "%s/odd.u16", tmp);
    ig_token_options nov = ids16;
    snprintf(v, sizeof v, "%s/nothing.json", tmp);
    nov.vocab = v;
    expect_build_error(tmp, p, &nov, "nothing.json", NULL, "missing vocabulary");
    snprintf(v, sizeof v, "%s/garbage.model", tmp);
    write_bytes(v, "\x01\x02garbage", 9);
    nov.vocab = v;
    expect_build_error(tmp, p, &nov, "garbage.model", NULL, "a vocabulary that is neither JSON nor a model");
    ig_token_options bad = {.format = IG_TOKENS_IDS, .dtype = 3, .separator = 1};
    expect_build_error(tmp, p, &bad, "dtype 3", NULL, "dtype of 3 bytes");
    /* a built index corrupted: the manifest's checksum names the file */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/good", tmp);
    snprintf(p, sizeof p, "%s/good.u16", tmp);
    write_bytes(p, "\x05\x00\x06\x00\xff\xff\x05\x00\x07\x00\xff\xff", 12);
    ig_error e;
    CHECK(build(dir, p, &ids16, 0, 1, &e) == 0, "good build: %s", e.msg);
    CHECK(igi_tokens_verify_files(dir, 0, &e) == 0, "good verify: %s", e.msg);
    char t[600];
    snprintf(t, sizeof t, "%s/table.0", dir);
    FILE *f = fopen(t, "r+b");
    CHECK(f != NULL, "open %s", t);
    if (f) {
        int ch = fgetc(f);
        fseek(f, 0, SEEK_SET);
        fputc(ch ^ 1, f);
        fclose(f);
    }
    CHECK(igi_tokens_verify_files(dir, 0, &e) != 0 && strstr(e.msg, "table.0") && strstr(e.msg, "checksum"),
          "corrupted table: \"%s\"", e.msg);
    /* what an open checks: the files modified after the manifest, so the edit is seen (dated a
     * second later: file times are coarser than the build and the edit are apart here)... */
    char mpath[600];
    struct stat mst;
    snprintf(mpath, sizeof mpath, "%s/tokens.json", dir);
    CHECK(stat(mpath, &mst) == 0, "stat manifest");
    struct timespec later[2] = {{mst.st_mtim.tv_sec + 1, 0}, {mst.st_mtim.tv_sec + 1, 0}};
    CHECK(utimensat(AT_FDCWD, t, later, 0) == 0, "utimensat");
    CHECK(igi_tokens_verify_files(dir, 1, &e) != 0 && strstr(e.msg, "table.0") && strstr(e.msg, "modified after"),
          "an open refuses the edited table: \"%s\"", e.msg);
    /* ...and a file whose time is the manifest's is not read (damage no program made is
     * :dataset verify's to find) */
    struct timespec times[2] = {mst.st_mtim, mst.st_mtim};
    CHECK(utimensat(AT_FDCWD, t, times, 0) == 0, "utimensat");
    CHECK(igi_tokens_verify_files(dir, 1, &e) == 0, "an untouched time is not checked: \"%s\"", e.msg);
    CHECK(build(dir, p, &ids16, 0, 1, &e) == 0, "good build again: %s", e.msg);
    snprintf(t, sizeof t, "%s/offset.0", dir);
    CHECK(truncate(t, 3) == 0, "truncate");
    CHECK(igi_tokens_verify_files(dir, 0, &e) != 0 && strstr(e.msg, "offset.0"), "truncated offsets: \"%s\"", e.msg);
}

int main(void)
{
    char dir[] = "/tmp/ig-token-build-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    oracle_build_cases(dir);
    memory_case(dir);
    hostile_build_cases(dir);
    igi_remove_tree(dir, NULL);
    return check_done("token_build");
}
