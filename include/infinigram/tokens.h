/*
 * Token indexes: suffix-array indexes of token ids written by the infini-gram indexer
 * (its "v4" and "v6" layouts), attached read-only and queried in tokens.
 *
 * The layout, per shard:
 *   tokenized   the documents' token ids, little-endian, tw = 1, 2 or 4 bytes each; every
 *               document is preceded by a separator of tw bytes 0xFF (the id 2^(8·tw) − 1,
 *               shown as <end>: what follows a document's last token);
 *   table       the suffix array: one little-endian pointer per token (the byte offset of
 *               a token start in `tokenized`), pointer width = size of table ÷ tokens, 1 to
 *               5 bytes, in plain byte order of the suffixes of `tokenized` — so u16 ids do
 *               not sort numerically, and a suffix that is a prefix of another sorts first;
 *   offset      one little-endian u64 per document: the byte offset of its separator;
 *   metadata    optional: one JSON line per document, and
 *   metaoff     one little-endian u64 per document: where its line starts.
 * v4 keeps every shard in one directory with the shard number as suffix (tokenized.0,
 * table.0, offset.0, …); v6 has one directory per shard with the names unsuffixed
 * (attach the shard's directory, or a directory of such directories, taken in name order).
 * v5 stores each document's tokens reversed: it is refused, as nothing in its files tells
 * it apart from v4 once attached — its directory name (v5_…) or `version` 5 does.
 *
 * Attaching never writes into the directory and copies nothing: the files are mapped, their
 * sizes and widths checked, the document offsets read whole (8 bytes a document) and
 * checked, and about a thousand suffix-array rows and separators per shard spot-checked.
 * Token datasets built here (ig_token_options in build.h) are written in the v4 layout with a
 * manifest of their own (tokens.json) and opened by the same reader.
 *
 * Queries on a token index count tokens: patterns are whole token sequences (the bytes of
 * their ids), positions are token offsets inside documents, and distributions are over
 * next tokens.
 */
#ifndef IG_TOKENS_H
#define IG_TOKENS_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "index.h"

IG_BEGIN_DECLS

typedef struct ig_attach_options {
    uint32_t token_width;  ///< bytes per token id: 1, 2 or 4; 0 = inferred from the file sizes
    uint32_t version;      ///< layout version when known (4 or 6; 5 is refused); 0 = detect
    const char *vocab;     ///< vocabulary file shown with ids (NULL: ids shown as numbers)
    uint8_t reserved[16];
} ig_attach_options;

/** Sets the defaults: width inferred, layout detected, no vocabulary. */
IG_API void ig_attach_options_default(ig_attach_options *o);

/**
 * Opens the token index in `dir` (see the file comment) into *out, read-only. Errors name
 * the file and what is wrong: IG_ENOTFOUND when dir holds no such index, IG_ECORRUPT for
 * sizes, widths, offsets or rows that do not fit, IG_EUSAGE for a v5 index or a token width
 * that the sizes leave ambiguous (give it). Free with ig_index_close; *out is NULL on failure.
 */
IG_API int ig_index_attach(ig_index **out, const char *dir, const ig_attach_options *o, ig_error *err);

/** What identifies the files of a token index as they are now — every file's name, size,
 *  modification and status-change times and inode — so that a change shows as a different
 *  value, even a file replaced by one of the same size with its time carried over; *bytes receives the
 *  total size of its files. */
IG_API int ig_attach_fingerprint(const char *dir, uint64_t *fingerprint, uint64_t *bytes, ig_error *err);

/**
 * 0 when the files of a token index are as they were when it was opened, and so is its
 * vocabulary or tokenizer file (or the index is not a token index); else IG_ECORRUPT (or the
 * errno of a vanished vocabulary) naming what changed. Its files are mapped: one cut short under
 * a reader would fault it, and text is tokenised with the model read at open, so long-lived
 * readers (the shell, the server) ask before each use. Costs a directory read and a stat per file.
 */
IG_API int ig_index_changed(const ig_index *idx, ig_error *err);

/** Checks every row of an attached token index's suffix arrays (in the text, at a token start,
 *  in order over their first 512 bytes) and every separator the offsets name: the deep check
 *  attach only samples. Reads every file whole; polls cancel. */
IG_API int ig_index_attach_verify(const ig_index *idx, const volatile int *cancel, ig_error *err);

/** 1 when a token index holds the tokenizer its documents were tokenised with (a dataset
 *  added with --tokenizer): text is then accepted wherever ids are, and tokenised the same
 *  way. 0 for other token indexes and for indexes of bytes. */
IG_API int ig_index_tokenizes(const ig_index *idx);

/** Token width of an index: 1, 2 or 4 for a token index, 0 for an index of bytes. */
IG_API uint32_t ig_index_token_width(const ig_index *idx);

/** Longest metadata record read: a longer one (a damaged or grown file) is not read. */
#define IG_DOC_METADATA_MAX ((size_t)1 << 20)

/** The metadata record of document `id` of a token index (*p into the index's mapping, *n
 *  bytes, its final line break excluded; the last record of a shard, when its file runs on
 *  past IG_DOC_METADATA_MAX bytes, ends at its first newline): 0, IG_ENOTFOUND when the index
 *  has none or no such document, IG_ECORRUPT when the record is longer than
 *  IG_DOC_METADATA_MAX bytes (then it is not read). */
IG_API int ig_doc_metadata(const ig_index *idx, uint64_t id, const char **p, size_t *n);

