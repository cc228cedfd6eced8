/*
 * mix: corpus probabilities mixed into an LLM's next tokens. The candidates arrive as
 * JSON text, parsed here strictly; the operation never opens a file.
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "op_impl.h"
#include "opjson.h"
#include "util/util.h"

/* ---- candidates ---- */

typedef struct cands {
    ig_mix_token *t;
    size_t n, cap;
    uint8_t *arena;
    size_t used, size;
    uint32_t tw;       ///< a token dataset's token width: candidates are then "token_id"s
} cands;

static int push(cands *c, const uint8_t *b, size_t len, double logprob, ig_error *err)
{
    if (c->n >= IG_MIX_MAX_TOKENS)
        return ig_error_set(err, IG_EUSAGE, "{llm}: more than %d tokens", IG_MIX_MAX_TOKENS);
    if (igi_grow(&c->t, c->n, &c->cap, sizeof *c->t, 16))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    if (c->used + len > c->size)
        return ig_error_set(err, IG_EINTERNAL, "token bytes beyond their arena");
    memcpy(c->arena + c->used, b, len);
    c->t[c->n++] = (ig_mix_token){c->arena + c->used, len, logprob};
    c->used += len;
    return 0;
}

/* One {token|bytes_hex|bytes, logprob|prob} entry. */
static int entry(cands *c, json_t *e, size_t i, ig_error *err)
{
    if (!json_is_object(e))
        return ig_error_set(err, IG_EINVAL, "{llm}[%zu]: expected an object", i);
    json_t *tok = json_object_get(e, "token"), *hex = json_object_get(e, "bytes_hex"), *arr = json_object_get(e, "bytes"),
           *lp = json_object_get(e, "logprob"), *pr = json_object_get(e, "prob");
    double logprob;
    if (json_is_number(lp) && json_number_value(lp) <= 0 && isfinite(json_number_value(lp)))
        logprob = json_number_value(lp);
    else if (json_is_number(pr) && json_number_value(pr) >= 0 && json_number_value(pr) <= 1)
        logprob = log(json_number_value(pr));
    else
        return ig_error_set(err, IG_EINVAL, "{llm}[%zu]: needs \"logprob\" (a number <= 0) or \"prob\" (0..1)", i);
    uint8_t buf[256];
    size_t n = 0;
    if (c->tw) { /* a token dataset: the LLM's vocabulary is the dataset's, candidates are ids */
        json_t *id = json_object_get(e, "token_id");
        double v = json_number_value(id);
        if (!json_is_number(id) || v < 0 || v != floor(v) || v >= (double)ig_token_end(c->tw))
            return ig_error_set(err, IG_EINVAL, "{llm}[%zu]: a token dataset's candidates need \"token_id\", an id "
                                "below %u", i, ig_token_end(c->tw));
        for (uint32_t k = 0; k < c->tw; k++)
            buf[k] = (uint8_t)((uint64_t)v >> (8 * k));
        return push(c, buf, c->tw, logprob, err);
    }
    if (json_is_array(arr)) { /* exact bytes win over the (possibly lossy) token text */
        size_t k;
        json_t *x;
        if (json_array_size(arr) > sizeof buf)
            return ig_error_set(err, IG_EINVAL, "{llm}[%zu].bytes: more than %zu bytes", i, sizeof buf);
        json_array_foreach(arr, k, x) {
            double v = json_number_value(x);
            if (!json_is_number(x) || v < 0 || v > 255 || v != floor(v))
                return ig_error_set(err, IG_EINVAL, "{llm}[%zu].bytes[%zu]: expected an integer 0..255", i, k);
            buf[n++] = (uint8_t)v;
        }
        return n ? push(c, buf, n, logprob, err) : ig_error_set(err, IG_EINVAL, "{llm}[%zu]: empty token", i);
    }
    if (json_is_string(hex)) {
        const char *h = json_string_value(hex);
        size_t hl = json_string_length(hex);
        if (hl % 2 || hl / 2 > sizeof buf)
            return ig_error_set(err, IG_EINVAL, "{llm}[%zu].bytes_hex: expected an even number of hex digits (at most %zu)",
                                i, 2 * sizeof buf);
        for (size_t k = 0; k < hl / 2; k++) {
            int a = igi_hex_digit((unsigned char)h[2 * k]), b = igi_hex_digit((unsigned char)h[2 * k + 1]);
            if (a < 0 || b < 0)
                return ig_error_set(err, IG_EINVAL, "{llm}[%zu].bytes_hex: not hexadecimal", i);
            buf[n++] = (uint8_t)(a * 16 + b);
        }
        return n ? push(c, buf, n, logprob, err) : ig_error_set(err, IG_EINVAL, "{llm}[%zu]: empty token", i);
    }
    if (json_is_string(tok)) {
        if (!json_string_length(tok))
            return ig_error_set(err, IG_EINVAL, "{llm}[%zu]: empty token", i);
        return push(c, (const uint8_t *)json_string_value(tok), json_string_length(tok), logprob, err);
    }
    return ig_error_set(err, IG_EINVAL, "{llm}[%zu]: needs \"token\", \"bytes_hex\" or \"bytes\"", i);
}

