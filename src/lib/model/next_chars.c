/*
 * The most probable next characters as the byte-level model generates them. Generation,
 * prob and eval read the model a byte at a time, the distribution recomputed after each byte
 * (a mixture re-chooses its levels and weights for the longer context), so a character's
 * probability is the product of its bytes'. The character view of one distribution
 * (ig_dist_symbols) keeps the levels chosen at the lead byte instead; for a mixture the two
 * differ on multi-byte characters, and an answer that reports the probability a generated
 * character was drawn with must list its alternatives on the same terms.
 *
 * The search is best-first over prefixes: a prefix's probability bounds that of every
 * character starting with it, so the characters are taken off a max-heap in order of
 * probability, and the search stops at the k-th.
 */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "util/util.h"

typedef struct {
    double p;
    uint8_t b[4];
    uint8_t len;
} prefix;

/* Whether a is taken before b: more probable, then smaller bytes (reproducible order). */
static int before(const prefix *a, const prefix *b)
{
    if (a->p != b->p)
        return a->p > b->p;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->b, b->b, n);
    return c ? c < 0 : a->len < b->len;
}

IGI_HEAP_DEFINE(prefix_heap, prefix, before)

/* Bytes of the character a lead byte opens (0: not a lead byte of well-formed UTF-8). */
static int char_len(uint8_t b)
{
    return b < 0x80 ? 1 : b < 0xC2 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF5 ? 4 : 0;
}

/* Whether byte b may follow the prefix p[0, len) (len >= 1) inside a well-formed character:
 * a continuation byte, within the narrower ranges after E0, ED, F0 and F4 (no overlong
 * forms, no surrogates, nothing past U+10FFFF). */
static int continues(const uint8_t *p, size_t len, uint8_t b)
{
    uint8_t lo = 0x80, hi = 0xBF;
    if (len == 1) {
        lo = p[0] == 0xE0 ? 0xA0 : p[0] == 0xF0 ? 0x90 : 0x80;
        hi = p[0] == 0xED ? 0x9F : p[0] == 0xF4 ? 0x8F : 0xBF;
    }
    return b >= lo && b <= hi;
}

int ig_next_chars(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len, size_t k,
                  size_t budget, ig_symbol **out, size_t *n, ig_error *err)
{
    *out = NULL;
    *n = 0;
    if (!k)
        return 0;
    prefix *h = NULL;
    size_t nh = 0, cap = 0, nout = 0, ocap = 0, spent = 0;
    ig_symbol *o = NULL;
    uint8_t *text = malloc(len + 4);
    int rc = text ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory listing the next characters");
    if (text && len)
        memcpy(text, ctx, len);
    /* the empty prefix is certain: its expansion is the distribution after ctx */
    if (!rc && igi_grow(&h, nh, &cap, sizeof *h, 64))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory listing the next characters");
    if (!rc)
        h[nh++] = (prefix){1.0, {0}, 0};
    while (!rc && nh && nout < k) {
        prefix top = h[0];
        h[0] = h[--nh];
        prefix_heap_down(h, nh, 0);
        if (top.len && top.len == char_len(top.b[0])) { /* a whole character: the next most probable */
            if (igi_grow(&o, nout, &ocap, sizeof *o, 16)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory listing the next characters");
                break;
            }
            o[nout] = (ig_symbol){{0}, top.len, 0, top.p};
            memcpy(o[nout++].bytes, top.b, top.len);
            continue;
        }
        if (spent++ >= budget)
            break; /* the characters listed so far are still the most probable, in order */
        if (model->cancel && __atomic_load_n(model->cancel, __ATOMIC_RELAXED)) {
            rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
            break;
        }
        memcpy(text + len, top.b, top.len);
        ig_dist d;
        if ((rc = ig_predict(idx, model, text, len + top.len, &d, err)))
            break;
        for (int b = 0; b < 256 && !rc; b++) {
            double p = top.p * d.prob[b];
            if (!(p > 0) || (top.len ? !continues(top.b, top.len, (uint8_t)b) : !char_len((uint8_t)b)))
                continue; /* never drawn, or not text (the end of a document, a stray byte) */
            if (igi_grow(&h, nh, &cap, sizeof *h, 64)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory listing the next characters");
                break;
            }
            prefix x = top;
            x.p = p;
            x.b[x.len++] = (uint8_t)b;
            h[nh] = x;
            prefix_heap_up(h, nh++);
        }
        ig_dist_free(&d);
    }
    free(h);
    free(text);
    if (rc)
        free(o); /* nothing is handed out on failure */
    *out = rc ? NULL : o;
    *n = rc ? 0 : nout;
    return rc;
}
