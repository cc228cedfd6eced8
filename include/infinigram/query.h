/*
 * Queries over a loaded index: find and count a string, list its positions in corpus
 * order and locate them (document, line, column); maximal matching spans of a text in
 * the corpus with their sources (ranked by BM25 on request) and the text's novelty; CNF
 * document search. Then the typed query operations built on them — count, spans,
 * search, doc — each with an options struct (defaults from its *_defaults function,
 * described by its field table for the shell and HTTP codecs), a result struct and one
 * JSON writer.
 *
 * Queries are exact bytes: a NUL is text like any other byte. Queries are normalised
 * as the index's sources were (NFC unless the dataset kept its bytes) before searching,
 * and results report the normalised query.
 */
#ifndef IG_QUERY_H
#define IG_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include "fields.h"
#include "index.h"

IG_BEGIN_DECLS

/* ---------------------------------------------------------------- find, count, positions, locate */

/**
 * Matches never span documents: a pattern may contain 0xFF only as its last byte
 * ("... then the document ends"); any other 0xFF makes the count 0, whatever the
 * shard layout.
 *
 * Finds `pattern` (any bytes, len may be 0) in every shard. `ranges` must hold
 * info.shards entries; ranges[s] receives shard s's interval. Returns the total count
 * (sum over shards), never negative.
 */
IG_API uint64_t ig_find(const ig_index *idx, const uint8_t *pattern, size_t len, ig_range *ranges);

/** Number of occurrences of `pattern`; len 0 gives info.bytes (0 for a NULL index). */
IG_API uint64_t ig_count(const ig_index *idx, const uint8_t *pattern, size_t len);

/**
 * The first `max` occurrences of `pattern` in corpus order (shard, then offset) are
 * written to `out` (caller-owned, `max` entries). Returns how many were written
 * (min(count, max)); *total (if non-NULL) receives the count. Cost O(count · log max).
 */
IG_API size_t ig_positions(const ig_index *idx, const uint8_t *pattern, size_t len,
                           ig_pos *out, size_t max, uint64_t *total);

/** Suffix-array entry `row` of shard `shard` (a text offset). Unchecked, for inner loops:
 *  shard must be below the index's shard count and row below the shard's bytes (the range
 *  ig_find gave). */
IG_API uint64_t ig_sa_at(const ig_index *idx, uint32_t shard, uint64_t row);

/**
 * Resolves a position to document, line and column. Lines and columns count from 1 at the
 * document start: only '\n' ends a line, a column counts characters (UTF-8 lead bytes). A
 * position inside a multi-byte character keeps its byte offset and has the column of the
 * character holding it (on a case-folded index the offset is the original byte's where
 * folding left the character alone, else the character's start). `hint` (may be NULL) is a
 * previous result for a position at or before `pos` in the same document, which makes
 * resolving sorted positions linear overall. Nothing is allocated; `out->name` points into
 * the index.
 */
IG_API int ig_locate(const ig_index *idx, ig_pos pos, const ig_location *hint,
                     ig_location *out, ig_error *err);

/** Global document id of a position into *doc (no line/column work): 0, or -1 for a position
 *  outside the index (no message: it takes no ig_error). */
IG_API int ig_locate_doc(const ig_index *idx, ig_pos pos, uint64_t *doc);

/* ---------------------------------------------------------------- spans */

/** A maximal matching span of a text. */
typedef struct ig_span {
    uint64_t start;        ///< byte offset in the text
    uint64_t length;       ///< bytes
    uint64_t count;        ///< occurrences in the corpus
} ig_span;

