/* mix: see mix.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "mix.h"
#include "cluster.h"
#include "command.h"
#include "models.h"

void do_batch(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t cn;
    const uint8_t *cp = wire_get_bytes(q, &cn);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint32_t levels = wire_get_u32(q);
    uint64_t n = wire_get_u64(q);
    int rc = request_ready(q, n <= q->n, &e);
    uint8_t *buf = NULL;
    size_t bcap = 0;
    wire out = {0};
    for (uint64_t i = 0; !rc && i < n; i++) {
        uint64_t a = wire_get_u64(q), b = wire_get_u64(q);
        size_t xn;
        const uint8_t *xp = wire_get_bytes(q, &xn);
        uint64_t ell = levels ? wire_get_u64(q) : 0;
        if (q->bad || a > b || b > cn) {
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
            break;
        }
        size_t wn = (size_t)(b - a);
        if (wn + xn + 1 > bcap) {
            uint8_t *p = realloc(buf, wn + xn + 1);
            if (!p) {
                rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
                break;
            }
            buf = p;
            bcap = wn + xn + 1;
        }
        if (wn)
            memcpy(buf, cp + a, wn);
        if (xn)
            memcpy(buf + wn, xp, xn);
        if (!levels) {
            uint64_t count;
            wire_u64(&out, ig_longest_suffix(g.idx, buf, wn + xn, cap, &count));
            continue;
        }
        ig_part_level lv;
        if ((rc = ig_part_level_get(g.idx, buf, wn + xn, cap, ell, 0, &lv, &e)))
            break;
        put_level(&out, &lv);
        ig_part_level_free(&lv);
    }
    reply_answer(w, rc, &e, &out);
    free(buf);
}

void do_evallv(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t tn;
    const uint8_t *text = wire_get_bytes(q, &tn);
    int64_t L = (int64_t)wire_get_u64(q);
    uint64_t floor = wire_get_u64(q), from = wire_get_u64(q), to = wire_get_u64(q);
    int rc = request_ready(q, from >= 1 && from <= to && to <= tn && to - from <= q->n, &e);
    ig_eval_levels *lv = rc ? NULL : calloc(to > from ? to - from : 1, sizeof *lv);
    if (!rc && !lv)
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc)
        rc = ig_eval_levels_text(g.idx, text, tn, L, floor, (size_t)from, (size_t)to, lv, &e);
    wire out = {0};
    for (size_t i = 0; !rc && i < to - from; i++) {
        wire_u64(&out, lv[i].prof.n);
        for (size_t k = 0; k < lv[i].prof.n; k++) {
            wire_u64(&out, lv[i].prof.ell[k]);
            wire_u64(&out, lv[i].prof.count[k]);
            wire_u64(&out, lv[i].next[k]);
            wire_u64(&out, lv[i].end[k]);
        }
        wire_u32(&out, (uint32_t)lv[i].distinct | (uint32_t)lv[i].only << 8);
        ig_eval_levels_free(&lv[i]);
    }
    free(lv);
    reply_answer(w, rc, &e, &out);
}

/* Reads one position's levels written by do_evallv into *lv (malloc'd arrays). -1 when the
 * reply is garbled or memory ran out (lv then holds nothing). */
static int get_evallv(wire_rd *rd, ig_eval_levels *lv)
{
    memset(lv, 0, sizeof *lv);
    uint64_t n = wire_get_u64(rd);
    if (rd->bad || n == 0 || n > rd->n / 32)
        return -1;
    uint64_t *a[4];
    int oom = 0;
    for (int k = 0; k < 4; k++)
        oom |= !(a[k] = malloc(n * sizeof *a[k]));
    lv->prof.ell = a[0];
    lv->prof.count = a[1];
    lv->next = a[2];
    lv->end = a[3];
    for (uint64_t i = 0; !oom && i < n; i++)
        for (int k = 0; k < 4; k++)
            a[k][i] = wire_get_u64(rd);
    lv->prof.n = n;
    uint32_t d = wire_get_u32(rd);
    lv->distinct = (int)(d & 0xff);
    lv->only = (uint8_t)(d >> 8);
    for (uint64_t i = 1; !oom && !rd->bad && i < n; i++)
        if (a[0][i] >= a[0][i - 1])
            rd->bad = 1;
    if (oom || rd->bad || lv->distinct > 2) {
        ig_eval_levels_free(lv);
        return -1;
    }
    return 0;
}

/* The positions an eval round trip asks for: the parts' levels of a slice are held on rank 0
 * until scored, so a long text goes a slice at a time (INFINIGRAM_MPI_EVAL_SLICE on rank 0
 * sets another size: the tests make it small). */
