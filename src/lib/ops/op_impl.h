/*
 * Private to the operations: the generic ig_op view of a typed operation, made from its
 * four typed functions (ig_NAME_defaults, _run, _json, _result_free) and its field table.
 */
#ifndef IG_OP_IMPL_H
#define IG_OP_IMPL_H

#include <pthread.h>
#include <string.h>

#include "infinigram/fields.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "util/util.h"

/** IG_EUSAGE naming the operation `name` when the loaded dataset indexes tokens, for the
 *  operations that work in bytes only; 0 otherwise. */
static inline int igi_op_bytes_only(const char *name, const ig_op_ctx *c, ig_error *e)
{
    if (!c || !c->idx || !ig_index_token_width(c->idx))
        return 0;
    return ig_error_set(e, IG_EUSAGE, "%s does not run on token datasets yet (every other query command does)", name);
}

/** 0 when the context has a dataset loaded; else IG_EUSAGE with e set (every operation's
 *  words for it). */
static inline int igi_op_need_index(const ig_op_ctx *c, ig_error *e)
{
    return c && c->idx ? 0 : ig_error_set(e, IG_EUSAGE, "no index given (a dataset must be loaded)");
}

/** The most bytes one listing of occurrences may make, counted as positions × (2 × width +
 *  the pattern + IGI_LISTED_COST): the snippets, and what each listed occurrence costs
 *  besides (its record, its JSON members and text), so that width 0 is bounded too. */
#define IGI_SNIPPETS_MAX ((uint64_t)256 << 20)
#define IGI_LISTED_COST 512

/** The start of an operation's run: clears its result (size bytes at r) and refuses to run
 *  without a dataset, or (bytes_only: the operation's name) on a token dataset. 0, or
 *  IG_EUSAGE with e set. */
static inline int igi_op_start(const ig_op_ctx *c, void *r, size_t size, const char *bytes_only, ig_error *e)
{
    memset(r, 0, size);
    if (igi_op_need_index(c, e))
        return IG_EUSAGE;
    return bytes_only ? igi_op_bytes_only(bytes_only, c, e) : 0;
}

/** The defaults of a model operation's options o (size bytes, model its model options):
 *  all zero, the model options at their defaults (max_context as given), then the defaults
 *  its field table gives, in that order so that the table has the last word. */
void igi_op_model_defaults(void *o, size_t size, ig_model_opts *model, int64_t max_context, const ig_field *fields);

/* The row of an operation's token input: ids as one comma-separated value ("A,B,C") that
 * stand for the text on a token dataset; over HTTP a JSON array or number is taken as its
 * text. `help` says what the ids are and what counts tokens then. */
#define IGI_IDS_FIELD(T, help)                                                                                          \
    {"ids", IG_FIELD_TEXT, offsetof(T, ids), 0, 0, "A,B,C", NULL, help, NULL, IG_FIELD_NUMBER_AS_TEXT | IG_FIELD_JSON}

/* An optional text (the first word and the rest of the line) with its token-id spelling and
 * a model's fields: what explain and generate begin with (`...`: IG_MODEL_FIELDS_DEFAULT's
 * help of {infgram} and default of {interp}). */
#define IGI_TEXT_IDS_MODEL_FIELDS(T, text_help, ids_help, ...)                                                         \
    {"query", IG_FIELD_TEXT, offsetof(T, query), 0, 0, "TEXT", NULL, text_help, NULL,                               \
     IG_FIELD_POSITIONAL | IG_FIELD_REST},                                                                            \
        IGI_IDS_FIELD(T, ids_help), IG_MODEL_FIELDS_DEFAULT(T, model, __VA_ARGS__)

/* The context of a model operation: the rest of the line, required unless ids are given. */
#define IGI_CONTEXT_FIELD(T, arg)                                                                                       \
    {"query", IG_FIELD_TEXT, offsetof(T, query), 0, 0, arg, NULL, "the context (exact bytes)", NULL,                   \
     IG_FIELD_POSITIONAL | IG_FIELD_REST | IG_FIELD_REQUIRED | IG_FIELD_UNLESS_IDS}

/* The public face of an operation whose computation is the file's static NAME_compute: the typed
 * ig_NAME_run checks the options against the table (members left as the defaults function
 * leaves them pass: those are computed once, and never freed), computes, checks the index's
 * health after the answer (it may have read a bad pointer), and frees what a failed run made;
 * the registry's entry is that same function. The public ig_NAME_result_free is the file's
 * static NAME_release behind a NULL check (every result free takes NULL, as free does), which
 * then zeroes the result: a release frees what it owns and need not clear anything. */
