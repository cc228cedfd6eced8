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
    if (igi_grow(&l->v, l->n, &l->cap, sizeof *l->v, 32))
        return -1;
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

/* Where the symbols of level j of a distribution come from: emits each with its count at
 * that level. 0, or -1 when memory ran out. */
typedef int (*level_source)(void *user, const ig_dist *d, size_t j, const uint8_t *ctx, size_t len, int pending,
                            sym_emit emit, void *emit_user);

/* From this index: the level's suffix found and refined byte by byte. */
static int index_source(void *user, const ig_dist *d, size_t j, const uint8_t *ctx, size_t len, int pending,
                        sym_emit emit, void *emit_user)
{
    const ig_index *idx = user;
    uint64_t ell = d->levels[j].length;
    uint8_t sym[8];
    ig_match m = igi_match_alloc(idx);
    if (!m.r)
        return -1;
    igi_match_find(idx, ctx + len - ell, ell, &m);
    int rc = refine(idx, &m, sym, 0, pending, emit, emit_user);
    igi_match_release(&m);
    return rc;
}

/* From the summed counts of the parts of a corpus: levels kept at change points, longest
 * first; a level of the distribution reads the one at or above its length. */
typedef struct part_levels {
    const ig_part_level *v;
    size_t n;
} part_levels;

static int part_source(void *user, const ig_dist *d, size_t j, const uint8_t *ctx, size_t len, int pending,
                       sym_emit emit, void *emit_user)
{
    (void)ctx;
    (void)len;
    (void)pending;
    const part_levels *pls = user;
    const ig_part_level *pl = igi_part_level_for(pls->v, pls->n, d->levels[j].length);
    for (size_t i = 0; pl && i < pl->nsyms; i++)
        if (emit(emit_user, pl->syms[i].bytes, pl->syms[i].len, pl->syms[i].count))
            return -1;
    return 0;
}

static int symbols_of(level_source src, void *user, const ig_dist *d, const uint8_t *ctx, size_t len, int chars,
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
        for (size_t j = 0; j < d->nlevels; j++) {
            level_emit le = {&l, d->levels[j].coef, d->levels[j].denom, j == 0 && d->levels[0].length == d->length,
                             d->end_excluded};
            if (src(user, d, j, ctx, len, pending, emit_level, &le))
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

int ig_dist_symbols(const ig_index *idx, const ig_dist *d, const uint8_t *ctx, size_t len, int chars,
                    ig_symbol **out, size_t *n, double *unseen, ig_error *err)
{
    return symbols_of(index_source, (void *)idx, d, ctx, len, chars, out, n, unseen, err);
}

/* ---------------------------------------------------------------- parts of a corpus */

static int emit_part(void *user, const uint8_t *sym, int len, uint64_t count)
{
    return sym_add(user, sym, len, count, 0);
}

int ig_part_level_get(const ig_index *idx, const uint8_t *ctx, size_t len, int64_t cap, uint64_t ell, int chars,
                      ig_part_level *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    out->ell = ell;
    if (ell > igi_ctx_make(ctx, len, cap).n) /* the model has no level there: an empty one */
        return 0;
    ig_match m = igi_match_alloc(idx);
    if (!m.r)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    igi_match_find(idx, ctx + len - ell, ell, &m);
    out->suffix_count = m.count;
    igi_match_hist(idx, &m, out->count, NULL);
    int rc = 0;
    if (chars && m.count) {
        symlist l = {0};
        uint8_t sym[8];
        if (refine(idx, &m, sym, 0, igi_utf8_pending(ctx, len), emit_part, &l)) {
            free(l.v);
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        } else {
            out->syms = l.v;
            out->nsyms = l.n;
        }
    }
    igi_match_release(&m);
    return rc;
}

int ig_part_level_add(ig_part_level *to, const ig_part_level *from, ig_error *err)
{
    if (to->ell != from->ell)
        return ig_error_set(err, IG_EUSAGE, "levels of lengths %llu and %llu do not add",
                            (unsigned long long)to->ell, (unsigned long long)from->ell);
    symlist l = {.v = to->syms, .n = to->nsyms, .cap = to->nsyms};
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].len == 1)
            l.one[l.v[i].bytes[0]] = (int)i + 1;
    for (size_t i = 0; i < from->nsyms; i++)
        if (sym_add(&l, from->syms[i].bytes, from->syms[i].len, from->syms[i].count, 0)) {
            to->syms = l.v;
            to->nsyms = l.n;
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        }
    to->syms = l.v;
    to->nsyms = l.n;
    to->suffix_count += from->suffix_count;
    for (int b = 0; b < 256; b++)
        to->count[b] += from->count[b];
    return 0;
}

void ig_part_level_free(ig_part_level *l)
{
    IGI_CLEAR(l, l->syms);
}

int ig_predict_from_level(const ig_model *model, const uint8_t *ctx, size_t len, uint64_t longest,
                          const ig_part_level *lv, int chars, ig_dist *d, ig_symbol **syms, size_t *nsyms,
                          double *unseen, int *sparse, ig_error *err)
{
    *syms = NULL;
    *nsyms = 0;
    int rc = igi_predict_from_level(model, ctx, len, longest, lv, d, err);
    part_levels pls = {lv, 1};
    if (!rc && (rc = symbols_of(part_source, &pls, d, ctx, len, chars, syms, nsyms, unseen, err)))
        ig_dist_free(d);
    if (!rc)
        *sparse = ig_dist_sparse(d, *syms, *nsyms, *unseen);
    return rc;
}

int ig_predict_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                          const ig_part_level *levels, int chars, ig_dist *d, ig_symbol **syms, size_t *nsyms,
                          double *unseen, int *sparse, ig_error *err)
{
    *syms = NULL;
    *nsyms = 0;
    int rc = igi_predict_from_parts(model, ctx, len, prof, levels, d, err);
    part_levels pls = {levels, prof->n};
    if (!rc && (rc = symbols_of(part_source, &pls, d, ctx, len, chars, syms, nsyms, unseen, err)))
        ig_dist_free(d);
    if (!rc)
        *sparse = ig_dist_sparse(d, *syms, *nsyms, *unseen);
    return rc;
}
