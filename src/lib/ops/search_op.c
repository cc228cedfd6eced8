/*
 * search: documents matching a CNF query, counted exactly (or, past the per-clause
 * budget, estimated from a sample, and said so), listed a page at a time with the
 * location of the first hit and a snippet around it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_search_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_search_opts, query), 0, 0, "QUERY", NULL,
     "an AND of clauses, each a quoted term or a parenthesised OR of terms (at most 256 clauses, 1024 terms)", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REST | IG_FIELD_REQUIRED | IG_FIELD_GRAMMAR},
    {"within", IG_FIELD_UINT, offsetof(ig_search_opts, within), 0, 9223372036854775807.0, "W", NULL,
     "all clauses must have hits within W bytes of each other (0: anywhere in the document)", NULL, 0},
    {"limit", IG_FIELD_UINT, offsetof(ig_search_opts, limit), 0, 1000000, "N", "10", "documents listed", NULL, 0},
    {"offset", IG_FIELD_UINT, offsetof(ig_search_opts, offset), 0, 9223372036854775807.0, "N", NULL,
     "skip the first N matching documents", NULL, 0},
    {"budget", IG_FIELD_UINT, offsetof(ig_search_opts, budget), 0, 9223372036854775807.0, "N", "20000000",
     "occurrences enumerated per clause before sampling (0: no limit); a search reads at most 33554432 in all", NULL, 0},
    {"width", IG_FIELD_UINT, offsetof(ig_search_opts, width), 0, 10000, "W", "30", "snippet bytes on each side", NULL,
     0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_search_defaults(ig_search_opts *o)
{
    memset(o, 0, sizeof *o);
    ig_fields_defaults(ig_search_fields, o, NULL);
}

/* The query's clauses and terms, each term normalised like any query (a token dataset: its
 * ids), into arrays shaped like the parsed ones: *terms and *lens (free with terms_free). */
typedef struct search_terms {
    ig_cnf *q;
    const uint8_t ***terms;
    size_t **lens;
} search_terms;

static void terms_free(search_terms *st)
{
    for (size_t c = 0; st->q && st->terms && st->lens && c < st->q->nclauses; c++) {
        for (size_t t = 0; st->terms[c] && t < st->q->nterms[c]; t++)
            free((void *)st->terms[c][t]);
        free(st->terms[c]);
        free(st->lens[c]);
    }
    free(st->terms);
    free(st->lens);
    ig_cnf_free(&st->q);
    memset(st, 0, sizeof *st);
}

static int terms_get(const ig_op_ctx *ctx, const ig_search_opts *o, search_terms *st, ig_error *err)
{
    if (igi_op_start(ctx, st, sizeof *st, NULL, err))
        return IG_EUSAGE;
    const uint32_t tw = ig_index_token_width(ctx->idx);
    int rc = ig_cnf_parse(o->query.p ? o->query.p : (const uint8_t *)"", o->query.n, &st->q, NULL, err);
    if (rc) {
        char msg[IG_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return ig_error_set(err, rc, "%s%s", strncmp(msg, "{query}", 7) ? "{query}: " : "", msg);
    }
    ig_cnf *q = st->q;
    const uint8_t ***terms = st->terms = calloc(q->nclauses, sizeof *terms);
    size_t **lens = st->lens = calloc(q->nclauses, sizeof *lens);
    rc = terms && lens ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t c = 0; !rc && c < q->nclauses; c++) {
        terms[c] = calloc(q->nterms[c], sizeof **terms);
        lens[c] = calloc(q->nterms[c], sizeof **lens);
        if (!terms[c] || !lens[c])
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        size_t kept = 0;
        for (size_t t = 0; !rc && t < q->nterms[c]; t++) {
            uint8_t *b = NULL;
            size_t bl = 0;
            if (tw) { /* a token dataset: each quoted term is a list of ids */
                rc = ig_tokens_parse(ctx->idx, (const char *)q->terms[c][t], q->lens[c][t], &b, &bl, err);
                if (rc) {
                    char msg[IG_ERRMSG_MAX];
                    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
                    rc = ig_error_set(err, rc, "{query}: clause %zu, term %zu: %s", c + 1, t + 1, msg);
                } else if (bl && ig_token_at(b + bl - tw, tw) == ig_token_end(tw))
                    rc = ig_error_set(err, IG_EUSAGE, "{query}: clause %zu, term %zu: a term may not hold the "
                                      "separator (search finds terms inside documents)", c + 1, t + 1);
            } else
                rc = ig_query_normalize(ctx->idx, q->terms[c][t], q->lens[c][t], &b, &bl, err);
            /* a term the same as one before it in the clause once normalised ("a" OR "a", "cat" OR
             * "CAT" case-folded, "3" OR "03" as ids) is searched once: its hits would count twice */
            int again = 0;
            for (size_t k = 0; !rc && k < kept && !again; k++)
                again = lens[c][k] == bl && !memcmp(terms[c][k], b, bl);
            if (rc || again) {
                free(b);
                continue;
            }
            terms[c][kept] = b;
            lens[c][kept++] = bl;
        }
        q->nterms[c] = kept; /* the terms kept, in the order written */
    }
    if (rc)
        terms_free(st);
    return rc;
}