/* ig_mix_candidates_parse, for a token dataset of token width tw (0: bytes). */
static int candidates_parse(const uint8_t *json, size_t n, uint32_t tw, ig_mix_token **tokens, size_t *ntokens,
                            uint8_t **arena, ig_error *err)
{
    *tokens = NULL;
    *ntokens = 0;
    *arena = NULL;
    json_error_t je;
    int why;
    json_t *root = ig_json_parse((const char *)json, n, JSON_DECODE_INT_AS_REAL, &je, &why);
    if (why == IG_JSON_DEEP)
        return ig_error_set(err, IG_EINVAL, "{llm}: not valid JSON: nested more than %d deep (byte %d)",
                            IG_JSON_MAX_DEPTH, je.position);
    if (why == IG_JSON_NOMEM)
        return ig_error_set(err, IG_ENOMEM, "{llm}: out of memory parsing the candidates");
    if (why == IG_JSON_HEAVY) /* valid JSON, too costly to read */
        return ig_error_set(err, IG_EUSAGE, "{llm}: the candidates' JSON %s", je.text);
    if (!root)
        return ig_error_set(err, IG_EINVAL, "{llm}: not valid JSON: %s (byte %d)", je.text,
                            je.position);
    /* every token's bytes come from the text, so the text's length bounds them */
    cands c = {.tw = tw};
    c.size = n + 1;
    c.arena = malloc(c.size);
    int rc = c.arena ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    json_t *v = root;
    if (json_is_object(root) && json_object_get(root, "top_logprobs"))
        v = json_object_get(root, "top_logprobs");
    if (rc) {
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if ((rc = entry(&c, e, i, err)))
                break;
        }
    } else if (json_is_object(v) && tw) {
        rc = ig_error_set(err, IG_EINVAL, "{llm}: a token dataset takes a list of {\"token_id\", \"logprob\"}");
    } else if (json_is_object(v)) { /* legacy completions: {token: logprob} */
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            if (!json_is_number(e) || json_number_value(e) > 0) {
                rc = ig_error_set(err, IG_EINVAL, "{llm}: in a {token: logprob} map, \"%.64s\" needs a number <= 0", k);
                break;
            }
            if (!*k) {
                rc = ig_error_set(err, IG_EINVAL, "{llm}: empty token");
                break;
            }
            if ((rc = push(&c, (const uint8_t *)k, strlen(k), json_number_value(e), err)))
                break;
        }
    } else {
        rc = ig_error_set(err, IG_EINVAL, "{llm}: expected a list of tokens or a {token: logprob} map");
    }
    json_decref(root);
    if (!rc && c.n == 0)
        rc = ig_error_set(err, IG_EINVAL, "{llm}: no tokens");
    if (rc) {
        free(c.t);
        free(c.arena);
        return rc;
    }
    *tokens = c.t;
    *ntokens = c.n;
    *arena = c.arena;
    return 0;
}

