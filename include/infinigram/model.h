/*
 * Language models over an index: the ∞-gram (longest matching suffix), fixed n-grams,
 * Laplace smoothing, hierarchical weighted mixtures of per-length distributions,
 * selective back-off interpolation (with the exact published SBI conventions as a
 * mode), Stupid Backoff scores, the chain-rule probability of a continuation, and
 * evaluation on held-out text. Everything is exact: next-byte histograms come from
 * suffix-array sub-intervals (never from sampling or visiting every occurrence).
 *
 * The byte 0xFF in distributions is the end-of-document symbol (shown as <end>).
 * A context is the bytes after its last 0xFF, if any (documents are independent).
 */
#ifndef IG_MODEL_H
#define IG_MODEL_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include "error.h"
#include "fields.h"
#include "index.h"

IG_BEGIN_DECLS

typedef enum ig_model_kind {
    IG_MODEL_INFGRAM = 0,  ///< P(b|c) = cnt(suf(ℓ*)·b) / cnt(suf(ℓ*))
    IG_MODEL_NGRAM,        ///< fixed n: suffix length n−1, no backoff
    IG_MODEL_WEIGHTED,     ///< Σ_ℓ w(ℓ)·P_ℓ(b) / Σ w(ℓ), ℓ in [min_len, min(max_len, ℓ*)]
    IG_MODEL_INTERP,       ///< selective back-off interpolation over k kept levels
} ig_model_kind;

typedef enum ig_weight_fn {
    IG_WEIGHT_LINEAR = 0,  ///< w = ℓ
    IG_WEIGHT_QUADRATIC,   ///< w = ℓ²
    IG_WEIGHT_EXPONENTIAL, ///< w = β^ℓ (computed scaled so the largest weight is 1: no overflow)
    IG_WEIGHT_SIGMOID,     ///< w = 1 / (1 + e^(−s(ℓ−m)))
} ig_weight_fn;

/** Model selection and parameters; start from ig_model_default. */
typedef struct ig_model {
    ig_model_kind kind;
    uint32_t n;            ///< NGRAM: n ≥ 1 (n = 1 is the unigram)
    double alpha;          ///< Laplace α ≥ 0 for INFGRAM and NGRAM (0 = none)
    ig_weight_fn weight;   ///< WEIGHTED
    double beta;           ///< exponential base (default 2)
    double sig_mid;        ///< sigmoid m (default 5)
    double sig_slope;      ///< sigmoid s (default 1)
    uint32_t min_len;      ///< WEIGHTED: shortest length (default 1)
    uint32_t max_len;      ///< WEIGHTED: longest length (0 = no cap)
    int interp_k;          ///< INTERP: levels kept (−1 = all; ≥ 1 otherwise)
    int sbi;               ///< INTERP: the published SBI conventions (end of document not counted; share/doc/models.md)
    int64_t max_context;   ///< bytes of context used (−1 = unlimited)
    double factor;         ///< Stupid Backoff λ (default 0.4)
    uint64_t threshold;    ///< Stupid Backoff τ (default 1)
    /** Polled by the model's own loops (may be NULL, the default): a mixture's or a back-off's
     *  walk over suffix lengths costs a search per length, and a context the corpus holds
     *  for hundreds of kilobytes has that many. Once set, they stop with IG_ECANCELLED. Not a
     *  parameter of the model: never part of its name or its answers. */
    const volatile int *cancel;
    uint8_t reserved[24];
} ig_model;

IG_API void ig_model_default(ig_model *m);

/** Checks parameters (IG_EUSAGE with the offending one named). */
IG_API int ig_model_check(const ig_model *m, ig_error *err);

/** One component of a mixture: the next-byte histogram at suffix length `length`. */
typedef struct ig_level {
    uint64_t length;       ///< suffix length ℓ
    uint64_t total;        ///< Σ count (SBI: without <end>)
    uint64_t suffix_count; ///< cnt(suf(ℓ))
    double coef;           ///< P(b) gets coef · count[b] ...
    double denom;          ///< ... or, when > 0, count[b] / denom (exact for one level)
    uint64_t count[256];   ///< next-byte counts (SBI: count[0xFF] = 0)
} ig_level;

/** A next-byte distribution with the evidence behind it. Free with ig_dist_free. */
typedef struct ig_dist {
    double prob[256];      ///< P(next byte); all 0 when !defined
    uint64_t count[256];   ///< raw counts at the longest suffix used (ℓ* or n−1)
    uint64_t suffix_count; ///< cnt of that suffix
    uint64_t length;       ///< that suffix's length (effective n = length + 1)
    uint64_t longest;      ///< ℓ*: longest suffix of the (capped) context that occurs
    uint64_t context_used; ///< bytes of context considered (after cap and last 0xFF)
    int defined;           ///< 0 when no estimate exists (n-gram context unseen; no level)
    int fallback;          ///< WEIGHTED: no length in range, ∞-gram used instead
    int end_excluded;      ///< SBI: <end> is not a symbol of the levels
    double smooth[256];    ///< Laplace: probability mass each byte gets from α
    size_t nlevels;        ///< mixture components (1 for ∞-gram/n-gram)
    ig_level *levels;      ///< owned
    size_t levels_cap;     ///< allocated entries of levels
} ig_dist;

