/*
 * Helpers the operations' JSON writers share: one spelling of a byte string (text when
 * it is valid UTF-8 without NUL, else hex under KEY_hex), of a location, and of a
 * 64-bit count. Writers build a cJSON object and hand back its members as text.
 */
#ifndef IG_OPJSON_H
#define IG_OPJSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include "infinigram/index.h"

/** "key": text, or "key_hex": hex digits when the bytes are not NUL-free valid UTF-8. */
void jw_bytes(cJSON *o, const char *key, const uint8_t *p, size_t n);
void jw_u64(cJSON *o, const char *key, uint64_t v);
/** Appends {doc, name, offset, line, column[, source_line]} to arr; returns it. */
cJSON *jw_location(cJSON *arr, const ig_location *loc);
/** A symbol: "symbol" (its text, "<end>", or null when not text) and "bytes_hex". */
void jw_symbol(cJSON *o, const uint8_t *b, int len);
/** The object's members without the braces; frees o. malloc'd ("" for no members). */
char *jw_members(cJSON *o);

#endif
