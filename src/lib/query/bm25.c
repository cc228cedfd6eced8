/*
 * BM25 relevance of a corpus document to a text: what ranks the sources of traced spans.
 *
 * Terms are the maximal runs of Unicode letters, combining marks and digits (general
 * categories L*, M*, N*), lowercased code point by code point (utf8proc_tolower); every
 * other character, and every byte that is not valid UTF-8, separates terms. A term is
 * represented by a 64-bit hash of its lowercased UTF-8 bytes.
 *
 * With N documents, avgdl the mean document length in terms, df(t) the number of
 * documents containing term t, tf(t, d) its occurrences in document d, |d| d's length in
 * terms, and qf(t) the occurrences of t in the text:
 *
 *     idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))          (never negative)
 *     score(d, q) = sum over t of qf(t) · idf(t) · tf(t,d) · (k1 + 1)
 *                                      / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))
 *
 * The corpus statistics (document lengths, and df for every term of the corpus) take one
 * pass over the text. They are made on first use and kept in the open index; they are also
 * written beside the index's files as "bm25" (best effort: a read-only home just makes
 * them again next time), so later sessions read them instead. That file is checked (size,
 * document and byte counts of the index, checksum) before it is trusted; a bad one is
 * rebuilt. Layout, little-endian: the 56-byte header {magic "IGBM25\0\2", documents,
 * corpus bytes, vocabulary size V, total terms, the index's identity (a hash of its shards'
 * text and document-table checksums), checksum of the rest}, then u32
 * document lengths (padded to 8 bytes), V sorted u64 term hashes, V u32 document
 * frequencies.
 */
#include "infinigram/text.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <utf8proc.h>

#include "index/index_impl.h"
#include "infinigram/query.h"
#include "util/util.h"

#define BM25_MAGIC "IGBM25\0\2"
#define BM25_HEADER 56
#define BM25_FILE "bm25"

struct ig_bm25_stats {
    uint64_t docs, bytes, vocab, total_terms;
    const uint32_t *doclen;
    const uint64_t *hash; ///< sorted
    const uint32_t *df;
    uint8_t *image;       ///< the file image everything points into (owned)
    size_t image_len;
};

/* ---- terms ---- */

/* ASCII: 1 for [0-9A-Za-z]. */
static const uint8_t ascii_word[128] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
    ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
    ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
};

static int word_category(utf8proc_int32_t c)
{
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return 1;
    default:
        return 0;
    }
}

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* The FNV-1a state, mixed so that hash tables can use its low bits; never 0. */
static uint64_t term_final(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h ? h : 1;
}

typedef void (*term_fn)(void *arg, uint64_t hash, uint32_t shape);

/* Scoring reads every candidate document whole, and most of its words are not terms of the
 * text. So a pure-ASCII word of a document (the common case) is first checked against a
 * filter of the text's terms, one bit per shape (length, first and last byte, lowercased),
 * and hashed and looked up only when its shape is one of theirs; other words take the
 * character-by-character path of each_term. The terms found are the same. */
#define SHAPE_BITS 16

static uint32_t term_shape(size_t len, uint8_t first, uint8_t last)
{
    return (uint32_t)(len > 63 ? 63 : len) << 10 | (uint32_t)(first & 31) << 5 | (uint32_t)(last & 31);
}

static uint8_t ascii_lower(uint8_t c)
{
    return (uint8_t)(c | ((c >= 'A' && c <= 'Z') ? 0x20 : 0));
}

/* The term or separator at p[*i], read a character at a time exactly as each_term does:
 * returns 1 with the term's hash (and, when shape is not NULL, the shape of its lowercased
 * bytes) when p[*i] starts a term, leaving *i at the separator after it (or n); returns 0
 * when p[*i] is a separator, leaving *i after it. */
