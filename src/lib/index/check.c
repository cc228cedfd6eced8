/*
 * Trust checks for an index read from disk. A directory can be corrupted in ways that
 * keep every file's size (a zeroed table, flipped bytes, a crafted file), and the query
 * code follows pointers read from those files; so an index is checked before it is used,
 * and the one kind of pointer that cannot be checked in full at open — the suffix array's
 * — is range-checked on every read (ig_shard_sa), which records the first bad read here.
 *
 * At open (igi_index_check_shard), in time that keeps `load` interactive:
 *   - in full: the document table (offsets start at 0, strictly increase, end at the text
 *     length), the document metadata (every name offset is the start of a name in `names`,
 *     names appear in order, each one used) and the prefix table (starts at 0, never
 *     decreases, ends at the text length); these four files, small beside the text, are
 *     also hashed and compared with the manifest's checksums, so any change to them is
 *     caught;
 *   - in full, in case-folded indexes: the exception records of the fold file (in order,
 *     inside the text, original offsets consistent); its bitmap, as large as an eighth of the
 *     text, and each exception's agreement with the text are checked where they are used;
 *   - spot checks: the separator at the end of up to IG_CHECK_DOCS documents, and up to
 *     IG_CHECK_ROWS suffix-array rows spread over the array: each pointer and its
 *     successor's in range, the two suffixes in strictly increasing order, the row inside
 *     its two-byte prefix's interval, and the sampled key of the row equal to the text.
 * The optional lcp file is checked apart (lcp.c, at open): 16 of its windows against their
 * checksums, the file left unused if one fails; its other windows and blocks on first use.
 * What passes may still hold flipped bytes the spot checks did not read; `:dataset verify`
 * (checksums of every byte) is the deep check.
 */
#include "index_impl.h"
#include "../util/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define IG_CHECK_DOCS 1024
/* Adjacent suffixes equal for this many bytes are accepted unordered (long repeats). */
#define IG_CHECK_CMP 512

IG_PRINTF(5, 6)
static int corrupt(ig_error *err, const char *dir, const ig_shard_meta *sm, const char *file, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ig_error_set(err, IG_ECORRUPT, "index corrupt (%s/%s/%s: %s)", dir, sm->dir, file, what);
}

/* Strict order of two suffixes: -1 when the one at x sorts first, 1 after, 0 when they
 * agree on the first IG_CHECK_CMP bytes (or are the same position). */
static int suffix_order(const ig_shard *s, uint64_t x, uint64_t y)
{
    if (x == y)
        return 0;
    uint64_t lx = s->n - x, ly = s->n - y, l = lx < ly ? lx : ly;
    int capped = l > IG_CHECK_CMP;
    if (capped)
        l = IG_CHECK_CMP;
    int c = memcmp(s->text + x, s->text + y, (size_t)l);
    if (c)
        return c < 0 ? -1 : 1;
    if (capped)
        return 0;
    return lx < ly ? -1 : 1; /* a proper prefix sorts first */
}

/* The sampled key of the suffix at pos: its first 8 bytes, big-endian, zero-padded. */
static uint64_t key_of(const ig_shard *s, uint64_t pos)
{
    uint64_t k = 0;
    for (int i = 0; i < 8; i++)
        k = k << 8 | (pos + (uint64_t)i < s->n ? s->text[pos + (uint64_t)i] : 0);
    return k;
}

/* The prefix-table key of the suffix at pos: first byte · 257 + second byte + 1 (0 when the
 * suffix is one byte long). */
static uint32_t key2_of(const ig_shard *s, uint64_t pos)
{
    return (uint32_t)s->text[pos] * 257 + (pos + 1 < s->n ? (uint32_t)s->text[pos + 1] + 1 : 0);
}

