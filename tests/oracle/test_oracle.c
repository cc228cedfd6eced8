/*
 * Oracle property tests of the query engine: random corpora of several shapes are
 * built three ways (one shard; many small shards; the 64-bit sorter with 5-byte
 * pointers), and thousands of random queries are answered by each index and by a
 * brute-force scan of the concatenated text. Counts, position sets, document ids,
 * offsets, lines and columns must all agree exactly. A second part does the same on
 * the bundled Tiny Shakespeare text. Fixed seeds: a failure replays identically.
 * IG_ORACLE_SCALE (default 1.0) scales the number of cases (sanitizer/valgrind runs).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oracle.h"
#include "infinigram/infinigram.h"
#include "util/util.h"
#include "index/index_impl.h"
#include "index/lcp.h"

typedef struct corpus {
    uint8_t *t;        /* all documents, each followed by 0xFF */
    size_t n;
    size_t ndocs;
    size_t *starts;    /* document start offsets, ndocs + 1 entries */
} corpus;


/* One random document of a given shape. */
static void gen_doc(test_rng *r, int shape, ig_buf *b)
{
    size_t len = shape == 3 ? 1 + rng_below(r, 3) : 1 + rng_below(r, 300);
    static const char *motif = "abracadabra ";
    for (size_t i = 0; i < len; i++) {
        switch (shape) {
        case 0: ig_buf_append(b, "ab" + rng_below(r, 2), 1); break;                 /* binary alphabet */
        case 1: ig_buf_append(b, "abcd\n" + rng_below(r, 5), 1); break;             /* small + newlines */
        case 2: put_cp(b, random_cp(r)); break; /* full UTF-8 */
        case 3: ig_buf_append(b, "xyz" + rng_below(r, 3), 1); break;                /* many tiny docs */
        default: ig_buf_append(b, motif + (i % 12), 1);                               /* repetitive */
            if (rng_below(r, 50) == 0) ig_buf_append(b, "Q", 1);
        }
    }
}

static void corpus_from_docs(corpus *c, ig_buf *docs, size_t nd)
{
    ig_buf all = {0};
    c->starts = malloc((nd + 1) * sizeof *c->starts);
    for (size_t i = 0; i < nd; i++) {
        c->starts[i] = all.len;
        ig_buf_append(&all, docs[i].data, docs[i].len);
        ig_buf_append(&all, "\xff", 1);
    }
    c->starts[nd] = all.len;
    c->t = all.data;
    c->n = all.len;
    c->ndocs = nd;
}

static size_t brute_positions(const corpus *c, const uint8_t *p, size_t m, size_t *out, size_t max)
{
    size_t k = 0;
    if (m > 1 && memchr(p, 0xFF, m - 1))
        return 0; /* would span two documents */
    for (size_t i = 0; i < c->n && i + m <= c->n; i++)
        if (!memcmp(c->t + i, p, m)) {
            if (k < max)
                out[k] = i;
            k++;
        }
    return k;
}

/* Global text offset of a position: shard offsets add up in shard order. */
static size_t global_offset(const ig_index *idx, ig_pos p, const size_t *shard_base)
{
    (void)idx;
    return shard_base[p.shard] + p.offset;
}

