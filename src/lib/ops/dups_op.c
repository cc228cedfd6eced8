/*
 * dups: repeated passages of at least K bytes, found by a walk over the shards' suffix
 * arrays merged by their first K bytes, with the LCP of neighbouring suffixes computed
 * from the text (capped at K, stopped by a document end); the operation, its JSON, the
 * removed ranges and the deduplicated JSONL output. The method, its cost and its memory
 * are stated in include/infinigram/dups.h.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/index_impl.h"
#include "infinigram/dups.h"
#include "infinigram/text.h"
#include "op_impl.h"
#include "opjson.h"
#include "util/util.h"

/* A repeat's text in the answer: at most this many bytes of it. */
#define DUPS_SHOWN 256

const ig_field ig_dups_fields[] = {
    {"min_len", IG_FIELD_UINT, offsetof(ig_dups_opts, min_len), 1, 1e9, "K", "100",
     "shortest repeat, in bytes", NULL, 0},
    {"top", IG_FIELD_UINT, offsetof(ig_dups_opts, top), 0, 1000000, "N", "10",
     "repeats listed, by length × count (with their sources, an answer of at most 256 MiB)", NULL, 0},
    {"positions", IG_FIELD_UINT, offsetof(ig_dups_opts, positions), 0, 1000, "K", "3",
     "sources listed per repeat", NULL, 0},
    {"within_doc", IG_FIELD_BOOL, offsetof(ig_dups_opts, within_doc), 0, 0, NULL, NULL,
     "only repeats with two occurrences in one document, and the bytes they duplicate", NULL, 0},
    {"across_docs", IG_FIELD_BOOL, offsetof(ig_dups_opts, across_docs), 0, 0, NULL, NULL,
     "only repeats in two or more documents, and the bytes they duplicate", NULL, 0},
    /* the machine's to give, not a client's: over HTTP the default holds */
    {"memory", IG_FIELD_SIZE, offsetof(ig_dups_opts, memory), 1, 9.2e18, "SIZE", "4G",
     "memory budget (2 bits per corpus byte, 80 bytes per occurrence of the most frequent K-gram)", NULL,
     IG_FIELD_SHELL},
    {"threads", IG_FIELD_UINT, offsetof(ig_dups_opts, threads), 0, 64, "N", NULL,
     "worker threads, each walking part of the suffix order (default: one per core, at most 8; never more than "
     "the cores)", NULL, 0},
    {"write", IG_FIELD_TEXT, offsetof(ig_dups_opts, write), 0, 0, "FILE", NULL,
     "write the corpus without later copies as JSONL {name, source_line, text} (a regular file, never one of "
     "an infinigram home's own: its catalog, history, indexes or tables)", NULL, IG_FIELD_SHELL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_dups_defaults(ig_dups_opts *o)
{
    memset(o, 0, sizeof *o);
    ig_fields_defaults(ig_dups_fields, o, NULL);
}

enum { FILTER_ALL, FILTER_WITHIN, FILTER_ACROSS };

/* Later-window marks: bit i of w[s] is set when the K bytes at offset i of shard s occur
 * earlier in the same document, of a[s] when they occur in an earlier document. */
struct igi_dups_marks {
    uint32_t nshards;
    uint64_t k;
    int filter;
    uint64_t **w, **a;
};

static void marks_free(struct igi_dups_marks *m)
{
    if (!m)
        return;
    for (uint32_t s = 0; s < m->nshards; s++) {
        if (m->w)
            free(m->w[s]);
        if (m->a)
            free(m->a[s]);
    }
    IGI_FREE(m->w, m->a, m);
}

static inline int bit_get(const uint64_t *b, uint64_t i) { return (int)(b[i >> 6] >> (i & 63)) & 1; }
/* Atomic: threads working on different parts of the suffix order mark the same words. */
static inline void bit_set(uint64_t *b, uint64_t i)
{
    __atomic_fetch_or(&b[i >> 6], (uint64_t)1 << (i & 63), __ATOMIC_RELAXED);
}

/* Equal leading bytes of a and b, at most max, stopping before the first byte that
 * differs or is a document end: the longest common prefix that stays in one document.
 * Eight bytes at a time: a byte stops the scan when it differs (x ^ y non-zero) or is
 * 0xFF (~x zero); the lowest such byte is found exactly by the zero-byte tests. */
static uint64_t lcp_doc(const uint8_t *a, const uint8_t *b, uint64_t max)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL, hi = 0x8080808080808080ULL, ones = 0x0101010101010101ULL;
    uint64_t i = 0;
    while (i + 8 <= max) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        x = le64toh(x);
        y = le64toh(y);
        uint64_t d = x ^ y, nx = ~x;
        uint64_t ne = (((d & lo7) + lo7) | d) & hi;  /* exact: high bit where the bytes differ */
        uint64_t ff = (nx - ones) & ~nx & hi;        /* exact in its lowest set bit: x byte is 0xFF */
        uint64_t stop = ne | ff;
        if (stop)
            return i + ((uint64_t)__builtin_ctzll(stop) >> 3);
        i += 8;
    }
    while (i < max && a[i] == b[i] && a[i] != IG_DOC_END)
        i++;
    return i;
}

static inline uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Order of two suffixes by their first `cap` bytes (a suffix that ends first is smaller):
 * the order each shard's suffix array refines, so merging by it keeps each shard's order. */
static int cmp_prefix(const uint8_t *a, uint64_t na, const uint8_t *b, uint64_t nb, uint64_t cap)
{
    uint64_t m = min3(na, nb, cap);
    int c = memcmp(a, b, (size_t)m);
    if (c || m == cap || na == nb)
        return c;
    return na < nb ? -1 : 1;
}

/* One occurrence of a K-gram that occurs more than once. */
typedef struct member {
    uint64_t off;
    uint64_t doc;
    uint32_t shard;
    uint32_t gi; ///< its place in the run's suffix order (set while marking)
} member;

/* Heap of the best repeats seen (the worst at the root). */
typedef struct heap {
    ig_dups_repeat *v;
    size_t n, cap, max;
} heap;

