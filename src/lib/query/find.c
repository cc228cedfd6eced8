/*
 * Pattern search over a shard's suffix array. Two bisections find the first row whose
 * suffix starts with the pattern and the first row past them. Each comparison starts at
 * min(lcp with the lower bound, lcp with the upper bound), since every suffix between
 * two bounds shares at least that much with the pattern (the "mlr" heuristic); both
 * searches run together until they first meet a matching row, then split. A search can
 * start inside a known interval (range narrowing when a pattern grows by one byte).
 * The searches of all shards advance together, one bisection step each in turn, so a
 * multi-shard index costs about one shard's memory latency, not the sum. With a shard's lcp
 * file (format.h), a bound left among the rows of one window, or among up to BLIND_KEYS_MAX
 * sampled rows, is placed without bisecting their text (blind_rows, blind_scan): on a cold
 * page cache, one page of the file instead of a page of text per bisection step.
 */
#include "infinigram/query.h"
#include "index/index_impl.h"
#include "index/fold.h"
#include "index/lcp.h"
#include "text/ingest.h"
#include "util/util.h"

#include <endian.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Compares p with the suffix at text offset `pos`, skipping the first k bytes (known
 * equal). Returns the new common prefix length; *cmp < 0 when the suffix sorts before
 * p (including a suffix that is a proper prefix of p), 0 when it starts with p. */
static inline size_t compare_at(const ig_shard *s, uint64_t pos, const uint8_t *p, size_t m,
                                size_t k, int *cmp)
{
    uint64_t avail = s->n - pos;
    size_t lim = (uint64_t)m < avail ? m : (size_t)avail;
    const uint8_t *t = s->text + pos;
    /* eight bytes at a time: long patterns (long contexts) are compared at memory speed */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (k + 8 <= lim) {
        uint64_t a, b;
        memcpy(&a, t + k, 8);
        memcpy(&b, p + k, 8);
        if (a != b) {
            k += (size_t)__builtin_ctzll(a ^ b) / 8; /* little-endian: first differing byte */
            goto mismatch;
        }
        k += 8;
    }
#endif
    while (k < lim && t[k] == p[k])
        k++;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
mismatch:
#endif
    if (k == m)
        *cmp = 0;
    else if (k == lim)
        *cmp = -1;
    else
        *cmp = t[k] < p[k] ? -1 : 1;
    return k;
}

/* One shard's search, advanced one bisection step at a time so that the searches of several
 * shards (and the two bound searches of each) run in lock step: the processor then waits for
 * all their cache misses at once instead of one chain after the other.
 *
 * With sampled keys, the search first bisects the dense key array (one cache miss per level,
 * the upper levels always cached): chain 0 finds the last sampled row whose key sorts below
 * every string starting with p, chain 1 the first whose key sorts above them all, and the
 * suffix array is searched only between the two. Then chain 0 is the joint search until a
 * row starting with p is met ("split"), then the lower-bound search; chain 1 the upper-bound
 * search. Intervals are open: rows a and b are virtual bounds with known lcps la and lb. */
enum { SEEK_KEYS, SEEK_JOINT, SEEK_SPLIT, SEEK_DONE };

typedef struct seek {
    const ig_shard *s;
    int stage;
    int64_t a[2], b[2], mid[2];
    size_t la[2], lb[2];
    uint64_t pos[2];
    uint64_t lo, hi;        ///< SEEK_KEYS: the rows to search; the keys narrow them
    size_t known;           ///< bytes every row of [lo, hi) shares with p
    uint64_t klo, khi;      ///< p's first 8 bytes (big-endian) padded with 0x00 / 0xFF
    /** Keys the suffix-array search took on trust (-1: none), checked once the answer is known
     *  and only when the answer rests on them (see seek_verified): outer keys below and above
     *  every row starting with p, and, for a short p, the inner keys said to start with it. */
    int64_t key_lo, key_in_lo, key_in_hi, key_hi;
    int noblind;            ///< the lcp file failed this search once: bisect the text to the end
    /** [lo, hi) came from an unchecked prefix-table entry (the search compares from byte 0):
     *  the answer is checked where it touches lo or hi (seek_edges_hold) */
    int edges;
    int scanned;            ///< a bound was read off the lcps alone (blind_scan): checked at the end
    const uint8_t *p;       ///< the pattern
    /** SEEK_KEYS with the lcp file's top keys: the key rows they started each chain at (−2:
     *  none), claims checked against the sampled keys if the chain ends on them; notop once one
     *  failed (the key search then runs again over all of [ki0, ki1]). */
    int64_t top_a[2], top_b[2], ki0, ki1;
    int notop;
    ig_range r;
} seek;


static inline int chain_open(const seek *k, int j)
{
    return k->stage != SEEK_DONE && (j == 0 || k->stage != SEEK_JOINT) && k->b[j] - k->a[j] > 1;
}

static void seek_sa(seek *k, size_t m, uint64_t lo, uint64_t hi);
static int blind_keys(const ig_shard *s, const uint8_t *p, size_t m, uint64_t x, uint64_t y, size_t known,
                      ig_range *r);

