/*
 * spans: the maximal spans of a text that occur verbatim in the corpus (matching
 * statistics), each with its count and first occurrences, and the text's novelty.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "op_impl.h"
#include "opjson.h"
#include "util/util.h"

static const char *const rank_choices[] = {"none", "bm25", NULL};

const ig_field ig_spans_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_spans_opts, query), 0, 0, "TEXT", NULL, "the text to trace (exact bytes)",
     NULL, IG_FIELD_POSITIONAL | IG_FIELD_REST},
    IGI_IDS_FIELD(ig_spans_opts, "token datasets: the token ids to trace, comma-separated (lengths then count tokens)"),
    {"min_len", IG_FIELD_UINT, offsetof(ig_spans_opts, min_len), 1, 9223372036854775807.0, "N", "8",
     "shortest span reported, in bytes", NULL, 0},
    {"max_count", IG_FIELD_UINT, offsetof(ig_spans_opts, max_count), 1, 9223372036854775807.0, "C", NULL,
     "only spans occurring at most C times (rare spans)", NULL, 0},
    {"words", IG_FIELD_BOOL, offsetof(ig_spans_opts, words), 0, 0, NULL, NULL, "cut spans to whole words", NULL, 0},
    {"positions", IG_FIELD_UINT, offsetof(ig_spans_opts, positions), 0, 1000, "K", "3",
     "occurrences listed per span, the first in corpus order", NULL, 0},
    {"last", IG_FIELD_BOOL, offsetof(ig_spans_opts, last), 0, 0, NULL, NULL, "the text of the last generation", NULL,
     IG_FIELD_SHELL},
    {"rank", IG_FIELD_ENUM, offsetof(ig_spans_opts, rank), 0, 0, "ORDER", "none",
     "order of each span's sources: none (corpus order) or bm25 (relevance of the document to the whole text; "
     "identical documents folded into one)",
     rank_choices, 0},
    {"candidates", IG_FIELD_UINT, offsetof(ig_spans_opts, candidates), 1, 100000, "N", "256",
     "ranked: occurrences of each span considered (its first N in corpus order)", NULL, 0},
    {"k1", IG_FIELD_DOUBLE, offsetof(ig_spans_opts, k1), 0, 100, "K1", "1.2", "ranked: BM25 term-frequency saturation",
     NULL, 0},
    {"b", IG_FIELD_DOUBLE, offsetof(ig_spans_opts, b), 0, 1, "B", "0.75", "ranked: BM25 document-length normalisation",
     NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_spans_defaults(ig_spans_opts *o)
{
    memset(o, 0, sizeof *o);
    ig_fields_defaults(ig_spans_fields, o, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_cand_id(const void *key, const void *elt)
{
    uint64_t k = *(const uint64_t *)key, id = ((const ig_rank_cand *)elt)->id;
    return k < id ? -1 : k > id;
}

/* Sources ranked: best score first, then corpus order. */
typedef struct ranked {
    const ig_rank_cand *doc;
    size_t i; ///< index into the span's occurrences
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->doc->score != y->doc->score)
        return x->doc->score > y->doc->score ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Reorders span i's sources by relevance: one occurrence per document, documents with
 * identical text folded into the first (its `duplicates` counts the others), the best
 * `keep` kept. */
static int rank_span(ig_occurrence **occp, size_t *np, const ig_rank_cand *c, size_t nc, size_t keep, ig_error *err)
{
    ig_occurrence *occ = *occp;
    size_t n = *np, m = 0;
    ranked *rk = malloc((n ? n : 1) * sizeof *rk);
    if (!rk)
        return ig_error_set(err, IG_ENOMEM, "out of memory ranking sources");
    for (size_t i = 0; i < n; i++) {
        if (i && occ[i].loc.doc == occ[i - 1].loc.doc)
            continue; /* corpus order: a document's occurrences are adjacent; the first stands for it */
        const ig_rank_cand *d = bsearch(&occ[i].loc.doc, c, nc, sizeof *c, cmp_cand_id);
        if (!d) {
            free(rk);
            return ig_error_set(err, IG_EUSAGE, "document %" PRIu64 " is not among the candidates ranked",
                                occ[i].loc.doc);
        }
        /* identical text: fold into the first such document already kept */
        size_t k;
        for (k = 0; k < m; k++) {
            const ig_rank_cand *e = rk[k].doc;
            if (e->hash == d->hash && e->len == d->len && e->text && d->text && !memcmp(e->text, d->text, (size_t)d->len))
                break;
        }
        if (k < m) {
            occ[rk[k].i].duplicates++;
            continue;
        }
        occ[i].score = d->score;
        rk[m++] = (ranked){d, i};
    }
    qsort(rk, m, sizeof *rk, cmp_ranked);
    size_t out = m < keep ? m : keep;
    ig_occurrence *res = calloc(out ? out : 1, sizeof *res);
    if (!res) {
        free(rk);
        return ig_error_set(err, IG_ENOMEM, "out of memory ranking sources");
    }
    for (size_t k = 0; k < out; k++) {
        res[k] = occ[rk[k].i];
        occ[rk[k].i].snippet = NULL; /* moved */
    }
    igi_op_occurrences_free(occ, n);
    free(rk);
    *occp = res;
    *np = out;
    return 0;
}