IG_API void ig_dist_free(ig_dist *d);

/**
 * Next-byte distribution of `model` after context `ctx`. Never fails for valid input;
 * a context the corpus has never seen gives ℓ* = 0 (the unigram for ∞-gram). *out is
 * overwritten whole, not freed: ig_dist_free a distribution before passing it again.
 */
IG_API int ig_predict(const ig_index *idx, const ig_model *model, const uint8_t *ctx,
                      size_t len, ig_dist *out, ig_error *err);

/** Longest suffix of ctx[0..len) that occurs, capped at `cap` (−1: none); its count. */
IG_API uint64_t ig_longest_suffix(const ig_index *idx, const uint8_t *ctx, size_t len,
                                  int64_t cap, uint64_t *count);

/** A character (or byte) candidate of a distribution. */
typedef struct ig_symbol {
    uint8_t bytes[4];      ///< the symbol's bytes (0xFF alone = <end>)
    uint8_t len;           ///< 1..4
    uint64_t count;        ///< raw count at the longest level
    double prob;
} ig_symbol;

/**
 * The distribution as symbols, most probable first (ties by bytes). chars = 1 merges
 * multi-byte UTF-8 characters exactly (P(char) refines each level's lead-byte interval
 * by its continuation bytes); chars = 0 gives bytes. Smoothing mass on bytes that were
 * never seen is returned in *unseen (may be NULL). *out is malloc'd.
 */
IG_API int ig_dist_symbols(const ig_index *idx, const ig_dist *d, const uint8_t *ctx,
                           size_t len, int chars, ig_symbol **out, size_t *n,
                           double *unseen, ig_error *err);

/**
 * The k most probable characters after ctx[0, len) as the model generates them, most probable
 * first (ties by bytes): a character's probability is the product of its bytes' probabilities,
 * the model read again after each byte, as generation, ig_prob and eval read it. For a
 * mixture this differs from ig_dist_symbols on multi-byte characters (which keeps the levels
 * chosen at the lead byte); for the ∞-gram and the n-gram the two agree. Only well-formed
 * UTF-8 characters are listed (never the end of a document); ctx should end at a character's
 * boundary. At most `budget` distributions are computed (the first is the one after ctx): the
 * search is best-first and stops at the k-th character, and when the budget runs out first
 * fewer are listed, still the most probable in order. Symbols' counts are 0. *out is malloc'd
 * (NULL when none). IG_ENOMEM; IG_ECANCELLED once model->cancel is set.
 */
IG_API int ig_next_chars(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t len, size_t k,
                         size_t budget, ig_symbol **out, size_t *n, ig_error *err);

/* ---- a corpus split into parts (one per machine) ----
 * Documents never cross parts and no match crosses a document's end, so every count of a
 * pattern, every next-byte histogram and every character count is the sum of the parts'. A
 * single-level model (∞-gram, n-gram) over the whole corpus is therefore made from what each
 * part says: ℓ* is the largest of the parts' ig_longest_suffix (a suffix occurs in the corpus
 * when it occurs in some part), then each part's level at that length (ig_part_level_get),
 * summed (ig_part_level_add), gives ig_predict_from_level — the same distribution and the
 * same symbols, to the bit, as ig_predict and ig_dist_symbols on one index of all the parts. */
/** What one part (or the sum of several) says of a context's suffix of length `ell`. */
typedef struct ig_part_level {
    uint64_t ell;          ///< the suffix length
    uint64_t suffix_count; ///< occurrences of the suffix
    uint64_t count[256];   ///< next-byte histogram
    ig_symbol *syms;       ///< character view: every symbol after the suffix with its count (prob unused);
                           ///< malloc'd, NULL in the byte view
    size_t nsyms;
} ig_part_level;
/** The level of length ell of the context ctx[0, len) in this index, the context capped at
 *  `cap` bytes (−1: none) and cut after its last 0xFF as the models cut it (a length beyond
 *  what is left gives an empty level); chars = 1 also lists the symbols of the character view.
 *  Free with ig_part_level_free. IG_ENOMEM. */
IG_API int ig_part_level_get(const ig_index *idx, const uint8_t *ctx, size_t len, int64_t cap, uint64_t ell, int chars,
                             ig_part_level *out, ig_error *err);
/** to += from (same ell, else IG_EUSAGE): counts added, symbols merged. IG_ENOMEM. */
IG_API int ig_part_level_add(ig_part_level *to, const ig_part_level *from, ig_error *err);
IG_API void ig_part_level_free(ig_part_level *l);
/**
 * The distribution of a checked single-level model (IG_MODEL_INFGRAM with `longest` = ℓ*, or
 * IG_MODEL_NGRAM, which reads length n−1: lv->ell must be the length the model reads, else
 * IG_EUSAGE) after ctx[0, len), from the summed level lv: *d as ig_predict gives it, *syms
 * (malloc'd), *nsyms and *unseen as ig_dist_symbols does, *sparse as ig_dist_sparse. lv must
 * have been got with chars set when chars is. On error nothing is left allocated.
 */
