/*
 * Index construction: sources (files, directory trees, line- or JSONL-record files,
 * inline text) are read, validated as UTF-8, normalised to NFC, packed into shards of
 * whole documents and suffix-sorted with libdivsufsort. ig_build_index writes a complete
 * index into a directory that must not exist yet and fsyncs it, its entry in the parent
 * directory included; making it the index in
 * force is the catalog's job (catalog.h), which gives atomic replacement. Progress is
 * reported through a callback and a cancel flag is polled between documents and phases.
 */
#ifndef IG_BUILD_H
#define IG_BUILD_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include "error.h"

IG_BEGIN_DECLS

/** How a source's bytes become documents. */
typedef enum ig_source_kind {
    IG_SOURCE_FILE = 0,   ///< a file, or a directory walked recursively (decided by stat)
    IG_SOURCE_INLINE = 1, ///< the `text` given directly
} ig_source_kind;

typedef enum ig_format {
    IG_FORMAT_TEXT = 0,   ///< a file is one document
    IG_FORMAT_LINES = 1,  ///< each non-empty line is a document
    IG_FORMAT_JSONL = 2,  ///< each record's `field` (string), when not empty, is a document
    /* in every format an empty document is left out: it holds no text to find or cite */
} ig_format;

/** One end of a `--range A:B`: absent, a byte offset, or a percentage of the file size. */
typedef struct ig_range_end {
    int kind;        ///< 0 absent, 1 bytes, 2 percent
    double value;    ///< bytes (integral) or percent
} ig_range_end;

/** A byte range applied to each file before decoding; start inclusive, end exclusive. */
typedef struct ig_byte_range {
    ig_range_end start, end;
} ig_byte_range;

/** Parses "A:B" (each side empty, N bytes or P%); returns IG_EUSAGE with a message. */
IG_API int ig_byte_range_parse(const char *s, ig_byte_range *out, ig_error *err);

/** Resolves a range against a size: percentages floor(size*P/100); checks bounds. */
IG_API int ig_byte_range_resolve(const ig_byte_range *r, uint64_t size, uint64_t *a,
                                 uint64_t *b, ig_error *err);

/**
 * Decontamination at build time, by BFF's rule: the eval set's word n-grams (n = 13
 * white-space-separated words joined by single spaces, or n bytes) go in an exact hash set;
 * a document is dropped when at least `threshold` (0.8) of its own n-grams (with repetition)
 * are in the set — or, with `flag_only`, kept and listed. A document with fewer than n words
 * is one n-gram of all of them; an empty one is never dropped. `lowercase` lowercases the
 * eval items and the documents' n-grams (the indexed text keeps its case). The eval set is
 * read as ig_eval_set_load reads it (contam.h), normalised as the sources are.
 */
typedef struct ig_decontam_options {
    const char *eval_path; ///< the eval set: one item per non-empty line, or JSONL with `field`
    const char *field;     ///< JSONL key of the items, or NULL for lines
    uint64_t n;            ///< n-gram size (default 13)
    int bytes;             ///< byte n-grams instead of words
    double threshold;      ///< share of a document's n-grams at or above which it is caught (default 0.8)
    int lowercase;         ///< compare lowercased n-grams
    int flag_only;         ///< keep the documents caught and list them instead of dropping them
    uint8_t reserved[16];  ///< zero (the defaults function clears it): room for options to come
} ig_decontam_options;

/** Sets the defaults: n = 13 words, threshold 0.8, drop; no eval set. */
IG_API void ig_decontam_options_default(ig_decontam_options *o);

/** A document the rule caught. */
typedef struct ig_decontam_doc {
    char *name;            ///< its source (owned)
    uint64_t source_line;  ///< as in ig_location
    uint64_t doc;          ///< flag_only: its id in the index; else the id it would have had
    uint64_t ngrams, matched; ///< its n-grams, and those in the eval set
} ig_decontam_doc;