int ig_spans_rank(ig_spans_result *r, const ig_rank_cand *c, size_t n, size_t keep, ig_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < r->nspans; i++)
        rc = rank_span(&r->sources[i], &r->nsources[i], c, n, keep, err);
    return rc;
}

/* Ranks every span's candidate sources by the BM25 relevance of their documents to the
 * whole text; each document is scored once, however many spans it backs. */
static int rank_sources(const ig_op_ctx *ctx, const ig_spans_opts *o, ig_spans_result *r, ig_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < r->nspans; i++)
        total += r->nsources[i];
    uint64_t *ids = malloc((total ? total : 1) * sizeof *ids);
    if (!ids)
        return ig_error_set(err, IG_ENOMEM, "out of memory ranking sources");
    size_t nid = 0;
    for (size_t i = 0; i < r->nspans; i++)
        for (size_t k = 0; k < r->nsources[i]; k++)
            ids[nid++] = r->sources[i][k].loc.doc;
    qsort(ids, nid, sizeof *ids, cmp_u64);
    size_t u = 0;
    for (size_t j = 0; j < nid; j++)
        if (!u || ids[u - 1] != ids[j])
            ids[u++] = ids[j];
    ig_rank_cand *c = calloc(u ? u : 1, sizeof *c);
    double *sc = malloc((u ? u : 1) * sizeof *sc);
    int rc = !c || !sc ? ig_error_set(err, IG_ENOMEM, "out of memory ranking sources") : 0;
    if (!rc)
        rc = ig_bm25_scores(ctx->idx, r->text, r->len, ids, u, o->k1, o->b, ctx->cancel, sc, err);
    for (size_t j = 0; !rc && j < u; j++) {
        ig_doc doc;
        if ((rc = ig_doc_get(ctx->idx, ids[j], &doc, err)))
            break;
        size_t len = (size_t)doc.length;
        c[j] = (ig_rank_cand){ids[j], sc[j], 0, doc.length, ig_text(ctx->idx, doc.shard, doc.start, &len)};
        c[j].hash = igi_hash_bytes(c[j].text, (size_t)c[j].len);
    }
    if (!rc)
        rc = ig_spans_rank(r, c, u, (size_t)o->positions, err);
    IGI_FREE(c, sc, ids);
    return rc;
}

/* Spans of a token sequence: maximal runs of tokens that occur (from the matching statistics,
 * a run starting at i is maximal unless the run from i − 1 covers it), lengths in tokens. */
static int token_spans(const ig_op_ctx *ctx, const ig_spans_opts *o, ig_spans_result *r, ig_error *err)
{
    if (o->words || o->rank == IG_RANK_BM25)
        return ig_error_set(err, IG_EUSAGE, "{%s} works on byte datasets only for now", o->words ? "words" : "rank");
    int rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->text, &r->len, err);
    const uint32_t tw = ig_index_token_width(ctx->idx);
    uint64_t *ms = NULL;
    size_t ntok = tw ? r->len / tw : 0;
    if (!rc)
        rc = ig_token_matching(ctx->idx, r->text, r->len, &ms, &r->searches, err);
    if (!rc && !(r->spans = malloc((ntok ? ntok : 1) * sizeof *r->spans)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < ntok; i++) {
        if (ms[i] < o->min_len || (i && ms[i - 1] > ms[i]))
            continue;
        uint64_t c = ig_count(ctx->idx, r->text + i * tw, (size_t)ms[i] * tw);
        r->searches++;
        if (!o->max_count || c <= o->max_count)
            r->spans[r->nspans++] = (ig_span){i, ms[i], c};
    }
    if (!rc)
        r->novelty = ig_novelty(ms, ntok, o->min_len);
    free(ms);
    size_t n = r->nspans ? r->nspans : 1;
    if (!rc && (!(r->sources = calloc(n, sizeof *r->sources)) || !(r->nsources = calloc(n, sizeof *r->nsources)) ||
                !(r->totals = calloc(n, sizeof *r->totals))))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    uint64_t held = 0;
    for (size_t i = 0; !rc && i < r->nspans; i++)
        held += r->spans[i].count < o->positions ? r->spans[i].count : o->positions;
    if (!rc && held > IG_SPANS_MAX_LISTED)
        rc = ig_error_set(err, IG_EUSAGE, "{positions}: %zu spans would list %" PRIu64 " occurrences (at most %d)",
                          r->nspans, held, IG_SPANS_MAX_LISTED);
    for (size_t i = 0; !rc && i < r->nspans; i++) {
        rc = igi_op_occurrences(ctx, r->text + r->spans[i].start * tw, (size_t)r->spans[i].length * tw,
                                (size_t)o->positions, -1, &r->sources[i], &r->nsources[i], &r->totals[i], err);
    }
    if (rc)
        ig_spans_result_free(r);
    return rc;
}

