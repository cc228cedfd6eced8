/*
 * predict, prob and backoff as typed operations, and the model options they share with
 * every operation that runs a model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/model.h"
#include "infinigram/tokens.h"
#include "../model/model_impl.h"
#include "op_impl.h"
#include "opjson.h"
#include "util/util.h"

const char *const ig_weight_names[] = {"linear", "quadratic", "exponential", "sigmoid", NULL};

void ig_model_opts_default(ig_model_opts *m, int64_t max_context)
{
    memset(m, 0, sizeof *m);
    m->weighted = -1;
    m->beta = 2.0;
    m->interp = IG_UNSET;
    m->max_context = max_context;
}

void igi_op_model_defaults(void *o, size_t size, ig_model_opts *model, int64_t max_context, const ig_field *fields)
{
    memset(o, 0, size);
    ig_model_opts_default(model, max_context);
    ig_fields_defaults(fields, o, NULL);
}

int ig_model_resolve(const ig_model_opts *o, ig_model *m, ig_error *err)
{
    ig_model_default(m);
    m->max_context = o->max_context;
    const char *first = NULL;
    int kinds = 0;
    if (o->infgram) {
        kinds++;
        first = "{infgram}";
    }
    if (o->n) {
        m->kind = IG_MODEL_NGRAM;
        m->n = (uint32_t)o->n;
        kinds++;
        first = first ? first : "{n}";
    }
    if (o->weighted >= 0) {
        m->kind = IG_MODEL_WEIGHTED;
        m->weight = (ig_weight_fn)o->weighted;
        kinds++;
        first = first ? first : "{weighted}";
    }
    if (o->interp != IG_UNSET) {
        if (o->interp == 0 || o->interp < -1)
            return ig_error_set(err, IG_EUSAGE, "{interp}: K must be >= 1, or -1 for all levels");
        m->kind = IG_MODEL_INTERP;
        m->interp_k = (int)o->interp;
        kinds++;
        first = first ? first : "{interp}";
    }
    if (kinds > 1)
        return ig_error_set(err, IG_EUSAGE, "choose one model: %s cannot be combined with another model option", first);
    if (o->sbi) {
        if (m->kind != IG_MODEL_INTERP)
            return ig_error_set(err, IG_EUSAGE, "{sbi} applies only with {interp} (selective back-off)");
        m->sbi = 1;
    }
    m->alpha = o->alpha;
    if (m->alpha > 0 && (m->kind == IG_MODEL_WEIGHTED || m->kind == IG_MODEL_INTERP))
        return ig_error_set(err, IG_EUSAGE, "{alpha} applies to the ∞-gram and {n} only");
    if ((o->min_len || o->max_len) && m->kind != IG_MODEL_WEIGHTED)
        return ig_error_set(err, IG_EUSAGE, "{min_len} and {max_len} apply only with {weighted}");
    if (o->min_len)
        m->min_len = (uint32_t)o->min_len;
    if (o->max_len)
        m->max_len = (uint32_t)o->max_len;
    /* the default base cannot be told from one given, so only another base is refused */
    if (o->beta != 2.0 && !(m->kind == IG_MODEL_WEIGHTED && m->weight == IG_WEIGHT_EXPONENTIAL))
        return ig_error_set(err, IG_EUSAGE, "{beta} applies only with {weighted} exponential");
    m->beta = o->beta;
    return ig_model_check(m, err);
}

const char *ig_model_name(const ig_model *m, char *buf, size_t n)
{
    switch (m->kind) {
    case IG_MODEL_NGRAM: snprintf(buf, n, "%u-gram", m->n); break;
    case IG_MODEL_WEIGHTED: snprintf(buf, n, "weighted (%s)", ig_weight_names[m->weight & 3]); break;
    case IG_MODEL_INTERP:
        if (m->interp_k < 0)
            snprintf(buf, n, "interpolation, all levels%s", m->sbi ? " (SBI)" : "");
        else
            snprintf(buf, n, "interpolation, %d level%s%s", m->interp_k, m->interp_k == 1 ? "" : "s",
                     m->sbi ? " (SBI)" : "");
        break;
    default: snprintf(buf, n, "∞-gram"); break;
    }
    if (m->alpha > 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, ", Laplace α=%g", m->alpha);
    }
    return buf;
}

int ig_dist_sparse(const ig_dist *d, const ig_symbol *syms, size_t n, double unseen)
{
    int nonzero = 0;
    for (size_t i = 0; i < n && nonzero < 2; i++) /* a second is enough: a distribution may have 32,000 */
        nonzero += syms[i].prob > 0;
    return d->defined && nonzero == 1 && unseen == 0;
}

