/*
 * A test helper that writes an index in the on-disk layout of the official infini-gram
 * engine, from documents given as token-id arrays, so that reading that layout can be tested
 * without the official (Python + Rust) indexer. Test corpora are small: the suffix array is
 * built by a plain comparison sort.
 *
 * THE LAYOUT (as the official indexer writes it and its C++ engine reads it)
 *
 * Tokens. Every token is an unsigned little-endian integer of T = 1, 2 or 4 bytes (u8 for raw
 * bytes, u16 or u32 for tokenizer ids). The all-ones value (0xFF, 0xFFFF, 0xFFFFFFFF) is the
 * document separator and is not a token id.
 *
 * Shards. A dataset is one or more shards; each shard is a self-contained index of a subset
 * of the documents. Per shard:
 *
 *   tokenized  every document of the shard in order, each PRECEDED by one separator token
 *              (T bytes 0xFF); nothing after the last document. Size = T * (documents +
 *              tokens of all documents); an empty document is a lone separator.
 *   table      the suffix array: one pointer per token position of `tokenized`, the
 *              separators included (table size / pointer width = tokenized size / T). A
 *              pointer is the BYTE offset of the suffix's first token (always a multiple of
 *              T), stored in P = 1..5 bytes little-endian; the engine derives P as table
 *              size / token count. The official indexer picks the smallest P with
 *              tokenized size <= 2^(8P) (ceil(log2(size) / 8)).
 *              Order: the suffixes ds[ptr..end of shard) compared as plain bytes (memcmp
 *              order of the little-endian stream, so for T > 1 NOT the order of the ids as
 *              numbers), running over separators and later documents up to the end of the
 *              shard; a suffix that is a proper prefix of another sorts first. Suffixes of a
 *              shard are all distinct, so the order is total.
 *   offset     one u64 little-endian per document: the byte offset in `tokenized` of the
 *              separator that precedes it (the first is 0). A document runs from its
 *              offset + T to the next document's offset (or the end of `tokenized`).
 *   metadata   optional: one JSON object and a '\n' per document, in document order; the
 *              official indexer writes {"path": FILE, "linenum": N, "metadata": {...}}.
 *   metaoff    present exactly when metadata is: one u64 little-endian per document, the
 *              byte offset of its line in `metadata`.
 *   unigram    optional, text: "ID COUNT\n" per distinct token of the shard in ascending
 *              id order, the separator counted too (its count = documents). The engine
 *              also accepts a bare "COUNT" line per id (line number = id).
 *
 * File names. v4 (indexing.py) keeps every shard in one directory with the shard number as
 * a suffix: tokenized.0, table.0, offset.0, metadata.0, metaoff.0, unigram.0, tokenized.1,
 * .... v6 (indexing_v6.py) writes one shard per directory with unsuffixed names
 * (tokenized, table, offset, metadata, metaoff, unigram); a multi-shard v6 dataset is a list
 * of such directories given to the engine in order (their names are free; this writer uses
 * DIR/0, DIR/1, ...). The engine classifies a directory's entries by SUBSTRING of the whole
 * path ("tokenized", "table", "offset", "metadata", "metaoff", "unigram", tested in that
 * order) and orders each kind by sorting the path strings, so shard 10 of a v4 directory
 * comes before shard 2 and a directory path containing one of those words breaks loading.
 * Global document numbers run over the shards in that order.
 *
 * Reversed (v5, or v6 --reversed): each document's tokens are stored in reverse order (the
 * separator still precedes it); the engine reverses queries and reads the token BEFORE a
 * match as its continuation.
 *
 * Documents. The official v4 tokenizer spreads the documents of each batch round-robin over
 * the shards; this writer splits them contiguously (shard s gets documents
 * [s*n/S, (s+1)*n/S)), which the format allows.
 *
 * How the official engine reads it (what a reader must match to answer alike): a match is
 * a byte-wise prefix match of the query at a table pointer, so matches are token-aligned and
 * never cross a separator; the token after a match is the next token, with a separator and
 * the end of the shard both read as the caller's end-of-sequence id; a document's tokens
 * are [offset + T, next offset). Its next-token shortcut (a rank range whose first and last
 * continuations agree is taken as uniform) is wrong for a query that also ends the shard:
 * that suffix sorts first (continuation "end") and one followed by a separator can sort
 * last, so the whole range comes out as end-of-sequence. On reversed indexes the
 * continuation (the token before) is not sorted by rank, so the shortcut does not hold at
 * all there. The official indexer refuses files under about 100 KB (its parallel merge
 * needs an overlap of that size), one reason this writer exists.
 */
#ifndef IG_TEST_OFFICIAL_WRITER_H
#define IG_TEST_OFFICIAL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "infinigram/error.h"

/* One document: its token ids, each below the separator value of the token width. */
typedef struct official_doc {
    const uint32_t *ids;
    size_t len;
} official_doc;

typedef enum official_layout {
    OFFICIAL_V4, /* one directory, names suffixed .N */
    OFFICIAL_V6, /* one subdirectory per shard (DIR/N), unsuffixed names */
} official_layout;

typedef struct official_opts {
    int token_width;        /* 1, 2 or 4 */
    int ptr_width;          /* 1..5, or 0 for the official indexer's choice */
    official_layout layout;
    size_t shards;          /* >= 1 and <= documents (an empty shard is not an index) */
    bool metadata;          /* write metadata + metaoff: {"path": "doc-K", "linenum": K, "metadata": {}} */
    bool unigram;           /* write unigram */
    bool reversed;          /* v5-style: each document's tokens stored reversed */
} official_opts;

/* The separator value (and one past the largest token id) of a token width. */
uint32_t official_sep_id(int token_width);

/* The pointer width the official indexer picks for a tokenized file of ds_size bytes. */
int official_min_ptr_width(uint64_t ds_size);

/* The path of file `name` ("tokenized", "table", ...) of shard s of an index at dir, as
 * malloc'd string (NULL when out of memory). */
char *official_shard_path(const char *dir, official_layout layout, size_t s, const char *name);

/* Writes the index of docs[0..n) into dir (created if missing; files already there are
 * replaced). 0, or -1 with err set: bad options, a token id >= the separator, a pointer that
 * does not fit the forced width, I/O. */
int official_write(const char *dir, const official_doc *docs, size_t n, const official_opts *o,
                   ig_error *err);

/* Error-test helpers: cut a file to `size` bytes; XOR one byte at `offset` with `mask`. */
int official_truncate(const char *path, uint64_t size, ig_error *err);
int official_flip_byte(const char *path, uint64_t offset, uint8_t mask, ig_error *err);

#endif
