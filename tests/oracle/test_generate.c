/*
 * Oracle tests of generation, spans/novelty and CNF search (generate.h).
 *
 * 1. Generation: reproducibility (two runs, one-shard vs many-shard builds), greedy
 *    decoding against an argmax reference built from ig_predict, top-k = 1 and a tiny
 *    top-p equal greedy, every sampled byte is allowed by the model and the filters,
 *    step evidence (prob, effective_n, suffix_count, source), stop strings, <end>,
 *    max_chars in characters, valid UTF-8 always, and a chi-square test of the sampled
 *    frequencies of one fixed context against the model's (filtered) distribution.
 * 2. Spans: matching statistics, maximal spans, counts, search budget and novelty against
 *    a naive scan of the corpus; word-trimmed spans checked for their boundaries.
 * 3. Search: random CNF queries against a naive per-document check, with proximity
 *    windows, paging and one-shard/many-shard builds.
 *
 * Fixed seeds; IG_ORACLE_SCALE (default 1.0) scales the number of cases.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oracle.h"
#include "infinigram/infinigram.h"
#include "util/util.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ corpora */

typedef struct corpus {
    uint8_t *t;        /* all documents, each followed by 0xFF */
    size_t n;
    size_t ndocs;
    size_t *starts;    /* document start offsets, ndocs + 1 entries */
    ig_buf *docs;
    ig_source *src;
} corpus;


static const char *vocab_mixed[] = {"the", "cat", "naïve", "café", "日本", "語", "😀", "straße", "ψυχή", "a",
                                    "b", "über", "€5", "ok", "Ωmega", "\xE0\xA4\x85", "\xF0\x9F\x8E\x89", "x_y"};
static const char *vocab_ascii[] = {"the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "tea", "cab", "at"};

/* One random document of a given shape (shapes 0-4 as in test_oracle; 5, 6 words). */
static void gen_doc(test_rng *r, int shape, ig_buf *b)
{
    if (shape == 5 || shape == 6) {
        const char **v = shape == 5 ? vocab_mixed : vocab_ascii;
        size_t nv = shape == 5 ? sizeof vocab_mixed / sizeof *v : sizeof vocab_ascii / sizeof *v;
        size_t words = 1 + rng_below(r, shape == 5 ? 40 : 12);
        for (size_t i = 0; i < words; i++) {
            if (i) {
                const char *sep = rng_below(r, 12) ? " " : shape == 5 ? ".\n" : ", ";
                ig_buf_append(b, sep, strlen(sep));
            }
            const char *w = v[rng_below(r, nv)];
            ig_buf_append(b, w, strlen(w));
        }
        return;
    }
    size_t len = shape == 3 ? 1 + rng_below(r, 3) : 1 + rng_below(r, 300);
    static const char *motif = "abracadabra ";
    for (size_t i = 0; i < len; i++) {
        switch (shape) {
        case 0: ig_buf_append(b, "ab" + rng_below(r, 2), 1); break;
        case 1: ig_buf_append(b, "abcd\n" + rng_below(r, 5), 1); break;
        case 2: put_cp(b, random_cp(r)); break;
        case 3: ig_buf_append(b, "xyz" + rng_below(r, 3), 1); break;
        default: ig_buf_append(b, motif + (i % 12), 1);
            if (rng_below(r, 50) == 0) ig_buf_append(b, "Q", 1);
        }
    }
}

static void corpus_make(corpus *c, test_rng *r, int shape, size_t nd)
{
    memset(c, 0, sizeof *c);
    c->docs = calloc(nd, sizeof *c->docs);
    c->src = calloc(nd, sizeof *c->src);
    c->starts = malloc((nd + 1) * sizeof *c->starts);
    ig_buf all = {0};
    for (size_t i = 0; i < nd; i++) {
        gen_doc(r, shape, &c->docs[i]);
        c->src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)c->docs[i].data,
                                .text_len = c->docs[i].len};
        c->starts[i] = all.len;
        ig_buf_append(&all, c->docs[i].data, c->docs[i].len);
        ig_buf_append(&all, "\xff", 1);
    }
    c->starts[nd] = all.len;
    c->t = all.data;
    c->n = all.len;
    c->ndocs = nd;
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->ndocs; i++)
        ig_buf_free(&c->docs[i]);
    free(c->docs);
    free(c->src);
    free(c->t);
    free(c->starts);
}

static int build(const char *dir, const corpus *c, uint64_t shard_size, ig_index **out)
{
    return oracle_build(dir, c->src, c->ndocs, shard_size, 0, 0, out);
}

/* Builds a one-shard and a many-shard index of c (checking the latter has > 1 shard). */
static int build_pair(const char *tmp, const char *name, const corpus *c, uint64_t small, ig_index **idx)
{
    char d1[512], d2[512];
    snprintf(d1, sizeof d1, "%s/%s-one", tmp, name);
    snprintf(d2, sizeof d2, "%s/%s-shards", tmp, name);
    idx[0] = idx[1] = NULL;
    if (build(d1, c, 1ull << 30, &idx[0]) || build(d2, c, small, &idx[1]))
        return -1;
    ig_index_info info;
    ig_index_get_info(idx[1], &info);
    CHECK(info.documents == c->ndocs && info.bytes == c->n, "%s: sizes", name);
    if (c->ndocs > 1 && small < c->n / 2)
        CHECK(info.shards > 1, "%s: expected several shards, got %u", name, info.shards);
    return 0;
}

static size_t *shard_bases(const ig_index *idx)
{
    ig_index_info info;
    ig_index_get_info(idx, &info);
    size_t *b = calloc(info.shards + 1, sizeof *b);
    for (uint32_t s = 1; s <= info.shards; s++) {
        size_t len = SIZE_MAX;
        ig_text(idx, s - 1, 0, &len);
        b[s] = b[s - 1] + len;
    }
    return b;
}

/* ------------------------------------------------------------------ UTF-8 helpers */

static size_t count_chars(const uint8_t *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (p[i] & 0xC0) != 0x80;
    return k;
}

/* Byte offset just after the first `chars` characters of valid UTF-8 p[0..n). */
static size_t char_prefix(const uint8_t *p, size_t n, size_t chars)
{
    size_t seen = 0;
    for (size_t i = 0; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) {
            if (seen == chars)
                return i;
            seen++;
        }
    return n;
}

/* From the definition of UTF-8 (RFC 3629): bytes that may follow t[0..n) so that the text
 * stays a prefix of valid UTF-8 (the part after the prompt is valid), plus 0xFF (<end>) on
 * a character boundary. Returns 1 when the last character is incomplete. */
static int valid_next(const uint8_t *t, size_t n, uint8_t valid[256])
{
    memset(valid, 0, 256);
    size_t k = 0;
    while (k < 3 && k < n && (t[n - 1 - k] & 0xC0) == 0x80)
        k++;
    int need = 1;
    uint8_t lead = 0;
    if (k < n) {
        lead = t[n - 1 - k];
        need = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 1;
    }
    if (need - 1 > (int)k) {
        int lo = 0x80, hi = 0xBF;
        if (k == 0) {
            if (lead == 0xE0) lo = 0xA0;
            if (lead == 0xED) hi = 0x9F;
            if (lead == 0xF0) lo = 0x90;
            if (lead == 0xF4) hi = 0x8F;
        }
        for (int b = lo; b <= hi; b++)
            valid[b] = 1;
        return 1;
    }
    for (int b = 0; b < 0x80; b++)
        valid[b] = 1;
    for (int b = 0xC2; b <= 0xF4; b++)
        valid[b] = 1;
    valid[0xFF] = 1;
    return 0;
}

/* Weights the sampler starts from: model probabilities of valid bytes (no <end> when
 * stop_at_end = 0). Returns 0 when ig_predict fails. */
static int weights(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, int stop_at_end,
                   double w[256], ig_dist *keep)
{
    ig_dist d;
    ig_error e;
    int rc = ig_predict(idx, m, ctx, len, &d, &e);
    CHECK(rc == 0, "predict: %s", e.msg);
    if (rc)
        return 0;
    uint8_t valid[256];
    valid_next(ctx, len, valid);
    for (int b = 0; b < 256; b++)
        w[b] = d.defined && valid[b] ? d.prob[b] : 0;
    if (!stop_at_end)
        w[0xFF] = 0;
    if (keep)
        *keep = d;
    else
        ig_dist_free(&d);
    return 1;
}

static int argmax(const double w[256])
{
    int best = -1;
    for (int b = 0; b < 256; b++)
        if (w[b] > 0 && (best < 0 || w[b] > w[best]))
            best = b;
    return best;
}

/* Probabilities are sums of fractions of counts: values equal in exact arithmetic may
 * differ in the last bits. Ties are values within this relative distance. */