/** The separator id of a token width: 2^(8·tw) − 1. */
static inline uint32_t ig_token_end(uint32_t tw) { return tw >= 4 ? UINT32_MAX : (1u << (8 * tw)) - 1; }

/** Token id at `p` (tw little-endian bytes). */
static inline uint32_t ig_token_at(const uint8_t *p, uint32_t tw)
{
    uint32_t v = 0;
    for (uint32_t i = tw; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/**
 * Parses a list of token ids separated by commas and/or white space ("5613,4086,9068", one id
 * a line, or a JSON array: brackets around the list)
 * into their little-endian bytes (*out malloc'd, *len bytes). Refuses, naming the item: a
 * non-number, an id the token width cannot hold, and the separator id anywhere but last
 * (a pattern that ends a document). An empty list is valid (no tokens).
 */
IG_API int ig_tokens_parse(const ig_index *idx, const char *text, size_t n, uint8_t **out, size_t *len,
                           ig_error *err);

/** Size of the vocabulary (ids 0 .. size−1), 0 without one. */
IG_API uint64_t ig_vocab_size(const ig_index *idx);

/**
 * Appends to `out` (malloc'd, *outlen bytes; both 0 at first) the display text of `n` token
 * ids given as little-endian bytes: through the vocabulary — byte-level BPE pieces and
 * SentencePiece pieces decoded to the text they stand for — or, without one, the ids as
 * numbers in brackets ("[5613]"). The separator shows as `sep` (e.g. "\n" or "<end>").
 * IG_ENOMEM when out cannot grow.
 */
IG_API int ig_tokens_text(const ig_index *idx, const uint8_t *ids, size_t n, const char *sep, char **out,
                          size_t *outlen, ig_error *err);

/** One token's display text (as ig_tokens_text, <end> for the separator): into buf (the
 *  caller's, size bytes, NUL-terminated, cut if too long), which is returned. */
IG_API const char *ig_token_text(const ig_index *idx, uint32_t id, char *buf, size_t size);

/** Matching statistics of a token sequence (len bytes, whole tokens): for each token i, the
 *  length in tokens of the longest run of tokens starting there that occurs in the index
 *  (*ms malloc'd, len ÷ tw entries), with O(tokens) searches in all (m(i+1) ≥ m(i) − 1;
 *  *searches, may be NULL, gets their number). */
IG_API int ig_token_matching(const ig_index *idx, const uint8_t *ids, size_t len, uint64_t **ms, uint64_t *searches,
                             ig_error *err);

/** A next token and how often it follows. */
typedef struct ig_token_count {
    uint32_t id;
    uint64_t count;
} ig_token_count;

/**
 * Next-token histogram of a pattern of `len` bytes (whole tokens) whose per-shard intervals
 * are `r` (from ig_find): every distinct next token with its count, in id order (*out
 * malloc'd, *n entries). The end of a document counts as the separator id. Cost
 * O(d · log count) per shard for d distinct next tokens, or a read of d entries when the
 * index's next-token table (below) holds the context.
 */
IG_API int ig_token_next(const ig_index *idx, const ig_range *r, size_t len, ig_token_count **out, size_t *n,
                         ig_error *err);

/**
 * Next-token tables. The exact next-token histogram of a context seen c times costs one
 * bisection of its c rows per distinct next token — tens of milliseconds for a context like
 * "the" in a large index. A next-token table holds, for every context of one, two or three
 * tokens seen at least min_count times (no separator in it), its whole histogram, and its
 * ∞-gram distribution in the layout of ig_symbol, so that a request for it reads them in place:
 * `predict` borrows the symbols (ig_predict_result.syms_borrowed). It lives in a file of its own
 * outside the index (checksummed: a header, a directory of contexts, their runs), mapped while
 * in use and tied to the index's files by their fingerprint. Answers are the same with and
 * without one.
 */
typedef struct ig_next_table_info {
    uint64_t min_count;  ///< contexts seen at least this often are held
    uint64_t contexts;   ///< contexts held (single tokens, pairs and triples)
    uint64_t entries;    ///< (context, next token) pairs held
    uint64_t bytes;      ///< size of the file
} ig_next_table_info;

/** The default min_count of an index: its tokens ÷ 1,024 rounded up, at least 2 — so at most
 *  1,024 single tokens and 1,024 pairs, each at least a 1,024th of the text. */
IG_API uint64_t ig_next_table_min_count(const ig_index *idx);

/**
 * Makes the next-token table of token index idx (min_count 0: the default) and writes it to
 * `path` whole or not at all (a temporary file beside it, fsynced, renamed over it). Polls
 * cancel between contexts (IG_ECANCELLED; nothing written). *info (may be NULL) describes it.
 * Reads idx only.
 */
IG_API int ig_next_table_write(const ig_index *idx, const char *path, uint64_t min_count, const volatile int *cancel,
                               ig_next_table_info *info, ig_error *err);

/**
 * Puts the next-token table at `path` to use in idx (replacing any), after checking its header
 * and directory: IG_ECORRUPT naming the file when it is cut short, corrupt, of another layout
 * (made by an older version: :dataset prepare makes it again) or made for other files. Each
 * context's runs are checked the first time they are read; a mismatch is an error naming the
 * file, never a wrong histogram. The table is mapped and owned by idx from then on; a table it
 * replaces stays mapped until ig_index_close, so that answers borrowed from it stay valid. The
 * file must not be rewritten in place while in use (ig_next_table_write renames a new file over
 * it). Not to be called while other threads query idx.
 */
IG_API int ig_next_table_use(ig_index *idx, const char *path, ig_next_table_info *info, ig_error *err);

IG_END_DECLS

#endif