/* Whether the keys an answer [r.lo, r.hi) rests on agree with the text. The suffix-array
 * search compared rows by their text, starting each comparison after the bytes the prefix
 * table guarantees (never after bytes a key claimed), so a bound inside the rows it searched
 * was settled by the text: a row below it was compared and sorts before p, a row at it starts
 * with p or sorts after. Only a bound left on a bracketing key's row (r.lo just past the
 * outer key below, or on the inner key below; r.hi on the outer key above, or just past the
 * inner key above) takes that key's word for it, and only then is the key checked against
 * the text: one page fault more in about one search in `stride`, instead of two faults
 * (the key's row and its text) per bracketing key in every search. */
static int seek_verified(const seek *k, ig_range r)
{
    const ig_shard *s = k->s;
    uint64_t st = s->stride;
    return (k->key_lo < 0 || r.lo != (uint64_t)k->key_lo * st + 1 ||
            igi_shard_key_trusted(s, s->pw, (uint32_t)st, (uint64_t)k->key_lo)) &&
           (k->key_in_lo < 0 || r.lo != (uint64_t)k->key_in_lo * st ||
            igi_shard_key_trusted(s, s->pw, (uint32_t)st, (uint64_t)k->key_in_lo)) &&
           (k->key_in_hi < 0 || r.hi != (uint64_t)k->key_in_hi * st + 1 ||
            igi_shard_key_trusted(s, s->pw, (uint32_t)st, (uint64_t)k->key_in_hi)) &&
           (k->key_hi < 0 || r.hi != (uint64_t)k->key_hi * st ||
            igi_shard_key_trusted(s, s->pw, (uint32_t)st, (uint64_t)k->key_hi));
}

static void seek_no_keys(seek *k)
{
    k->key_lo = k->key_in_lo = k->key_in_hi = k->key_hi = -1;
}

/* Whether an answer found inside the rows [lo, hi) of an unchecked prefix-table entry is the
 * shard's answer. The search compared whole suffixes with p (no bytes taken as known), so a
 * bound strictly inside [lo, hi) was settled by the text, whatever the entry says; only a bound
 * on lo or hi rests on it, and then the row just outside must sort strictly below p (before lo)
 * or strictly above it (at hi), as it does when the entry is right. So a cold search reads at
 * most two rows more, and only when its answer reaches the entry's edge, where checking the
 * entry itself costs four rows and their text (two page faults or more) on every first use. */
static int seek_edges_hold(const seek *k, ig_range r, size_t m)
{
    const ig_shard *s = k->s;
    int cmp;
    if (r.lo == k->lo && k->lo > 0) {
        compare_at(s, ig_shard_sa(s, s->pw, k->lo - 1), k->p, m, 0, &cmp);
        if (cmp >= 0)
            goto wrong;
    }
    if (r.hi == k->hi && k->hi < s->rows) {
        compare_at(s, ig_shard_sa(s, s->pw, k->hi), k->p, m, 0, &cmp);
        if (cmp <= 0)
            goto wrong;
    }
    return 1;
wrong:
    igi_shard_corrupt(s, "prefix", "the entry of bytes %02x %02x (rows %" PRIu64 "–%" PRIu64
                      ") disagrees with the suffix array", k->p[0], k->p[1], k->lo, k->hi);
    return 0;
}

/* Ends a search with r, unless r rests on a key that disagrees with the text (recorded as
 * corruption): then the rows the keys were bisected over are searched again without them. */
static void seek_finish(seek *k, ig_range r, size_t m)
{
    if (!seek_verified(k, r)) {
        seek_no_keys(k);
        seek_sa(k, m, k->lo, k->hi);
        return;
    }
    if (k->scanned) {
        /* bounds read off the lcps (blind_scan) compared no text: the first row of the answer
         * must start with p, or the search runs again on the text alone */
        int cmp = 1;
        k->scanned = 0;
        if (r.lo < r.hi)
            compare_at(k->s, ig_shard_sa(k->s, k->s->pw, r.lo), k->p, m, k->known, &cmp);
        if (cmp != 0) {
            k->noblind = 1;
            seek_no_keys(k);
            seek_sa(k, m, k->lo, k->hi);
            return;
        }
    }
    if (k->edges && !seek_edges_hold(k, r, m)) {
        /* the entry is stale or crafted: recorded, and the whole shard searched instead */
        k->edges = 0;
        k->known = 0;
        k->lo = 0;
        k->hi = k->s->rows;
        seek_no_keys(k);
        seek_sa(k, m, k->lo, k->hi);
        return;
    }
    k->r = r;
    k->stage = SEEK_DONE;
}

/* Starts the suffix-array bisection of rows [lo, hi). */
static void seek_sa(seek *k, size_t m, uint64_t lo, uint64_t hi)
{
    if (lo >= hi || m <= k->known) {
        seek_finish(k, lo >= hi ? (ig_range){lo, lo} : (ig_range){lo, hi}, m);
        return;
    }
    k->stage = SEEK_JOINT;
    k->a[0] = (int64_t)lo - 1;
    k->b[0] = (int64_t)hi;
    k->la[0] = k->lb[0] = k->known;
}

