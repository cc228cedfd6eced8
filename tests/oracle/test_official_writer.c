/*
 * Self-consistency of the official-layout writer (official_writer.h): random corpora with
 * every token width, pointer width (forced and minimal), layout, shard count, metadata,
 * unigram and reversed option are written, then read back with code independent of the
 * writer: tokenized holds each document behind a separator; the table is a permutation of
 * the token-aligned offsets in byte order (a prefix first); offsets point at separators;
 * metadata lines and metaoff agree; unigram counts add up; sizes match. Two hand-made
 * tables pin the order (byte order of little-endian ids, not numeric; a prefix first), and
 * bad options fail. Fixed seeds; IG_ORACLE_SCALE scales the number of cases.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "official_writer.h"

static uint64_t get_le(const uint8_t *p, int w)
{
    uint64_t v = 0;
    for (int i = 0; i < w; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Reads file `name` of shard s; NULL (with a failed check) when it cannot. */
static char *read_shard(const char *dir, const official_opts *o, size_t s, const char *name, size_t *len)
{
    char *path = official_shard_path(dir, o->layout, s, name), *data = NULL;
    ig_error e = {0};
    CHECK(path != NULL, "path");
    if (path && igi_read_file(path, SIZE_MAX, &data, len, &e) != 0) {
        CHECK(0, "%s: %s", path, e.msg);
        data = NULL;
    }
    free(path);
    return data;
}

static bool file_exists(const char *dir, const official_opts *o, size_t s, const char *name)
{
    char *path = official_shard_path(dir, o->layout, s, name);
    bool yes = path && access(path, F_OK) == 0;
    free(path);
    return yes;
}

/* Byte order of the suffixes at a and b, written out character by character (not with the
 * writer's comparison), the shorter first on a common prefix. */
static int suffix_order(const uint8_t *ds, size_t n, uint64_t a, uint64_t b)
{
    while (a < n && b < n) {
        if (ds[a] != ds[b])
            return ds[a] < ds[b] ? -1 : 1;
        a++, b++;
    }
    return a == n ? (b == n ? 0 : -1) : 1;
}

