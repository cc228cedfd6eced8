/*
 * UTF-8 validation, lossy repair and NFC normalisation for ingestion. Validation is
 * strict (no overlongs, surrogates, code points above U+10FFFF, 0xC0/0xC1/0xF5-0xFF
 * lead bytes or truncated sequences) because the index relies on 0xFF never occurring
 * inside a document. Everything here is on the build's hot path, so ASCII — the bulk
 * of most corpora — is scanned eight bytes at a time, and NFC hands only the non-ASCII
 * runs (plus the one ASCII byte before each, which a combining mark may attach to) to
 * utf8proc; the rest is copied verbatim. Splitting there is exact: an ASCII character
 * is a starter and never the second element of a canonical composition, so nothing
 * before it can interact with anything after it.
 */
#include "ingest.h"
#include "infinigram/text.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define HIGH_BITS 0x8080808080808080ull

/* Longest non-ASCII stretch given to utf8proc in one piece. utf8proc wants a 32-bit
 * code point buffer for the whole piece, so a 100 MB CJK line would otherwise cost
 * 400 MB; long runs are cut before characters known to be safe split points. */
#define NFC_PIECE_MAX (64u * 1024u)

/* Index of the first byte >= i that is not ASCII, or n. */
static size_t skip_ascii(const uint8_t *p, size_t i, size_t n)
{
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & HIGH_BITS)
            break;
        i += 8;
    }
    while (i < n && p[i] < 0x80)
        i++;
    return i;
}

/* Index of the first ASCII byte >= i, or n. */
static size_t skip_non_ascii(const uint8_t *p, size_t i, size_t n)
{
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if ((w & HIGH_BITS) != HIGH_BITS)
            break;
        i += 8;
    }
    while (i < n && p[i] >= 0x80)
        i++;
    return i;
}

/* Length (2..4) of the valid multi-byte sequence starting at p[0] (a non-ASCII byte),
 * or 0 if p[0] does not start one within the n available bytes. */
static size_t seq_len(const uint8_t *p, size_t n)
{
    uint8_t c = p[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c < 0xC2)
        return 0;            /* continuation byte, or overlong 2-byte lead */
    if (c < 0xE0) {
        len = 2;
    } else if (c < 0xF0) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;       /* overlong */
        else if (c == 0xED)
            hi = 0x9F;       /* surrogates D800-DFFF */
    } else if (c < 0xF5) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;       /* overlong */
        else if (c == 0xF4)
            hi = 0x8F;       /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if ((p[k] & 0xC0) != 0x80)
            return 0;
    return len;
}

int igi_utf8_check(const uint8_t *p, size_t n, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            i = skip_ascii(p, i, n);
            continue;
        }
        size_t len = seq_len(p + i, n - i);
        if (!len) {
            if (bad)
                *bad = i;
            return 0;
        }
        i += len;
    }
    return 1;
}

/* A byte that does not start a complete valid sequence becomes one U+FFFD and decoding
 * resumes at the next byte. So a truncated sequence "E2 82" yields two U+FFFD, one per
 * byte, and a valid character right after the damage is never swallowed. */
int igi_utf8_lossy(const uint8_t *p, size_t n, ig_buf *out, uint64_t *replaced)
{
    static const uint8_t fffd[3] = {0xEF, 0xBF, 0xBD};
    size_t i = 0;
    while (i < n) {
        size_t bad;
        if (igi_utf8_check(p + i, n - i, &bad))
            return ig_buf_append(out, p + i, n - i);
        if (ig_buf_append(out, p + i, bad) || ig_buf_append(out, fffd, sizeof fffd))
            return IG_ENOMEM;
        if (replaced)
            (*replaced)++;
        i += bad + 1;
    }
    return 0;
}

/* Characters before which a long non-ASCII run may be cut: starters that are never the
 * second element of a composition and whose canonical decomposition (if any) begins with
 * such a starter. Kept to big, well-understood blocks (CJK, kana, Hangul syllables,
 * Thai) since long ASCII-free runs occur in exactly those scripts; Hangul jamo and kana
 * voicing marks (U+3099/U+309A) are deliberately outside. */
static int nfc_safe_cut(utf8proc_int32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x3041 && c <= 0x3096) ||
           (c >= 0x30A1 && c <= 0x30FA) || (c >= 0x0E01 && c <= 0x0E30);
}