static int normalized(const ig_op_ctx *ctx, const ig_bytes *b, uint8_t **out, size_t *n, ig_error *err)
{
    if (igi_op_need_index(ctx, err))
        return IG_EUSAGE;
    return ig_query_normalize(ctx->idx, b->p ? b->p : (const uint8_t *)"", b->n, out, n, err);
}

/* ---- predict ---- */

const ig_field ig_predict_fields[] = {
    IGI_CONTEXT_FIELD(ig_predict_opts, "TEXT"),
    IGI_IDS_FIELD(ig_predict_opts,
                  "token datasets: the context as token ids, comma-separated (lengths then count tokens)"),
    IG_MODEL_FIELDS(ig_predict_opts, model),
    {"top", IG_FIELD_UINT, offsetof(ig_predict_opts, top), 1, 1000000, "K", "10", "candidates shown", NULL, 0},
    {"bytes", IG_FIELD_BOOL, offsetof(ig_predict_opts, bytes), 0, 0, NULL, NULL, "show next bytes instead of characters",
     NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_predict_defaults(ig_predict_opts *o)
{
    igi_op_model_defaults(o, sizeof *o, &o->model, -1, ig_predict_fields);
}

int igi_op_distribution(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t n, int bytes, ig_dist *dist,
                    ig_symbol **syms, size_t *nsyms, double *unseen, int *sparse, ig_error *err)
{
    int rc = ig_predict(idx, model, ctx, n, dist, err);
    if (!rc && (rc = ig_dist_symbols(idx, dist, ctx, n, !bytes, syms, nsyms, unseen, err)))
        ig_dist_free(dist);
    if (!rc)
        *sparse = ig_dist_sparse(dist, *syms, *nsyms, *unseen);
    return rc;
}

static int predict_compute(const ig_op_ctx *ctx, const ig_predict_opts *o, ig_predict_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    int rc = ig_model_resolve(&o->model, &r->model, err);
    r->model.cancel = ctx ? ctx->cancel : NULL;
    if (!rc)
        rc = igi_op_need_index(ctx, err);
    if (!rc)
        rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->context, &r->clen, err);
    if (!rc && ig_index_token_width(ctx->idx)) {
        if (!(rc = igi_token_predict(ctx->idx, &r->model, r->context, r->clen, &r->dist, &r->syms, &r->nsyms,
                                     &r->syms_borrowed, &r->unseen, err)))
            r->sparse = ig_dist_sparse(&r->dist, r->syms, r->nsyms, r->unseen);
    } else if (!rc)
        rc = igi_op_distribution(ctx->idx, &r->model, r->context, r->clen, o->bytes, &r->dist, &r->syms, &r->nsyms,
                             &r->unseen, &r->sparse, err);
    if (rc)
        ig_predict_result_free(r);
    return rc;
}


/* The result's memory; ig_predict_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void predict_release(ig_predict_result *r)
{
    ig_dist_free(&r->dist);
    if (!r->syms_borrowed)
        free(r->syms);
    free(r->context);
}

char *ig_predict_json(const ig_op_ctx *ctx, const ig_predict_opts *o, const ig_predict_result *r)
{
    const ig_dist *d = &r->dist;
    char mname[96];
    cJSON *j = igi_jw_result(ctx);
    cJSON_AddStringToObject(j, "model", ig_model_name(&r->model, mname, sizeof mname));
    if (ig_index_token_width(ctx->idx))
        igi_jw_pattern(j, ctx->idx, "context", r->context, r->clen);
    igi_jw_u64(j, "effective_n", d->length + 1);
    igi_jw_u64(j, "longest_match", d->longest);
    igi_jw_u64(j, "suffix_count", d->suffix_count);
    cJSON_AddBoolToObject(j, "sparse", r->sparse);
    cJSON_AddBoolToObject(j, "defined", d->defined);
    if (r->model.kind == IG_MODEL_WEIGHTED)
        cJSON_AddBoolToObject(j, "fallback", d->fallback);
    if (d->nlevels > 1 || r->model.kind == IG_MODEL_INTERP) {
        cJSON *lv = cJSON_AddArrayToObject(j, "levels");
        for (size_t k = 0; k < d->nlevels; k++) {
            cJSON *x = igi_jw_item(lv);
            igi_jw_u64(x, "length", d->levels[k].length);
            igi_jw_u64(x, "total", d->levels[k].total);
            cJSON_AddNumberToObject(x, "weight", d->levels[k].coef * (double)d->levels[k].total);
        }
    }
    if (r->unseen > 0)
        cJSON_AddNumberToObject(j, "unseen_prob", r->unseen);
    cJSON *arr = cJSON_AddArrayToObject(j, "candidates");
    for (size_t i = 0; i < r->nsyms && i < o->top; i++) {
        cJSON *c = igi_jw_item(arr);
        igi_jw_candidate(c, ctx->idx, &r->syms[i]);
    }
    return igi_jw_members(j);
}

/* ---- prob ---- */

const ig_field ig_prob_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_prob_opts, query), 0, 0, "TEXT", NULL, "the context (exact bytes)", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REQUIRED | IG_FIELD_UNLESS_IDS},
    {"continuation", IG_FIELD_TEXT, offsetof(ig_prob_opts, continuation), 0, 0, "CONTINUATION", NULL,
     "the text whose probability after the context is computed", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REQUIRED | IG_FIELD_UNLESS_IDS},
    IGI_IDS_FIELD(ig_prob_opts, "token datasets: the context as token ids, comma-separated (may be empty: \"\")"),
    {"next_ids", IG_FIELD_TEXT, offsetof(ig_prob_opts, next_ids), 0, 0, "D,E", NULL,
     "token datasets: the continuation as token ids, one factor each", NULL, IG_FIELD_NUMBER_AS_TEXT | IG_FIELD_JSON},
    IG_MODEL_FIELDS(ig_prob_opts, model),
    {"bytes", IG_FIELD_BOOL, offsetof(ig_prob_opts, bytes), 0, 0, NULL, NULL,
     "one factor per byte instead of per character", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_prob_defaults(ig_prob_opts *o)
{
    igi_op_model_defaults(o, sizeof *o, &o->model, -1, ig_prob_fields);
}

static int prob_compute(const ig_op_ctx *ctx, const ig_prob_opts *o, ig_prob_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    uint8_t *c = NULL, *k = NULL;
    size_t cn = 0, kn = 0;
    int rc = ig_model_resolve(&o->model, &r->model, err);
    r->model.cancel = ctx ? ctx->cancel : NULL;
    if (!rc)
        rc = igi_op_need_index(ctx, err);
    if (!rc && (o->ids.p || o->next_ids.p || ig_index_token_width(ctx->idx))) { /* in tokens */
        if (ig_index_token_width(ctx->idx) && !o->next_ids.p && !o->continuation.p)
            rc = ig_error_set(err, IG_EUSAGE, "{next_ids}: give the continuation's token ids");
        else if (!(rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &c, &cn, err)) &&
            !(rc = igi_op_pattern(ctx, &o->continuation, &o->next_ids, "next_ids", &k, &kn, err)) &&
            !(rc = kn ? 0 : ig_error_set(err, IG_EUSAGE, "{next_ids}: give the continuation's token ids")))
            rc = igi_token_prob(ctx->idx, &r->model, c, cn, k, kn, &r->factors, &r->nfactors, &r->prob, &r->log2p, err);
        free(c);
        free(k);
        if (rc)
            ig_prob_result_free(r);
        return rc;
    }
    if (!rc)
        rc = normalized(ctx, &o->query, &c, &cn, err);
    if (!rc)
        rc = normalized(ctx, &o->continuation, &k, &kn, err);
    if (!rc && kn == 0)
        rc = ig_error_set(err, IG_EUSAGE, "{continuation}: empty continuation");
    if (!rc)
        rc = ig_prob(ctx->idx, &r->model, c, cn, k, kn, !o->bytes, &r->factors, &r->nfactors, &r->prob, &r->log2p, err);
    free(c);
    free(k);
    if (rc)
        ig_prob_result_free(r);
    return rc;
}