int ig_search_clause_totals(const ig_op_ctx *ctx, const ig_search_opts *o, uint64_t **totals, size_t *n, ig_error *err)
{
    *totals = NULL;
    *n = 0;
    search_terms st;
    int rc = terms_get(ctx, o, &st, err);
    if (rc)
        return rc;
    uint64_t *t = calloc(st.q->nclauses ? st.q->nclauses : 1, sizeof *t);
    if (!t) {
        terms_free(&st);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < st.q->nclauses; c++)
        for (size_t k = 0; k < st.q->nterms[c]; k++)
            t[c] += st.lens[c][k] ? ig_count(ctx->idx, st.terms[c][k], st.lens[c][k]) : 0;
    *n = st.q->nclauses;
    *totals = t;
    terms_free(&st);
    return 0;
}

static int search_compute(const ig_op_ctx *ctx, const ig_search_opts *o, ig_search_op_result *r, ig_error *err)
{
    memset(r, 0, sizeof *r);
    const uint32_t tw = ctx && ctx->idx ? ig_index_token_width(ctx->idx) : 0;
    search_terms st;
    int rc = terms_get(ctx, o, &st, err);
    if (rc)
        return rc;
    ig_search_result sr = {0};
    size_t processed = 0;
    rc = ig_search_part(ctx->idx, (const uint8_t *const *const *)st.terms, (const size_t *const *)st.lens,
                        st.q->nterms, st.q->nclauses, tw && o->within <= UINT64_MAX / tw ? o->within * tw : o->within,
                        o->budget, o->offset, o->limit, o->plan ? o->plan->totals : NULL, &processed, ctx->cancel, &sr,
                        err);
    if (o->plan)
        o->plan->processed = processed;
    terms_free(&st);
    if (rc)
        return rc;
    r->documents_total = sr.documents_total;
    r->approximate = sr.approximate;
    r->scale = sr.scale;
    r->docs = calloc(sr.nhits ? sr.nhits : 1, sizeof *r->docs);
    if (!r->docs) {
        ig_search_result_free(&sr);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    /* a document left out of the page, or listed without its snippet, would be a wrong
     * answer: any failure here fails the search */
    for (size_t i = 0; i < sr.nhits; i++) {
        ig_search_doc *d = &r->docs[r->ndocs];
        d->hit = sr.hits[i];
        size_t hl[3];
        if (tw) { /* the first hit by token offset, its snippet through the vocabulary */
            if ((rc = igi_op_token_location(ctx->idx, sr.hits[i].first, &d->loc, err)))
                break;
            d->snippet = igi_op_token_snippet(ctx->idx, sr.hits[i].first, sr.hits[i].first_len, (long)o->width, &hl[0],
                                              &hl[1]);
        } else {
            if ((rc = ig_locate(ctx->idx, sr.hits[i].first, NULL, &d->loc, err)))
                break;
            d->snippet = ig_snippet(ctx->idx, sr.hits[i].first, sr.hits[i].first_len, 0, (size_t)o->width, hl);
        }
        r->ndocs++;
        if (!d->snippet) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory making a snippet");
            break;
        }
        d->hl0 = hl[0];
        d->hl1 = hl[1];
    }
    ig_search_result_free(&sr);
    return rc;
}

uint64_t ig_search_hits_estimate(const ig_search_op_result *r, const ig_search_doc *d)
{
    return r->approximate ? (uint64_t)llround((double)d->hit.hits * r->scale) : d->hit.hits;
}

/* The result's memory; ig_search_op_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void search_release(ig_search_op_result *r)
{
    for (size_t i = 0; r->docs && i < r->ndocs; i++)
        free(r->docs[i].snippet);
    free(r->docs);
}

char *ig_search_json(const ig_op_ctx *ctx, const ig_search_opts *o, const ig_search_op_result *r)
{
    (void)o;
    cJSON *j = igi_jw_result(ctx);
    igi_jw_u64(j, "documents_total", r->documents_total);
    cJSON_AddBoolToObject(j, "approximate", r->approximate);
    cJSON_AddNumberToObject(j, "scale", r->scale);
    cJSON *docs = cJSON_AddArrayToObject(j, "documents");
    for (size_t i = 0; i < r->ndocs; i++) {
        const ig_search_doc *d = &r->docs[i];
        cJSON *x = igi_jw_item(docs);
        igi_jw_doc(x, ctx->idx, d->loc.doc, d->loc.name);
        igi_jw_u64(x, "hits", d->hit.hits);
        if (r->approximate) /* the hits counted are a sample: the estimate is hits × scale */
            igi_jw_u64(x, "hits_estimated", ig_search_hits_estimate(r, d));
        if (ig_index_token_width(ctx->idx))
            igi_jw_u64(x, "first_token_offset", d->loc.offset);
        else
            igi_jw_u64(x, "first_line", d->loc.line);
        if (d->loc.source_line)
            igi_jw_u64(x, "source_line", d->loc.source_line);
        if (d->snippet) { /* the first match with `width` bytes a side; the match is snippet[hl0, hl1) */
            cJSON_AddStringToObject(x, "snippet", d->snippet);
            igi_jw_u64(x, "hl0", d->hl0);
            igi_jw_u64(x, "hl1", d->hl1);
        }
    }
    return igi_jw_members(j);
}

#define ig_search_result_free ig_search_op_result_free
IG_DEFINE_OP(search, ig_search_opts, ig_search_op_result);
#undef ig_search_result_free