static int better(const ig_dups_repeat *x, const ig_dups_repeat *y)
{
    unsigned __int128 sx = (unsigned __int128)x->length * x->count, sy = (unsigned __int128)y->length * y->count;
    if (sx != sy)
        return sx > sy;
    if (x->length != y->length)
        return x->length > y->length;
    if (x->first.shard != y->first.shard)
        return x->first.shard < y->first.shard;
    return x->first.offset < y->first.offset;
}

static void heap_down(heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < h->n && better(&h->v[w], &h->v[l]))
            w = l;
        if (r < h->n && better(&h->v[w], &h->v[r]))
            w = r;
        if (w == i)
            return;
        ig_dups_repeat t = h->v[i];
        h->v[i] = h->v[w];
        h->v[w] = t;
        i = w;
    }
}

static int heap_offer(heap *h, const ig_dups_repeat *x)
{
    if (!h->max)
        return 0;
    if (h->n == h->max) {
        if (better(x, &h->v[0])) {
            h->v[0] = *x;
            heap_down(h, 0);
        }
        return 0;
    }
    if (h->n == h->cap) {
        size_t nc = h->cap ? 2 * h->cap : 64;
        if (nc > h->max)
            nc = h->max;
        ig_dups_repeat *nv = realloc(h->v, nc * sizeof *nv);
        if (!nv)
            return IG_ENOMEM;
        h->v = nv;
        h->cap = nc;
    }
    size_t i = h->n++;
    h->v[i] = *x;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!better(&h->v[p], &h->v[i]))
            break;
        ig_dups_repeat t = h->v[i];
        h->v[i] = h->v[p];
        h->v[p] = t;
        i = p;
    }
    return 0;
}

/* The walk's state (one per thread). */
typedef struct walk {
    const ig_index *idx;
    uint64_t k;
    int filter;
    struct igi_dups_marks *marks;
    const volatile int *cancel;
    /* the current run of suffixes sharing K bytes, and scratch of the same size */
    member *g, *tmp;
    uint64_t *lc, *docs;
    struct { uint64_t h, lb; } *stack;
    size_t n, cap, cap_limit;
    heap top;
    ig_dups_result *r;             ///< this walk's counters (repeats*, longest)
    const uint64_t *lo, *hi;       ///< rows of each shard the part being walked covers
    const uint64_t *rows;          ///< split_rows' table
    const int *cut;                ///< parts: first bytes [cut[p], cut[p+1])
    int nparts;
    _Atomic int *next;             ///< the next part to take
    _Atomic uint64_t *done;        ///< rows walked by all threads
    _Atomic int *stop;             ///< raised when a thread fails: the others stop
    int rc;
    ig_error err;
    struct diag *diag;             ///< long copies already measured (diag_find), or NULL
} walk;

static int grow(walk *w, ig_error *err)
{
    if (w->n < w->cap)
        return 0;
    if (w->cap >= w->cap_limit)
        return ig_error_set(err, IG_ENOMEM,
                            "a %" PRIu64 "-byte string occurs more than %zu times: raise {memory} (80 bytes per "
                            "occurrence)",
                            w->k, w->cap_limit);
    size_t nc = w->cap ? 2 * w->cap : 1024;
    if (nc > w->cap_limit)
        nc = w->cap_limit;
    member *g = realloc(w->g, nc * sizeof *g);
    if (g)
        w->g = g;
    member *t = realloc(w->tmp, nc * sizeof *t);
    if (t)
        w->tmp = t;
    uint64_t *lc = realloc(w->lc, (nc + 1) * sizeof *lc);
    if (lc)
        w->lc = lc;
    uint64_t *d = realloc(w->docs, nc * sizeof *d);
    if (d)
        w->docs = d;
    void *st = realloc(w->stack, (nc + 1) * sizeof *w->stack);
    if (st)
        w->stack = st;
    if (!g || !t || !lc || !d || !st)
        return ig_error_set(err, IG_ENOMEM, "out of memory listing %zu occurrences of a repeat", nc);
    w->cap = nc;
    return 0;
}

static const uint8_t *text_at(const walk *w, const member *m, uint64_t *rest)
{
    const ig_shard *s = &w->idx->shards[m->shard];
    *rest = s->n - m->off;
    return s->text + m->off;
}

/* Long copies already measured. Two suffixes that share L bytes from x and x + δ share
 * hi − y bytes from every y + δ with x ≤ y < hi = x + L: the same bytes, ending where the
 * first pair's did (a difference, a document end, the shard's end). A corpus that holds a long
 * passage several times puts those shifted pairs next to each other in run after run, and
 * comparing each again would cost the passage's length every time (the square of it in all);
 * each pair measured at length DIAG_MIN or more is remembered by its diagonal (the two shards
 * and δ), one span per slot of a fixed table, and a pair on a remembered span is answered
 * from it. A slot taken by another diagonal is simply replaced: only time depends on it. */
#define DIAG_SLOTS (1u << 16)
#define DIAG_MIN 256
struct diag {
    uint32_t sa, sb;
    uint64_t delta, lo, hi; ///< (sb, x + delta) and (sa, x) agree on [x, hi) for lo ≤ x < hi
};

/* The pair in a fixed order (the lower position first), so that both orders meet one slot. */
static void diag_key(const member *p, const member *q, const member **a, const member **b)
{
    int swap = p->shard != q->shard ? p->shard > q->shard : p->off > q->off;
    *a = swap ? q : p;
    *b = swap ? p : q;
}

static struct diag *diag_slot(walk *w, const member *a, const member *b)
{
    uint64_t h = ((uint64_t)a->shard * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b->shard * 0xC2B2AE3D27D4EB4Full) ^
                 ((b->off - a->off) * 0xFF51AFD7ED558CCDull);
    return &w->diag[(h ^ (h >> 29)) & (DIAG_SLOTS - 1)];
}

static int diag_find(walk *w, const member *p, const member *q, uint64_t *lcp)
{
    if (!w->diag)
        return 0;
    const member *a, *b;
    diag_key(p, q, &a, &b);
    const struct diag *d = diag_slot(w, a, b);
    if (d->hi == 0 || d->sa != a->shard || d->sb != b->shard || d->delta != b->off - a->off || a->off < d->lo ||
        a->off >= d->hi)
        return 0;
    *lcp = d->hi - a->off;
    return 1;
}

