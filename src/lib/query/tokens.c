/*
 * Queries in tokens over a token index: id lists parsed into patterns, next-token
 * histograms from suffix-array sub-intervals, and the token ∞-gram and n-gram.
 *
 * Inside a pattern's interval the suffixes are sorted by the bytes that follow it, so the
 * rows followed by one token (its tw bytes) are contiguous: each next token's group is found
 * by galloping then bisecting on those bytes, and a histogram costs O(d · log count) for d
 * distinct next tokens, whatever the count. A suffix that ends with the pattern (the last
 * document of a shard, which no separator follows) sorts first and counts as <end>, as a
 * separator after the pattern does.
 */
#include "infinigram/tokens.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "query.h"

#include <ctype.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int ig_tokens_parse(const ig_index *idx, const char *text, size_t n, uint8_t **out, size_t *len, ig_error *err)
{
    return igi_tokens_parse(idx, text, n, 0, out, len, err);
}

int igi_tokens_parse(const ig_index *idx, const char *text, size_t n, int docs, uint8_t **out, size_t *len,
                     ig_error *err)
{
    *out = NULL;
    *len = 0;
    uint32_t tw = idx->tw;
    if (!tw)
        return ig_error_set(err, IG_EUSAGE, "token ids need a token dataset (this one indexes bytes: give text)");
    uint32_t end = ig_token_end(tw);
#define IS_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r')
    while (n && IS_SPACE(text[n - 1]))
        n--;
    while (n && IS_SPACE(*text)) {
        text++;
        n--;
    }
    if (n >= 2 && text[0] == '[' && text[n - 1] == ']') { /* a JSON array of ids */
        text++;
        n -= 2;
    }
    ig_buf b = {0};
    size_t i = 0, item = 0;
    while (i < n) {
        while (i < n && IS_SPACE(text[i]))
            i++;
        if (i == n && item == 0)
            break; /* an empty list: no tokens */
        size_t at = i;
        uint64_t v = 0;
        while (i < n && isdigit((unsigned char)text[i]) && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(text[i++] - '0');
        size_t digits = i - at;
        if (digits && i < n && text[i] == '.') { /* a JSON writer's integral real: 3.0 */
            size_t k = i + 1;
            while (k < n && text[k] == '0')
                k++;
            if (k > i + 1 && (k == n || text[k] == ',' || IS_SPACE(text[k])))
                i = k;
        }
        int bad = !digits || (i < n && text[i] != ',' && !IS_SPACE(text[i]));
        if (bad || v > end) {
            size_t z = i;
            while (z < n && text[z] != ',' && !IS_SPACE(text[z]))
                z++;
            ig_buf_free(&b);
            if (bad)
                return ig_error_set(err, IG_EUSAGE, "item %zu (\"%.*s\") is not a token id (give ids as 5613,4086,9068)",
                                    item + 1, (int)(z - at > 24 ? 24 : z - at), text + at);
            /* a separator declared wider at add (65535 of u16 ids) is stored as the largest id the
             * narrower width holds: say which */
            return ig_error_set(err, IG_EUSAGE,
                                "item %zu (\"%.*s\") is larger than a token id of this dataset can be: its ids are "
                                "stored in %u byte%s, up to %" PRIu32 ", the document separator",
                                item + 1, (int)(z - at > 24 ? 24 : z - at), text + at, tw, tw == 1 ? "" : "s", end);
        }
        uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
        if (ig_buf_append(&b, le, tw)) {
            ig_buf_free(&b);
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        }
        item++;
        while (i < n && IS_SPACE(text[i])) /* then a comma, or spaces alone, before the next id */
            i++;
        if (i < n && text[i] == ',') {
            i++;
            while (i < n && IS_SPACE(text[i]))
                i++;
            if (i == n) {
                ig_buf_free(&b);
                return ig_error_set(err, IG_EUSAGE, "the list ends with a comma");
            }
        }
    }
#undef IS_SPACE
    for (size_t k = 0; !docs && k + tw < b.len; k += tw)
        if (ig_token_at(b.data + k, tw) == end) {
            size_t at = k / tw + 1;
            ig_buf_free(&b);
            return ig_error_set(err, IG_EUSAGE,
                                "item %zu is the document separator %" PRIu32 ", which may only come last "
                                "(no pattern spans two documents)",
                                at, end);
        }
    *out = b.data ? b.data : calloc(1, 1);
    *len = b.len;
    if (!*out)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    return 0;
}

int igi_token_tail_match(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m, uint64_t *off)
{
    uint32_t tw = idx->tw;
    if (!tw || m <= tw || m % tw || s->neg)
        return 0;
    for (uint32_t k = 0; k < tw; k++)
        if (p[m - tw + k] != 0xFF)
            return 0;
    size_t body = m - tw;
    if (s->n < body || memcmp(s->text + s->n - body, p, body))
        return 0;
    *off = s->n - body;
    return 1;
}

/* Whether row r is followed by the same tw bytes as `key` (or ends, as `ended`). */
static inline int same_next(const ig_index *idx, const ig_shard *s, uint64_t r, size_t len, const uint8_t *key,
                            int ended)
{
    uint64_t pos = ig_shard_sa(s, s->pw, r) + len;
    if (pos + idx->tw > s->n)
        return ended;
    return !ended && !memcmp(s->text + pos, key, idx->tw);
}

/* Recent histograms of patterns with many occurrences, keyed by their intervals (the same rows
 * hold the same next tokens): a frequent context — one token like "the" or "," — has tens of
 * thousands of distinct next tokens, each found by a bisection (tens of milliseconds), and
 * generation, eval and interactive use ask for the same ones again and again. Bounded:
 * HCACHE_SLOTS histograms and HCACHE_MAX_BYTES in all, the least recently used evicted. */
#define HCACHE_SLOTS 64
#define HCACHE_MIN_ROWS 50000
#define HCACHE_MAX_BYTES ((size_t)64 << 20)

typedef struct hc_entry {
    size_t len;               ///< pattern bytes
    int by_count;             ///< the order of v: most frequent first (ties by id), or by id
    ig_range *r;              ///< per-shard intervals (owned); NULL: a free slot
    ig_token_count *v;        ///< the histogram, in id order (owned)
    size_t n;
    uint64_t used;            ///< tick of the last use
} hc_entry;

struct ig_hcache {
    pthread_mutex_t mu;
    hc_entry e[HCACHE_SLOTS];
    uint64_t tick;
    size_t bytes;
};

struct ig_hcache *igi_hcache_new(void)
{
    struct ig_hcache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->mu, NULL);
    return c;
}