static void check_query(const corpus *c, ig_index **idxs, size_t **bases, int nidx,
                        const uint8_t *p, size_t m, const char *what)
{
    enum { MAXP = 64 };
    size_t want[MAXP];
    size_t cnt = brute_positions(c, p, m, want, MAXP);
    for (int v = 0; v < nidx; v++) {
        uint64_t got = ig_count(idxs[v], p, m);
        CHECK(got == cnt, "%s: variant %d count %llu, brute force %zu (m=%zu)", what, v, (unsigned long long)got, cnt, m);
        ig_pos pos[MAXP];
        uint64_t total = 0;
        size_t maxp = 1 + (size_t)(m % MAXP); /* vary K */
        size_t k = ig_positions(idxs[v], p, m, pos, maxp, &total);
        size_t expect_k = cnt < maxp ? cnt : maxp;
        CHECK(total == cnt && k == expect_k, "%s: variant %d positions k=%zu total=%llu want %zu/%zu", what, v, k,
              (unsigned long long)total, expect_k, cnt);
        ig_location prev = {0};
        for (size_t i = 0; i < k && i < expect_k; i++) {
            size_t g = global_offset(idxs[v], pos[i], bases[v]);
            CHECK(g == want[i], "%s: variant %d position %zu at %zu, want %zu", what, v, i, g, want[i]);
            ig_location loc;
            ig_error e;
            /* every other one without the previous location: the line index answers alone */
            CHECK(ig_locate(idxs[v], pos[i], i % 2 ? &prev : NULL, &loc, &e) == 0, "locate: %s", e.msg);
            /* naive document, line and column */
            size_t d = 0;
            while (c->starts[d + 1] <= want[i])
                d++;
            /* the column of the character holding the byte: the characters that start on its
             * line up to and including it (a continuation byte starts none) */
            size_t line = 1, col = 0;
            for (size_t j = c->starts[d]; j <= want[i]; j++) {
                if (j < want[i] && c->t[j] == '\n') { line++; col = 0; }
                else if ((c->t[j] & 0xC0) != 0x80) col++;
            }
            CHECK(loc.doc == d && loc.offset == want[i] - c->starts[d] && loc.line == line && loc.column == col,
                  "%s: variant %d locate doc %llu/%zu off %llu/%zu line %llu/%zu col %llu/%zu", what, v,
                  (unsigned long long)loc.doc, d, (unsigned long long)loc.offset, want[i] - c->starts[d],
                  (unsigned long long)loc.line, line, (unsigned long long)loc.column, col);
            prev = loc;
        }
    }
}


static size_t *shard_bases(const ig_index *idx)
{
    ig_index_info info;
    ig_index_get_info(idx, &info);
    size_t *b = calloc(info.shards + 1, sizeof *b);
    for (uint32_t s = 1; s <= info.shards; s++) {
        size_t len = SIZE_MAX;
        ig_text(idx, s - 1, 0, &len);
        b[s] = b[s - 1] + len;
    }
    return b;
}

static void random_queries(test_rng *r, const corpus *c, ig_index **idx, size_t **bases, int nidx, int nq)
{
    uint8_t q[128];
    for (int i = 0; i < nq; i++) {
        size_t m;
        const char *what;
        switch (rng_below(r, 6)) {
        case 0: case 1: { /* present: a substring, possibly crossing a boundary */
            m = 1 + rng_below(r, 40);
            size_t at = rng_below(r, c->n);
            if (at + m > c->n)
                m = c->n - at;
            memcpy(q, c->t + at, m);
            what = "substring";
            break;
        }
        case 2: /* near a document boundary */ {
            size_t d = rng_below(r, c->ndocs);
            size_t end = c->starts[d + 1] - 1;
            m = 1 + rng_below(r, 8);
            size_t at = end >= m ? end - m + 1 + rng_below(r, 2) : 0;
            if (at + m > c->n)
                m = c->n - at;
            memcpy(q, c->t + at, m);
            what = "boundary";
            break;
        }
        case 3: /* random bytes from the alphabet of the corpus */
            m = 1 + rng_below(r, 6);
            for (size_t j = 0; j < m; j++)
                q[j] = c->t[rng_below(r, c->n)];
            what = "random";
            break;
        case 4: /* long, mostly absent */
            m = 60 + rng_below(r, 60);
            for (size_t j = 0; j < m; j++)
                q[j] = c->t[rng_below(r, c->n)];
            what = "long";
            break;
        default: /* empty or one byte (any value) */
            m = rng_below(r, 2);
            q[0] = (uint8_t)rng_next(r);
            what = m ? "one byte" : "empty";
        }
        check_query(c, idx, bases, nidx, q, m, what);
    }
}

/* Writes a damaged index file as the disk would have damaged it: with a time no later than
 * the manifest's, so that the open does not checksum it (a file changed after the build is
 * refused at open) and the checks under test are the ones that must catch the damage. */
static void write_as_rotted(const char *dir, const char *path, const void *data, size_t len)
{
    ig_error e;
    char mpath[512];
    struct stat st;
    CHECK(igi_write_file_sync(path, data, len, &e) == 0, "write %s: %s", path, e.msg);
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    CHECK(stat(mpath, &st) == 0, "stat %s", mpath);
    struct timespec t[2] = {st.st_mtim, st.st_mtim};
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat %s", path);
}