static void diag_put(walk *w, const member *p, const member *q, uint64_t lcp)
{
    if (!w->diag && !(w->diag = calloc(DIAG_SLOTS, sizeof *w->diag)))
        return; /* no room: every pair is compared, as without it */
    const member *a, *b;
    diag_key(p, q, &a, &b);
    *diag_slot(w, a, b) = (struct diag){a->shard, b->shard, b->off - a->off, a->off, a->off + lcp};
}

static int cmp_pos(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->shard != y->shard)
        return x->shard < y->shard ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Order of two members of a run past their K shared bytes; suffixes that reach a document
 * end together are tied (their common prefix stops there whatever follows). */
static int cmp_full(const walk *w, const member *x, const member *y)
{
    uint64_t nx, ny;
    const uint8_t *a = text_at(w, x, &nx) + w->k, *b = text_at(w, y, &ny) + w->k;
    nx -= w->k;
    ny -= w->k;
    uint64_t m = nx < ny ? nx : ny, l = lcp_doc(a, b, m);
    if (l == m)
        return nx == ny ? 0 : nx < ny ? -1 : 1;
    if (a[l] == b[l])
        return 0;
    return a[l] < b[l] ? -1 : 1;
}

/* Puts a run spanning several shards in suffix order: it lists each shard's suffixes in
 * that shard's order, one block per shard, so a natural merge sort (merge neighbouring
 * sorted blocks until one is left) needs about log2(shards) passes. */
static void merge_shards(walk *w)
{
    size_t n = w->n;
    for (;;) {
        size_t blocks = 0, out = 0, i = 0;
        while (i < n) {
            size_t k = i + 1;
            while (k < n && cmp_full(w, &w->g[k - 1], &w->g[k]) <= 0)
                k++;
            size_t e = k;
            if (k < n) {
                e = k + 1;
                while (e < n && cmp_full(w, &w->g[e - 1], &w->g[e]) <= 0)
                    e++;
            }
            size_t p = i, q = k;
            while (p < k && q < e)
                w->tmp[out++] = cmp_full(w, &w->g[q], &w->g[p]) < 0 ? w->g[q++] : w->g[p++];
            while (p < k)
                w->tmp[out++] = w->g[p++];
            while (q < e)
                w->tmp[out++] = w->g[q++];
            i = e;
            blocks++;
        }
        memcpy(w->g, w->tmp, n * sizeof *w->g);
        if (blocks <= 1)
            return;
    }
}

/* An LCP interval [lb, rb] of the run with common prefix h ≥ K: a right-maximal repeat.
 * Counted and offered to the top when it is also left-maximal. */
static int interval(walk *w, uint64_t h, size_t lb, size_t rb, ig_error *err)
{
    int left = -2, diverse = 0;
    member first = w->g[lb];
    for (size_t i = lb; i <= rb; i++) {
        const member *m = &w->g[i];
        const uint8_t *t = w->idx->shards[m->shard].text;
        if (m->off == 0 || t[m->off - 1] == IG_DOC_END)
            diverse = 1; /* a document start: no byte can extend it to the left */
        else if (left == -2)
            left = t[m->off - 1];
        else if (left != t[m->off - 1])
            diverse = 1;
        if (cmp_pos(m, &first) < 0)
            first = *m;
        w->docs[i - lb] = m->doc;
    }
    if (!diverse)
        return 0;
    size_t c = rb - lb + 1, ndocs = 1;
    int within = 0;
    qsort(w->docs, c, sizeof *w->docs, cmp_u64);
    for (size_t i = 1; i < c; i++) {
        if (w->docs[i] == w->docs[i - 1])
            within = 1;
        else
            ndocs++;
    }
    ig_dups_result *r = w->r;
    r->repeats_all++;
    r->repeats_within += within;
    r->repeats_across += ndocs > 1;
    if ((w->filter == FILTER_WITHIN && !within) || (w->filter == FILTER_ACROSS && ndocs < 2))
        return 0;
    r->repeats++;
    if (h > r->longest)
        r->longest = h;
    ig_dups_repeat rep = {.length = h, .count = c, .documents = ndocs, .within_doc = within, .across_docs = ndocs > 1,
                          .first = {first.shard, first.off}};
    if (heap_offer(&w->top, &rep))
        return ig_error_set(err, IG_ENOMEM, "out of memory keeping the top repeats");
    return 0;
}

/* A finished run of ≥ 2 suffixes sharing their first K bytes: marks its later windows,
 * then finds its maximal repeats from the exact LCPs of the run in suffix order. */
