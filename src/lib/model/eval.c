/*
 * Evaluation on held-out text (share/doc/models.md, "Evaluation" and "--sbi"): every
 * position i ≥ 1 is scored given at most L preceding bytes; a zero probability counts
 * at the floor ln(1e−10) and is reported. ℓ* is carried from one position to the next
 * (it grows by at most one), so the longest-suffix search costs O(1) finds amortised.
 * The ∞-gram and interpolation paths only count the true byte (and <end>) at each
 * level with narrowing searches instead of building whole histograms. Positions are
 * split across worker threads; each starts its own ℓ* chain.
 */
#include "infinigram/query.h"
#include "model_impl.h"
#include "util/util.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLOOR_P 1e-10

typedef struct eval_job {
    const ig_index *idx;
    const ig_model *model;
    const uint8_t *text;
    size_t from, to;                 ///< positions [from, to)
    int64_t L;
    size_t hist_len;
    const volatile sig_atomic_t *cancel;
    atomic_uint_fast64_t *done;
    atomic_int *stop;
    /* results */
    double *block_ln;                ///< Σ ln P of each block of EVAL_BLOCK positions (shared, one writer a block)
    double cur_ln;                   ///< the sum of block cur_block so far
    size_t cur_block;                ///< SIZE_MAX before the first position
    uint64_t scored, zero, agree, sparse, agree_sparse, dense, agree_dense;
    uint64_t *hist;
    int rc;
    ig_error err;
} eval_job;

/* Positions summed together before the sums are added up, in order (see eval_jobs). */
#define EVAL_BLOCK 4096

/* Change points remembered between the positions of a text (interpolation levels). */
#define MAX_HINTS IG_LEVEL_HINTS

/* Where a position's model reads the corpus beyond ℓ*: from the index (one machine), or from the
 * summed levels of the parts of a corpus (ig_eval_from_levels). Both score through eval_p, so
 * that their figures cannot drift apart. */
typedef struct eval_src {
    /** cnt(suf(ell)) */
    uint64_t (*count)(void *u, uint64_t ell);
    /** The largest ℓ' < ell with cnt(ℓ') > cnt (into *ncnt), UINT64_MAX when none; `step` (the
     *  how-manyth change point of this position) lets the index remember where it was. */
    uint64_t (*next)(void *u, int step, uint64_t ell, uint64_t cnt, uint64_t *ncnt);
    /** Occurrences of suf(ell) followed by x, and (when `end`) by <end>. */
    void (*follow)(void *u, uint64_t ell, uint8_t x, int end, uint64_t *cx, uint64_t *ce);
    void *u;
} eval_src;

/* P(x) under selective back-off interpolation from the levels under ℓ* = ell (count cnt):
 * only x (and <end>) is counted at each level. */
static double interp_p(const eval_src *src, uint64_t ell, uint64_t cnt, int k, int sbi, uint8_t x)
{
    int step = 0;
    double num = 0, den = 0, w = 1;
    uint64_t last_total = 0;
    int kept = 0;
    while (ell >= 1) {
        uint64_t cx, ce;
        src->follow(src->u, ell, x, sbi, &cx, &ce);
        uint64_t total = cnt - ce;
        if (sbi && x == IG_DOC_END)
            cx = 0;
        if (total > last_total) {
            num += w * (double)cx;
            den += w * (double)total;
            w *= IGI_INTERP_DECAY;
            last_total = total;
            if (++kept == k)
                break;
        }
        uint64_t ncnt = 0, next = src->next(src->u, step++, ell, cnt, &ncnt);
        if (next == UINT64_MAX || next == 0)
            break;
        ell = next;
        cnt = ncnt;
    }
    return den > 0 ? num / den : 0;
}

/* P(x) of one level (count cx of x among total), Laplace-smoothed over the bytes that may
 * follow c when alpha > 0, with predict's operations (level_apply, then finish): the n-gram,
 * and the weighted mixture's fallback to ℓ*. */
