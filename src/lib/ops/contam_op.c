/*
 * contam: which eval items occur in the corpus. Each item (normalised like the corpus,
 * lowercased on request) is cut into n-grams (BFF's rule: 13 white-space-separated words
 * joined by single spaces; or n bytes), each n-gram is counted exactly in the index, and
 * the item's overlap is the share of its n-grams (with repetition) that occur. Items at
 * or above the threshold (0.8) are contaminated, those at or above the partial threshold
 * (0.2) partly. The longest substring of the item found in the corpus comes from the
 * matching statistics of the item (one linear pass), with its first source.
 *
 * For comparison the result carries the false-positive rate (1 − e^(−kn/m))^k a Bloom
 * filter of BFF's example size (m bits, k hash functions) would have had holding the
 * eval set's n distinct n-grams — the error that exact counting avoids.
 *
 * Memory: one item at a time, plus the set of distinct n-grams (their bytes and 24 bytes
 * of slot each, bounded by the eval set's size). The cancel flag is polled between
 * n-grams; a cancelled run returns the items done, marked cancelled.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/contam.h"
#include "infinigram/text.h"
#include "infinigram/query.h"
#include "text/ngrams.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_contam_fields[] = {
    {"file", IG_FIELD_TEXT, offsetof(ig_contam_opts, file), 0, 0, "FILE", NULL,
     "the eval set: one item per non-empty line, or JSONL with --field", NULL, IG_FIELD_POSITIONAL | IG_FIELD_SHELL},
    {"field", IG_FIELD_TEXT, offsetof(ig_contam_opts, field), 0, 0, "KEY", NULL,
     "FILE is JSONL: each record's KEY is an item", NULL, IG_FIELD_SHELL},
    {"items", IG_FIELD_TEXTS, offsetof(ig_contam_opts, items), 0, 0, "TEXT", NULL, "the eval items (a list of strings)",
     NULL, IG_FIELD_HTTP},
    {"eval_dataset", IG_FIELD_TEXT, offsetof(ig_contam_opts, eval_dataset), 0, 0, "NAME", NULL,
     "the eval items are the documents of dataset NAME (built; over HTTP, one the server serves)", NULL, 0},
    {"n", IG_FIELD_UINT, offsetof(ig_contam_opts, n), 1, 1000000, "N", "13",
     "n-gram size: words (split at white space, searched joined by single spaces), or bytes for byte n-grams", NULL, 0},
    {"bytes", IG_FIELD_BOOL, offsetof(ig_contam_opts, bytes), 0, 0, NULL, NULL, "byte n-grams instead of word n-grams",
     NULL, 0},
    {"lowercase", IG_FIELD_BOOL, offsetof(ig_contam_opts, lowercase), 0, 0, NULL, NULL,
     "lowercase the items first (the index is not case-folded: their n-grams then match lowercase corpus text only)",
     NULL, 0},
    {"threshold", IG_FIELD_DOUBLE, offsetof(ig_contam_opts, threshold), 0, 1, "T", "0.8",
     "an item is contaminated when at least this share of its n-grams occur", NULL, 0},
    {"partial", IG_FIELD_DOUBLE, offsetof(ig_contam_opts, partial), 0, 1, "P", "0.2",
     "partly contaminated: at least this share (below the threshold)", NULL, 0},
    {"list", IG_FIELD_UINT, offsetof(ig_contam_opts, list), 0, 1000000000, "K", "20",
     "items listed (those with the highest overlap, in item order)", NULL, IG_FIELD_SHELL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_contam_defaults(ig_contam_opts *o)
{
    memset(o, 0, sizeof *o);
    ig_fields_defaults(ig_contam_fields, o, NULL);
}

/* What counting one item's n-grams needs. */
typedef struct item_run {
    const ig_op_ctx *ctx;
    ig_contam_item *it;
    igi_gramset *distinct;
    uint64_t searches;
} item_run;

static int count_gram(void *user, const uint8_t *g, size_t len, ig_error *err)
{
    item_run *r = user;
    if (ig_cancelled(r->ctx->cancel))
        return ig_error_set(err, IG_ECANCELLED, "cancelled");
    r->it->ngrams++;
    r->searches++;
    if (ig_count(r->ctx->idx, g, len))
        r->it->matched++;
    return igi_gramset_add(r->distinct, g, len, NULL, err);
}

/* The longest substring of text that occurs in the corpus (max of the matching
 * statistics), its count and its first occurrence in corpus order. */