/* The key search is over: rows up to a·stride sort below p, rows from b·stride above it. When
 * p has at most 8 bytes and no NUL, a key between the two starts with p for certain (its bytes
 * are text, not padding), so rows (a+1)·stride and (b−1)·stride bracket both bounds and each
 * bound search needs only log2(stride) steps. Otherwise the suffix array is searched between. */
static void seek_after_keys(seek *k, const uint8_t *p, size_t m, uint64_t stride)
{
    int64_t a = k->a[0], b = k->b[1];
    int from_a = a >= 0 && (uint64_t)a * stride >= k->lo, to_b = (uint64_t)b * stride < k->hi;
    uint64_t lo = from_a ? (uint64_t)a * stride + 1 : k->lo;
    uint64_t hi = to_b ? (uint64_t)b * stride : k->hi;
    int short_p = m <= 8 && !memchr(p, 0, m) && a + 1 < b;
    /* Whatever the keys bisected on the way, the answer rests on those that bracket the rows
     * left: they are checked when the answer is known (seek_verified). */
    k->key_lo = from_a ? a : -1;
    k->key_hi = to_b ? b : -1;
    if (short_p) {
        k->key_in_lo = a + 1;
        k->key_in_hi = b - 1;
        /* the inner keys' rows are bounds the comparisons never start past: their lcps are
         * what the prefix table guarantees, so no comparison relies on an unchecked key */
        k->stage = SEEK_SPLIT;
        k->a[0] = (int64_t)lo - 1;
        k->la[0] = k->known;
        k->b[0] = (a + 1) * (int64_t)stride;
        k->lb[0] = k->known;
        k->a[1] = (b - 1) * (int64_t)stride;
        k->la[1] = k->known;
        k->b[1] = (int64_t)hi;
        k->lb[1] = k->known;
        if (!chain_open(k, 0) && !chain_open(k, 1))
            seek_finish(k, (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[1]}, m);
        return;
    }
    seek_sa(k, m, lo, hi);
}

/* Starts the key search over keys [ki0, ki1]: with the lcp file's top keys (in memory) each
 * chain starts inside one page of keys, the one holding its answer if the top keys are right. */
static void keys_start(seek *k)
{
    const ig_shard *s = k->s;
    const int64_t T = IG_LCP_TOP_EVERY;
    k->a[0] = k->a[1] = k->ki0 - 1;
    k->b[0] = k->b[1] = k->ki1 + 1;
    k->top_a[0] = k->top_a[1] = k->top_b[0] = k->top_b[1] = -2;
    if (!s->lcp_top || k->notop)
        return;
    int64_t t0 = (k->ki0 + T - 1) / T, t1 = k->ki1 / T;
    if (t0 > t1 || (uint64_t)t1 >= s->ntop)
        return;
    for (int j = 0; j < 2; j++) {
        /* chain 0: the last top key below klo; chain 1: the last not above khi */
        int64_t a = t0 - 1, b = t1 + 1;
        while (b - a > 1) {
            int64_t mid = a + (b - a) / 2;
            uint64_t key = s->lcp_top[mid];
            if (j == 0 ? key < k->klo : key <= k->khi)
                a = mid;
            else
                b = mid;
        }
        if (a >= t0)
            k->a[j] = k->top_a[j] = a * T;
        if (b <= t1)
            k->b[j] = k->top_b[j] = b * T;
    }
}

/* Whether the key search's bounds that came from top keys hold for the sampled keys: a chain that
 * never moved off one reads that key (on the page it searched, or the next). */
static int keys_top_hold(const seek *k)
{
    const ig_shard *s = k->s;
    return (k->a[0] != k->top_a[0] || ig_shard_key(s, (uint64_t)k->a[0]) < k->klo) &&
           (k->b[0] != k->top_b[0] || ig_shard_key(s, (uint64_t)k->b[0]) >= k->klo) &&
           (k->a[1] != k->top_a[1] || ig_shard_key(s, (uint64_t)k->a[1]) <= k->khi) &&
           (k->b[1] != k->top_b[1] || ig_shard_key(s, (uint64_t)k->b[1]) > k->khi);
}

/* Sets up a search of p inside rows [lo, hi) whose first `known` bytes equal p's; may finish it. */
static void seek_init(seek *k, const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m, uint64_t lo,
                      uint64_t hi, size_t known)
{
    memset(k, 0, sizeof *k);
    seek_no_keys(k);
    k->s = s;
    k->p = p;
    if (lo < hi && s->prefix && known == 0 && lo == 0 && hi == s->rows && m > 0) {
        /* start inside the interval of the first one or two bytes */
        uint32_t klo, khi;
        ig_prefix_keys(p, m, &klo, &khi);
        if (m <= 2 || ig_shard_checked(s, ig_shard_prefix_bit(klo, khi))) {
            /* the answer is the entry's rows (or they are known right): check the entry */
            ig_range r = ig_shard_prefix_range(s, idx->pw, klo, khi);
            lo = r.lo;
            hi = r.hi;
            known = m == 1 ? 1 : 2;
        } else {
            /* a longer pattern checks only what its answer rests on (seek_edges_hold) */
            uint64_t a = ig_shard_prefix(s, idx->pw, klo), z = ig_shard_prefix(s, idx->pw, khi);
            if (a <= z && z <= s->rows) {
                lo = a;
                hi = z;
                k->edges = 1;
            }
        }
    }
    k->known = known;
    k->lo = lo; /* where a search that went wrong starts again */
    k->hi = hi;
    uint64_t stride = s->stride;
    if (s->sample && m > known && hi - lo > 2 * stride) {
        /* key i is the row i·stride: bisect the keys of the rows inside [lo, hi) */
        uint8_t pad[8];
        size_t q = m < 8 ? m : 8;
        memset(pad, 0, 8);
        memcpy(pad, p, q);
        memcpy(&k->klo, pad, 8);
        memset(pad + q, 0xFF, 8 - q);
        memcpy(&k->khi, pad, 8);
        k->klo = be64toh(k->klo);
        k->khi = be64toh(k->khi);
        int64_t i0 = (int64_t)((lo + stride - 1) / stride), i1 = (int64_t)((hi - 1) / stride);
        k->stage = SEEK_KEYS;
        k->ki0 = i0;
        k->ki1 = i1;
        keys_start(k);
        return;
    }
    seek_sa(k, m, lo, hi);
}

