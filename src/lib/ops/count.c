/*
 * count: occurrences of a byte string, optionally the first K in corpus order, each
 * resolved to document, line:column and a snippet.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include <inttypes.h>
#include "util/util.h"
#include "op_impl.h"
#include "index/index_impl.h"
#include "opjson.h"

const ig_field ig_count_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_count_opts, query), 0, 0, "TEXT", NULL,
     "the text to count (exact bytes; the empty text counts every indexed byte)", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REST | IG_FIELD_REQUIRED | IG_FIELD_UNLESS_IDS},
    IGI_IDS_FIELD(ig_count_opts, "token datasets: the token ids to count, comma-separated"),
    {"positions", IG_FIELD_UINT, offsetof(ig_count_opts, positions), 0, 1000000, "K", NULL,
     "list up to K occurrences in corpus order (at most 256 MiB in all, each counted as twice the width plus 512 bytes)",
     NULL, 0},
    {"width", IG_FIELD_UINT, offsetof(ig_count_opts, width), 0, 10000, "W", "30",
     "bytes (tokens, on a token dataset) of context on each side of a listed occurrence (the shell's "
     "table, when --width is not given, narrows it so that a line fits the terminal, 80 columns off one)",
     NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_count_defaults(ig_count_opts *o)
{
    memset(o, 0, sizeof *o);
    ig_fields_defaults(ig_count_fields, o, NULL);
}

static int count_compute(const ig_op_ctx *ctx, const ig_count_opts *o, ig_count_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    int rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->query, &r->qlen, err);
    if (rc)
        return rc;
    if (ctx->idx->tw) { /* no separator byte to rule out here: ids were checked */
        if (!o->positions) {
            r->count = ig_count(ctx->idx, r->query, r->qlen);
            return 0;
        }
        return igi_op_occurrences(ctx, r->query, r->qlen, (size_t)o->positions, (long)o->width, &r->occ, &r->nocc,
                                  &r->count, err);
    }
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
    /* each listed occurrence carries up to 2 × width bytes of snippet, and a record and its
     * JSON besides: a bound on the answer, whatever the corpus (a frequent word at the
     * widest context is gigabytes; a million at width 0 were 5 GB before this counted) */
    uint64_t each = 2 * (uint64_t)(width > 0 ? width : 0) + len + IGI_LISTED_COST;
    if ((uint64_t)k * each > IGI_SNIPPETS_MAX)
        return ig_error_set(err, IG_EUSAGE,
                            "{positions}: %zu occurrences with {width} %ld would make an answer of over %d MiB "
                            "(each costs twice the width plus %d bytes): list at most %llu at this width, or narrow it",
                            k, width > 0 ? width : 0, (int)(IGI_SNIPPETS_MAX >> 20), IGI_LISTED_COST,
                            (unsigned long long)(IGI_SNIPPETS_MAX / each));
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
        if (ctx->idx->tw) { /* a document and a token offset; tokens shown */
            if ((rc = igi_op_token_location(ctx->idx, pos[i], &occ[i].loc, err)))
                break;
            occ[i].length = len / ctx->idx->tw;
            if (width >= 0 &&
                !(occ[i].snippet = igi_op_token_snippet(ctx->idx, pos[i], len, width, &occ[i].hl0, &occ[i].hl1))) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory making a snippet");
                break;
            }
            done++;
            continue;
        }
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

int igi_op_pattern(const ig_op_ctx *ctx, const ig_bytes *text, const ig_bytes *ids, const char *field, uint8_t **out,
                   size_t *len, ig_error *err)
{
    if (ids->p && text->p)
        return ig_error_set(err, IG_EUSAGE, "give the text or {%s}, not both", field);
    if (ctx->idx->tw) {
        if (!ids->p && igi_vocab_has_tokenizer(ctx->idx)) /* text, tokenised as the dataset's documents were */
            return igi_vocab_encode(ctx->idx, text->p ? (const char *)text->p : "", text->n, out, len, err);
        if (!ids->p)
            return ig_error_set(err, IG_EUSAGE, "this is a token dataset without a tokenizer: give token ids with {%s}",
                                field);
        int rc = ig_tokens_parse(ctx->idx, (const char *)ids->p, ids->n, out, len, err);
        if (rc && err) { /* the parser names the item; the field is the operation's */
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            ig_error_set(err, rc, "{%s}: %s", field, msg);
        }
        return rc;
    }
    if (ids->p)
        return ig_error_set(err, IG_EUSAGE, "{%s} needs a token dataset (this one indexes bytes: give text)", field);
    return ig_query_normalize(ctx->idx, text->p ? text->p : (const uint8_t *)"", text->n, out, len, err);
}

