/*
 * spans: the maximal spans of a text that occur verbatim in the corpus (matching
 * statistics), each with its count and source documents, and the text's novelty.
 */
#include <stdlib.h>
#include <string.h>

#include "infinigram/query.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_spans_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_spans_opts, query), 0, 0, "TEXT", NULL, "the text to trace (exact bytes)",
     NULL, IG_FIELD_POSITIONAL | IG_FIELD_REST},
    {"min_len", IG_FIELD_UINT, offsetof(ig_spans_opts, min_len), 1, 9223372036854775807.0, "N", "8",
     "shortest span reported, in bytes", NULL, 0},
    {"max_count", IG_FIELD_UINT, offsetof(ig_spans_opts, max_count), 1, 9223372036854775807.0, "C", NULL,
     "only spans occurring at most C times (rare spans)", NULL, 0},
    {"words", IG_FIELD_BOOL, offsetof(ig_spans_opts, words), 0, 0, NULL, NULL, "cut spans to whole words", NULL, 0},
    {"positions", IG_FIELD_UINT, offsetof(ig_spans_opts, positions), 0, 1000, "K", "3",
     "source documents listed per span", NULL, 0},
    {"last", IG_FIELD_BOOL, offsetof(ig_spans_opts, last), 0, 0, NULL, NULL, "the text of the last generation", NULL,
     IG_FIELD_SHELL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_spans_defaults(ig_spans_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_len = 8;
    o->positions = 3;
}

int ig_spans_run(const ig_op_ctx *ctx, const ig_spans_opts *o, ig_spans_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    if (!ctx || !ctx->idx)
        return ig_error_set(err, IG_EUSAGE, "no dataset loaded (use: load NAME)");
    if (!o->query.p)
        return ig_error_set(err, IG_EUSAGE, "{query}: missing TEXT");
    int rc = ig_query_normalize(ctx->idx, o->query.p, o->query.n, &r->text, &r->len, err);
    ig_span_options so = {.min_len = o->min_len, .max_count = o->max_count, .words = o->words, .cancel = ctx->cancel};
    uint64_t *ms = NULL;
    if (!rc)
        rc = ig_spans(ctx->idx, r->text, r->len, &so, &r->spans, &r->nspans, &ms, &r->searches, err);
    if (rc) {
        ig_spans_result_free(r);
        return rc;
    }
    r->novelty = ig_novelty(ms, r->len, o->min_len);
    free(ms);
    size_t n = r->nspans ? r->nspans : 1;
    r->sources = calloc(n, sizeof *r->sources);
    r->nsources = calloc(n, sizeof *r->nsources);
    r->totals = calloc(n, sizeof *r->totals);
    if (!r->sources || !r->nsources || !r->totals) {
        ig_spans_result_free(r);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->nspans; i++) {
        const ig_span *s = &r->spans[i];
        if ((rc = op_occurrences(ctx, r->text + s->start, (size_t)s->length, (size_t)o->positions, -1, &r->sources[i],
                                 &r->nsources[i], &r->totals[i], err))) {
            ig_spans_result_free(r);
            return rc;
        }
    }
    return 0;
}

char *ig_spans_json(const ig_op_ctx *ctx, const ig_spans_opts *o, const ig_spans_result *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "dataset", ctx && ctx->dataset ? ctx->dataset : "");
    cJSON *arr = cJSON_AddArrayToObject(j, "spans");
    for (size_t i = 0; i < r->nspans; i++) {
        const ig_span *s = &r->spans[i];
        cJSON *sj = cJSON_CreateObject();
        jw_u64(sj, "start", s->start);
        jw_u64(sj, "length", s->length);
        jw_u64(sj, "count", s->count);
        jw_bytes(sj, "text", r->text + s->start, (size_t)s->length);
        cJSON *src = cJSON_AddArrayToObject(sj, "sources");
        for (size_t k = 0; k < r->nsources[i]; k++)
            jw_location(src, &r->sources[i][k].loc);
        cJSON_AddItemToArray(arr, sj);
    }
    cJSON *nv = cJSON_AddObjectToObject(j, "novelty");
    jw_u64(nv, "n", o->min_len);
    cJSON_AddNumberToObject(nv, "uncovered_fraction", r->novelty);
    jw_u64(j, "searches", r->searches);
    return jw_members(j);
}

void ig_spans_result_free(ig_spans_result *r)
{
    for (size_t i = 0; r->sources && i < r->nspans; i++) /* nsources may be missing: its allocation failed */
        op_occurrences_free(r->sources[i], r->nsources ? r->nsources[i] : 0);
    free(r->sources);
    free(r->nsources);
    free(r->totals);
    free(r->spans);
    free(r->text);
    memset(r, 0, sizeof *r);
}

IG_DEFINE_OP(spans, ig_spans_opts, ig_spans_result);