/* Rows i in [x, y) — suffix-array row i·mul, its lcp with the row before L[i·sp] and its byte
 * at that depth D[i·sp] (a window of the lcp file, format.h, or its key lcps over the sampled
 * rows) — all sharing `known` bytes with p: the rows among them starting with p are [r.lo,
 * r.hi) (r.lo = r.hi where p would go when none does). First a blind descent: the rows as the leaves of a trie, whose branching bytes
 * the file holds, followed by p's bytes at the branching depths only; it lands on a row j
 * sharing the longest prefix with p of all rows (whatever bytes it skipped). One text
 * comparison gives that prefix l and which side of p row j sorts on, and the lcps place both
 * bounds: the rows starting with p are the run around j of lcp ≥ m; else rows sharing more
 * than l bytes with j sort on j's side of p, rows sharing fewer on the other, and rows sharing
 * exactly l sort by their byte at l. −1 when the lcps disagree with the text (a row said to
 * share more than l bytes with p): the caller bisects the text. */
static int blind_rows(const ig_shard *s, const uint8_t *L, const uint8_t *D, size_t sp, uint64_t mul, const uint8_t *p,
                      size_t m, uint64_t x, uint64_t y, size_t known, ig_range *r)
{
    uint64_t j = x;
    size_t h = IG_LCP_CAP + 1; /* the least lcp between row j and the row looked at */
    for (uint64_t i = x + 1; i < y; i++) {
        size_t li = L[i * sp];
        if (li < h)
            h = li;
        /* row i branches off j's path at depth h: p follows it when p's byte there is as large */
        if (h < m && li == h && p[h] >= D[i * sp]) {
            j = i;
            h = IG_LCP_CAP + 1;
        }
    }
    int cmp;
    size_t l = compare_at(s, ig_shard_sa(s, s->pw, j * mul), p, m, known, &cmp);
    uint64_t lo = j, hi;
    if (cmp == 0) {
        while (lo > x && L[lo * sp] >= m)
            lo--;
        for (hi = j + 1; hi < y && L[hi * sp] >= m;)
            hi++;
    } else if (cmp < 0) { /* rows after j: below p until one branches off upwards */
        h = IG_LCP_CAP + 1;
        for (lo = j + 1; lo < y; lo++) {
            size_t li = L[lo * sp];
            if (li < h)
                h = li;
            if (h < l || (h == l && li == l && D[lo * sp] > p[l]))
                break;
            if (h == l && li == l && D[lo * sp] == p[l])
                return -1; /* a row sharing more with p than j does: the descent was misled */
        }
        hi = lo;
    } else { /* j is in the first group of rows sharing l bytes with it: all above p */
        while (lo > x && L[lo * sp] >= l)
            lo--;
        hi = lo;
    }
    *r = (ig_range){lo, hi};
    return 0;
}

/* blind_rows over rows [x, y) of one window of the lcp file; −1 also when the window fails its
 * checksum. */
static int blind(const ig_shard *s, const uint8_t *p, size_t m, uint64_t x, uint64_t y, size_t known, ig_range *r)
{
    const uint64_t st = s->stride, w = x / st;
    if (!igi_lcp_window_ok(s, w))
        return -1;
    const uint8_t *L = s->lcp + w * ig_lcp_record((uint32_t)st) - w * st; /* indexed by row */
    return blind_rows(s, L, L + st, 1, 1, p, m, x, y, known, r);
}

/* blind_rows over the sampled rows of keys [x, y) (their key lcps): r in key numbers. */
static int blind_keys(const ig_shard *s, const uint8_t *p, size_t m, uint64_t x, uint64_t y, size_t known, ig_range *r)
{
    for (uint64_t b = x / IG_LCP_BLOCK_KEYS; b <= (y - 1) / IG_LCP_BLOCK_KEYS; b++)
        if (!igi_lcp_block_ok(s, b))
            return -1;
    return blind_rows(s, s->lcp_keys, s->lcp_keys + 1, 2, s->stride, p, m, x, y, known, r);
}