static int run_done(walk *w, ig_error *err)
{
    size_t n = w->n;
    for (size_t i = 0; i < n; i++)
        w->g[i].gi = (uint32_t)i;
    /* corpus order: the first occurrence stays; each later one is marked by where an
     * earlier copy lies (document ids grow with corpus order). Document ids in that
     * order: a binary search only when a member is past the previous one's document. */
    memcpy(w->tmp, w->g, n * sizeof *w->g);
    qsort(w->tmp, n, sizeof *w->tmp, cmp_pos);
    uint64_t d = 0, dstart = 1, dend = 0;
    uint32_t dsh = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        member *m = &w->tmp[i];
        const ig_shard *s = &w->idx->shards[m->shard];
        if (m->shard != dsh || m->off < dstart || m->off >= dend) {
            d = igi_shard_doc_of(s, m->off);
            dsh = m->shard;
            dstart = ig_shard_doc_start(s, d);
            dend = ig_shard_doc_start(s, d + 1);
        }
        m->doc = s->doc_base + d;
        w->g[m->gi].doc = m->doc;
    }
    for (size_t i = 1; i < n; i++) {
        const member *m = &w->tmp[i];
        if (m->doc == w->tmp[i - 1].doc)
            bit_set(w->marks->w[m->shard], m->off);
        if (m->doc != w->tmp[0].doc)
            bit_set(w->marks->a[m->shard], m->off);
    }
    /* A maximal repeat needs two occurrences with different bytes before them (or one at a
     * document start). When every suffix of the run has the same byte before it, no LCP
     * interval inside the run can be one, and the exact LCPs are not needed: this skips
     * the inner suffixes of every long copied passage, whose exact LCPs would cost the
     * square of its length. */
    int left = -1, diverse = 0;
    for (size_t i = 0; i < n && !diverse; i++) {
        const uint8_t *t = w->idx->shards[w->g[i].shard].text;
        uint64_t o = w->g[i].off;
        if (o == 0 || t[o - 1] == IG_DOC_END)
            diverse = 1;
        else if (left < 0)
            left = t[o - 1];
        else
            diverse = left != t[o - 1];
    }
    if (!diverse)
        return 0;
    if (w->g[0].shard != w->g[n - 1].shard)
        merge_shards(w);
    for (size_t i = 1; i < n; i++) {
        if ((i & 4095) == 0 && ig_cancelled(w->cancel))
            return ig_error_set(err, IG_ECANCELLED, "dups cancelled");
        /* a file cut short under the walk reads as zeros: each pair could then compare the
         * whole shard; the corruption is the answer (the operation reports it) */
        if (atomic_load_explicit(&w->idx->shards[w->g[i].shard].health->state, memory_order_relaxed))
            return ig_error_set(err, IG_ECORRUPT, "index corrupt");
        if (diag_find(w, &w->g[i - 1], &w->g[i], &w->lc[i]))
            continue;
        uint64_t na, nb;
        const uint8_t *a = text_at(w, &w->g[i - 1], &na), *b = text_at(w, &w->g[i], &nb);
        uint64_t m = (na < nb ? na : nb) - w->k;
        w->lc[i] = w->k + lcp_doc(a + w->k, b + w->k, m);
        if (w->lc[i] - w->k >= DIAG_MIN)
            diag_put(w, &w->g[i - 1], &w->g[i], w->lc[i]);
    }
    w->lc[n] = w->k - 1; /* ends every open interval */
    size_t sp = 0;
    w->stack[0].h = w->k - 1;
    w->stack[0].lb = 0;
    for (size_t i = 1; i <= n; i++) {
        uint64_t l = w->lc[i];
        size_t lb = i - 1;
        while (w->stack[sp].h > l) {
            int rc = interval(w, w->stack[sp].h, (size_t)w->stack[sp].lb, i - 1, err);
            if (rc)
                return rc;
            lb = (size_t)w->stack[sp].lb;
            sp--;
        }
        if (w->stack[sp].h < l) {
            sp++;
            w->stack[sp].h = l;
            w->stack[sp].lb = lb;
        }
    }
    return 0;
}

/* Bytes covered by later windows, by kind, in one shard. */
static void count_bytes(const struct igi_dups_marks *m, uint32_t s, uint64_t n, ig_dups_result *r)
{
    const uint64_t *bw = m->w[s], *ba = m->a[s];
    uint64_t cw = 0, ca = 0, k = m->k;
    for (uint64_t i = 0; i < n;) {
        if ((i & 63) == 0 && i >= cw && i >= ca && !bw[i >> 6] && !ba[i >> 6]) {
            i += 64;
            continue;
        }
        if (bit_get(bw, i))
            cw = i + k;
        if (bit_get(ba, i))
            ca = i + k;
        r->duplicated_within += i < cw;
        r->duplicated_across += i < ca;
        r->duplicated_any += i < cw || i < ca;
        i++;
    }
}

/* Rows ahead of each shard's head whose text is prefetched. */
#define DUPS_PREFETCH 16

/* Walks the rows [lo[s], hi[s]) of every shard in the merged order. Thread 0 (with a
 * progress function) reports the rows done by all. */