static size_t eval_slice(void)
{
    const char *env = getenv("INFINIGRAM_MPI_EVAL_SLICE");
    char *end;
    unsigned long long v = env && *env ? strtoull(env, &end, 10) : 0;
    return env && *env && !*end && v >= 1 ? (size_t)v : (size_t)1 << 20;
}

/* The sums of one slice's levels (n positions): rank 0's are kept, the others' added. */
typedef struct evallv_sum {
    ig_eval_levels *lv;
    size_t n;
} evallv_sum;

/* Adds rank k's levels of the slice (do_evallv's answer) to the sums u. */
static int add_evallv(void *u, int k, wire_rd *lr, ig_error *e)
{
    evallv_sum *s = u;
    for (size_t i = 0; i < s->n; i++) {
        ig_eval_levels one;
        if (get_evallv(lr, &one))
            return garbled(e, k);
        if (k == 0) {
            s->lv[i] = one;
            continue;
        }
        int rc = ig_eval_levels_add(&s->lv[i], &one, e);
        ig_eval_levels_free(&one);
        if (rc)
            return rc;
    }
    return 0;
}

/* eval over the parts: for each slice of positions [from, to), 1 round trip of OP_EVALLV (with
 * the text from the first byte a context of the slice reads), each part's levels summed and
 * scored (ig_eval_parts_score); *r as ig_eval_from_levels gives it. */
static int eval_parts(const ig_model *model, const uint8_t *text, size_t len, int threads, ig_eval_result *r,
                      ig_error *e)
{
    ig_eval_parts *ep;
    int rc = ig_eval_parts_start(model, len, threads, &ep, e);
    if (rc)
        return rc;
    size_t slice = eval_slice(), most = len - 1 < slice ? len - 1 : slice;
    int64_t L = model->max_context;
    ig_eval_levels *lv = calloc(most, sizeof *lv);
    if (!lv)
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    for (size_t from = 1; !rc && from < len; from += most) {
        /* the bytes a context of the slice reads, and at least one: a position is scored after
         * the byte before it, even by a model that reads no context (max-context 0) */
        size_t keep = L >= 1 ? (size_t)L : 1;
        size_t to = len - from < most ? len : from + most, lo = L >= 0 && from > keep ? from - keep : 0;
        wire w = {0};
        wire_u32(&w, OP_EVALLV);
        wire_bytes(&w, text + lo, to - lo);
        wire_u64(&w, (uint64_t)L);
        wire_u64(&w, ig_eval_floor(model));
        wire_u64(&w, from - lo);
        wire_u64(&w, to - lo);
        memset(lv, 0, most * sizeof *lv);
        evallv_sum s = {lv, to - from};
        rc = ask_each(&w, 1, add_evallv, &s, e);
        if (!rc)
            rc = ig_eval_parts_score(ep, text, from, to, lv, e);
        for (size_t i = 0; i < to - from; i++)
            ig_eval_levels_free(&lv[i]);
    }
    free(lv);
    if (rc) {
        ig_error keep = *e;
        ig_eval_parts_finish(ep, r, e);
        ig_eval_result_free(r);
        *e = keep;
        return rc;
    }
    return ig_eval_parts_finish(ep, r, e);
}

/* ---- mix: every byte factor's context is known before the first is read */

/* The contexts of a mix, the context followed by each proper prefix of each candidate (the
 * empty one included), with their ∞-gram ℓ* and level summed over the parts. */
typedef struct batch_ctx {
    const uint8_t *x; ///< the bytes after the context (in the candidates' arena)
    size_t n;
    uint64_t longest;
    ig_part_level *lv; ///< its level at `longest` (mix; malloc'd by the levels round)
    uint64_t a, b;    ///< the window of the context before them (mix: all of it)
} batch_ctx;

typedef struct mix_cache {
    const uint8_t *ctx;
    size_t clen;
    batch_ctx *c;
    size_t n;
} mix_cache;

static int cmp_batch_ctx(const void *a, const void *b)
{
    const batch_ctx *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int d = n ? memcmp(x->x, y->x, n) : 0;
    return d ? d : (x->n > y->n) - (x->n < y->n);
}

/* ig_mix's predictions from the cache: the ∞-gram at the parts' largest ℓ*, as one index
 * gives it. */