static double level_p(const ig_model *model, ig_ctx c, uint8_t x, uint64_t cx, uint64_t total)
{
    double denom = (double)total, s = 0;
    if (model->alpha > 0) {
        uint8_t valid[256];
        int v = igi_utf8_valid_next(c.p, c.n, valid);
        denom += model->alpha * v;
        s = valid[x] ? model->alpha / denom : 0;
    }
    if (denom <= 0)
        return 0; /* no estimate */
    double p = 0;
    if (cx)
        p += (double)cx / denom;
    return p + s;
}

/* One term of the weighted mixture: its level's coefficient before normalisation, and x's count. */
typedef struct wterm {
    double coef;
    uint64_t cx;
} wterm;

/* P(x) under the weighted mixture, with predict's operations (mixture, then finish); ell = ℓ*,
 * cnt and cx its counts. *terms (*cap of them) is scratch the caller keeps between positions. */
static int weighted_p(const ig_model *model, const eval_src *src, ig_ctx c, uint8_t x, uint64_t ell, uint64_t cnt,
                      uint64_t cx, wterm **terms, size_t *cap, double *p, ig_error *err)
{
    uint64_t top = ell, bottom = model->min_len ? model->min_len : 1;
    if (model->max_len && model->max_len < top)
        top = model->max_len;
    if (top == 0 || bottom > top) {
        *p = level_p(model, c, x, cx, cnt); /* no length in range: the ∞-gram */
        return 0;
    }
    size_t n = 0;
    double wsum = 0;
    uint64_t e = top, k = src->count(src->u, top);
    for (;;) {
        uint64_t nk = 0, next = src->next(src->u, 0, e, k, &nk);
        uint64_t low = (next == UINT64_MAX || next < bottom) ? bottom : next + 1;
        double w = 0;
        for (uint64_t j = low; j <= e; j++)
            w += igi_model_weight(model, j, bottom, top);
        if (igi_grow(terms, n, cap, sizeof **terms, 8))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        uint64_t ex, ee;
        src->follow(src->u, e, x, 0, &ex, &ee);
        (*terms)[n++] = (wterm){w / (double)k, ex};
        wsum += w;
        if (next == UINT64_MAX || next < bottom)
            break;
        e = next;
        k = nk;
    }
    double q = 0;
    for (size_t j = 0; j < n; j++)
        if ((*terms)[j].cx)
            q += (*terms)[j].coef / wsum * (double)(*terms)[j].cx;
    *p = q;
    return 0;
}

/* The n-gram's P(x): its level at n−1, or only smoothing when that context never occurs. */
static double ngram_p(const ig_model *model, const eval_src *src, ig_ctx c, uint8_t x)
{
    uint64_t ell = model->n - 1, total = ell > c.n ? 0 : src->count(src->u, ell);
    if (total == 0) {
        if (!(model->alpha > 0))
            return 0; /* no estimate */
        uint8_t valid[256];
        int v = igi_utf8_valid_next(c.p, c.n, valid);
        return valid[x] ? 1.0 / v : 0;
    }
    uint64_t cx, ce;
    src->follow(src->u, ell, x, 0, &cx, &ce);
    return level_p(model, c, x, cx, total);
}

/* One scored position: p under the model, the ∞-gram's estimate pinf, whether a single byte
 * follows the suffix, ℓ*. */
static void tally(eval_job *j, size_t pos, double p, double pinf, int one, uint64_t ell)
{
    j->scored++;
    size_t b = (pos - 1) / EVAL_BLOCK;
    if (b != j->cur_block) { /* blocks are summed whole, then added in order: see eval_jobs */
        if (j->cur_block != SIZE_MAX)
            j->block_ln[j->cur_block] = j->cur_ln;
        j->cur_block = b;
        j->cur_ln = 0;
    }
    if (p > 0) {
        j->cur_ln += log(p);
    } else {
        j->cur_ln += log(FLOOR_P);
        j->zero++;
    }
    int agree = pinf > 0.5;
    j->agree += agree;
    if (one) {
        j->sparse++;
        j->agree_sparse += agree;
    } else {
        j->dense++;
        j->agree_dense += agree;
    }
    j->hist[ell + 1 < j->hist_len ? ell + 1 : j->hist_len - 1]++;
}

