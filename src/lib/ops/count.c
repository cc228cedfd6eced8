/*
 * count: occurrences of a byte string, optionally the first K in corpus order, each
 * resolved to document, line:column and a snippet.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/query.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_count_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_count_opts, query), 0, 0, "TEXT", NULL,
     "the text to count (exact bytes; the empty text counts every indexed byte)", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REST | IG_FIELD_REQUIRED},
    {"positions", IG_FIELD_UINT, offsetof(ig_count_opts, positions), 0, 1000000, "K", NULL,
     "list up to K occurrences in corpus order", NULL, 0},
    {"width", IG_FIELD_UINT, offsetof(ig_count_opts, width), 0, 10000, "W", "30",
     "bytes of context on each side of a listed occurrence", NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_count_defaults(ig_count_opts *o)
{
    memset(o, 0, sizeof *o);
    o->width = 30;
}

int ig_count_run(const ig_op_ctx *ctx, const ig_count_opts *o, ig_count_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    if (!ctx || !ctx->idx)
        return ig_error_set(err, IG_EUSAGE, "no dataset loaded (use: load NAME)");
    if (o->positions > 1000000 || o->width > 10000)
        return ig_error_set(err, IG_EUSAGE, "%s is out of range", o->width > 10000 ? "{width}" : "{positions}");
    int rc = ig_query_normalize(ctx->idx, o->query.p ? o->query.p : (const uint8_t *)"", o->query.n, &r->query,
                                &r->qlen, err);
    if (rc)
        return rc;
    if (memchr(r->query, IG_DOC_END, r->qlen)) /* 0xFF separates documents and is never text */
        return 0;
    if (!o->positions) {
        r->count = ig_count(ctx->idx, r->query, r->qlen);
        return 0;
    }
    return igi_op_occurrences(ctx, r->query, r->qlen, (size_t)o->positions, (long)o->width, &r->occ, &r->nocc, &r->count,
                          err);
}

int igi_op_occurrences(const ig_op_ctx *ctx, const uint8_t *p, size_t len, size_t k, long width, ig_occurrence **out,
                   size_t *n, uint64_t *total, ig_error *err)
{
    *out = NULL;
    *n = 0;
    *total = ig_count(ctx->idx, p, len);
    if (k > *total) /* room for the occurrences there are, not for the most that were asked */
        k = (size_t)*total;
    ig_pos *pos = malloc((k ? k : 1) * sizeof *pos);
    ig_occurrence *occ = calloc(k ? k : 1, sizeof *occ);
    if (!pos || !occ) {
        free(pos);
        free(occ);
        return ig_error_set(err, IG_ENOMEM, "out of memory listing %zu positions", k);
    }
    size_t got = k ? ig_positions(ctx->idx, p, len, pos, k, total) : 0;
    ig_index_info info;
    ig_index_get_info(ctx->idx, &info);
    uint8_t *orig = NULL;
    size_t olen = 0;
    int rc = 0;
    size_t done = 0;
    while (done < got) {
        size_t i = done;
        if (ig_cancelled(ctx->cancel)) {
            rc = ig_error_set(err, IG_ECANCELLED, "listing cancelled");
            break;
        }
        occ[i].pos = pos[i];
        /* positions are sorted, so each lookup continues from the previous one */
        if ((rc = ig_locate(ctx->idx, pos[i], i ? &occ[i - 1].loc : NULL, &occ[i].loc, err)))
            break;
        /* folding changes lengths (ẞ is 3 bytes, ss 2): the match as the document has it */
        occ[i].length = len;
        if (info.casefold && len) {
            olen = 0;
            if ((rc = ig_text_original(ctx->idx, pos[i].shard, pos[i].offset, len, &orig, &olen, NULL, err)))
                break;
            occ[i].length = olen;
        }
        if (width >= 0) {
            size_t hl[3];
            occ[i].snippet = ig_snippet(ctx->idx, pos[i], len, 0, (size_t)width, hl);
            if (!occ[i].snippet) { /* a listing with a snippet missing would be a wrong answer */
                rc = ig_error_set(err, IG_ENOMEM, "out of memory making a snippet");
                break;
            }
            occ[i].hl0 = hl[0];
            occ[i].hl1 = hl[1];
        }
        done++;
    }
    free(pos);
    free(orig);
    *out = occ;
    *n = done;
    return rc;
}

void igi_op_occurrences_free(ig_occurrence *occ, size_t n)
{
    for (size_t i = 0; occ && i < n; i++)
        free(occ[i].snippet);
    free(occ);
}

char *ig_count_json(const ig_op_ctx *ctx, const ig_count_opts *o, const ig_count_result *r)
{
    cJSON *j = igi_jw_object();
    cJSON_AddStringToObject(j, "dataset", ctx && ctx->dataset ? ctx->dataset : "");
    igi_jw_bytes(j, "query", r->query, r->qlen);
    igi_jw_u64(j, "count", r->count);
    if (o->positions) {
        cJSON *arr = cJSON_AddArrayToObject(j, "positions");
        for (size_t i = 0; i < r->nocc; i++) {
            cJSON *p = igi_jw_location(arr, ctx->idx, &r->occ[i].loc);
            igi_jw_u64(p, "length", r->occ[i].length);
            if (r->occ[i].snippet) {
                cJSON_AddStringToObject(p, "snippet", r->occ[i].snippet);
                /* where the match is in the snippet (UTF-8 bytes): a case-folded query's
                 * text need not appear in the original */
                igi_jw_u64(p, "hl0", r->occ[i].hl0);
                igi_jw_u64(p, "hl1", r->occ[i].hl1);
            }
        }
    }
    return igi_jw_members(j);
}

void ig_count_result_free(ig_count_result *r)
{
    igi_op_occurrences_free(r->occ, r->nocc);
    free(r->query);
    memset(r, 0, sizeof *r);
}

IG_DEFINE_OP(count, ig_count_opts, ig_count_result);