#define TIE_EPS 1e-12

/* Greedy by the definition: the most probable byte, the lowest byte among (near) ties. */
static int argmax_tie_low(const double w[256])
{
    int best = argmax(w);
    if (best < 0)
        return best;
    for (int b = 0; b < 256; b++)
        if (w[b] > 0 && w[b] >= w[best] * (1 - TIE_EPS))
            return b;
    return best;
}

/* The sampling distribution from the definitions: p^(1/T), most probable first (ties by
 * byte), top-k, then the smallest prefix with mass >= top_p, renormalised. q[b] = P(b).
 * order/n/mass_before describe the ranking (for tolerant membership checks). */
typedef struct filt {
    double q[256];
    double p[256];          /* tempered, unnormalised */
    int order[256], n;      /* ranked bytes with p > 0 */
    int rank[256];          /* -1 when p = 0 */
    double total;           /* sum of p over the top-k */
} filt;

static void filter(const double w[256], double T, uint32_t top_k, double top_p, filt *f)
{
    memset(f, 0, sizeof *f);
    for (int b = 0; b < 256; b++)
        f->rank[b] = -1;
    int best = argmax(w);
    if (best < 0)
        return;
    if (T == 0) {
        f->q[best] = 1;
        f->p[best] = 1;
        f->order[0] = best;
        f->rank[best] = 0;
        f->n = 1;
        f->total = 1;
        return;
    }
    for (int b = 0; b < 256; b++)
        if (w[b] > 0) {
            f->p[b] = exp((log(w[b]) - log(w[best])) / T);
            if (f->p[b] > 0)
                f->order[f->n++] = b;
        }
    for (int i = 1; i < f->n; i++) /* insertion sort: p desc, byte asc */
        for (int j = i; j > 0; j--) {
            int a = f->order[j - 1], b = f->order[j];
            if (f->p[b] > f->p[a] || (f->p[b] == f->p[a] && b < a)) {
                f->order[j - 1] = b;
                f->order[j] = a;
            } else
                break;
        }
    for (int i = 0; i < f->n; i++)
        f->rank[f->order[i]] = i;
    int n = f->n;
    if (top_k && (int)top_k < n)
        n = (int)top_k;
    double total = 0;
    for (int i = 0; i < n; i++)
        total += f->p[f->order[i]];
    f->total = total;
    if (top_p < 1) {
        double acc = 0;
        for (int i = 0; i < n; i++) {
            acc += f->p[f->order[i]];
            if (acc >= top_p * total) {
                n = i + 1;
                break;
            }
        }
    }
    double kept = 0;
    for (int i = 0; i < n; i++)
        kept += f->p[f->order[i]];
    for (int i = 0; i < n; i++)
        f->q[f->order[i]] = f->p[f->order[i]] / kept;
}