static int walk_rows(walk *w, const ig_dups_opts *o, int report, ig_error *err)
{
    const ig_index *idx = w->idx;
    uint32_t ns = idx->nshards, pw = idx->pw;
    uint64_t total = 0, since = 0;
    for (uint32_t s = 0; s < ns; s++)
        total += idx->shards[s].n;
    uint64_t *row = calloc(ns, sizeof *row), *off = calloc(ns, sizeof *off);
    if (!row || !off) {
        free(row);
        free(off);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (uint32_t s = 0; s < ns; s++) {
        row[s] = w->lo[s];
        if (row[s] < w->hi[s])
            off[s] = ig_shard_sa(&idx->shards[s], pw, row[s]);
    }
    int rc = ig_cancelled(w->cancel) ? ig_error_set(err, IG_ECANCELLED, "dups cancelled") : 0, have = 0;
    member prev = {0, 0, 0, 0};
    w->n = 0;
    for (; !rc; since++) {
        if (since == 65536) {
            uint64_t done = atomic_fetch_add(w->done, since) + since;
            since = 0;
            if (atomic_load(w->stop) || ig_cancelled(w->cancel) ||
                (report && o->progress && o->progress(o->user, done, total))) {
                rc = ig_error_set(err, IG_ECANCELLED, "dups cancelled");
                break;
            }
        }
        /* the next suffix in the merged order: the smallest head by its first K bytes
         * (the lowest shard on a tie, which keeps each run's shards in blocks) */
        int64_t best = -1;
        for (uint32_t s = 0; s < ns; s++) {
            const ig_shard *sh = &idx->shards[s];
            if (row[s] >= w->hi[s])
                continue;
            if (best < 0) {
                best = s;
                continue;
            }
            const ig_shard *b = &idx->shards[best];
            if (cmp_prefix(sh->text + off[s], sh->n - off[s], b->text + off[best], b->n - off[best], w->k) < 0)
                best = s;
        }
        if (best < 0)
            break;
        const ig_shard *sh = &idx->shards[best];
        member cur = {off[best], 0, (uint32_t)best, 0};
        if (++row[best] < w->hi[best])
            off[best] = ig_shard_sa(sh, pw, row[best]);
        /* the text of a suffix a few rows ahead: each row's first text access is a cache
         * miss at a random place, which this overlaps with the work on the rows between */
        if (row[best] + DUPS_PREFETCH < w->hi[best])
            __builtin_prefetch(sh->text + ig_shard_sa(sh, pw, row[best] + DUPS_PREFETCH));
        uint64_t l = 0;
        if (have) {
            const ig_shard *ps = &idx->shards[prev.shard];
            l = lcp_doc(ps->text + prev.off, sh->text + cur.off, min3(w->k, ps->n - prev.off, sh->n - cur.off));
        }
        if (l >= w->k) {
            if (!w->n) {
                if ((rc = grow(w, err)))
                    break;
                w->g[w->n++] = prev;
            }
            if ((rc = grow(w, err)))
                break;
            w->g[w->n++] = cur;
        } else if (w->n) {
            if ((rc = run_done(w, err)))
                break;
            w->n = 0;
        }
        prev = cur;
        have = 1;
    }
    if (!rc && w->n)
        rc = run_done(w, err);
    atomic_fetch_add(w->done, since);
    if (rc)
        atomic_store(w->stop, 1);
    free(row);
    free(off);
    return rc;
}

/* Takes parts of the suffix order until none is left: threads that drew light parts take
 * more, which balances the uneven cost of runs (long periodic stretches cost more). */
static int walk_parts(walk *w, const ig_dups_opts *o, int report, ig_error *err)
{
    size_t ns = w->idx->nshards;
    for (;;) {
        int p = atomic_fetch_add(w->next, 1);
        if (p >= w->nparts)
            return 0;
        w->lo = w->rows + (size_t)w->cut[p] * ns;
        w->hi = w->rows + (size_t)w->cut[p + 1] * ns;
        int rc = walk_rows(w, o, report, err);
        if (rc)
            return rc;
    }
}

static void *walk_thread(void *arg)
{
    walk *w = arg;
    w->rc = walk_parts(w, NULL, 0, &w->err);
    return NULL;
}

/* The suffix order split into `t` parts at first-byte boundaries (a run of suffixes
 * sharing K ≥ 1 bytes never straddles one), of about equal numbers of rows: part i
 * covers first bytes [cut[i], cut[i+1]). rows[b·ns + s] (257 × ns entries) gets the
 * number of suffixes of shard s starting with a byte below b. */
static int split_rows(const ig_index *idx, int t, uint64_t *rows, int *cut, ig_error *err)
{
    uint32_t ns = idx->nshards;
    ig_range *rg = malloc((ns ? ns : 1) * sizeof *rg);
    if (!rg)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    uint64_t total = 0;
    memset(rows, 0, ns * sizeof *rows);
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        ig_find(idx, &c, 1, rg);
        for (uint32_t s = 0; s < ns; s++) {
            rows[(size_t)(b + 1) * ns + s] = rows[(size_t)b * ns + s] + (rg[s].hi - rg[s].lo);
            total += rg[s].hi - rg[s].lo;
        }
    }
    free(rg);
    cut[0] = 0;
    int b = 0;
    uint64_t acc = 0;
    for (int i = 1; i < t; i++) {
        uint64_t goal = total / (uint64_t)t * (uint64_t)i;
        while (b < 256 && acc < goal) {
            for (uint32_t s = 0; s < ns; s++)
                acc += rows[(size_t)(b + 1) * ns + s] - rows[(size_t)b * ns + s];
            b++;
        }
        cut[i] = b;
    }
    cut[t] = 256;
    /* every row once: the parts end where the suffix arrays end */
    for (uint32_t s = 0; s < ns; s++)
        if (rows[(size_t)256 * ns + s] != idx->shards[s].n)
            return ig_error_set(err, IG_ECORRUPT, "shard %" PRIu32 ": its suffixes by first byte do not add up", s);
    return 0;
}

/* Folds walk b's counters and top repeats into walk a's. */
static int walk_fold(walk *a, walk *b)
{
    a->r->repeats += b->r->repeats;
    a->r->repeats_all += b->r->repeats_all;
    a->r->repeats_within += b->r->repeats_within;
    a->r->repeats_across += b->r->repeats_across;
    if (b->r->longest > a->r->longest)
        a->r->longest = b->r->longest;
    for (size_t i = 0; i < b->top.n; i++)
        if (heap_offer(&a->top, &b->top.v[i]))
            return IG_ENOMEM;
    return 0;
}

static void walk_free(walk *w)
{
    IGI_FREE(w->g, w->tmp, w->lc, w->docs, w->stack, w->diag);
    w->diag = NULL;
    w->g = w->tmp = NULL;
    w->lc = w->docs = NULL;
    w->stack = NULL;
}

/* The walk over all shards in `t` threads (the calling thread is the first). */
static int walk_all(const ig_op_ctx *ctx, const ig_dups_opts *o, ig_dups_result *r, int t, uint64_t budget,
                    ig_error *err)
{
    const ig_index *idx = ctx->idx;
    uint32_t ns = idx->nshards;
    uint64_t *rows = malloc((size_t)257 * (ns ? ns : 1) * sizeof *rows);
    walk *w = calloc((size_t)t, sizeof *w);
    ig_dups_result *part = calloc((size_t)t, sizeof *part);
    pthread_t *th = calloc((size_t)t, sizeof *th);
    int *started = calloc((size_t)t, sizeof *started);
    int cut[257], parts = t == 1 ? 1 : 8 * t > 256 ? 256 : 8 * t;
    _Atomic uint64_t done = 0;
    _Atomic int stop = 0, next = 0;
    int rc = !rows || !w || !part || !th || !started ? ig_error_set(err, IG_ENOMEM, "out of memory") : 0;
    if (!rc)
        rc = split_rows(idx, parts, rows, cut, err);
    size_t cap_limit = (size_t)(budget / 80 / (uint64_t)t < SIZE_MAX / 2 ? budget / 80 / (uint64_t)t : SIZE_MAX / 2);
    for (int i = 0; !rc && i < t; i++) {
        w[i] = (walk){.idx = idx, .k = o->min_len, .filter = r->marks->filter, .marks = r->marks,
                      .cancel = ctx->cancel, .cap_limit = cap_limit < 2 ? 2 : cap_limit, .r = i ? &part[i] : r,
                      .rows = rows, .cut = cut, .nparts = parts, .next = &next, .done = &done, .stop = &stop};
        w[i].top.max = (size_t)o->top;
    }
    for (int i = 1; !rc && i < t; i++) {
        if (pthread_create(&th[i], NULL, walk_thread, &w[i])) {
            atomic_store(&stop, 1);
            rc = ig_error_set(err, IG_ENOMEM, "cannot start a dups thread");
            break;
        }
        started[i] = 1;
    }
    if (!rc)
        rc = walk_parts(&w[0], o, 1, err);
    for (int i = 1; i < t; i++) {
        if (!started[i])
            continue;
        pthread_join(th[i], NULL);
        /* the first real failure wins over the cancellations it caused */
        if (w[i].rc && (!rc || (rc == IG_ECANCELLED && w[i].rc != IG_ECANCELLED && !ig_cancelled(ctx->cancel)))) {
            rc = w[i].rc;
            *err = w[i].err;
        }
    }
    for (int i = 1; !rc && i < t; i++)
        if (walk_fold(&w[0], &w[i]))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory keeping the top repeats");
    if (!rc && o->progress) {
        uint64_t total = 0;
        for (uint32_t s = 0; s < ns; s++)
            total += idx->shards[s].n;
        o->progress(o->user, total, total);
    }
    for (int i = 0; w && i < t; i++) {
        walk_free(&w[i]);
        if (i)
            free(w[i].top.v);
    }
    if (w) {
        r->top = w[0].top.v;
        r->ntop = w[0].top.n;
    }
    IGI_FREE(rows, w, part, th, started);
    return rc;
}

