/*
 * N-grams for contamination checks, shared by the contam operation and decontamination
 * at build time: lowercasing, cutting a text into word or byte n-grams, and an exact set
 * of n-grams (hashes to find candidates, bytes compared to confirm).
 *
 * Words are maximal runs of characters that are not Unicode White_Space (bytes of invalid
 * UTF-8 count as word characters); a word n-gram is n consecutive words joined by single
 * spaces. A text with fewer than n words (or bytes) but at least one is a single n-gram of
 * all of them; an empty text has none.
 */
#ifndef IG_NGRAMS_H
#define IG_NGRAMS_H

#include <stddef.h>
#include <stdint.h>
#include "infinigram/build.h"
#include "infinigram/error.h"
#include "../util/util.h"

/** Appends p with every code point replaced by its simple lowercase mapping (utf8proc);
 *  invalid UTF-8 bytes are copied. 0 or IG_ENOMEM (err set). */
int igi_lowercase(const uint8_t *p, size_t n, ig_buf *out, ig_error *err);

/** Called with each n-gram (valid during the call); non-zero stops and is passed back. */
typedef int (*igi_gram_fn)(void *user, const uint8_t *g, size_t len, ig_error *err);

/** Cuts p into n-grams (n >= 1), word or byte, calling fn for each in order. *units
 *  (may be NULL) receives the number of words (or bytes). `scratch` holds the joined words. */
int igi_ngrams_each(const uint8_t *p, size_t len, uint64_t n, int bytes, ig_buf *scratch, igi_gram_fn fn,
                    void *user, uint64_t *units, ig_error *err);

/** An exact set of byte strings (open addressing on a 64-bit hash; the bytes kept). */
typedef struct igi_gramset {
    struct igi_gram_slot { uint64_t h, off, len; } *slots;
    size_t cap, n;
    ig_buf arena;
} igi_gramset;

/** Adds g unless present; *added (may be NULL) says whether it was new. 0 or IG_ENOMEM. */
int igi_gramset_add(igi_gramset *s, const uint8_t *g, size_t len, int *added, ig_error *err);
int igi_gramset_has(const igi_gramset *s, const uint8_t *g, size_t len);
void igi_gramset_free(igi_gramset *s);



/* ---- decontamination at build time (the rule is described in build.h) ---- */

typedef struct igi_decontam igi_decontam;

/** Reads the eval set (normalised when `normalize`) and fills the n-gram set. */
int igi_decontam_open(const ig_decontam_options *o, int normalize, igi_decontam **out, ig_error *err);
/* The fingerprint of the eval set at path (items read as igi_decontam_open reads them) that
 * a decontaminated build records as its report's eval_hash: a changed eval set makes the
 * dataset stale. */
int igi_decontam_eval_hash(const char *path, const char *field, int normalize, uint64_t *hash, ig_error *err);
/** Applies the rule to one document: *keep = 0 when it is to be dropped. `doc_id` is the id
 *  the document gets if kept. Counts it for its source `name`. */
int igi_decontam_doc(igi_decontam *d, const char *name, uint64_t source_line, const uint8_t *text, size_t len,
                     uint64_t doc_id, int *keep, ig_error *err);
/** The report so far (moved out: the caller owns it), or NULL. */
ig_decontam_report *igi_decontam_take(igi_decontam *d);
void igi_decontam_free(igi_decontam *d);
void igi_decontam_report_free(ig_decontam_report *r);
#endif