/* May the sampler pick b? Tolerant at the nucleus edge (rounding). */
static int allowed(const filt *f, int b, double T, uint32_t top_k, double top_p)
{
    if (f->rank[b] < 0)
        return 0;
    /* rank up to near ties: bytes clearly more probable than b */
    int ahead = 0;
    for (int i = 0; i < f->n; i++)
        ahead += f->p[f->order[i]] > f->p[b] * (1 + TIE_EPS);
    if (T == 0)
        return ahead == 0;
    if (top_k && ahead >= (int)top_k)
        return 0;
    if (top_p < 1) {
        double before = 0;
        for (int i = 0; i < f->n; i++)
            if (f->p[f->order[i]] > f->p[b] * (1 + TIE_EPS))
                before += f->p[f->order[i]];
        if (before > top_p * f->total * (1 + 1e-9))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ generation runs */

typedef struct run {
    uint8_t *text;
    size_t len;
    int reason;
    uint64_t chars;
    ig_gen_step *steps;
    size_t nsteps;
    int failed;
} run;

static void run_free(run *r)
{
    free(r->text);
    free(r->steps);
    memset(r, 0, sizeof *r);
}

static void run_gen(const ig_index *idx, const ig_gen_options *o, const uint8_t *prompt, size_t plen, run *r)
{
    memset(r, 0, sizeof *r);
    ig_gen *g = NULL;
    ig_error e;
    int rc = ig_gen_start(&g, idx, o, prompt, plen, &e);
    CHECK(rc == 0, "ig_gen_start: %s", e.msg);
    if (rc) {
        r->failed = 1;
        return;
    }
    size_t cap = (size_t)o->max_chars + 1;
    r->steps = calloc(cap, sizeof *r->steps);
    for (;;) {
        ig_gen_step st;
        rc = ig_gen_next(g, &st, &e);
        if (rc < 0) {
            CHECK(0, "ig_gen_next: %s", e.msg);
            r->failed = 1;
            break;
        }
        if (rc > 0) {
            r->reason = rc;
            ig_gen_step st2;
            int rc2 = ig_gen_next(g, &st2, &e);
            if (rc2 != rc) /* counted only on failure: these would swamp the totals */
                CHECK(rc2 == rc, "ig_gen_next after the end returned %d, first %d", rc2, rc);
            break;
        }
        if (r->nsteps == cap) {
            CHECK(0, "more characters than max_chars = %llu", (unsigned long long)o->max_chars);
            r->failed = 1;
            break;
        }
        r->steps[r->nsteps++] = st;
    }
    size_t len;
    const uint8_t *t = ig_gen_text(g, &len);
    r->text = malloc(len + 1);
    memcpy(r->text, t, len);
    r->len = len;
    r->chars = ig_gen_chars(g);
    CHECK(ig_gen_seed(g) == o->seed, "ig_gen_seed");
    ig_gen_free(&g);
    CHECK(g == NULL, "ig_gen_free sets NULL");
}

static int same_run(const run *a, const run *b, int exact_steps)
{
    if (a->len != b->len || memcmp(a->text, b->text, a->len) || a->reason != b->reason || a->chars != b->chars ||
        a->nsteps != b->nsteps)
        return 0;
    for (size_t i = 0; i < a->nsteps; i++) {
        const ig_gen_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->len != y->len || memcmp(x->bytes, y->bytes, x->len) || x->effective_n != y->effective_n ||
            x->suffix_count != y->suffix_count || x->sparse != y->sparse)
            return 0;
        if (exact_steps ? x->prob != y->prob : fabs(x->prob - y->prob) > 1e-12 * fabs(x->prob))
            return 0;
    }
    return 1;
}

/* Greedy reference: argmax of ig_predict over valid bytes, lowest byte on ties. */
static int ref_greedy(const ig_index *idx, const ig_model *m, const uint8_t *prompt, size_t plen, int stop_at_end,
                      uint64_t max_chars, ig_buf *ctx)
{
    ctx->len = 0;
    ig_buf_append(ctx, prompt, plen);
    for (uint64_t chars = 0; chars < max_chars; chars++) {
        size_t start = ctx->len;
        for (int k = 0; k < 4; k++) {
            double w[256];
            if (!weights(idx, m, ctx->data, ctx->len, stop_at_end, w, NULL))
                return -1;
            int b = argmax_tie_low(w);
            if (b < 0 || b == 0xFF) {
                ctx->len = start;
                return b < 0 ? IG_STOP_NO_CONTINUATION : IG_STOP_END;
            }
            uint8_t x = (uint8_t)b;
            ig_buf_append(ctx, &x, 1);
            uint8_t v[256];
            if (!valid_next(ctx->data, ctx->len, v))
                break;
        }
    }
    return IG_STOP_MAX;
}

/* Every byte of every step was possible under the model and the filters; the evidence
 * of each step matches ig_predict. */
static void verify_steps(const ig_index *idx, const ig_gen_options *o, const uint8_t *prompt, size_t plen,
                         const run *r, const char *what)
{
    ig_buf ctx = {0};
    ig_buf_append(&ctx, prompt, plen);
    int bad = 0;
    for (size_t s = 0; s < r->nsteps && !bad; s++) {
        const ig_gen_step *st = &r->steps[s];
        double prob = 1;
        if (st->len < 1 || st->len > 4) {
            CHECK(0, "%s: step %zu has length %u", what, s, st->len);
            break;
        }
        for (int j = 0; j < st->len; j++) {
            double w[256];
            ig_dist d;
            if (!weights(idx, &o->model, ctx.data, ctx.len, o->stop_at_end, w, &d)) {
                bad = 1;
                break;
            }
            int b = st->bytes[j];
            filt f;
            filter(w, o->temperature, o->top_k, o->top_p, &f);
            if (!allowed(&f, b, o->temperature, o->top_k, o->top_p)) {
                CHECK(0, "%s: step %zu byte %d = 0x%02x not allowed (w = %g, rank %d)", what, s, j, b, w[b], f.rank[b]);
                bad = 1;
            }
            if (j == 0) {
                if (st->effective_n != d.length + 1 || st->suffix_count != d.suffix_count) {
                    CHECK(0, "%s: step %zu effective_n %llu / %llu, suffix_count %llu / %llu", what, s,
                          (unsigned long long)st->effective_n, (unsigned long long)d.length + 1,
                          (unsigned long long)st->suffix_count, (unsigned long long)d.suffix_count);
                    bad = 1;
                }
                if (st->has_source) {
                    /* a corpus occurrence of suf(ℓ*)·byte, the source being the byte */
                    uint64_t ell = d.longest;
                    size_t tl = SIZE_MAX;
                    const uint8_t *src = st->source.offset >= ell
                                             ? ig_text(idx, st->source.shard, st->source.offset - ell, &tl)
                                             : NULL;
                    int ok = src && tl >= ell + 1 && !memcmp(src, ctx.data + ctx.len - ell, ell) && src[ell] == b;
                    if (!ok) {
                        CHECK(0, "%s: step %zu source %u:%llu is not an occurrence of suf(%llu)+byte", what, s,
                              st->source.shard, (unsigned long long)st->source.offset, (unsigned long long)ell);
                        bad = 1;
                    }
                }
            }
            if (o->model.alpha == 0) {
                uint8_t x = (uint8_t)b;
                if (ig_count(idx, &x, 1) == 0) {
                    CHECK(0, "%s: step %zu byte 0x%02x never occurs in the corpus, P = %g", what, s, b, d.prob[b]);
                    bad = 1;
                }
            }
            prob *= d.prob[b];
            ig_dist_free(&d);
            uint8_t x = (uint8_t)b;
            ig_buf_append(&ctx, &x, 1);
        }
        if (!bad && !(fabs(prob - st->prob) <= 1e-9 * prob)) {
            CHECK(0, "%s: step %zu prob %.17g, chain of ig_predict %.17g", what, s, st->prob, prob);
            bad = 1;
        }
    }
    if (!bad)
        CHECK(1, "steps");
    /* stopping at <end> must mean <end> was possible after the text */
    if (!bad && r->reason == IG_STOP_END) {
        double w[256];
        if (weights(idx, &o->model, ctx.data, ctx.len, o->stop_at_end, w, NULL)) {
            filt f;
            filter(w, o->temperature, o->top_k, o->top_p, &f);
            CHECK(o->stop_at_end && allowed(&f, 0xFF, o->temperature, o->top_k, o->top_p),
                  "%s: stopped at <end> but P(<end>) = %g (stop_at_end %d)", what, w[0xFF], o->stop_at_end);
        }
    }
    ig_buf_free(&ctx);
}

/* Basic properties of one run. */
static void check_run(const ig_gen_options *o, const run *r, const char *what)
{
    size_t bad = 0;
    CHECK(ig_utf8_valid(r->text, r->len, &bad), "%s: invalid UTF-8 at byte %zu", what, bad);
    CHECK(r->chars == count_chars(r->text, r->len), "%s: ig_gen_chars %llu, text has %zu characters", what,
          (unsigned long long)r->chars, count_chars(r->text, r->len));
    CHECK(r->chars <= o->max_chars, "%s: %llu characters > max %llu", what, (unsigned long long)r->chars,
          (unsigned long long)o->max_chars);
    if (r->reason == IG_STOP_MAX)
        CHECK(r->chars == o->max_chars, "%s: stopped at max with %llu of %llu characters", what,
              (unsigned long long)r->chars, (unsigned long long)o->max_chars);
    int ok_reason = r->reason == IG_STOP_MAX || r->reason == IG_STOP_NO_CONTINUATION ||
                    (r->reason == IG_STOP_END && o->stop_at_end) || (r->reason == IG_STOP_STOP && o->nstop);
    CHECK(ok_reason, "%s: stop reason %d (%s), stop_at_end %d, nstop %zu", what, r->reason,
          ig_stop_reason_name(r->reason), o->stop_at_end, o->nstop);
    if (r->reason != IG_STOP_STOP) {
        /* the steps spell the text */
        ig_buf cat = {0};
        for (size_t i = 0; i < r->nsteps; i++)
            ig_buf_append(&cat, r->steps[i].bytes, r->steps[i].len);
        CHECK(cat.len == r->len && (!cat.len || !memcmp(cat.data, r->text, cat.len)), "%s: steps do not spell the text",
              what);
        ig_buf_free(&cat);
    }
}

typedef struct model_case {
    const char *name;
    ig_model m;
} model_case;

typedef struct opt_case {
    double T;
    uint32_t top_k;
    double top_p;
    int stop_at_end;
} opt_case;

static size_t find_bytes(const uint8_t *h, size_t hn, const uint8_t *n, size_t nn)
{
    if (nn == 0 || nn > hn)
        return SIZE_MAX;
    const uint8_t *p = memmem(h, hn, n, nn);
    return p ? (size_t)(p - h) : SIZE_MAX;
}

/* Stop strings: cut exactly at the first completed stop string, which is removed. */
static void check_stops(const ig_index *idx, const ig_gen_options *base, const uint8_t *prompt, size_t plen,
                        const run *full, test_rng *rng, const char *what)
{
    const uint8_t *X = full->text;
    size_t xn = full->len, nch = count_chars(X, xn);
    char s1[32] = "", s2[32] = "", s3[32] = "";
    if (nch >= 1) { /* a substring of the text, character-aligned */
        size_t a = rng_below(rng, nch), k = 1 + rng_below(rng, 3);
        size_t ba = char_prefix(X, xn, a), bb = char_prefix(X, xn, a + k);
        if (bb - ba < sizeof s1) {
            memcpy(s1, X + ba, bb - ba);
            s1[bb - ba] = 0;
        }
    }
    snprintf(s2, sizeof s2, "QQ#%u", (unsigned)rng_below(rng, 100)); /* absent */
    if (plen && nch) { /* straddles prompt and text: must not match there */
        size_t pa = plen - 1;
        while (pa > 0 && (prompt[pa] & 0xC0) == 0x80)
            pa--;
        size_t e1 = char_prefix(X, xn, 1);
        if (plen - pa + e1 < sizeof s3 && prompt[pa] != 0xFF) {
            memcpy(s3, prompt + pa, plen - pa);
            memcpy(s3 + plen - pa, X, e1);
            s3[plen - pa + e1] = 0;
        }
    }
    const char *stops[3];
    size_t ns = 0;
    if (s1[0]) stops[ns++] = s1;
    stops[ns++] = s2;
    if (s3[0]) stops[ns++] = s3;
    for (size_t i = ns; i > 1; i--) { /* shuffle */
        size_t j = rng_below(rng, i);
        const char *t = stops[i - 1];
        stops[i - 1] = stops[j];
        stops[j] = t;
    }
    /* expected: the earliest end of an occurrence in the generated text */
    size_t E = SIZE_MAX;
    for (size_t i = 0; i < ns; i++) {
        size_t at = find_bytes(X, xn, (const uint8_t *)stops[i], strlen(stops[i]));
        if (at != SIZE_MAX && at + strlen(stops[i]) < E)
            E = at + strlen(stops[i]);
    }
    ig_gen_options o = *base;
    o.stop = stops;
    o.nstop = ns;
    run r;
    run_gen(idx, &o, prompt, plen, &r);
    if (r.failed) {
        run_free(&r);
        return;
    }
    check_run(&o, &r, what);
    if (E == SIZE_MAX) {
        CHECK(r.len == xn && !memcmp(r.text, X, xn) && r.reason == full->reason,
              "%s: no stop string occurs, yet the run differs (reason %s / %s, len %zu / %zu)", what,
              ig_stop_reason_name(r.reason), ig_stop_reason_name(full->reason), r.len, xn);
    } else {
        int matched = 0;
        for (size_t i = 0; i < ns; i++) {
            size_t sl = strlen(stops[i]);
            if (sl <= E && !memcmp(X + E - sl, stops[i], sl) && r.len == E - sl && !memcmp(r.text, X, r.len))
                matched = 1;
        }
        CHECK(r.reason == IG_STOP_STOP && matched,
              "%s: stop: reason %s, text %zu bytes, expected the no-stop text cut at %zu minus the stop string", what,
              ig_stop_reason_name(r.reason), r.len, E);
        for (size_t i = 0; i < ns; i++)
            CHECK(find_bytes(r.text, r.len, (const uint8_t *)stops[i], strlen(stops[i])) == SIZE_MAX,
                  "%s: text contains stop string %zu", what, i);
        /* the character that completes the stop string is not reported as a step */
        CHECK(r.nsteps + 1 == count_chars(X, E), "%s: %zu steps before the stop, expected %zu", what, r.nsteps,
              count_chars(X, E) - 1);
    }
    run_free(&r);
}

static void test_generation(const char *tmp, test_rng *rng)
{
    model_case models[16];
    int nm = 0;
    ig_gen_options def;
    ig_gen_options_default(&def);
    CHECK(def.model.kind == IG_MODEL_INTERP && def.model.interp_k == 2 && def.temperature == 1.0 && def.top_p == 1.0 &&
              def.max_chars == 200 && def.stop_at_end == 1 && def.top_k == 0,
          "generation defaults");
    models[nm++] = (model_case){"interp2", def.model};
    ig_model m;
    ig_model_default(&m);
    models[nm++] = (model_case){"infgram", m};
    m.kind = IG_MODEL_NGRAM;
    m.n = 3;
    models[nm++] = (model_case){"ngram3", m};
    m.n = 1;
    models[nm++] = (model_case){"unigram", m};
    ig_model_default(&m);
    m.kind = IG_MODEL_WEIGHTED;
    models[nm++] = (model_case){"weighted-linear", m};
    m.weight = IG_WEIGHT_EXPONENTIAL;
    m.min_len = 2;
    m.max_len = 6;
    models[nm++] = (model_case){"weighted-exp", m};
    ig_model_default(&m);
    m.kind = IG_MODEL_INTERP;
    m.interp_k = -1;
    models[nm++] = (model_case){"interp-all", m};
    m.interp_k = 2;
    m.sbi = 1;
    m.max_context = 100;
    models[nm++] = (model_case){"interp2-sbi", m};
    ig_model_default(&m);
    m.alpha = 0.05;
    models[nm++] = (model_case){"infgram-laplace", m};
    ig_model_default(&m);
    m.max_context = 3;
    models[nm++] = (model_case){"infgram-cap3", m};
    m = def.model;
    m.max_context = 5;
    models[nm++] = (model_case){"interp2-cap5", m};

    static const opt_case opts[] = {
        {0, 0, 1, 1}, {0, 0, 1, 0}, {0.7, 0, 1, 1}, {1, 0, 1, 1}, {1, 0, 1, 0}, {1, 3, 1, 1}, {1, 0, 0.9, 1}, {0.7, 5, 0.8, 0},
    };
    int nopts = (int)(sizeof opts / sizeof *opts);
    long runs = 0;

    for (int ci = 0; ci < 2; ci++) {
        corpus c;
        corpus_make(&c, rng, ci == 0 ? 5 : 6, ci == 0 ? 40 : 120);
        ig_index *idx[2];
        char name[32];
        snprintf(name, sizeof name, "gen%d", ci);
        if (build_pair(tmp, name, &c, c.n / 7 + 1, idx)) {
            corpus_free(&c);
            continue;
        }
        /* prompts: empty, common, multi-byte, after a document end, a corpus piece, unseen */
        const char *fixed[] = {"", "the ", "日本", "ab\xff" "the c", "zq~~", NULL};
        int nprompts = 6;
        for (int mi = 0; mi < nm; mi++)
            for (int oi = 0; oi < nopts; oi++)
                for (int pi = 0; pi < nprompts; pi++) {
                    int nseeds = opts[oi].T == 0 ? 1 : scaled(3);
                    for (int si = 0; si < nseeds; si++) {
                        uint8_t prompt[64];
                        size_t plen;
                        if (fixed[pi]) {
                            plen = strlen(fixed[pi]);
                            memcpy(prompt, fixed[pi], plen);
                        } else { /* the first words of a random document */
                            size_t d = rng_below(rng, c.ndocs);
                            plen = c.docs[d].len < 12 ? c.docs[d].len : 12;
                            memcpy(prompt, c.docs[d].data, plen);
                            while (plen && (prompt[plen - 1] & 0xC0) == 0x80)
                                plen--;
                            if (plen && prompt[plen - 1] >= 0xC0)
                                plen--;
                        }
                        ig_gen_options o = def;
                        o.model = models[mi].m;
                        o.temperature = opts[oi].T;
                        o.top_k = opts[oi].top_k;
                        o.top_p = opts[oi].top_p;
                        o.stop_at_end = opts[oi].stop_at_end;
                        o.seed = rng_next(rng);
                        o.max_chars = 8 + rng_below(rng, 50);
                        char what[160];
                        snprintf(what, sizeof what, "corpus %d model %s opts %d prompt %d seed %llu", ci,
                                 models[mi].name, oi, pi, (unsigned long long)o.seed);
                        run a, b, s;
                        run_gen(idx[0], &o, prompt, plen, &a);
                        run_gen(idx[0], &o, prompt, plen, &b);
                        run_gen(idx[1], &o, prompt, plen, &s);
                        runs += 3;
                        if (a.failed || b.failed || s.failed)
                            goto next;
                        check_run(&o, &a, what);
                        CHECK(same_run(&a, &b, 1), "%s: two runs differ", what);
                        CHECK(same_run(&a, &s, 0), "%s: one-shard and many-shard runs differ ('%.*s' vs '%.*s')",
                              what, (int)a.len, a.text, (int)s.len, s.text);
                        verify_steps(idx[0], &o, prompt, plen, &a, what);
                        if (si == 0)
                            verify_steps(idx[1], &o, prompt, plen, &s, what);
                        if (o.temperature == 0) {
                            ig_buf ref = {0};
                            int reason = ref_greedy(idx[0], &o.model, prompt, plen, o.stop_at_end, o.max_chars, &ref);
                            CHECK(reason == a.reason && ref.len - plen == a.len &&
                                      (a.len == 0 || !memcmp(ref.data + plen, a.text, a.len)),
                                  "%s: greedy differs from the argmax reference (reason %s / %s): '%.*s' vs '%.*s'",
                                  what, ig_stop_reason_name(a.reason), ig_stop_reason_name(reason), (int)a.len, a.text,
                                  (int)(ref.len - plen), ref.data + plen);
                            ig_buf_free(&ref);
                            /* top-k = 1 and a tiny nucleus are greedy too, at any temperature */
                            ig_gen_options o2 = o;
                            o2.temperature = 0.8;
                            o2.top_k = 1;
                            o2.seed = rng_next(rng);
                            run k1;
                            run_gen(idx[1], &o2, prompt, plen, &k1);
                            CHECK(!k1.failed && k1.len == a.len && !memcmp(k1.text, a.text, a.len) &&
                                      k1.reason == a.reason,
                                  "%s: top_k = 1 differs from greedy: %s '%.*s' (%zu bytes) vs %s '%.*s' (%zu bytes)", what,
                                  ig_stop_reason_name(k1.reason), (int)k1.len, k1.text, k1.len,
                                  ig_stop_reason_name(a.reason), (int)a.len, a.text, a.len);
                            run_free(&k1);
                            o2.top_k = 0;
                            o2.top_p = 0.001; /* below 1/256: only the most probable byte */
                            o2.temperature = 1;
                            run_gen(idx[0], &o2, prompt, plen, &k1);
                            CHECK(!k1.failed && k1.len == a.len && !memcmp(k1.text, a.text, a.len) &&
                                      k1.reason == a.reason,
                                  "%s: top_p = 0.001 differs from greedy", what);
                            run_free(&k1);
                            runs += 2;
                        } else if (si == 0) {
                            /* max_chars: a smaller limit gives the first characters of the same run */
                            ig_gen_options o2 = o;
                            o2.max_chars = 1 + rng_below(rng, o.max_chars);
                            run h;
                            run_gen(idx[0], &o2, prompt, plen, &h);
                            if (!h.failed) {
                                check_run(&o2, &h, what);
                                size_t want = a.chars >= o2.max_chars ? char_prefix(a.text, a.len, o2.max_chars) : a.len;
                                int want_reason = a.chars >= o2.max_chars ? IG_STOP_MAX : a.reason;
                                CHECK(h.len == want && !memcmp(h.text, a.text, want) && h.reason == want_reason,
                                      "%s: max_chars %llu is not a prefix of the longer run", what,
                                      (unsigned long long)o2.max_chars);
                            }
                            run_free(&h);
                            /* stop strings, on the longer run */
                            check_stops(idx[pi & 1], &o, prompt, plen, &a, rng, what);
                            runs += 2;
                        }
                    next:
                        run_free(&a);
                        run_free(&b);
                        run_free(&s);
                    }
                }
        /* A stop string that is not valid UTF-8 (a lone continuation byte of a character
         * the run produces): the output must stay valid UTF-8, or the string be refused. */
        {
            ig_gen_options o = def;
            o.model = models[1].m;
            o.seed = 7;
            o.max_chars = 60;
            o.stop_at_end = 0;
            const char *p = ci == 0 ? "日本" : "the ";
            run a;
            run_gen(idx[0], &o, (const uint8_t *)p, strlen(p), &a);
            char bad[2] = {0, 0};
            for (size_t i = 0; i < a.len; i++)
                if ((a.text[i] & 0xC0) == 0x80)
                    bad[0] = (char)a.text[i];
            if (bad[0]) {
                const char *stops[1] = {bad};
                o.stop = stops;
                o.nstop = 1;
                ig_gen *g = NULL;
                ig_error e;
                if (ig_gen_start(&g, idx[0], &o, (const uint8_t *)p, strlen(p), &e) == 0) {
                    ig_gen_step st;
                    while (ig_gen_next(g, &st, &e) == 0)
                        ;
                    size_t len, at = 0;
                    const uint8_t *t = ig_gen_text(g, &len);
                    CHECK(ig_utf8_valid(t, len, &at),
                          "stop string \"\\x%02x\" (a lone continuation byte) leaves invalid UTF-8 at byte %zu of %zu",
                          (uint8_t)bad[0], at, len);
                    ig_gen_free(&g);
                }
            }
            run_free(&a);
        }
        ig_index_close(&idx[0]);
        ig_index_close(&idx[1]);
        corpus_free(&c);
    }
    fprintf(stderr, "generation: %ld runs\n", runs);
}

/* Greedy with an exact tie: after "xyzq " interpolation (K = 2) keeps the level "xyzq "
 * (one occurrence, then 'c') and the level " " (42 occurrences: 'c' 4, 't' 14, d-g 6 each),
 * with weights 1 and 0.1: P(c) = (1 + 0.4) / 5.2 = P(t) = 1.4 / 5.2 exactly. Ties go to
 * the lowest byte, so greedy must choose 'c' whatever the rounding of the two sums. */
static void test_greedy_tie(const char *tmp)
{
    corpus c;
    memset(&c, 0, sizeof c);
    size_t nd = 1 + 3 + 14 + 24;
    c.docs = calloc(nd, sizeof *c.docs);
    c.src = calloc(nd, sizeof *c.src);
    c.starts = calloc(nd + 1, sizeof *c.starts);
    ig_buf all = {0};
    for (size_t i = 0; i < nd; i++) {
        static const char *other[] = {"k d", "k e", "k f", "k g"};
        const char *d = i == 0 ? "xyzq c" : i < 4 ? "k c" : i < 18 ? "k t" : other[i % 4];
        ig_buf_append(&c.docs[i], d, strlen(d));
        c.src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)c.docs[i].data, .text_len = strlen(d)};
        c.starts[i] = all.len;
        ig_buf_append(&all, d, strlen(d));
        ig_buf_append(&all, "\xff", 1);
    }
    c.starts[nd] = all.len;
    c.t = all.data;
    c.n = all.len;
    c.ndocs = nd;
    ig_index *idx[2];
    if (build_pair(tmp, "tie", &c, c.n / 3, idx) == 0) {
        ig_gen_options o;
        ig_gen_options_default(&o);
        ig_dist d;
        ig_error e;
        const uint8_t *p = (const uint8_t *)"xyzq ";
        if (ig_predict(idx[0], &o.model, p, 5, &d, &e) == 0) {
            CHECK(d.nlevels == 2 && d.levels[0].total == 1 && d.levels[1].total == 42 && d.levels[1].count['c'] == 4 &&
                      d.levels[1].count['t'] == 14,
                  "greedy tie: levels not as constructed");
            fprintf(stderr, "greedy tie: P(c) = %.17g, P(t) = %.17g\n", d.prob['c'], d.prob['t']);
            ig_dist_free(&d);
        }
        o.temperature = 0;
        o.max_chars = 1;
        for (int v = 0; v < 2; v++) {
            run r;
            run_gen(idx[v], &o, p, 5, &r);
            CHECK(!r.failed && r.len == 1 && r.text[0] == 'c',
                  "greedy tie (variant %d): P(c) = P(t) = 1.4/5.2 exactly, greedy chose '%.*s' instead of the lower byte 'c'",
                  v, (int)r.len, r.text);
            run_free(&r);
        }
    }
    ig_index_close(&idx[0]);
    ig_index_close(&idx[1]);
    corpus_free(&c);
}