int ig_spans_check_listed(const ig_spans_opts *o, const ig_span *spans, size_t n, ig_error *err)
{
    uint64_t listed = o->rank == IG_RANK_BM25 ? o->candidates : o->positions, held = 0;
    for (size_t i = 0; i < n; i++)
        held += spans[i].count < listed ? spans[i].count : listed;
    if (held > IG_SPANS_MAX_LISTED)
        return ig_error_set(err, IG_EUSAGE,
                            "{%s}: %zu spans would list %" PRIu64 " occurrences (at most %d): lower it, or raise "
                            "{min_len} or set {max_count}",
                            o->rank == IG_RANK_BM25 ? "candidates" : "positions", n, held, IG_SPANS_MAX_LISTED);
    return 0;
}

static int spans_compute(const ig_op_ctx *ctx, const ig_spans_opts *o, ig_spans_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    if (ig_index_token_width(ctx->idx) || o->ids.p)
        return token_spans(ctx, o, r, err);
    if (!o->query.p)
        return ig_error_set(err, IG_EUSAGE, "{query} is missing: give the text to trace");
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
    size_t listed = o->rank == IG_RANK_BM25 ? (size_t)o->candidates : (size_t)o->positions;
    if ((rc = ig_spans_check_listed(o, r->spans, r->nspans, err))) {
        ig_spans_result_free(r);
        return rc;
    }
    for (size_t i = 0; i < r->nspans; i++) {
        const ig_span *s = &r->spans[i];
        if ((rc = igi_op_occurrences(ctx, r->text + s->start, (size_t)s->length, listed, -1, &r->sources[i],
                                 &r->nsources[i], &r->totals[i], err))) {
            ig_spans_result_free(r);
            return rc;
        }
    }
    if (o->rank == IG_RANK_BM25 && (rc = rank_sources(ctx, o, r, err)))
        ig_spans_result_free(r);
    return rc;
}

/* The result's memory; ig_spans_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void spans_release(ig_spans_result *r)
{
    for (size_t i = 0; r->sources && i < r->nspans; i++) /* nsources may be missing: its allocation failed */
        igi_op_occurrences_free(r->sources[i], r->nsources ? r->nsources[i] : 0);
    IGI_FREE(r->sources, r->nsources, r->totals, r->spans, r->text);
}

char *ig_spans_json(const ig_op_ctx *ctx, const ig_spans_opts *o, const ig_spans_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    cJSON *arr = cJSON_AddArrayToObject(j, "spans");
    for (size_t i = 0; i < r->nspans; i++) {
        const ig_span *s = &r->spans[i];
        cJSON *sj = igi_jw_item(arr);
        igi_jw_u64(sj, "start", s->start);
        igi_jw_u64(sj, "length", s->length);
        igi_jw_u64(sj, "count", s->count);
        uint32_t tw = ig_index_token_width(ctx->idx), unit = tw ? tw : 1;
        igi_jw_pattern(sj, ctx->idx, "text", r->text + s->start * unit, (size_t)s->length * unit);
        cJSON *src = cJSON_AddArrayToObject(sj, "sources");
        for (size_t k = 0; k < r->nsources[i]; k++) {
            cJSON *p = igi_jw_location(src, ctx->idx, &r->sources[i][k].loc);
            igi_jw_u64(p, "length", r->sources[i][k].length);
            if (o->rank == IG_RANK_BM25) {
                cJSON_AddNumberToObject(p, "score", r->sources[i][k].score);
                igi_jw_u64(p, "duplicates", r->sources[i][k].duplicates);
            }
        }
    }
    cJSON *nv = cJSON_AddObjectToObject(j, "novelty");
    igi_jw_u64(nv, "n", o->min_len);
    cJSON_AddNumberToObject(nv, "uncovered_fraction", r->novelty);
    igi_jw_u64(j, "searches", r->searches);
    return igi_jw_members(j);
}

IG_DEFINE_OP(spans, ig_spans_opts, ig_spans_result);