IG_API int ig_predict_from_level(const ig_model *model, const uint8_t *ctx, size_t len, uint64_t longest,
                                 const ig_part_level *lv, int chars, ig_dist *d, ig_symbol **syms, size_t *nsyms,
                                 double *unseen, int *sparse, ig_error *err);

/** The count profile of a context in one part (or the sum of several): the suffix lengths at
 *  which the suffix count changes — ℓ*, then each next shorter length with a larger count,
 *  down to the empty suffix's group — with the count there, longest first. The count of any
 *  length is the count at the shortest change point at or above it (0 above ℓ*). */
typedef struct ig_part_profile {
    size_t n;
    uint64_t *ell;         ///< malloc'd, decreasing
    uint64_t *count;       ///< malloc'd, increasing
} ig_part_profile;
/** The profile of ctx[0, len) capped at `cap` bytes (−1: none) in this index: one search for ℓ*
 *  and one per change point. Free with ig_part_profile_free. IG_ENOMEM. */
IG_API int ig_part_profile_get(const ig_index *idx, const uint8_t *ctx, size_t len, int64_t cap, ig_part_profile *out,
                               ig_error *err);
/** to += from: the sum's change points are both profiles' (a sum of non-increasing counts
 *  changes wherever a term does). IG_ENOMEM (to unchanged). */
IG_API int ig_part_profile_add(ig_part_profile *to, const ig_part_profile *from, ig_error *err);
IG_API void ig_part_profile_free(ig_part_profile *p);
/**
 * The distribution of any checked model after ctx[0, len) from the parts of a corpus: `prof`,
 * the sum of the parts' profiles, and levels[i] (i < prof->n), the sum of the parts' levels
 * of length prof->ell[i] (a suffix has the occurrences, hence the continuations, of the
 * shortest change point at or above it, so these are all the levels any model reads: got with
 * chars set when chars is). Outputs as ig_predict_from_level (*d and *syms the caller's,
 * freed with ig_dist_free and free), identical to one index of all the parts. IG_EUSAGE when
 * the levels do not match the profile.
 */
IG_API int ig_predict_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                                 const ig_part_level *levels, int chars, ig_dist *d, ig_symbol **syms, size_t *nsyms,
                                 double *unseen, int *sparse, ig_error *err);

/** One factor of a chain-rule probability. */
typedef struct ig_factor {
    uint8_t bytes[4];
    uint8_t len;
    double prob;           ///< product of the byte factors of this symbol
    uint64_t effective_n;  ///< 1 + suffix length used for its first byte
} ig_factor;

/**
 * P(cont | ctx) by the chain rule over bytes, each factor with its own ℓ*. Factors are
 * grouped into characters when chars = 1 (their product is unchanged). *log2p is
 * −INFINITY when some factor is 0. *factors is malloc'd. Each byte's prediction checks
 * model->cancel (each byte's ℓ* is searched afresh, so a long continuation the corpus holds
 * verbatim takes time quadratic in it): once set, IG_ECANCELLED and nothing returned.
 */
IG_API int ig_prob(const ig_index *idx, const ig_model *model, const uint8_t *ctx,
                   size_t len, const uint8_t *cont, size_t clen, int chars,
                   ig_factor **factors, size_t *nfactors, double *prob, double *log2p,
                   ig_error *err);
/**
 * ig_prob of a single-level model from the parts of a corpus: step i (0 <= i < clen) predicts
 * byte cont[i] after ctx·cont[0, i) from levels[i], the parts' summed level (byte view is
 * enough) at the length the model reads there, and longest[i], the largest of the parts'
 * ig_longest_suffix of that context. Factors, probability and log2 exactly as ig_prob gives
 * them on one index of all the parts. *factors is malloc'd.
 */
IG_API int ig_prob_from_levels(const ig_model *model, const uint8_t *ctx, size_t len, const uint8_t *cont, size_t clen,
                               int chars, const uint64_t *longest, const ig_part_level *levels, ig_factor **factors,
                               size_t *nfactors, double *prob, double *log2p, ig_error *err);

/**
 * ig_prob of any model over a corpus found elsewhere (split into parts): the distribution after
 * ctx·cont[0, i) at each step i comes from predict(user, model, text, n, d, err), which fills the
 * zeroed *d as ig_predict would on one index of all the parts (the caller's to free: ig_prob
 * frees it). Factors, probability and log2 as ig_prob gives them. *factors is malloc'd.
 */
IG_API int ig_prob_with(int (*predict)(void *user, const ig_model *model, const uint8_t *text, size_t n, ig_dist *d,
                                       ig_error *err),
                        void *user, const ig_model *model, const uint8_t *ctx, size_t len, const uint8_t *cont,
                        size_t clen, int chars, ig_factor **factors, size_t *nfactors, double *prob, double *log2p,
                        ig_error *err);