/* ------------------------------------------------------------------ chi-square */

/* Regularised upper incomplete gamma Q(a, x) (Numerical Recipes gser/gcf). */
static double gammq(double a, double x)
{
    if (x <= 0)
        return 1;
    double gln = lgamma(a);
    if (x < a + 1) {
        double ap = a, sum = 1.0 / a, del = sum;
        for (int n = 0; n < 10000; n++) {
            ap += 1;
            del *= x / ap;
            sum += del;
            if (fabs(del) < fabs(sum) * 1e-15)
                break;
        }
        return 1 - sum * exp(-x + a * log(x) - gln);
    }
    double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
    for (int i = 1; i < 10000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return exp(-x + a * log(x) - gln) * h;
}

/* Chi-square goodness of fit; categories with expected < 5 are pooled. Returns p. */
static double chi_square(const double *expect_p, const long *obs, int k, long n, int *df_out)
{
    double chi = 0, pool_e = 0;
    long pool_o = 0;
    int df = -1;
    for (int i = 0; i < k; i++) {
        double e = expect_p[i] * (double)n;
        if (e < 5) {
            pool_e += e;
            pool_o += obs[i];
            continue;
        }
        chi += (obs[i] - e) * (obs[i] - e) / e;
        df++;
    }
    if (pool_e > 0 || pool_o > 0) {
        if (pool_e < 1e-300)
            return pool_o ? 0 : 1;
        chi += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        df++;
    }
    *df_out = df;
    return df < 1 ? 1 : gammq(df / 2.0, chi / 2.0);
}

/* Sample frequencies of the first byte after one fixed context, over independent runs
 * (max_chars = 1, one seed each), against the filtered model distribution. The context
 * is chosen so that the candidates are ASCII (a character is one byte: no run can end
 * half-way through a character) and include <end>. */
static void test_chi_square(const char *tmp, test_rng *rng)
{
    corpus c;
    corpus_make(&c, rng, 6, 200);
    ig_index *idx[2];
    if (build_pair(tmp, "chi", &c, c.n / 5 + 1, idx)) {
        corpus_free(&c);
        return;
    }
    /* pick the prompt with the most candidates of probability >= 1% (under interp 2) */
    ig_gen_options def;
    ig_gen_options_default(&def);
    const char *cands[] = {"at", "the", "a", "t", "ca", "on", "to", "ran", "mat", "sat"};
    const char *prompt = cands[0];
    int best = -1;
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        double w[256];
        if (!weights(idx[0], &def.model, (const uint8_t *)cands[i], strlen(cands[i]), 1, w, NULL))
            continue;
        int k = 0;
        for (int b = 0; b < 256; b++)
            k += w[b] >= 0.01;
        if (w[0xFF] >= 0.01 && k > best) {
            best = k;
            prompt = cands[i];
        }
    }
    CHECK(best >= 3, "chi-square: no rich context found (%d)", best);
    ig_model inf;
    ig_model_default(&inf);
    ig_model tri = inf;
    tri.kind = IG_MODEL_NGRAM;
    tri.n = 2;
    struct { ig_model m; double T; uint32_t k; double p; int end; } cfg[] = {
        {def.model, 1.0, 0, 1.0, 1},
        {def.model, 1.0, 0, 1.0, 0},  /* <end> removed, the rest renormalised */
        {def.model, 0.6, 4, 1.0, 1},
        {def.model, 1.5, 0, 0.85, 1},
        {tri, 1.0, 0, 1.0, 1},
        {inf, 2.0, 0, 1.0, 0},
    };
    int draws = scaled(20000);
    size_t plen = strlen(prompt);
    for (size_t ci = 0; ci < sizeof cfg / sizeof *cfg; ci++) {
        double w[256];
        if (!weights(idx[0], &cfg[ci].m, (const uint8_t *)prompt, plen, cfg[ci].end, w, NULL))
            continue;
        filt f;
        filter(w, cfg[ci].T, cfg[ci].k, cfg[ci].p, &f);
        int bad_support = 0;
        for (int b = 0x80; b < 0xFF; b++)
            bad_support |= f.q[b] > 0;
        CHECK(!bad_support, "chi-square config %zu: multi-byte candidates after '%s'", ci, prompt);
        long obs[257] = {0}; /* 256 = no character and no <end> */
        ig_gen_options o = def;
        o.model = cfg[ci].m;
        o.temperature = cfg[ci].T;
        o.top_k = cfg[ci].k;
        o.top_p = cfg[ci].p;
        o.stop_at_end = cfg[ci].end;
        o.max_chars = 1;
        long outside = 0;
        for (int i = 0; i < draws; i++) {
            o.seed = 0x5eed0000ull + (uint64_t)ci * 1000003u + (uint64_t)i;
            ig_gen *g = NULL;
            ig_error e;
            if (ig_gen_start(&g, idx[i & 1], &o, (const uint8_t *)prompt, plen, &e)) {
                CHECK(0, "gen_start: %s", e.msg);
                break;
            }
            ig_gen_step st;
            int rc = ig_gen_next(g, &st, &e);
            int cat = rc == 0 ? st.bytes[0] : rc == IG_STOP_END ? 0xFF : 256;
            obs[cat]++;
            if (cat == 256 || f.q[cat] == 0)
                outside++;
            ig_gen_free(&g);
        }
        CHECK(outside == 0, "chi-square config %zu: %ld draws outside the support", ci, outside);
        double ep[256];
        for (int b = 0; b < 256; b++)
            ep[b] = f.q[b];
        int df = 0;
        double p = chi_square(ep, obs, 256, draws, &df);
        int ncat = 0;
        for (int b = 0; b < 256; b++)
            ncat += f.q[b] > 0;
        fprintf(stderr, "chi-square config %zu after '%s': %d categories, df %d, p = %.4f\n", ci, prompt, ncat, df, p);
        CHECK(p > 0.001, "chi-square config %zu: p = %g (df %d) — sampled frequencies do not fit the model", ci, p, df);
    }
    /* self-test of the statistic: the 0.1% critical value of df = 1 is 10.828 */
    CHECK(fabs(gammq(0.5, 10.828 / 2) - 0.001) < 1e-5, "gammq");
    CHECK(fabs(gammq(2.5, 20.515 / 2) - 0.001) < 1e-5, "gammq df 5");
    ig_index_close(&idx[0]);
    ig_index_close(&idx[1]);
    corpus_free(&c);
}