/* The ∞-gram's P(x) after context c, from ℓ*'s suffix count cnt and count cx of x after it:
 * Laplace-smoothed over the bytes that may follow c in valid UTF-8 when alpha > 0. */
static double infgram_p(const ig_model *model, ig_ctx c, uint8_t x, uint64_t cx, uint64_t cnt, double pinf)
{
    if (!(model->alpha > 0))
        return pinf;
    uint8_t valid[256];
    int v = igi_utf8_valid_next(c.p, c.n, valid);
    return ((double)cx + (valid[x] ? model->alpha : 0)) / ((double)cnt + model->alpha * v);
}

/* P(x) at a position under any model: ℓ* = ell with count cnt, x's count cx there and the
 * ∞-gram's estimate pinf; the other levels from src. */
static int eval_p(const ig_model *model, const eval_src *src, ig_ctx c, uint8_t x, uint64_t ell, uint64_t cnt,
                  uint64_t cx, double pinf, wterm **terms, size_t *cap, double *p, ig_error *err)
{
    switch (model->kind) {
    case IG_MODEL_INFGRAM:
        *p = infgram_p(model, c, x, cx, cnt, pinf);
        return 0;
    case IG_MODEL_INTERP:
        *p = interp_p(src, ell, cnt, model->interp_k, model->sbi, x);
        return 0;
    case IG_MODEL_NGRAM:
        *p = ngram_p(model, src, c, x);
        return 0;
    default:
        return weighted_p(model, src, c, x, ell, cnt, cx, terms, cap, p, err);
    }
}

/* The index as eval_src: the worker's match and its change-point hints. */
typedef struct index_src {
    igi_ctx_in in;         ///< first: igi_ctx_in_count reads it
    ig_match *m;
    uint64_t *hints;
    int weighted;          ///< the weighted mixture searches without hints, as predict's does
} index_src;

static uint64_t index_next(void *u, int step, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    index_src *s = u;
    /* the j-th change point moves little from one position to the next */
    uint64_t hint = !s->weighted && step < MAX_HINTS && s->hints[step] != UINT64_MAX ? s->hints[step] + 1 : ell - 1;
    uint64_t next = igi_ctx_next_level(s->in.idx, s->in.c, ell, cnt, hint, ncnt, NULL);
    if (!s->weighted && step < MAX_HINTS)
        s->hints[step] = next;
    return next;
}

static void index_follow(void *u, uint64_t ell, uint8_t x, int end, uint64_t *cx, uint64_t *ce)
{
    index_src *s = u;
    const uint8_t *p = s->in.c.p + s->in.c.n - ell;
    igi_match_find(s->in.idx, p, ell, s->m);
    *cx = igi_match_count_next(s->in.idx, s->m, p, x);
    *ce = end ? igi_match_count_next(s->in.idx, s->m, p, IG_DOC_END) : 0;
}