/** Per source file: documents read and caught. */
typedef struct ig_decontam_source {
    char *name;            ///< owned
    uint64_t documents, caught;
} ig_decontam_source;

/** What decontamination did during a build; free with ig_build_result_free. */
typedef struct ig_decontam_report {
    uint64_t eval_hash;    ///< hash of the eval items as read (64-bit, hex in the catalog)
    uint64_t eval_items, eval_ngrams; ///< items, and distinct n-grams in the set
    uint64_t documents, caught; ///< documents checked, and caught by the rule
    int flag_only;
    ig_decontam_source *sources;
    size_t nsources;
    ig_decontam_doc *docs; ///< the first IG_DECONTAM_LISTED caught documents
    size_t ndocs;
} ig_decontam_report;

/** Caught documents a report lists (the count covers them all). */
#define IG_DECONTAM_LISTED 1000

/** What a token dataset is built from (ig_ingest_options.tokens). */
typedef enum ig_token_format {
    IG_TOKENS_IDS = 1,       ///< a flat little-endian array of ids (`dtype` bytes each); `separator` ends a document
    IG_TOKENS_JSONL_IDS = 2, ///< JSONL: each record's `field` is an array of ids, one document
    IG_TOKENS_TEXT = 3,      ///< text read as ig_ingest_options.format says, tokenised with `tokenizer`
} ig_token_format;

/**
 * A token dataset of our own: documents of token ids, stored in the narrowest width (1, 2 or 4
 * bytes) that holds every id below the vocabulary's size (or, without one, the largest id + 1)
 * with 2^(8·width) − 1 left free as the separator. The index is the infini-gram layout of
 * tokens.h (v4: tokenized.N, table.N, offset.N, metadata.N, metaoff.N per shard) plus
 * tokens.json, the manifest: layout version, token and pointer widths, and every file's
 * size and checksum. Text given to a SentencePiece tokenizer is tokenised line by line — as
 * `spm_encode` reads its input — and a document's ids are its lines' ids in order (the
 * model's own normaliser sees the text; line breaks leave no token).
 */
typedef struct ig_token_options {
    int format;            ///< ig_token_format
    uint32_t dtype;        ///< IG_TOKENS_IDS: bytes per id in the file, 2 or 4
    uint32_t separator;    ///< IG_TOKENS_IDS: the id that ends each document (the file's last id)
    const char *field;     ///< IG_TOKENS_JSONL_IDS: the key of the id list (NULL = "ids")
    const char *vocab;     ///< vocabulary file (tokens.h): ids at or above its size are refused; NULL: none
    const char *tokenizer; ///< SentencePiece model: required by IG_TOKENS_TEXT, and the vocabulary when given
    uint8_t reserved[16];  ///< zero: room for options to come
} ig_token_options;

/** Sets the defaults: no format (set one), ids field "ids", no vocabulary, no tokenizer. */
IG_API void ig_token_options_default(ig_token_options *o);

/** How to read sources; the same for every source of a dataset. */
typedef struct ig_ingest_options {
    ig_format format;      ///< text, lines or jsonl
    const char *field;     ///< JSONL field (NULL = "text")
    int has_range;         ///< apply `range` to every file
    ig_byte_range range;   ///< see ig_byte_range
    int normalize;         ///< 1 = NFC (default), 0 = keep bytes
    int lossy;             ///< replace invalid UTF-8 / 0xFF with U+FFFD instead of failing
    int strict;            ///< in directory walks, bad files are errors instead of skipped
    const ig_decontam_options *decontam; ///< drop (or list) documents found in an eval set; NULL: none
    int casefold;          ///< index the Unicode case folding of the text (after NFC); locations
                           ///< and documents still show the original bytes
    uint8_t reserved[4];  ///< zero (the defaults function clears it): room for options to come
    const ig_token_options *tokens; ///< a token dataset (see ig_token_options); NULL: bytes
} ig_ingest_options;

