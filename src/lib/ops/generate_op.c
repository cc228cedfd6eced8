/*
 * generate: text sampled from a model, handed out as it becomes final, with a summary of
 * how much of it the corpus holds verbatim (median effective n, the longest verbatim
 * span and where it comes from, the share inside spans of 20 bytes or more).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "infinigram/text.h"
#include "infinigram/generate.h"
#include "infinigram/explain.h"
#include "infinigram/tokens.h"
#include "model/generate_impl.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_generate_fields[] = {
    IGI_TEXT_IDS_MODEL_FIELDS(ig_generate_opts, "the prompt (may be empty)",
                              "token datasets: the prompt as token ids, comma-separated (--max then counts tokens)",
                              "the ∞-gram (the default on a token dataset): the longest suffix of the context that occurs",
                              "2"),
    {"temperature", IG_FIELD_DOUBLE, offsetof(ig_generate_opts, temperature), 0, 1e6, "T", "1",
     "0 = greedy; higher flattens the distribution", NULL, 0},
    {"top_k", IG_FIELD_UINT, offsetof(ig_generate_opts, top_k), 0, 4294967295.0, "K", NULL,
     "sample among the K most probable next bytes (tokens, on a token dataset; 0: all)", NULL, 0},
    {"top_p", IG_FIELD_DOUBLE, offsetof(ig_generate_opts, top_p), 1e-9, 1, "P", "1",
     "sample among the most probable next bytes holding mass P", NULL, 0},
    /* the largest double below 2^64: a bound of 2^64 - 2 would round up to 2^64 and let
     * through 2^64 - 1, the value that means "no seed" */
    {"seed", IG_FIELD_UINT, offsetof(ig_generate_opts, seed), 0, 18446744073709549568.0, "S", NULL,
     "random seed: the same seed gives the same text (default: random, below 2^53, reported)", NULL, 0},
    /* every step is kept (64 bytes: explain and the summary read them), so the bound is one
     * of memory: 10 M characters keep at most 640 MB (a server answered 1e8 with 9 GB) */
    {"max", IG_FIELD_UINT, offsetof(ig_generate_opts, max), 0, 10000000, "N", "200",
     "characters to generate, prompt excluded", NULL, 0},
    {"stop", IG_FIELD_TEXTS, offsetof(ig_generate_opts, stop), 0, 0, "STRING", NULL,
     "stop when the output ends with STRING (repeatable; not part of the text)", NULL, 0},
    {"no_stop_at_end", IG_FIELD_BOOL, offsetof(ig_generate_opts, no_stop_at_end), 0, 0, NULL, NULL,
     "do not stop at the end of a document", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_generate_defaults(ig_generate_opts *o)
{
    igi_op_model_defaults(o, sizeof *o, &o->model, -1, ig_generate_fields);
    o->seed = IG_SEED_RANDOM; /* the table gives it no default */
}

/* The k-th smallest of v[0..n) (k < n), v reordered: a selection (three-way partition around
 * the middle element), linear on average where a sort is n log n. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer lies in v[lo..hi) */
    for (;;) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi; /* v[lo..lt) < pivot, v[lt..i) = pivot, v[gt..hi) > pivot */
        while (i < gt) {
            uint64_t x = v[i];
            if (x < pivot) {
                v[i++] = v[lt];
                v[lt++] = x;
            } else if (x > pivot) {
                v[i] = v[--gt];
                v[gt] = x;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
}

/* The summary: median effective n, the longest verbatim span and its first source, the
 * share of the text inside corpus spans of 20 bytes or more. ms: the text's matching
 * statistics when the generator knew them (taken over), else NULL: searched here. */
static int summarize(const ig_op_ctx *ctx, const ig_gen_backend *be, ig_generate_result *r, uint64_t *ms,
                     ig_error *err)
{
    uint32_t tw = ig_index_token_width(ctx->idx);
    uint64_t *ens = malloc((r->nsteps ? r->nsteps : 1) * sizeof *ens);
    if (!ens) {
        free(ms);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->nsteps; i++)
        ens[i] = r->steps[i].effective_n;
    r->median_effective_n = r->nsteps ? select_kth(ens, r->nsteps, r->nsteps / 2) : 0;
    free(ens);
    if (!r->len) {
        free(ms);
        return 0;
    }
    ig_span_options so = {.min_len = 1};
    ig_span *sp = NULL;
    size_t nsp = 0, units = tw ? r->len / tw : r->len;
    uint64_t at = 0;
    /* matching statistics: per byte (over the parts of a cluster with a backend), or per token
     * (then lengths are in tokens) */
    int rc = ms   ? 0
             : tw ? ig_token_matching(ctx->idx, r->text, r->len, &ms, NULL, err)
             : be ? be->matching(be->user, r->text, r->len, &ms, err)
                  : ig_spans(ctx->idx, r->text, r->len, &so, &sp, &nsp, &ms, NULL, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < units; i++)
        if (ms[i] > r->longest_span) {
            r->longest_span = ms[i];
            at = i;
        }
    r->inside_spans_20 = 1 - ig_novelty(ms, units, 20);
    free(sp);
    free(ms);
    ig_pos p;
    uint64_t tot, unit = tw ? tw : 1;
    if (be && !tw && r->longest_span)
        return be->first(be->user, r->text + at, (size_t)r->longest_span, &r->longest_source, &r->has_source, err);
    if (r->longest_span &&
        ig_positions(ctx->idx, r->text + at * unit, (size_t)(r->longest_span * unit), &p, 1, &tot) == 1)
        r->has_source = !(tw ? igi_op_token_location(ctx->idx, p, &r->longest_source, err)
                             : ig_locate(ctx->idx, p, NULL, &r->longest_source, err));
    return 0;
}

/* Hands text to on_text: on a token dataset the ids shown through the vocabulary. */
static void show_text(const ig_index *idx, const ig_generate_opts *o, const uint8_t *p, size_t n)
{
    if (!ig_index_token_width(idx)) {
        o->on_text(o->user, p, n);
        return;
    }
    char *t = NULL;
    size_t len = 0;
    if (!ig_tokens_text(idx, p, n, "\n", &t, &len, NULL))
        o->on_text(o->user, (const uint8_t *)t, len);
    free(t);
}

static int generate_compute(const ig_op_ctx *ctx, const ig_generate_opts *o, ig_generate_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    ig_gen_options go;
    ig_gen_options_default(&go);
    ig_model_opts mo = o->model;
    uint32_t tw = ig_index_token_width(ctx->idx);
    if (!mo.infgram && !mo.n && mo.weighted < 0 && mo.interp == IG_UNSET) {
        if (tw)
            mo.infgram = 1; /* the model of token datasets */
        else
            mo.interp = 2; /* generation's default model */
    }
    int rc = ig_model_resolve(&mo, &go.model, err);
    if (rc)
        return rc;
    r->model = go.model;
    go.model.cancel = ctx->cancel; /* each step's prediction stops with the generation */
    go.temperature = o->temperature;
    go.top_k = (uint32_t)o->top_k;
    go.top_p = o->top_p;
    go.max_chars = o->max;
    go.stop_at_end = !o->no_stop_at_end;
    if (o->seed != IG_SEED_RANDOM) {
        go.seed = o->seed;
    } else {
        if (getrandom(&go.seed, sizeof go.seed, 0) != sizeof go.seed)
            go.seed = (uint64_t)time(NULL) ^ (uint64_t)clock();
        go.seed &= ((uint64_t)1 << 53) - 1; /* reported in JSON: below 2^53 every reader holds it exactly */
    }
    r->seed = go.seed;
    const char **stops = calloc(o->stop.n + 1, sizeof *stops);
    if (!stops)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t i = 0; i < o->stop.n; i++) {
        if (!o->stop.v[i].n || memchr(o->stop.v[i].p, 0, o->stop.v[i].n)) {
            free(stops);
            return ig_error_set(err, IG_EUSAGE, "{stop}: %s", o->stop.v[i].n ? "a NUL byte in a stop string" : "empty string");
        }
        stops[i] = (const char *)o->stop.v[i].p;
    }
    go.stop = stops;
    go.nstop = o->stop.n;
    ig_gen *g = NULL;
    /* the prompt may be empty: no text, no ids */
    if (tw && !o->ids.p && !o->query.p)
        rc = (r->prompt = calloc(1, 1)) ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    else
        rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->prompt, &r->plen, err);
    if (!rc)
        rc = ig_gen_start(&g, ctx->idx, &go, r->prompt, r->plen, err);
    if (!rc && o->backend)
        ig_gen_set_predictor(g, o->backend->predict, o->backend->user);
    if (!rc && o->on_text)
        show_text(ctx->idx, o, r->prompt, r->plen);
    size_t cap = 0, shown = 0; /* bytes of text already handed to on_text */
    int reason = IG_STOP_NONE;
    while (!rc) {
        if (ig_cancelled(ctx->cancel)) {
            reason = IG_STOP_CANCELLED;
            break;
        }
        ig_gen_step st;
        reason = ig_gen_next(g, &st, err);
        if (reason < 0)
            rc = reason;
        if (reason != IG_STOP_NONE)
            break;
        /* one step per character, at most --max: room doubles, but never past --max */
        if (r->nsteps == cap) {
            size_t nc = cap ? 2 * cap : 4096;
            nc = nc > o->max ? (size_t)o->max : nc;
            ig_gen_step *grown = realloc(r->steps, (nc > r->nsteps ? nc : r->nsteps + 1) * sizeof *grown);
            if (!grown) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory");
                break;
            }
            r->steps = grown;
            cap = nc > r->nsteps ? nc : r->nsteps + 1;
        }
        r->steps[r->nsteps++] = st;
        if (o->on_text) {
            /* hold back a tail that may still become a stop string */
            size_t tl;
            const uint8_t *t = ig_gen_text(g, &tl);
            size_t hold = ig_gen_held(g);
            if (tl - hold > shown) {
                show_text(ctx->idx, o, t + shown, tl - hold - shown);
                shown = tl - hold;
            }
        }
    }
    free(stops);
    if (!rc) {
        size_t tl;
        const uint8_t *t = ig_gen_text(g, &tl);
        if (o->on_text && tl > shown)
            show_text(ctx->idx, o, t + shown, tl - shown);
        if (!(r->text = malloc(tl + 1)))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        else {
            memcpy(r->text, t, tl);
            r->text[tl] = '\0';
            r->len = tl;
        }
        r->chars = ig_gen_chars(g);
        r->stop_reason = reason;
        /* nothing at all, from the start: the model has no estimate after this prompt (say an
         * empty one under interpolation, which never backs off to the unigram). An empty 200
         * or an empty line would look like a generation that chose to stop. */
        if (reason == IG_STOP_NO_CONTINUATION && !r->chars && r->model.kind != IG_MODEL_INFGRAM &&
            r->model.max_context == 0 && (o->query.n || o->ids.n))
            rc = ig_error_set(err, IG_EUSAGE,
                              "{max_context}: 0 leaves the model no context, and %s never backs off to the unigram: "
                              "give {max_context} 1 or more, or use {infgram}",
                              r->model.kind == IG_MODEL_INTERP ? "interpolation" : "this model");
        else if (reason == IG_STOP_NO_CONTINUATION && !r->chars && r->model.kind != IG_MODEL_INFGRAM)
            rc = ig_error_set(err, IG_EUSAGE,
                              "{query}: the model has nothing to continue %s with (no estimate, or only the end of "
                              "a document; %s never backs off to the unigram): give a prompt whose end occurs in "
                              "the corpus, or use {infgram}",
                              o->query.n || o->ids.n ? "this prompt" : "an empty prompt",
                              r->model.kind == IG_MODEL_INTERP ? "interpolation" : "this model");
        /* a withdrawn stop string takes its steps with it */
        size_t keep = 0, bytes = 0;
        while (keep < r->nsteps && bytes + r->steps[keep].len <= tl)
            bytes += r->steps[keep++].len;
        r->nsteps = keep;
    }
    /* the generator knows the output's matching statistics (not through a backend: its
     * corpus is elsewhere) */
    uint64_t *ms = NULL;
    if (!rc && !o->backend && (rc = igi_gen_matching(g, r->len, &ms, err)) == 1)
        rc = 0;
    ig_gen_free(&g);
    if (!rc)
        rc = summarize(ctx, o->backend, r, ms, err);
    if (rc)
        ig_generate_result_free(r);
    return rc;
}

/* The result's memory; ig_generate_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void generate_release(ig_generate_result *r)
{
    IGI_FREE(r->prompt, r->text, r->steps);
}

char *ig_generate_json(const ig_op_ctx *ctx, const ig_generate_opts *o, const ig_generate_result *r)
{
    (void)o;
    cJSON *j = igi_jw_result(ctx);
    igi_jw_pattern(j, ctx->idx, "text", r->text, r->len);
    igi_jw_u64(j, ig_index_token_width(ctx->idx) ? "tokens" : "chars", r->chars);
    igi_jw_u64(j, "seed", r->seed);
    cJSON_AddStringToObject(j, "stop_reason", ig_stop_reason_name(r->stop_reason));
    igi_jw_u64(j, "median_effective_n", r->median_effective_n);
    igi_jw_u64(j, "longest_span", r->longest_span);
    if (r->has_source)
        igi_jw_put(j, "longest_span_source", igi_jw_location_object(ctx->idx, &r->longest_source));
    cJSON_AddNumberToObject(j, "inside_spans_20", r->inside_spans_20);
    return igi_jw_members(j);
}

IG_DEFINE_OP(generate, ig_generate_opts, ig_generate_result);