/** A Stupid Backoff candidate. */
typedef struct ig_backoff_cand {
    uint8_t bytes[4];
    uint8_t len;
    double score;          ///< λ^(ℓτ−ℓ) · cnt(suf(ℓ)·x)/cnt(suf(ℓ))
    uint64_t length;       ///< ℓ the score came from (0 = unigram)
    uint64_t count;        ///< cnt(suf(ℓ)·x)
    double normalized;     ///< score / Σ scores
} ig_backoff_cand;

/** Stupid Backoff scores of every symbol seen after any suffix, best first. *ltau = ℓτ.
 *  *out (malloc'd, *n entries) is the caller's to free. */
IG_API int ig_backoff(const ig_index *idx, const ig_model *model, const uint8_t *ctx,
                      size_t len, int chars, ig_backoff_cand **out, size_t *n,
                      uint64_t *ltau, ig_error *err);
/** The suffix lengths whose levels ig_backoff reads, from the summed count profile of the parts
 *  of a corpus (ig_part_profile): ℓτ, then the change points under it. *lens is malloc'd (the
 *  caller frees it). Each level must then be got with the suffix itself as the whole context:
 *  ig_part_level_get(idx, ctx + len − ℓ, ℓ, −1, ℓ, chars, …), then summed over the parts. */
IG_API int ig_backoff_lengths(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                              uint64_t **lens, size_t *n, ig_error *err);
/** ig_backoff from the parts of a corpus: their summed profile and their summed levels at the
 *  lengths ig_backoff_lengths gave (any order, one each). *out (malloc'd, the caller's) and
 *  *ltau exactly as ig_backoff gives them on one index of all the parts. */
IG_API int ig_backoff_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, int chars,
                                 const ig_part_profile *prof, const ig_part_level *levels, size_t nlevels,
                                 ig_backoff_cand **out, size_t *n, uint64_t *ltau, ig_error *err);

/** Evaluation results (bits per byte, perplexity, floored positions, agreement; share/doc/models.md). */
typedef struct ig_eval_result {
    uint64_t scored;       ///< positions scored (position 0 is skipped)
    uint64_t zero_prob;    ///< positions with P = 0, each counted at the floor
    double floor_ln;       ///< ln of the floor probability (ln 1e−10)
    double sum_ln;         ///< Σ ln P over scored positions (floor included)
    double perplexity;     ///< exp(−sum_ln / scored)
    double bits_per_byte;  ///< −sum_ln / (scored · ln 2)
    uint64_t agree;        ///< positions where P∞(true byte) > 0.5
    uint64_t sparse, agree_sparse;       ///< positions whose ∞-gram estimate is sparse
    uint64_t dense, agree_dense;
    uint64_t hist_len;     ///< entries of effective_n_hist
    uint64_t *effective_n_hist; ///< count of positions by effective n (index = n); owned
    int cancelled;         ///< stopped early (the figures cover the positions done)
} ig_eval_result;

IG_API void ig_eval_result_free(ig_eval_result *r);

/** Progress callback for eval: positions done of total; non-zero return cancels. */
typedef int (*ig_eval_progress_fn)(void *user, uint64_t done, uint64_t total);

/**
 * Scores every position i ≥ 1 of text[0..len) given text[max(0, i−L)..i), L =
 * model->max_context (−1 = unlimited, 100 is the SBI convention). Uses `threads`
 * worker threads (≤ 0: one per core). On cancel, returns 0 with r->cancelled = 1.
 */
IG_API int ig_eval(const ig_index *idx, const ig_model *model, const uint8_t *text,
                   size_t len, int threads, ig_eval_progress_fn progress, void *user,
                   const volatile sig_atomic_t *cancel, ig_eval_result *r, ig_error *err);

/** What every model reads of a corpus at one position of an evaluated text, from one part (or
 *  the sum of several): the count profile of the position's context (ig_part_profile: ℓ* and
 *  each shorter length where the suffix count changes, longest first) and, at each of those
 *  lengths, how many occurrences of the suffix are followed by the position's byte and by
 *  <end>. Within a group of lengths of equal suffix count the occurrences are the same ones
 *  (each extends to the longest), so these counts too change only at change points: the count
 *  of any length is that at the shortest change point at or above it (0 above ℓ*). Sums over
 *  the parts of a corpus are therefore the corpus's (ig_eval_levels_add). */
typedef struct ig_eval_levels {
    ig_part_profile prof;  ///< change points and suffix counts (owned)
    uint64_t *next;        ///< [prof.n] occurrences followed by the position's byte (malloc'd)
    uint64_t *end;         ///< [prof.n] followed by <end> (malloc'd)
    int distinct;          ///< distinct bytes following the suffix at ℓ* (prof.ell[0]): 0, 1, or 2 for more
    uint8_t only;          ///< that byte, when distinct is 1
} ig_eval_levels;

/** The shortest length `model` reads at a position (ig_eval_levels_get leaves out the change
 *  points under it): n−1 for the n-gram, {min_len} for the weighted mixture, 1 for interpolation,
 *  UINT64_MAX for the ∞-gram (ℓ* only). */
IG_API uint64_t ig_eval_floor(const ig_model *model);
/** One part's levels of the byte x after the context ctx[0, len) (capped already; cut after its
 *  last 0xFF as the models cut it), with every change point at or above `floor` (ℓ* is always
 *  listed; ig_eval_floor gives a model's). *out is the caller's: ig_eval_levels_free. IG_ENOMEM. */
