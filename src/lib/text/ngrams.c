/*
 * N-grams for contamination checks (see ngrams.h): lowercasing, word and byte n-grams,
 * an exact n-gram set, reading an eval set, and the Bloom-filter false-positive formula
 * the contam report compares exact counting with.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "infinigram/contam.h"
#include "ingest.h"
#include "ngrams.h"

/* ---------------------------------------------------------------- characters */

/* Decodes one code point at p (n > 0 bytes left); *len its bytes. Invalid UTF-8: -1, 1 byte. */
static int32_t decode(const uint8_t *p, size_t n, size_t *len)
{
    utf8proc_int32_t cp;
    utf8proc_ssize_t k = utf8proc_iterate(p, (utf8proc_ssize_t)(n < 4 ? n : 4), &cp);
    if (k <= 0) {
        *len = 1;
        return -1;
    }
    *len = (size_t)k;
    return cp;
}

/* Unicode White_Space. */
static int is_space(int32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

int igi_lowercase(const uint8_t *p, size_t n, ig_buf *out, ig_error *err)
{
    if (igi_buf_reserve(out, n))
        return ig_error_set(err, IG_ENOMEM, "out of memory lowercasing");
    for (size_t i = 0; i < n;) {
        size_t k;
        int32_t c = decode(p + i, n - i, &k);
        uint8_t u[4];
        size_t m = k;
        const uint8_t *src = p + i;
        if (c >= 0) {
            utf8proc_int32_t l = utf8proc_tolower(c);
            if (l != c) {
                m = (size_t)utf8proc_encode_char(l, u);
                src = u;
            }
        }
        if (ig_buf_append(out, src, m))
            return ig_error_set(err, IG_ENOMEM, "out of memory lowercasing");
        i += k;
    }
    return 0;
}

/* ---------------------------------------------------------------- n-grams */

int igi_ngrams_each(const uint8_t *p, size_t len, uint64_t n, int bytes, ig_buf *scratch, igi_gram_fn fn,
                    void *user, uint64_t *units, ig_error *err)
{
    if (units)
        *units = bytes ? len : 0;
    if (n == 0)
        return ig_error_set(err, IG_EUSAGE, "{n} must be at least 1");
    if (bytes) {
        if (len == 0)
            return 0;
        if (len < n)
            return fn(user, p, len, err);
        for (size_t i = 0; i + n <= len; i++) {
            int rc = fn(user, p + i, (size_t)n, err);
            if (rc)
                return rc;
        }
        return 0;
    }
    /* word boundaries, then each window of n words joined by single spaces */
    size_t cap = 64, nw = 0;
    size_t *ws = malloc(2 * cap * sizeof *ws);
    if (!ws)
        return ig_error_set(err, IG_ENOMEM, "out of memory cutting n-grams");
    size_t i = 0;
    while (i < len) {
        size_t k;
        while (i < len && is_space(decode(p + i, len - i, &k)))
            i += k;
        if (i >= len)
            break;
        size_t a = i;
        while (i < len && !is_space(decode(p + i, len - i, &k)))
            i += k;
        if (nw == cap) {
            size_t *w2 = realloc(ws, 4 * cap * sizeof *ws);
            if (!w2) {
                free(ws);
                return ig_error_set(err, IG_ENOMEM, "out of memory cutting n-grams");
            }
            ws = w2;
            cap *= 2;
        }
        ws[2 * nw] = a;
        ws[2 * nw + 1] = i;
        nw++;
    }
    if (units)
        *units = nw;
    int rc = 0;
    size_t span = nw < n ? nw : (size_t)n, last = nw < n ? (nw ? 1 : 0) : nw - (size_t)n + 1;
    for (size_t s = 0; s < last && !rc; s++) {
        scratch->len = 0;
        for (size_t w = s; w < s + span && !rc; w++) {
            if (w > s && ig_buf_append(scratch, " ", 1))
                rc = ig_error_set(err, IG_ENOMEM, "out of memory cutting n-grams");
            else if (ig_buf_append(scratch, p + ws[2 * w], ws[2 * w + 1] - ws[2 * w]))
                rc = ig_error_set(err, IG_ENOMEM, "out of memory cutting n-grams");
        }
        if (!rc)
            rc = fn(user, scratch->data, scratch->len, err);
    }
    free(ws);
    return rc;
}

/* ---------------------------------------------------------------- the exact set */

static uint64_t gram_hash(const uint8_t *g, size_t len)
{
    uint64_t h = igi_hash_bytes(g, len);
    return h ? h : 1; /* 0 marks an empty slot */
}

static int slot_is(const igi_gramset *s, const struct igi_gram_slot *e, uint64_t h, const uint8_t *g, size_t len)
{
    return e->h == h && e->len == len && !memcmp(s->arena.data + e->off, g, len);
}

int igi_gramset_has(const igi_gramset *s, const uint8_t *g, size_t len)
{
    if (!s->cap)
        return 0;
    uint64_t h = gram_hash(g, len);
    for (size_t i = (size_t)h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        const struct igi_gram_slot *e = &s->slots[i];
        if (!e->h)
            return 0;
        if (slot_is(s, e, h, g, len))
            return 1;
    }
}

static int grow(igi_gramset *s, ig_error *err)
{
    size_t nc = s->cap ? s->cap * 2 : 1024;
    struct igi_gram_slot *v = calloc(nc, sizeof *v);
    if (!v)
        return ig_error_set(err, IG_ENOMEM, "out of memory for the n-gram set");
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i].h)
            continue;
        size_t j = (size_t)s->slots[i].h & (nc - 1);
        while (v[j].h)
            j = (j + 1) & (nc - 1);
        v[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = v;
    s->cap = nc;
    return 0;
}