static int mix_cached(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d, ig_error *err)
{
    const mix_cache *mc = user;
    batch_ctx key = {text + mc->clen, len - mc->clen, 0, NULL, 0, 0};
    batch_ctx *hit = len >= mc->clen && !memcmp(text, mc->ctx, mc->clen)
                       ? bsearch(&key, mc->c, mc->n, sizeof *mc->c, cmp_batch_ctx)
                       : NULL;
    if (!hit || !hit->lv)
        return ig_error_set(err, IG_EINTERNAL, "a context of the mix was not fetched from the parts");
    ig_symbol *syms = NULL;
    size_t nsyms = 0;
    double unseen;
    int sparse;
    int rc = ig_predict_from_level(model, text, len, hit->longest, hit->lv, 0, d, &syms, &nsyms, &unseen, &sparse, err);
    free(syms);
    return rc;
}

/* One round trip of OP_BATCH over the cache's contexts: their ℓ*
 * (levels 0), then their levels at those lengths. */
static int batch_round(mix_cache *mc, int64_t cap, int levels, ig_error *e)
{
    REPLIES(rep, nrep);
    wire w = {0};
    wire_u32(&w, OP_BATCH);
    wire_bytes(&w, mc->ctx, mc->clen);
    wire_u64(&w, (uint64_t)cap);
    wire_u32(&w, (uint32_t)levels);
    wire_u64(&w, mc->n);
    for (size_t i = 0; i < mc->n; i++) {
        wire_u64(&w, mc->c[i].a);
        wire_u64(&w, mc->c[i].b);
        wire_bytes(&w, mc->c[i].x, mc->c[i].n);
        if (levels)
            wire_u64(&w, mc->c[i].longest);
    }
    int rc = ask_all(&w, rep, nrep, e);
    for (size_t i = 0; !rc && levels && i < mc->n; i++) {
        if (!mc->c[i].lv && !(mc->c[i].lv = calloc(1, sizeof *mc->c[i].lv)))
            rc = ig_error_set(e, IG_ENOMEM, "out of memory");
        else
            mc->c[i].lv->ell = mc->c[i].longest;
    }
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (size_t i = 0; !rc && !lr.bad && i < mc->n; i++) {
            if (!levels) {
                uint64_t ell = wire_get_u64(&lr);
                if (ell > mc->c[i].longest)
                    mc->c[i].longest = ell;
                continue;
            }
            ig_part_level one;
            memset(&one, 0, sizeof one);
            one.ell = mc->c[i].longest;
            if (get_level(&lr, &one))
                break;
            rc = ig_part_level_add(mc->c[i].lv, &one, e);
            ig_part_level_free(&one);
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
    }
    free_replies(rep);
    return rc;
}

/* Fills the cache for the candidates tokens[0, n) after ctx: 2 round trips. */
static int mix_fetch(mix_cache *mc, const uint8_t *ctx, size_t clen, const ig_mix_token *tokens, size_t n,
                     int64_t cap, ig_error *e)
{
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += tokens[i].len;
    mc->ctx = ctx;
    mc->clen = clen;
    if (!(mc->c = calloc(total, sizeof *mc->c)))
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    mc->c[mc->n++] = (batch_ctx){(const uint8_t *)"", 0, 0, NULL, 0, clen};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 1; k < tokens[i].len; k++)
            mc->c[mc->n++] = (batch_ctx){tokens[i].bytes, k, 0, NULL, 0, clen};
    qsort(mc->c, mc->n, sizeof *mc->c, cmp_batch_ctx);
    size_t kept = 0;
    for (size_t i = 0; i < mc->n; i++)
        if (!kept || cmp_batch_ctx(&mc->c[kept - 1], &mc->c[i]))
            mc->c[kept++] = mc->c[i];
    mc->n = kept;
    int rc = batch_round(mc, cap, 0, e);
    return rc ? rc : batch_round(mc, cap, 1, e);
}

static void mix_cache_free(mix_cache *mc)
{
    for (size_t i = 0; i < mc->n; i++)
        if (mc->c[i].lv) {
            ig_part_level_free(mc->c[i].lv);
            free(mc->c[i].lv);
        }
    free(mc->c);
    memset(mc, 0, sizeof *mc);
}