static void hc_drop(struct ig_hcache *c, hc_entry *e)
{
    c->bytes -= e->n * sizeof *e->v;
    free(e->r);
    free(e->v);
    memset(e, 0, sizeof *e);
}

void igi_hcache_free(struct ig_hcache *c)
{
    if (!c)
        return;
    for (int i = 0; i < HCACHE_SLOTS; i++)
        hc_drop(c, &c->e[i]);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* A copy of the cached histogram of (r, len) into *out: 1 when found. */
static int hc_get(const ig_index *idx, const ig_range *r, size_t len, int by_count, ig_token_count **out, size_t *n)
{
    struct ig_hcache *c = idx->hcache;
    int found = 0;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < HCACHE_SLOTS && !found; i++) {
        hc_entry *e = &c->e[i];
        if (e->r && e->len == len && e->by_count == by_count && !memcmp(e->r, r, idx->nshards * sizeof *r)) {
            found = 1;
            e->used = ++c->tick;
            if ((*out = malloc((e->n ? e->n : 1) * sizeof **out))) {
                memcpy(*out, e->v, e->n * sizeof **out);
                *n = e->n;
            } else
                found = 0; /* out of memory: computed afresh, which reports it */
        }
    }
    pthread_mutex_unlock(&c->mu);
    return found;
}

static void hc_put(const ig_index *idx, const ig_range *r, size_t len, int by_count, const ig_token_count *v, size_t n)
{
    struct ig_hcache *c = idx->hcache;
    size_t size = n * sizeof *v;
    if (size > HCACHE_MAX_BYTES / 4)
        return;
    ig_range *rc = malloc(idx->nshards * sizeof *rc);
    ig_token_count *vc = malloc((n ? n : 1) * sizeof *vc);
    if (!rc || !vc) {
        free(rc);
        free(vc);
        return;
    }
    memcpy(rc, r, idx->nshards * sizeof *rc);
    memcpy(vc, v, size);
    pthread_mutex_lock(&c->mu);
    for (;;) { /* room: a free slot and the bytes, the least recently used going first */
        hc_entry *lru = NULL, *free_slot = NULL;
        for (int i = 0; i < HCACHE_SLOTS; i++) {
            hc_entry *e = &c->e[i];
            if (!e->r)
                free_slot = free_slot ? free_slot : e;
            else if (!lru || e->used < lru->used)
                lru = e;
        }
        if (free_slot && c->bytes + size <= HCACHE_MAX_BYTES) {
            *free_slot = (hc_entry){len, by_count, rc, vc, n, ++c->tick};
            c->bytes += size;
            break;
        }
        hc_drop(c, lru);
    }
    pthread_mutex_unlock(&c->mu);
}