IG_API int ig_eval_levels_get(const ig_index *idx, const uint8_t *ctx, size_t len, uint8_t x, uint64_t floor,
                              ig_eval_levels *out, ig_error *err);
/** ig_eval_levels_get of every position i in [from, to) of text[0, len) (1 <= from <= to <= len;
 *  its context text[max(0, i−L)..i), L = −1: all) into out[i − from]: what an evaluation reads of
 *  this part, with ℓ* and the change points carried from a position to the next as ig_eval
 *  carries them (the same levels, fewer searches). out[0, to − from) is the caller's
 *  (ig_eval_levels_free each; nothing is left on error). IG_EUSAGE, IG_ENOMEM. */
IG_API int ig_eval_levels_text(const ig_index *idx, const uint8_t *text, size_t len, int64_t L, uint64_t floor,
                               size_t from, size_t to, ig_eval_levels *out, ig_error *err);
/** to += from (the same position, the same floor): change points united, counts summed, the
 *  bytes following ℓ* united. IG_ENOMEM (to unchanged). */
IG_API int ig_eval_levels_add(ig_eval_levels *to, const ig_eval_levels *from, ig_error *err);
IG_API void ig_eval_levels_free(ig_eval_levels *l);

/**
 * ig_eval of any checked model from a corpus found elsewhere (split into parts): levels[i − 1]
 * is the corpus's (the parts' summed) ig_eval_levels of position i, whose context is
 * text[max(0, i−L)..i), got with ig_eval_floor(model), for every i in [1, len). ig_eval scores
 * its positions through the same formulas from the index, and the positions are summed in the
 * shares ig_eval gives `threads` workers, so the figures are ig_eval's to the bit. *r as
 * ig_eval's (never cancelled). IG_EUSAGE (a position without levels), IG_ENOMEM.
 */
IG_API int ig_eval_from_levels(const ig_model *model, const uint8_t *text, size_t len, int threads,
                               const ig_eval_levels *levels, ig_eval_result *r, ig_error *err);
/** An evaluation from the parts of a corpus under way (ig_eval_parts_start). */
typedef struct ig_eval_parts ig_eval_parts;
/** ig_eval_from_levels a slice at a time, so that a long text's levels need not be held at once:
 *  start (the model, checked, and text length as ig_eval_from_levels takes them; *ep, malloc'd,
 *  is the caller's until finish frees it), then score the levels of positions [from, to)
 *  (levels[i − from] of position i; the whole text each time) for consecutive slices in order,
 *  then finish, which writes *r as ig_eval_from_levels would and frees *ep (also after an error
 *  of score, which it returns again). IG_EUSAGE, IG_ENOMEM. */
IG_API int ig_eval_parts_start(const ig_model *model, size_t len, int threads, ig_eval_parts **ep, ig_error *err);
IG_API int ig_eval_parts_score(ig_eval_parts *ep, const uint8_t *text, size_t from, size_t to,
                               const ig_eval_levels *levels, ig_error *err);
IG_API int ig_eval_parts_finish(ig_eval_parts *ep, ig_eval_result *r, ig_error *err);

/* ---------------------------------------------------------------- mixing with an LLM */

/** How the corpus weight λ is chosen. */
typedef enum ig_lambda_mode {
    IG_LAMBDA_FIXED = 0,   ///< λ = lambda
    IG_LAMBDA_SPARSE_DENSE,///< λ = lambda_sparse when the corpus estimate is sparse, else lambda_dense
    IG_LAMBDA_ADAPTIVE,    ///< λ = lambda_max · ℓ*/(ℓ* + 5) · cnt/(cnt + 2) (rises with effective n and count)
} ig_lambda_mode;

typedef struct ig_mix_options {
    ig_model model;        ///< corpus model for the byte factors (default ∞-gram; alpha smooths)
    ig_lambda_mode mode;
    double lambda;         ///< FIXED: weight of the corpus (0..1)
    double lambda_sparse;  ///< SPARSE_DENSE (the infini-gram paper's λ1 and λ2)
    double lambda_dense;
    double lambda_max;     ///< ADAPTIVE ceiling (default 0.9)
    /** The corpus, when it is not ig_mix's index (a corpus split into parts): its predict hook
     *  gives each byte factor's distribution (NULL: the index's own ig_predict). */
    const struct ig_gen_backend *backend;
    uint8_t reserved[8];  ///< zero (the defaults function clears it): room for options to come
} ig_mix_options;

IG_API void ig_mix_options_default(ig_mix_options *o);

/** One LLM candidate token. */
typedef struct ig_mix_token {
    const uint8_t *bytes;  ///< the token's bytes (may be partial UTF-8)
    size_t len;
    double llm_logprob;    ///< natural log of the LLM's probability
} ig_mix_token;

