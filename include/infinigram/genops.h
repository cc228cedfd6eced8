/*
 * The generation operations: generate (sampled text with a summary of where it came
 * from) and explain (why a model predicts what it predicts: the n-gram profile, each
 * level's share, and the corpus positions behind each candidate). Typed like every engine
 * operation (fields.h); both take the shared model fields (modelops.h).
 */
#ifndef IG_GENOPS_H
#define IG_GENOPS_H

#include <stddef.h>
#include <stdint.h>
#include "fields.h"
#include "generate.h"
#include "modelops.h"

/* ---- generate ---- */
/** "No seed given: draw one". */
#define IG_SEED_RANDOM UINT64_MAX

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
    /** Not a field: called once with the (normalised) prompt when generation starts, then
     *  with each stretch of text that can no longer be withdrawn by a stop string, as it is
     *  produced (may be NULL). */
    void (*on_text)(void *user, const uint8_t *p, size_t n);
    void *user;
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
    uint64_t median_effective_n;
    uint64_t longest_span;     ///< longest stretch of text found verbatim in the corpus
    int has_source;
    ig_location longest_source; ///< where that stretch first occurs
    double inside_spans_20;    ///< share of text inside corpus spans of 20 bytes or more
} ig_generate_result;

IG_API void ig_generate_defaults(ig_generate_opts *o);
IG_API int ig_generate_run(const ig_op_ctx *ctx, const ig_generate_opts *o, ig_generate_result *r, ig_error *err);
IG_API char *ig_generate_json(const ig_op_ctx *ctx, const ig_generate_opts *o, const ig_generate_result *r);
IG_API void ig_generate_result_free(ig_generate_result *r);
IG_API extern const ig_field ig_generate_fields[];
IG_API extern const ig_op ig_op_generate;

/* ---- explain ---- */
typedef struct ig_explain_opts {
    ig_bytes query;       ///< the context
    ig_model_opts model;
    uint64_t step;        ///< shell only: the N-th character of the last generation
    int last;             ///< shell only: the prediction after the last generation
    uint64_t positions;   ///< corpus occurrences per candidate (default 3)
    uint64_t top;         ///< candidates explained (default 5)
    uint64_t width;       ///< snippet bytes on each side (default 24)
    int bytes;
    /** Not fields: set by a face that explains a generation step (model then ignored). */
    const ig_model *use_model;
    const ig_gen_step *chosen;
} ig_explain_opts;

typedef struct ig_explain_row {
    uint64_t length, count, continue_count; ///< ℓ, cnt(suf(ℓ)), cnt(suf(ℓ)·focus)
} ig_explain_row;

typedef struct ig_explain_source {
    ig_location loc;
    char *snippet;        ///< suffix then candidate highlighted: [hl[0],hl[1]) and [hl[1],hl[2]) (malloc'd)
    size_t hl[3];
} ig_explain_source;

typedef struct ig_explain_cand {
    ig_symbol sym;
    double *level_prob;   ///< per level of the distribution (when it has more than one; malloc'd)
    uint64_t matched;     ///< length of the suffix its positions follow (ℓ*, or shorter)
    ig_explain_source *sources; ///< malloc'd
    size_t nsources;
    uint64_t total;       ///< all occurrences of suffix·candidate
} ig_explain_cand;

typedef struct ig_explain_result {
    uint8_t *context;     ///< malloc'd
    size_t clen;
    ig_model model;
    ig_dist dist;
    ig_symbol *syms;      ///< malloc'd
    size_t nsyms;
    double unseen;
    int sparse;
    int has_chosen;
    ig_gen_step chosen;
    uint8_t focus[4];     ///< the symbol the profile follows: the chosen one, else the most probable
    int flen;             ///< 0: no profile
    ig_explain_row *profile; ///< ℓ = 1..ℓ* (malloc'd)
    size_t nprofile;
    ig_explain_cand *cands; ///< the top candidates (malloc'd)
    size_t ncands;
} ig_explain_result;

IG_API void ig_explain_defaults(ig_explain_opts *o);
IG_API int ig_explain_run(const ig_op_ctx *ctx, const ig_explain_opts *o, ig_explain_result *r, ig_error *err);
IG_API char *ig_explain_json(const ig_op_ctx *ctx, const ig_explain_opts *o, const ig_explain_result *r);
IG_API void ig_explain_result_free(ig_explain_result *r);
IG_API extern const ig_field ig_explain_fields[];
IG_API extern const ig_op ig_op_explain;

#endif
