/*
 * Next-token tables of a token index: the exact next-token histogram of every frequent
 * context of one, two or three tokens, computed once and kept in a file outside the index (an
 * attached directory is another program's and read-only to us). Without it, the first
 * histogram of a context like "the" costs one bisection per distinct next token (tens of
 * thousands of them, tens of milliseconds); with it, the distribution is already in the file,
 * in the very layout of the answer, and an answer borrows it from the mapped file instead of
 * building it. Every length has the same rule: a context is held when it occurs at least
 * min_count times (and holds no separator). Then so does each of its prefixes, so the pairs are
 * found in the histograms of the single tokens and the triples in those of the pairs, at no
 * extra search.
 *
 * File layout, integers little-endian, doubles IEEE-754 binary64 little-endian:
 *   header, 64 bytes: magic "IGNEXT1\n", u32 layout version (2), u32 token width, u64
 *     fingerprint of the index's files (ig_attach_fingerprint), u64 min_count, u64 contexts K,
 *     u64 entries E, u64 rows of the index (tokens of all shards), u64 checksum of the directory;
 *   directory, K records of 56 + 16 · shards bytes, the single tokens by id, then the pairs, then
 *     the triples, each by their ids in turn: u32 first id, u32 second id, u32 tokens (1 to 3),
 *     u32 third id (ids past the context's tokens are 0), u64 occurrences c, u64 first entry, u64 entries n, u64 checksum of the
 *     context's id-order entries, u64 checksum of its symbols, then the context's suffix-array
 *     rows in each shard (u64 lo, u64 hi), so that a search for it needs no bisection — nor the
 *     pages of the index a bisection would touch first in a new process;
 *   symbols, E records of 24 bytes, each context's n most frequent first (ties by id) from byte
 *     24 · first of the region: the next id's bytes (little-endian, zero past the token width),
 *     u8 token width, 3 zero bytes, u64 count, f64 count ÷ c — the ∞-gram's probability, computed
 *     as the model computes it. On a little-endian machine this is ig_symbol's own layout, so
 *     the region is the answer of `predict` for the context (8-aligned: the header and every
 *     directory record are multiples of 8 bytes);
 *   entries, E records of 12 bytes (u32 next id, u64 count), each context's n in id order from
 *     byte 12 · first of the region: the order mixtures read.
 * The header and directory are checked when the table is put to use. The file is mapped; a
 * context's run is checked the first time it is read (checksum, order, formats, probabilities,
 * the sum of its counts against its occurrences) and trusted from then on: the table is only
 * ever replaced by a rename, never rewritten in place. Each read checks that the file still has
 * the size it had when put to use, so a table cut short under its reader is an error, not a
 * fault (one cut between that check and the read is not caught, as for the index's own mapped
 * files).
 */
#include "infinigram/tokens.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "query.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NT_MAGIC "IGNEXT1\n"
#define NT_VERSION 2
#define NT_HEADER 64
#define NT_DIRENT 56 /* then 16 bytes a shard */
#define NT_ENTRY 12
#define NT_SYM 24
#define NT_MAX_TOKENS 3 /* the longest context held */

/* The symbol records are ig_symbol's layout on a little-endian machine: an answer may point at them. */
#define NT_BORROW (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && sizeof(ig_symbol) == NT_SYM &&                       \
                   offsetof(ig_symbol, len) == 4 && offsetof(ig_symbol, count) == 8 &&                                \
                   offsetof(ig_symbol, prob) == 16 && sizeof(double) == 8)

typedef struct nt_context {
    uint32_t ntok, id[NT_MAX_TOKENS]; ///< the context: ntok (1 to 3) ids, zero past them
    uint64_t count, first, n, sum[2]; ///< sum[by_count]: of the id-order entries, of the symbols
    ig_range *r;                      ///< its rows in each shard (into ig_next_table.ranges)
    uint8_t sound[2];                 ///< [by_count]: its run was checked (atomic: readers share it)
} nt_context;

/* Directory order: single tokens first, then pairs, then triples, each kind by its ids. */
static int nt_cmp(const nt_context *a, const nt_context *b)
{
    if (a->ntok != b->ntok)
        return a->ntok < b->ntok ? -1 : 1;
    for (int i = 0; i < NT_MAX_TOKENS; i++)
        if (a->id[i] != b->id[i])
            return a->id[i] < b->id[i] ? -1 : 1;
    return 0;
}

