/*
 * Contamination: how much of an evaluation set occurs verbatim in the corpus. Each eval
 * item is cut into n-grams — by default word n-grams as the Big Friendly Filter (BFF)
 * counts them: n = 13 words split at white space, an item "contaminated" when at least
 * 80% of its n-grams occur — and every n-gram is counted exactly in the index (no Bloom
 * filter). A word n-gram is searched as its words joined by single spaces, so it does not
 * match corpus text where the same words are separated by a newline, a tab or several
 * spaces, and a word keeps the punctuation attached to it ("thou," is not "thou").
 * Items with fewer than n words are one n-gram of all their words. For comparison the
 * result gives the false-positive rate a Bloom filter of the size of BFF's documented
 * example would have had on the same distinct n-grams.
 *
 * Also here: reading an eval set (one item per non-empty line, or a JSONL field).
 */
#ifndef IG_CONTAM_H
#define IG_CONTAM_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "fields.h"
#include "index.h"

IG_BEGIN_DECLS

/** BFF's defaults: n-gram size (words) and the share of a document's n-grams that must
 *  occur for it to be removed. */
#define IG_CONTAM_N 13
#define IG_CONTAM_THRESHOLD 0.8
/** Items at or above this overlap (and below the threshold) are "partly" contaminated. */
#define IG_CONTAM_PARTIAL 0.2

/** BFF has no built-in filter size: its README's examples use a 256 GiB filter sized for
 *  10^9 n-grams, which makes k = ceil(m/n · ln 2) = 1525 hash functions. Those are the
 *  figures compared against. */
#define IG_BFF_FILTER_BYTES 274877906944.0
#define IG_BFF_EXPECTED_NGRAMS 1000000000.0

/** log10 of the false-positive rate (1 − e^(−k·n/m))^k of a Bloom filter of m bits and k
 *  hash functions holding n distinct elements (−inf when n = 0). */
IG_API double ig_bloom_fpr_log10(double m_bits, double k, double n);
/** The k BFF picks for a filter of m bits expecting n elements: ceil(m/n · ln 2). */
IG_API double ig_bloom_bff_k(double m_bits, double expected);

/**
 * Reads an eval set: each non-empty line of `path` is an item, or with `field` each JSONL
 * record's string `field` (records whose field is empty are skipped). Validated as UTF-8
 * (errors name the file, line and offset) and NFC-normalised when `normalize`. items->v[i]
 * are malloc'd (free with ig_eval_set_free); lines[i] (malloc'd) is the item's 1-based line.
 * An eval set without items is IG_EUSAGE.
 */
IG_API int ig_eval_set_load(const char *path, const char *field, int normalize, ig_texts *items, uint64_t **lines,
                            ig_error *err);
IG_API void ig_eval_set_free(ig_texts *items, uint64_t *lines);

/* ---- contam ---- */
typedef struct ig_contam_opts {
    ig_bytes file;        ///< shell only: the eval set file (the shell fills items)
    ig_bytes field;       ///< shell only: the JSONL key of FILE's items
    ig_texts items;       ///< the eval items (over HTTP: "items": [...])
    ig_bytes eval_dataset; ///< or: the documents of this dataset are the items (the face opens it)
    uint64_t n;           ///< n-gram size in words, or bytes with `bytes` (default 13)
    int bytes;            ///< byte n-grams instead of word n-grams
    int lowercase;        ///< lowercase the items before cutting them
    double threshold;     ///< contaminated at overlap >= threshold (default 0.8)
    double partial;       ///< partly at overlap >= partial (default 0.2)
    uint64_t list;        ///< shell: items listed (default 20)
    /** Not fields: the source named in results, each item's line in it (may be NULL), and
     *  whether the items are already normalised like the index's sources. */
    const char *label;
    const uint64_t *lines;
    int normalized;
    /** Not a field: the index of eval_dataset, opened by the face (the shell from its catalog,
     *  the server among the datasets it serves); its documents are the items. */
    const ig_index *eval_index;
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_contam_opts;

typedef struct ig_contam_item {
    uint64_t line;        ///< line in the eval set (0 when items came inline; a document's source line)
    uint64_t doc;         ///< with eval_index: the item's document id there
    uint64_t words;       ///< white-space-separated words (bytes with --bytes)
    uint64_t ngrams;      ///< n-grams (with repetition)
    uint64_t matched;     ///< of them, those occurring in the corpus
    double overlap;       ///< matched / ngrams (0 without n-grams)
    uint64_t longest;     ///< longest substring of the item occurring in the corpus, bytes
    uint64_t longest_start; ///< its offset in the (normalised, lowercased) item
    uint64_t longest_count; ///< its occurrences
    uint8_t *longest_text; ///< its bytes (malloc'd; NULL when longest is 0)
    ig_location source;   ///< its first occurrence in corpus order (valid when longest > 0)
} ig_contam_item;

typedef struct ig_contam_result {
    ig_contam_item *items; ///< one per item done (malloc'd)
    size_t nitems;        ///< items done (all unless cancelled)
    size_t total;         ///< items given
    uint64_t contaminated, partly;
    uint64_t ngrams;      ///< n-grams of all items done (with repetition)
    uint64_t distinct;    ///< distinct n-grams among them
    uint64_t searches;    ///< counts made in the index
    double bloom_bits, bloom_k, bloom_fpr_log10, bloom_fpr; ///< BFF's filter on `distinct` n-grams
    int cancelled;        ///< stopped by the cancel flag: the figures cover nitems items
} ig_contam_result;

IG_API void ig_contam_defaults(ig_contam_opts *o);
IG_API int ig_contam_run(const ig_op_ctx *ctx, const ig_contam_opts *o, ig_contam_result *r, ig_error *err);
/** JSON members: dataset, source, n, unit, threshold, partial, items [...], summary, bloom.
 *  malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_contam_json(const ig_op_ctx *ctx, const ig_contam_opts *o, const ig_contam_result *r);
IG_API void ig_contam_result_free(ig_contam_result *r);
IG_API extern const ig_field ig_contam_fields[];
IG_API extern const ig_op ig_op_contam;

IG_END_DECLS

#endif