/** Result for one token. */
typedef struct ig_mix_out {
    double corpus_prob;    ///< Π P(b_i | ctx·b_<i), exact chain rule
    double llm_prob;
    double mixed_prob;     ///< λ·corpus + (1−λ)·llm, renormalised over the given tokens
    double mixed_raw;      ///< the same before renormalisation
    uint32_t rank_before;  ///< 1-based rank by LLM probability
    uint32_t rank_after;   ///< 1-based rank by mixed probability
    uint64_t effective_n;  ///< of the token's first byte factor
} ig_mix_out;

/**
 * Mixes corpus probabilities into an LLM's next-token distribution after `ctx`. Token
 * probabilities come from the byte chain rule; tokens sharing a prefix share its factors
 * (the tokens are walked in byte order, reusing the factors of the common prefix with the
 * previous one). Sums are taken in log space. *lambda, *effective_n and *sparse (may be
 * NULL) describe the context.
 */
IG_API int ig_mix(const ig_index *idx, const ig_mix_options *o, const uint8_t *ctx, size_t len,
                  const ig_mix_token *tokens, size_t n, ig_mix_out *out, double *lambda,
                  uint64_t *effective_n, int *sparse, ig_error *err);

/* ---------------------------------------------------------------- model operations */
/*
 * Model operations: predict (the next-symbol distribution of any model), prob (the
 * chain-rule probability of a continuation) and backoff (Stupid Backoff scores), typed
 * like every engine operation (fields.h): options with defaults, a result, one JSON
 * writer, and field tables the shell and the server both read.
 *
 * Model selection is one block of fields shared by every operation that runs a model
 * (predict, prob, eval, generate, explain): IG_MODEL_FIELDS over an ig_model_opts,
 * resolved into an ig_model by ig_model_resolve, which makes the cross-field checks
 * (one model at a time, {sbi} only with {interp}, …) in one place.
 */

/** "Not given" for the integer model options whose every value means something. */
#define IG_UNSET INT64_MIN