static int write_target(const char *path, char **real, ig_error *err);

static int dups_compute(const ig_op_ctx *ctx, const ig_dups_opts *o, ig_dups_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, "dups", err))
        return IG_EUSAGE;
    if (o->min_len < 1)
        return ig_error_set(err, IG_EUSAGE, "{min_len}: must be at least 1");
    if (o->within_doc && o->across_docs)
        return ig_error_set(err, IG_EUSAGE, "give at most one of {within_doc} and {across_docs}");
    if (o->write.p) { /* a target that will be refused is refused before the work */
        /* exact bytes (ig_bytes): NUL-terminated only when a face's setter made them */
        if (memchr(o->write.p, 0, o->write.n))
            return ig_error_set(err, IG_EUSAGE, "{write}: a file name cannot hold a NUL byte");
        char *path = igi_strndup((const char *)o->write.p, o->write.n), *real = NULL;
        int rc = path ? write_target(path, &real, err) : ig_error_set(err, IG_ENOMEM, "out of memory");
        free(real);
        free(path);
        if (rc)
            return rc;
    }
    const ig_index *idx = ctx->idx;
    if (idx->npos < idx->nshards)
        return ig_error_set(err, IG_EUSAGE,
                            "dups reads the suffix arrays themselves, which still hold the documents a subtracted set "
                            "takes away: run it on a composition without --minus");
    uint64_t mark_bytes = 0;
    for (uint32_t s = 0; s < idx->nshards; s++)
        mark_bytes += 2 * 8 * ((idx->shards[s].n + 63) / 64);
    if (mark_bytes > o->memory)
        return ig_error_set(err, IG_ENOMEM,
                            "dups needs %" PRIu64 " bytes of marks (2 bits per corpus byte), over the budget of %" PRIu64
                            ": raise {memory}",
                            mark_bytes, o->memory);
    struct igi_dups_marks *m = calloc(1, sizeof *m);
    if (!m)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    m->nshards = idx->nshards;
    m->k = o->min_len;
    m->filter = o->within_doc ? FILTER_WITHIN : o->across_docs ? FILTER_ACROSS : FILTER_ALL;
    m->w = calloc(idx->nshards ? idx->nshards : 1, sizeof *m->w);
    m->a = calloc(idx->nshards ? idx->nshards : 1, sizeof *m->a);
    int rc = !m->w || !m->a ? IG_ENOMEM : 0;
    for (uint32_t s = 0; !rc && s < idx->nshards; s++) {
        size_t words = (size_t)((idx->shards[s].n + 63) / 64);
        m->w[s] = calloc(words ? words : 1, 8);
        m->a[s] = calloc(words ? words : 1, 8);
        if (!m->w[s] || !m->a[s])
            rc = IG_ENOMEM;
    }
    r->marks = m;
    if (rc) {
        ig_dups_result_free(r);
        return ig_error_set(err, IG_ENOMEM, "out of memory for %" PRIu64 " bytes of marks", mark_bytes);
    }
    /* never more threads than cores, as eval: the walk is all computation, and one request
     * over HTTP asking for 64 started 64 (and outran its deadline by half a minute) */
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = c < 1 ? 1 : (int)c, t = (int)o->threads;
    if (!t)
        t = cores > 8 ? 8 : cores;
    if (t > cores)
        t = cores;
    rc = walk_all(ctx, o, r, t, o->memory - mark_bytes, err);
    if (rc) {
        ig_dups_result_free(r);
        return rc;
    }
    heap hp = {r->top, r->ntop, r->ntop, r->ntop};
    /* best first: repeatedly take the heap's worst to the end */
    for (size_t n = r->ntop; n > 1; n--) {
        ig_dups_repeat t = r->top[0];
        r->top[0] = r->top[n - 1];
        r->top[n - 1] = t;
        hp.n = n - 1;
        heap_down(&hp, 0);
    }
    ig_index_info info;
    ig_index_get_info(idx, &info);
    r->bytes = info.bytes - info.documents;
    for (uint32_t s = 0; s < idx->nshards; s++)
        count_bytes(m, s, idx->shards[s].n, r);
    r->duplicated = m->filter == FILTER_WITHIN   ? r->duplicated_within
                    : m->filter == FILTER_ACROSS ? r->duplicated_across
                                                 : r->duplicated_any;
    /* The listing is bounded as count's is, before a source is located: each repeat costs its
     * text shown and IGI_LISTED_COST, each source listed IGI_LISTED_COST (a million repeats
     * with a thousand sources each made a 488 MB answer and a 5 GB server). */
    uint64_t spent = 0;
    for (size_t i = 0; i < r->ntop; i++)
        spent += (r->top[i].length < DUPS_SHOWN ? r->top[i].length : DUPS_SHOWN) + IGI_LISTED_COST +
                 (r->top[i].count < o->positions ? r->top[i].count : o->positions) * IGI_LISTED_COST;
    if (spent > IGI_SNIPPETS_MAX) {
        size_t listed = r->ntop;
        ig_dups_result_free(r);
        return ig_error_set(err, IG_EUSAGE,
                            "{top}: %zu repeats with {positions} %" PRIu64 " would make an answer of over %d MiB "
                            "(each repeat costs its text, up to %d bytes, and %d bytes, each source %d): list fewer "
                            "repeats or fewer sources",
                            listed, o->positions, (int)(IGI_SNIPPETS_MAX >> 20), DUPS_SHOWN, IGI_LISTED_COST,
                            IGI_LISTED_COST);
    }
    for (size_t i = 0; i < r->ntop; i++) {
        ig_dups_repeat *p = &r->top[i];
        size_t len = (size_t)p->length;
        const uint8_t *t = ig_text(idx, p->first.shard, p->first.offset, &len);
        uint64_t count;
        if ((rc = igi_op_occurrences(ctx, t, len, (size_t)o->positions, -1, &p->sources, &p->nsources, &count, err))) {
            ig_dups_result_free(r);
            return rc;
        }
        if (count != p->count) { /* the scan and the search read different bytes: the index lies */
            uint64_t scanned = p->count; /* p points into r, which is freed next */
            ig_dups_result_free(r);
            return ig_error_set(err, IG_ECORRUPT,
                                "index corrupt (%s): a repeat of %zu bytes was counted %" PRIu64
                                " times by the scan and %" PRIu64 " by a search: run :dataset verify%s%s, then rebuild",
                                idx->dir ? idx->dir : "a composition", len, scanned, count, ctx->dataset ? " " : "",
                                ctx->dataset ? ctx->dataset : "");
        }
    }
    return 0;
}

