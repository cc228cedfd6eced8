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
#ifndef IG_MODELOPS_H
#define IG_MODELOPS_H

#include <stddef.h>
#include <stdint.h>
#include "fields.h"
#include "model.h"

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
} ig_model_opts;

/** Defaults: ∞-gram, every option unset, max_context as given. */
IG_API void ig_model_opts_default(ig_model_opts *m, int64_t max_context);
/** The model the options select, checked. Messages name fields as {name}. */
IG_API int ig_model_resolve(const ig_model_opts *o, ig_model *m, ig_error *err);
/** "∞-gram", "3-gram", "interpolation, 2 levels (SBI)", ", Laplace α=…" appended. */
IG_API const char *ig_model_name(const ig_model *m, char *buf, size_t n);
/** Whether a prediction is sparse: defined, with exactly one symbol of positive
 *  probability and nothing left for unseen symbols. The one definition, used everywhere. */
IG_API int ig_dist_sparse(const ig_dist *d, const ig_symbol *syms, size_t n, double unseen);

IG_API extern const char *const ig_weight_names[];

/* The model fields of an options struct T whose ig_model_opts member is `m`. */
#define IG_MODEL_FIELDS(T, m)                                                                                          \
    {"infgram", IG_FIELD_BOOL, offsetof(T, m.infgram), 0, 0, NULL, NULL,                                               \
     "the ∞-gram (default): the longest suffix of the context that occurs", NULL, 0},                                  \
    {"n", IG_FIELD_UINT, offsetof(T, m.n), 1, 1000000, "N", NULL, "fixed n-gram: the last N-1 bytes of context, no backoff", \
     NULL, 0},                                                                                                         \
    {"alpha", IG_FIELD_DOUBLE, offsetof(T, m.alpha), 0, 1e12, "A", NULL,                                               \
     "Laplace smoothing over the bytes that keep the text valid UTF-8 (∞-gram, n-gram)", NULL, 0},                    \
    {"weighted", IG_FIELD_ENUM, offsetof(T, m.weighted), 0, 0, "linear|quadratic|exponential|sigmoid", NULL,           \
     "mixture of the distributions at every suffix length", ig_weight_names, 0},                                       \
    {"min_len", IG_FIELD_UINT, offsetof(T, m.min_len), 1, 1000000000, "L", "1", "weighted: shortest suffix length",   \
     NULL, 0},                                                                                                         \
    {"max_len", IG_FIELD_UINT, offsetof(T, m.max_len), 1, 1000000000, "L", "ℓ*", "weighted: longest suffix length",   \
     NULL, 0},                                                                                                         \
    {"beta", IG_FIELD_DOUBLE, offsetof(T, m.beta), 1e-9, 1e9, "B", "2", "weighted exponential: base", NULL, 0},       \
    {"interp", IG_FIELD_INT, offsetof(T, m.interp), -1, 1000000, "K", NULL,                                            \
     "selective back-off interpolation over K kept levels (-1: all)", NULL, 0},                                        \
    {"sbi", IG_FIELD_BOOL, offsetof(T, m.sbi), 0, 0, NULL, NULL,                                                       \
     "with --interp: the exact published SBI conventions (<end> not counted)", NULL, 0},                               \
    {"max_context", IG_FIELD_INT, offsetof(T, m.max_context), -1, 1000000000, "L", NULL,                               \
     "use at most the last L bytes of context (-1: all)", NULL, 0}

/* ---- predict ---- */
typedef struct ig_predict_opts {
    ig_bytes query;       ///< the context
    ig_model_opts model;
    uint64_t top;         ///< candidates reported (default 10)
    int bytes;            ///< next bytes instead of characters
} ig_predict_opts;

typedef struct ig_predict_result {
    uint8_t *context;     ///< the normalised context (malloc'd)
    size_t clen;
    ig_model model;       ///< the model used
    ig_dist dist;
    ig_symbol *syms;      ///< every symbol, most probable first (malloc'd)
    size_t nsyms;
    double unseen;        ///< probability left for unseen symbols (smoothing)
    int sparse;           ///< ig_dist_sparse
} ig_predict_result;

IG_API void ig_predict_defaults(ig_predict_opts *o);
IG_API int ig_predict_run(const ig_op_ctx *ctx, const ig_predict_opts *o, ig_predict_result *r, ig_error *err);
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
} ig_prob_opts;

typedef struct ig_prob_result {
    ig_model model;
    ig_factor *factors;   ///< malloc'd
    size_t nfactors;
    double prob, log2p;   ///< log2p is -inf when a factor is 0
} ig_prob_result;

IG_API void ig_prob_defaults(ig_prob_opts *o);
IG_API int ig_prob_run(const ig_op_ctx *ctx, const ig_prob_opts *o, ig_prob_result *r, ig_error *err);
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
} ig_backoff_opts;

typedef struct ig_backoff_result {
    uint8_t *context;     ///< normalised (malloc'd)
    size_t clen;
    ig_backoff_cand *cands; ///< best first (malloc'd)
    size_t ncands;
    uint64_t ltau;        ///< ℓτ
} ig_backoff_result;

IG_API void ig_backoff_defaults(ig_backoff_opts *o);
IG_API int ig_backoff_run(const ig_op_ctx *ctx, const ig_backoff_opts *o, ig_backoff_result *r, ig_error *err);
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
} ig_eval_opts;

typedef struct ig_eval_op_result {
    ig_model model;
    uint64_t bytes;       ///< length of the evaluated text
    ig_eval_result r;     ///< the figures (r.cancelled: partial, stopped by the cancel flag)
} ig_eval_op_result;

IG_API void ig_eval_defaults(ig_eval_opts *o);
IG_API int ig_eval_run(const ig_op_ctx *ctx, const ig_eval_opts *o, ig_eval_op_result *r, ig_error *err);
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
IG_API char *ig_mix_json(const ig_op_ctx *ctx, const ig_mix_opts *o, const ig_mix_result *r);
IG_API void ig_mix_result_free(ig_mix_result *r);
IG_API extern const ig_field ig_mix_fields[];
IG_API extern const ig_op ig_op_mix;

#endif