static int check_docs(const ig_index *idx, const ig_shard_meta *sm, const ig_shard *s, ig_error *err)
{
    const char *dir = idx->dir;
    if (ig_shard_doc_start(s, 0) != 0)
        return corrupt(err, dir, sm, "docs", "the first document starts at %" PRIu64 ", not 0",
                       ig_shard_doc_start(s, 0));
    for (uint64_t d = 0; d < s->ndocs; d++) {
        uint64_t a = ig_shard_doc_start(s, d), b = ig_shard_doc_start(s, d + 1);
        if (b <= a || b > s->n)
            return corrupt(err, dir, sm, "docs", "document %" PRIu64 " ends at %" PRIu64 ", after a start of %" PRIu64,
                           d, b, a);
    }
    if (ig_shard_doc_start(s, s->ndocs) != s->n)
        return corrupt(err, dir, sm, "docs", "the documents end at %" PRIu64 ", the text at %" PRIu64,
                       ig_shard_doc_start(s, s->ndocs), s->n);
    uint64_t step = s->ndocs > IG_CHECK_DOCS ? s->ndocs / IG_CHECK_DOCS : 1;
    for (uint64_t d = 0; d < s->ndocs; d += step) {
        uint64_t e = ig_shard_doc_start(s, d + 1) - 1;
        if (s->text[e] != IG_DOC_END)
            return corrupt(err, dir, sm, "text", "document %" PRIu64 " does not end with its separator (byte %" PRIu64 ")",
                           d, e);
    }
    /* names: the distinct offsets, in document order, are exactly the names' starts */
    if (!s->names_len || s->names[s->names_len - 1])
        return corrupt(err, dir, sm, "names", "the last name is not terminated");
    uint64_t cur = 0, next = strlen(s->names) + 1;
    for (uint64_t d = 0; d < s->ndocs; d++) {
        uint64_t off = ig_load_le64(s->docmeta + d * 16);
        if (off == cur)
            continue;
        if (off != next || d == 0)
            return corrupt(err, dir, sm, "docmeta", "document %" PRIu64 " names offset %" PRIu64 ", expected %" PRIu64, d,
                           off, (uint64_t)(d == 0 ? 0 : next));
        cur = next;
        next = cur + strlen(s->names + cur) + 1;
    }
    if (next != s->names_len)
        return corrupt(err, dir, sm, "names", "%" PRIu64 " bytes of names, the documents use %" PRIu64,
                       s->names_len, next);
    return 0;
}

static int check_prefix(const ig_index *idx, const ig_shard_meta *sm, const ig_shard *s, ig_error *err)
{
    uint64_t prev = 0;
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++) {
        uint64_t v = ig_shard_prefix(s, idx->pw, k);
        if (v < prev || v > s->n)
            return corrupt(err, idx->dir, sm, "prefix", "entry %" PRIu32 " is %" PRIu64 " after %" PRIu64, k, v, prev);
        prev = v;
    }
    if (ig_shard_prefix(s, idx->pw, 0) != 0 || prev != s->n)
        return corrupt(err, idx->dir, sm, "prefix", "the table spans rows %" PRIu64 " to %" PRIu64 " of %" PRIu64,
                       ig_shard_prefix(s, idx->pw, 0), prev, s->n);
    return 0;
}

/* Asks the kernel for the page holding p[0, n) without waiting: on a cold cache the spot
 * checks' scattered reads then overlap instead of costing one disk wait each. */
static void prefetch_page(long pg, const void *base, size_t len, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1), end = (uintptr_t)base + len;
    if ((uintptr_t)p + n > end)
        n = end - (uintptr_t)p;
    madvise((void *)a, (uintptr_t)p + n - a, MADV_WILLNEED);
}

/* Whether the page holding p is in memory (when the kernel cannot say: yes). */
static int resident(long pg, const void *p)
{
    unsigned char v = 1;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    return mincore((void *)a, (size_t)pg, &v) != 0 || (v & 1);
}

