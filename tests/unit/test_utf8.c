/*
 * UTF-8 helpers against independent references: igi_utf8_check and igi_utf8_lossy are
 * compared with a naive decoder written here from the definition (decode, then reject
 * overlongs, surrogates and values above U+10FFFF), over fixed-seed random byte strings
 * built to hit every edge byte; igi_utf8_nfc's ASCII fast path is compared with
 * utf8proc_map over the whole string, including NUL bytes and runs long enough to be cut.
 */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "check.h"
#include "text/ingest.h"

/* Length of the valid sequence at p, or 0: the textbook way, nothing shared with the
 * library's table of lead-byte ranges. */
static size_t ref_seq(const uint8_t *p, size_t n)
{
    uint32_t cp, min;
    size_t len;
    if (p[0] < 0x80)
        return 1;
    else if ((p[0] & 0xE0) == 0xC0) { len = 2; cp = p[0] & 0x1F; min = 0x80; }
    else if ((p[0] & 0xF0) == 0xE0) { len = 3; cp = p[0] & 0x0F; min = 0x800; }
    else if ((p[0] & 0xF8) == 0xF0) { len = 4; cp = p[0] & 0x07; min = 0x10000; }
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

static int ref_check(const uint8_t *p, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n;) {
        size_t l = ref_seq(p + i, n - i);
        if (!l) {
            *bad = i;
            return 0;
        }
        i += l;
    }
    return 1;
}

static size_t ref_lossy(const uint8_t *p, size_t n, uint8_t *out, uint64_t *repl)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t l = ref_seq(p + i, n - i);
        if (l) {
            memcpy(out + o, p + i, l);
            o += l;
            i += l;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            (*repl)++;
        }
    }
    return o;
}