static void *eval_worker(void *arg)
{
    eval_job *j = arg;
    const ig_index *idx = j->idx;
    const ig_model *model = j->model;
    ig_match m = igi_match_alloc(idx);
    if (!m.r) {
        j->rc = ig_error_set(&j->err, IG_ENOMEM, "out of memory");
        return NULL;
    }
    uint64_t ell = 0, N = ig_count(idx, NULL, 0), hints[MAX_HINTS];
    for (int h = 0; h < MAX_HINTS; h++)
        hints[h] = UINT64_MAX;
    int started = 0;
    wterm *terms = NULL;
    size_t tcap = 0;
    for (size_t i = j->from; i < j->to; i++) {
        if (((i - j->from) & 1023) == 1023) {
            atomic_fetch_add(j->done, 1024);
            if (ig_cancelled(j->cancel) || atomic_load(j->stop))
                break;
        }
        size_t lo = (j->L >= 0 && i > (size_t)j->L) ? i - (size_t)j->L : 0;
        ig_ctx c = igi_ctx_make(j->text + lo, i - lo, -1);
        uint8_t x = j->text[i];
        /* ℓ*: at most one more than at the previous position */
        uint64_t cnt;
        if (!started) {
            ell = igi_ctx_longest(idx, c, &cnt);
            started = 1;
        } else {
            ell = ell + 1 > c.n ? c.n : ell + 1;
            cnt = ell ? igi_ctx_count(idx, c, ell) : N;
            while (cnt == 0 && ell > 0) { /* the empty suffix counts N, which only an empty corpus has at 0 */
                ell--;
                cnt = ell ? igi_ctx_count(idx, c, ell) : N;
            }
        }
        /* the ∞-gram estimate, for agreement and sparsity (and as the model itself) */
        igi_match_find(idx, c.p + c.n - ell, ell, &m);
        uint64_t cx = igi_match_count_next(idx, &m, c.p + c.n - ell, x);
        double pinf = cnt ? (double)cx / (double)cnt : 0;
        int one = igi_match_single_next(idx, &m, NULL);
        double p = 0; /* set by eval_p when it succeeds */
        index_src is = {{idx, c}, &m, hints, model->kind == IG_MODEL_WEIGHTED};
        eval_src src = {igi_ctx_in_count, index_next, index_follow, &is};
        if ((j->rc = eval_p(model, &src, c, x, ell, cnt, cx, pinf, &terms, &tcap, &p, &j->err)))
            break;
        tally(j, i, p, pinf, one, ell);
    }
    free(terms);
    igi_match_release(&m);
    return NULL;
}

void ig_eval_result_free(ig_eval_result *r)
{
    if (r) {
        free(r->effective_n_hist);
        r->effective_n_hist = NULL;
    }
}

/* The threads an evaluation of `positions` positions uses: one per core when threads <= 0,
 * never more than the cores (the work is all computation; one request over HTTP asking for
 * 256 would start 256), and at most one per block of EVAL_BLOCK positions. The figures do
 * not depend on it. */
static int eval_threads(int threads, size_t positions)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = n > 0 ? (int)n : 1;
    if (threads <= 0 || threads > cores)
        threads = cores;
    if ((size_t)threads > positions / EVAL_BLOCK + 1)
        threads = (int)(positions / EVAL_BLOCK + 1);
    return threads;
}

static size_t eval_hist_len(const ig_model *model)
{
    int64_t L = model->max_context;
    return (L >= 0 && L < 4096 ? (size_t)L : 4096) + 2;
}

/* Sums the jobs' figures into *r in job order (frees their histograms); rc is the
 * evaluation's status so far. */