struct ig_next_table {
    int fd;              ///< kept open to see the file's size at each read
    char *path;
    const uint8_t *map;  ///< the whole file, read-only
    uint64_t size;       ///< its size when put to use
    uint64_t syms_at, ids_at; ///< byte offsets of the symbol and id-order regions
    nt_context *ctx;     ///< the directory, in nt_cmp order
    ig_range *ranges;    ///< k × shards: each context's rows
    uint64_t k, entries;
    uint64_t min_count;
    struct ig_next_table *retired; ///< the table this one replaced: answers may still borrow from it
};

static size_t dirent_size(uint32_t nshards) { return NT_DIRENT + 16 * (size_t)nshards; }

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p) { return (uint32_t)ig_token_at(p, 4); }

uint64_t ig_next_table_min_count(const ig_index *idx)
{
    uint64_t rows = 0;
    for (uint32_t si = 0; si < idx->nshards; si++)
        rows += idx->shards[si].rows;
    uint64_t m = (rows + 1023) / 1024;
    return m < 2 ? 2 : m;
}

static uint64_t index_rows(const ig_index *idx)
{
    uint64_t rows = 0;
    for (uint32_t si = 0; si < idx->nshards; si++)
        rows += idx->shards[si].rows;
    return rows;
}

/* Appends one context's runs (h: its histogram in id order, nh entries summing to c): its
 * symbols, most frequent first, to sym and its id-order entries to ent; sums[] receives their
 * checksums (id order, symbols). */
static int put_entries(ig_buf *sym, ig_buf *ent, uint32_t tw, const ig_token_count *h, size_t nh, uint64_t c,
                       uint64_t sums[2], ig_error *err)
{
    ig_token_count *byc = malloc((nh ? nh : 1) * sizeof *byc);
    if (!byc)
        return ig_error_set(err, IG_ENOMEM, "out of memory making a next-token table");
    memcpy(byc, h, nh * sizeof *h);
    qsort(byc, nh, sizeof *byc, igi_token_count_cmp);
    int rc = 0;
    size_t at = ent->len, sat = sym->len;
    for (size_t i = 0; i < nh && !rc; i++) {
        uint8_t e[NT_ENTRY], y[NT_SYM] = {0};
        put32(e, h[i].id);
        put64(e + 4, h[i].count);
        put32(y, byc[i].id);
        y[4] = (uint8_t)tw;
        put64(y + 8, byc[i].count);
        double prob = (double)byc[i].count / (double)c; /* as the ∞-gram computes it */
        uint64_t bits;
        memcpy(&bits, &prob, sizeof bits);
        put64(y + 16, bits);
        if (ig_buf_append(ent, e, sizeof e) || ig_buf_append(sym, y, sizeof y))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory making a next-token table");
    }
    if (!rc) {
        sums[0] = igi_hash_bytes(ent->data + at, ent->len - at);
        sums[1] = igi_hash_bytes(sym->data + sat, sym->len - sat);
    }
    free(byc);
    return rc;
}

/* Writes the n pieces to path through a temporary file in the same directory: fsynced,
 * renamed over path, the directory fsynced, so that a reader sees the old table or the new
 * one whole. The pieces go out a MiB at a time, so a cancel is seen while a large table is
 * written too, and leaves the table before in force. */
static int write_atomic(const char *path, const ig_buf *piece, size_t n, const volatile int *cancel, ig_error *err)
{
    char *tmp = igi_aprintf("%s.tmp", path), *dir = igi_strdup(path);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        strcpy(dir, ".");
    (void)unlink(tmp); /* left by a run that died before its rename */
    igi_out out;
    int rc = igi_out_open(&out, tmp, NULL, err);
    if (!rc) {
        for (size_t i = 0; !rc && i < n; i++)
            for (size_t at = 0; !rc && at < piece[i].len; at += (size_t)1 << 20) {
                size_t k = piece[i].len - at < (size_t)1 << 20 ? piece[i].len - at : (size_t)1 << 20;
                if (ig_cancelled(cancel))
                    rc = ig_error_set(err, IG_ECANCELLED, "making the next-token table cancelled");
                else
                    rc = igi_out_put(&out, piece[i].data + at, k, err);
            }
        rc = igi_out_close(&out, rc, err);
    }
    if (!rc && rename(tmp, path))
        rc = igi_error_errno(err, errno, path, "cannot rename the new next-token table into place");
    if (!rc)
        rc = igi_fsync_dir(dir, err);
    if (rc)
        (void)unlink(tmp);
    free(tmp);
    free(dir);
    return rc;
}

