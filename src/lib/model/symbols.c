/*
 * The character view of a distribution. A multi-byte character's weight at a level is
 * cnt(suffix·char): the lead byte's interval is narrowed by each continuation byte, so
 * characters are merged exactly, never approximated from byte probabilities. When the
 * context ends inside a character, a symbol is the rest of that character.
 */
#include "model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct symlist {
    ig_symbol *v;
    size_t n, cap;
    int one[256];      ///< index+1 of each one-byte symbol (0: none): most symbols are one byte
} symlist;

static int sym_add(symlist *l, const uint8_t *bytes, int len, uint64_t count, double prob)
{
    if (len == 1 && l->one[bytes[0]]) {
        ig_symbol *s = &l->v[l->one[bytes[0]] - 1];
        s->prob += prob;
        s->count += count;
        return 0;
    }
    if (len > 1)
        for (size_t i = 0; i < l->n; i++)
            if (l->v[i].len == len && !memcmp(l->v[i].bytes, bytes, (size_t)len)) {
                l->v[i].prob += prob;
                l->v[i].count += count;
                return 0;
            }
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 32;
        ig_symbol *p = realloc(l->v, nc * sizeof *p);
        if (!p)
            return -1;
        l->v = p;
        l->cap = nc;
    }
    if (len == 1)
        l->one[bytes[0]] = (int)l->n + 1;
    ig_symbol *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    memcpy(s->bytes, bytes, (size_t)len);
    s->len = (uint8_t)len;
    s->count = count;
    s->prob = prob;
    return 0;
}

typedef int (*sym_emit)(void *user, const uint8_t *sym, int len, uint64_t count);

/* Emits every complete symbol after a pattern whose match is mt: `need` more bytes when
 * inside a character (0 = at a boundary: one whole character). The histogram's
 * sub-intervals are the matches of the pattern extended by each byte, so going one byte
 * deeper costs no search. */
static int refine(const ig_index *idx, const ig_match *mt, uint8_t *sym, int have, int need, sym_emit emit,
                  void *user)
{
    uint64_t cnt[256] = {0};
    ig_index_info info;
    ig_index_get_info(idx, &info);
    ig_range *sub = calloc((size_t)256 * info.shards, sizeof *sub);
    if (!sub)
        return -1;
    igi_match_hist(idx, mt, cnt, sub);
    int rc = 0;
    for (int b = 0; b < 256 && !rc; b++) {
        if (!cnt[b])
            continue;
        sym[have] = (uint8_t)b;
        int more;
        if (need > 0)
            more = need - 1;
        else if ((b & 0xC0) == 0x80 || b == IG_DOC_END)
            more = 0; /* stray continuation byte or <end>: a symbol of its own */
        else
            more = igi_utf8_char_len((uint8_t)b) - 1;
        if (b == IG_DOC_END)
            more = 0; /* a symbol never reaches into the next document */
        if (more == 0) {
            rc = emit(user, sym, have + 1, cnt[b]);
            continue;
        }
        ig_match child = {.count = cnt[b], .len = mt->len + 1, .r = sub + (size_t)b * info.shards};
        rc = refine(idx, &child, sym, have + 1, more, emit, user);
    }
    free(sub);
    return rc;
}

typedef struct level_emit {
    symlist *list;
    double coef;
    double denom;      ///< when > 0: probability count/denom (one exact level)
    int first;         ///< the longest level: its counts are the raw counts shown
    int skip_end;      ///< SBI levels have no <end>
} level_emit;

static int emit_level(void *user, const uint8_t *sym, int len, uint64_t count)
{
    level_emit *le = user;
    if (le->skip_end && len == 1 && sym[0] == IG_DOC_END)
        return 0;
    return sym_add(le->list, sym, len, le->first ? count : 0,
                   le->denom > 0 ? (double)count / le->denom : le->coef * (double)count);
}

static int cmp_sym(const void *a, const void *b)
{
    const ig_symbol *x = a, *y = b;
    if (x->prob != y->prob)
        return x->prob > y->prob ? -1 : 1;
    int n = x->len < y->len ? x->len : y->len, c = memcmp(x->bytes, y->bytes, (size_t)n);
    return c ? c : x->len - y->len;
}

int ig_dist_symbols(const ig_index *idx, const ig_dist *d, const uint8_t *ctx, size_t len, int chars,
                    ig_symbol **out, size_t *n, double *unseen, ig_error *err)
{
    symlist l = {0};
    *out = NULL;
    *n = 0;
    double rest = 0; /* probability not attributed to a listed symbol */
    int seen[256] = {0};
    for (size_t j = 0; j < d->nlevels; j++)
        for (int b = 0; b < 256; b++)
            seen[b] |= d->levels[j].count[b] > 0 && !(d->end_excluded && b == IG_DOC_END);
    if (!chars) {
        for (int b = 0; b < 256; b++) {
            uint8_t byte = (uint8_t)b;
            if (seen[b]) {
                if (sym_add(&l, &byte, 1, d->count[b], d->prob[b]))
                    goto oom;
            } else {
                rest += d->prob[b];
            }
        }
    } else {
        int pending = igi_utf8_pending(ctx, len);
        const uint8_t *end = ctx + len;
        uint8_t sym[8];
        for (size_t j = 0; j < d->nlevels; j++) {
            uint64_t ell = d->levels[j].length;
            level_emit le = {&l, d->levels[j].coef, d->levels[j].denom, j == 0 && d->levels[0].length == d->length,
                             d->end_excluded};
            ig_match m = igi_match_alloc(idx);
            if (!m.r)
                goto oom;
            igi_match_find(idx, end - ell, ell, &m);
            int rc = refine(idx, &m, sym, 0, pending, emit_level, &le);
            igi_match_release(&m);
            if (rc)
                goto oom;
        }
        /* Laplace mass: single-byte symbols keep theirs, as in the byte view; the rest
         * (unseen bytes, and leads of multi-byte characters) cannot be attributed */
        for (int b = 0; b < 256; b++) {
            if (d->smooth[b] == 0)
                continue;
            uint8_t byte = (uint8_t)b;
            int single = !pending && (b < 0x80 || b == IG_DOC_END);
            if (single && seen[b]) {
                if (sym_add(&l, &byte, 1, 0, d->smooth[b]))
                    goto oom;
            } else {
                rest += d->smooth[b];
            }
        }
    }
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, cmp_sym);
    *out = l.v;
    *n = l.n;
    if (unseen)
        *unseen = rest;
    return 0;
oom:
    free(l.v);
    return ig_error_set(err, IG_ENOMEM, "out of memory");
}