/* Whether chain j's open rows (a, b) lie in one window of a usable lcp file. */
static inline int blind_fits(const seek *k, int j, size_t m)
{
    const ig_shard *s = k->s;
    return s->lcp && !k->noblind && m <= IG_LCP_CAP && (k->stage == SEEK_JOINT || k->stage == SEEK_SPLIT) &&
           (uint64_t)(k->a[j] + 1) / s->stride == (uint64_t)(k->b[j] - 1) / s->stride;
}

/* Settles chain j by its window of the lcp file (blind), or marks the search to bisect on. */
/* A bound of the split search read off the lcps alone: chain 0's upper row b starts with p, so
 * the rows starting with p end there a run of rows each sharing at least m bytes with the next
 * (scanned back from b); chain 1's lower row a starts with p, and the run goes on from it. No
 * text is read: seek_finish checks the answer's first row against the text once. −1 when a
 * window fails its checksum. */
static int blind_scan(const seek *k, int j, size_t m, uint64_t *bound)
{
    const ig_shard *s = k->s;
    const uint64_t st = s->stride, rec = ig_lcp_record((uint32_t)st), x = (uint64_t)(k->a[j] + 1), y = (uint64_t)k->b[j];
    uint64_t w = x / st, w1 = (j == 0 ? y : y - 1) / st; /* chain 0 reads L[y]: maybe the next window's */
    if (!igi_lcp_window_ok(s, w) || (w1 != w && !igi_lcp_window_ok(s, w1)))
        return -1;
#define L_AT(i) (s->lcp[(i) / st * rec + (i) % st])
    uint64_t i;
    if (j == 0)
        for (i = y; i > x && L_AT(i) >= m;)
            i--;
    else
        for (i = x; i < y && L_AT(i) >= m;)
            i++;
#undef L_AT
    *bound = i;
    return 0;
}

static void blind_chain(seek *k, int j, const uint8_t *p, size_t m)
{
    if (k->stage == SEEK_SPLIT) {
        uint64_t bound;
        if (blind_scan(k, j, m, &bound)) {
            k->noblind = 1;
            return;
        }
        k->scanned = 1;
        k->a[j] = (int64_t)bound - 1;
        k->b[j] = (int64_t)bound;
        if (!chain_open(k, 0) && !chain_open(k, 1))
            seek_finish(k, (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[1]}, m);
        return;
    }
    ig_range r;
    if (blind(k->s, p, m, (uint64_t)(k->a[j] + 1), (uint64_t)k->b[j], k->la[j] < k->lb[j] ? k->la[j] : k->lb[j],
              &r)) {
        k->noblind = 1;
        return;
    }
    if (k->stage == SEEK_JOINT) {
        seek_finish(k, r, m);
        return;
    }
    /* chain 0 wants the lower bound, chain 1 the upper: each chain is closed on its bound */
    uint64_t bound = j == 0 ? r.lo : r.hi;
    k->a[j] = (int64_t)bound - 1;
    k->b[j] = (int64_t)bound;
    if (!chain_open(k, 0) && !chain_open(k, 1))
        seek_finish(k, (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[1]}, m);
}

/* Key rows a blind search over the key lcps takes at most: 1 KiB of them, a page or two, and a
 * scan of a microsecond or so when warm; wider runs of keys are first halved by the text. */
#define BLIND_KEYS_MAX 512

/* Whether chain j's open rows (a, b) span several windows whose sampled rows (keys [x, y)) the
 * key lcps can search at once. */
static inline int keys_fit(const seek *k, int j, size_t m, uint64_t *x, uint64_t *y)
{
    const ig_shard *s = k->s;
    if (!s->lcp || k->noblind || m > IG_LCP_CAP || (k->stage != SEEK_JOINT && k->stage != SEEK_SPLIT))
        return 0;
    uint64_t st = s->stride;
    *x = ((uint64_t)(k->a[j] + 1) + st - 1) / st;
    *y = (uint64_t)(k->b[j] - 1) / st + 1;
    return *y > *x && *y - *x <= BLIND_KEYS_MAX;
}

/* Narrows chain j to one window by the key lcps over keys [x, y) (blind_keys): the sampled
 * rows below and above its bound; in the joint search, both bounds' windows. Marks the search
 * to bisect the text when the key lcps fail. */
static void keys_chain(seek *k, int j, const uint8_t *p, size_t m, uint64_t x, uint64_t y)
{
    ig_range kr;
    size_t known = k->la[j] < k->lb[j] ? k->la[j] : k->lb[j];
    if (blind_keys(k->s, p, m, x, y, known, &kr)) {
        k->noblind = 1;
        return;
    }
    const int64_t st = (int64_t)k->s->stride, a = k->a[j], b = k->b[j];
    const size_t la = k->la[j], lb = k->lb[j];
    /* the rows between two sampled rows, inside (a, b): the lcps known at a and b stay */
#define KEYS_WINDOW(c, key)                                                                                            \
    do {                                                                                                               \
        int64_t lo_ = ((int64_t)(key) - 1) * st, hi_ = (int64_t)(key) * st;                                           \
        k->a[c] = lo_ > a ? lo_ : a;                                                                                   \
        k->la[c] = lo_ > a ? known : la;                                                                               \
        k->b[c] = hi_ < b ? hi_ : b;                                                                                   \
        k->lb[c] = hi_ < b ? known : lb;                                                                               \
    } while (0)
    if (k->stage == SEEK_JOINT) {
        KEYS_WINDOW(0, kr.lo);
        if (kr.lo < kr.hi) { /* sampled rows start with p: the two bounds apart */
            KEYS_WINDOW(1, kr.hi);
            k->stage = SEEK_SPLIT;
        }
    } else {
        KEYS_WINDOW(j, j == 0 ? kr.lo : kr.hi);
    }
#undef KEYS_WINDOW
    if (!chain_open(k, 0) && !chain_open(k, 1))
        seek_finish(k,
                    k->stage == SEEK_SPLIT ? (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[1]}
                                           : (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[0]},
                    m);
}