/* The document holding token position pos; the shard's very end counts as the end of its
 * last document (the position after a match that runs to the end). */
static int token_doc(const ig_index *idx, ig_pos pos, uint64_t *docid, ig_doc *doc, ig_error *err)
{
    size_t n = SIZE_MAX;
    ig_text(idx, pos.shard, 0, &n);
    if (pos.offset == n && n)
        pos.offset -= ig_index_token_width(idx);
    if (ig_locate_doc(idx, pos, docid))
        return ig_error_set(err, IG_EINTERNAL, "position %u:%" PRIu64 " is outside the documents", pos.shard, pos.offset);
    return ig_doc_get(idx, *docid, doc, err);
}

int igi_op_token_location(const ig_index *idx, ig_pos pos, ig_location *loc, ig_error *err)
{
    ig_doc doc;
    memset(loc, 0, sizeof *loc);
    int rc = token_doc(idx, pos, &loc->doc, &doc, err);
    if (rc)
        return rc;
    loc->name = doc.name;
    loc->source_line = doc.source_line;
    /* a document's end (a separator, or the shard's end) is its length in tokens */
    loc->offset = pos.offset >= doc.start ? (pos.offset - doc.start) / ig_index_token_width(idx) : 0;
    return 0;
}

char *igi_op_token_snippet(const ig_index *idx, ig_pos pos, size_t len, long width, size_t *hl0, size_t *hl1)
{
    const uint32_t tw = ig_index_token_width(idx);
    uint64_t docid;
    ig_doc doc;
    if (token_doc(idx, pos, &docid, &doc, NULL))
        return NULL;
    uint64_t off = pos.offset >= doc.start ? (pos.offset - doc.start) / tw : 0, w = (uint64_t)(width > 0 ? width : 0);
    uint64_t a = doc.start + tw * (off > w ? off - w : 0), m0 = doc.start + tw * off, m1 = m0 + len, z = m1 + tw * w;
    uint64_t e = doc.start + doc.length;
    if (m1 > e)
        m1 = e;
    if (z > e)
        z = e;
    ig_buf snip = {0};
    const uint64_t cut[4] = {a, m0, m1, z};
    for (int k = 0; k < 3; k++) { /* before, the match, after: shown as text bytes are */
        size_t span = (size_t)(cut[k + 1] > cut[k] ? cut[k + 1] - cut[k] : 0), tl = 0;
        const uint8_t *t = ig_text(idx, pos.shard, cut[k], &span);
        char *text = NULL;
        if (ig_tokens_text(idx, t, span, "\n", &text, &tl, NULL)) {
            ig_buf_free(&snip);
            return NULL;
        }
        igi_put_visible(&snip, (const uint8_t *)text, tl);
        free(text);
        if (k == 0)
            *hl0 = snip.len;
        else if (k == 1)
            *hl1 = snip.len;
    }
    if (ig_buf_append(&snip, "", 1)) { /* NUL-terminated, not counted */
        ig_buf_free(&snip);
        return NULL;
    }
    return (char *)snip.data;
}

void igi_op_occurrences_free(ig_occurrence *occ, size_t n)
{
    for (size_t i = 0; occ && i < n; i++)
        free(occ[i].snippet);
    free(occ);
}

int ig_occurrences(const ig_op_ctx *ctx, const uint8_t *p, size_t len, size_t k, long width, ig_occurrence **out,
                   size_t *n, uint64_t *total, ig_error *err)
{
    if (igi_op_need_index(ctx, err))
        return IG_EUSAGE;
    return igi_op_occurrences(ctx, p, len, k, width, out, n, total, err);
}

void ig_occurrences_free(ig_occurrence *occ, size_t n)
{
    igi_op_occurrences_free(occ, n);
}

/* The result's memory; ig_count_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void count_release(ig_count_result *r)
{
    igi_op_occurrences_free(r->occ, r->nocc);
    free(r->query);
}

char *ig_count_json(const ig_op_ctx *ctx, const ig_count_opts *o, const ig_count_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    igi_jw_pattern(j, ctx->idx, "query", r->query, r->qlen);
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

IG_DEFINE_OP(count, ig_count_opts, ig_count_result);