/* Checks shard s, holding documents [d0, d1). */
static void check_shard(const char *dir, const official_opts *o, const official_doc *docs, size_t d0, size_t d1,
                        size_t s)
{
    const int T = o->token_width;
    size_t ds_len, sa_len, od_len;
    uint8_t *ds = (uint8_t *)read_shard(dir, o, s, "tokenized", &ds_len);
    uint8_t *sa = (uint8_t *)read_shard(dir, o, s, "table", &sa_len);
    uint8_t *od = (uint8_t *)read_shard(dir, o, s, "offset", &od_len);
    if (!ds || !sa || !od)
        goto out;
    size_t toks = 0;
    for (size_t d = d0; d < d1; d++)
        toks += 1 + docs[d].len;
    CHECK(ds_len == toks * T, "shard %zu: tokenized %zu bytes, want %zu", s, ds_len, toks * T);
    CHECK(od_len == (d1 - d0) * 8, "shard %zu: offset %zu bytes", s, od_len);
    if (ds_len != toks * T || od_len != (d1 - d0) * 8)
        goto out;
    const int P = (int)(sa_len / toks);
    CHECK(sa_len % toks == 0, "shard %zu: table %zu bytes for %zu tokens", s, sa_len, toks);
    CHECK(P == (o->ptr_width ? o->ptr_width : official_min_ptr_width(ds_len)), "shard %zu: pointer width %d", s, P);
    if (!o->ptr_width)
        CHECK(ds_len <= (1ull << (8 * P)) && (P == 1 || ds_len > (1ull << (8 * (P - 1)))),
              "shard %zu: %d-byte pointers are not minimal for %zu bytes", s, P, ds_len);

    /* documents behind separators, at their offsets */
    const uint32_t sep = official_sep_id(T);
    for (size_t d = d0; d < d1; d++) {
        uint64_t at = get_le(od + (d - d0) * 8, 8);
        uint64_t end = d + 1 < d1 ? get_le(od + (d + 1 - d0) * 8, 8) : ds_len;
        CHECK(at < ds_len && get_le(ds + at, T) == sep, "doc %zu: offset %" PRIu64 " is not a separator", d, at);
        CHECK(end - at == (uint64_t)(1 + docs[d].len) * T, "doc %zu: %" PRIu64 " bytes", d, end - at);
        if (end - at != (uint64_t)(1 + docs[d].len) * T)
            continue;
        for (size_t i = 0; i < docs[d].len; i++) {
            uint32_t want = docs[d].ids[o->reversed ? docs[d].len - 1 - i : i];
            CHECK(get_le(ds + at + (1 + i) * T, T) == want, "doc %zu token %zu", d, i);
        }
    }

    /* the table: a permutation of the token offsets, strictly increasing suffixes */
    uint8_t *seen = calloc(toks, 1);
    CHECK(seen != NULL, "calloc");
    for (size_t r = 0; seen && r < toks; r++) {
        uint64_t p = get_le(sa + r * P, P);
        CHECK(p % T == 0 && p < ds_len && !seen[p / T], "rank %zu: pointer %" PRIu64 " misaligned, out of range or repeated", r, p);
        if (p % T == 0 && p < ds_len)
            seen[p / T] = 1;
        if (r)
            CHECK(suffix_order(ds, ds_len, get_le(sa + (r - 1) * P, P), p) < 0, "ranks %zu, %zu out of order", r - 1, r);
    }
    free(seen);

    /* metadata and metaoff */
    CHECK(file_exists(dir, o, s, "metadata") == o->metadata && file_exists(dir, o, s, "metaoff") == o->metadata,
          "shard %zu: metadata files", s);
    if (o->metadata) {
        size_t mt_len, om_len;
        char *mt = read_shard(dir, o, s, "metadata", &mt_len), *om = read_shard(dir, o, s, "metaoff", &om_len);
        if (mt && om && om_len == (d1 - d0) * 8) {
            for (size_t d = d0; d < d1; d++) {
                uint64_t at = get_le((uint8_t *)om + (d - d0) * 8, 8);
                char want[96];
                snprintf(want, sizeof want, "{\"path\": \"doc-%zu\", \"linenum\": %zu, \"metadata\": {}}\n", d, d);
                CHECK(at < mt_len && strncmp(mt + at, want, strlen(want)) == 0, "doc %zu: metadata line", d);
            }
        } else {
            CHECK(0, "shard %zu: metaoff %zu bytes", s, om_len);
        }
        free(mt);
        free(om);
    }

    /* unigram: ascending ids, counts adding up to the tokens, the separator once per document */
    CHECK(file_exists(dir, o, s, "unigram") == o->unigram, "shard %zu: unigram file", s);
    if (o->unigram) {
        size_t ug_len;
        char *ug = read_shard(dir, o, s, "unigram", &ug_len);
        uint64_t total = 0, sep_count = 0;
        long long prev = -1;
        for (char *line = ug; line && *line;) {
            unsigned long long id, cnt;
            CHECK(sscanf(line, "%llu %llu", &id, &cnt) == 2 && (long long)id > prev, "unigram line %.20s", line);
            prev = (long long)id;
            total += cnt;
            if (id == sep)
                sep_count = cnt;
            char *nl = strchr(line, '\n');
            line = nl ? nl + 1 : NULL;
        }
        CHECK(total == toks && sep_count == d1 - d0, "shard %zu: unigram total %" PRIu64 ", separators %" PRIu64, s,
              total, sep_count);
        free(ug);
    }
out:
    free(ds);
    free(sa);
    free(od);
}

/* A random corpus: n documents of ids below the separator, small alphabets so that
 * suffixes share long prefixes, now and then an empty document or an id whose bytes hold
 * 0xFF. */
static official_doc *random_docs(test_rng *r, int T, size_t n, size_t max_len)
{
    official_doc *docs = calloc(n, sizeof *docs);
    if (!docs)
        return NULL;
    uint32_t alpha = 2 + (uint32_t)rng_below(r, 6);
    for (size_t d = 0; d < n; d++) {
        size_t len = rng_below(r, 8) == 0 ? 0 : 1 + rng_below(r, max_len);
        uint32_t *ids = malloc((len ? len : 1) * sizeof *ids);
        if (!ids)
            return docs;
        for (size_t i = 0; i < len; i++) {
            uint32_t v = (uint32_t)rng_below(r, alpha);
            if (T > 1 && rng_below(r, 5) == 0) /* ids differing in the high byte, or with a 0xFF byte */
                v = (v << 8) | (rng_below(r, 2) ? 0xFF : 0);
            ids[i] = v % official_sep_id(T);
        }
        docs[d] = (official_doc){ids, len};
    }
    return docs;
}

static void free_docs(official_doc *docs, size_t n)
{
    for (size_t d = 0; docs && d < n; d++)
        free((void *)docs[d].ids);
    free(docs);
}

