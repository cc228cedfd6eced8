/*
 * Case folding of documents (at build) and of queries, and the way back from folded
 * offsets to the original text (fold.h describes the fold file). ASCII — the bulk of most
 * corpora — is folded byte by byte and costs one bit per byte to undo; every other
 * character goes through utf8proc.
 */
#include "fold.h"
#include "index_impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---------------------------------------------------------------- folding */

static int set_bit(igi_folder *f, uint64_t pos)
{
    size_t byte = (size_t)(pos / 8);
    if (byte >= f->bits.len) {
        size_t add = byte + 1 - f->bits.len;
        if (igi_buf_reserve(&f->bits, add))
            return IG_ENOMEM;
        memset(f->bits.data + f->bits.len, 0, add);
        f->bits.len += add;
    }
    f->bits.data[byte] |= (uint8_t)(1u << (pos % 8));
    return 0;
}

/* The folding of code point cp as UTF-8 in out (IG_FOLD_MAX bytes): its length and number
 * of code points, or 0 when folding leaves it as it is. */
static size_t fold_cp(utf8proc_int32_t cp, uint8_t *out, size_t *chars)
{
    utf8proc_int32_t d[IG_FOLD_MAX / 4];
    int bc = 0;
    utf8proc_ssize_t m = utf8proc_decompose_char(cp, d, IG_FOLD_MAX / 4, UTF8PROC_CASEFOLD, &bc);
    if (m <= 0 || m > IG_FOLD_MAX / 4 || (m == 1 && d[0] == cp))
        return 0;
    size_t len = 0;
    for (utf8proc_ssize_t i = 0; i < m; i++) {
        if (len + 4 > IG_FOLD_MAX)
            return 0;
        len += (size_t)utf8proc_encode_char(d[i], out + len);
    }
    *chars = (size_t)m;
    return len;
}

int igi_fold_append(ig_buf *text, const uint8_t *p, size_t n, igi_folder *f, ig_error *err)
{
    if (igi_buf_reserve(text, n))
        goto oom;
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) { /* an ASCII run: capitals lowered, each marked in the bitmap */
            size_t j = i;
            while (j < n && p[j] < 0x80)
                j++;
            uint8_t *out = text->data + text->len;
            for (size_t k = i; k < j; k++) {
                uint8_t c = p[k];
                if ((uint8_t)(c - 'A') < 26) {
                    c += 32;
                    if (f && set_bit(f, text->len + (k - i)))
                        goto oom;
                }
                out[k - i] = c;
            }
            text->len += j - i;
            if (f)
                f->orig += j - i;
            i = j;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i < 4 ? n - i : 4), &cp);
        uint8_t fb[IG_FOLD_MAX];
        size_t chars = 0, flen = k > 0 ? fold_cp(cp, fb, &chars) : 0;
        if (k <= 0)
            k = 1; /* not UTF-8: kept as it is */
        if (!flen) {
            if (ig_buf_append(text, p + i, (size_t)k))
                goto oom;
        } else {
            if (f) {
                uint8_t rec[IG_FOLD_REC] = {0};
                uint64_t fo = htole64((uint64_t)text->len), oo = htole64(f->orig);
                memcpy(rec, &fo, 8);
                memcpy(rec + 8, &oo, 8);
                rec[16] = (uint8_t)flen;
                rec[17] = (uint8_t)k;
                rec[18] = (uint8_t)chars;
                memcpy(rec + 20, p + i, (size_t)k);
                if (ig_buf_append(&f->exc, rec, sizeof rec))
                    goto oom;
            }
            if (ig_buf_append(text, fb, flen))
                goto oom;
        }
        if (f)
            f->orig += (uint64_t)k;
        i += (size_t)k;
        /* keep room for the rest, so the ASCII path can write without reserving */
        if (igi_buf_reserve(text, n - i))
            goto oom;
    }
    return 0;
oom:
    return ig_error_set(err, IG_ENOMEM, "out of memory case-folding a document of %zu bytes", n);
}

void igi_folder_reset(igi_folder *f)
{
    f->bits.len = 0;
    f->exc.len = 0;
    f->orig = 0;
}

void igi_folder_free(igi_folder *f)
{
    ig_buf_free(&f->bits);
    ig_buf_free(&f->exc);
    memset(f, 0, sizeof *f);
}

/* ---------------------------------------------------------------- the way back */

static inline const uint8_t *rec_at(const ig_shard *s, uint64_t k) { return s->fold_exc + k * IG_FOLD_REC; }
static inline uint64_t rec_foff(const ig_shard *s, uint64_t k) { return ig_load_le64(rec_at(s, k)); }
static inline uint64_t rec_fend(const ig_shard *s, uint64_t k) { return rec_foff(s, k) + rec_at(s, k)[16]; }

/* On the shard's first use of its fold file: the whole file against its checksum (racing
 * threads may both hash it; the outcome is the same). A mismatch is recorded as corruption,
 * so that the answer that read the file is discarded. */
