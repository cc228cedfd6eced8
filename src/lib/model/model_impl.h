/*
 * Internals shared by the model files: the usable context (after the last 0xFF, capped),
 * suffix counts, the search for the lengths where the suffix count changes, and the
 * UTF-8 rules that decide which next bytes are valid (for Laplace smoothing) and how
 * long a character is.
 */
#ifndef IG_MODEL_IMPL_H
#define IG_MODEL_IMPL_H

#include "infinigram/model.h"
#include "query/query.h"

/** Selective interpolation weighs its j-th level (j = 0 the longest) by this to the power j.
 *  predict, eval and generation's own path for one or two levels all use it, so their
 *  probabilities agree to the bit. */
#define IGI_INTERP_DECAY 0.1

/** The weighted mixture's weight w(ℓ) of suffix length ell among lengths [bottom, top]: ℓ, ℓ²,
 *  the sigmoid, or β^ℓ scaled so that its largest weight is 1 (β^(ℓ−top) when β ≥ 1,
 *  β^(ℓ−bottom) when β < 1): the mixture divides by the weights' sum, and β^ℓ itself
 *  overflows. */
double igi_model_weight(const ig_model *m, uint64_t ell, uint64_t bottom, uint64_t top);

/** The part of a context a model may use: bytes after the last 0xFF, at most cap. */
typedef struct ig_ctx {
    const uint8_t *p;      ///< start of the usable context
    size_t n;              ///< its length
} ig_ctx;

ig_ctx igi_ctx_make(const uint8_t *ctx, size_t len, int64_t cap);

/** cnt(suf(ℓ)) of a usable context. */
uint64_t igi_ctx_count(const ig_index *idx, ig_ctx c, uint64_t ell);

/** A usable context and the index it is searched in: the first member of the state behind
 *  each source of suffix counts over an index (predict's mixtures, eval's, Stupid Backoff's),
 *  so that one count callback serves them all. */
typedef struct igi_ctx_in {
    const ig_index *idx;
    ig_ctx c;
} igi_ctx_in;

/** The count callback of those sources: cnt(suf(ell)) of the igi_ctx_in at u (the state it
 *  begins). */
uint64_t igi_ctx_in_count(void *u, uint64_t ell);

/** ℓ*: longest occurring suffix of c (exponential then binary search); *count = its count. */
uint64_t igi_ctx_longest(const ig_index *idx, ig_ctx c, uint64_t *count);

/**
 * Largest ℓ' < ell with cnt(suf(ℓ')) > cnt_ell (the next shorter suffix whose
 * distribution differs). Returns 0 with *cnt = N when only the empty suffix qualifies,
 * and UINT64_MAX when none does (cnt_ell already equals N). `hint` (UINT64_MAX: none)
 * is a guess of the answer; the search starts there.
 */
/**
 * SA intervals of recently searched substrings of one growing text, one slot per start offset
 * (start mod slots). A text that grows by a byte at a time asks again and again for suffixes
 * starting where earlier ones started, one or a few bytes longer: narrowing the remembered
 * interval by those bytes (one-byte comparisons inside a small interval) is much cheaper than a
 * search of the whole suffix array, and gives the same rows.
 */
typedef struct igi_ivcache {
    const uint8_t *base;   ///< the text the offsets refer to (set by the owner before each use)
    size_t slots;          ///< a power of two
    uint32_t nshards;
    size_t *start, *end;   ///< slot i holds base[start..end) (end == 0: empty)
    uint64_t *count;
    ig_range *r;           ///< slots × nshards intervals
    ig_match t0, t1;       ///< scratch for the narrowing
    ig_match probe;        ///< scratch for the change-point search (no allocation per search)
    uint64_t total;        ///< the corpus size, cnt of the empty suffix (read once, not per search)
} igi_ivcache;

/** Allocates an empty cache; returns -1 when out of memory (then *c can still be freed). */
int igi_ivcache_init(igi_ivcache *c, const ig_index *idx, size_t slots);
void igi_ivcache_free(igi_ivcache *c);
/** Forgets every slot: to be called when bytes of the text already seen are replaced. */
void igi_ivcache_clear(igi_ivcache *c);
/** Remembers the intervals of p[0..m->len), p pointing into c->base. */
void igi_ivcache_put(igi_ivcache *c, const ig_index *idx, const uint8_t *p, const ig_match *m);
/** The intervals of p[0..len) (p inside c->base) into *m, as igi_match_find would give them
 *  (an empty result may differ in where its empty intervals lie); remembers them. */