static size_t encode(uint32_t c, uint8_t *p)
{
    if (c < 0x80) { p[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { p[0] = (uint8_t)(0xC0 | (c >> 6)); p[1] = (uint8_t)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        p[0] = (uint8_t)(0xE0 | (c >> 12)); p[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        p[2] = (uint8_t)(0x80 | (c & 0x3F)); return 3;
    }
    p[0] = (uint8_t)(0xF0 | (c >> 18)); p[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    p[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F)); p[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* Random bytes biased toward the interesting ones: edge lead bytes, continuation
 * bytes, encodings of boundary code points (valid or not), and plain ASCII. */
static size_t random_bytes(test_rng *r, uint8_t *p, size_t max, int mostly_valid)
{
    static const uint8_t edge[] = {0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                   0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xF7, 0xF8, 0xFE, 0xFF,
                                   0x9F, 0xA0, 0x8F, 0x90};
    static const uint32_t cps[] = {0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000,
                                   0xFFFD, 0xFFFF, 0x10000, 0x10FFFF, 0x110000, 0x1FFFFF};
    size_t n = 0, want = (size_t)rng_below(r, max - 8);
    while (n < want) {
        uint64_t kind = rng_below(r, 6);
        if (mostly_valid && kind < 5 && rng_below(r, 40))
            kind = rng_below(r, 2) ? 2 : 5;
        switch (kind) {
        case 0: p[n++] = edge[rng_below(r, sizeof edge)]; break;
        case 1: p[n++] = (uint8_t)rng_next(r); break;
        case 2: p[n++] = (uint8_t)('a' + rng_below(r, 26)); break;
        case 3: {   /* a boundary code point, maybe truncated or overlong-encoded */
            uint8_t tmp[4];
            uint32_t c = cps[rng_below(r, sizeof cps / sizeof cps[0])];
            size_t l;
            if (c >= 0x110000) {   /* encode with 4 bytes anyway: must be rejected */
                tmp[0] = (uint8_t)(0xF0 | ((c >> 18) & 7)); tmp[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
                tmp[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F)); tmp[3] = (uint8_t)(0x80 | (c & 0x3F));
                l = 4;
            } else {
                l = encode(c, tmp);
            }
            if (rng_below(r, 4) == 0 && l > 1)
                l = 1 + (size_t)rng_below(r, l - 1);
            memcpy(p + n, tmp, l);
            n += l;
            break;
        }
        case 4: {   /* overlong encodings of small values */
            uint32_t c = (uint32_t)rng_below(r, 0x800);
            if (rng_below(r, 2)) { p[n++] = (uint8_t)(0xC0 | (c >> 6)); p[n++] = (uint8_t)(0x80 | (c & 0x3F)); }
            else { p[n++] = 0xE0; p[n++] = (uint8_t)(0x80 | (c >> 6)); p[n++] = (uint8_t)(0x80 | (c & 0x3F)); }
            break;
        }
        default: {  /* any scalar value, small ones more often */
            uint32_t c = (uint32_t)(rng_below(r, 2) ? rng_below(r, 0x800) : rng_below(r, 0x110000));
            if (c >= 0xD800 && c <= 0xDFFF)
                c = 0xFFFD;
            n += encode(c, p + n);
        }
        }
    }
    return n;
}

static void test_check_and_lossy(void)
{
    test_rng r = {12345};
    uint8_t buf[128], want[3 * 128];
    long valid = 0;
    for (int t = 0; t < 50000; t++) {
        size_t n = random_bytes(&r, buf, 64, t % 3 == 0);
        size_t bad = (size_t)-1, rbad = (size_t)-1;
        int ok = igi_utf8_check(buf, n, &bad), rok = ref_check(buf, n, &rbad);
        valid += rok;
        CHECK(ok == rok, "case %d: check %d, reference %d", t, ok, rok);
        if (!rok)
            CHECK(bad == rbad, "case %d: first bad %zu, reference %zu", t, bad, rbad);

        ig_buf out = {0};
        uint64_t rep = 0, rrep = 0;
        CHECK(igi_utf8_lossy(buf, n, &out, &rep) == 0, "lossy failed");
        size_t wn = ref_lossy(buf, n, want, &rrep);
        CHECK(out.len == wn && (wn == 0 || memcmp(out.data, want, wn) == 0),
              "case %d: lossy differs from reference", t);
        CHECK(rep == rrep, "case %d: %llu replaced, reference %llu", t,
              (unsigned long long)rep, (unsigned long long)rrep);
        CHECK(igi_utf8_check(out.data, out.len, NULL), "case %d: lossy output invalid", t);
        if (rok)
            CHECK(rep == 0 && out.len == n && (n == 0 || memcmp(out.data, buf, n) == 0),
                  "case %d: valid input changed by lossy", t);
        ig_buf_free(&out);
    }
    /* Both valid and invalid strings must be common for the comparison to mean much. */
    CHECK(valid > 8000 && valid < 42000, "%ld of 50000 random strings valid", valid);
}

static void test_check_cases(void)
{
    static const struct { const char *s; size_t n; int ok; size_t bad; } cases[] = {
        {"", 0, 1, 0},
        {"a\0b", 3, 1, 0},
        {"\xC3\xA9", 2, 1, 0},
        {"\xF4\x8F\xBF\xBF", 4, 1, 0},            /* U+10FFFF */
        {"\xEF\xBF\xBF", 3, 1, 0},                /* U+FFFF is a valid scalar */
        {"ab\xC0\x80", 4, 0, 2},                  /* overlong NUL */
        {"\xC1\xBF", 2, 0, 0},
        {"x\xE0\x9F\xBF", 4, 0, 1},               /* overlong 3-byte */
        {"\xED\x9F\xBF\xED\xA0\x80", 6, 0, 3},    /* U+D7FF ok, U+D800 not */
        {"\xF0\x8F\xBF\xBF", 4, 0, 0},            /* overlong 4-byte */
        {"\xF4\x90\x80\x80", 4, 0, 0},            /* U+110000 */
        {"\xF5\x80\x80\x80", 4, 0, 0},
        {"abc\xE2\x82", 5, 0, 3},                 /* truncated at the end */
        {"\xE2\x82" "A", 3, 0, 0},                /* truncated before ASCII */
        {"0123456789\xFF", 11, 0, 10},
        {"\x80", 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t bad = 999;
        int ok = igi_utf8_check((const uint8_t *)cases[i].s, cases[i].n, &bad);
        CHECK(ok == cases[i].ok, "case %zu: got %d", i, ok);
        if (!cases[i].ok)
            CHECK(bad == cases[i].bad, "case %zu: bad at %zu, want %zu", i, bad, cases[i].bad);
    }
    /* The 8-byte ASCII path must find a bad byte at every alignment. */
    for (size_t pos = 0; pos < 40; pos++) {
        uint8_t b[48];
        memset(b, 'x', sizeof b);
        b[pos] = 0x80;
        size_t bad = 999;
        CHECK(!igi_utf8_check(b, sizeof b, &bad) && bad == pos, "pos %zu: bad %zu", pos, bad);
    }
    ig_buf out = {0};
    uint64_t rep = 0;
    CHECK(igi_utf8_lossy((const uint8_t *)"\xE2\x82" "A\xFF", 4, &out, &rep) == 0, "lossy");
    CHECK(out.len == 10 && memcmp(out.data, "\xEF\xBF\xBD\xEF\xBF\xBD" "A\xEF\xBF\xBD", 10) == 0,
          "truncated sequence: one U+FFFD per byte (len %zu)", out.len);
    CHECK(rep == 3, "replaced %llu", (unsigned long long)rep);
    ig_buf_free(&out);
}

static const uint32_t nfc_pieces[] = {
    0x301, 0x308, 0x327, 0x300, 0x323, 0x31B,          /* combining marks */
    0xE9, 0xC5, 0x1E0B, 0x212B, 0x2126, 0x958,         /* precomposed, singletons, exclusions */
    0x1100, 0x1161, 0x11A8, 0xAC00, 0xAC01, 0xD7A3,    /* Hangul jamo and syllables */
    0x4E2D, 0x6587, 0x304B, 0x3099, 0x30AB,            /* CJK, kana + voicing mark */
    0x1F600, 0x1F44D, 0x1F3FD, 0x200D,                 /* emoji, skin tone, ZWJ */
    0x0F73, 0x0344, 0x0B47, 0x0B3E, 0x0E01,            /* tricky decompositions, Oriya, Thai */
};

static int nfc_ref(const uint8_t *p, size_t n, uint8_t **out, size_t *len)
{
    utf8proc_uint8_t *o = NULL;
    utf8proc_ssize_t r = utf8proc_map(p, (utf8proc_ssize_t)n, &o,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (r < 0)
        return -1;
    *out = o;
    *len = (size_t)r;
    return 0;
}

static void nfc_compare(const uint8_t *p, size_t n, const char *what, int t)
{
    uint8_t *want = NULL;
    size_t wn = 0;
    CHECK(nfc_ref(p, n, &want, &wn) == 0, "%s %d: utf8proc_map failed", what, t);
    ig_buf out = {0};
    ig_buf_append(&out, "pre", 3);   /* igi_utf8_nfc appends */
    ig_error err = {0};
    int rc = igi_utf8_nfc(p, n, &out, NULL, &err);
    CHECK(rc == 0, "%s %d: nfc failed: %s", what, t, err.msg);
    CHECK(out.len == wn + 3 && memcmp(out.data, "pre", 3) == 0 &&
          (wn == 0 || memcmp(out.data + 3, want, wn) == 0),
          "%s %d: fast path differs from utf8proc_map (%zu vs %zu bytes)", what, t,
          out.len - 3, wn);
    /* asked whether the text is its own NFC: then nothing is copied, else the same NFC */
    out.len = 3;
    int same = -1;
    rc = igi_utf8_nfc(p, n, &out, &same, &err);
    int own = wn == n && (n == 0 || memcmp(p, want, n) == 0);
    CHECK(rc == 0 && same == own && out.len == (own ? 3 : wn + 3) &&
          (own || wn == 0 || memcmp(out.data + 3, want, wn) == 0),
          "%s %d: lazy NFC: same %d, own NFC %d, %zu vs %zu bytes", what, t, same, own, out.len - 3, wn);
    ig_buf_free(&out);
    free(want);
}

static void test_nfc(void)
{
    test_rng r = {777};
    uint8_t buf[512];
    for (int t = 0; t < 20000; t++) {
        size_t n = 0, k = (size_t)rng_below(&r, 60);
        for (size_t i = 0; i < k; i++) {
            uint64_t c = rng_below(&r, 10);
            if (c < 4)
                buf[n++] = (uint8_t)"aeouAEnc \n"[rng_below(&r, 10)];
            else if (c == 4)
                buf[n++] = 0;
            else
                n += encode(nfc_pieces[rng_below(&r, sizeof nfc_pieces / sizeof nfc_pieces[0])],
                            buf + n);
        }
        nfc_compare(buf, n, "random", t);
    }

    ig_buf out = {0};
    ig_error err = {0};
    CHECK(igi_utf8_nfc((const uint8_t *)"caf" "e\xCC\x81!", 7, &out, NULL, &err) == 0, "nfc");
    CHECK(out.len == 6 && memcmp(out.data, "caf\xC3\xA9!", 6) == 0, "e + U+0301 -> U+00E9");
    out.len = 0;
    CHECK(igi_utf8_nfc((const uint8_t *)"\0\xCC\x81\0", 4, &out, NULL, &err) == 0, "nfc NUL");
    CHECK(out.len == 4 && memcmp(out.data, "\0\xCC\x81\0", 4) == 0, "NUL survives utf8proc");
    out.len = 0;
    CHECK(igi_utf8_nfc((const uint8_t *)"\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", 9, &out, NULL, &err) == 0,
          "nfc jamo");
    CHECK(out.len == 3 && memcmp(out.data, "\xEA\xB0\x81", 3) == 0, "L V T jamo -> U+AC01");
    ig_buf_free(&out);

    /* Non-ASCII runs much longer than the piece limit: CJK and syllables (cut points)
     * mixed with jamo, marks and kana voicing that must not be separated. */
    size_t cap = 600000;
    uint8_t *big = malloc(cap);
    static const uint32_t longmix[] = {0x4E2D, 0xAC00, 0x11A8, 0x1161, 0x301, 0x3099,
                                       0x304B, 0xE9, 0x1F600, 0x1100, 0x0E01, 0x0E48};
    for (int t = 0; t < 6; t++) {
        size_t n = 0;
        while (n < cap - 8) {
            uint32_t c = t < 3 ? longmix[rng_below(&r, sizeof longmix / sizeof longmix[0])]
                               : (rng_below(&r, 3) ? 0x4E00 + (uint32_t)rng_below(&r, 100)
                                                   : longmix[rng_below(&r, 12)]);
            n += encode(c, big + n);
            if (t == 5 && n > cap / 2 && n < cap / 2 + 4)
                big[n++] = 'a';   /* one ASCII byte in the middle */
        }
        nfc_compare(big, n, "long", t);
    }
    /* Only composing pairs: a cut at any boundary but a safe one changes the result. */
    static const uint32_t pairs[][2] = {{0xAC00, 0x11A8}, {0x304B, 0x3099}, {0x1100, 0x1161},
                                        {0x4E2D, 0x0301}, {0x0B47, 0x0B3E}};
    for (int t = 0; t < 4; t++) {
        size_t n = 0;
        while (n < cap - 8) {
            const uint32_t *pr = pairs[rng_below(&r, t == 0 ? 2 : 5)];
            n += encode(pr[0], big + n);
            n += encode(pr[1], big + n);
        }
        nfc_compare(big, n, "pairs", t);
    }
    free(big);
}

int main(void)
{
    test_check_cases();
    test_check_and_lossy();
    test_nfc();
    return check_done("test_utf8");
}
