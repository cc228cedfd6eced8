/*
 * explain: why a model predicts what it predicts — the n-gram profile (for each suffix
 * length, how often the context's suffix occurs and how often the chosen or most
 * probable symbol follows it), each level's share of the distribution, and the corpus
 * positions behind each candidate, with snippets. A typed operation (fields.h) taking the
 * shared model fields (model.h); a face that explains a step of a generation passes the
 * step and its model.
 */
#ifndef IG_EXPLAIN_H
#define IG_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>
#include "fields.h"
#include "generate.h"
#include "index.h"
#include "model.h"

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
    ig_bytes ids;         ///< token dataset: the context as comma-separated token ids
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
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
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_explain_json(const ig_op_ctx *ctx, const ig_explain_opts *o, const ig_explain_result *r);
IG_API void ig_explain_result_free(ig_explain_result *r);
IG_API extern const ig_field ig_explain_fields[];
IG_API extern const ig_op ig_op_explain;

#endif