#define IG_DEFINE_OP(name, T, R)                                                                                       \
    static T name##_defaults_seen_;                                                                                    \
    static pthread_once_t name##_once_ = PTHREAD_ONCE_INIT;                                                            \
    static void name##_defaults_once_(void) { ig_##name##_defaults(&name##_defaults_seen_); }                          \
    int ig_##name##_run(const ig_op_ctx *c, const T *o, R *r, ig_error *e)                                             \
    {                                                                                                                  \
        if (!o || !r) /* the rest (context, index) is checked by the field check and the operation */                \
            return ig_error_set(e, IG_EUSAGE, "no options or no result given to " #name);                             \
        memset(r, 0, sizeof *r);                                                                                       \
        pthread_once(&name##_once_, name##_defaults_once_);                                                            \
        int rc_ = ig_fields_check(ig_##name##_fields, o, &name##_defaults_seen_, e);                                   \
        if (!rc_)                                                                                                      \
            rc_ = name##_compute(c, o, r, e);                                                                              \
        if ((!rc_ || rc_ == IG_ECORRUPT) && c && c->idx && ig_index_health(c->idx, c->dataset, e)) /* what it read */ \
            rc_ = IG_ECORRUPT;                                                                                         \
        if (rc_)                                                                                                       \
            ig_##name##_result_free(r);                                                                                \
        return rc_;                                                                                                    \
    }                                                                                                                  \
    void ig_##name##_result_free(R *r)                                                                                \
    {                                                                                                                  \
        if (r) { /* as free(NULL), nothing */                                                                          \
            name##_release(r);                                                                                         \
            memset(r, 0, sizeof *r);                                                                                   \
        }                                                                                                              \
    }                                                                                                                  \
    static void name##_defaults_(void *o) { ig_##name##_defaults(o); }                                                 \
    static int name##_run_(const ig_op_ctx *c, const void *o, void *r, ig_error *e) { return ig_##name##_run(c, o, r, e); } \
    static char *name##_json_(const ig_op_ctx *c, const void *o, const void *r) { return ig_##name##_json(c, o, r); }  \
    static void name##_free_(void *r) { ig_##name##_result_free(r); }                                                  \
    const ig_op ig_op_##name = {#name,           ig_##name##_fields, sizeof(T),    sizeof(R),                         \
                                name##_defaults_, name##_run_,        name##_json_, name##_free_}

/** The first k occurrences of p in corpus order, located (continuing each lookup from
 *  the previous position), each with a snippet of `width` bytes a side when width >= 0 (on
 *  a token dataset: a document and a token offset in loc.offset, `width` tokens a side).
 *  *out is malloc'd (free with igi_op_occurrences_free); *total gets the count. Polls cancel. */
int igi_op_occurrences(const ig_op_ctx *ctx, const uint8_t *p, size_t len, size_t k, long width, ig_occurrence **out,
                   size_t *n, uint64_t *total, ig_error *err);
void igi_op_occurrences_free(ig_occurrence *occ, size_t n);

/** The pattern an operation searches: the text normalised as the index's sources were, or on a
 *  token dataset the ids parsed (*out malloc'd). Refuses ids on a byte dataset, text on a token
 *  dataset, and both at once; messages name the ids as field `field` ({field}). */
int igi_op_pattern(const ig_op_ctx *ctx, const ig_bytes *text, const ig_bytes *ids, const char *field, uint8_t **out,
                   size_t *len, ig_error *err);

/** Where a position of a token dataset is: its document (id, name, source line) and its token
 *  offset in loc->offset; no line or column. */
int igi_op_token_location(const ig_index *idx, ig_pos pos, ig_location *loc, ig_error *err);

/** Appends the display form of text bytes to b: newline as ↵, tab and CR as a space, other
 *  control bytes as '.' (what a snippet shows, so that no text can steer a terminal). */
void igi_put_visible(ig_buf *b, const uint8_t *p, size_t n);

/** A one-line snippet of a token dataset around the len bytes at pos: `width` tokens a side
 *  inside the document, shown through the vocabulary; the match is [*hl0, *hl1). malloc'd;
 *  NULL when out of memory. */
char *igi_op_token_snippet(const ig_index *idx, ig_pos pos, size_t len, long width, size_t *hl0, size_t *hl1);

/** The distribution of `model` after ctx, its symbols (characters, or bytes), the mass
 *  left for unseen symbols and whether it is sparse: what predict reports and explain
 *  explains. On error nothing is left allocated. */
int igi_op_distribution(const ig_index *idx, const ig_model *model, const uint8_t *ctx, size_t n, int bytes, ig_dist *dist,
                    ig_symbol **syms, size_t *nsyms, double *unseen, int *sparse, ig_error *err);

#endif