/* Counts random substrings of c on idx (an index of dir whose `file` lies) against brute force.
 * A query that meets a lie records it, and later queries through the operations fail on that
 * record (ig_index_health): each query here runs on an index with nothing recorded yet,
 * reopened after each record, and must answer right by itself — except, when short_may_fail,
 * a pattern of one or two bytes, which may instead record the lie. At least one lie of the
 * `changed` (more than min_changed) must be met. */
static void count_lying(test_rng *r, const char *dir, const corpus *c, const char *file, int short_may_fail,
                        size_t changed, size_t min_changed)
{
    ig_error e;
    ig_index *opened = NULL, **idx = &opened;
    if (ig_index_open(idx, dir, &e)) {
        CHECK(0, "open with lying %s: %s", file, e.msg);
        return;
    }
    size_t records = 0, nq = scaled(4000);
    for (size_t i = 0; i < nq && *idx; i++) {
        size_t m = short_may_fail ? (i % 4 == 0 ? 1 + rng_below(r, 2) : 3 + rng_below(r, 30))
                                  : (i % 2 ? 1 + rng_below(r, 8) : 1 + rng_below(r, 40));
        size_t at = rng_below(r, c->n - m), pos[1];
        size_t want = brute_positions(c, c->t + at, m, pos, 1);
        uint64_t got = ig_count(*idx, c->t + at, m);
        int recorded = ig_index_health(*idx, NULL, &e) != 0;
        CHECK(got == want || (short_may_fail && m <= 2 && recorded), "lying %s: count %llu, brute force %zu (m=%zu, at %zu)",
              file, (unsigned long long)got, want, m, at);
        if (recorded) {
            CHECK(strstr(e.msg, file) != NULL, "lying %s recorded as: %s", file, e.msg);
            records++;
            ig_index_close(idx);
            if (ig_index_open(idx, dir, &e))
                CHECK(0, "reopen with lying %s: %s", file, e.msg);
        }
    }
    CHECK(changed > min_changed && records > 0, "lying %s: %zu changed, %zu met", file, changed, records);
    ig_index_close(idx);
}

/* Builds one shard of src into dir and reads its file `name` whole into *buf (NULL when
 * either fails, a check failed); *pw is the index's pointer width. */
static void built_file(const char *dir, const ig_source *src, const char *name, char **buf, size_t *len, uint32_t *pw)
{
    ig_index *idx = NULL;
    *buf = NULL;
    if (oracle_build(dir, src, 1, 1ull << 30, 0, 1, &idx))
        return;
    *pw = idx->pw;
    ig_index_close(&idx);
    char path[512];
    ig_error e;
    snprintf(path, sizeof path, "%s/shard-0000/%s", dir, name);
    CHECK(igi_read_file(path, SIZE_MAX, buf, len, &e) == 0, "read %s: %s", name, e.msg);
}

/* An index whose sampled keys lie: a third of the keys the load checks do not look at are
 * replaced by a neighbour's (still nearly in order, so the key bisections go astray without
 * noticing) or moved by one. A search checks a bracketing key only when its answer rests on
 * it, so every count must still be the brute force's, and the lying keys met must be
 * recorded as corruption. */
static void lying_keys(test_rng *r, const char *dir, const ig_source *src, const corpus *c)
{
    char path[512], *keys;
    size_t len = 0;
    uint32_t pw;
    built_file(dir, src, "sample", &keys, &len, &pw);
    if (!keys)
        return;
    snprintf(path, sizeof path, "%s/shard-0000/sample", dir);
    /* the rows the load checks (check.c): evenly spread sampled rows */
    uint64_t units = len / 8, nchecks = units < IG_CHECK_ROWS ? units : IG_CHECK_ROWS;
    uint8_t *spot = calloc(units, 1);
    for (uint64_t i = 0; i < nchecks; i++)
        spot[nchecks > 1 ? i * (units - 1) / (nchecks - 1) : 0] = 1;
    spot[units - 1] = 1;
    size_t changed = 0;
    for (uint64_t i = 1; i + 1 < units; i++) {
        if (spot[i] || i % 3)
            continue;
        switch (i / 3 % 3) {
        case 0: memcpy(keys + i * 8, keys + (i + 1) * 8, 8); break;
        case 1: memcpy(keys + i * 8, keys + (i - 1) * 8, 8); break;
        default: keys[i * 8 + 7]++; /* the eighth byte, or padding */
        }
        changed++;
    }
    free(spot);
    unlink(path);
    write_as_rotted(dir, path, keys, len);
    free(keys);
    count_lying(r, dir, c, "sample", 0, changed, 1000);
}

