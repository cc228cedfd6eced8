/*
 * eval: a model scored on held-out text — bits per byte, perplexity, the positions with
 * probability 0 (each counted at the floor 1e-10, never dropped), ∞-gram agreement split
 * by sparse and dense estimates, and the histogram of effective n.
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/model.h"
#include "infinigram/tokens.h"
#include "../model/model_impl.h"
#include "index/index_impl.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_eval_fields[] = {
    {"text", IG_FIELD_TEXT, offsetof(ig_eval_opts, text), 0, 0, "TEXT", NULL, "evaluate this text", NULL, 0},
    IGI_IDS_FIELD(ig_eval_opts, "token datasets: evaluate these token ids (perplexity per token)"),
    {"file", IG_FIELD_TEXT, offsetof(ig_eval_opts, file), 0, 0, "FILE", NULL, "evaluate the text of FILE", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_SHELL},
    {"range", IG_FIELD_TEXT, offsetof(ig_eval_opts, range), 0, 0, "A:B", NULL,
     "byte range of FILE: offsets or P% of its size (a percentage moves on to the next character's start)", NULL, IG_FIELD_SHELL},
    IG_MODEL_FIELDS(ig_eval_opts, model),
    {"threads", IG_FIELD_UINT, offsetof(ig_eval_opts, threads), 0, 256, "N", NULL,
     "worker threads (default, and at most: one per core; the figures do not depend on it)", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_eval_defaults(ig_eval_opts *o)
{
    igi_op_model_defaults(o, sizeof *o, &o->model, 100, ig_eval_fields);
}

static int eval_compute(const ig_op_ctx *ctx, const ig_eval_opts *o, ig_eval_op_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    if (ig_index_token_width(ctx->idx) || o->ids.p) { /* in tokens */
        uint8_t *ids = NULL;
        size_t len = 0;
        int rc = ig_model_resolve(&o->model, &r->model, err);
        r->model.cancel = ctx ? ctx->cancel : NULL;
        if (!rc && !o->ids.p && !o->text.p)
            rc = ig_error_set(err, IG_EUSAGE, "{ids}: the token ids to evaluate are required");
        if (!rc && (o->text.p || !ig_index_token_width(ctx->idx))) /* the faces' messages for text or ids misplaced */
            rc = igi_op_pattern(ctx, &o->text, &o->ids, "ids", &ids, &len, err);
        else if (!rc && (rc = igi_tokens_parse(ctx->idx, (const char *)o->ids.p, o->ids.n, 1, &ids, &len, err))) {
            char msg[IG_ERRMSG_MAX]; /* documents: a separator id ends one, anywhere */
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            ig_error_set(err, rc, "{ids}: %s", msg);
        }
        if (!rc) {
            r->bytes = len;
            rc = igi_token_eval(ctx->idx, &r->model, ids, len, ctx->cancel, &r->r, err);
        }
        const uint32_t tw = ig_index_token_width(ctx->idx);
        char *text = NULL;
        size_t tlen = 0;
        /* an id beyond the vocabulary has no text (its label "[id]" is not text): no bits per byte then */
        const uint64_t vsize = ig_vocab_size(ctx->idx);
        int textual = vsize && len > tw;
        for (size_t i = tw; textual && i + tw <= len; i += tw) {
            uint32_t id = ig_token_at(ids + i, tw);
            textual = id < vsize || id == ig_token_end(tw);
        }
        if (!rc && textual && !(rc = ig_tokens_text(ctx->idx, ids + tw, len - tw, "", &text, &tlen, err)))
            r->text_bytes = tlen;
        free(text);
        free(ids);
        return rc;
    }
    if (!o->text.p)
        return ig_error_set(err, IG_EUSAGE, "{text}: the text to evaluate is required");
    int rc = ig_model_resolve(&o->model, &r->model, err);
    r->model.cancel = ctx ? ctx->cancel : NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!rc && o->normalized) {
        buf = o->text.p;
        len = o->text.n;
    } else if (!rc) {
        rc = ig_query_normalize(ctx->idx, o->text.p, o->text.n, &buf, &len, err);
    }
    if (rc)
        return rc;
    r->bytes = len;
    /* sig_atomic_t is the int the cancel flag is */
    rc = ig_eval(ctx->idx, &r->model, buf, len, (int)o->threads, o->progress, o->user,
                 (const volatile sig_atomic_t *)ctx->cancel, &r->r, err);
    if (buf != o->text.p)
        free(buf);
    if (!rc && ig_cancelled(ctx->cancel))
        r->r.cancelled = 1;
    return rc;
}

/* The result's memory; ig_eval_op_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void eval_release(ig_eval_op_result *r)
{
    ig_eval_result_free(&r->r);
}

char *ig_eval_json(const ig_op_ctx *ctx, const ig_eval_opts *o, const ig_eval_op_result *res)
{
    const ig_eval_result *r = &res->r;
    char mname[96];
    double share = r->scored ? (double)r->zero_prob / (double)r->scored : 0;
    double agreement = r->scored ? (double)r->agree / (double)r->scored : 0;
    /* the last histogram bucket collects longer matches only when the context is not capped below it */
    int open_ended = res->model.max_context < 0 || (uint64_t)res->model.max_context + 2 > r->hist_len;
    cJSON *j = igi_jw_result(ctx);
    cJSON_AddStringToObject(j, "model", ig_model_name(&res->model, mname, sizeof mname));
    cJSON_AddStringToObject(j, "source", o->label ? o->label : o->ids.p ? "ids" : "text");
    uint32_t tw = ig_index_token_width(ctx->idx);
    igi_jw_u64(j, tw ? "tokens" : "bytes", tw ? res->bytes / tw : res->bytes);
    if (res->model.max_context >= 0)
        igi_jw_u64(j, "max_context", (uint64_t)res->model.max_context);
    cJSON_AddNumberToObject(j, "perplexity", r->perplexity);
    cJSON_AddNumberToObject(j, tw ? "bits_per_token" : "bits_per_byte", r->bits_per_byte);
    if (tw && res->text_bytes) {
        igi_jw_u64(j, "text_bytes", res->text_bytes);
        cJSON_AddNumberToObject(j, "bits_per_byte", -r->sum_ln / (log(2.0) * (double)res->text_bytes));
    }
    igi_jw_u64(j, "scored", r->scored);
    igi_jw_u64(j, "zero_prob", r->zero_prob);
    cJSON_AddNumberToObject(j, "zero_prob_share", share);
    cJSON_AddNumberToObject(j, "floor_prob", 1e-10);
    cJSON_AddNumberToObject(j, "agreement", agreement);
    cJSON_AddNumberToObject(j, "agreement_sparse", r->sparse ? (double)r->agree_sparse / (double)r->sparse : 0);
    cJSON_AddNumberToObject(j, "agreement_dense", r->dense ? (double)r->agree_dense / (double)r->dense : 0);
    igi_jw_u64(j, "sparse_positions", r->sparse);
    cJSON *h = cJSON_AddObjectToObject(j, "effective_n_hist");
    for (uint64_t i = 0; i < r->hist_len; i++)
        if (r->effective_n_hist[i]) {
            char k[32];
            snprintf(k, sizeof k, "%" PRIu64 "%s", i, i + 1 == r->hist_len && open_ended ? "+" : "");
            igi_jw_u64(h, k, r->effective_n_hist[i]);
        }
    cJSON_AddBoolToObject(j, "cancelled", r->cancelled);
    return igi_jw_members(j);
}

#define ig_eval_result_free ig_eval_op_result_free
IG_DEFINE_OP(eval, ig_eval_opts, ig_eval_op_result);
#undef ig_eval_result_free