static const char *const filter_names[] = {"all", "within_doc", "across_docs"};

/* The result's memory; ig_dups_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void dups_release(ig_dups_result *r)
{
    for (size_t i = 0; r->top && i < r->ntop; i++)
        igi_op_occurrences_free(r->top[i].sources, r->top[i].nsources);
    free(r->top);
    marks_free(r->marks);
}

char *ig_dups_json(const ig_op_ctx *ctx, const ig_dups_opts *o, const ig_dups_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    igi_jw_u64(j, "min_len", o->min_len);
    cJSON_AddStringToObject(j, "filter", filter_names[o->within_doc ? FILTER_WITHIN : o->across_docs ? FILTER_ACROSS : 0]);
    igi_jw_u64(j, "bytes", r->bytes);
    igi_jw_u64(j, "duplicated", r->duplicated);
    cJSON_AddNumberToObject(j, "duplicated_share", r->bytes ? (double)r->duplicated / (double)r->bytes : 0);
    IGI_JW_U64S(j, {"duplicated_within", r->duplicated_within}, {"duplicated_across", r->duplicated_across},
                {"duplicated_any", r->duplicated_any}, {"repeats", r->repeats}, {"repeats_within", r->repeats_within},
                {"repeats_across", r->repeats_across}, {"repeats_all", r->repeats_all}, {"longest", r->longest});
    cJSON *arr = cJSON_AddArrayToObject(j, "top");
    for (size_t i = 0; ctx && ctx->idx && i < r->ntop; i++) {
        const ig_dups_repeat *p = &r->top[i];
        cJSON *rj = igi_jw_item(arr);
        igi_jw_u64(rj, "length", p->length);
        igi_jw_u64(rj, "count", p->count);
        igi_jw_u64(rj, "documents", p->documents);
        cJSON_AddBoolToObject(rj, "within_doc", p->within_doc);
        cJSON_AddBoolToObject(rj, "across_docs", p->across_docs);
        /* the text, or its first DUPS_SHOWN bytes (whole characters) for a long repeat */
        size_t len = (size_t)p->length;
        const uint8_t *t = ig_text(ctx->idx, p->first.shard, p->first.offset, &len);
        size_t show = ig_utf8_prefix(t, len, DUPS_SHOWN);
        igi_jw_bytes(rj, "text", t, show);
        cJSON_AddBoolToObject(rj, "truncated", show < p->length);
        cJSON *src = cJSON_AddArrayToObject(rj, "sources");
        for (size_t k = 0; k < p->nsources; k++)
            igi_jw_location(src, ctx->idx, &p->sources[k].loc);
    }
    return igi_jw_members(j);
}

IG_DEFINE_OP(dups, ig_dups_opts, ig_dups_result);

/* ---------------------------------------------------------------- removed ranges, output */

int ig_dups_ranges(const ig_index *idx, const ig_dups_result *r, uint32_t shard, ig_range **out, size_t *n,
                   ig_error *err)
{
    *out = NULL;
    *n = 0;
    const struct igi_dups_marks *m = r->marks;
    if (!m || shard >= idx->nshards || m->nshards != idx->nshards)
        return ig_error_set(err, IG_EUSAGE, "no dups result for shard %" PRIu32, shard);
    const uint64_t *bw = m->w[shard], *ba = m->a[shard];
    uint64_t len = idx->shards[shard].n, cover = 0;
    size_t cap = 0;
    ig_range *v = NULL;
    for (uint64_t i = 0; i < len;) {
        if ((i & 63) == 0 && i >= cover && !bw[i >> 6] && !ba[i >> 6]) {
            i += 64;
            continue;
        }
        int marked = m->filter == FILTER_WITHIN   ? bit_get(bw, i)
                     : m->filter == FILTER_ACROSS ? bit_get(ba, i)
                                                  : bit_get(bw, i) || bit_get(ba, i);
        if (marked) {
            if (*n && v[*n - 1].hi >= i) {
                v[*n - 1].hi = i + m->k; /* overlaps or touches the previous range */
            } else {
                if (igi_grow(&v, *n, &cap, sizeof *v, 64)) {
                    free(v);
                    *n = 0;
                    return ig_error_set(err, IG_ENOMEM, "out of memory listing removed ranges");
                }
                v[(*n)++] = (ig_range){i, i + m->k};
            }
            cover = i + m->k;
        }
        i++;
    }
    *out = v;
    return 0;
}