/* Writes shard 0's file `file` (IG_F_…) of dir as `t` and has the manifest vouch for it (and
 * for itself, rewritten whole): a crafted index, whose damage the load's checksums cannot
 * tell. The manifest must have held sum_before for it (0: not checked). */
static void write_vouched(const char *dir, int file, const char *t, size_t len, uint64_t sum_before)
{
    char path[512], mpath[512];
    ig_error e;
    snprintf(path, sizeof path, "%s/shard-0000/%s", dir, igi_shard_file_names[file]);
    unlink(path);
    CHECK(igi_write_file_sync(path, t, len, &e) == 0, "write %s: %s", path, e.msg);
    ig_manifest man;
    CHECK(igi_manifest_read(dir, &man, &e) == 0, "read manifest: %s", e.msg);
    CHECK(man.nshards >= 1 && (!sum_before || man.shards[0].files[file].checksum == sum_before),
          "the checksum of %s in the manifest", igi_shard_file_names[file]);
    man.shards[0].files[file].checksum = igi_hash_bytes(t, len);
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    unlink(mpath);
    CHECK(igi_manifest_write(dir, &man, &e) == 0, "write manifest: %s", e.msg);
    igi_manifest_free(&man);
}

/* An index whose prefix table lies: every third entry the load's order check cannot fault is
 * moved by one row, keeping the order. A pattern longer than two bytes checks only the rows its
 * answer rests on, so its count must be the brute force's whether or not it met a moved
 * entry (one that it did meet is recorded); a pattern of one or two bytes, whose answer is the
 * entry itself, checks the entry: right, or recorded. */
static void lying_prefix(test_rng *r, const char *dir, const ig_source *src, const corpus *c)
{
    char *t;
    size_t len = 0;
    uint32_t pw = 4;
    built_file(dir, src, "prefix", &t, &len, &pw);
    if (!t)
        return;
    const size_t w = pw == 4 ? 4 : 8;
    CHECK(len == (size_t)(IG_PREFIX_KEYS + 1) * w, "prefix table of %zu bytes", len);
    const uint64_t sum_before = igi_hash_bytes(t, len);
#define ENTRY(k) (w == 4 ? (uint64_t)le32toh(*(uint32_t *)(void *)(t + (size_t)(k) * 4)) \
                         : le64toh(*(uint64_t *)(void *)(t + (size_t)(k) * 8)))
    size_t changed = 0;
    for (uint32_t k = 1; k < IG_PREFIX_KEYS; k++) {
        uint64_t prev = ENTRY(k - 1), v = ENTRY(k), next = ENTRY(k + 1);
        if (k % 3 || prev == next)
            continue;
        uint64_t nv = v < next ? v + 1 : v - 1; /* stays within [prev, next] */
        if (w == 4) {
            uint32_t x = htole32((uint32_t)nv);
            memcpy(t + (size_t)k * 4, &x, 4);
        } else {
            uint64_t x = htole64(nv);
            memcpy(t + (size_t)k * 8, &x, 8);
        }
        changed++;
    }
#undef ENTRY
    write_vouched(dir, IG_F_PREFIX, t, len, sum_before);
    free(t);
    count_lying(r, dir, c, "prefix", 1, changed, 300);
}

/* An index whose stored line index lies, vouched for by a crafted manifest: from a block on,
 * every newline count is 5,000 more (so a block seems to hold more newlines than bytes). The
 * counts are checked with the checksum on first use: a location must still name the brute
 * force's line (the shard's lines are then counted from its text) and the lie is recorded. */
