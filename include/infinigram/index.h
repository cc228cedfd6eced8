/*
 * Query engine over a built index (format v1, see format.h). An index is a directory
 * of shards; each shard holds its text (documents each followed by 0xFF), a suffix
 * array, document start offsets and document names. ig_index_open maps the files
 * read-only and validates sizes and versions without reading them whole, so opening
 * costs the same for 1 MB and 100 GB. Every query answers exactly, and every answer can
 * be traced back to corpus positions. A handle is immutable after open: any number of
 * threads may query it at once.
 *
 * Pointer arguments of this header, and of query.h, model.h and the other query headers,
 * must not be NULL unless the prototype says so (ig_count, ig_index_get_info and the free
 * and close functions take NULL); a closed handle is NULL. A text may be (NULL, 0): empty.
 */
#ifndef IG_INDEX_H
#define IG_INDEX_H

#include <stdint.h>
#include <stddef.h>
#include "error.h"

IG_BEGIN_DECLS

typedef struct ig_index ig_index;

/** Byte that ends every document in the indexed text; never valid UTF-8. */
#define IG_DOC_END 0xFF

/** Summary of an open index. */
typedef struct ig_index_info {
    uint64_t bytes;        ///< indexed bytes, one 0xFF per document included
    uint64_t documents;    ///< number of documents
    uint32_t shards;       ///< number of shards
    uint32_t pointer_width;///< suffix-array pointer bytes (4 or 5)
    int wide_api;          ///< 1 when built with the 64-bit libdivsufsort API
    int normalized;        ///< 1 when sources were NFC-normalised
    uint32_t format_version; ///< IG_INDEX_FORMAT_VERSION of the files
    uint32_t line_index_missing; ///< shards with search tables but no stored line index (built before
                                 ///< it existed): their first location counts it from the text; a
                                 ///< rebuild stores it
    int casefold;          ///< 1 when the index is of the case-folded text (queries are folded
                           ///< too; locations and documents show the original text)
    uint32_t lcp_missing;  ///< shards with sampled keys but no lcp file (built without `--lcp`, or
                           ///< before it existed): answers are the same, a count on a cold cache
                           ///< reads about twice the pages; a rebuild with --lcp stores it
} ig_index_info;

/** SA interval [lo, hi) of one shard. */
typedef struct ig_range {
    uint64_t lo;  ///< first suffix-array row whose suffix starts with the pattern
    uint64_t hi;  ///< one past the last such row
} ig_range;

/** A corpus position: shard and byte offset inside that shard's text. */
typedef struct ig_pos {
    uint32_t shard;   ///< shard number
    uint64_t offset;  ///< byte offset in the shard text
} ig_pos;

/** Where a position falls, for display. */
typedef struct ig_location {
    uint64_t doc;          ///< global document id, 0-based
    const char *name;      ///< document name (source path); owned by the index
    uint64_t source_line;  ///< 1-based line/record number for lines/jsonl documents, 0 otherwise
    uint64_t offset;       ///< byte offset inside the document's indexed text
    uint64_t line;         ///< 1-based line within the document
    uint64_t column;       ///< 1-based column, in characters
} ig_location;

/** Document metadata. */
typedef struct ig_doc {
    uint64_t id;           ///< global document id
    const char *name;      ///< owned by the index
    uint64_t source_line;  ///< as in ig_location
    uint32_t shard;        ///< shard holding the document
    uint64_t start;        ///< byte offset of its first byte in the shard text
    uint64_t length;       ///< bytes, without the trailing 0xFF
} ig_doc;

/** Opens the index in directory `dir` into *out (the caller's: free with ig_index_close);
 *  on failure *out is set to NULL (close a handle before reusing its variable).
 *  The index is checked before it is returned: its document table, document names and
 *  prefix table in full, its suffix array and sampled keys at about a thousand rows per
 *  shard. A file that fails gives IG_ECORRUPT naming the file and what is wrong. The
 *  files are mapped, not copied: while the index is open they must not be rewritten in place
 *  (answers are then undefined); a rebuild writes a new directory and leaves the open one
 *  alone. A file another program truncates under the map is caught: the library installs a
 *  SIGBUS handler at the first open (the program's own handler still gets every other
 *  fault) that makes a read past the new end read zeros and records the corruption, so that
 *  the query fails with IG_ECORRUPT naming the file (ig_index_health), as do later ones.
 *  Threads must not block SIGBUS (a blocked fault kills the process whatever the handler). */
IG_API int ig_index_open(ig_index **out, const char *dir, ig_error *err);

/** A member of a composed index: its name (shown with its positions) and index directory. */
typedef struct ig_index_member_spec {
    const char *name;
    const char *dir;
} ig_index_member_spec;

