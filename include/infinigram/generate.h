/*
 * Generation, explanation and attribution: sampling text from any model one step (one
 * character) at a time, so a front end can stream and cancel; the evidence behind a
 * prediction (the n-gram profile and corpus positions of each candidate); maximal
 * matching spans of a text in the corpus (OLMoTrace-style, with matching statistics);
 * and CNF document search.
 */
#ifndef IG_GENERATE_H
#define IG_GENERATE_H

#include <stdint.h>
#include <stddef.h>
#include "error.h"
#include "index.h"
#include "model.h"

/* ---------------------------------------------------------------- generation */

typedef struct ig_gen_options {
    ig_model model;        ///< any model (generate defaults to interp K = 2)
    double temperature;    ///< 0 = greedy; else p ∝ p^(1/T) (default 1)
    uint32_t top_k;        ///< keep the k most probable bytes (0 = all)
    double top_p;          ///< nucleus: smallest set with mass ≥ p (1 = all)
    uint64_t seed;         ///< same seed, index and options ⇒ same bytes
    uint64_t max_chars;    ///< characters to generate (prompt excluded; default 200)
    int stop_at_end;       ///< stop at <end> (default 1); 0 removes <end> and renormalises
    const char *const *stop; ///< stop strings (matched in generated text only)
    size_t nstop;
    uint8_t reserved[32];
} ig_gen_options;

IG_API void ig_gen_options_default(ig_gen_options *o);

typedef enum ig_stop_reason {
    IG_STOP_NONE = 0,      ///< not stopped: a character was produced
    IG_STOP_MAX,           ///< max_chars reached
    IG_STOP_STOP,          ///< a stop string was generated (it is not part of the text)
    IG_STOP_END,           ///< <end> was sampled
    IG_STOP_NO_CONTINUATION, ///< the model gives no next byte
    IG_STOP_CANCELLED,     ///< set by the caller
} ig_stop_reason;

/** Contract names: "max", "stop", "end", "no_continuation", "cancelled". */
IG_API const char *ig_stop_reason_name(int r);

/** Evidence of one generated character. */
typedef struct ig_gen_step {
    uint8_t bytes[4];      ///< the character (valid UTF-8)
    uint8_t len;
    double prob;           ///< model probability of these bytes (before temperature/top-k/p)
    uint64_t effective_n;  ///< 1 + ℓ* at the character's first byte
    uint64_t suffix_count; ///< cnt(suf(ℓ*)) there
    int sparse;            ///< one possible next byte there
    ig_pos source;         ///< a corpus occurrence of suf(ℓ*)·byte: position of the byte
    int has_source;
} ig_gen_step;

typedef struct ig_gen ig_gen;

/** Starts a generation after `prompt`. The options (and stop strings) are copied. */
IG_API int ig_gen_start(ig_gen **out, const ig_index *idx, const ig_gen_options *o, const uint8_t *prompt,
                        size_t len, ig_error *err);

/**
 * Produces the next character into *step and returns IG_STOP_NONE (0), or a positive
 * ig_stop_reason when generation is over (nothing produced), or a negative error.
 * When a stop string completes, the characters of the match are withdrawn: use
 * ig_gen_text for the final text.
 */
IG_API int ig_gen_next(ig_gen *g, ig_gen_step *step, ig_error *err);

/** Generated text so far (prompt excluded, matched stop string removed). */
IG_API const uint8_t *ig_gen_text(const ig_gen *g, size_t *len);
/**
 * Bytes at the end of the generated text that may still turn out to be the start of a
 * stop string (and be withdrawn): a front end that streams shows everything but these.
 */
IG_API size_t ig_gen_held(const ig_gen *g);

/** Characters generated so far (as counted for max_chars). */
IG_API uint64_t ig_gen_chars(const ig_gen *g);
IG_API uint64_t ig_gen_seed(const ig_gen *g);
IG_API void ig_gen_free(ig_gen **g);

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
} ig_span_options;

/**
 * Matching statistics m(i) (longest prefix of text[i..] occurring) for every i, with
 * O(|text|) pattern searches in total (m(i+1) ≥ m(i) − 1), then the maximal spans that
 * pass the filters, in order of start. *ms (may be NULL; malloc'd) receives m(i);
 * *searches (may be NULL) the number of pattern searches made.
 */
IG_API int ig_spans(const ig_index *idx, const uint8_t *text, size_t len, const ig_span_options *o,
                    ig_span **spans, size_t *nspans, uint64_t **ms, uint64_t *searches, ig_error *err);

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

#endif
