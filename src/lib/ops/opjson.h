/*
 * Helpers the operations' JSON writers share: one spelling of a byte string (text when
 * it is valid UTF-8 without NUL, else hex under KEY_hex), of a location, and of a
 * 64-bit count. Writers start from igi_jw_object, build the cJSON object and hand back its
 * members as text with igi_jw_members, which returns NULL rather than a document that lost a
 * member to a failed allocation.
 */
#ifndef IG_OPJSON_H
#define IG_OPJSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include "infinigram/fields.h"
#include "infinigram/index.h"
#include "infinigram/model.h"

/** "key": text, or "key_hex": hex digits when the bytes are not NUL-free valid UTF-8. */
void igi_jw_bytes(cJSON *o, const char *key, const uint8_t *p, size_t n);
void igi_jw_u64(cJSON *o, const char *key, uint64_t v);
/** Members written from a list: IGI_JW_U64S(o, {"key", value}, ...) adds each value as
 *  igi_jw_u64 does, IGI_JW_NUMS(o, {"key", value}, ...) each as a JSON number, in order. */
typedef struct igi_jw_u64_kv {
    const char *key;
    uint64_t v;
} igi_jw_u64_kv;
typedef struct igi_jw_num_kv {
    const char *key;
    double v;
} igi_jw_num_kv;
void igi_jw_u64_list(cJSON *o, const igi_jw_u64_kv *kv, size_t n);
void igi_jw_num_list(cJSON *o, const igi_jw_num_kv *kv, size_t n);
#define IGI_JW_U64S(o, ...)                                                                                            \
    igi_jw_u64_list((o), (const igi_jw_u64_kv[]){__VA_ARGS__},                                                         \
                    sizeof((const igi_jw_u64_kv[]){__VA_ARGS__}) / sizeof(igi_jw_u64_kv))
#define IGI_JW_NUMS(o, ...)                                                                                            \
    igi_jw_num_list((o), (const igi_jw_num_kv[]){__VA_ARGS__},                                                         \
                    sizeof((const igi_jw_num_kv[]){__VA_ARGS__}) / sizeof(igi_jw_num_kv))
/** Appends {[member,] doc, name, offset, line, column[, source_line]} to arr (member: the
 *  composed index's member holding the document); returns it. */
cJSON *igi_jw_location(cJSON *arr, const ig_index *idx, const ig_location *loc);
/** The same object, not yet added anywhere (the caller's, or NULL when memory ran out). */
cJSON *igi_jw_location_object(const ig_index *idx, const ig_location *loc);
/** Adds item to object o under key (NULL: to array o). When that cannot be done (o or item
 *  NULL: memory ran out), item is deleted and the writer's document refused; -1 then. */
int igi_jw_put(cJSON *o, const char *key, cJSON *item);
/** A new object appended to array arr, for the caller to fill (an array's objects are added
 *  before they are filled, so no writer forgets one or adds it twice). NULL when memory ran out:
 *  the document is refused then, and the writers' helpers take NULL as nothing to fill. */
cJSON *igi_jw_item(cJSON *arr);
/** A symbol: "symbol" (its text, "<end>", or null when not text) and "bytes_hex". */
void igi_jw_symbol(cJSON *o, const uint8_t *b, int len);
/** The object a writer starts from: begins the watch for allocations that failed (cJSON
 *  leaves such a member out silently) on this thread. */
cJSON *igi_jw_object(void);
/** igi_jw_object with the member every result starts with: "dataset", the name the
 *  context reports ("" when none). */
cJSON *igi_jw_result(const ig_op_ctx *ctx);
/** A document reference: [member,] doc, name (member: the composed index's member holding it). */
void igi_jw_doc(cJSON *o, const ig_index *idx, uint64_t doc, const char *name);
/** The object's members without the braces; frees o. malloc'd ("" for no members). NULL
 *  when any allocation failed since igi_jw_object, or o is NULL. */
char *igi_jw_members(cJSON *o);

/** A searched pattern under `key`: its text (as igi_jw_bytes), and on a token dataset also its
 *  ids under key_ids, the text being the ids shown through the vocabulary. */
void igi_jw_pattern(cJSON *o, const ig_index *idx, const char *key, const uint8_t *p, size_t n);
/** A next token (its id's tw little-endian bytes): token_id, and token (its text; null when
 *  that is not valid UTF-8, as a piece of a character is). */
void igi_jw_token(cJSON *o, const ig_index *idx, const uint8_t *b, int len);
/** What a model predicts, in the dataset's unit: igi_jw_token on a token dataset, else
 *  igi_jw_symbol. */
void igi_jw_unit(cJSON *o, const ig_index *idx, const uint8_t *b, int len);
/** A candidate next symbol: igi_jw_unit, then its "count" and "prob" (predict's candidates,
 *  explain's). */
void igi_jw_candidate(cJSON *o, const ig_index *idx, const ig_symbol *s);

#endif
