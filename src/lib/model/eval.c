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
    double sum_ln;
    uint64_t scored, zero, agree, sparse, agree_sparse, dense, agree_dense;
    uint64_t *hist;
    int rc;
    ig_error err;
} eval_job;

/* P(x) under selective back-off interpolation, counting only x (and <end>). */
#define MAX_HINTS IG_LEVEL_HINTS

static double interp_prob(const ig_index *idx, ig_ctx c, uint64_t ell, uint64_t cnt, int k, int sbi, uint8_t x,
                          ig_match *m, uint64_t *hints)
{
    int step = 0;
    double num = 0, den = 0, w = 1;
    uint64_t last_total = 0;
    int kept = 0;
    const uint8_t *end = c.p + c.n;
    while (ell >= 1) {
        igi_match_find(idx, end - ell, ell, m);
        uint64_t cx = igi_match_count_next(idx, m, end - ell, x);
        uint64_t ce = sbi ? igi_match_count_next(idx, m, end - ell, IG_DOC_END) : 0;
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
        /* the j-th change point moves little from one position to the next */
        uint64_t hint = step < MAX_HINTS && hints[step] != UINT64_MAX ? hints[step] + 1 : ell - 1;
        uint64_t ncnt = 0, next = igi_ctx_next_level(idx, c, ell, cnt, hint, &ncnt, NULL);
        if (step < MAX_HINTS)
            hints[step] = next;
        step++;
        if (next == UINT64_MAX || next == 0)
            break;
        ell = next;
        cnt = ncnt;
    }
    return den > 0 ? num / den : 0;
}

/* One scored position: p under the model, the ∞-gram's estimate pinf, whether a single byte
 * follows the suffix, ℓ*. */
static void tally(eval_job *j, double p, double pinf, int one, uint64_t ell)
{
    j->scored++;
    if (p > 0) {
        j->sum_ln += log(p);
    } else {
        j->sum_ln += log(FLOOR_P);
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
        double p;
        switch (model->kind) {
        case IG_MODEL_INFGRAM:
            p = infgram_p(model, c, x, cx, cnt, pinf);
            break;
        case IG_MODEL_INTERP:
            p = interp_prob(idx, c, ell, cnt, model->interp_k, model->sbi, x, &m, hints);
            break;
        default: {
            ig_dist d = {0};
            if ((j->rc = igi_predict_known(idx, model, c, c.p, c.n, ell, cnt, &m, NULL, NULL, &d, &j->err)))
                goto out;
            p = d.defined ? d.prob[x] : 0;
            ig_dist_free(&d);
        }
        }
        tally(j, p, pinf, one, ell);
    }
out:
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
 * at most one per 4096 positions. Where each one's share starts decides how the sum of logs
 * is rounded, so an evaluation from parts splits the positions the same way. */
static int eval_threads(int threads, size_t positions)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if ((size_t)threads > positions / 4096 + 1)
        threads = (int)(positions / 4096 + 1);
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
    for (int t = 0; t < n; t++) {
        eval_job *j = &jobs[t];
        if (!rc && j->rc) {
            rc = j->rc;
            *err = j->err;
        }
        r->sum_ln += j->sum_ln;
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
    eval_job *j = calloc((size_t)threads, sizeof *j);
    for (int t = 0; j && t < threads; t++) {
        j[t] = (eval_job){.model = model, .L = model->max_context, .hist_len = hist_len};
        j[t].from = 1 + positions * (size_t)t / (size_t)threads;
        j[t].to = 1 + positions * (size_t)(t + 1) / (size_t)threads;
        if (!(j[t].hist = calloc(hist_len, sizeof *j[t].hist))) {
            for (int k = 0; k < t; k++)
                free(j[k].hist);
            free(j);
            j = NULL;
        }
    }
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
int ig_eval_point_get(const ig_index *idx, const uint8_t *ctx, size_t len, uint64_t ell, uint8_t x,
                      ig_eval_point *pt, ig_error *err)
{
    ig_part_level lv;
    memset(pt, 0, sizeof *pt);
    int rc = ig_part_level_get(idx, ctx, len, -1, ell, 0, &lv, err);
    if (rc)
        return rc;
    pt->ell = ell;
    pt->count = lv.suffix_count;
    pt->next = lv.count[x];
    for (int b = 0; b < 256 && pt->distinct < 2; b++)
        if (lv.count[b]) {
            pt->distinct++;
            pt->only = (uint8_t)b;
        }
    ig_part_level_free(&lv);
    return 0;
}

void ig_eval_point_add(ig_eval_point *to, const ig_eval_point *from)
{
    to->count += from->count;
    to->next += from->next;
    if (!from->distinct)
        return;
    if (!to->distinct || (to->distinct == 1 && from->distinct == 1 && to->only == from->only)) {
        to->only = from->only;
        to->distinct = from->distinct;
    } else {
        to->distinct = 2; /* two different bytes, or more */
    }
}

int ig_eval_from_points(const ig_model *model, const uint8_t *text, size_t len, int threads,
                        const ig_eval_point *points, ig_eval_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    if (model->kind != IG_MODEL_INFGRAM)
        return ig_error_set(err, IG_EUSAGE, "an evaluation from levels reads the infinity-gram only");
    eval_job *jobs;
    int n, rc = eval_jobs(model, len, threads, &jobs, &n, err);
    if (rc)
        return rc;
    for (int t = 0; t < n; t++) { /* in the workers' shares: the sums are rounded as theirs are */
        eval_job *j = &jobs[t];
        for (size_t i = j->from; i < j->to; i++) {
            size_t lo = (j->L >= 0 && i > (size_t)j->L) ? i - (size_t)j->L : 0;
            ig_ctx c = igi_ctx_make(text + lo, i - lo, -1);
            const ig_eval_point *pt = &points[i - 1];
            double pinf = pt->count ? (double)pt->next / (double)pt->count : 0;
            tally(j, infgram_p(model, c, text[i], pt->next, pt->count, pinf), pinf, pt->distinct == 1, pt->ell);
        }
    }
    rc = eval_collect(jobs, n, jobs[0].hist_len, len - 1, 0, r, err);
    free(jobs);
    return rc;
}