/* The table is made in memory before it is written; a small --min-count on a large index can
 * ask for more than the machine has (every token pair seen once), so it stops at a quarter of
 * physical memory with an error that says how to ask for less, rather than being killed. */
static uint64_t table_budget(void)
{
    uint64_t b = igi_phys_memory((uint64_t)4 << 30) / 4;
    const char *t = getenv("INFINIGRAM_TABLE_BUDGET"); /* tests: a small machine */
    if (t && *t) {
        char *end;
        unsigned long long v = strtoull(t, &end, 10);
        if (!*end && v)
            b = v;
    }
    return b;
}

/* Appends context c's directory record and entries (its first entry: first), checking the
 * count its search gives against c->count, which the histogram it was found in says; *h
 * (malloc'd, *nh entries, in id order) receives its histogram. */
static int put_context(const ig_index *idx, ig_range *r, const nt_context *c, uint64_t first, ig_token_count **h,
                       size_t *nh, ig_buf *dir, ig_buf *sym, ig_buf *ent, ig_error *err)
{
    uint32_t tw = idx->tw;
    uint8_t pat[4 * NT_MAX_TOKENS];
    for (uint32_t i = 0; i < c->ntok; i++) /* tw ≤ 4: each id starts where the one before ends */
        put32(pat + i * tw, c->id[i]);
    uint64_t rows = ig_find(idx, pat, c->ntok * tw, r);
    int rc = igi_token_hist_exact(idx, r, c->ntok * tw, h, nh, err);
    if (rc)
        return rc;
    uint64_t total = 0;
    for (size_t j = 0; j < *nh; j++)
        total += (*h)[j].count;
    if (total != rows || rows != c->count) /* the search and the walk disagree: corrupt rows */
        return ig_error_set(err, IG_ECORRUPT,
                            "a context of %" PRIu32 " token%s (%" PRIu32 "…) occurs %" PRIu64 " times by its search, %"
                            PRIu64 " by its next tokens and %" PRIu64 " by the histogram it was found in: the index's "
                            "suffix arrays are not sound (:dataset verify)",
                            c->ntok, c->ntok == 1 ? "" : "s", c->id[0], rows, total, c->count);
    uint64_t sums[2] = {0, 0};
    if ((rc = put_entries(sym, ent, tw, *h, *nh, rows, sums, err)))
        return rc;
    uint8_t d[NT_DIRENT] = {0};
    put32(d, c->id[0]);
    put32(d + 4, c->id[1]);
    put32(d + 8, c->ntok);
    put32(d + 12, c->id[2]);
    put64(d + 16, rows);
    put64(d + 24, first);
    put64(d + 32, *nh);
    put64(d + 40, sums[0]);
    put64(d + 48, sums[1]);
    if (ig_buf_append(dir, d, sizeof d))
        return ig_error_set(err, IG_ENOMEM, "out of memory making a next-token table");
    for (uint32_t si = 0; si < idx->nshards; si++) {
        uint8_t q[16];
        put64(q, r[si].lo);
        put64(q + 8, r[si].hi);
        if (ig_buf_append(dir, q, sizeof q))
            return ig_error_set(err, IG_ENOMEM, "out of memory making a next-token table");
    }
    return 0;
}