/* ------------------------------------------------------------------ spans */

/* Naive occurrence test and count: a pattern may hold 0xFF only as its last byte. */
static size_t naive_count(const corpus *c, const uint8_t *p, size_t m, size_t stop_at)
{
    if (m == 0)
        return c->n;
    if (m > 1 && memchr(p, 0xFF, m - 1))
        return 0;
    size_t k = 0;
    const uint8_t *h = c->t, *end = c->t + c->n;
    while (h + m <= end) {
        const uint8_t *f = memmem(h, (size_t)(end - h), p, m);
        if (!f)
            break;
        if (++k >= stop_at)
            break;
        h = f + 1;
    }
    return k;
}

static int is_word(uint8_t b)
{
    return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_' || b >= 0x80;
}

static void check_spans_one(const corpus *c, ig_index **idx, const uint8_t *t, size_t len, const ig_span_options *so,
                            const uint64_t *nm, const char *what)
{
    uint64_t min_len = so->min_len ? so->min_len : 8;
    ig_span *sp[2] = {0};
    size_t nsp[2] = {0};
    for (int v = 0; v < 2; v++) {
        uint64_t *ms = NULL, searches = 0;
        ig_error e;
        int rc = ig_spans(idx[v], t, len, so, &sp[v], &nsp[v], &ms, &searches, &e);
        CHECK(rc == 0, "%s: ig_spans: %s", what, e.msg);
        if (rc)
            return;
        int ms_ok = 1;
        for (size_t i = 0; i < len; i++)
            if (ms[i] != nm[i]) {
                CHECK(0, "%s: variant %d m(%zu) = %llu, naive %llu", what, v, i, (unsigned long long)ms[i],
                      (unsigned long long)nm[i]);
                ms_ok = 0;
                break;
            }
        if (ms_ok)
            CHECK(1, "ms");
        CHECK(searches <= 2 * (uint64_t)len + 2, "%s: %llu searches for %zu bytes", what, (unsigned long long)searches,
              len);
        /* novelty from m(i), naive coverage */
        for (uint64_t n = 1; n <= 12; n += 1 + n / 3) {
            size_t unc = 0;
            for (size_t j = 0; j < len; j++) {
                int cov = 0;
                for (size_t i = 0; i <= j && !cov; i++)
                    cov = nm[i] >= n && i + nm[i] > j;
                unc += !cov;
            }
            double want = len ? (double)unc / (double)len : 0;
            double got = ig_novelty(ms, len, n);
            CHECK(fabs(got - want) < 1e-12, "%s: novelty(n=%llu) %g, naive %g", what, (unsigned long long)n, got, want);
        }
        free(ms);
    }
    CHECK(nsp[0] == nsp[1] && (!nsp[0] || !memcmp(sp[0], sp[1], nsp[0] * sizeof *sp[0])),
          "%s: spans differ between one-shard and many-shard builds", what);
    if (!so->words) {
        /* exact expected list */
        ig_span *want = calloc(len + 1, sizeof *want);
        size_t nw = 0;
        uint64_t reach = 0;
        for (size_t i = 0; i < len; i++) {
            if (nm[i] == 0 || nm[i] < min_len)
                continue;
            size_t cnt = naive_count(c, t + i, nm[i], SIZE_MAX);
            if (so->max_count && cnt > so->max_count)
                continue;
            if (i + nm[i] <= reach)
                continue;
            reach = i + nm[i];
            want[nw++] = (ig_span){i, nm[i], cnt};
        }
        int same = nw == nsp[0];
        for (size_t k = 0; same && k < nw; k++)
            same = want[k].start == sp[0][k].start && want[k].length == sp[0][k].length && want[k].count == sp[0][k].count;
        if (!same) {
            size_t k = 0;
            while (k < nw && k < nsp[0] && want[k].start == sp[0][k].start && want[k].length == sp[0][k].length &&
                   want[k].count == sp[0][k].count)
                k++;
            CHECK(0, "%s: spans: %zu, naive %zu; first difference at #%zu: got [%llu+%llu x%llu] want [%llu+%llu x%llu]",
                  what, nsp[0], nw, k, k < nsp[0] ? (unsigned long long)sp[0][k].start : 0ull,
                  k < nsp[0] ? (unsigned long long)sp[0][k].length : 0ull,
                  k < nsp[0] ? (unsigned long long)sp[0][k].count : 0ull, k < nw ? (unsigned long long)want[k].start : 0ull,
                  k < nw ? (unsigned long long)want[k].length : 0ull, k < nw ? (unsigned long long)want[k].count : 0ull);
        } else
            CHECK(1, "spans");
        free(want);
    } else {
        uint64_t prev_start = 0, prev_end = 0;
        for (size_t k = 0; k < nsp[0]; k++) {
            const ig_span *s = &sp[0][k];
            uint64_t a = s->start, b = s->start + s->length;
            int ok = b <= len && a < b;
            ok = ok && (a == 0 || !is_word(t[a - 1]) || !is_word(t[a]));
            ok = ok && (b == len || !is_word(t[b]) || !is_word(t[b - 1]));
            ok = ok && t[a] != ' ' && t[b - 1] != ' ';
            CHECK(ok, "%s: word span [%llu, %llu) not on word boundaries", what, (unsigned long long)a,
                  (unsigned long long)b);
            if (!ok)
                continue;
            size_t cnt = naive_count(c, t + a, b - a, SIZE_MAX);
            CHECK(s->count == cnt && cnt > 0, "%s: word span [%llu, %llu) count %llu, naive %zu", what,
                  (unsigned long long)a, (unsigned long long)b, (unsigned long long)s->count, cnt);
            CHECK(s->length >= min_len && (!so->max_count || s->count <= so->max_count),
                  "%s: word span [%llu, %llu) fails the filters", what, (unsigned long long)a, (unsigned long long)b);
            /* maximal and in order of start: no kept span inside another */
            CHECK(k == 0 || b > prev_end, "%s: word span [%llu, %llu) ends inside the previous one", what,
                  (unsigned long long)a, (unsigned long long)b);
            CHECK(k == 0 || a > prev_start,
                  "%s: word span [%llu, %llu) contains the previous span [%llu, %llu) (start %s): not maximal / not in "
                  "order of start", what, (unsigned long long)a, (unsigned long long)b, (unsigned long long)prev_start,
                  (unsigned long long)prev_end, a == prev_start ? "equal" : "earlier");
            /* inside the match at some start i <= a */
            int inside = 0;
            for (size_t i = 0; i <= a && !inside; i++)
                inside = i + nm[i] >= b;
            CHECK(inside, "%s: word span [%llu, %llu) is not inside a matching span", what, (unsigned long long)a,
                  (unsigned long long)b);
            prev_start = a;
            prev_end = b;
        }
    }
    if (so->words) {
        /* exact: the kept spans are the maximal candidates, a candidate being each
         * [i, i+m(i)) trimmed inward to word boundaries and then of spaces (spans.c),
         * recounted and filtered */
        int all_inside = 1, all_candidates = 1;
        for (size_t i = 0; i < len; i++) {
            if (!nm[i])
                continue;
            uint64_t a = i, b = i + nm[i];
            while (a < b && !(a == 0 || !is_word(t[a - 1]) || !is_word(t[a])))
                a++;
            while (b > a && !(b == len || !is_word(t[b]) || !is_word(t[b - 1])))
                b--;
            while (a < b && t[a] == ' ')
                a++;
            while (b > a && t[b - 1] == ' ')
                b--;
            if (a >= b || b - a < min_len)
                continue;
            if (so->max_count && naive_count(c, t + a, b - a, so->max_count + 1) > so->max_count)
                continue;
            int inside = 0;
            for (size_t k = 0; k < nsp[0] && !inside; k++)
                inside = sp[0][k].start <= a && sp[0][k].start + sp[0][k].length >= b;
            if (!inside && all_inside) {
                CHECK(0, "%s: word candidate [%llu, %llu) from m(%zu) is inside no kept span", what,
                      (unsigned long long)a, (unsigned long long)b, i);
                all_inside = 0;
            }
        }
        for (size_t k = 0; k < nsp[0] && all_candidates; k++) {
            int found = 0;
            for (size_t i = 0; i < len && !found; i++) {
                if (!nm[i])
                    continue;
                uint64_t a = i, b = i + nm[i];
                while (a < b && !(a == 0 || !is_word(t[a - 1]) || !is_word(t[a])))
                    a++;
                while (b > a && !(b == len || !is_word(t[b]) || !is_word(t[b - 1])))
                    b--;
                while (a < b && t[a] == ' ')
                    a++;
                while (b > a && t[b - 1] == ' ')
                    b--;
                found = a == sp[0][k].start && b - a == sp[0][k].length;
            }
            if (!found) {
                CHECK(0, "%s: word span [%llu, +%llu) is no trimmed matching span", what,
                      (unsigned long long)sp[0][k].start, (unsigned long long)sp[0][k].length);
                all_candidates = 0;
            }
        }
        if (all_inside && all_candidates)
            CHECK(1, "word spans exact");
    }
    free(sp[0]);
    free(sp[1]);
}