int cmd_mix(void *opts, void *result, const words *ws, double t0)
{
    ig_mix_opts *o = opts;
    ig_mix_result *r = result;
    ig_error e;
    mix_cache mc = {0};
    ig_gen_backend be = {mix_cached, NULL, NULL, &mc};
    ig_mix_token *tokens = NULL;
    size_t ntokens = 0;
    uint8_t *arena = NULL, *ctx = NULL;
    size_t clen = 0;
    int rc = 0;
    /* as in the shell: --llm names a file (read on rank 0) unless it is the JSON itself; never
     * for a request to the server, which opens no path a request names */
    if (ws && o->llm.p && o->llm.n && o->llm.p[0] != '[' && o->llm.p[0] != '{') {
        char *path = NULL, *text = NULL;
        rc = ig_word_path(&(ig_word){(char *)o->llm.p, o->llm.n, 0, 0, value_quoted(&ig_op_mix, ws, "llm"), 0}, &path,
                          &e); /* ~ and NUL as in the shell */
        FILE *fp = path ? fopen(path, "r") : NULL;
        size_t cap = 0;
        ssize_t got = fp ? getdelim(&text, &cap, '\0', fp) : -1;
        int eno = errno;
        if (fp)
            fclose(fp);
        if (rc)
            ;
        else if (!fp)
            rc = ig_error_set(&e, IG_ENOTFOUND, "%s: cannot open: %s", path, strerror(eno));
        else if (got < 0)
            rc = ig_error_set(&e, IG_EIO, "%s: cannot read", path);
        else
            rc = ig_field_set_text(ig_field_find(ig_mix_fields, "llm", 3), o, (const uint8_t *)text, (size_t)got, &e);
        free(text);
        free(path);
    }
    /* what the corpus must answer; a request the operation refuses is left to it, for its message */
    ig_error later;
    if (!rc && o->llm.p && o->query.p &&
        !ig_mix_candidates_parse(o->llm.p, o->llm.n, &tokens, &ntokens, &arena, &later) &&
        !ig_query_normalize(g.idx, o->query.p, o->query.n, &ctx, &clen, &later)) {
        ig_mix_options mo;
        ig_mix_options_default(&mo);
        rc = mix_fetch(&mc, ctx, clen, tokens, ntokens, mo.model.max_context, &e);
    }
    o->backend = &be;
    ig_op_ctx octx = {g.idx, g.dataset, NULL};
    if (!rc)
        rc = ig_op_mix.run(&octx, o, r, &e);
    rc = answer_or_fail(&ig_op_mix, rc, &e, o, r, t0);
    free(tokens);
    free(arena);
    free(ctx);
    mix_cache_free(&mc);
    return rc;
}

int cmd_eval(void *opts, void *result, const words *ws, double t0)
{
    ig_eval_opts *o = opts;
    ig_eval_op_result *r = result;
    ig_error e;
    uint8_t *text = NULL;
    size_t len = 0;
    char *label = NULL;
    int rc = ig_model_resolve(&o->model, &r->model, &e);
    if (!rc && !ws && (o->file.p || o->range.p)) /* the server opens no path a request names */
        rc = ig_error_set(&e, IG_EUSAGE, "{file}: the shell reads files; give the text");
    else if (!rc && o->file.p && o->text.p)
        rc = ig_error_set(&e, IG_EUSAGE, "give either FILE or --text, not both");
    else if (!rc && o->range.p && !o->file.p)
        rc = ig_error_set(&e, IG_EUSAGE, "--range applies to FILE");
    else if (!rc && o->file.p) { /* rank 0 reads the file, as the shell does */
        ig_index_info info;
        ig_index_get_info(g.idx, &info);
        char *range = o->range.p ? strndup((const char *)o->range.p, o->range.n) : NULL;
        if ((rc = ig_word_path(&(ig_word){(char *)o->file.p, o->file.n, 0, 0, value_quoted(&ig_op_eval, ws, "file"), 0},
                               &label, &e))) /* ~ and NUL as in the shell */
            ;
        else if (o->range.p && !range)
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
        else
            rc = ig_load_text(label, range, info.normalized && !info.casefold, &text, &len, &e);
        if (!rc && info.casefold) { /* the corpus's own rules: NFC, then folding */
            uint8_t *folded = NULL;
            size_t flen = 0;
            rc = ig_query_normalize(g.idx, text, len, &folded, &flen, &e);
            free(text);
            text = folded;
            len = flen;
        }
        free(range);
        o->label = label;
    } else if (!rc && o->text.p) {
        rc = ig_query_normalize(g.idx, o->text.p, o->text.n, &text, &len, &e);
    } else if (!rc) {
        rc = ig_error_set(&e, IG_EUSAGE, "usage: eval [MODEL OPTIONS] [--threads N] FILE [--range A:B] | --text TEXT | --ids A,B,C");
    }
    if (!rc && len < 2)
        rc = ig_error_set(&e, IG_EUSAGE, "nothing to score: the text needs at least 2 bytes");
    if (!rc) {
        r->bytes = len;
        rc = eval_parts(&r->model, text, len, (int)o->threads, &r->r, &e);
    }
    rc = answer_or_fail(&ig_op_eval, rc, &e, o, r, t0);
    free(text);
    free(label);
    o->label = NULL;
    return rc;
}