/* Appends p[0, n) as a JSON string (quotes included). */
static int json_str(FILE *f, const uint8_t *p, size_t n)
{
    if (putc('"', f) == EOF)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        int rc;
        if (c == '"' || c == '\\')
            rc = fprintf(f, "\\%c", c);
        else if (c == '\n')
            rc = fputs("\\n", f);
        else if (c == '\t')
            rc = fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            rc = fprintf(f, "\\u%04x", c);
        else
            rc = putc(c, f);
        if (rc < 0)
            return -1;
    }
    return putc('"', f) == EOF ? -1 : 0;
}

static int write_piece(FILE *f, const char *name, uint64_t line, const uint8_t *p, size_t n)
{
    if (fputs("{\"name\":", f) < 0 || json_str(f, (const uint8_t *)name, strlen(name)) ||
        fprintf(f, ",\"source_line\":%" PRIu64 ",\"text\":", line) < 0 || json_str(f, p, n) || fputs("}\n", f) < 0)
        return -1;
    return 0;
}

/* Where --write puts its file. It is written beside its target and renamed over it, which
 * would put a regular file in place of a device (/dev/null, as root), a FIFO or a symbolic
 * link: a link is followed (*real, malloc'd, is its target, replaced while the link is kept);
 * anything else but a file, or nothing yet, is refused. */
static int write_target(const char *path, char **real, ig_error *err)
{
    struct stat st;
    *real = NULL;
    if (!*path)
        return ig_error_set(err, IG_EUSAGE, "{write}: an empty name names no file");
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (!(*real = realpath(path, NULL)))
            return igi_error_errno(err, errno, path, "cannot follow the link");
        path = *real;
    }
    char *home = NULL;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        ig_error_set(err, IG_EUSAGE, "%s: not a regular file (a directory, device or FIFO): give a file name", path);
    else if ((home = igi_home_file(path))) /* the program's own files: written over, a catalog or index is lost */
        ig_error_set(err, IG_EUSAGE, "%s: one of the infinigram home %s's own files (its catalog, history, indexes "
                                     "and tables): give another path", path, home);
    else
        return 0;
    free(home);
    free(*real);
    *real = NULL;
    return IG_EUSAGE;
}

int ig_dups_write(const ig_index *idx, const ig_dups_result *r, const char *path, const volatile int *cancel,
                  uint64_t *records, uint64_t *kept, ig_error *err)
{
    if (records)
        *records = 0;
    if (kept)
        *kept = 0;
    if (!r->marks)
        return ig_error_set(err, IG_EUSAGE, "no dups result to write");
    char *real = NULL;
    int rc0 = write_target(path, &real, err);
    if (rc0)
        return rc0;
    if (real)
        path = real;
    char *tmp = igi_aprintf("%s.tmp.XXXXXX", path);
    if (!tmp) {
        free(real);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        rc0 = igi_error_errno(err, e, path, "cannot create");
        free(real);
        return rc0;
    }
    /* mkstemp's file is private (0600); the corpus written is an ordinary file */
    (void)fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        rc0 = igi_error_errno(err, e, path, "cannot write");
        free(real);
        return rc0;
    }
    int rc = 0;
    uint64_t nrec = 0, nkept = 0;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    uint8_t *orig = NULL; /* a piece's original text (case-folded index) */
    for (uint32_t s = 0; !rc && s < idx->nshards; s++) {
        const ig_shard *sh = &idx->shards[s];
        ig_range *rg;
        size_t nr, k = 0;
        if ((rc = ig_dups_ranges(idx, r, s, &rg, &nr, err)))
            break;
        for (uint64_t d = 0; !rc && d < sh->ndocs; d++) {
            if ((d & 1023) == 0 && ig_cancelled(cancel)) {
                rc = ig_error_set(err, IG_ECANCELLED, "writing %s cancelled; nothing was written", path);
                break;
            }
            ig_doc doc;
            if ((rc = ig_doc_get(idx, sh->doc_base + d, &doc, err)))
                break;
            uint64_t at = doc.start, end = doc.start + doc.length;
            while (!rc) {
                uint64_t a = end, b = end;
                if (k < nr && rg[k].lo < end) {
                    a = rg[k].lo;
                    b = rg[k].hi;
                    k++;
                    /* whole characters only: one the repeat holds in part (its bytes differ
                     * after the repeat's end) is no copy, and is kept */
                    while (a < b && (sh->text[a] & 0xC0) == 0x80)
                        a++;
                    while (b > a && b < end && (sh->text[b] & 0xC0) == 0x80)
                        b--;
                }
                if (a > at) {
                    const uint8_t *p = sh->text + at;
                    size_t n = (size_t)(a - at), olen = 0;
                    /* a case-folded index writes the documents' own text, as doc shows it */
                    if (info.casefold && (rc = ig_text_original(idx, s, at, n, &orig, &olen, NULL, err)))
                        break;
                    if (info.casefold)
                        p = orig, n = olen;
                    if (write_piece(f, doc.name, doc.source_line, p, n)) {
                        rc = igi_error_errno(err, errno, path, "cannot write");
                        break;
                    }
                    nrec++;
                    nkept += n;
                }
                if (b > at)
                    at = b;
                if (a >= end)
                    break;
            }
        }
        free(rg);
    }
    free(orig);
    if (!rc && (fflush(f) || fsync(fileno(f))))
        rc = igi_error_errno(err, errno, path, "cannot write");
    if (fclose(f) && !rc)
        rc = igi_error_errno(err, errno, path, "cannot write");
    if (!rc && rename(tmp, path))
        rc = igi_error_errno(err, errno, path, "cannot rename the finished file to");
    if (rc)
        unlink(tmp);
    free(tmp);
    free(real);
    if (!rc) {
        if (records)
            *records = nrec;
        if (kept)
            *kept = nkept;
    }
    return rc;
}