static void test_spans(const char *tmp, test_rng *rng)
{
    int ncorpora = scaled(21);
    long texts = 0;
    for (int ci = 0; ci < ncorpora; ci++) {
        int shape = (int[]){0, 1, 2, 4, 5, 6, 3}[ci % 7];
        corpus c;
        corpus_make(&c, rng, shape, shape == 3 ? 100 : 2 + rng_below(rng, 25));
        ig_index *idx[2];
        char name[32];
        snprintf(name, sizeof name, "spans%d", ci);
        if (build_pair(tmp, name, &c, 1 + rng_below(rng, c.n / 3 + 1), idx)) {
            corpus_free(&c);
            continue;
        }
        int ntexts = scaled(30);
        ig_buf t = {0};
        for (int ti = 0; ti < ntexts; ti++) {
            t.len = 0;
            size_t target = ti == 0 ? 0 : 1 + rng_below(rng, 250);
            while (t.len < target) {
                uint64_t k = rng_below(rng, 20);
                if (k < 9) { /* a corpus substring (may hold 0xFF) */
                    size_t m = 1 + rng_below(rng, 40), at = rng_below(rng, c.n);
                    if (at + m > c.n)
                        m = c.n - at;
                    ig_buf_append(&t, c.t + at, m);
                } else if (k < 16) {
                    ig_buf_append(&t, c.t + rng_below(rng, c.n), 1);
                } else if (k < 19) {
                    ig_buf_append(&t, " .a_Z9" + rng_below(rng, 6), 1);
                } else {
                    uint8_t b = (uint8_t)rng_next(rng);
                    ig_buf_append(&t, &b, 1);
                }
            }
            size_t len = t.len;
            /* naive matching statistics: m(i) >= m(i-1) - 1 since suffixes of occurring
             * strings occur; occurrence is monotone in the length */
            uint64_t *nm = calloc(len + 1, sizeof *nm);
            for (size_t i = 0; i < len; i++) {
                uint64_t L = i && nm[i - 1] ? nm[i - 1] - 1 : 0;
                while (i + L < len && naive_count(&c, t.data + i, L + 1, 1))
                    L++;
                nm[i] = L;
            }
            /* spot check against a full scan of every corpus position */
            if (len) {
                size_t i = rng_below(rng, len);
                uint64_t best = 0;
                for (size_t j = 0; j < c.n; j++) {
                    uint64_t l = 0;
                    while (i + l < len && j + l < c.n && t.data[i + l] == c.t[j + l]) {
                        l++;
                        if (c.t[j + l - 1] == 0xFF)
                            break; /* a match ends at the end of its document */
                    }
                    if (l > best)
                        best = l;
                }
                CHECK(best == nm[i], "naive m(%zu) = %llu, full scan %llu", i, (unsigned long long)nm[i],
                      (unsigned long long)best);
            }
            for (int v = 0; v < 3; v++) {
                ig_span_options so = {0};
                so.min_len = v == 0 ? 1 + rng_below(rng, 3) : rng_below(rng, 13); /* 0 = default 8 */
                so.max_count = rng_below(rng, 3) ? 0 : 1 + rng_below(rng, 5);
                so.words = v == 2;
                char what[128];
                snprintf(what, sizeof what, "spans corpus %d (shape %d) text %d opts %d (min %llu max %llu words %d)",
                         ci, shape, ti, v, (unsigned long long)so.min_len, (unsigned long long)so.max_count, so.words);
                check_spans_one(&c, idx, t.data, len, &so, nm, what);
            }
            free(nm);
            texts++;
        }
        ig_buf_free(&t);
        ig_index_close(&idx[0]);
        ig_index_close(&idx[1]);
        corpus_free(&c);
    }
    fprintf(stderr, "spans: %ld texts\n", texts);
}