int igi_gramset_add(igi_gramset *s, const uint8_t *g, size_t len, int *added, ig_error *err)
{
    if (added)
        *added = 0;
    if ((s->n + 1) * 4 > s->cap * 3 && grow(s, err)) /* load at most 3/4 */
        return IG_ENOMEM;
    uint64_t h = gram_hash(g, len);
    size_t i = (size_t)h & (s->cap - 1);
    for (; s->slots[i].h; i = (i + 1) & (s->cap - 1))
        if (slot_is(s, &s->slots[i], h, g, len))
            return 0;
    size_t off = s->arena.len;
    if (ig_buf_append(&s->arena, g, len))
        return ig_error_set(err, IG_ENOMEM, "out of memory for the n-gram set");
    s->slots[i] = (struct igi_gram_slot){h, off, len};
    s->n++;
    if (added)
        *added = 1;
    return 0;
}

void igi_gramset_free(igi_gramset *s)
{
    free(s->slots);
    ig_buf_free(&s->arena);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- Bloom filters */

double ig_bloom_fpr_log10(double m, double k, double n)
{
    if (!(n > 0) || !(m > 0) || !(k > 0))
        return -INFINITY;
    /* (1 − e^(−kn/m))^k in the log domain: the rate underflows a double long before its
     * logarithm does */
    double x = k * n / m;
    return k * log1p(-exp(-x)) / log(10.0);
}

double ig_bloom_bff_k(double m, double expected) { return ceil(m / expected * log(2.0)); }

/* ---------------------------------------------------------------- eval sets */

typedef struct eval_sink {
    ig_texts *items;
    uint64_t *lines;
    size_t cap;
} eval_sink;

static int eval_item(void *ctx, const char *name, uint64_t line, const uint8_t *text, size_t len, ig_error *err)
{
    (void)name;
    eval_sink *s = ctx;
    if (s->items->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        ig_bytes *v = realloc(s->items->v, nc * sizeof *v);
        if (v)
            s->items->v = v;
        uint64_t *l = v ? realloc(s->lines, nc * sizeof *l) : NULL;
        if (!v || !l)
            return ig_error_set(err, IG_ENOMEM, "out of memory reading the eval set");
        s->lines = l;
        s->cap = nc;
    }
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        return ig_error_set(err, IG_ENOMEM, "out of memory reading the eval set");
    memcpy(p, text, len);
    s->items->v[s->items->n] = (ig_bytes){p, len};
    s->lines[s->items->n++] = line;
    return 0;
}

void ig_eval_set_free(ig_texts *items, uint64_t *lines)
{
    for (size_t i = 0; items && i < items->n; i++)
        free(items->v[i].p);
    if (items) {
        free(items->v);
        items->v = NULL;
        items->n = 0;
    }
    free(lines);
}

int ig_eval_set_load(const char *path, const char *field, int normalize, ig_texts *items, uint64_t **lines,
                     ig_error *err)
{
    items->v = NULL;
    items->n = 0;
    *lines = NULL;
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    o.format = field ? IG_FORMAT_JSONL : IG_FORMAT_LINES;
    o.field = field;
    o.normalize = normalize;
    eval_sink s = {items, NULL, 0};
    int rc = igi_ingest_path(path, "an eval set", "cannot read the eval set", 1, &o, eval_item, &s, err);
    if (!rc && !items->n)
        rc = ig_error_set(err, IG_EUSAGE, "%s: the eval set is empty (no %s)", path,
                          field ? "record with that field" : "non-empty line");
    if (rc) {
        ig_eval_set_free(items, s.lines);
        return rc;
    }
    *lines = s.lines;
    return 0;
}
