/*
 * Generation: sampling text from any model one step (one character) at a time, so a
 * front end can stream and cancel, and the generate operation (sampled text with a
 * summary of where it came from: effective n, the longest verbatim span, the share of
 * the output inside corpus spans), typed like every engine operation (fields.h).
 */
#ifndef IG_GENERATE_H
#define IG_GENERATE_H

#include <stdint.h>
#include <stddef.h>
#include "error.h"
#include "index.h"
#include "fields.h"
#include "model.h"
#include "query.h"

IG_BEGIN_DECLS

/* ---------------------------------------------------------------- generation */

typedef struct ig_gen_options {
    ig_model model;        ///< any model (generate defaults to interp K = 2)
    double temperature;    ///< 0 = greedy; else p ∝ p^(1/T) (default 1)
    uint32_t top_k;        ///< keep the k most probable bytes (0 = all)
    double top_p;          ///< nucleus: smallest set with mass ≥ p (1 = all)
    uint64_t seed;         ///< same seed, index and options ⇒ same bytes
    uint64_t max_chars;    ///< characters to generate (prompt excluded; default 200)
    int stop_at_end;       ///< stop at <end> (default 1); 0 removes <end> and renormalises
    const char *const *stop; ///< stop strings (matched in generated text only; normalised as queries are)
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

/** Contract names: "max", "stop", "end", "no_continuation", "cancelled" (static strings). */
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

/** Starts a generation after `prompt`. The options (and stop strings) are copied; *out is the
 *  caller's, freed with ig_gen_free. It reads idx at every step: free it before closing idx. */
IG_API int ig_gen_start(ig_gen **out, const ig_index *idx, const ig_gen_options *o, const uint8_t *prompt,
                        size_t len, ig_error *err);

/**
 * Produces the next character into *step and returns IG_STOP_NONE (0), or a positive
 * ig_stop_reason when generation is over (nothing produced), or a negative error.
 * When a stop string completes, the characters of the match are withdrawn: use
 * ig_gen_text for the final text.
 */
IG_API int ig_gen_next(ig_gen *g, ig_gen_step *step, ig_error *err);

/** Generated text so far (prompt excluded, matched stop string removed); owned by the
 *  generator, valid until its next step or ig_gen_free. */
IG_API const uint8_t *ig_gen_text(const ig_gen *g, size_t *len);
/**
 * Bytes at the end of the generated text that may still turn out to be the start of a
 * stop string (and be withdrawn): a front end that streams shows everything but these.
 */
IG_API size_t ig_gen_held(const ig_gen *g);

/** The distribution of `model` after text[0, len), from wherever the caller's corpus is (the
 *  parts of a corpus spread over several machines: ig_predict_from_parts). *d is the caller's
 *  to fill (cleared first; its old levels may be freed with ig_dist_free); 0 or an error. */
typedef int (*ig_gen_predict_fn)(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d,
                                 ig_error *err);
/** From now on g takes each step's distribution from fn instead of its index, which then only
 *  normalises stop strings (give ig_gen_start an index normalising as the corpus does). Steps
 *  have no source then (has_source 0). The draws are the index's to the bit when fn returns
 *  what ig_predict would over the whole corpus. */
IG_API void ig_gen_set_predictor(ig_gen *g, ig_gen_predict_fn fn, void *user);

/** Characters generated so far (as counted for max_chars). */
IG_API uint64_t ig_gen_chars(const ig_gen *g);
IG_API uint64_t ig_gen_seed(const ig_gen *g);
IG_API void ig_gen_free(ig_gen **g);

/* ---------------------------------------------------------------- the generate operation */
/** "No seed given: draw one". */
#define IG_SEED_RANDOM UINT64_MAX

/** What the generate operation reads of the corpus when it is not the context's index: a
 *  corpus split into parts (each hook answers for the whole corpus; the context's index then
 *  only normalises text). */
typedef struct ig_gen_backend {
    ig_gen_predict_fn predict;   ///< each step's distribution (ig_gen_set_predictor)
    /** Matching statistics of text[0, len): (*ms)[i], malloc'd, is the length of the longest
     *  prefix of text[i..] that occurs (ig_spans' m(i)). */
    int (*matching)(void *user, const uint8_t *text, size_t len, uint64_t **ms, ig_error *err);
    /** The first occurrence of p[0, len) in corpus order, located into *loc (loc->name must
     *  stay valid until the result is written); *found = 0 when there is none. */
    int (*first)(void *user, const uint8_t *p, size_t len, ig_location *loc, int *found, ig_error *err);
    void *user;
} ig_gen_backend;

typedef struct ig_generate_opts {
    ig_bytes query;       ///< the prompt (may be empty)
    ig_model_opts model;  ///< no model option: interpolation over 2 levels
    double temperature;   ///< 0 = greedy (default 1)
    uint64_t top_k;       ///< 0: all
    double top_p;         ///< default 1
    uint64_t seed;        ///< IG_SEED_RANDOM: drawn from the system
    uint64_t max;         ///< characters to generate (default 200)
    ig_texts stop;        ///< stop strings (not part of the text)
    int no_stop_at_end;
    ig_bytes ids;         ///< token dataset: the prompt as comma-separated token ids
    /** Not a field: called once with the (normalised) prompt when generation starts, then
     *  with each stretch of text that can no longer be withdrawn by a stop string, as it is
     *  produced (may be NULL). */
    void (*on_text)(void *user, const uint8_t *p, size_t n);
    void *user;
    /** Not a field: the corpus, when it is not ctx->idx (may be NULL). */
    const ig_gen_backend *backend;
    uint8_t reserved[8];  ///< zero (the defaults function clears it): room for options to come
} ig_generate_opts;

typedef struct ig_generate_result {
    uint8_t *prompt;      ///< normalised (malloc'd)
    size_t plen;
    uint8_t *text;        ///< the generated text, stop strings withdrawn (malloc'd)
    size_t len;
    uint64_t chars, seed;
    int stop_reason;      ///< ig_stop_reason
    ig_model model;       ///< the model used
    ig_gen_step *steps;   ///< one per character of text (malloc'd)
    size_t nsteps;
    uint64_t median_effective_n; ///< of the steps' effective n; of an even count, the upper middle one
    uint64_t longest_span;     ///< longest stretch of text found verbatim in the corpus
    int has_source;
    ig_location longest_source; ///< where that stretch first occurs
    double inside_spans_20;    ///< share of text inside corpus spans of 20 bytes or more
} ig_generate_result;

IG_API void ig_generate_defaults(ig_generate_opts *o);
IG_API int ig_generate_run(const ig_op_ctx *ctx, const ig_generate_opts *o, ig_generate_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_generate_json(const ig_op_ctx *ctx, const ig_generate_opts *o, const ig_generate_result *r);
IG_API void ig_generate_result_free(ig_generate_result *r);
IG_API extern const ig_field ig_generate_fields[];
IG_API extern const ig_op ig_op_generate;

IG_END_DECLS

#endif