void igi_ivcache_find(igi_ivcache *c, const ig_index *idx, const uint8_t *p, size_t len, ig_match *m);

uint64_t igi_ctx_next_level(const ig_index *idx, ig_ctx c, uint64_t ell, uint64_t cnt_ell, uint64_t hint,
                           uint64_t *cnt, ig_match *best);
/** The same with a cache of intervals (may be NULL) whose base holds c. */
uint64_t igi_ctx_next_level_cached(const ig_index *idx, ig_ctx c, uint64_t ell, uint64_t cnt_ell, uint64_t hint,
                                  uint64_t *cnt, ig_match *best, igi_ivcache *cache);

/** Bytes that may follow `ctx` and keep the text valid UTF-8 (incl. 0xFF = <end> when
 *  the context ends on a character boundary); valid[b] = 1. Returns how many. */
int igi_utf8_valid_next(const uint8_t *ctx, size_t len, uint8_t valid[256]);

/** When the last character of ctx is incomplete, the range [*lo, *hi] its next byte must lie in;
 *  returns 1 then, 0 when ctx ends on a character boundary. */
int igi_utf8_cont_range(const uint8_t *ctx, size_t len, uint8_t *lo, uint8_t *hi);

/** Whether byte b can begin a character of valid UTF-8 (ASCII or a lead byte C2..F4). */
static inline int ig_utf8_starts_char(int b) { return b < 0x80 || (b >= 0xC2 && b <= 0xF4); }

/** Continuation bytes still needed to complete the last character of ctx (0..3). */
int igi_utf8_pending(const uint8_t *ctx, size_t len);

/** Length of a character starting with lead byte b (1 for ASCII, 0xFF, or stray bytes). */
int igi_utf8_char_len(uint8_t b);

/* `best` (may be NULL): receives the SA intervals of the answer (best->len == answer) when
 * the answer was probed. */

/** Change points remembered between the steps of a text (interpolation levels). */
#define IG_LEVEL_HINTS 64

/** d must be zeroed or a previous result: its level buffer is reused.
 *  ig_predict when the usable context c (of ctx[0..len)), its ℓ* and count are already known
 *  (generation carries them from step to step), optionally with the match of that
 *  suffix (`known`, may be NULL) and level hints (IG_LEVEL_HINTS entries, UINT64_MAX =
 *  none; updated; may be NULL). `below` (may be NULL; len UINT64_MAX = unknown) is the change
 *  point under ℓ* — the largest ℓ < ℓ* with cnt(ℓ) > cnt(ℓ*) — with its match, when the caller
 *  knows it; on return it holds that change point as interpolation found it (len UINT64_MAX when
 *  it was not computed), so that a generator can derive the next step's from it.
 *  The model must have been checked. */
int igi_predict_known(const ig_index *idx, const ig_model *model, ig_ctx c, const uint8_t *ctx, size_t len,
                     uint64_t longest, uint64_t lcount, const ig_match *known, uint64_t *hints, ig_match *below,
                     ig_dist *d, ig_error *err);
/** The same with a cache of intervals for the change-point searches (may be NULL; its base
 *  must hold c). */
int igi_predict_cached(const ig_index *idx, const ig_model *model, ig_ctx c, const uint8_t *ctx, size_t len,
                      uint64_t longest, uint64_t lcount, const ig_match *known, uint64_t *hints, ig_match *below,
                      igi_ivcache *cache, ig_dist *d, ig_error *err);

/** The distribution of a single-level model (∞-gram: `longest` is ℓ*; n-gram) from the level
 *  it reads, given rather than searched: ig_predict_from_level without the symbols. */
int igi_predict_from_level(const ig_model *model, const uint8_t *ctx, size_t len, uint64_t longest,
                           const ig_part_level *pl, ig_dist *d, ig_error *err);

/** The distribution of any model from the summed count profile of the parts of a corpus and
 *  their summed levels at each of its change points (levels[i].ell == prof->ell[i]):
 *  ig_predict_from_parts without the symbols. */
int igi_predict_from_parts(const ig_model *model, const uint8_t *ctx, size_t len, const ig_part_profile *prof,
                           const ig_part_level *levels, ig_dist *d, ig_error *err);
/** The entry of a count profile that length ell reads: its shortest change point >= ell
 *  (SIZE_MAX above the first). */