int ig_next_table_write(const ig_index *idx, const char *path, uint64_t min_count, const volatile int *cancel,
                        ig_next_table_info *info, ig_error *err)
{
    if (info)
        memset(info, 0, sizeof *info);
    uint32_t tw = idx->tw;
    if (!tw)
        return ig_error_set(err, IG_EUSAGE, "next-token tables are made for token indexes (this one indexes bytes)");
    if (!min_count)
        min_count = ig_next_table_min_count(idx);
    ig_range *r = calloc(idx->nshards, sizeof *r);
    if (!r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    for (uint32_t si = 0; si < idx->nshards; si++)
        r[si] = (ig_range){0, idx->shards[si].rows};
    ig_token_count *uni = NULL;
    size_t nu = 0;
    ig_buf dir = {0}, sym = {0}, ent = {0};
    /* the frequent contexts of ntok tokens, found in the histograms of those of ntok − 1 (in
     * directory order: each list in order, each histogram by id), and those one token longer */
    nt_context *found = NULL, *longer = NULL;
    size_t nfound = 0, nlonger = 0, cap = 0;
    uint64_t k = 0, first = 0, budget = table_budget();
    /* every row starts a token, so the empty pattern's histogram is the unigram count */
    int rc = igi_token_hist_exact(idx, r, 0, &uni, &nu, err);
    for (uint32_t ntok = 1; ntok <= NT_MAX_TOKENS && !rc; ntok++) {
        size_t n = ntok == 1 ? nu : nfound;
        for (size_t i = 0; !rc && i < n; i++) {
            nt_context c = ntok > 1 ? found[i] : (nt_context){.ntok = 1, .id = {uni[i].id}, .count = uni[i].count};
            if (c.count < min_count || c.id[0] == ig_token_end(tw))
                continue;
            if (ig_cancelled(cancel)) {
                rc = ig_error_set(err, IG_ECANCELLED, "making the next-token table cancelled");
                break;
            }
            ig_token_count *h = NULL;
            size_t nh = 0;
            rc = put_context(idx, r, &c, first, &h, &nh, &dir, &sym, &ent, err);
            for (size_t j = 0; !rc && ntok < NT_MAX_TOKENS && j < nh; j++) /* the longer ones it begins */
                if (h[j].count >= min_count && h[j].id != ig_token_end(tw)) {
                    if (igi_grow(&longer, nlonger, &cap, sizeof *longer, 16)) {
                        rc = ig_error_set(err, IG_ENOMEM, "out of memory making a next-token table");
                        break;
                    }
                    nt_context *x = &longer[nlonger++];
                    *x = c;
                    x->ntok = ntok + 1;
                    x->id[ntok] = h[j].id;
                    x->count = h[j].count;
                }
            free(h);
            first += nh;
            k++;
            if (!rc && dir.len + sym.len + ent.len + (nlonger + nfound) * sizeof(nt_context) > budget) {
                rc = ig_error_set(err, IG_ENOMEM, "the next-token table passes %.1f MiB (a quarter of this machine's "
                                  "memory) at %" PRIu64 " contexts of %u token%s seen %" PRIu64 "+ times: ask for "
                                  "fewer with a larger --min-count", (double)budget / 1048576.0, k, ntok, ntok == 1 ? "" : "s", min_count);
            }
        }
        free(found);
        found = longer;
        nfound = nlonger;
        longer = NULL;
        nlonger = cap = 0;
    }
    IGI_FREE(found, longer, uni, r);
    uint8_t hd[NT_HEADER] = {0};
    if (!rc) {
        memcpy(hd, NT_MAGIC, 8);
        put32(hd + 8, NT_VERSION);
        put32(hd + 12, tw);
        put64(hd + 16, idx->attach_fp);
        put64(hd + 24, min_count);
        put64(hd + 32, k);
        put64(hd + 40, first);
        put64(hd + 48, index_rows(idx));
        put64(hd + 56, igi_hash_bytes(dir.data ? dir.data : hd, dir.len));
        ig_buf piece[4] = {{.data = hd, .len = sizeof hd}, dir, sym, ent}; /* written as they are: no copy */
        rc = write_atomic(path, piece, 4, cancel, err);
    }
    if (!rc && info)
        *info = (ig_next_table_info){min_count, k, first, sizeof hd + dir.len + sym.len + ent.len};
    ig_buf_free(&dir);
    ig_buf_free(&sym);
    ig_buf_free(&ent);
    return rc;
}

void igi_next_table_free(struct ig_next_table *t)
{
    while (t) {
        struct ig_next_table *older = t->retired;
        if (t->map)
            munmap((void *)t->map, (size_t)t->size);
        if (t->fd >= 0)
            close(t->fd);
        IGI_FREE(t->path, t->ctx, t->ranges, t);
        t = older;
    }
}

#define NT_BAD(...) (rc = ig_error_set(err, IG_ECORRUPT, __VA_ARGS__))

int ig_next_table_use(ig_index *idx, const char *path, ig_next_table_info *info, ig_error *err)
{
    if (info)
        memset(info, 0, sizeof *info);
    if (!idx->tw)
        return ig_error_set(err, IG_EUSAGE, "next-token tables are made for token indexes (this one indexes bytes)");
    struct ig_next_table *t = calloc(1, sizeof *t);
    if (!t || !(t->path = igi_strdup(path))) {
        free(t);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    int rc = 0;
    struct stat st;
    const uint8_t *hd = NULL;
    /* O_NONBLOCK: a FIFO put where the table should be must not hold the load forever */
    if ((t->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 || fstat(t->fd, &st))
        rc = igi_error_errno(err, errno, path, "cannot open the next-token table");
    else if (!S_ISREG(st.st_mode))
        rc = ig_error_set(err, IG_ECORRUPT, "%s: the next-token table is not a regular file", path);
    else if ((uint64_t)st.st_size < NT_HEADER || (uint64_t)st.st_size > SIZE_MAX)
        NT_BAD("%s: the next-token table is cut short (%lld bytes, its header alone is %d)", path,
               (long long)st.st_size, NT_HEADER);
    else {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, t->fd, 0);
        if (m == MAP_FAILED)
            rc = igi_error_errno(err, errno, path, "cannot map the next-token table");
        else {
            t->map = hd = m;
            t->size = (uint64_t)st.st_size;
        }
    }
    if (!rc && memcmp(hd, NT_MAGIC, 8))
        NT_BAD("%s: not a next-token table (its first 8 bytes are not the table's magic)", path);
    else if (!rc && get32(hd + 8) != NT_VERSION)
        NT_BAD("%s: a next-token table of layout %u, where this program reads layout %u", path, get32(hd + 8),
               NT_VERSION);
    else if (!rc && (get32(hd + 12) != idx->tw || ig_load_le64(hd + 16) != idx->attach_fp ||
                     ig_load_le64(hd + 48) != index_rows(idx)))
        NT_BAD("%s: the next-token table was made for other files than the index's as they are now", path);
    if (rc) {
        igi_next_table_free(t);
        return rc;
    }
    uint64_t size = t->size;
    t->min_count = ig_load_le64(hd + 24);
    t->k = ig_load_le64(hd + 32);
    t->entries = ig_load_le64(hd + 40);
    size_t rec = dirent_size(idx->nshards);
    const uint8_t *dir = hd + NT_HEADER;
    if (t->k > (size - NT_HEADER) / rec || t->entries > (size - NT_HEADER) / (NT_SYM + NT_ENTRY) ||
        NT_HEADER + t->k * rec + t->entries * (NT_SYM + NT_ENTRY) != size)
        NT_BAD("%s: the next-token table's size (%" PRIu64 " bytes) does not fit its %" PRIu64 " contexts and %" PRIu64
               " entries (cut short or corrupt)", path, size, t->k, t->entries);
    else if (!(t->ctx = calloc(t->k + 1, sizeof *t->ctx)) ||
             !(t->ranges = calloc(t->k * idx->nshards + 1, sizeof *t->ranges)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
    else if (igi_hash_bytes(t->k ? dir : hd, t->k * rec) != ig_load_le64(hd + 56))
        NT_BAD("%s: the next-token table's directory does not match its checksum (corrupt)", path);
    t->syms_at = NT_HEADER + t->k * rec;
    t->ids_at = t->syms_at + t->entries * NT_SYM;
    uint64_t next = 0;
    for (uint64_t i = 0; !rc && i < t->k; i++) {
        const uint8_t *d = dir + i * rec;
        nt_context *c = &t->ctx[i];
        *c = (nt_context){get32(d + 8), {get32(d), get32(d + 4), get32(d + 12)}, ig_load_le64(d + 16), ig_load_le64(d + 24),
                          ig_load_le64(d + 32), {ig_load_le64(d + 40), ig_load_le64(d + 48)},
                          t->ranges + i * idx->nshards, {0, 0}};
        uint64_t rows = 0;
        int bad = 0;
        for (uint32_t si = 0; si < idx->nshards; si++) {
            ig_range *q = &c->r[si];
            *q = (ig_range){ig_load_le64(d + NT_DIRENT + 16 * si), ig_load_le64(d + NT_DIRENT + 16 * si + 8)};
            bad |= q->lo > q->hi || q->hi > idx->shards[si].rows;
            rows += q->hi - q->lo;
        }
        if (bad || rows != c->count)
            NT_BAD("%s: the rows of context %" PRIu64 " of the next-token table (token %" PRIu32 ") do not fit the "
                   "index", path, i + 1, c->id[0]);
        int extra = 0; /* ids past the context's tokens */
        for (uint32_t j = c->ntok; j < NT_MAX_TOKENS; j++)
            extra |= c->id[j] != 0;
        if (c->ntok < 1 || c->ntok > NT_MAX_TOKENS || extra || (i && nt_cmp(c, &t->ctx[i - 1]) <= 0) ||
            c->first != next || !c->n || c->n > c->count || c->n > t->entries - next || c->count < t->min_count)
            NT_BAD("%s: context %" PRIu64 " of the next-token table (token %" PRIu32 ") is out of order or out of "
                   "bounds", path, i + 1, c->id[0]);
        next += c->n;
    }
    if (!rc && next != t->entries)
        NT_BAD("%s: the next-token table's contexts hold %" PRIu64 " entries, its header says %" PRIu64, path, next,
               t->entries);
    if (rc) {
        igi_next_table_free(t);
        return rc;
    }
    t->retired = idx->ntab; /* answers borrowed from it live until the index is closed */
    idx->ntab = t;
    if (info)
        *info = (ig_next_table_info){t->min_count, t->k, t->entries, size};
    return 0;
}

static int cmp_ctx(const void *key, const void *elem)
{
    return nt_cmp(key, elem);
}

/* The table's record of the context whose len bytes are at p (one to three whole tokens), or NULL. */
static const nt_context *lookup(const ig_index *idx, const uint8_t *p, size_t len)
{
    const struct ig_next_table *t = idx->ntab;
    uint32_t tw = idx->tw;
    if (!t || !len || len % tw || len / tw > NT_MAX_TOKENS)
        return NULL;
    nt_context key = {.ntok = (uint32_t)(len / tw)};
    for (uint32_t i = 0; i < key.ntok; i++)
        key.id[i] = ig_token_at(p + i * tw, tw);
    return bsearch(&key, t->ctx, t->k, sizeof *t->ctx, cmp_ctx);
}

/* Where context c's run of the order asked for starts in the mapped file. */
static const uint8_t *run_of(const struct ig_next_table *t, const nt_context *c, int by_count)
{
    return t->map + (by_count ? t->syms_at + c->first * NT_SYM : t->ids_at + c->first * NT_ENTRY);
}

/* The record of the context of rows r (len bytes: one to three tokens), its run of the order asked
 * for checked (once: see the top of the file); NULL with *rc 0 when the table does not hold it,
 * NULL with an error in *rc when the table cannot answer for it. */
static nt_context *context_of(const ig_index *idx, const ig_range *r, size_t len, int by_count, int *rc,
                              ig_error *err)
{
    *rc = 0;
    struct ig_next_table *t = idx->ntab;
    uint32_t tw = idx->tw;
    if (!t || !len || len % tw || len / tw > NT_MAX_TOKENS)
        return NULL;
    uint64_t rows = 0;
    const ig_shard *s0 = NULL;
    uint64_t lo = 0;
    for (uint32_t si = 0; si < idx->nshards; si++) {
        rows += r[si].hi - r[si].lo;
        if (!s0 && r[si].hi > r[si].lo) {
            s0 = &idx->shards[si];
            lo = r[si].lo;
        }
    }
    if (!s0)
        return NULL;
    /* the context is what the interval's rows begin with */
    nt_context *c = (nt_context *)lookup(idx, s0->text + ig_shard_sa(s0, s0->pw, lo), len);
    if (!c)
        return NULL;
    uint32_t id = c->id[0];
    struct stat st;
    if (c->count != rows || memcmp(c->r, r, idx->nshards * sizeof *r)) {
        *rc = ig_error_set(err, IG_ECORRUPT,
                           "%s: the next-token table holds %" PRIu64 " occurrences of token %" PRIu32
                           " where the index has %" PRIu64 " (:dataset prepare makes the table again)",
                           t->path, c->count, id, rows);
        return NULL;
    }
    if (fstat(t->fd, &st) || (uint64_t)st.st_size < t->size) {
        *rc = ig_error_set(err, IG_ECORRUPT, "%s: the next-token table is cut short (%lld bytes, %" PRIu64 " when it was "
                           "put to use): :dataset prepare makes it again", t->path, (long long)st.st_size, t->size);
        return NULL;
    }
    if (__atomic_load_n(&c->sound[by_count], __ATOMIC_ACQUIRE))
        return c;
    const uint8_t *run = run_of(t, c, by_count);
    size_t size = by_count ? NT_SYM : NT_ENTRY;
    int bad = igi_hash_bytes(run, (size_t)c->n * size) != c->sum[by_count];
    const char *why = bad ? "do not match their checksum" : NULL;
    uint64_t total = 0, prev_id = 0, prev_count = 0, want_bits = 0;
    for (uint64_t i = 0; !bad && i < c->n; i++) {
        const uint8_t *e = run + i * size;
        uint64_t nid = get32(e), count = ig_load_le64(e + (by_count ? 8 : 4));
        if (by_count) { /* the record's format, and the probability the ∞-gram gives */
            if (!i || count != prev_count) { /* counts come in runs of equal ones: one division a run */
                double want = (double)count / (double)c->count;
                memcpy(&want_bits, &want, sizeof want_bits);
            }
            static const uint8_t zero[3] = {0};
            bad = e[4] != tw || memcmp(e + 5, zero, 3) || (tw < 4 && nid >> (8 * tw)) ||
                  ig_load_le64(e + 16) != want_bits;
        }
        bad |= !count;
        if (i && !bad) /* the order asked for: it is what callers rely on */
            bad = by_count ? prev_count < count || (prev_count == count && prev_id >= nid) : prev_id >= nid;
        why = bad ? "are out of order or malformed" : NULL;
        total += count;
        prev_id = nid;
        prev_count = count;
    }
    if (!bad && total != rows) {
        bad = 1;
        why = "count other occurrences than the index";
    }
    if (bad) {
        *rc = ig_error_set(err, IG_ECORRUPT, "%s: the %s after the %" PRIu32 " token%s from id %" PRIu32 " %s (corrupt: "
                           ":dataset prepare makes the table again)", t->path,
                           by_count ? "next-token probabilities" : "next-token counts", c->ntok, c->ntok == 1 ? "" : "s",
                           id, why);
        return NULL;
    }
    __atomic_store_n(&c->sound[by_count], 1, __ATOMIC_RELEASE);
    return c;
}

int igi_next_table_hist(const ig_index *idx, const ig_range *r, size_t len, int by_count, ig_token_count **out,
                        size_t *n, int *served, ig_error *err)
{
    *served = 0;
    int rc;
    const nt_context *c = context_of(idx, r, len, by_count, &rc, err);
    if (!c)
        return rc;
    const struct ig_next_table *t = idx->ntab;
    ig_token_count *v = malloc((size_t)c->n * sizeof *v);
    if (!v)
        return ig_error_set(err, IG_ENOMEM, "out of memory reading a next-token table");
    const uint8_t *run = run_of(t, c, by_count);
    for (size_t i = 0; i < c->n; i++) {
        const uint8_t *e = run + i * (by_count ? NT_SYM : NT_ENTRY);
        v[i] = (ig_token_count){get32(e), ig_load_le64(e + (by_count ? 8 : 4))};
    }
    *out = v;
    *n = (size_t)c->n;
    *served = 1;
    return 0;
}

int igi_next_table_syms(const ig_index *idx, const ig_range *r, size_t len, const ig_symbol **syms, size_t *n,
                        int *served, ig_error *err)
{
    *served = 0;
    if (!NT_BORROW)
        return 0;
    int rc;
    const nt_context *c = context_of(idx, r, len, 1, &rc, err);
    if (!c)
        return rc;
    *syms = (const void *)run_of(idx->ntab, c, 1);
    *n = (size_t)c->n;
    *served = 1;
    return 0;
}

int igi_next_table_find(const ig_index *idx, const uint8_t *p, size_t len, ig_range *ranges, uint64_t *count)
{
    const nt_context *c = lookup(idx, p, len);
    if (!c)
        return 0;
    if (ranges)
        memcpy(ranges, c->r, idx->nshards * sizeof *ranges);
    *count = c->count;
    return 1;
}