int ig_mix_candidates_parse(const uint8_t *json, size_t n, ig_mix_token **tokens, size_t *ntokens, uint8_t **arena,
                            ig_error *err)
{
    return candidates_parse(json, n, 0, tokens, ntokens, arena, err);
}

/* ---- the operation ---- */

const ig_field ig_mix_fields[] = {
    IGI_CONTEXT_FIELD(ig_mix_opts, "CONTEXT"),
    IGI_IDS_FIELD(ig_mix_opts,
                  "token datasets: the context as token ids, comma-separated; the candidates are then {token_id, logprob}"),
    {"llm", IG_FIELD_TEXT, offsetof(ig_mix_opts, llm), 0, 0, "FILE|JSON", NULL,
     "the LLM's candidates: a JSON list of {token|bytes_hex|bytes, logprob|prob}, OpenAI top_logprobs, or a "
     "{token: logprob} map; the shell also reads them from a FILE, the server takes only the JSON itself",
     NULL, IG_FIELD_REQUIRED | IG_FIELD_JSON},
    {"lambda", IG_FIELD_DOUBLE, offsetof(ig_mix_opts, lambda), 0, 1, "L", "0.5", "fixed weight of the corpus", NULL,
     IG_FIELD_RESOLVED},
    {"lambda_sparse", IG_FIELD_DOUBLE, offsetof(ig_mix_opts, lambda_sparse), 0, 1, "A", "0.9",
     "corpus weight when the corpus estimate is sparse", NULL, IG_FIELD_RESOLVED},
    {"lambda_dense", IG_FIELD_DOUBLE, offsetof(ig_mix_opts, lambda_dense), 0, 1, "B", "0.1", "corpus weight otherwise",
     NULL, IG_FIELD_RESOLVED},
    {"adaptive", IG_FIELD_BOOL, offsetof(ig_mix_opts, adaptive), 0, 0, NULL, NULL,
     "corpus weight 0.9·ℓ*/(ℓ*+5)·cnt/(cnt+2): rises with effective n and count", NULL, 0},
    {"alpha", IG_FIELD_DOUBLE, offsetof(ig_mix_opts, alpha), 0, 1e12, "A", NULL,
     "Laplace smoothing of the corpus bytes, so unseen bytes are not 0", NULL, 0},
    {"top", IG_FIELD_UINT, offsetof(ig_mix_opts, top), 1, 100000, "K", "20", "tokens shown", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_mix_defaults(ig_mix_opts *o)
{
    memset(o, 0, sizeof *o);
    o->lambda = o->lambda_sparse = o->lambda_dense = -1; /* not given */
    ig_fields_defaults(ig_mix_fields, o, NULL);
}

static int mix_compute(const ig_op_ctx *ctx, const ig_mix_opts *o, ig_mix_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    int modes = (o->lambda >= 0) + (o->lambda_sparse >= 0 || o->lambda_dense >= 0) + (o->adaptive != 0);
    if (modes > 1)
        return ig_error_set(err, IG_EUSAGE, "choose one of {lambda}, {lambda_sparse}/{lambda_dense}, {adaptive}");
    if (!o->llm.p)
        return ig_error_set(err, IG_EUSAGE, "{llm}: the LLM's candidates are required");
    ig_mix_options mo;
    ig_mix_options_default(&mo);
    mo.model.cancel = ctx ? ctx->cancel : NULL; /* each byte factor's prediction polls it */
    if (o->lambda >= 0)
        mo.lambda = o->lambda;
    if (o->lambda_sparse >= 0 || o->lambda_dense >= 0) {
        mo.mode = IG_LAMBDA_SPARSE_DENSE;
        if (o->lambda_sparse >= 0)
            mo.lambda_sparse = o->lambda_sparse;
        if (o->lambda_dense >= 0)
            mo.lambda_dense = o->lambda_dense;
    }
    if (o->adaptive)
        mo.mode = IG_LAMBDA_ADAPTIVE;
    mo.model.alpha = o->alpha;
    mo.backend = o->backend;
    r->mode = mo.mode;
    uint32_t tw = ig_index_token_width(ctx->idx);
    int rc = candidates_parse(o->llm.p, o->llm.n, tw, &r->tokens, &r->ntokens, &r->arena, err);
    if (!rc && tw && !o->ids.p && !o->query.p) /* the empty context */
        rc = (r->context = calloc(1, 1)) ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    else if (!rc)
        rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->context, &r->clen, err);
    if (!rc) {
        r->out = calloc(r->ntokens, sizeof *r->out);
        r->order = calloc(r->ntokens, sizeof *r->order);
        if (!r->out || !r->order)
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = ig_mix(ctx->idx, &mo, r->context, r->clen, r->tokens, r->ntokens, r->out, &r->lambda, &r->effective_n,
                    &r->sparse, err);
    if (rc) {
        ig_mix_result_free(r);
        return rc;
    }
    for (size_t i = 0; i < r->ntokens; i++)
        r->order[r->out[i].rank_after - 1] = i;
    return 0;
}

/* The result's memory; ig_mix_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void mix_release(ig_mix_result *r)
{
    IGI_FREE(r->context, r->tokens, r->arena, r->out, r->order);
}

char *ig_mix_json(const ig_op_ctx *ctx, const ig_mix_opts *o, const ig_mix_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    igi_jw_u64(j, "effective_n", r->effective_n);
    cJSON_AddBoolToObject(j, "sparse", r->sparse);
    cJSON_AddNumberToObject(j, "lambda", r->lambda);
    cJSON_AddStringToObject(j, "lambda_mode", r->mode == IG_LAMBDA_ADAPTIVE       ? "adaptive"
                                              : r->mode == IG_LAMBDA_SPARSE_DENSE ? "sparse_dense"
                                                                                  : "fixed");
    cJSON *arr = cJSON_AddArrayToObject(j, "tokens");
    for (size_t k = 0; k < r->ntokens && k < o->top; k++) { /* the first `top` in mixed order, as the shell shows */
        size_t i = r->order[k];
        const ig_mix_token *t = &r->tokens[i];
        const ig_mix_out *x = &r->out[i];
        cJSON *tj = igi_jw_item(arr);
        if (ig_index_token_width(ctx->idx)) { /* an id of the dataset's vocabulary */
            igi_jw_token(tj, ctx->idx, t->bytes, (int)t->len);
        } else {
            char hex[2 * 64 + 1] = "";
            for (size_t b = 0; b < t->len && b < 64; b++)
                snprintf(hex + 2 * b, 3, "%02x", t->bytes[b]);
            if (ig_utf8_valid(t->bytes, t->len, NULL) && !memchr(t->bytes, 0, t->len))
                igi_jw_bytes(tj, "token", t->bytes, t->len); /* text: "token" itself */
            else
                cJSON_AddNullToObject(tj, "token");
            cJSON_AddStringToObject(tj, "bytes_hex", hex);
        }
        IGI_JW_NUMS(tj, {"llm_prob", x->llm_prob}, {"corpus_prob", x->corpus_prob}, {"mixed_prob", x->mixed_prob},
                    {"mixed_unnormalized", x->mixed_raw});
        IGI_JW_U64S(tj, {"rank_before", x->rank_before}, {"rank_after", x->rank_after}, {"effective_n", x->effective_n});
    }
    return igi_jw_members(j);
}

IG_DEFINE_OP(mix, ig_mix_opts, ig_mix_result);