/** Sets the defaults: text format, field "text", NFC, not lossy, not strict. */
IG_API void ig_ingest_options_default(ig_ingest_options *o);

typedef struct ig_source {
    ig_source_kind kind;
    const char *path;      ///< file or directory (IG_SOURCE_FILE)
    const char *text;      ///< inline text (IG_SOURCE_INLINE)
    size_t text_len;       ///< its length in bytes
} ig_source;

/**
 * Memory kept from one build to the next in a process. A shard smaller than 8 MiB is sorted by
 * a thread of this process, into arrays of about 5 bytes per text byte; memory a process has
 * never touched costs a page fault a page when first written (on a virtual machine, 15-17 ms
 * for the arrays of a 1.1 MB corpus: a quarter of its sort). A cache keeps those arrays (at
 * most `cap` bytes, 2 MiB-aligned) for the next build that passes it, and lends them back
 * lazily freed (MADV_FREE), so the kernel may still take them under memory pressure. Builds
 * sorted by child processes, and large shards, never use it. Thread-safe: builds running at
 * once may share one.
 */
typedef struct ig_build_cache ig_build_cache;

/** A cache of at most `cap` bytes (0: 64 MiB); NULL when out of memory. The caller owns it. */
IG_API ig_build_cache *ig_build_cache_new(uint64_t cap);
/** Unmaps what the cache holds and frees it; no build may be using it. NULL is a no-op. */
IG_API void ig_build_cache_free(ig_build_cache *c);

typedef struct ig_build_options {
    uint64_t shard_size;   ///< target shard bytes; documents never cross shards (default 1 GiB)
    int force_wide;        ///< 1: 64-bit libdivsufsort API and 5-byte pointers whatever the size
    int jobs;              ///< shards sorted concurrently (0 = one per core)
    uint64_t prefix_min;   ///< shards at least this large get a prefix table (0 = 8 MiB)
    uint64_t memory;       ///< peak memory budget in bytes (0 = half the RAM): caps shard size
    uint32_t sample_stride; ///< SA rows between sampled search keys in shards with a prefix table (0 = 64)
    int32_t sorter;        ///< IG_SORT_PROCESSES (default) or IG_SORT_IN_PROCESS: see below
    /** One part of a dataset split over several machines (parts > 1; 0 or 1: the whole). The
     *  document stream is cut into `parts` contiguous runs of near-equal size and only run
     *  `part` (0-based) is indexed, so that the parts in order hold exactly the documents, in
     *  the order, of the whole: document d (counting every document of the sources) goes to
     *  part floor(O_d · parts / T), O_d being the offset where it starts in the sources (the
     *  listed sizes of the files before its own, plus its offset in its file) and T the
     *  sources' listed size, capped at parts − 1. A part reads only the files that hold its
     *  documents: a file shared with another part is read whole (its line numbers count from
     *  its start), every other file is passed over unread. A part with no document fails
     *  (IG_EINVAL); decontamination (its document numbers would be the part's): IG_EUSAGE. */
    uint32_t part, parts;
    /** 1: shards with sampled keys also get an lcp file (2.16 bytes per text byte at the
     *  default stride; the index grows from about 5.1 to 7.3 bytes per byte), with which a
     *  search reads one page of it, one of the suffix array and one of text where it read
     *  log2(stride) pages of text: about half the page faults of a count on a cold cache.
     *  0 (the default): none, the index keeps its size (a warm count gains nothing). */
    uint8_t lcp;
    uint8_t reserved[7];   ///< zero: room for options to come
    /** Sort arrays to reuse and keep for the next build (borrowed; must outlive the build), or
     *  NULL (the default): each sort maps fresh memory and unmaps it when done. */
    ig_build_cache *cache;
} ig_build_options;