typedef struct ig_span_options {
    uint64_t min_len;      ///< minimum span length in bytes (default 8)
    uint64_t max_count;    ///< keep spans occurring at most this often (0 = no limit)
    int words;             ///< trim spans inward to word boundaries, then recount
    const volatile int *cancel; ///< polled; set: IG_ECANCELLED (may be NULL)
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_span_options;

/** Sets the defaults: min_len 8, no count limit, no word trimming, no cancel flag. */
IG_API void ig_span_options_default(ig_span_options *o);

/**
 * Matching statistics m(i) (longest prefix of text[i..] occurring) for every i, with
 * O(|text|) pattern searches in total (m(i+1) ≥ m(i) − 1), then the maximal spans that
 * pass the filters, in order of start. *ms (may be NULL; malloc'd) receives m(i);
 * *searches (may be NULL) the number of pattern searches made.
 */
IG_API int ig_spans(const ig_index *idx, const uint8_t *text, size_t len, const ig_span_options *o,
                    ig_span **spans, size_t *nspans, uint64_t **ms, uint64_t *searches, ig_error *err);

/** The count of text[start, start + length) in the caller's corpus, into *count; 0 or an
 *  error, which ig_spans_from_matching returns. */
typedef int (*ig_span_count_fn)(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err);

/**
 * The second half of ig_spans, for matching statistics found elsewhere (a corpus split into
 * parts: m(i) is then the largest of the parts'): the candidate spans (cut to words if
 * asked, at least min_len), each counted by `count` in order of start, filtered by
 * max_count, then the maximal ones. count may be NULL when max_count is 0: the counts are
 * then 0 for the caller to fill. *spans is malloc'd (the caller's). IG_ECANCELLED, or
 * count's error.
 */
IG_API int ig_spans_from_matching(const uint8_t *text, size_t len, const uint64_t *ms, const ig_span_options *o,
                                  ig_span_count_fn count, void *user, ig_span **spans, size_t *nspans, ig_error *err);

/** The pattern searches ig_spans makes for these matching statistics (what it reports in
 *  *searches): at each i that is not already covered to the text's end, one search for
 *  L + 1 bytes (L = m(i−1) − 1, or 0), and when it succeeds one more per byte up to the
 *  one that fails or the text's end: 1 + (m(i) − L − 1) + [i + m(i) < |text|]. */
IG_API uint64_t ig_spans_searches(const uint64_t *ms, size_t len);

/** Fraction of bytes not covered by any span of length ≥ n, from m(i). */
IG_API double ig_novelty(const uint64_t *ms, size_t len, uint64_t n);

/* ---------------------------------------------------------------- search */

/** A document matching a CNF query. */
typedef struct ig_search_hit {
    uint64_t doc;
    uint64_t hits;         ///< term occurrences in the document (all clauses)
    ig_pos first;          ///< first hit (corpus position)
    uint32_t first_len;    ///< length of the first hit's term
} ig_search_hit;

typedef struct ig_search_result {
    uint64_t documents_total; ///< matching documents (estimated when approximate)
    int approximate;       ///< a clause was sampled
    double scale;          ///< factor applied to sampled counts (1 when exact)
    size_t nhits;
    ig_search_hit *hits;   ///< the page [offset, offset+limit) in document order (owned)
} ig_search_result;

IG_API void ig_search_result_free(ig_search_result *r);

/**
 * CNF query: `query` is clauses[c] = terms (each terms[c][t] of lens[c][t] bytes).
 * within = 0: no proximity; else all clauses need hits within `within` bytes in the
 * same document. budget: occurrences enumerated per clause before sampling (0 = no
 * limit).
 */
IG_API int ig_search(const ig_index *idx, const uint8_t *const *const *terms, const size_t *const *lens,
                     const size_t *nterms, size_t nclauses, uint64_t within, uint64_t budget, uint64_t offset,
                     uint64_t limit, ig_search_result *r, ig_error *err);

/**
 * The same for one part of a corpus split into parts: `totals` (nclauses entries) are the
 * whole corpus's occurrences of each clause, which set the order the clauses are taken in
 * (rarest first) and each one's sampling step, as one index of the corpus would; *processed
 * gets how many clauses were taken before no document was left (nclauses when some are
 * left). r->approximate and r->scale are then those of this part alone: the corpus's come
 * from ig_search_sampling with the largest *processed of the parts. `cancel` (may be NULL)
 * is polled while occurrences are enumerated and documents matched: once it is set the search
 * stops with IG_ECANCELLED and *r empty (a search of a frequent term with no budget reads
 * every one of its rows).
 */
IG_API int ig_search_part(const ig_index *idx, const uint8_t *const *const *terms, const size_t *const *lens,
                          const size_t *nterms, size_t nclauses, uint64_t within, uint64_t budget, uint64_t offset,
                          uint64_t limit, const uint64_t *totals, size_t *processed, const volatile int *cancel,
                          ig_search_result *r, ig_error *err);

/** The most occurrences one search reads, summed over its clauses (each clause's rows after
 *  its sampling): 16 bytes each while the search runs, so about 512 MiB at most. A search
 *  past it fails naming {budget} (a smaller budget samples each clause more). */
#define IG_SEARCH_MAX_ROWS ((uint64_t)1 << 25)

/** Whether a search whose clauses occur totals[c] times, of which the first `processed` in
 *  rarest-first order (ties in clause order) were taken, sampled (*approximate) and by how much
 *  its counts are scaled (*scale: the largest total / rows read of a sampled clause, a clause
 *  read every ⌈total / budget⌉-th row past the budget; 1 when exact). */
IG_API void ig_search_sampling(const uint64_t *totals, size_t nclauses, uint64_t budget, size_t processed,
                               int *approximate, double *scale);

/* ---------------------------------------------------------------- the query operations */

/** One listed occurrence: where it is, and a one-line snippet around it. */
typedef struct ig_occurrence {
    ig_pos pos;
    ig_location loc;      ///< loc.name is owned by the index
    char *snippet;        ///< display text (malloc'd), NULL when it could not be made
    size_t hl0, hl1;      ///< the match is snippet[hl0, hl1)
    uint64_t length;      ///< bytes of the match in the document, from loc.offset: on a case-folded
                          ///< index the original text's, which folding may lengthen or shorten; on a
                          ///< token index, tokens
    double score;         ///< relevance when sources are ranked (spans --rank bm25), else 0
    uint64_t duplicates;  ///< ranked: other documents with identical text, folded into this one
} ig_occurrence;

/* ---- count ---- */
typedef struct ig_count_opts {
    ig_bytes query;       ///< the text to count (the empty text counts every indexed byte)
    uint64_t positions;   ///< list the first K occurrences in corpus order (default 0)
    uint64_t width;       ///< snippet bytes on each side of a listed occurrence (default 30; tokens
                          ///< on a token dataset)
    ig_bytes ids;         ///< token dataset: the pattern as comma-separated token ids ("5613,4086")
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_count_opts;

typedef struct ig_count_result {
    uint8_t *query;       ///< the normalised query (malloc'd)
    size_t qlen;
    uint64_t count;
    ig_occurrence *occ;   ///< the first min(positions, count) occurrences (malloc'd)
    size_t nocc;
} ig_count_result;

IG_API void ig_count_defaults(ig_count_opts *o);
IG_API int ig_count_run(const ig_op_ctx *ctx, const ig_count_opts *o, ig_count_result *r, ig_error *err);
/** JSON members: dataset, query (or query_hex), count, positions. malloc'd. NULL when memory ran out. */
IG_API char *ig_count_json(const ig_op_ctx *ctx, const ig_count_opts *o, const ig_count_result *r);
IG_API void ig_count_result_free(ig_count_result *r);
/** The pattern p[0, len) (exact bytes: not normalised, 0xFF allowed) in ctx's index: its
 *  count into *total and its first min(k, count) occurrences in corpus order into *out
 *  (malloc'd; free with ig_occurrences_free; loc.name is the index's), each with a snippet
 *  of `width` bytes a side unless width is negative. What count, spans and explain list;
 *  a corpus split into parts lists each part's and keeps the first. Polls ctx's cancel. */
IG_API int ig_occurrences(const ig_op_ctx *ctx, const uint8_t *p, size_t len, size_t k, long width, ig_occurrence **out,
                          size_t *n, uint64_t *total, ig_error *err);
IG_API void ig_occurrences_free(ig_occurrence *occ, size_t n);
IG_API extern const ig_field ig_count_fields[];
IG_API extern const ig_op ig_op_count;

/* ---- spans ---- */
typedef struct ig_spans_opts {
    ig_bytes query;       ///< the text to trace
    uint64_t min_len;     ///< shortest span reported, bytes (default 8)
    uint64_t max_count;   ///< only spans occurring at most this often (0: any)
    int words;            ///< cut spans to whole words
    uint64_t positions;   ///< occurrences listed per span, the first in corpus order (default 3)
    int last;             ///< shell only: trace the last generation (the shell fills query)
    int rank;             ///< IG_RANK_*: how each span's sources are ordered (default corpus order)
    uint64_t candidates;  ///< ranked: occurrences of a span considered, in corpus order (default 256)
    double k1, b;         ///< ranked: BM25 parameters (defaults IG_BM25_K1, IG_BM25_B)
    ig_bytes ids;         ///< token dataset: the token ids to trace (spans then start and last in tokens)
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_spans_opts;

/** The most occurrences one spans request lists over all its spans (each span lists
 *  min(its count, positions), or min(its count, candidates) when ranked): about 100 MB. */
#define IG_SPANS_MAX_LISTED 1000000

/** Orders of a span's sources: corpus order, or by BM25 relevance of each document to the
 *  whole traced text (documents with identical text folded into the first). */
enum { IG_RANK_NONE, IG_RANK_BM25 };

typedef struct ig_spans_result {
    uint8_t *text;        ///< the normalised text (malloc'd)
    size_t len;
    ig_span *spans;       ///< in order of start (malloc'd)
    size_t nspans;
    ig_occurrence **sources; ///< per span: its first `positions` occurrences (no snippet)
    size_t *nsources;
    uint64_t *totals;     ///< per span: all its occurrences
    double novelty;       ///< share of bytes not inside a span of min_len or more
    uint64_t searches;    ///< pattern searches made
} ig_spans_result;

IG_API void ig_spans_defaults(ig_spans_opts *o);
/** Every span's occurrences are held at once (ranking compares them across spans): the
 *  spans' listed occurrences, min(count, positions) each (candidates when ranked), are
 *  bounded by IG_SPANS_MAX_LISTED before any is listed, so that no text makes a request take
 *  unbounded memory. 0, or IG_EUSAGE saying so. */
IG_API int ig_spans_check_listed(const ig_spans_opts *o, const ig_span *spans, size_t n, ig_error *err);
IG_API int ig_spans_run(const ig_op_ctx *ctx, const ig_spans_opts *o, ig_spans_result *r, ig_error *err);
/** A candidate source document of spans --rank bm25: its id and score, and what tells identical
 *  texts apart (hash and len as ig_bm25_doc has them, and the bytes, which may be NULL unless
 *  another candidate has the same hash and len). */
typedef struct ig_rank_cand {
    uint64_t id;
    double score;
    uint64_t hash, len;
    const uint8_t *text;
} ig_rank_cand;
/** Ranks every span's sources (r->sources, each span's first candidates in corpus order) as
 *  spans --rank bm25 does: one occurrence per document, documents of identical text folded into
 *  the first (its `duplicates` counts the others), best score first then corpus order, the
 *  first `keep` kept. c[0, n) (sorted by id) holds every document the sources name. IG_ENOMEM. */
IG_API int ig_spans_rank(ig_spans_result *r, const ig_rank_cand *c, size_t n, size_t keep, ig_error *err);
/** JSON members: dataset, spans [{start, length, count, text|text_hex, sources}], novelty,
 *  searches. malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_spans_json(const ig_op_ctx *ctx, const ig_spans_opts *o, const ig_spans_result *r);
IG_API void ig_spans_result_free(ig_spans_result *r);
IG_API extern const ig_field ig_spans_fields[];
IG_API extern const ig_op ig_op_spans;

/* ---- BM25 relevance of documents to a text ---- */
#define IG_BM25_K1 1.2
#define IG_BM25_B 0.75

/**
 * Makes the index's BM25 statistics (each document's length in terms, each term's
 * document frequency) unless they are ready: read from the index directory's "bm25" file
 * when it is sound, else counted in one pass over the text (polling cancel) and written
 * there for next time when the directory is writable. Thread-safe; later calls return at
 * once. IG_ENOMEM, IG_ECANCELLED.
 */
IG_API int ig_bm25_prepare(const ig_index *idx, const volatile int *cancel, ig_error *err);

/**
 * scores[j] = BM25 relevance of document docs[j] to text[0, len) (both caller-owned, n
 * entries), with
 *   idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)) and
 *   score(d) = sum over the text's terms t (with repetition) of
 *              idf(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl)),
 * N documents, avgdl their mean length in terms. Reads each document once (polling
 * cancel); prepares the statistics first if needed. IG_ENOTFOUND for a bad document id.
 */
IG_API int ig_bm25_scores(const ig_index *idx, const uint8_t *text, size_t len, const uint64_t *docs, size_t n,
                          double k1, double b, const volatile int *cancel, double *scores, ig_error *err);

/* ---- BM25 over a corpus split into parts (one per machine) ----
 * Documents never cross parts, so the corpus's statistics are the sums of the parts': its
 * documents, its terms, and each term's document frequency. Each part reports them for the
 * terms of a text (ig_bm25_part_get), which are summed (ig_bm25_part_add); the part holding a
 * document reports its length in terms and how often each term of the text occurs in it
 * (ig_bm25_docs_get); ig_bm25_score then gives the score ig_bm25_scores gives on one index of
 * all the parts, to the bit (both compute it with the same code). */
typedef struct ig_bm25_part {
    uint64_t docs;        ///< documents
    uint64_t total_terms; ///< terms in them (with repetition)
    size_t nterms;        ///< the text's distinct terms, in the order of their first occurrence
    uint32_t *qf;         ///< [nterms] occurrences of each in the text (malloc'd)
    uint64_t *df;         ///< [nterms] documents containing each (malloc'd)
} ig_bm25_part;
/** This index's statistics for the terms of text[0, len) (prepared as ig_bm25_prepare does).
 *  *out is the caller's: ig_bm25_part_free. IG_ENOMEM, IG_ECANCELLED. */
IG_API int ig_bm25_part_get(const ig_index *idx, const uint8_t *text, size_t len, const volatile int *cancel,
                            ig_bm25_part *out, ig_error *err);
/** to += from (the same text): documents, terms and frequencies summed. IG_EUSAGE when the two
 *  are not of the same text's terms. */
IG_API int ig_bm25_part_add(ig_bm25_part *to, const ig_bm25_part *from, ig_error *err);
IG_API void ig_bm25_part_free(ig_bm25_part *p);

/** One document as BM25 and the folding of identical sources read it. */
typedef struct ig_bm25_doc {
    uint64_t id;          ///< its id in the index it was got from (a corpus in parts renumbers it)
    uint32_t dl;          ///< its length in terms (as the statistics hold it)
    uint64_t hash, len;   ///< a 64-bit hash of its bytes and their number: identical texts have equal ones
    uint32_t *tf;         ///< [nterms] occurrences of each term of the text in it (malloc'd)
} ig_bm25_doc;
/** Documents docs[0, n) of this index for the terms of text[0, len) (nterms of them, as
 *  ig_bm25_part_get gives): out[0, n) is the caller's, freed with ig_bm25_docs_free.
 *  IG_ENOTFOUND for a bad id, IG_ENOMEM, IG_ECANCELLED. */
IG_API int ig_bm25_docs_get(const ig_index *idx, const uint8_t *text, size_t len, const uint64_t *docs, size_t n,
                            const volatile int *cancel, ig_bm25_doc *out, ig_error *err);
IG_API void ig_bm25_docs_free(ig_bm25_doc *d, size_t n);
/** The BM25 score of a document (its length dl and term frequencies tf[corpus->nterms]) with
 *  the corpus's statistics `corpus`: the formula of ig_bm25_scores. */
IG_API double ig_bm25_score(const ig_bm25_part *corpus, uint32_t dl, const uint32_t *tf, double k1, double b);

/* ---- CNF queries ---- */
/** Caps on a CNF query, so that parsing and evaluation stay bounded. */
#define IG_CNF_MAX_CLAUSES 256
#define IG_CNF_MAX_TERMS 1024

/** A parsed CNF query: an AND of clauses, each an OR of terms (exact bytes). */
typedef struct ig_cnf {
    size_t nclauses;
    size_t *nterms;            ///< per clause
    const uint8_t ***terms;    ///< terms[c][t], pointing into the query's own copy
    size_t **lens;             ///< lens[c][t]
} ig_cnf;

/**
 * Parses the query language: clauses joined by AND (or written side by side), each a
 * term or a parenthesised OR of terms; a term is a quoted string ("…" with the escapes
 * \n \t \\ \" \xHH) or a bare word. At most IG_CNF_MAX_CLAUSES clauses and
 * IG_CNF_MAX_TERMS terms in all. Memory is proportional to the query's length. On error
 * *err_at (may be NULL) gets the byte offset of the mistake in q. Free with ig_cnf_free.
 */
IG_API int ig_cnf_parse(const uint8_t *q, size_t n, ig_cnf **out, size_t *err_at, ig_error *err);
IG_API void ig_cnf_free(ig_cnf **cnf);

/* ---- search ---- */
typedef struct ig_search_opts {
    ig_bytes query;       ///< the CNF query text (a term the same as another of its clause once normalised is searched once)
    uint64_t within;      ///< all clauses within W bytes of each other (0: anywhere in the document)
    uint64_t limit;       ///< documents listed (default 10)
    uint64_t offset;      ///< matching documents skipped
    uint64_t budget;      ///< occurrences enumerated per clause before sampling (default 20000000; 0: no limit)
    uint64_t width;       ///< snippet bytes on each side (default 30)
    /** Not a field: a part of a corpus split into parts (may be NULL): the corpus's clause
     *  totals it searches by, and where the number of clauses it took is written
     *  (ig_search_part). */
    struct ig_search_plan *plan;
    uint8_t reserved[8];  ///< zero (the defaults function clears it): room for options to come
} ig_search_opts;

/** See ig_search_opts.plan. */
typedef struct ig_search_plan {
    const uint64_t *totals; ///< the corpus's occurrences of each clause (NULL: this index's)
    size_t processed;       ///< out: clauses taken (ig_search_part)
} ig_search_plan;

/** The occurrences of each clause of o->query in ctx's index (its terms normalised as search
 *  normalises them): *totals (malloc'd) of *n entries, what ig_search_plan.totals sums over the
 *  parts. Errors as search's. */
IG_API int ig_search_clause_totals(const ig_op_ctx *ctx, const ig_search_opts *o, uint64_t **totals, size_t *n,
                                   ig_error *err);

typedef struct ig_search_doc {
    ig_search_hit hit;
    ig_location loc;      ///< of the first hit
    char *snippet;        ///< around the first hit (malloc'd), NULL if unavailable
    size_t hl0, hl1;
} ig_search_doc;

typedef struct ig_search_op_result {
    uint64_t documents_total; ///< matching documents (estimated when approximate)
    int approximate;
    double scale;
    ig_search_doc *docs;  ///< the page, in document order (malloc'd)
    size_t ndocs;
} ig_search_op_result;

IG_API void ig_search_defaults(ig_search_opts *o);
IG_API int ig_search_run(const ig_op_ctx *ctx, const ig_search_opts *o, ig_search_op_result *r, ig_error *err);
/** JSON members: dataset, documents_total, approximate, scale, documents (each doc, name,
 *  hits, hits_estimated when sampled, first_line or first_token_offset, source_line, and
 *  snippet with hl0/hl1, the first match's byte range in it). malloc'd (the caller frees
 *  it); NULL when memory ran out. */
IG_API char *ig_search_json(const ig_op_ctx *ctx, const ig_search_opts *o, const ig_search_op_result *r);
IG_API void ig_search_op_result_free(ig_search_op_result *r);
IG_API extern const ig_field ig_search_fields[];
/** A document's hits: counted, or when the result is approximate, estimated from the
 *  sample (hits × scale, rounded). */
IG_API uint64_t ig_search_hits_estimate(const ig_search_op_result *r, const ig_search_doc *d);
IG_API extern const ig_op ig_op_search;

/* ---- doc ---- */
typedef struct ig_doc_opts {
    ig_bytes query;       ///< a document id, or a name (the whole name or its last component) that is unique
    ig_bytes lines;       ///< "A:B": lines A to B-1, 1-based; either side may be empty
    ig_bytes range;       ///< "A:B": bytes A to B-1 of the document's indexed text, whole characters only
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_doc_opts;

typedef struct ig_doc_result {
    ig_doc doc;           ///< doc.name is owned by the index
    const uint8_t *text;  ///< the selected bytes, inside the index's mapping (or `owned`)
    uint64_t offset;      ///< of text within the document
    size_t len;
    uint64_t first_line;  ///< the line number of text's first line
    uint8_t *owned;       ///< case-folded indexes: the document's original bytes, which `text`
                          ///< points into (doc.length is then their number); token indexes: the
                          ///< document's tokens shown through the vocabulary
    uint64_t tokens;      ///< token indexes: the document's tokens ({range} and offset count them)
} ig_doc_result;

IG_API void ig_doc_defaults(ig_doc_opts *o);
/** A range boundary that falls inside a character moves to that character's edge so that
 *  only whole characters are selected (the start forward, the end back). */
IG_API int ig_doc_run(const ig_op_ctx *ctx, const ig_doc_opts *o, ig_doc_result *r, ig_error *err);
/** How doc reads its query: *numeric = 1 for 1 to 20 digits (a document id, into *id), else 0
 *  (a name). IG_ENOTFOUND for an id past 2^64. */
IG_API int ig_doc_query_id(const ig_bytes *q, int *numeric, uint64_t *id, ig_error *err);
/** Documents whose name, or its last path component, is name[0, n): how many (*count) and the
 *  first (*first, UINT64_MAX when none). IG_ENOTFOUND for a name with a NUL byte. Reads
 *  every document's name. */
IG_API int ig_doc_find_name(const ig_index *idx, const uint8_t *name, size_t n, uint64_t *first, uint64_t *count,
                            ig_error *err);
/** The document doc's query by name resolves to, from ig_doc_find_name's answer over the whole
 *  corpus (over several parts: the counts summed, the first of the first part that has one
 *  offset by the documents before it): *id, or doc's error (IG_ENOTFOUND: none; IG_EUSAGE:
 *  several). */
IG_API int ig_doc_name_pick(const uint8_t *name, size_t n, uint64_t first, uint64_t count, uint64_t *id,
                            ig_error *err);
/** JSON members: doc, name, bytes, first_line, offset, text (or text_hex). malloc'd. NULL when memory ran out. */
IG_API char *ig_doc_json(const ig_op_ctx *ctx, const ig_doc_opts *o, const ig_doc_result *r);
IG_API void ig_doc_result_free(ig_doc_result *r);
IG_API extern const ig_field ig_doc_fields[];
IG_API extern const ig_op ig_op_doc;

/* ---- snippets ---- */
/** One-line display text of the document around [pos, pos+len1+len2): `width` bytes on
 *  each side, never crossing the document or cutting a character (a match that starts or
 *  ends inside a character widens to its edges); newlines shown as ↵, tabs and carriage
 *  returns as a space, other control bytes as '.', a byte that is no part of a whole UTF-8 character as U+FFFD, an ellipsis where
 *  the document goes on: always valid UTF-8. The two parts are snippet[hl[0], hl[1]) and
 *  [hl[1], hl[2]). Lengths and width past the document are clipped to it. malloc'd; NULL
 *  on error. */
IG_API char *ig_snippet(const ig_index *idx, ig_pos pos, size_t len1, size_t len2, size_t width, size_t hl[3]);

IG_END_DECLS

#endif