char *ig_prob_json(const ig_op_ctx *ctx, const ig_prob_opts *o, const ig_prob_result *r)
{
    (void)o;
    cJSON *j = igi_jw_result(ctx);
    cJSON_AddNumberToObject(j, "prob", r->prob);
    if (isinf(r->log2p))
        cJSON_AddNullToObject(j, "log2_prob");
    else
        cJSON_AddNumberToObject(j, "log2_prob", r->log2p);
    cJSON *arr = cJSON_AddArrayToObject(j, "factors");
    for (size_t i = 0; i < r->nfactors; i++) {
        cJSON *c = igi_jw_item(arr);
        igi_jw_unit(c, ctx->idx, r->factors[i].bytes, r->factors[i].len);
        cJSON_AddNumberToObject(c, "prob", r->factors[i].prob);
        igi_jw_u64(c, "effective_n", r->factors[i].effective_n);
    }
    return igi_jw_members(j);
}

/* The result's memory; ig_prob_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void prob_release(ig_prob_result *r)
{
    free(r->factors);
}

/* ---- backoff ---- */

const ig_field ig_backoff_fields[] = {
    IGI_CONTEXT_FIELD(ig_backoff_opts, "TEXT"),
    IGI_IDS_FIELD(ig_backoff_opts,
                  "token datasets: the context as token ids, comma-separated (lengths then count tokens)"),
    {"factor", IG_FIELD_DOUBLE, offsetof(ig_backoff_opts, factor), 1e-9, 1, "F", "0.4",
     "backoff factor λ per byte of context dropped", NULL, 0},
    {"threshold", IG_FIELD_UINT, offsetof(ig_backoff_opts, threshold), 1, 9223372036854775807.0, "T", "1",
     "use the longest suffix seen at least T times", NULL, 0},
    {"top", IG_FIELD_UINT, offsetof(ig_backoff_opts, top), 1, 1000000, "K", "10", "candidates shown", NULL, 0},
    {"bytes", IG_FIELD_BOOL, offsetof(ig_backoff_opts, bytes), 0, 0, NULL, NULL,
     "score next bytes instead of characters", NULL, 0},
    {"max_context", IG_FIELD_INT, offsetof(ig_backoff_opts, max_context), -1, 1000000000, "L", NULL,
     "use at most the last L bytes of context (-1: all)", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_backoff_defaults(ig_backoff_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_context = -1; /* all: the table shows no default for it */
    ig_fields_defaults(ig_backoff_fields, o, NULL);
}

int ig_backoff_model(const ig_backoff_opts *o, ig_model *m, ig_error *err)
{
    ig_model_default(m);
    m->factor = o->factor;
    m->threshold = o->threshold;
    m->max_context = o->max_context;
    return ig_model_check(m, err);
}

static int backoff_compute(const ig_op_ctx *ctx, const ig_backoff_opts *o, ig_backoff_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    ig_model m;
    int rc = ig_backoff_model(o, &m, err);
    m.cancel = ctx ? ctx->cancel : NULL;
    if (!rc)
        rc = igi_op_need_index(ctx, err);
    if (!rc && (o->ids.p || ig_index_token_width(ctx->idx))) { /* in tokens */
        if (!(rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->context, &r->clen, err)))
            rc = igi_token_backoff(ctx->idx, &m, r->context, r->clen, &r->cands, &r->ncands, &r->ltau, err);
        if (rc)
            ig_backoff_result_free(r);
        return rc;
    }
    if (!rc)
        rc = normalized(ctx, &o->query, &r->context, &r->clen, err);
    if (!rc)
        rc = ig_backoff(ctx->idx, &m, r->context, r->clen, !o->bytes, &r->cands, &r->ncands, &r->ltau, err);
    if (rc)
        ig_backoff_result_free(r);
    return rc;
}

char *ig_backoff_json(const ig_op_ctx *ctx, const ig_backoff_opts *o, const ig_backoff_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    igi_jw_u64(j, "longest", r->ltau);
    cJSON_AddNumberToObject(j, "factor", o->factor);
    igi_jw_u64(j, "threshold", o->threshold);
    cJSON *arr = cJSON_AddArrayToObject(j, "candidates");
    for (size_t i = 0; i < r->ncands && i < o->top; i++) {
        cJSON *x = igi_jw_item(arr);
        igi_jw_unit(x, ctx->idx, r->cands[i].bytes, r->cands[i].len);
        cJSON_AddNumberToObject(x, "score", r->cands[i].score);
        igi_jw_u64(x, "length", r->cands[i].length);
        igi_jw_u64(x, "count", r->cands[i].count);
        cJSON_AddNumberToObject(x, "normalized", r->cands[i].normalized);
    }
    return igi_jw_members(j);
}

/* The result's memory; ig_backoff_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void backoff_release(ig_backoff_result *r)
{
    IGI_FREE(r->cands, r->context);
}

IG_DEFINE_OP(predict, ig_predict_opts, ig_predict_result);
IG_DEFINE_OP(prob, ig_prob_opts, ig_prob_result);
IG_DEFINE_OP(backoff, ig_backoff_opts, ig_backoff_result);