/* The row a bisection step of chain j compares: the middle, or with a usable lcp file the
 * window boundary nearest it, so that the rows left fall into one window the sooner. */
static inline int64_t seek_mid(const seek *k, int j, size_t m)
{
    int64_t a = k->a[j], b = k->b[j], mid = a + (b - a) / 2;
    const ig_shard *s = k->s;
    if (!s->lcp || k->noblind || m > IG_LCP_CAP || k->stage == SEEK_KEYS)
        return mid;
    /* the rows a+1 .. b−1 span two windows or more: boundaries lie in [a + 2, b − 1] */
    int64_t st = (int64_t)s->stride, first = (a + 2 + st - 1) / st * st, last = (b - 1) / st * st;
    int64_t c = (mid + st / 2) / st * st;
    return c < first ? first : c > last ? last : c;
}

/* The key search is over (both chains closed: by bisection, or from the start when the top keys
 * leave a chain nothing to search): on to the suffix array, unless a top key it relied on is
 * wrong, in which case the key search runs again without them. */
static void keys_done(seek *k, const uint8_t *p, size_t m)
{
    if (keys_top_hold(k)) {
        seek_after_keys(k, p, m, k->s->stride);
    } else {
        k->notop = 1;
        keys_start(k);
    }
}

/* Runs n searches of the same pattern to the end, all in lock step. */
static void seek_run(const ig_index *idx, seek *ks, int n, const uint8_t *p, size_t m)
{
    const int pf = idx->prefetch;
    for (;;) {
        int open = 0;
        for (int i = 0; i < n; i++) {
            seek *k = &ks[i];
            if (k->stage == SEEK_KEYS && !chain_open(k, 0) && !chain_open(k, 1))
                keys_done(k, p, m);
            for (int j = 0; j < 2; j++)
                for (;;) {
                    uint64_t x, y;
                    if (!chain_open(k, j))
                        break;
                    if (blind_fits(k, j, m))
                        blind_chain(k, j, p, m);
                    else if (keys_fit(k, j, m, &x, &y))
                        keys_chain(k, j, p, m, x, y);
                    else
                        break;
                }
            for (int j = 0; j < 2; j++)
                if (chain_open(k, j)) {
                    k->mid[j] = seek_mid(k, j, m);
                    if (pf)
                        __builtin_prefetch(k->stage == SEEK_KEYS ? k->s->sample + (uint64_t)k->mid[j] * 8
                                                                 : k->s->sa + (uint64_t)k->mid[j] * k->s->pw);
                    open = 1;
                }
        }
        if (!open)
            break;
        for (int i = 0; i < n; i++) {
            seek *k = &ks[i];
            if (k->stage == SEEK_KEYS)
                continue;
            for (int j = 0; j < 2; j++)
                if (chain_open(k, j)) {
                    k->pos[j] = ig_shard_sa(k->s, k->s->pw, (uint64_t)k->mid[j]);
                    if (pf)
                        __builtin_prefetch(k->s->text + k->pos[j] + (k->la[j] < k->lb[j] ? k->la[j] : k->lb[j]));
                }
        }
        for (int i = 0; i < n; i++) {
            seek *k = &ks[i];
            if (k->stage == SEEK_DONE)
                continue;
            if (k->stage == SEEK_KEYS) {
                /* chain 0: keys below every string starting with p; chain 1: keys above them all */
                if (chain_open(k, 0)) {
                    if (ig_shard_key(k->s, (uint64_t)k->mid[0]) < k->klo)
                        k->a[0] = k->mid[0];
                    else
                        k->b[0] = k->mid[0];
                }
                if (chain_open(k, 1)) {
                    if (ig_shard_key(k->s, (uint64_t)k->mid[1]) > k->khi)
                        k->b[1] = k->mid[1];
                    else
                        k->a[1] = k->mid[1];
                }
                if (!chain_open(k, 0) && !chain_open(k, 1))
                    keys_done(k, p, m);
                continue;
            }
            int was_split = k->stage == SEEK_SPLIT;
            for (int j = 0; j < 2; j++) {
                if (!chain_open(k, j))
                    continue;
                int cmp;
                size_t c = compare_at(k->s, k->pos[j], p, m, k->la[j] < k->lb[j] ? k->la[j] : k->lb[j], &cmp);
                if (!was_split && cmp == 0) {
                    /* the row starts with p: lower bound in (a, mid], upper bound in [mid, b) */
                    k->a[1] = k->mid[0];
                    k->la[1] = m;
                    k->b[1] = k->b[0];
                    k->lb[1] = k->lb[0];
                    k->b[0] = k->mid[0];
                    k->lb[0] = m;
                    k->stage = SEEK_SPLIT;
                } else if (j == 0 ? cmp < 0 : cmp <= 0) {
                    k->a[j] = k->mid[j];
                    k->la[j] = c;
                } else {
                    k->b[j] = k->mid[j];
                    k->lb[j] = c;
                }
                if (!was_split)
                    break; /* chain 1 opens at the next step */
            }
            if (!chain_open(k, 0) && !chain_open(k, 1))
                seek_finish(k,
                            k->stage == SEEK_SPLIT ? (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[1]}
                                                   : (ig_range){(uint64_t)k->b[0], (uint64_t)k->b[0]},
                            m);
        }
    }
}