static void lying_lines(const char *dir, const ig_source *src, const corpus *c, int chars)
{
    char *t;
    size_t len = 0;
    uint32_t pw;
    ig_error e;
    built_file(dir, src, "lines", &t, &len, &pw);
    if (!t)
        return;
    size_t entries = len / 8, from = (entries / 2 & ~(size_t)1) + (size_t)chars;
    CHECK(entries > 8, "a line index of %zu bytes", len);
    uint64_t held = 0; /* chars: the block before `from` claims no character (its count given to none) */
    if (chars) {
        uint64_t a, b;
        memcpy(&a, t + (from - 2) * 8, 8);
        memcpy(&b, t + from * 8, 8);
        held = le64toh(b) - le64toh(a);
    }
    for (size_t k = from; k < entries; k += 2) {
        uint64_t v;
        memcpy(&v, t + k * 8, 8);
        v = htole64(chars ? le64toh(v) - held : le64toh(v) + 5000);
        memcpy(t + k * 8, &v, 8);
    }
    write_vouched(dir, IG_F_LINES, t, len, 0);
    free(t);
    ig_index *idx = NULL;
    if (ig_index_open(&idx, dir, &e)) {
        CHECK(0, "open with lying lines: %s", e.msg);
        return;
    }
    /* the first bytes of the first block whose counts lie (their lines start before it, in
     * the block before, most of them), and a byte near the end */
    size_t first = (from - chars) / 2 * IG_LINE_BLOCK, line = 1, col = 1, wrong = 0;
    for (size_t j = 0, k = 0; j < c->n - 10 && k <= 64; j++) {
        if (j >= first || j == c->n - 11) {
            ig_location loc;
            wrong += ig_locate(idx, (ig_pos){0, j}, NULL, &loc, &e) != 0 || loc.line != line || loc.column != col;
            k++;
        }
        line += c->t[j] == '\n';
        col = c->t[j] == '\n' ? 1 : col + ((c->t[j] & 0xC0) != 0x80);
    }
    CHECK(wrong == 0, "lying lines (%s): %zu of 65 positions located wrong", chars ? "characters" : "newlines", wrong);
    CHECK(ig_index_health(idx, NULL, &e) != 0 && strstr(e.msg, "lines"), "lying lines not recorded: %s", e.msg);
    ig_index_close(&idx);
}

/* An index whose lcp file is damaged where the load's spot check does not look (its top keys,
 * half its blocks of key lcps and a third of the other windows: lcps zeroed, branching bytes shifted, or both moved from
 * the next window),
 * or also in a window it checks. The file stays in use in the first case, and a search
 * meeting a damaged window must notice (its checksum) and bisect the text instead; in the
 * second the file is left unused. Either way every count is the brute force's. */
static void damaged_lcp(test_rng *r, const char *dir, const ig_source *src, const corpus *c, int spot_too)
{
    ig_index *idx = NULL;
    if (oracle_build_opts(dir, src, 1, 1ull << 30, 0, 1, 64, 1, &idx))
        return;
    ig_index_close(&idx);
    char path[512];
    snprintf(path, sizeof path, "%s/shard-0000/lcp", dir);
    char *f = NULL;
    size_t len = 0;
    ig_error e;
    CHECK(igi_read_file(path, SIZE_MAX, &f, &len, &e) == 0, "read lcp: %s", e.msg);
    if (!f)
        return;
    /* the top keys lie too: every other one is its neighbour's, or one more (the key searches
     * then start on the wrong page of keys, which must be noticed) */
    const uint64_t tb = ig_lcp_top_bytes(c->n, 64), ntop = ig_lcp_ntop(c->n, 64);
    for (uint64_t t = 1; t < ntop; t += 2) {
        if (t % 4 == 1)
            memcpy(f + t * 8, f + (t - 1) * 8, 8);
        else
            f[t * 8 + 7]++;
    }
    /* and so do half the blocks of key lcps (every lcp one more) */
    for (uint64_t b = 1; b < ig_lcp_nblocks(c->n, 64); b += 2)
        for (int i = 0; i < 4096; i += 2)
            f[tb + b * 4096 + (uint64_t)i]++;
    char *fw = f + tb + ig_lcp_keylcp_bytes(c->n, 64);
    const uint64_t rec = ig_lcp_record(64), nwin = ig_lcp_nkeys(c->n, 64), k = IG_LCP_CHECK_WINDOWS;
    uint8_t *spot = calloc(nwin, 1);
    for (uint64_t i = 0; i < k; i++)
        spot[i * (nwin - 1) / (k - 1)] = 1;
    size_t changed = 0;
    for (uint64_t w = 0; w + 1 < nwin; w++) {
        if ((spot[w] && !(spot_too && w == 8 * (nwin - 1) / (k - 1))) || (!spot[w] && w % 3))
            continue;
        uint8_t *l = (uint8_t *)fw + w * rec;
        switch (w / 3 % 3) {
        case 0: memset(l, 0, 64); break;
        case 1: for (int i = 0; i < 64; i++) l[64 + i]++; break;
        default: memcpy(l, l + rec, 128);
        }
        changed++;
    }
    free(spot);
    unlink(path);
    write_as_rotted(dir, path, f, len);
    free(f);
    if (ig_index_open(&idx, dir, &e)) {
        CHECK(0, "open with a damaged lcp file: %s", e.msg);
        return;
    }
    CHECK((idx->shards[0].lcp != NULL) == !spot_too, "a damaged lcp file %s", spot_too ? "left unused" : "in use");
    size_t nq = scaled(4000);
    for (size_t i = 0; i < nq; i++) {
        size_t m = i % 2 ? 1 + rng_below(r, 8) : 1 + rng_below(r, 40), at = rng_below(r, c->n - m);
        size_t pos[1];
        size_t want = brute_positions(c, c->t + at, m, pos, 1);
        uint64_t got = ig_count(idx, c->t + at, m);
        CHECK(got == want, "damaged lcp: count %llu, brute force %zu (m=%zu, at %zu)", (unsigned long long)got, want, m,
              at);
    }
    CHECK(changed > 1000 && ig_index_health(idx, NULL, &e) == 0, "damaged lcp: %zu windows changed", changed);
    ig_index_close(&idx);
}