static int check_rows(const ig_index *idx, const ig_shard_meta *sm, const ig_shard *s, ig_error *err)
{
    uint64_t stride = s->sample ? idx->man.sample_stride : 1;
    uint64_t units = (s->n + stride - 1) / stride; /* rows that can be checked against a key */
    uint64_t nchecks = units < IG_CHECK_ROWS ? units : IG_CHECK_ROWS;
    const ig_map *sa = &s->maps[IG_F_SA], *text = &s->maps[IG_F_TEXT];
    long pg = sysconf(_SC_PAGESIZE);
/* the i-th checked row: evenly spread, on a sampled row when there are samples */
#define CHECK_ROW(i) ((nchecks > 1 ? (i) * (units - 1) / (nchecks - 1) : 0) * stride)
    /* On a warm cache the pages are resident and a thousand madvise calls would only cost
     * their system calls (about 40 ms on a 4-shard index): eight probes decide. */
    int cold = 0;
    for (uint64_t i = 0; i < 8 && !cold && nchecks; i++)
        cold = !resident(pg, s->sa + CHECK_ROW(i * (nchecks - 1) / 7) * idx->pw);
    for (uint64_t i = 0; cold && i < nchecks; i++) /* the rows' pages first, then their suffixes' */
        prefetch_page(pg, sa->addr, sa->len, s->sa + CHECK_ROW(i) * idx->pw, 2 * idx->pw);
    for (uint64_t i = 0; cold && i < nchecks; i++) {
        uint64_t r = CHECK_ROW(i);
        for (uint64_t j = r; j < r + 2 && j < s->n; j++) {
            uint64_t p = ig_shard_sa_raw(s, idx->pw, j);
            if (p < s->n)
                prefetch_page(pg, text->addr, text->len, s->text + p, 16);
        }
    }
    for (uint64_t i = 0; i < nchecks; i++) {
        uint64_t r = CHECK_ROW(i);
        uint64_t p = ig_shard_sa_raw(s, idx->pw, r);
        if (p >= s->n)
            return corrupt(err, idx->dir, sm, "sa", "row %" PRIu64 " points to %" PRIu64 ", past the text's %" PRIu64 " bytes",
                           r, p, s->n);
        if (r + 1 < s->n) {
            uint64_t q = ig_shard_sa_raw(s, idx->pw, r + 1);
            if (q >= s->n)
                return corrupt(err, idx->dir, sm, "sa", "row %" PRIu64 " points to %" PRIu64 ", past the text's %" PRIu64 " bytes",
                               r + 1, q, s->n);
            if (p == q || suffix_order(s, p, q) > 0)
                return corrupt(err, idx->dir, sm, "sa", "rows %" PRIu64 " and %" PRIu64 " are out of order (positions %" PRIu64 ")",
                               r, r + 1, p);
        }
        if (s->prefix) {
            uint32_t key = key2_of(s, p);
            if (r < ig_shard_prefix(s, idx->pw, key) || r >= ig_shard_prefix(s, idx->pw, key + 1))
                return corrupt(err, idx->dir, sm, "prefix", "row %" PRIu64 " (key %" PRIu32 ") is outside its entry's rows", r, key);
        }
        if (s->sample && be64toh(((const uint64_t *)s->sample)[r / stride]) != key_of(s, p))
            return corrupt(err, idx->dir, sm, "sample", "key %" PRIu64 " differs from the text at row %" PRIu64,
                           r / stride, r);
    }
#undef CHECK_ROW
    return 0;
}

/* The files read whole at open anyway: their checksums cost little more. */
static int check_sums(const ig_index *idx, const ig_shard_meta *sm, const ig_shard *s, ig_error *err)
{
    static const int files[] = {IG_F_DOCS, IG_F_DOCMETA, IG_F_NAMES, IG_F_PREFIX};
    for (size_t j = 0; j < sizeof files / sizeof files[0]; j++) {
        const ig_map *m = &s->maps[files[j]];
        if (!m->addr && ig_shard_file_optional(files[j]))
            continue;
        if (igi_hash_bytes(m->addr ? m->addr : "", m->len) != sm->files[files[j]].checksum)
            return corrupt(err, idx->dir, sm, igi_shard_file_names[files[j]], "checksum mismatch");
    }
    return 0;
}

/* The line index's two ends (its checksum is checked on first use, since a location may
 * never be asked for): counts start at zero, and the totals cannot exceed the text. */
static int check_lines_ends(const ig_index *idx, const ig_shard_meta *sm, const ig_shard *s, ig_error *err)
{
    const uint8_t *l = s->maps[IG_F_LINES].addr;
    size_t last = s->maps[IG_F_LINES].len - 16;
    if (ig_load_le64(l) || ig_load_le64(l + 8) || ig_load_le64(l + last) > s->n || ig_load_le64(l + last + 8) > s->n)
        return corrupt(err, idx->dir, sm, "lines", "the counts do not run from 0 to at most the text's %" PRIu64
                       " bytes", s->n);
    return 0;
}

int igi_index_check_shard(const ig_index *idx, uint32_t i, ig_error *err)
{
    const ig_shard_meta *sm = &idx->man.shards[i];
    const ig_shard *s = &idx->shards[i];
    if (s->text[s->n - 1] != IG_DOC_END)
        return corrupt(err, idx->dir, sm, "text", "the last byte is not a document separator");
    int rc = check_docs(idx, sm, s, err);
    if (!rc && s->prefix)
        rc = check_prefix(idx, sm, s, err);
    if (!rc)
        rc = check_rows(idx, sm, s, err);
    if (!rc)
        rc = check_sums(idx, sm, s, err);
    if (!rc && s->maps[IG_F_LINES].addr)
        rc = check_lines_ends(idx, sm, s, err);
    char what[160];
    if (!rc && s->fold_bits && igi_fold_check(s, what, sizeof what))
        rc = corrupt(err, idx->dir, sm, "fold", "%s", what);
    return rc;
}