static void summed(const ig_shard *s)
{
    if (__builtin_expect(atomic_load_explicit(&s->fold_summed, memory_order_acquire), 1))
        return;
    const ig_map *m = &s->maps[IG_F_FOLD];
    if (igi_hash_bytes(m->addr, m->len) != s->fold_sum)
        igi_shard_corrupt(s, "fold", "checksum mismatch");
    atomic_store_explicit(&((ig_shard *)s)->fold_summed, 1, memory_order_release);
}

/* The number of exceptions that start before folded offset f. */
static uint64_t starting_before(const ig_shard *s, uint64_t f)
{
    uint64_t lo = 0, hi = s->fold_nexc;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rec_foff(s, mid) < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t igi_fold_floor(const ig_shard *s, uint64_t f)
{
    summed(s);
    uint64_t k = starting_before(s, f);
    return k && rec_fend(s, k - 1) > f ? rec_foff(s, k - 1) : f;
}

uint64_t igi_fold_ceil(const ig_shard *s, uint64_t f)
{
    summed(s);
    uint64_t k = starting_before(s, f);
    return k && rec_fend(s, k - 1) > f ? rec_fend(s, k - 1) : f;
}

/* Original minus folded offset after the first k exceptions (modulo 2^64: either may be
 * larger). */
static uint64_t delta_after(const ig_shard *s, uint64_t k)
{
    if (!k)
        return 0;
    const uint8_t *r = rec_at(s, k - 1);
    return ig_load_le64(r + 8) + r[17] - (ig_load_le64(r) + r[16]);
}

uint64_t igi_fold_orig(const ig_shard *s, uint64_t f)
{
    f = igi_fold_floor(s, f);
    return f + delta_after(s, starting_before(s, f));
}

uint64_t igi_fold_char_delta(const ig_shard *s, uint64_t a, uint64_t b)
{
    uint64_t d = 0;
    summed(s);
    for (uint64_t k = starting_before(s, a); k < s->fold_nexc && rec_fend(s, k) <= b; k++)
        d += rec_at(s, k)[18] - 1u;
    return d;
}

static int bit_at(const ig_shard *s, uint64_t i) { return (s->fold_bits[i / 8] >> (i % 8)) & 1; }

/* Appends text[a, b) (no exception inside) with the marked capitals restored. */
static int unfold_plain(const ig_shard *s, uint64_t a, uint64_t b, ig_buf *out)
{
    if (igi_buf_reserve(out, (size_t)(b - a)))
        return IG_ENOMEM;
    uint8_t *o = out->data + out->len;
    memcpy(o, s->text + a, (size_t)(b - a));
    for (uint64_t i = a; i < b; i++) {
        if (i % 8 == 0 && b - i >= 8 && !s->fold_bits[i / 8]) {
            i += 7; /* a whole byte of the bitmap clear */
            continue;
        }
        if (bit_at(s, i)) {
            uint8_t c = s->text[i];
            if ((uint8_t)(c - 'a') < 26)
                o[i - a] = c - 32;
            else /* the text keeps its byte: the answer is discarded through the health check */
                igi_shard_corrupt(s, "fold", "byte %" PRIu64 " is marked as a lowered capital but is 0x%02x", i, c);
        }
    }
    out->len += (size_t)(b - a);
    return 0;
}

int igi_fold_unfold(const ig_shard *s, uint64_t a, uint64_t b, ig_buf *out)
{
    if (b > s->n)
        b = s->n;
    summed(s);
    for (uint64_t k = starting_before(s, a); a < b;) {
        uint64_t next = k < s->fold_nexc ? rec_foff(s, k) : b;
        if (next > b)
            next = b;
        if (next > a && unfold_plain(s, a, next, out))
            return IG_ENOMEM;
        a = next;
        if (a >= b)
            break;
        /* the exception starting at a: its original character, once its folding is checked
         * against the text */
        const uint8_t *r = rec_at(s, k);
        uint8_t fb[IG_FOLD_MAX];
        size_t chars = 0, flen = 0;
        utf8proc_int32_t cp;
        if (utf8proc_iterate(r + 20, r[17], &cp) == r[17])
            flen = fold_cp(cp, fb, &chars);
        if (!flen || flen != r[16] || memcmp(fb, s->text + a, flen))
            igi_shard_corrupt(s, "fold", "exception %" PRIu64 " (byte %" PRIu64 ") does not fold to the text", k, a);
        if (ig_buf_append(out, r + 20, r[17]))
            return IG_ENOMEM;
        a += r[16];
        k++;
    }
    return 0;
}

int igi_fold_check(const ig_shard *s, char *what, size_t wlen)
{
    uint64_t end = 0, delta = 0;
    for (uint64_t k = 0; k < s->fold_nexc; k++) {
        const uint8_t *r = rec_at(s, k);
        uint64_t fo = ig_load_le64(r), oo = ig_load_le64(r + 8);
        if (fo < end || r[16] == 0 || r[16] > IG_FOLD_MAX || fo + r[16] > s->n || r[17] == 0 || r[17] > 4 ||
            r[18] == 0 || r[18] > r[16] || oo - fo != delta) {
            snprintf(what, wlen, "exception %" PRIu64 " (folded byte %" PRIu64 ") is out of order or invalid", k, fo);
            return -1;
        }
        end = fo + r[16];
        delta = delta_after(s, k + 1);
    }
    return 0;
}