static int cmp_tc(const void *a, const void *b)
{
    const ig_token_count *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int igi_token_count_cmp(const void *a, const void *b)
{
    const ig_token_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int ig_token_next(const ig_index *idx, const ig_range *r, size_t len, ig_token_count **out, size_t *n, ig_error *err)
{
    if (!idx || !idx->tw) {
        *out = NULL;
        *n = 0;
        return ig_error_set(err, IG_EUSAGE, "not a token index: its next bytes are a byte distribution (ig_predict)");
    }
    return igi_token_hist(idx, r, len, 0, out, n, err);
}

int igi_token_hist(const ig_index *idx, const ig_range *r, size_t len, int by_count, ig_token_count **out, size_t *n,
                   ig_error *err)
{
    *out = NULL;
    *n = 0;
    uint64_t rows = 0;
    for (uint32_t si = 0; si < idx->nshards; si++)
        rows += r[si].hi - r[si].lo;
    int cached = idx->hcache && rows >= HCACHE_MIN_ROWS;
    if (cached && hc_get(idx, r, len, by_count, out, n))
        return 0;
    int served = 0;
    int rc = igi_next_table_hist(idx, r, len, by_count, out, n, &served, err);
    if (rc || served) /* a table's histogram is read as fast as a cached one is copied */
        return rc;
    if ((rc = igi_token_hist_exact(idx, r, len, out, n, err)))
        return rc;
    if (by_count)
        qsort(*out, *n, sizeof **out, igi_token_count_cmp);
    if (cached)
        hc_put(idx, r, len, by_count, *out, *n);
    return 0;
}

int igi_token_hist_exact(const ig_index *idx, const ig_range *r, size_t len, ig_token_count **out, size_t *n,
                         ig_error *err)
{
    *out = NULL;
    *n = 0;
    ig_token_count *v = NULL;
    size_t nv = 0, cap = 0;
    for (uint32_t si = 0; si < idx->nshards; si++) {
        const ig_shard *s = &idx->shards[si];
        uint64_t row = r[si].lo, hi = r[si].hi;
        while (row < hi) {
            uint64_t pos = ig_shard_sa(s, s->pw, row) + len;
            int ended = pos + idx->tw > s->n;
            uint8_t key[4] = {0};
            if (!ended)
                memcpy(key, s->text + pos, idx->tw);
            /* the group's end: gallop, then bisect */
            uint64_t a = row, step = 1, z;
            for (;;) {
                z = a + step;
                if (z >= hi || !same_next(idx, s, z, len, key, ended)) {
                    if (z > hi)
                        z = hi;
                    break;
                }
                a = z;
                step *= 2;
            }
            while (z - a > 1) { /* a is in the group, z is not (or is hi) */
                uint64_t mid = a + (z - a) / 2;
                if (same_next(idx, s, mid, len, key, ended))
                    a = mid;
                else
                    z = mid;
            }
            if (igi_grow(&v, nv, &cap, sizeof *v, 64)) {
                free(v);
                return ig_error_set(err, IG_ENOMEM, "out of memory making a next-token histogram");
            }
            v[nv++] = (ig_token_count){ended ? ig_token_end(idx->tw) : ig_token_at(key, idx->tw),
                                        igi_shard_signed(s, z - row)};
            row = z;
        }
    }
    if (nv) /* v is NULL when the pattern never occurs */
        qsort(v, nv, sizeof *v, cmp_tc);
    size_t k = 0;
    for (size_t i = 0; i < nv; i++) { /* shards (and the two kinds of <end>) merged */
        if (k && v[k - 1].id == v[i].id)
            v[k - 1].count += v[i].count;
        else
            v[k++] = v[i];
    }
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (v[i].count)
            v[w++] = v[i];
    *out = v ? v : calloc(1, sizeof *v);
    *n = w;
    if (!*out)
        return ig_error_set(err, IG_ENOMEM, "out of memory making a next-token histogram");
    return 0;
}

int ig_token_matching(const ig_index *idx, const uint8_t *ids, size_t len, uint64_t **ms, uint64_t *searches,
                      ig_error *err)
{
    uint64_t k = 0;
    uint32_t tw = idx->tw ? idx->tw : 1;
    size_t n = len / tw;
    *ms = malloc((n ? n : 1) * sizeof **ms);
    if (!*ms)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m)
            m--; /* what matched from i − 1 on, less its first token, matches from i */
        while (i + m < n && (++k, ig_count(idx, ids + i * tw, (size_t)(m + 1) * tw)))
            m++;
        (*ms)[i] = m;
    }
    if (searches)
        *searches = k;
    return 0;
}