ig_range igi_shard_find(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m,
                       uint64_t lo, uint64_t hi, size_t known)
{
    seek k;
    seek_init(&k, idx, s, p, m, lo, hi, known);
    if (k.stage != SEEK_DONE)
        seek_run(idx, &k, 1, p, m);
    return k.r;
}

/* A byte shard too small for a prefix file (the build leaves them out below 8 MiB, where the
 * table would weigh on the index) gets the same table in memory on its first search, so its
 * searches also start inside the pattern's two-byte interval rather than bisecting the whole
 * array. NULL for a shard with a prefix file or of a token index (which indexes token starts
 * only), or when memory runs out; owned by the shard, made once, safe from several threads. */
static const uint64_t *shard_mem_prefix(const ig_shard *s)
{
    const uint64_t *t = atomic_load_explicit(&s->mem_prefix, memory_order_acquire);
    if (t || s->prefix || s->rows != s->n || !s->n) /* a token shard indexes token starts only */
        return t;
    uint64_t *fresh = malloc((size_t)(IG_PREFIX_KEYS + 1) * sizeof *fresh);
    if (!fresh)
        return NULL; /* searches bisect the whole array, as before */
    igi_prefix_fill(s->text, s->n, fresh);
    const uint64_t *none = NULL;
    ig_shard *w = (ig_shard *)s; /* a cache of what the text says, not a change: made once */
    if (atomic_compare_exchange_strong_explicit(&w->mem_prefix, &none, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free(fresh); /* another thread made it first */
    return none;
}

/* One shard without prefix file or sampled keys: the same bisections as seek_run (joint until a
 * row starting with p is met, then the two bounds, each comparison starting at the smaller of the
 * bounds' lcps), in a plain loop. With a single search in flight the lock-step machinery only
 * costs instructions, and on a shard small enough to lack the tables most rows come from cache. */
static ig_range find_plain(const ig_shard *s, const uint8_t *p, size_t m)
{
    const uint32_t pw = s->pw;
    int64_t a = -1, b = (int64_t)s->rows;
    size_t la = 0, lb = 0;
    if (!m)
        return (ig_range){0, s->rows};
    const uint64_t *pre = shard_mem_prefix(s);
    if (pre) { /* start inside the first two bytes' interval: every row in it shares them with p */
        uint32_t k, end;
        ig_prefix_keys(p, m, &k, &end);
        if (m <= 2 || pre[k] == pre[end])
            return (ig_range){pre[k], pre[end]};
        a = (int64_t)pre[k] - 1;
        b = (int64_t)pre[end];
        la = lb = 2;
    }
    while (b - a > 1) {
        int64_t mid = a + (b - a) / 2;
        int cmp;
        /* the next row read is the middle of one half or the other: fetch both rows, and the
         * text where their comparisons start, while comparing this one */
        {
            uint64_t r0 = (uint64_t)(a + (mid - a + 1) / 2), r1 = (uint64_t)(mid + (b - mid) / 2);
            uint64_t t0 = ig_shard_sa_raw(s, pw, r0), t1 = ig_shard_sa_raw(s, pw, r1);
            size_t k = la < lb ? la : lb;
            if (t0 < s->n)
                __builtin_prefetch(s->text + t0 + k);
            if (t1 < s->n)
                __builtin_prefetch(s->text + t1 + k);
        }
        size_t c = compare_at(s, ig_shard_sa(s, pw, (uint64_t)mid), p, m, la < lb ? la : lb, &cmp);
        if (cmp < 0) {
            a = mid;
            la = c;
        } else if (cmp > 0) {
            b = mid;
            lb = c;
        } else {
            /* lower bound in (a, mid], upper bound in [mid, b): both searched in turn, step by step */
            int64_t a0 = a, b0 = mid, a1 = mid, b1 = b;
            size_t la0 = la, lb0 = m, la1 = m, lb1 = lb;
            while (b0 - a0 > 1 || b1 - a1 > 1) {
                if (b0 - a0 > 1) {
                    int64_t x = a0 + (b0 - a0) / 2;
                    size_t cx = compare_at(s, ig_shard_sa(s, pw, (uint64_t)x), p, m, la0 < lb0 ? la0 : lb0, &cmp);
                    if (cmp < 0) {
                        a0 = x;
                        la0 = cx;
                    } else {
                        b0 = x;
                        lb0 = cx;
                    }
                }
                if (b1 - a1 > 1) {
                    int64_t x = a1 + (b1 - a1) / 2;
                    size_t cx = compare_at(s, ig_shard_sa(s, pw, (uint64_t)x), p, m, la1 < lb1 ? la1 : lb1, &cmp);
                    if (cmp <= 0) {
                        a1 = x;
                        la1 = cx;
                    } else {
                        b1 = x;
                        lb1 = cx;
                    }
                }
            }
            return (ig_range){(uint64_t)b0, (uint64_t)b1};
        }
    }
    return (ig_range){(uint64_t)b, (uint64_t)b};
}

/* Every shard's interval of p, searched together (batches of SEEK_BATCH shards). */
#define SEEK_BATCH 16
static uint64_t find_all(const ig_index *idx, const uint8_t *p, size_t m, ig_range *ranges)
{
    uint64_t total = 0;
    if (igi_pattern_crosses_documents(idx, p, m)) {
        if (ranges)
            for (uint32_t i = 0; i < idx->nshards; i++)
                ranges[i] = (ig_range){0, 0};
        return 0;
    }
    uint64_t held;
    if (idx->ntab && igi_next_table_find(idx, p, m, ranges, &held)) /* a frequent context of a token index */
        return held;
    if (idx->tw) /* the last document of each shard ends with no separator after it */
        for (uint32_t i = 0; i < idx->nshards; i++) {
            uint64_t off;
            total += (uint64_t)igi_token_tail_match(idx, &idx->shards[i], p, m, &off);
        }
    if (idx->nshards == 1 && !idx->shards[0].prefix && !idx->shards[0].sample) {
        const ig_shard *s = &idx->shards[0];
        ig_range r = find_plain(s, p, m);
        if (ranges)
            ranges[0] = r;
        return total + igi_shard_signed(s, r.hi - r.lo);
    }
    seek ks[SEEK_BATCH];
    for (uint32_t base = 0; base < idx->nshards; base += SEEK_BATCH) {
        int n = idx->nshards - base < SEEK_BATCH ? (int)(idx->nshards - base) : SEEK_BATCH;
        for (int i = 0; i < n; i++) {
            const ig_shard *s = &idx->shards[base + (uint32_t)i];
            seek_init(&ks[i], idx, s, p, m, 0, s->rows, 0);
        }
        seek_run(idx, ks, n, p, m);
        for (int i = 0; i < n; i++) {
            if (ranges)
                ranges[base + (uint32_t)i] = ks[i].r;
            total += igi_shard_signed(&idx->shards[base + (uint32_t)i], ks[i].r.hi - ks[i].r.lo);
        }
    }
    return total;
}

int igi_pattern_crosses_documents(const ig_index *idx, const uint8_t *p, size_t m)
{
    if (idx->tw <= 1)
        return m > 1 && memchr(p, IG_DOC_END, m - 1) != NULL;
    /* a token index: a separator token (tw bytes 0xFF at a token start) before the last token */
    for (size_t i = 0; i + 2 * idx->tw <= m; i += idx->tw) {
        size_t k = 0;
        while (k < idx->tw && p[i + k] == 0xFF)
            k++;
        if (k == idx->tw)
            return 1;
    }
    return 0;
}

uint64_t ig_find(const ig_index *idx, const uint8_t *pattern, size_t len, ig_range *ranges)
{
    return find_all(idx, pattern, len, ranges);
}

uint64_t ig_count(const ig_index *idx, const uint8_t *pattern, size_t len)
{
    if (!idx || (!pattern && len)) /* no index, or no pattern: nothing counted */
        return 0;
    return find_all(idx, pattern, len, NULL);
}

int ig_query_normalize(const ig_index *idx, const uint8_t *p, size_t n, uint8_t **out,
                       size_t *outlen, ig_error *err)
{
    if (idx->tw) /* no tokenizer turns text into its ids */
        return ig_error_set(err, IG_EUSAGE, "this is a token dataset without a tokenizer: give token ids, not text");
    size_t ascii = 0;
    while (ascii < n && p[ascii] < 0x80)
        ascii++;
    if (!idx->man.casefold && (ascii == n || !idx->man.normalized)) {
        /* the bytes as they are (NFC leaves ASCII alone): the common query, one copy */
        if (!(*out = malloc(n + 1)))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        if (n) /* (NULL, 0) is the empty query */
            memcpy(*out, p, n);
        (*out)[n] = 0;
        *outlen = n;
        return 0;
    }
    ig_buf b = {0};
    size_t bad;
    int rc = (idx->man.normalized && igi_utf8_check(p, n, &bad)) ? igi_utf8_nfc(p, n, &b, NULL, err)
                                                                 : ig_buf_append(&b, p, n);
    if (!rc && idx->man.casefold) { /* folded as the documents were, after NFC */
        ig_buf f = {0};
        rc = igi_fold_append(&f, b.data, b.len, NULL, err);
        ig_buf_free(&b);
        b = f;
    }
    if (!rc)
        rc = ig_buf_append(&b, "", 1); /* NUL after the bytes for callers that print */
    if (rc) {
        ig_buf_free(&b);
        return err && err->code ? rc : ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    *out = b.data;
    *outlen = b.len - 1;
    return 0;
}