size_t igi_profile_at(const ig_part_profile *p, uint64_t ell);
/** cnt(ell) from a count profile: the count at its shortest change point >= ell (0 above ℓ*). */
uint64_t igi_profile_count(const ig_part_profile *p, uint64_t ell);
/** The walk over the change points of two count profiles at once, longest first, each length
 *  once (where their sum changes): the next one into *ell, *i and *j (0 at the start) moved past
 *  it; 0 when both are done. */
int igi_profile_union_next(const ig_part_profile *a, const ig_part_profile *b, size_t *i, size_t *j, uint64_t *ell);
/** igi_ctx_next_level from a count profile: the largest change point under ell whose count
 *  exceeds cnt (into *ncnt), or UINT64_MAX. */
uint64_t igi_profile_next(const ig_part_profile *p, uint64_t ell, uint64_t cnt, uint64_t *ncnt);
/** The level a suffix of length ell reads among levels kept at change points, longest first:
 *  the one at the shortest change point >= ell (same occurrences, same continuations); NULL
 *  above the first. */
const ig_part_level *igi_part_level_for(const ig_part_level *levels, size_t n, uint64_t ell);

/** Allocates the match storage for one pattern (nshards ranges). */
ig_match igi_match_alloc(const ig_index *idx);
void igi_match_release(ig_match *m);
/** Copies a match's length, count and intervals into another allocated for the same index. */
void igi_match_copy(const ig_index *idx, ig_match *to, const ig_match *from);

/** The next-token distribution of an ∞-gram or n-gram model over a token index (token_model.c)
 *  after the context ctx[0, len) (whole tokens): d's lengths and counts in tokens, every next
 *  token as a symbol of its id's bytes (most probable first, ties by id), the smoothing mass of
 *  tokens never seen in *unseen. *syms is malloc'd (the caller's) unless borrowed is not NULL
 *  and *borrowed is set to 1: then it points into the index's next-token table, read-only,
 *  valid until the index is closed, and is not freed (a context the table holds, unsmoothed). */
int igi_token_predict(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, ig_dist *d,
                      ig_symbol **syms, size_t *nsyms, int *borrowed, double *unseen, ig_error *err);
/** The chain-rule probability over a token index of the continuation cont[0, klen) after
 *  ctx[0, clen) (whole tokens): one factor per token (*factors malloc'd), each the model's
 *  probability after the context and the tokens before it (with {alpha}, a token never seen
 *  gets its share of the unseen mass). */
/** eval over a token index: every token i ≥ 1 of ids[0, len) scored given the tokens before it
 *  in its document (capped at max_context tokens), as ig_eval scores bytes; bits_per_byte then
 *  holds bits per token. Sequential; polls cancel. */
int igi_token_eval(const ig_index *idx, const ig_model *m, const uint8_t *ids, size_t len,
                   const volatile int *cancel, ig_eval_result *r, ig_error *err);
/** Stupid Backoff over next tokens (lengths in tokens; the formula of ig_backoff): every token
 *  seen after any suffix up to ℓτ, best first, ties by id (*out malloc'd). */
int igi_token_backoff(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, ig_backoff_cand **out,
                      size_t *n, uint64_t *ltau, ig_error *err);
/** Outcomes a next token can be on a token index: its vocabulary's ids and <end>, or every id a
 *  width of 1 or 2 bytes holds; 0 (unknown) for 4-byte ids without a vocabulary. */
uint64_t igi_token_outcomes(const ig_index *idx);
/** P of token t (its tw bytes) in a distribution's symbols: its own, or its share of the mass
 *  left for tokens never seen (unseen, spread over the outcomes not among the symbols). */
double igi_token_sym_prob(const ig_index *idx, const ig_symbol *syms, size_t ns, double unseen, const uint8_t *t);
/** A next-token distribution with its symbols as igi_token_predict gives them (syms malloc'd
 *  unless borrowed from the index's table): what a token's probability is read from. */
typedef struct igi_token_dist {
    ig_dist d;
    ig_symbol *syms;
    size_t ns;
    double unseen;
    int borrowed;
} igi_token_dist;
/** igi_token_predict after ctx[0, len) into *t (cleared first); release *t with
 *  igi_token_dist_free whatever this returns. */
int igi_token_dist_get(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t len, igi_token_dist *t,
                       ig_error *err);
/** Frees what *t owns (its symbols unless borrowed, its levels). */
void igi_token_dist_free(igi_token_dist *t);
int igi_token_prob(const ig_index *idx, const ig_model *m, const uint8_t *ctx, size_t clen, const uint8_t *cont,
                   size_t klen, ig_factor **factors, size_t *nf, double *prob, double *log2p, ig_error *err);

#endif