/** The model options as written: each may be absent. */
typedef struct ig_model_opts {
    int infgram;          ///< --infgram given
    uint64_t n;           ///< fixed n-gram (0: not given)
    int weighted;         ///< index into ig_weight_fn names (-1: not given)
    double alpha;         ///< Laplace smoothing (0: none)
    uint64_t min_len, max_len; ///< weighted bounds (0: not given)
    double beta;          ///< weighted exponential base (default 2)
    int64_t interp;       ///< interpolation levels (IG_UNSET: not given)
    int sbi;              ///< the published SBI conventions
    int64_t max_context;  ///< bytes of context (-1: all)
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_model_opts;

/** Defaults: ∞-gram, every option unset, max_context as given. */
IG_API void ig_model_opts_default(ig_model_opts *m, int64_t max_context);
/** The model the options select, checked. Messages name fields as {name}. */
IG_API int ig_model_resolve(const ig_model_opts *o, ig_model *m, ig_error *err);
/** "∞-gram", "3-gram", "interpolation, 2 levels (SBI)", ", Laplace α=…" appended: written
 *  into buf (n bytes, the caller's), which is returned. */
IG_API const char *ig_model_name(const ig_model *m, char *buf, size_t n);
/** Whether a prediction is sparse: defined, with exactly one symbol of positive
 *  probability and nothing left for unseen symbols. The one definition, used everywhere. */
IG_API int ig_dist_sparse(const ig_dist *d, const ig_symbol *syms, size_t n, double unseen);

IG_API extern const char *const ig_weight_names[];

/* The model fields of an options struct T whose ig_model_opts member is `m`, for an
 * operation whose model is the ∞-gram unless told otherwise. */
#define IG_MODEL_FIELDS(T, m)                                                                                          \
    IG_MODEL_FIELDS_DEFAULT(T, m, "the ∞-gram (default): the longest suffix of the context that occurs", NULL)

/* The same, for an operation with another default model: `infgram_help` says when the ∞-gram
 * is its default, `interp_default` is the default of {interp} as help shows it (or NULL): the
 * operation chooses it when no model is given (IG_FIELD_RESOLVED), the defaults leave it unset. */
#define IG_MODEL_FIELDS_DEFAULT(T, m, infgram_help, interp_default)                                                   \
    {"infgram", IG_FIELD_BOOL, offsetof(T, m.infgram), 0, 0, NULL, NULL, infgram_help, NULL, 0},                      \
    {"n", IG_FIELD_UINT, offsetof(T, m.n), 1, 1000000, "N", NULL, "fixed n-gram: the last N-1 bytes of context, no backoff", \
     NULL, 0},                                                                                                         \
    {"alpha", IG_FIELD_DOUBLE, offsetof(T, m.alpha), 0, 1e12, "A", NULL,                                               \
     "Laplace smoothing over the bytes that keep the text valid UTF-8 (∞-gram, n-gram)", NULL, 0},                    \
    {"weighted", IG_FIELD_ENUM, offsetof(T, m.weighted), 0, 0, "linear|quadratic|exponential|sigmoid", NULL,           \
     "mixture of the distributions at every suffix length", ig_weight_names, 0},                                       \
    {"min_len", IG_FIELD_UINT, offsetof(T, m.min_len), 1, 1000000000, "L", "1", "weighted: shortest suffix length",   \
     NULL, IG_FIELD_RESOLVED},                                                                         \
    {"max_len", IG_FIELD_UINT, offsetof(T, m.max_len), 1, 1000000000, "L", "ℓ*", "weighted: longest suffix length",   \
     NULL, IG_FIELD_RESOLVED},                                                                         \
    {"beta", IG_FIELD_DOUBLE, offsetof(T, m.beta), 1e-9, 1e9, "B", "2", "weighted exponential: base", NULL, 0},       \
    {"interp", IG_FIELD_INT, offsetof(T, m.interp), -1, 1000000, "K", interp_default,                                  \
     "selective back-off interpolation over K kept levels: K ≥ 1, or -1 for all (0 is refused)", NULL, (interp_default) ? IG_FIELD_RESOLVED : 0},                                        \
    {"sbi", IG_FIELD_BOOL, offsetof(T, m.sbi), 0, 0, NULL, NULL,                                                       \
     "with --interp: the exact published SBI conventions (<end> not counted)", NULL, 0},                               \
    {"max_context", IG_FIELD_INT, offsetof(T, m.max_context), -1, 1000000000, "L", NULL,                               \
     "use at most the last L bytes of context (-1: all; default: all, and 100 for eval)", NULL, 0}

/* ---- predict ---- */
typedef struct ig_predict_opts {
    ig_bytes query;       ///< the context
    ig_model_opts model;
    uint64_t top;         ///< candidates reported (default 10)
    int bytes;            ///< next bytes instead of characters
    ig_bytes ids;         ///< token dataset: the context as comma-separated token ids
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_predict_opts;

typedef struct ig_predict_result {
    uint8_t *context;     ///< the normalised context (malloc'd)
    size_t clen;
    ig_model model;       ///< the model used
    ig_dist dist;
    ig_symbol *syms;      ///< every symbol, most probable first (malloc'd, unless syms_borrowed)
    size_t nsyms;
    double unseen;        ///< probability left for unseen symbols (smoothing)
    int sparse;           ///< ig_dist_sparse
    int syms_borrowed;    ///< syms point into the dataset's next-token table (a token dataset's frequent
                          ///< context, unsmoothed): read-only, valid until its index is closed; not freed
} ig_predict_result;

IG_API void ig_predict_defaults(ig_predict_opts *o);
IG_API int ig_predict_run(const ig_op_ctx *ctx, const ig_predict_opts *o, ig_predict_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_predict_json(const ig_op_ctx *ctx, const ig_predict_opts *o, const ig_predict_result *r);
IG_API void ig_predict_result_free(ig_predict_result *r);
IG_API extern const ig_field ig_predict_fields[];
IG_API extern const ig_op ig_op_predict;

/* ---- prob ---- */
typedef struct ig_prob_opts {
    ig_bytes query;       ///< the context
    ig_bytes continuation;///< the text whose probability is asked (not empty)
    ig_model_opts model;
    int bytes;            ///< one factor per byte instead of per character
    ig_bytes ids;         ///< token dataset: the context as comma-separated token ids (may be empty)
    ig_bytes next_ids;    ///< token dataset: the continuation's token ids
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_prob_opts;

typedef struct ig_prob_result {
    ig_model model;
    ig_factor *factors;   ///< malloc'd
    size_t nfactors;
    double prob, log2p;   ///< log2p is -inf when a factor is 0
} ig_prob_result;

IG_API void ig_prob_defaults(ig_prob_opts *o);
IG_API int ig_prob_run(const ig_op_ctx *ctx, const ig_prob_opts *o, ig_prob_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_prob_json(const ig_op_ctx *ctx, const ig_prob_opts *o, const ig_prob_result *r);
IG_API void ig_prob_result_free(ig_prob_result *r);
IG_API extern const ig_field ig_prob_fields[];
IG_API extern const ig_op ig_op_prob;

/* ---- backoff ---- */
typedef struct ig_backoff_opts {
    ig_bytes query;       ///< the context
    double factor;        ///< λ per byte of context dropped (default 0.4)
    uint64_t threshold;   ///< the longest suffix seen at least τ times (default 1)
    uint64_t top;         ///< candidates reported (default 10)
    int bytes;
    int64_t max_context;  ///< -1: all
    ig_bytes ids;         ///< token dataset: the context as comma-separated token ids
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_backoff_opts;

typedef struct ig_backoff_result {
    uint8_t *context;     ///< normalised (malloc'd)
    size_t clen;
    ig_backoff_cand *cands; ///< best first (malloc'd)
    size_t ncands;
    uint64_t ltau;        ///< ℓτ
} ig_backoff_result;

IG_API void ig_backoff_defaults(ig_backoff_opts *o);
/** The model backoff runs with these options (factor, threshold, max_context), checked. */
IG_API int ig_backoff_model(const ig_backoff_opts *o, ig_model *m, ig_error *err);
IG_API int ig_backoff_run(const ig_op_ctx *ctx, const ig_backoff_opts *o, ig_backoff_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_backoff_json(const ig_op_ctx *ctx, const ig_backoff_opts *o, const ig_backoff_result *r);
IG_API void ig_backoff_result_free(ig_backoff_result *r);
IG_API extern const ig_field ig_backoff_fields[];
IG_API extern const ig_op ig_op_backoff;

/* ---- eval ---- */
typedef struct ig_eval_opts {
    ig_bytes text;        ///< the held-out text (normalised like the corpus)
    ig_bytes file;        ///< shell only: a FILE to read the text from (the shell fills text)
    ig_bytes range;       ///< shell only: "A:B" of FILE
    ig_model_opts model;  ///< context capped at 100 bytes unless {max_context} says otherwise
    uint64_t threads;     ///< worker threads (0: one per core)
    /** Not fields: the source named in results ("--text" when NULL), progress, and whether
     *  the text is already normalised (read by ig_load_text). */
    const char *label;
    ig_eval_progress_fn progress;
    void *user;
    int normalized;
    ig_bytes ids;         ///< token dataset: the token ids to evaluate
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_eval_opts;

typedef struct ig_eval_op_result {
    ig_model model;
    uint64_t bytes;       ///< length of the evaluated text
    ig_eval_result r;     ///< the figures (r.cancelled: partial, stopped by the cancel flag)
    /** Token dataset with a vocabulary: bytes of the text the scored tokens (all but the first;
     *  separators stand for none) stand for through the vocabulary, so that bits per byte of
     *  that text = −r.sum_ln / (ln 2 · text_bytes); 0 when unknown (no vocabulary, or an id
     *  beyond it among the scored tokens). */
    uint64_t text_bytes;
} ig_eval_op_result;

IG_API void ig_eval_defaults(ig_eval_opts *o);
IG_API int ig_eval_run(const ig_op_ctx *ctx, const ig_eval_opts *o, ig_eval_op_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_eval_json(const ig_op_ctx *ctx, const ig_eval_opts *o, const ig_eval_op_result *r);
IG_API void ig_eval_op_result_free(ig_eval_op_result *r);
IG_API extern const ig_field ig_eval_fields[];
IG_API extern const ig_op ig_op_eval;

/* ---- mix ---- */
/** Most candidate tokens one mix takes. */
#define IG_MIX_MAX_TOKENS 100000

/**
 * Parses an LLM's candidate tokens from JSON text (never a path): a list of
 * {"token" | "bytes_hex" | "bytes": [0..255, …], "logprob" (<= 0) | "prob" (0..1)}, OpenAI
 * chat top_logprobs entries (the same shape), or a legacy completions map
 * {token: logprob}, alone or under a "top_logprobs" key. Strict JSON (jansson): invalid
 * escapes, lone surrogates and duplicate keys are errors; at most IG_MIX_MAX_TOKENS. The
 * tokens' bytes live in *arena (one allocation; free it and *tokens).
 */
IG_API int ig_mix_candidates_parse(const uint8_t *json, size_t n, ig_mix_token **tokens, size_t *ntokens,
                                   uint8_t **arena, ig_error *err);

typedef struct ig_mix_opts {
    ig_bytes query;       ///< the context
    ig_bytes llm;         ///< the candidates as JSON text (see ig_mix_candidates_parse)
    double lambda;        ///< fixed corpus weight (negative: not given; 0.5)
    double lambda_sparse; ///< corpus weight when the corpus estimate is sparse (negative: not given; 0.9)
    double lambda_dense;  ///< otherwise (negative: not given; 0.1)
    int adaptive;         ///< weight rising with effective n and count
    double alpha;         ///< Laplace smoothing of the corpus bytes
    uint64_t top;         ///< tokens shown by the shell (default 20)
    ig_bytes ids;         ///< token dataset: the context as comma-separated token ids
    /** Not a field: the corpus, when it is not the context's index (may be NULL; see
     *  ig_mix_options.backend). */
    const struct ig_gen_backend *backend;
    uint8_t reserved[8];  ///< zero (the defaults function clears it): room for options to come
} ig_mix_opts;

typedef struct ig_mix_result {
    uint8_t *context;     ///< normalised (malloc'd)
    size_t clen;
    ig_mix_token *tokens; ///< the LLM's candidates, as given (malloc'd; bytes in arena)
    uint8_t *arena;
    size_t ntokens;
    ig_mix_out *out;      ///< per token (malloc'd)
    size_t *order;        ///< token indexes in mixed order (malloc'd)
    ig_lambda_mode mode;
    double lambda;
    uint64_t effective_n;
    int sparse;
} ig_mix_result;

IG_API void ig_mix_defaults(ig_mix_opts *o);
IG_API int ig_mix_run(const ig_op_ctx *ctx, const ig_mix_opts *o, ig_mix_result *r, ig_error *err);
/** Its JSON members as text: malloc'd (the caller frees it); NULL when memory ran out. */
IG_API char *ig_mix_json(const ig_op_ctx *ctx, const ig_mix_opts *o, const ig_mix_result *r);
IG_API void ig_mix_result_free(ig_mix_result *r);
IG_API extern const ig_field ig_mix_fields[];
IG_API extern const ig_op ig_op_mix;

IG_END_DECLS

#endif