static int longest_match(const ig_op_ctx *ctx, const uint8_t *text, size_t len, ig_contam_item *it, uint64_t *searches,
                         ig_error *err)
{
    if (!len)
        return 0;
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = UINT64_MAX; /* the statistics only, no spans */
    so.cancel = ctx->cancel;
    ig_span *sp = NULL;
    size_t nsp = 0;
    uint64_t *ms = NULL, s = 0;
    int rc = ig_spans(ctx->idx, text, len, &so, &sp, &nsp, &ms, &s, err);
    free(sp);
    *searches += s;
    if (rc)
        return rc;
    for (size_t i = 0; i < len; i++)
        if (ms[i] > it->longest) {
            it->longest = ms[i];
            it->longest_start = i;
        }
    free(ms);
    if (!it->longest)
        return 0;
    const uint8_t *p = text + it->longest_start;
    size_t n = (size_t)it->longest;
    ig_pos pos;
    if (!ig_positions(ctx->idx, p, n, &pos, 1, &it->longest_count))
        return ig_error_set(err, IG_EINTERNAL, "a match of the item was not found again");
    if ((rc = ig_locate(ctx->idx, pos, NULL, &it->source, err)))
        return rc;
    if (!(it->longest_text = malloc(n)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    memcpy(it->longest_text, p, n);
    return 0;
}

static int contam_compute(const ig_op_ctx *ctx, const ig_contam_opts *o, ig_contam_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, "contam", err))
        return IG_EUSAGE;
    ig_index_info einfo = {0};
    if (o->eval_index)
        ig_index_get_info(o->eval_index, &einfo);
    if (o->eval_index && o->items.n)
        return ig_error_set(err, IG_EUSAGE, "give {items} or {eval_dataset}, not both");
    if (o->eval_dataset.p && !o->eval_index)
        return ig_error_set(err, IG_EUSAGE, "{eval_dataset}: the dataset is not open");
    size_t nitems = o->eval_index ? (size_t)einfo.documents : o->items.n;
    if (!nitems)
        return ig_error_set(err, IG_EUSAGE, o->eval_index ? "{eval_dataset}: the dataset has no documents"
                                                          : "{items}: the eval set is empty");
    if (o->n < 1)
        return ig_error_set(err, IG_EUSAGE, "{n} must be at least 1");
    if (o->partial > o->threshold)
        return ig_error_set(err, IG_EUSAGE, "{partial} (%g) is above {threshold} (%g)", o->partial, o->threshold);
    r->total = nitems;
    if (!(r->items = calloc(nitems, sizeof *r->items)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    igi_gramset distinct = {0};
    ig_buf scratch = {0}, low = {0};
    int rc = 0, eval_folded = 0;
    uint8_t *orig = NULL; /* an item's original text, from a case-folded eval dataset */
    if (o->eval_index) {
        ig_index_info ei;
        ig_index_get_info(o->eval_index, &ei);
        eval_folded = ei.casefold;
    }
    for (size_t i = 0; i < nitems && !rc; i++) {
        ig_contam_item *it = &r->items[i];
        it->line = o->lines ? o->lines[i] : 0;
        uint8_t *norm = NULL;
        const uint8_t *text;
        size_t len;
        if (o->eval_index) { /* a document of the eval dataset, read in place */
            ig_doc doc;
            if ((rc = ig_doc_get(o->eval_index, i, &doc, err)))
                break;
            len = (size_t)doc.length;
            text = ig_text(o->eval_index, doc.shard, doc.start, &len);
            if (eval_folded) { /* its original text: the corpus's own rules make it what the corpus holds */
                size_t olen = 0;
                if ((rc = ig_text_original(o->eval_index, doc.shard, doc.start, len, &orig, &olen, NULL, err)))
                    break;
                text = orig;
                len = olen;
            }
            it->doc = i;
            it->line = doc.source_line;
        } else {
            text = o->items.v[i].p;
            len = o->items.v[i].n;
        }
        if (memchr(text, 0xFF, len)) { /* it would match the end of documents */
            rc = ig_error_set(err, IG_EUSAGE, "{items}: item %zu holds the byte 0xFF, which no text holds", i + 1);
            break;
        }
        if (!o->normalized) {
            if ((rc = ig_query_normalize(ctx->idx, text, len, &norm, &len, err)))
                break;
            text = norm;
        }
        if (o->lowercase) {
            low.len = 0;
            if ((rc = igi_lowercase(text, len, &low, err))) {
                free(norm);
                break;
            }
            text = low.data ? low.data : text;
            len = low.len;
        }
        item_run ir = {ctx, it, &distinct, 0};
        rc = igi_ngrams_each(text, len, o->n, o->bytes, &scratch, count_gram, &ir, &it->words, err);
        r->searches += ir.searches;
        if (!rc)
            rc = longest_match(ctx, text, len, it, &r->searches, err);
        free(norm);
        if (rc == IG_ECANCELLED) {
            /* the item cut short is not reported */
            free(it->longest_text);
            memset(it, 0, sizeof *it);
            r->cancelled = 1;
            rc = 0;
            break;
        }
        if (rc)
            break;
        it->overlap = it->ngrams ? (double)it->matched / (double)it->ngrams : 0;
        r->ngrams += it->ngrams;
        if (it->ngrams && it->overlap >= o->threshold)
            r->contaminated++;
        else if (it->ngrams && it->overlap >= o->partial)
            r->partly++;
        r->nitems = i + 1;
    }
    free(orig);
    r->distinct = distinct.n;
    igi_gramset_free(&distinct);
    ig_buf_free(&scratch);
    ig_buf_free(&low);
    if (rc) {
        ig_contam_result_free(r);
        return rc;
    }
    r->bloom_bits = IG_BFF_FILTER_BYTES * 8;
    r->bloom_k = ig_bloom_bff_k(r->bloom_bits, IG_BFF_EXPECTED_NGRAMS);
    r->bloom_fpr_log10 = ig_bloom_fpr_log10(r->bloom_bits, r->bloom_k, (double)r->distinct);
    r->bloom_fpr = pow(10.0, r->bloom_fpr_log10);
    return 0;
}

/* The result's memory; ig_contam_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void contam_release(ig_contam_result *r)
{
    for (size_t i = 0; r->items && i < r->total; i++)
        free(r->items[i].longest_text);
    free(r->items);
}

char *ig_contam_json(const ig_op_ctx *ctx, const ig_contam_opts *o, const ig_contam_result *r)
{
    cJSON *j = igi_jw_result(ctx);
    cJSON_AddStringToObject(j, "source", o->label ? o->label : o->eval_index ? "eval_dataset" : "items");
    if (o->eval_dataset.p)
        igi_jw_bytes(j, "eval_dataset", o->eval_dataset.p, o->eval_dataset.n);
    igi_jw_u64(j, "n", o->n);
    cJSON_AddStringToObject(j, "unit", o->bytes ? "bytes" : "words");
    cJSON_AddBoolToObject(j, "lowercase", o->lowercase);
    IGI_JW_NUMS(j, {"threshold", o->threshold}, {"partial", o->partial});
    cJSON *arr = cJSON_AddArrayToObject(j, "items");
    for (size_t i = 0; i < r->nitems; i++) {
        const ig_contam_item *it = &r->items[i];
        cJSON *x = igi_jw_item(arr);
        igi_jw_u64(x, "item", i + 1);
        if (o->eval_index)
            igi_jw_u64(x, "eval_doc", it->doc);
        if (it->line)
            igi_jw_u64(x, "line", it->line);
        igi_jw_u64(x, o->bytes ? "bytes" : "words", it->words);
        igi_jw_u64(x, "ngrams", it->ngrams);
        igi_jw_u64(x, "in_corpus", it->matched);
        cJSON_AddNumberToObject(x, "overlap", it->overlap);
        cJSON_AddStringToObject(x, "verdict",
                                !it->ngrams                     ? "clean"
                                : it->overlap >= o->threshold ? "contaminated"
                                : it->overlap >= o->partial   ? "partly"
                                                              : "clean");
        cJSON *lm = cJSON_AddObjectToObject(x, "longest_match");
        igi_jw_u64(lm, "bytes", it->longest);
        if (it->longest) {
            igi_jw_u64(lm, "start", it->longest_start);
            igi_jw_u64(lm, "count", it->longest_count);
            igi_jw_bytes(lm, "text", it->longest_text, (size_t)it->longest);
            igi_jw_put(lm, "source", igi_jw_location_object(ctx->idx, &it->source));
        }
    }
    cJSON *s = cJSON_AddObjectToObject(j, "summary");
    IGI_JW_U64S(s, {"items", r->total}, {"done", r->nitems}, {"contaminated", r->contaminated}, {"partly", r->partly},
                {"ngrams", r->ngrams}, {"distinct_ngrams", r->distinct}, {"searches", r->searches});
    cJSON *b = cJSON_AddObjectToObject(j, "bloom");
    igi_jw_u64(b, "bits", (uint64_t)r->bloom_bits);
    igi_jw_u64(b, "hashes", (uint64_t)r->bloom_k);
    igi_jw_u64(b, "elements", r->distinct);
    cJSON_AddNumberToObject(b, "false_positive_rate", r->bloom_fpr);
    if (isfinite(r->bloom_fpr_log10))
        cJSON_AddNumberToObject(b, "false_positive_rate_log10", r->bloom_fpr_log10);
    else
        cJSON_AddNullToObject(b, "false_positive_rate_log10");
    cJSON_AddBoolToObject(j, "cancelled", r->cancelled);
    return igi_jw_members(j);
}

IG_DEFINE_OP(contam, ig_contam_opts, ig_contam_result);