/**
 * Opens n built indexes as one corpus, and takes away the documents of nminus more.
 * Queries answer as one index built from the members' documents in order would: counts
 * and distributions add over the members, document ids run on from member to member,
 * positions name their member (ig_index_member). Each document of a `minus` index must be
 * a byte-for-byte copy of a document of the members (else IG_EUSAGE naming the first that
 * is not); the first such copy in corpus order is taken away — its occurrences are
 * subtracted from every count and histogram, never listed, and later documents are
 * renumbered — so answers equal those of a rebuild without it. Members must agree on
 * normalisation and pointer width (IG_EUSAGE naming the two that differ). Nothing is copied: open costs the members' opens plus, with `minus`, one
 * search per subtracted document. Free with ig_index_close; the specs are not kept.
 */
IG_API int ig_index_open_composed(ig_index **out, const ig_index_member_spec *members, size_t n,
                                  const ig_index_member_spec *minus, size_t nminus, ig_error *err);

/** Name of the member holding global document `doc` of a composed index (owned by the
 *  index); NULL for a plain index or a document id past the end. */
IG_API const char *ig_index_member(const ig_index *idx, uint64_t doc);

/** 1 for a composed index, 0 otherwise; *members and *subtracted (may be NULL) receive how
 *  many members add and how many take documents away. */
IG_API int ig_index_composed(const ig_index *idx, uint32_t *members, uint32_t *subtracted);

/** Unmaps and frees the index; sets *idx to NULL. NULL-safe. */
IG_API void ig_index_close(ig_index **idx);

/** Fills *info (zeroed for a NULL index). */
IG_API void ig_index_get_info(const ig_index *idx, ig_index_info *info);

/** Fills *info from the manifest of the index in `dir` alone (no other file is opened): for
 *  describing an index without loading it. */
IG_API int ig_index_read_info(const char *dir, ig_index_info *info, ig_error *err);

/**
 * Turns prefetching of the next bisection steps on (default) or off. It overlaps the
 * memory (or disk) latency of the two bound searches; off is for measuring its effect,
 * e.g. on a cold page cache. Set before sharing the handle between threads.
 */
IG_API void ig_index_set_prefetch(ig_index *idx, int on);

/** Directory the index was opened from (owned by the index); NULL for a composed index. */
IG_API const char *ig_index_dir(const ig_index *idx);

/** Document by global id. */
IG_API int ig_doc_get(const ig_index *idx, uint64_t id, ig_doc *out, ig_error *err);
/** What an error about a document id adds for a corpus of `documents`: "ids are 0 to N-1"
 *  ("the only id is 0", "the index has no documents"), written into the caller's buf (n
 *  bytes); returns buf. */
IG_API const char *ig_doc_ids(uint64_t documents, char *buf, size_t n);

/** Pointer to `len` bytes of shard text starting at `offset` (clipped to the shard): into the
 *  index's mapping, valid until ig_index_close. In a case-folded index this is the folded
 *  text, the one positions are offsets of; ig_text_original gives the original. A shard
 *  past the last gives NULL and *len 0. */
IG_API const uint8_t *ig_text(const ig_index *idx, uint32_t shard, uint64_t offset, size_t *len);

/** In a case-folded index, an offset inside the folding of one character (the second s of
 *  ß → ss) moved to that character's start (up = 0) or past its folding (up = 1); any other
 *  offset, and every offset of other indexes, as it is. */
IG_API uint64_t ig_text_char_edge(const ig_index *idx, uint32_t shard, uint64_t offset, int up);

/**
 * Appends to `out` (a malloc'd buffer of *outlen bytes, grown with realloc; both 0 at first)
 * the original bytes of shard text [offset, offset + len): in a case-folded index the text
 * before folding, from the start of the character holding `offset` to the end of the one
 * holding the last byte; otherwise the bytes themselves. *orig (may be NULL) is set to the
 * original offset of the first byte in the shard. IG_ENOMEM when memory runs out.
 */
IG_API int ig_text_original(const ig_index *idx, uint32_t shard, uint64_t offset, uint64_t len, uint8_t **out,
                            size_t *outlen, uint64_t *orig, ig_error *err);

/**
 * Verifies the per-file checksums recorded in the manifest (reads every file whole).
 * Returns 0 when all match, IG_ECORRUPT naming the first bad file otherwise.
 */
IG_API int ig_index_verify(const char *dir, ig_error *err);
/** A 64-bit checksum of the index in `dir` made from its manifest alone (the files'
 *  recorded checksums and sizes; nothing else is read): two indexes with the same files
 *  have the same one. IG_ENOTFOUND / IG_ECORRUPT when the manifest cannot be read. */
IG_API int ig_index_checksum(const char *dir, uint64_t *out, ig_error *err);

/**
 * 0 while no query on this index has met corruption; else IG_ECORRUPT with "index corrupt
 * (DIR: what): run :dataset verify DATASET, then rebuild" (`dataset` may be NULL). Every
 * suffix-array pointer a query reads is range-checked: a bad one is replaced by a safe
 * position and recorded here, so a query never reads outside the index's files, and its
 * answer must be discarded when this fails. The typed operations check it after each run.
 */
IG_API int ig_index_health(const ig_index *idx, const char *dataset, ig_error *err);

IG_END_DECLS

#endif