/* ------------------------------------------------------------------ search */

typedef struct query {
    size_t nclauses;
    size_t nterms[3];
    uint8_t term[3][3][8];
    size_t lens[3][3];
} query;

/* Naive: does document d match, with how many hits and which first hit? */
static int naive_doc(const corpus *c, size_t d, const query *q, uint64_t within, uint64_t *hits, size_t *first)
{
    const uint8_t *t = c->docs[d].data;
    size_t n = c->docs[d].len;
    uint64_t h = 0;
    int have[3] = {0};
    *first = SIZE_MAX;
    for (size_t ci = 0; ci < q->nclauses; ci++)
        for (size_t ti = 0; ti < q->nterms[ci]; ti++)
            for (size_t i = 0; i + q->lens[ci][ti] <= n; i++)
                if (!memcmp(t + i, q->term[ci][ti], q->lens[ci][ti])) {
                    h++;
                    have[ci] = 1;
                    if (i < *first)
                        *first = i;
                }
    *hits = h;
    for (size_t ci = 0; ci < q->nclauses; ci++)
        if (!have[ci])
            return 0;
    if (!within)
        return 1;
    /* some choice of one hit per clause with max - min <= W: try every hit as the minimum */
    for (size_t p = 0; p < n; p++) {
        int all = 1;
        for (size_t ci = 0; ci < q->nclauses && all; ci++) {
            int found = 0;
            for (size_t ti = 0; ti < q->nterms[ci] && !found; ti++)
                for (size_t i = p; i <= p + within && i + q->lens[ci][ti] <= n && !found; i++)
                    found = !memcmp(t + i, q->term[ci][ti], q->lens[ci][ti]);
            all = found;
        }
        if (all)
            return 1;
    }
    return 0;
}

