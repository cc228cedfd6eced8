/*
 * Text as the engine sees it: UTF-8 validation (0xFF, the end-of-document byte, is never
 * valid), preparing query bytes the way an index's sources were prepared (NFC unless the
 * dataset kept its bytes), reading a text file the way a build reads a source, and the
 * terms of a text (the Unicode word runs that BM25 ranking counts); and the growable byte
 * buffer the library builds text in, which callers may use for theirs.
 */
#ifndef IG_TEXT_H
#define IG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "index.h"

IG_BEGIN_DECLS

/** Growable bytes; zero-initialise, free with ig_buf_free (the buffer owns data). A failed
 *  append marks it failed and every later one fails too, so that text built by many appends
 *  cannot silently lose a piece: checking the last append (or `failed`) is enough. */
typedef struct ig_buf {
    uint8_t *data;
    size_t len, cap;
    int failed;
} ig_buf;
/** Appends p[0, n) (copied); 0, or IG_ENOMEM when memory ran out, now or before. */
IG_API int ig_buf_append(ig_buf *b, const void *p, size_t n);
/** Frees the bytes and zeroes the buffer, which may be used again. */
IG_API void ig_buf_free(ig_buf *b);

/**
 * Prepares query bytes for this index: NFC-normalised when the index was built with
 * normalisation and the bytes are valid UTF-8, copied as-is otherwise (so raw byte
 * queries stay possible), then case-folded (utf8proc, code point by code point) when the
 * index is case-folded, as its documents were. *out is malloc'd.
 */
IG_API int ig_query_normalize(const ig_index *idx, const uint8_t *p, size_t n, uint8_t **out,
                              size_t *outlen, ig_error *err);

/** 1 if p[0..n) is valid UTF-8 (0xFF never is); else 0 and *bad = first bad offset. */
IG_API int ig_utf8_valid(const uint8_t *p, size_t n, size_t *bad);

/** s (NUL-terminated, malloc'd) as valid UTF-8: s itself when it is, else a malloc'd copy with
 *  each byte of no whole character replaced by U+FFFD, s freed. NULL when out of memory (s is
 *  freed then too). For text of any origin bound for JSON: file names are bytes. */
IG_API char *ig_utf8_repair(char *s);

/** The length of the longest prefix of p[0..n) of at most `max` bytes that does not end
 *  inside a character: max moved back over continuation bytes (n when n <= max). For
 *  showing the head of a long text without cutting a character in two. */
IG_API size_t ig_utf8_prefix(const uint8_t *p, size_t n, size_t max);

/**
 * Reads one text file whole as a source named directly would be read: optional byte
 * range ("A:B", see ig_byte_range_parse), UTF-8 validation (errors name the byte
 * offset), NFC when `normalize`. *out (malloc'd, NUL-terminated) holds *len bytes.
 */
IG_API int ig_load_text(const char *path, const char *range_text, int normalize, uint8_t **out,
                        size_t *len, ig_error *err);

/**
 * The terms of p[0, n) as 64-bit hashes, in order: terms are maximal runs of Unicode
 * letters, combining marks and digits (categories L, M, N), lowercased code point by
 * code point; anything else, invalid UTF-8 included, separates them. The first `max`
 * hashes go to out (caller-owned; may be NULL); returns the number of terms.
 */
IG_API size_t ig_terms(const uint8_t *p, size_t n, uint64_t *out, size_t max);

IG_END_DECLS

#endif