static int next_term(const uint8_t *p, size_t n, size_t *ip, uint64_t *hash, uint32_t *shape)
{
    uint64_t h = FNV_OFFSET;
    size_t i = *ip, len = 0;
    uint8_t first = 0, last = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            if (!ascii_word[c]) {
                if (!len) /* a separator: skip it */
                    i++;
                break;
            }
            last = ascii_lower(c);
            first = len ? first : last;
            h = (h ^ last) * FNV_PRIME;
            len++;
            i++;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &cp);
        if (!(k > 0 && word_category(cp))) {
            if (!len) /* a separator: skip it */
                i += k > 0 ? (size_t)k : 1;
            break;
        }
        uint8_t enc[4];
        utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_tolower(cp), enc);
        for (utf8proc_ssize_t j = 0; j < m; j++) {
            h = (h ^ enc[j]) * FNV_PRIME;
            first = len ? first : enc[j];
            last = enc[j];
            len++;
        }
        i += (size_t)k;
    }
    *ip = i;
    if (!len)
        return 0;
    *hash = term_final(h);
    if (shape)
        *shape = term_shape(len, first, last);
    return 1;
}

/* Whether the cancel flag is up, looked at once a megabyte of text: i is the offset reached,
 * *poll the offset of the next look (start it at 0). */
static int cancel_due(size_t i, size_t *poll, const volatile int *cancel)
{
    if (i < *poll)
        return 0;
    *poll = i + ((size_t)1 << 20);
    return ig_cancelled(cancel);
}

/* Calls fn for each term of p[0, n), in order, with its hash and shape; returns the number
 * of terms. Polls cancel every megabyte (returns with *stopped set). */
static uint64_t each_term(const uint8_t *p, size_t n, term_fn fn, void *arg, const volatile int *cancel, int *stopped)
{
    uint64_t terms = 0, h;
    uint32_t shape;
    size_t i = 0, poll = 0;
    while (i < n) {
        if (cancel_due(i, &poll, cancel)) {
            *stopped = 1;
            return terms;
        }
        if (next_term(p, n, &i, &h, &shape)) {
            fn(arg, h, shape);
            terms++;
        }
    }
    return terms;
}

typedef struct collect {
    uint64_t *out;
    size_t max, n;
} collect;

static void collect_term(void *arg, uint64_t h, uint32_t shape)
{
    (void)shape;
    collect *c = arg;
    if (c->n < c->max)
        c->out[c->n] = h;
    c->n++;
}

size_t ig_terms(const uint8_t *p, size_t n, uint64_t *out, size_t max)
{
    collect c = {out, out ? max : 0, 0};
    int stopped = 0;
    each_term(p, n, collect_term, &c, NULL, &stopped);
    return c.n;
}

/* ---- a hash table of terms (open addressing, linear probing; key 0 is empty) ---- */

typedef struct term_slot {
    uint64_t key;
    uint64_t last; ///< building: 1 + the last document counted; scoring: the query weight index
    uint32_t count;
} term_slot;

typedef struct term_table {
    term_slot *slot;
    size_t cap, n; ///< cap is a power of two
    int nomem;
} term_table;

static int table_init(term_table *t, size_t cap)
{
    t->cap = 64;
    while (t->cap < cap * 2)
        t->cap *= 2;
    t->n = 0;
    t->nomem = 0;
    t->slot = calloc(t->cap, sizeof *t->slot);
    return t->slot ? 0 : -1;
}

static term_slot *table_find(const term_table *t, uint64_t key)
{
    size_t m = t->cap - 1;
    for (size_t i = (size_t)key & m;; i = (i + 1) & m)
        if (t->slot[i].key == key || !t->slot[i].key)
            return &t->slot[i];
}

/* The slot of key, inserted when absent; NULL when the table cannot grow. */
static term_slot *table_get(term_table *t, uint64_t key)
{
    term_slot *s = table_find(t, key);
    if (s->key)
        return s;
    if ((t->n + 1) * 2 > t->cap) {
        term_slot *old = t->slot;
        size_t oldcap = t->cap;
        term_slot *grown = calloc(oldcap * 2, sizeof *grown);
        if (!grown) {
            t->nomem = 1;
            return NULL;
        }
        t->slot = grown;
        t->cap = oldcap * 2;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key)
                *table_find(t, old[i].key) = old[i];
        free(old);
        s = table_find(t, key);
    }
    s->key = key;
    t->n++;
    return s;
}

/* ---- corpus statistics ---- */

typedef struct df_pass {
    term_table *t;
    uint64_t doc; ///< 1 + the document being read
} df_pass;