static void test_search(const char *tmp, test_rng *rng)
{
    int ncorpora = scaled(9);
    long queries = 0, matched_docs = 0;
    for (int ci = 0; ci < ncorpora; ci++) {
        int shape = (int[]){3, 1, 6}[ci % 3];
        size_t nd = shape == 3 ? 60 + rng_below(rng, 200) : shape == 1 ? 10 + rng_below(rng, 30) : 100 + rng_below(rng, 100);
        corpus c;
        corpus_make(&c, rng, shape, nd);
        ig_index *idx[2];
        char name[32];
        snprintf(name, sizeof name, "search%d", ci);
        if (build_pair(tmp, name, &c, 1 + rng_below(rng, c.n / 4 + 1), idx)) {
            corpus_free(&c);
            continue;
        }
        size_t *bases[2] = {shard_bases(idx[0]), shard_bases(idx[1])};
        uint8_t *match = calloc(nd, 1);
        uint64_t *nh = calloc(nd, sizeof *nh);
        size_t *nfirst = calloc(nd, sizeof *nfirst);
        int nq = scaled(100);
        for (int qi = 0; qi < nq; qi++) {
            query q = {0};
            q.nclauses = 1 + rng_below(rng, 3);
            for (size_t cl = 0; cl < q.nclauses; cl++) {
                q.nterms[cl] = 1 + rng_below(rng, 3);
                for (size_t ti = 0; ti < q.nterms[cl]; ti++) {
                    uint8_t *p = q.term[cl][ti];
                    size_t m;
                    uint64_t k = rng_below(rng, 10);
                    if (k < 5) { /* present: a piece of a document */
                        size_t d = rng_below(rng, nd);
                        m = 1 + rng_below(rng, 4);
                        if (m > c.docs[d].len)
                            m = c.docs[d].len;
                        size_t at = rng_below(rng, c.docs[d].len - m + 1);
                        memcpy(p, c.docs[d].data + at, m);
                    } else if (k < 8) { /* from the alphabet, maybe absent */
                        m = 1 + rng_below(rng, 3);
                        for (size_t j = 0; j < m; j++) {
                            uint8_t b;
                            do b = c.t[rng_below(rng, c.n)]; while (b == 0xFF);
                            p[j] = b;
                        }
                    } else { /* absent */
                        m = 2;
                        memcpy(p, "#!", 2);
                    }
                    q.lens[cl][ti] = m;
                }
            }
            uint64_t within = rng_below(rng, 2) ? 0 : 1 + rng_below(rng, 15);
            uint64_t budget = rng_below(rng, 4) ? 0 : 1ull << 40;
            /* naive */
            uint64_t want_total = 0;
            for (size_t d = 0; d < nd; d++) {
                match[d] = (uint8_t)naive_doc(&c, d, &q, within, &nh[d], &nfirst[d]);
                want_total += match[d];
            }
            matched_docs += (long)want_total;
            const uint8_t *tp[3][3];
            const uint8_t *const *tpp[3];
            const size_t *lp[3];
            for (size_t cl = 0; cl < q.nclauses; cl++) {
                for (size_t ti = 0; ti < q.nterms[cl]; ti++)
                    tp[cl][ti] = q.term[cl][ti];
                tpp[cl] = tp[cl];
                lp[cl] = q.lens[cl];
            }
            for (int v = 0; v < 2; v++) {
                char what[96];
                snprintf(what, sizeof what, "search corpus %d (shape %d) query %d variant %d within %llu", ci, shape,
                         qi, v, (unsigned long long)within);
                uint64_t limit = 1 + rng_below(rng, 7), offset = 0, got_total = UINT64_MAX;
                size_t next_doc = 0; /* naive matches are walked in order alongside */
                int ok = 1;
                for (;;) {
                    ig_search_result r;
                    ig_error e;
                    int rc = ig_search(idx[v], tpp, lp, q.nterms, q.nclauses, within, budget, offset, limit, &r, &e);
                    if (rc) {
                        CHECK(0, "%s: ig_search: %s", what, e.msg);
                        ok = 0;
                        break;
                    }
                    if (got_total == UINT64_MAX)
                        got_total = r.documents_total;
                    if (r.documents_total != got_total || r.approximate || r.scale != 1) {
                        CHECK(0, "%s: page at %llu: total %llu (first page %llu), approximate %d, scale %g", what,
                              (unsigned long long)offset, (unsigned long long)r.documents_total,
                              (unsigned long long)got_total, r.approximate, r.scale);
                        ok = 0;
                    }
                    uint64_t expect_n = offset >= got_total ? 0 : got_total - offset < limit ? got_total - offset : limit;
                    if (r.nhits != expect_n) {
                        CHECK(0, "%s: page at %llu has %zu hits, expected %llu", what, (unsigned long long)offset,
                              r.nhits, (unsigned long long)expect_n);
                        ok = 0;
                    }
                    for (size_t h = 0; h < r.nhits && ok; h++) {
                        while (next_doc < nd && !match[next_doc])
                            next_doc++;
                        const ig_search_hit *x = &r.hits[h];
                        if (next_doc >= nd || x->doc != next_doc) {
                            CHECK(0, "%s: hit %llu is document %llu, naive %zu", what,
                                  (unsigned long long)(offset + h), (unsigned long long)x->doc, next_doc);
                            ok = 0;
                            break;
                        }
                        size_t d = next_doc++;
                        size_t g = bases[v][x->first.shard] + x->first.offset;
                        int first_ok = g == c.starts[d] + nfirst[d];
                        int len_ok = 0;
                        for (size_t cl = 0; cl < q.nclauses; cl++)
                            for (size_t ti = 0; ti < q.nterms[cl]; ti++)
                                len_ok |= x->first_len == q.lens[cl][ti] && g + q.lens[cl][ti] <= c.n &&
                                          !memcmp(c.t + g, q.term[cl][ti], q.lens[cl][ti]);
                        if (x->hits != nh[d] || !first_ok || !len_ok) {
                            CHECK(0, "%s: document %zu: hits %llu / naive %llu, first at %zu / %zu, first_len %u (%d)",
                                  what, d, (unsigned long long)x->hits, (unsigned long long)nh[d], g - c.starts[d],
                                  nfirst[d], x->first_len, len_ok);
                            ok = 0;
                        }
                    }
                    ig_search_result_free(&r);
                    if (!ok)
                        break;
                    offset += limit;
                    if (offset >= got_total)
                        break;
                }
                if (ok) {
                    while (next_doc < nd && !match[next_doc])
                        next_doc++;
                    CHECK(got_total == want_total && next_doc == nd,
                          "%s: documents_total %llu, naive %llu", what, (unsigned long long)got_total,
                          (unsigned long long)want_total);
                }
                /* sampling: a small budget gives a subset of the exact documents */
                if (v == 1 && within == 0) {
                    ig_search_result r;
                    ig_error e;
                    uint64_t small = 1 + rng_below(rng, 8);
                    if (ig_search(idx[v], tpp, lp, q.nterms, q.nclauses, within, small, 0, UINT64_MAX - 1, &r, &e) == 0) {
                        int sub = r.documents_total == r.nhits && r.scale >= 1 && (r.approximate || r.scale == 1);
                        for (size_t h = 0; h < r.nhits && sub; h++)
                            sub = r.hits[h].doc < nd && match[r.hits[h].doc] && r.hits[h].hits <= nh[r.hits[h].doc];
                        if (!r.approximate)
                            sub = sub && r.documents_total == want_total;
                        CHECK(sub, "%s: budget %llu: not a subset of the exact result (approximate %d, scale %g, total %llu)",
                              what, (unsigned long long)small, r.approximate, r.scale,
                              (unsigned long long)r.documents_total);
                        ig_search_result_free(&r);
                    } else
                        CHECK(0, "%s: ig_search with budget: %s", what, e.msg);
                }
            }
            queries++;
        }
        /* a page reaching to the largest limit from a non-zero offset */
        {
            const uint8_t *t1[1] = {c.t};
            const uint8_t *const *tp1[1] = {t1};
            size_t l1[1] = {1};
            const size_t *lp1[1] = {l1};
            size_t n1[1] = {1};
            ig_search_result r;
            ig_error e;
            if (ig_search(idx[0], tp1, lp1, n1, 1, 0, 0, 1, UINT64_MAX, &r, &e) == 0) {
                CHECK(r.documents_total >= 1 && r.nhits == r.documents_total - 1,
                      "search offset 1, limit UINT64_MAX: %zu hits of %llu documents (offset + limit overflows?)",
                      r.nhits, (unsigned long long)r.documents_total);
                ig_search_result_free(&r);
            }
        }
        free(match);
        free(nh);
        free(nfirst);
        free(bases[0]);
        free(bases[1]);
        ig_index_close(&idx[0]);
        ig_index_close(&idx[1]);
        corpus_free(&c);
    }
    fprintf(stderr, "search: %ld queries, %ld matching documents\n", queries, matched_docs);
}

int main(void)
{
    char tmpl[] = "/tmp/iggenXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    double t0 = now();
    test_rng r1 = {20261201}, r2 = {20261202}, r3 = {20261203}, r4 = {20261204};
    test_generation(tmpl, &r1);
    test_greedy_tie(tmpl);
    double t1 = now();
    test_chi_square(tmpl, &r2);
    double t2 = now();
    test_spans(tmpl, &r3);
    double t3 = now();
    test_search(tmpl, &r4);
    double t4 = now();
    fprintf(stderr, "times: generation %.1f s, chi-square %.1f s, spans %.1f s, search %.1f s\n", t1 - t0, t2 - t1,
            t3 - t2, t4 - t3);
    ig_error e;
    igi_remove_tree(tmpl, &e);
    return check_done("generate");
}