/* End of the piece that starts at `start`, whose run of non-ASCII bytes begins at j.
 * The scan stops at the size limit, so a long run costs linear time in total. */
static size_t nfc_piece_end(const uint8_t *p, size_t start, size_t j, size_t n)
{
    size_t lim = n - start > NFC_PIECE_MAX ? start + NFC_PIECE_MAX : n;
    size_t q = skip_non_ascii(p, j, lim);
    if (q < lim || lim == n || p[lim] < 0x80)
        return q;
    while (q > j && (p[q] & 0xC0) == 0x80)
        q--;
    while (q < n && p[q] >= 0x80) {
        utf8proc_int32_t c;
        utf8proc_ssize_t len = utf8proc_iterate(p + q, (utf8proc_ssize_t)(n - q), &c);
        if (len <= 0)
            return skip_non_ascii(p, q, n);   /* not for valid input: no cut */
        if (q > j && nfc_safe_cut(c))
            return q;
        q += (size_t)len;
    }
    return q;
}

typedef struct nfc_scratch {
    utf8proc_int32_t *cp;  ///< code points, then (in place) the UTF-8 result
    size_t cap;            ///< usable code points; cp has cap + 1 entries for the NUL
} nfc_scratch;

/* Equivalent to utf8proc_map(s, len, STABLE|COMPOSE) but reusing one buffer, so text
 * with many short accented runs does not malloc per run. The result is the *m bytes at
 * sc->cp. */
static int nfc_piece(const uint8_t *s, size_t len, nfc_scratch *sc, size_t *m, ig_error *err)
{
    const utf8proc_option_t opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    utf8proc_ssize_t r;
    for (;;) {
        r = utf8proc_decompose(s, (utf8proc_ssize_t)len, sc->cp,
                               (utf8proc_ssize_t)sc->cap, opts);
        if (r < 0)
            return ig_error_set(err, IG_EINVAL, "NFC normalisation failed: %s",
                                utf8proc_errmsg(r));
        if ((size_t)r <= sc->cap)
            break;
        size_t cap = (size_t)r + len / 4 + 16;
        utf8proc_int32_t *cp = realloc(sc->cp, (cap + 1) * sizeof *cp);
        if (!cp)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        sc->cp = cp;
        sc->cap = cap;
    }
    utf8proc_ssize_t k = utf8proc_reencode(sc->cp, r, opts);
    if (k < 0)
        return ig_error_set(err, IG_EINVAL, "NFC normalisation failed: %s",
                            utf8proc_errmsg(k));
    *m = (size_t)k;
    return 0;
}

int igi_utf8_nfc(const uint8_t *p, size_t n, ig_buf *out, int *same, ig_error *err)
{
    nfc_scratch sc = {0};
    int rc = 0;
    /* With `same`, nothing is written until a piece changes: text already in NFC (nearly
     * all text) is then not copied at all. */
    int lazy = same != NULL;
    size_t done = 0; /* bytes of p whose NFC is in out */
    if (!lazy && igi_buf_reserve(out, n))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    size_t i = 0;
    while (i < n) {
        size_t j = skip_ascii(p, i, n);
        if (j == n)
            break;
        /* The ASCII byte right before the run may take a combining mark from it. */
        size_t start = j > i ? j - 1 : j;
        size_t e = nfc_piece_end(p, start, j, n), m = 0;
        if ((rc = nfc_piece(p + start, e - start, &sc, &m, err)))
            break;
        if (lazy && (m != e - start || memcmp(sc.cp, p + start, m))) {
            lazy = 0;
            if (igi_buf_reserve(out, n)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
        }
        if (!lazy) {
            if (ig_buf_append(out, p + done, start - done) || ig_buf_append(out, sc.cp, m)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            done = e;
        }
        i = e;
    }
    if (!rc && !lazy && ig_buf_append(out, p + done, n - done))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    if (same)
        *same = !rc && lazy;
    free(sc.cp);
    return rc;
}

size_t ig_utf8_prefix(const uint8_t *p, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && (p[max] & 0xC0) == 0x80)
        max--;
    return max;
}

char *ig_utf8_repair(char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (ig_utf8_valid((const uint8_t *)s, n, NULL))
        return s;
    ig_buf b = {0};
    uint64_t replaced = 0;
    int rc = igi_utf8_lossy((const uint8_t *)s, n, &b, &replaced);
    free(s);
    if (rc || ig_buf_append(&b, "", 1)) {
        ig_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}