static void random_cases(const char *tmp, test_rng *r)
{
    static const int widths[] = {1, 2, 4};
    char dir[512];
    int k = 0;
    for (int rep = 0; rep < scaled(4); rep++)
        for (int wi = 0; wi < 3; wi++)
            for (int P = 0; P <= 5; P++)
                for (int layout = 0; layout < 2; layout++) {
                    official_opts o = {
                        .token_width = widths[wi], .ptr_width = P, .layout = layout ? OFFICIAL_V6 : OFFICIAL_V4,
                        .shards = 1 + rng_below(r, 3), .metadata = rng_below(r, 2), .unigram = rng_below(r, 2),
                        .reversed = rng_below(r, 4) == 0,
                    };
                    /* one-byte pointers hold small shards only: mostly short ones, so that
                     * both fitting and overflowing shards occur */
                    size_t n = P == 1 ? o.shards + rng_below(r, 3) : o.shards + rng_below(r, 12);
                    official_doc *docs = random_docs(r, o.token_width, n, P == 1 ? 1 + rng_below(r, 2) * 30 : 40);
                    CHECK(docs != NULL, "docs");
                    if (!docs)
                        return;
                    snprintf(dir, sizeof dir, "%s/case%d", tmp, k++);
                    ig_error e = {0};
                    uint64_t biggest = 0;
                    for (size_t s = 0; s < o.shards; s++) {
                        uint64_t bytes = 0;
                        for (size_t d = s * n / o.shards; d < (s + 1) * n / o.shards; d++)
                            bytes += (1 + docs[d].len) * (uint64_t)o.token_width;
                        if (bytes > biggest)
                            biggest = bytes;
                    }
                    int rc = official_write(dir, docs, n, &o, &e);
                    bool fits = P == 0 || P >= 2 || biggest - o.token_width < 256;
                    CHECK((rc == 0) == fits, "T=%d P=%d: rc %d (%s)", o.token_width, P, rc, e.msg);
                    if (rc == 0)
                        for (size_t s = 0; s < o.shards; s++)
                            check_shard(dir, &o, docs, s * n / o.shards, (s + 1) * n / o.shards, s);
                    free_docs(docs, n);
                }
}

/* The order pinned by hand: u16 ids 1 (bytes 01 00) and 256 (00 01) sort by bytes, 256
 * first; u8 "\x01" twice: the suffix at the end (a prefix of the other) first. */
static void fixed_cases(const char *tmp)
{
    char dir[512];
    ig_error e = {0};
    static const uint32_t one[] = {1}, big[] = {256};
    official_doc a[] = {{one, 1}, {big, 1}};
    official_opts o = {.token_width = 2, .layout = OFFICIAL_V4, .shards = 1};
    snprintf(dir, sizeof dir, "%s/fixed16", tmp);
    CHECK(official_write(dir, a, 2, &o, &e) == 0, "%s", e.msg);
    size_t len = 0;
    char *sa = read_shard(dir, &o, 0, "table", &len);
    CHECK(sa && len == 4 && memcmp(sa, "\x06\x02\x04\x00", 4) == 0, "u16 table");
    free(sa);

    official_doc b[] = {{one, 1}, {one, 1}};
    o.token_width = 1;
    snprintf(dir, sizeof dir, "%s/fixed8", tmp);
    CHECK(official_write(dir, b, 2, &o, &e) == 0, "%s", e.msg);
    sa = read_shard(dir, &o, 0, "table", &len);
    CHECK(sa && len == 4 && memcmp(sa, "\x03\x01\x02\x00", 4) == 0, "u8 table");
    free(sa);

    /* bad options and ids */
    static const uint32_t sep8[] = {255};
    official_doc c[] = {{sep8, 1}};
    CHECK(official_write(dir, c, 1, &o, &e) == -1 && strstr(e.msg, "separator"), "id 255 in u8: %s", e.msg);
    o.shards = 3;
    CHECK(official_write(dir, b, 2, &o, &e) == -1 && strstr(e.msg, "shard"), "3 shards of 2 docs: %s", e.msg);
    o.shards = 1;
    o.token_width = 3;
    CHECK(official_write(dir, b, 2, &o, &e) == -1, "width 3");
    o.token_width = 1;
    o.ptr_width = 6;
    CHECK(official_write(dir, b, 2, &o, &e) == -1, "pointer width 6");

    /* the corruption helpers */
    o.ptr_width = 0;
    char *path = official_shard_path(dir, o.layout, 0, "table");
    CHECK(path && official_flip_byte(path, 0, 0xFF, &e) == 0, "flip: %s", e.msg);
    CHECK(path && official_flip_byte(path, 99, 0xFF, &e) == -1, "flip past the end");
    CHECK(path && official_truncate(path, 3, &e) == 0, "truncate: %s", e.msg);
    sa = read_shard(dir, &o, 0, "table", &len);
    CHECK(sa && len == 3 && (uint8_t)sa[0] == (0x03 ^ 0xFF), "flipped and cut table");
    free(sa);
    free(path);
}

int main(void)
{
    char tmpl[] = "/tmp/igofficialXXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp)
        return check_done("official_writer");
    test_rng r = {20261126};
    fixed_cases(tmp);
    random_cases(tmp, &r);
    ig_error e = {0};
    CHECK(igi_remove_tree(tmp, &e) == 0, "%s", e.msg);
    return check_done("official_writer");
}