/**
 * Where ig_build_index suffix-sorts its shards.
 *
 * IG_SORT_PROCESSES (the default): each shard is sorted in a child process made with
 * fork(2), up to `jobs` at a time, so that sorts run in parallel and a cancel takes effect
 * at once (the children are killed). What a caller must know: the children inherit the
 * process's memory copy-on-write and its file descriptors (they close nothing but exit with
 * _exit, running no atexit handlers and flushing no stdio); they are reaped by the build
 * itself through pidfds and waitpid on their pids only, so a caller's SIGCHLD handler sees
 * them exit, and a caller that reaps every child (waitpid(-1)) must not run during a build;
 * each child asks to be killed with SIGKILL when the thread that forked it ends
 * (PR_SET_PDEATHSIG: the thread, not the process — call ig_build_index from a thread that
 * outlives the build). A shard smaller than 8 MiB is sorted by a thread of this process
 * instead (its signals blocked), which costs no fork: a cancel waits for that sort, a
 * fraction of a second. When neither can start, the shard is sorted in-process.
 *
 * IG_SORT_IN_PROCESS: every shard is sorted in the calling thread, one at a time: no
 * child process, no signal, no extra file descriptor; `jobs` only overlaps nothing; a
 * cancel takes effect between shards (a shard's sort itself cannot be interrupted).
 */
enum { IG_SORT_PROCESSES = 0, IG_SORT_IN_PROCESS = 1 };

IG_API void ig_build_options_default(ig_build_options *o);

typedef enum ig_build_phase {
    IG_PHASE_SCAN = 0,     ///< listing sources
    IG_PHASE_READ,         ///< reading and normalising documents
    IG_PHASE_SORT,         ///< suffix sorting a shard
    IG_PHASE_WRITE,        ///< writing shard files
    IG_PHASE_SYNC,         ///< fsync of files and directories
    IG_PHASE_COMMIT,       ///< catalog switched (catalog builds only)
    IG_PHASE_DONE,
} ig_build_phase;

/** Progress report; `done`/`total` are source bytes (total is an estimate). */
typedef struct ig_progress {
    ig_build_phase phase;
    uint64_t done;
    uint64_t total;
    uint32_t shard;        ///< shard being worked on
    const char *path;      ///< file being read, or NULL
} ig_progress;

/** Return non-zero to cancel the build. */
typedef int (*ig_progress_fn)(void *user, const ig_progress *p);

/** A file skipped during a directory walk (not with --strict). */
typedef struct ig_skipped {
    char *path;            ///< owned
    char *reason;          ///< owned, e.g. "binary (NUL byte at offset 17)"
} ig_skipped;

/** What a build produced; free with ig_build_result_free. */
typedef struct ig_build_result {
    uint64_t bytes;        ///< indexed bytes incl. separators
    uint64_t documents;
    uint32_t shards;
    uint64_t source_bytes; ///< raw bytes read
    uint64_t replaced;     ///< invalid sequences replaced (--lossy)
    size_t nskipped;
    ig_skipped *skipped;   ///< owned array
    double seconds;        ///< wall time of the whole build
    int jobs;              ///< sorts run concurrently
    uint64_t shard_size;   ///< shard size cap used
    int memory_limited;    ///< the memory budget lowered the shard size
    uint64_t largest_shard; ///< bytes of the largest shard: above shard_size only when one document is
    ig_decontam_report *decontam; ///< what decontamination did, or NULL (owned)
} ig_build_result;

IG_API void ig_build_result_free(ig_build_result *r);

/**
 * Builds an index of `sources` into `dir`, which must not exist (it is created). On
 * failure or cancel, whatever was written to `dir` is removed. `cancel` (may be NULL)
 * is polled; `progress` (may be NULL) is called often.
 */
IG_API int ig_build_index(const char *dir, const ig_source *sources, size_t nsources,
                          const ig_ingest_options *in, const ig_build_options *bo,
                          ig_progress_fn progress, void *user,
                          const volatile sig_atomic_t *cancel, ig_build_result *res,
                          ig_error *err);

IG_END_DECLS

#endif