void igi_shard_corrupt(const ig_shard *s, const char *file, const char *fmt, ...)
{
    ig_health *h = s->health;
    int expect = 0;
    if (!atomic_compare_exchange_strong(&h->state, &expect, 1))
        return;
    int n = s->sa_name[0] && !strcmp(file, "sa") ? snprintf(h->what, sizeof h->what, "%s: ", s->sa_name)
                                                 : snprintf(h->what, sizeof h->what, "shard-%04u/%s: ", s->local, file);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof h->what)
        vsnprintf(h->what + n, sizeof h->what - (size_t)n, fmt, ap);
    va_end(ap);
    atomic_store_explicit(&h->state, 2, memory_order_release);
}

static void set_checked(const ig_shard *s, uint64_t bit)
{
    atomic_fetch_or_explicit(&s->checked[bit / 64], (uint64_t)1 << (bit % 64), memory_order_relaxed);
}

static uint32_t key2_at_row(const ig_shard *s, uint32_t pw, uint64_t row)
{
    return key2_of(s, ig_shard_sa(s, pw, row));
}

/* Rows [a, z) hold exactly the suffixes whose two-byte key is in [klo, khi) when the row
 * before sorts below klo, the row after at or above khi, and (non-empty) the first and last
 * rows are inside: with a sorted suffix array, the rows between follow. */
void igi_shard_check_prefix(const ig_shard *s, uint32_t pw, uint32_t klo, uint32_t khi, uint64_t bit)
{
    uint64_t a = ig_shard_prefix(s, pw, klo), z = ig_shard_prefix(s, pw, khi);
    int ok = a <= z && z <= s->n && (a == 0 || key2_at_row(s, pw, a - 1) < klo) &&
             (z == s->n || key2_at_row(s, pw, z) >= khi);
    if (ok && a < z) {
        uint32_t f = key2_at_row(s, pw, a), l = key2_at_row(s, pw, z - 1);
        ok = f >= klo && f < khi && l >= klo && l < khi;
    }
    if (!ok)
        igi_shard_corrupt(s, "prefix", "entries %" PRIu32 "–%" PRIu32 " (rows %" PRIu64 "–%" PRIu64
                         ") disagree with the suffix array", klo, khi, a, z);
    set_checked(s, bit);
}

int igi_shard_key_trusted(const ig_shard *s, uint32_t pw, uint32_t stride, uint64_t i)
{
    uint64_t bit = IG_CHECK_KEY_BIT(i);
    if (ig_shard_checked(s, bit)) /* checked before: bad ones were recorded, and fail the query */
        return 1;
    uint64_t row = i * stride;
    int ok = row < s->n && key_of(s, ig_shard_sa(s, pw, row)) == ig_shard_key(s, i);
    if (!ok)
        igi_shard_corrupt(s, "sample", "key %" PRIu64 " differs from the text at row %" PRIu64, i, row);
    set_checked(s, bit);
    return ok;
}

uint64_t igi_shard_bad_pointer(const ig_shard *s, uint64_t row, uint64_t value)
{
    if (value < s->n)
        igi_shard_corrupt(s, "sa", "row %" PRIu64 " points to %" PRIu64 ", inside a token of %" PRIu64 " bytes", row,
                         value, (uint64_t)s->tmask + 1);
    else
        igi_shard_corrupt(s, "sa", "row %" PRIu64 " points to %" PRIu64 ", past the text's %" PRIu64 " bytes", row,
                         value, s->n);
    return (s->n - 1) & ~(uint64_t)s->tmask; /* the last byte or token: every comparison stays in the mapping */
}

int ig_index_health(const ig_index *idx, const char *dataset, ig_error *err)
{
    if (!idx || !idx->health)
        return 0;
    /* a composed index: its shards record what they meet in their own member */
    for (uint32_t i = 0; i < idx->nmembers; i++)
        if (ig_index_health(idx->members[i].idx, idx->members[i].name, err))
            return err ? err->code : IG_ECORRUPT;
    int st = atomic_load_explicit(&idx->health->state, memory_order_acquire);
    if (!st)
        return 0;
    const char *what = st == 2 ? idx->health->what : "";
    if (idx->tw) /* an attached index is not ours to rebuild */
        return ig_error_set(err, IG_ECORRUPT, "index corrupt (%s/%s): the attached files are damaged: attach a sound copy",
                            idx->dir, what);
    if (dataset && *dataset)
        return ig_error_set(err, IG_ECORRUPT, "index corrupt (%s/%s): run :dataset verify %s, then rebuild", idx->dir, what,
                            dataset);
    return ig_error_set(err, IG_ECORRUPT, "index corrupt (%s/%s): verify and rebuild it", idx->dir, what);
}