static void count_df(void *arg, uint64_t h, uint32_t shape)
{
    (void)shape;
    df_pass *d = arg;
    term_slot *s = table_get(d->t, h);
    if (s && s->last != d->doc) {
        s->last = d->doc;
        s->count++;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Which index the statistics belong to: a hash of every shard's text and document-table
 * checksums from the manifest (two indexes of the same size have different ones). */
static uint64_t index_identity(const ig_index *idx)
{
    ig_hash h;
    igi_hash_init(&h);
    for (uint32_t i = 0; i < idx->man.nshards; i++) {
        const ig_shard_meta *sm = &idx->man.shards[i];
        uint64_t v[3] = {sm->files[IG_F_TEXT].checksum, sm->files[IG_F_DOCS].checksum, sm->documents};
        igi_hash_update(&h, v, sizeof v);
    }
    return igi_hash_final(&h);
}

static size_t image_size(uint64_t docs, uint64_t vocab)
{
    return BM25_HEADER + (size_t)((docs * 4 + 7) / 8 * 8) + (size_t)vocab * 12;
}

/* Points the stats into their image (already checked to be the right size). */
static void stats_view(struct ig_bm25_stats *st)
{
    const uint8_t *p = st->image + BM25_HEADER;
    st->doclen = (const uint32_t *)p;
    p += (st->docs * 4 + 7) / 8 * 8;
    st->hash = (const uint64_t *)p;
    st->df = (const uint32_t *)(p + st->vocab * 8);
}

/* Checksum of a stats image: its header but the checksum field, then everything after. */
static uint64_t stats_checksum(const uint8_t *img, size_t len)
{
    ig_hash h;
    igi_hash_init(&h);
    igi_hash_update(&h, img, 48);
    igi_hash_update(&h, img + BM25_HEADER, len - BM25_HEADER);
    return igi_hash_final(&h);
}

static void put64(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}

/* One shard's part of the statistics: its documents' lengths (into the shared array) and
 * its own table of document frequencies (documents never cross shards, so the corpus's df
 * of a term is the sum of the shards'). Shards are counted in parallel on the index's pool. */
typedef struct shard_terms {
    term_table t;
    uint64_t total;
    int stopped, nomem;
} shard_terms;

typedef struct stats_job {
    const ig_index *idx;
    uint32_t *doclen;
    shard_terms *part;
    const volatile int *cancel;
} stats_job;

static void stats_task(void *ctx, size_t i)
{
    stats_job *j = ctx;
    const ig_shard *s = &j->idx->shards[i];
    shard_terms *x = &j->part[i];
    if (table_init(&x->t, 1 << 14)) {
        x->nomem = 1;
        return;
    }
    for (uint64_t d = 0; !s->neg && d < s->ndocs && !x->stopped && !x->t.nomem; d++) {
        uint64_t id = igi_shard_doc_id(s, d);
        if (id == UINT64_MAX)
            continue; /* taken away by a subtracted set: not part of the corpus */
        uint64_t a = ig_shard_doc_start(s, d), e = ig_shard_doc_start(s, d + 1) - 1; /* without the 0xFF */
        df_pass pass = {&x->t, d + 1};
        uint64_t n = each_term(s->text + a, (size_t)(e - a), count_df, &pass, j->cancel, &x->stopped);
        j->doclen[id] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        x->total += n;
        if ((d & 255) == 0 && ig_cancelled(j->cancel))
            x->stopped = 1;
    }
    x->nomem |= x->t.nomem;
}

static int stats_compute(const ig_index *idx, const volatile int *cancel, struct ig_bm25_stats *st, ig_error *err)
{
    uint64_t docs = idx->man.documents;
    uint32_t *doclen = malloc((size_t)(docs ? docs : 1) * sizeof *doclen);
    shard_terms *part = calloc(idx->nshards ? idx->nshards : 1, sizeof *part);
    term_table t = {0};
    int nomem = !doclen || !part || table_init(&t, 1 << 16), stopped = 0;
    uint64_t total = 0;
    if (!nomem) {
        stats_job job = {idx, doclen, part, cancel};
        igi_pool_run(idx->pool, idx->nshards, stats_task, &job);
        /* the corpus's table: the shards' frequencies summed */
        for (uint32_t i = 0; i < idx->nshards; i++) {
            stopped |= part[i].stopped;
            nomem |= part[i].nomem;
            total += part[i].total;
            for (size_t k = 0; !nomem && !stopped && k < part[i].t.cap; k++) {
                const term_slot *x = &part[i].t.slot[k];
                term_slot *y = x->key ? table_get(&t, x->key) : NULL;
                if (x->key && !y)
                    nomem = 1;
                else if (y)
                    y->count += x->count;
            }
        }
    }
    for (uint32_t i = 0; part && i < idx->nshards; i++)
        free(part[i].t.slot);
    free(part);
    if (stopped || nomem) {
        free(doclen);
        free(t.slot);
        return stopped ? ig_error_set(err, IG_ECANCELLED, "cancelled while counting the corpus's terms")
                       : ig_error_set(err, IG_ENOMEM, "out of memory counting the corpus's terms");
    }
    uint64_t *keys = malloc((t.n ? t.n : 1) * sizeof *keys);
    size_t len = image_size(docs, t.n);
    uint8_t *img = calloc(1, len);
    if (!keys || !img) {
        IGI_FREE(keys, img, doclen, t.slot);
        return ig_error_set(err, IG_ENOMEM, "out of memory storing the corpus's terms");
    }
    size_t v = 0;
    for (size_t i = 0; i < t.cap; i++)
        if (t.slot[i].key)
            keys[v++] = t.slot[i].key;
    qsort(keys, v, sizeof *keys, cmp_u64);
    st->docs = docs;
    st->bytes = idx->man.bytes;
    st->vocab = v;
    st->total_terms = total;
    st->image = img;
    st->image_len = len;
    memcpy(img, BM25_MAGIC, 8);
    stats_view(st);
    memcpy((uint32_t *)st->doclen, doclen, (size_t)docs * sizeof *doclen);
    for (size_t i = 0; i < v; i++) {
        ((uint64_t *)st->hash)[i] = keys[i];
        ((uint32_t *)st->df)[i] = table_find(&t, keys[i])->count;
    }
    put64(img + 8, docs);
    put64(img + 16, st->bytes);
    put64(img + 24, v);
    put64(img + 32, total);
    put64(img + 40, index_identity(idx));
    put64(img + 48, stats_checksum(img, len));
    IGI_FREE(keys, doclen, t.slot);
    return 0;
}

/* The stats file of the index if it is present and sound; 0 when it was taken. Only a regular
 * file whose header names this very index and whose size is the one the header implies is read
 * whole (a FIFO, a device or a file of another index is not). */
static int stats_read(const ig_index *idx, const char *path, struct ig_bm25_stats *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    uint8_t h[BM25_HEADER];
    uint8_t *p = NULL;
    int rc = -1;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < BM25_HEADER ||
        pread(fd, h, BM25_HEADER, 0) != BM25_HEADER || memcmp(h, BM25_MAGIC, 8) ||
        ig_load_le64(h + 8) != idx->man.documents || ig_load_le64(h + 16) != idx->man.bytes ||
        ig_load_le64(h + 40) != index_identity(idx) || ig_load_le64(h + 24) > (uint64_t)sb.st_size / 12 ||
        image_size(idx->man.documents, ig_load_le64(h + 24)) != (uint64_t)sb.st_size)
        goto out;
    size_t len = (size_t)sb.st_size, got = 0;
    if (!(p = malloc(len)))
        goto out;
    while (got < len) {
        ssize_t r = pread(fd, p + got, len - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            goto out;
        got += (size_t)r;
    }
    if (stats_checksum(p, len) != ig_load_le64(p + 48) || memcmp(p, h, BM25_HEADER))
        goto out;
    st->docs = idx->man.documents;
    st->bytes = idx->man.bytes;
    st->vocab = ig_load_le64(p + 24);
    st->total_terms = ig_load_le64(p + 32);
    st->image = p;
    st->image_len = len;
    stats_view(st);
    p = NULL;
    rc = 0;
out:
    free(p);
    close(fd);
    return rc;
}

/* Writes the stats beside the index, atomically; failures are not errors (the stats
 * are in memory either way). */
static void stats_write(const char *path, const struct ig_bm25_stats *st)
{
    char *tmp = igi_aprintf("%s.tmp.%ld", path, (long)getpid());
    if (!tmp)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ig_error e = {0};
        int ok = !igi_write_all(fd, st->image, st->image_len, tmp, &e);
        ok = !close(fd) && ok;
        if (!ok || rename(tmp, path))
            unlink(tmp);
    }
    free(tmp);
}

void igi_bm25_stats_free(struct ig_bm25_stats *st)
{
    if (st) {
        free(st->image);
        free(st);
    }
}

int ig_bm25_prepare(const ig_index *cidx, const volatile int *cancel, ig_error *err)
{
    ig_index *idx = (ig_index *)cidx;
    if (atomic_load_explicit(&idx->bm25, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&idx->bm25_mu);
    int rc = 0;
    if (!atomic_load_explicit(&idx->bm25, memory_order_acquire)) {
        struct ig_bm25_stats *st = calloc(1, sizeof *st);
        /* a composed index has no directory of its own: its statistics live in memory */
        char *path = idx->dir ? igi_path_join(idx->dir, BM25_FILE) : NULL;
        if (!st || (idx->dir && !path)) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        } else if (!path || stats_read(idx, path, st)) {
            if (!(rc = stats_compute(idx, cancel, st, err)) && path)
                stats_write(path, st);
        }
        free(path);
        if (rc)
            free(st);
        else
            atomic_store_explicit(&idx->bm25, st, memory_order_release);
    }
    pthread_mutex_unlock(&idx->bm25_mu);
    return rc;
}

static uint32_t stats_df(const struct ig_bm25_stats *st, uint64_t h)
{
    size_t lo = igi_lower_bound(st->hash, (size_t)st->vocab, h);
    return lo < st->vocab && st->hash[lo] == h ? st->df[lo] : 0;
}

/* ---- scoring ---- */

typedef struct query_terms {
    term_table t;     ///< term -> index into w (slot.last)
    double *w;        ///< per distinct term: qf · idf
    uint32_t *tf;     ///< per distinct term: its count in the document being scored
    size_t n, cap;
    uint64_t shapes[((size_t)1 << SHAPE_BITS) / 64]; ///< bit term_shape(): some term of the text has it
} query_terms;

static void add_query_term(void *arg, uint64_t h, uint32_t shape)
{
    query_terms *q = arg;
    q->shapes[shape / 64] |= (uint64_t)1 << (shape % 64);
    term_slot *s = table_get(&q->t, h);
    if (!s)
        return;
    if (!s->count) {
        if (q->n == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 64;
            double *w = realloc(q->w, cap * sizeof *w);
            if (w)
                q->w = w;
            uint32_t *tf = w ? realloc(q->tf, cap * sizeof *tf) : NULL;
            if (!w || !tf) {
                q->t.nomem = 1;
                return;
            }
            q->tf = tf;
            q->cap = cap;
        }
        s->last = q->n++;
    }
    s->count++;
}

static void count_tf(query_terms *q, uint64_t h)
{
    const term_slot *s = table_find(&q->t, h);
    if (s->key)
        q->tf[s->last]++;
}

/* Counts in q->tf the text's terms in document p[0, n), as each_term would find them.
 * Polls cancel every megabyte (returns with *stopped set). */
static void score_scan(const uint8_t *p, size_t n, query_terms *q, const volatile int *cancel, int *stopped)
{
    size_t i = 0, poll = 0;
    while (i < n) {
        if (cancel_due(i, &poll, cancel)) {
            *stopped = 1;
            return;
        }
        uint8_t c = p[i];
        if (c < 0x80) {
            if (!ascii_word[c]) {
                i++;
                continue;
            }
            size_t s = i;
            do
                i++;
            while (i < n && p[i] < 0x80 && ascii_word[p[i]]);
            if (i == n || p[i] < 0x80) { /* a pure-ASCII term */
                uint32_t shape = term_shape(i - s, ascii_lower(p[s]), ascii_lower(p[i - 1]));
                if (!(q->shapes[shape / 64] >> (shape % 64) & 1))
                    continue;
                uint64_t h = FNV_OFFSET;
                for (size_t j = s; j < i; j++)
                    h = (h ^ ascii_lower(p[j])) * FNV_PRIME;
                count_tf(q, term_final(h));
                continue;
            }
            i = s; /* a non-ASCII byte follows: the term may go on */
        }
        uint64_t h;
        if (next_term(p, n, &i, &h, NULL))
            count_tf(q, h);
    }
}

/* The query's term frequencies in document id (q->tf, zeroed first); *doc receives where it
 * lies. 0, or the error (a cancel included). */
static int doc_tf(const ig_index *idx, uint64_t id, query_terms *q, const volatile int *cancel, ig_doc *doc,
                  ig_error *err)
{
    int rc = ig_doc_get(idx, id, doc, err), stopped = 0;
    if (rc)
        return rc;
    if (q->n)
        memset(q->tf, 0, q->n * sizeof *q->tf);
    score_scan(idx->shards[doc->shard].text + doc->start, (size_t)doc->length, q, cancel, &stopped);
    if (stopped || ig_cancelled(cancel))
        return ig_error_set(err, IG_ECANCELLED, "ranking cancelled");
    return 0;
}

/* The formula, shared by one index (ig_bm25_scores) and a corpus in parts (ig_bm25_score). */
static double bm25_avgdl(uint64_t docs, uint64_t total_terms)
{
    return docs ? (double)total_terms / (double)docs : 0;
}

/* qf(t) · idf(t), idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)) */
static double bm25_weight(uint32_t qf, double N, double df)
{
    return qf * log(1 + (N - df + 0.5) / (df + 0.5));
}

/* Σ over the text's terms of w(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl)) */
static double bm25_doc_score(const double *w, const uint32_t *tf, size_t n, uint32_t dl, double avgdl, double k1,
                             double b)
{
    double norm = k1 * (1 - b + (avgdl > 0 ? b * dl / avgdl : 0)), sc = 0;
    for (size_t i = 0; i < n; i++)
        if (tf[i])
            sc += w[i] * tf[i] * (k1 + 1) / (tf[i] + norm);
    return sc;
}

static void query_terms_free(query_terms *q)
{
    IGI_FREE(q->t.slot, q->w, q->tf);
}

/* The text's terms into q (each one's index into q->w and q->tf is its order of first
 * occurrence). */
static int text_terms(const uint8_t *text, size_t len, const volatile int *cancel, query_terms *q, ig_error *err)
{
    memset(q, 0, sizeof *q);
    if (table_init(&q->t, 256))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int stopped = 0;
    each_term(text, len, add_query_term, q, cancel, &stopped);
    if (q->t.nomem || stopped) {
        query_terms_free(q);
        return stopped ? ig_error_set(err, IG_ECANCELLED, "ranking cancelled")
                       : ig_error_set(err, IG_ENOMEM, "out of memory reading the text's terms");
    }
    return 0;
}

/* What every scoring starts from: the corpus statistics (made on first use) and the text's
 * terms (q, freed with query_terms_free). */
static int score_begin(const ig_index *idx, const uint8_t *text, size_t len, const volatile int *cancel,
                       const struct ig_bm25_stats **st, query_terms *q, ig_error *err)
{
    int rc = ig_bm25_prepare(idx, cancel, err);
    if (rc)
        return rc;
    *st = atomic_load_explicit(&idx->bm25, memory_order_acquire);
    return text_terms(text, len, cancel, q, err);
}

int ig_bm25_scores(const ig_index *idx, const uint8_t *text, size_t len, const uint64_t *docs, size_t n, double k1,
                   double b, const volatile int *cancel, double *scores, ig_error *err)
{
    if (!(k1 >= 0) || !(b >= 0 && b <= 1))
        return ig_error_set(err, IG_EUSAGE, "BM25 needs k1 >= 0 and 0 <= b <= 1");
    const struct ig_bm25_stats *st;
    query_terms q;
    int rc = score_begin(idx, text, len, cancel, &st, &q, err);
    if (rc)
        return rc;
    double N = (double)st->docs, avgdl = bm25_avgdl(st->docs, st->total_terms);
    for (size_t i = 0; i < q.t.cap; i++) {
        const term_slot *s = &q.t.slot[i];
        if (s->key)
            q.w[s->last] = bm25_weight(s->count, N, stats_df(st, s->key));
    }
    for (size_t j = 0; j < n && !rc; j++) {
        ig_doc doc;
        if ((rc = doc_tf(idx, docs[j], &q, cancel, &doc, err)))
            break;
        scores[j] = bm25_doc_score(q.w, q.tf, q.n, st->doclen[docs[j]], avgdl, k1, b);
    }
    query_terms_free(&q);
    return rc;
}

/* ---- a corpus in parts ---- */

int ig_bm25_part_get(const ig_index *idx, const uint8_t *text, size_t len, const volatile int *cancel,
                     ig_bm25_part *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    const struct ig_bm25_stats *st;
    query_terms q;
    int rc = score_begin(idx, text, len, cancel, &st, &q, err);
    if (rc)
        return rc;
    out->docs = st->docs;
    out->total_terms = st->total_terms;
    out->nterms = q.n;
    out->qf = calloc(q.n ? q.n : 1, sizeof *out->qf);
    out->df = calloc(q.n ? q.n : 1, sizeof *out->df);
    if (!out->qf || !out->df) {
        ig_bm25_part_free(out);
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < q.t.cap; i++) {
        const term_slot *s = &q.t.slot[i];
        if (s->key) {
            out->qf[s->last] = s->count;
            out->df[s->last] = stats_df(st, s->key);
        }
    }
    query_terms_free(&q);
    return rc;
}

int ig_bm25_part_add(ig_bm25_part *to, const ig_bm25_part *from, ig_error *err)
{
    if (to->nterms != from->nterms || (to->nterms && memcmp(to->qf, from->qf, to->nterms * sizeof *to->qf)))
        return ig_error_set(err, IG_EUSAGE, "BM25 statistics of different texts (%zu and %zu terms)", to->nterms,
                            from->nterms);
    to->docs += from->docs;
    to->total_terms += from->total_terms;
    for (size_t i = 0; i < to->nterms; i++)
        to->df[i] += from->df[i];
    return 0;
}

void ig_bm25_part_free(ig_bm25_part *p)
{
    IGI_CLEAR(p, p->qf, p->df);
}

int ig_bm25_docs_get(const ig_index *idx, const uint8_t *text, size_t len, const uint64_t *docs, size_t n,
                     const volatile int *cancel, ig_bm25_doc *out, ig_error *err)
{
    memset(out, 0, n * sizeof *out);
    const struct ig_bm25_stats *st;
    query_terms q;
    int rc = score_begin(idx, text, len, cancel, &st, &q, err);
    if (rc)
        return rc;
    for (size_t j = 0; !rc && j < n; j++) {
        ig_doc doc;
        if ((rc = doc_tf(idx, docs[j], &q, cancel, &doc, err)))
            break;
        if (!(out[j].tf = calloc(q.n ? q.n : 1, sizeof *out[j].tf))) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        if (q.n)
            memcpy(out[j].tf, q.tf, q.n * sizeof *q.tf);
        size_t tl = (size_t)doc.length;
        const uint8_t *tp = ig_text(idx, doc.shard, doc.start, &tl);
        out[j].id = docs[j];
        out[j].dl = st->doclen[docs[j]];
        out[j].len = doc.length;
        out[j].hash = igi_hash_bytes(tp, (size_t)doc.length);
    }
    query_terms_free(&q);
    if (rc)
        ig_bm25_docs_free(out, n);
    return rc;
}

void ig_bm25_docs_free(ig_bm25_doc *d, size_t n)
{
    for (size_t j = 0; d && j < n; j++) {
        free(d[j].tf);
        d[j].tf = NULL;
    }
}

double ig_bm25_score(const ig_bm25_part *corpus, uint32_t dl, const uint32_t *tf, double k1, double b)
{
    /* term by term: each term's share is what bm25_doc_score adds for it, in the same order */
    double N = (double)corpus->docs, avgdl = bm25_avgdl(corpus->docs, corpus->total_terms), sc = 0;
    for (size_t i = 0; i < corpus->nterms; i++) {
        double w = bm25_weight(corpus->qf[i], N, (double)corpus->df[i]);
        sc += bm25_doc_score(&w, &tf[i], 1, dl, avgdl, k1, b);
    }
    return sc;
}
