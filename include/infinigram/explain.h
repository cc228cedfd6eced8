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
#include "query.h"

IG_BEGIN_DECLS

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

/** A generation kept by a face between commands, for explain --step N / --last (and spans
 *  --last): the dataset it read, its resolved model, its prompt, the text it produced and one
 *  step per character. All owned; zero-initialise, release with ig_generation_clear. */
typedef struct ig_generation {
    char *dataset;         ///< NULL: no generation yet
    ig_model model;
    uint8_t *prompt, *text;
    size_t plen, tlen;
    ig_gen_step *steps;
    size_t nsteps;
} ig_generation;

/** Keeps r's prompt, text and steps in *g (moved out of r; what g held is released) as a
 *  generation of `dataset`. IG_ENOMEM leaves g empty and r as it was. */
IG_API int ig_generation_keep(ig_generation *g, const char *dataset, ig_generate_result *r, ig_error *err);
IG_API void ig_generation_clear(ig_generation *g);

/** Points o at generation g for o->step (its N-th character) or o->last: the query becomes
 *  the prompt and the text before that character (all of it for last), chosen the drawn step
 *  (step only) and use_model g's model (borrowed: g must outlive the run). IG_EUSAGE when
 *  o->step is past the generation's characters, IG_ENOMEM. */
IG_API int ig_explain_follow(ig_explain_opts *o, const ig_generation *g, ig_error *err);

IG_API void ig_explain_defaults(ig_explain_opts *o);
IG_API int ig_explain_run(const ig_op_ctx *ctx, const ig_explain_opts *o, ig_explain_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_explain_json(const ig_op_ctx *ctx, const ig_explain_opts *o, const ig_explain_result *r);
IG_API void ig_explain_result_free(ig_explain_result *r);
IG_API extern const ig_field ig_explain_fields[];
IG_API extern const ig_op ig_op_explain;

/* ---- explain over a corpus split into parts ----
 * After the corpus's distribution (ig_predict_from_parts: its ℓ* L, its levels, its top
 * candidates and the symbol in focus), every count explain reads is a sum over the parts,
 * and a candidate's sources are the first occurrences, in corpus order, of the longest
 * suffix (at most L) it follows anywhere: the parts' largest. Lengths are in tokens on a
 * token dataset, else in bytes. */

/** This part's profile rows for ℓ = 1..L of context[0, clen) (the suffix's count and the
 *  suffix·focus count) into rows[0, L), summed over the parts by the caller. IG_ECANCELLED
 *  (ctx's cancel flag), IG_ENOMEM, IG_EUSAGE when L is past the context. */
IG_API int ig_explain_profile_part(const ig_op_ctx *ctx, const uint8_t *context, size_t clen, uint64_t L,
                                   const uint8_t *focus, size_t flen, ig_explain_row *rows, ig_error *err);

/** What one part says of one candidate. */
typedef struct ig_explain_part_cand {
    uint64_t *level_counts; ///< per level (when there are several): suffix·candidate's count (malloc'd)
    uint64_t matched;       ///< the longest suffix, at most L, the candidate follows in this part
    uint64_t total;         ///< occurrences of that suffix·candidate here
    ig_occurrence *occ;     ///< their first `positions` (ig_occurrences: no snippet; names the index's)
    size_t nocc;
    /** the same occurrences as sources with their snippets (ig_explain_part_sources makes
     *  them; malloc'd, freed with the part), or NULL */
    ig_explain_source *sources;
} ig_explain_part_cand;

/** Candidate s after context[0, clen) in ctx's index: the levels' lengths are lens[0,
 *  nlevels) (counted when there are several; the end of a document counts 0 when
 *  end_excluded, as SBI levels leave it out). *out: free with ig_explain_part_cand_free.
 *  IG_ENOMEM, IG_EUSAGE (a length past the context). */
IG_API int ig_explain_cand_part(const ig_op_ctx *ctx, const uint8_t *context, size_t clen, uint64_t L,
                                const uint64_t *lens, size_t nlevels, int end_excluded, const ig_symbol *s,
                                uint64_t positions, ig_explain_part_cand *out, ig_error *err);
IG_API void ig_explain_part_cand_free(ig_explain_part_cand *p);

/** Makes p's occurrences sources with their snippets in p->sources: the suffix matched, then
 *  candidate s, with `width` bytes (tokens, on a token dataset) a side, highlighted as
 *  ig_explain_source says. *spent (the caller's, 0 at first) adds each one's cost: its match,
 *  twice the width and 512 bytes, as count's listing counts it, or the bytes the snippet came
 *  to and 512 when more; past 256 MiB in all, IG_EUSAGE naming {positions} (checked before
 *  any snippet is made, and as each is). IG_ENOMEM; IG_ECORRUPT when the index read badly. */
IG_API int ig_explain_part_sources(const ig_op_ctx *ctx, ig_explain_part_cand *p, const ig_symbol *s, uint64_t width,
                                   uint64_t *spent, ig_error *err);
/** The same bound over the sources r's candidates kept, once parts are merged (each part
 *  bounds its own; together they may pass it): 0, or IG_EUSAGE naming {positions}. */
IG_API int ig_explain_sources_check(const ig_explain_result *r, uint64_t width, ig_error *err);

/** Adds part p's answer to candidate c (parts in corpus order, `first` for the first; its
 *  documents numbered doc_base more): its level counts summed into counts[0, nlevels), the
 *  matched length the parts' largest, the total and the first `positions` sources those of
 *  the parts where the candidate follows that suffix. Locations are copied: their names stay
 *  the caller's; snippets (p->sources) are copied into c's own. IG_ENOMEM. */
IG_API int ig_explain_cand_add(ig_explain_cand *c, uint64_t *counts, size_t nlevels, const ig_explain_part_cand *p,
                               int first, uint64_t doc_base, uint64_t positions, ig_error *err);

/** Every candidate's level shares from the summed counts (r->ncands × r->dist.nlevels, row
 *  by candidate): the level's coefficient × count, as one index computes them. IG_ENOMEM. */
IG_API int ig_explain_level_probs(ig_explain_result *r, const uint64_t *counts, ig_error *err);

IG_END_DECLS

#endif