int main(void)
{
    char tmpl[] = "/tmp/igoracleXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    test_rng r = {20261122};
    int ncorpora = scaled(60), shapes = 5;
    for (int ci = 0; ci < ncorpora; ci++) {
        int shape = ci % shapes;
        size_t nd = shape == 3 ? 50 + rng_below(&r, 200) : 1 + rng_below(&r, 30);
        ig_buf *docs = calloc(nd, sizeof *docs);
        ig_source *src = calloc(nd, sizeof *src);
        for (size_t i = 0; i < nd; i++) {
            gen_doc(&r, shape, &docs[i]);
            src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)docs[i].data, .text_len = docs[i].len};
        }
        corpus c;
        corpus_from_docs(&c, docs, nd);
        ig_index *idx[4] = {0};
        char d1[256], d2[256], d3[256], d4[256];
        snprintf(d1, sizeof d1, "%s/c%d-one", tmpl, ci);
        snprintf(d2, sizeof d2, "%s/c%d-shards", tmpl, ci);
        snprintf(d3, sizeof d3, "%s/c%d-wide", tmpl, ci);
        snprintf(d4, sizeof d4, "%s/c%d-lcp", tmpl, ci);
        uint64_t small = 1 + rng_below(&r, c.n / 3 + 1);
        /* windows of the lcp file from 4 to 64 rows */
        uint32_t lcp_stride = 4u << rng_below(&r, 5);
        /* one shard without a prefix table; small shards and wide pointers with one; shards with an
         * lcp file */
        if (!oracle_build(d1, src, nd, 1ull << 30, 0, 0, &idx[0]) && !oracle_build(d2, src, nd, small, 0, 1, &idx[1]) &&
            !oracle_build(d3, src, nd, small * 2, 1, 1, &idx[2]) &&
            !oracle_build_opts(d4, src, nd, rng_below(&r, 2) ? small : 1ull << 30, 0, 1, lcp_stride, 1, &idx[3])) {
            ig_index_info info;
            ig_index_get_info(idx[1], &info);
            CHECK(info.documents == nd && info.bytes == c.n, "sizes");
            ig_index_get_info(idx[2], &info);
            CHECK(info.pointer_width == 5 && info.wide_api, "wide build uses 5-byte pointers and the 64-bit API");
            CHECK(idx[3]->shards[0].lcp != NULL, "an lcp file in use (stride %u)", lcp_stride);
            size_t *bases[4] = {shard_bases(idx[0]), shard_bases(idx[1]), shard_bases(idx[2]), shard_bases(idx[3])};
            random_queries(&r, &c, idx, bases, 4, scaled(250));
            /* documents: names and lengths */
            for (size_t d = 0; d < nd; d += 1 + nd / 10) {
                ig_doc doc;
                ig_error e;
                CHECK(ig_doc_get(idx[1], d, &doc, &e) == 0 && doc.length == docs[d].len &&
                      !strcmp(doc.name, "<inline>"), "doc %zu", d);
            }
            for (int v = 0; v < 4; v++)
                free(bases[v]);
        }
        for (int v = 0; v < 4; v++)
            ig_index_close(&idx[v]);
        for (size_t i = 0; i < nd; i++)
            ig_buf_free(&docs[i]);
        free(docs);
        free(src);
        free(c.t);
        free(c.starts);
    }

    /* The bundled dataset, as a real text: one shard and 7 shards of lines. */
    char *text = NULL;
    size_t len = 0;
    ig_error e;
    if (igi_read_file(IG_DATASET_PATH, SIZE_MAX, &text, &len, &e) == 0) {
        ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = len};
        corpus c = {0};
        ig_buf one = {.data = (uint8_t *)text, .len = len};
        corpus_from_docs(&c, &one, 1);
        char d1[256], d2[256], d3[256];
        snprintf(d1, sizeof d1, "%s/shakespeare", tmpl);
        snprintf(d2, sizeof d2, "%s/shakespeare-wide", tmpl);
        snprintf(d3, sizeof d3, "%s/shakespeare-lines", tmpl);
        ig_index *idx[3] = {0};
        if (!oracle_build(d1, &src, 1, 1ull << 30, 0, 1, &idx[0]) && !oracle_build(d2, &src, 1, 1ull << 30, 1, 0, &idx[1])) {
            size_t *bases[2] = {shard_bases(idx[0]), shard_bases(idx[1])};
            random_queries(&r, &c, idx, bases, 2, scaled(1500));
            free(bases[0]);
            free(bases[1]);
        }
        /* The same text as one document per line in many shards: frequent patterns
         * (over 100k occurrences) take the thread-pool path of ig_positions. */
        {
            size_t nl = 0;
            for (size_t i = 0; i < len; i++)
                nl += text[i] == '\n';
            ig_buf *lines = calloc(nl + 1, sizeof *lines);
            ig_source *ls = calloc(nl + 1, sizeof *ls);
            size_t k = 0, st = 0;
            for (size_t i = 0; i <= len; i++)
                if (i == len || text[i] == '\n') {
                    if (i > st) {
                        ig_buf_append(&lines[k], text + st, i - st);
                        ls[k] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)lines[k].data,
                                            .text_len = lines[k].len};
                        k++;
                    }
                    st = i + 1;
                }
            corpus lc;
            corpus_from_docs(&lc, lines, k);
            if (!oracle_build(d3, ls, k, 64 * 1024, 0, 0, &idx[2])) {
                size_t *b3 = shard_bases(idx[2]);
                ig_index_info info;
                ig_index_get_info(idx[2], &info);
                CHECK(info.shards > 8, "many shards (%u)", info.shards);
                static const char *freq[] = {" ", "e", "t", "o", " the", "\xff"};
                for (size_t q = 0; q < sizeof freq / sizeof freq[0]; q++)
                    for (int rep = 0; rep < 3; rep++)
                        check_query(&lc, &idx[2], &b3, 1, (const uint8_t *)freq[q], strlen(freq[q]), "frequent, many shards");
                random_queries(&r, &lc, &idx[2], &b3, 1, scaled(500));
                free(b3);
            }
            for (size_t i = 0; i < k; i++)
                ig_buf_free(&lines[i]);
            free(lines);
            free(ls);
            free(lc.t);
            free(lc.starts);
        }
        for (int v = 0; v < 3; v++)
            ig_index_close(&idx[v]);
        char d4[256];
        snprintf(d4, sizeof d4, "%s/shakespeare-lying-keys", tmpl);
        lying_keys(&r, d4, &src, &c);
        snprintf(d4, sizeof d4, "%s/shakespeare-lying-prefix", tmpl);
        lying_prefix(&r, d4, &src, &c);
        snprintf(d4, sizeof d4, "%s/shakespeare-lying-lines", tmpl);
        lying_lines(d4, &src, &c, 0);
        snprintf(d4, sizeof d4, "%s/shakespeare-lying-chars", tmpl);
        lying_lines(d4, &src, &c, 1);
        snprintf(d4, sizeof d4, "%s/shakespeare-damaged-lcp", tmpl);
        damaged_lcp(&r, d4, &src, &c, 0);
        snprintf(d4, sizeof d4, "%s/shakespeare-damaged-lcp-spot", tmpl);
        damaged_lcp(&r, d4, &src, &c, 1);
        free(c.t);
        free(c.starts);
        free(text);
    } else {
        CHECK(0, "cannot read the bundled dataset: %s", e.msg);
    }
    igi_remove_tree(tmpl, &e);
    return check_done("oracle");
}