static int eval_collect(eval_job *jobs, int n, size_t hist_len, size_t positions, int rc, ig_eval_result *r,
                        ig_error *err)
{
    if (!rc && !(r->effective_n_hist = calloc(hist_len, sizeof *r->effective_n_hist)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (int t = 0; t < n; t++) { /* each job's last block, cut short or not */
        if (jobs[t].cur_block != SIZE_MAX)
            jobs[t].block_ln[jobs[t].cur_block] = jobs[t].cur_ln;
    }
    for (size_t b = 0; n && b < (positions + EVAL_BLOCK - 1) / EVAL_BLOCK; b++)
        r->sum_ln += jobs[0].block_ln[b];
    if (n)
        free(jobs[0].block_ln);
    for (int t = 0; t < n; t++) {
        eval_job *j = &jobs[t];
        if (!rc && j->rc) {
            rc = j->rc;
            *err = j->err;
        }
        r->scored += j->scored;
        r->zero_prob += j->zero;
        r->agree += j->agree;
        r->sparse += j->sparse;
        r->agree_sparse += j->agree_sparse;
        r->dense += j->dense;
        r->agree_dense += j->agree_dense;
        for (size_t h = 0; r->effective_n_hist && h < hist_len; h++)
            r->effective_n_hist[h] += j->hist[h];
        free(j->hist);
    }
    if (rc) {
        ig_eval_result_free(r);
        return rc;
    }
    r->hist_len = hist_len;
    r->cancelled = r->scored < positions;
    r->floor_ln = log(FLOOR_P);
    r->perplexity = r->scored ? exp(-r->sum_ln / (double)r->scored) : 0;
    r->bits_per_byte = r->scored ? -r->sum_ln / ((double)r->scored * log(2.0)) : 0;
    return 0;
}

/* Checks an evaluation of text[0, len) under model and makes its jobs: eval_threads shares of
 * the positions, each with its histogram. *jobs (malloc'd, *n of them; eval_collect frees
 * their histograms). */
static int eval_jobs(const ig_model *model, size_t len, int threads, eval_job **jobs, int *n, ig_error *err)
{
    *jobs = NULL;
    *n = 0;
    int rc = ig_model_check(model, err);
    if (rc)
        return rc;
    if (len < 2)
        return ig_error_set(err, IG_EUSAGE, "nothing to score: the text needs at least 2 bytes");
    size_t positions = len - 1, hist_len = eval_hist_len(model);
    threads = eval_threads(threads, positions);
    /* The sum of logs is rounded the same whatever the number of threads (or of machines, from
     * parts): each block of EVAL_BLOCK positions is summed in order by the one job whose share
     * holds it whole (shares start on block boundaries), and the blocks are added in order. */
    size_t nblocks = (positions + EVAL_BLOCK - 1) / EVAL_BLOCK;
    double *blocks = calloc(nblocks ? nblocks : 1, sizeof *blocks);
    eval_job *j = blocks ? calloc((size_t)threads, sizeof *j) : NULL;
    for (int t = 0; j && t < threads; t++) {
        j[t] = (eval_job){.model = model, .L = model->max_context, .hist_len = hist_len, .block_ln = blocks,
                          .cur_block = SIZE_MAX};
        j[t].from = 1 + EVAL_BLOCK * (nblocks * (size_t)t / (size_t)threads);
        j[t].to = t + 1 == threads ? 1 + positions : 1 + EVAL_BLOCK * (nblocks * (size_t)(t + 1) / (size_t)threads);
        if (!(j[t].hist = calloc(hist_len, sizeof *j[t].hist))) {
            for (int k = 0; k < t; k++)
                free(j[k].hist);
            free(j);
            j = NULL;
        }
    }
    if (!j)
        free(blocks);
    if (!j)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    *jobs = j;
    *n = threads;
    return 0;
}

int ig_eval(const ig_index *idx, const ig_model *model, const uint8_t *text, size_t len, int threads,
            ig_eval_progress_fn progress, void *user, const volatile sig_atomic_t *cancel, ig_eval_result *r,
            ig_error *err)
{
    memset(r, 0, sizeof *r);
    eval_job *jobs;
    int n, rc = eval_jobs(model, len, threads, &jobs, &n, err);
    if (rc)
        return rc;
    size_t positions = len - 1;
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    atomic_uint_fast64_t done = 0;
    atomic_int stop = 0;
    if (!tid)
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    int started = 0;
    for (int t = 0; !rc && t < n; t++) {
        eval_job *j = &jobs[t];
        j->idx = idx;
        j->text = text;
        j->cancel = cancel;
        j->done = &done;
        j->stop = &stop;
        if (pthread_create(&tid[t], NULL, eval_worker, j) != 0) {
            rc = ig_error_set(err, IG_EINTERNAL, "cannot start an evaluation thread");
            break;
        }
        started++;
    }
    /* wait, reporting progress; a cancel stops the workers at their next check */
    for (int t = 0; t < started; t++) {
        while (progress && pthread_tryjoin_np(tid[t], NULL) != 0) {
            if (progress(user, atomic_load(&done), positions))
                atomic_store(&stop, 1);
            usleep(50000);
        }
        if (!progress)
            pthread_join(tid[t], NULL);
    }
    rc = eval_collect(jobs, n, jobs[0].hist_len, positions, rc, r, err);
    free(jobs);
    free(tid);
    return rc;
}
/* ---------------------------------------------------------------- every model from the parts */

uint64_t ig_eval_floor(const ig_model *model)
{
    switch (model->kind) {
    case IG_MODEL_NGRAM: return model->n - 1;
    case IG_MODEL_WEIGHTED: return model->min_len ? model->min_len : 1;
    case IG_MODEL_INTERP: return 1; /* the empty suffix is never a level */
    default: return UINT64_MAX;
    }
}

void ig_eval_levels_free(ig_eval_levels *l)
{
    if (!l)
        return;
    ig_part_profile_free(&l->prof);
    free(l->next);
    free(l->end);
    memset(l, 0, sizeof *l);
}

/* One position's levels into *out: ℓ* = ell (count cnt) of the usable context c, then every
 * change point down to floor. hints (MAX_HINTS entries, UINT64_MAX: none; may be NULL) carry
 * the change points from one position of a text to the next, where they move little; the
 * change-point search hands back the intervals of what it finds (a, b: scratch), so each level
 * costs no search of its own. */
static int levels_walk(const ig_index *idx, ig_ctx c, uint8_t x, uint64_t floor, uint64_t ell, uint64_t cnt,
                       uint64_t *hints, ig_match *a, ig_match *b, ig_eval_levels *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    size_t room[4] = {0}; /* the four arrays grow together, each through igi_grow */
    int step = 0;
    ig_match *cur = a, *found = b;
    igi_match_find(idx, c.p + c.n - ell, ell, cur);
    for (;;) {
        size_t n = out->prof.n;
        if (igi_grow(&out->prof.ell, n, &room[0], sizeof *out->prof.ell, 8) ||
            igi_grow(&out->prof.count, n, &room[1], sizeof *out->prof.count, 8) ||
            igi_grow(&out->next, n, &room[2], sizeof *out->next, 8) ||
            igi_grow(&out->end, n, &room[3], sizeof *out->end, 8)) {
            ig_eval_levels_free(out);
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        }
        const uint8_t *p = c.p + c.n - ell;
        size_t i = out->prof.n++;
        out->prof.ell[i] = ell;
        out->prof.count[i] = cnt;
        out->next[i] = igi_match_count_next(idx, cur, p, x);
        out->end[i] = igi_match_count_next(idx, cur, p, IG_DOC_END);
        if (i == 0) {
            int byte = 0;
            out->distinct = cnt == 0 ? 0 : igi_match_single_next(idx, cur, &byte) ? 1 : 2;
            out->only = out->distinct == 1 ? (uint8_t)byte : 0;
        }
        uint64_t hint = hints && step < MAX_HINTS && hints[step] != UINT64_MAX ? hints[step] + 1 : ell - 1;
        uint64_t ncnt = 0, next = igi_ctx_next_level(idx, c, ell, cnt, hint, &ncnt, found);
        if (hints && step < MAX_HINTS)
            hints[step] = next;
        step++;
        if (next == UINT64_MAX || next < floor)
            return 0;
        if (found->len != next) /* the search did not probe it */
            igi_match_find(idx, c.p + c.n - next, next, found);
        ig_match *t = cur;
        cur = found;
        found = t;
        ell = next;
        cnt = ncnt;
    }
}

int ig_eval_levels_get(const ig_index *idx, const uint8_t *ctx, size_t len, uint8_t x, uint64_t floor,
                       ig_eval_levels *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    ig_ctx c = igi_ctx_make(ctx, len, -1);
    ig_match a = igi_match_alloc(idx), b = igi_match_alloc(idx);
    int rc = !a.r || !b.r ? ig_error_set(err, IG_ENOMEM, "out of memory") : 0;
    uint64_t cnt, ell = rc ? 0 : igi_ctx_longest(idx, c, &cnt);
    if (!rc)
        rc = levels_walk(idx, c, x, floor, ell, cnt, NULL, &a, &b, out, err);
    igi_match_release(&a);
    igi_match_release(&b);
    return rc;
}

int ig_eval_levels_text(const ig_index *idx, const uint8_t *text, size_t len, int64_t L, uint64_t floor, size_t from,
                        size_t to, ig_eval_levels *out, ig_error *err)
{
    if (from < 1 || from > to || to > len)
        return ig_error_set(err, IG_EUSAGE, "positions [%zu, %zu) are not in [1, %zu)", from, to, len);
    if (from == to)
        return 0;
    memset(out, 0, (to - from) * sizeof *out);
    ig_match a = igi_match_alloc(idx), b = igi_match_alloc(idx);
    int rc = !a.r || !b.r ? ig_error_set(err, IG_ENOMEM, "out of memory") : 0;
    uint64_t ell = 0, N = ig_count(idx, NULL, 0), hints[MAX_HINTS];
    for (int h = 0; h < MAX_HINTS; h++)
        hints[h] = UINT64_MAX;
    for (size_t i = from; !rc && i < to; i++) {
        size_t lo = L >= 0 && i > (size_t)L ? i - (size_t)L : 0;
        ig_ctx c = igi_ctx_make(text + lo, i - lo, -1);
        uint64_t cnt;
        if (i == from) {
            ell = igi_ctx_longest(idx, c, &cnt);
        } else { /* ℓ* grows by at most one from a position to the next, as ig_eval carries it */
            ell = ell + 1 > c.n ? c.n : ell + 1;
            cnt = ell ? igi_ctx_count(idx, c, ell) : N;
            while (cnt == 0 && ell > 0) {
                ell--;
                cnt = ell ? igi_ctx_count(idx, c, ell) : N;
            }
        }
        rc = levels_walk(idx, c, text[i], floor, ell, cnt, hints, &a, &b, &out[i - from], err);
    }
    igi_match_release(&a);
    igi_match_release(&b);
    if (rc)
        for (size_t i = 0; i < to - from; i++)
            ig_eval_levels_free(&out[i]);
    return rc;
}

int ig_eval_levels_add(ig_eval_levels *to, const ig_eval_levels *from, ig_error *err)
{
    /* the sum changes wherever a term does: at every change point of either */
    size_t n = 0, i = 0, j = 0, room = to->prof.n + from->prof.n;
    uint64_t *a[4];
    int oom = 0;
    for (int k = 0; k < 4; k++)
        oom |= !(a[k] = malloc((room ? room : 1) * sizeof *a[k]));
    if (oom) {
        for (int k = 0; k < 4; k++)
            free(a[k]);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    const ig_part_profile *tp = &to->prof, *fp = &from->prof;
    uint64_t e;
    while (igi_profile_union_next(tp, fp, &i, &j, &e)) {
        size_t ta = igi_profile_at(tp, e), fa = igi_profile_at(fp, e);
        a[0][n] = e;
        a[1][n] = (ta == SIZE_MAX ? 0 : tp->count[ta]) + (fa == SIZE_MAX ? 0 : fp->count[fa]);
        a[2][n] = (ta == SIZE_MAX ? 0 : to->next[ta]) + (fa == SIZE_MAX ? 0 : from->next[fa]);
        a[3][n++] = (ta == SIZE_MAX ? 0 : to->end[ta]) + (fa == SIZE_MAX ? 0 : from->end[fa]);
    }
    /* the bytes following the sum's ℓ*: a part whose ℓ* is shorter has no occurrence there */
    uint64_t tl = tp->n ? tp->ell[0] : 0, fl = fp->n ? fp->ell[0] : 0;
    uint64_t top = tl > fl ? tl : fl;
    int td = tp->n && tl == top ? to->distinct : 0, fd = fp->n && fl == top ? from->distinct : 0;
    if (!fd) {
        to->distinct = td;
    } else if (!td || (td == 1 && fd == 1 && to->only == from->only)) {
        to->distinct = fd;
        to->only = from->only;
    } else {
        to->distinct = 2; /* two different bytes, or more */
    }
    IGI_FREE(to->prof.ell, to->prof.count, to->next, to->end);
    to->prof.ell = a[0];
    to->prof.count = a[1];
    to->next = a[2];
    to->end = a[3];
    to->prof.n = n;
    return 0;
}

/* The summed levels of one position as eval_src. */
static uint64_t levels_count(void *u, uint64_t ell)
{
    const ig_eval_levels *l = u;
    return igi_profile_count(&l->prof, ell);
}

static uint64_t levels_next(void *u, int step, uint64_t ell, uint64_t cnt, uint64_t *ncnt)
{
    (void)step;
    const ig_eval_levels *l = u;
    return igi_profile_next(&l->prof, ell, cnt, ncnt);
}

static void levels_follow(void *u, uint64_t ell, uint8_t x, int end, uint64_t *cx, uint64_t *ce)
{
    (void)x; /* the position's byte is the one the levels were got for */
    const ig_eval_levels *l = u;
    size_t at = igi_profile_at(&l->prof, ell);
    *cx = at == SIZE_MAX ? 0 : l->next[at];
    *ce = at == SIZE_MAX || !end ? 0 : l->end[at];
}

struct ig_eval_parts {
    const ig_model *model;
    size_t len;
    eval_job *jobs;
    int n;
    wterm *terms;          ///< weighted_p's scratch
    size_t tcap;
    int rc;                ///< the first error (then *err) kept
    ig_error err;
};

int ig_eval_parts_start(const ig_model *model, size_t len, int threads, ig_eval_parts **out, ig_error *err)
{
    *out = NULL;
    ig_eval_parts *ep = calloc(1, sizeof *ep);
    if (!ep)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = eval_jobs(model, len, threads, &ep->jobs, &ep->n, err);
    if (rc) {
        free(ep);
        return rc;
    }
    ep->model = model;
    ep->len = len;
    *out = ep;
    return 0;
}

int ig_eval_parts_score(ig_eval_parts *ep, const uint8_t *text, size_t from, size_t to, const ig_eval_levels *levels,
                        ig_error *err)
{
    if (ep->rc) {
        *err = ep->err;
        return ep->rc;
    }
    if (from < 1 || from > to || to > ep->len)
        return ig_error_set(err, IG_EUSAGE, "positions [%zu, %zu) are not in [1, %zu)", from, to, ep->len);
    int rc = 0;
    /* each position into its worker's share, in order: the sums are rounded as ig_eval's are */
    for (int t = 0; !rc && t < ep->n; t++) {
        eval_job *j = &ep->jobs[t];
        size_t a = j->from > from ? j->from : from, b = j->to < to ? j->to : to;
        for (size_t i = a; !rc && i < b; i++) {
            size_t lo = (j->L >= 0 && i > (size_t)j->L) ? i - (size_t)j->L : 0;
            ig_ctx c = igi_ctx_make(text + lo, i - lo, -1);
            const ig_eval_levels *lv = &levels[i - from];
            if (!lv->prof.n) {
                rc = ig_error_set(err, IG_EUSAGE, "position %zu of the text has no levels", i);
                break;
            }
            uint64_t ell = lv->prof.ell[0], cnt = lv->prof.count[0], cx = lv->next[0];
            double pinf = cnt ? (double)cx / (double)cnt : 0, p = 0;
            eval_src src = {levels_count, levels_next, levels_follow, (void *)lv};
            if (!(rc = eval_p(ep->model, &src, c, text[i], ell, cnt, cx, pinf, &ep->terms, &ep->tcap, &p, err)))
                tally(j, i, p, pinf, lv->distinct == 1, ell);
        }
    }
    if (rc) {
        ep->rc = rc;
        ep->err = *err;
    }
    return rc;
}

int ig_eval_parts_finish(ig_eval_parts *ep, ig_eval_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    if (ep->rc)
        *err = ep->err;
    int rc = eval_collect(ep->jobs, ep->n, ep->jobs[0].hist_len, ep->len - 1, ep->rc, r, err);
    IGI_FREE(ep->jobs, ep->terms, ep);
    return rc;
}

int ig_eval_from_levels(const ig_model *model, const uint8_t *text, size_t len, int threads,
                        const ig_eval_levels *levels, ig_eval_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    ig_eval_parts *ep;
    int rc = ig_eval_parts_start(model, len, threads, &ep, err);
    if (rc)
        return rc;
    ig_eval_parts_score(ep, text, 1, len, levels, err);
    return ig_eval_parts_finish(ep, r, err);
}
