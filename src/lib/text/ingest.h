/*
 * Ingestion: turns dataset sources into documents. Files are read (after an optional
 * byte range), validated as UTF-8 (0xFF is never valid, so no document can contain the
 * separator), optionally repaired (--lossy: U+FFFD per invalid byte) and normalised to
 * NFC, then handed one document at a time to a sink. Directories are walked in sorted
 * (byte-wise) order, hidden entries skipped; in a walk, binary and invalid files are
 * skipped and reported unless `strict`. Errors name the file and the byte offset in the
 * raw file (and line for lines/jsonl).
 */
#ifndef IG_INGEST_H
#define IG_INGEST_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include "infinigram/build.h"
#include "../util/util.h"

/**
 * Receives one document: `name` (the source path, or "<inline>"), `source_line`
 * (1-based for lines/jsonl documents, 0 otherwise), and its final bytes (valid
 * UTF-8, NFC if asked). The bytes are only valid during the call. Non-zero return
 * aborts ingestion and is passed back (err already set by the sink).
 */
typedef int (*ig_doc_sink)(void *ctx, const char *name, uint64_t source_line,
                           const uint8_t *text, size_t len, ig_error *err);

/** A file to read, as listed from the sources. */
typedef struct ig_ingest_file {
    char *path;        ///< owned
    uint64_t size;     ///< bytes at listing time
    int in_walk;       ///< 1 if found by walking a directory (errors become skips)
    char *skip;        ///< owned: why a walk does not read this entry (a link, a special
                       ///< file, an unreadable directory), or NULL
} ig_ingest_file;

/** Statistics and skips accumulated over an ingestion. */
typedef struct ig_ingest_stats {
    uint64_t source_bytes;   ///< raw bytes read (after ranges)
    uint64_t replaced;       ///< U+FFFD substitutions (lossy)
    uint64_t documents;      ///< documents passed to the sink
    uint64_t doc_offset;     ///< where the document being passed to the sink starts in its file's
                             ///< data (after ranges; past a lossy repair, in the repaired data)
    size_t nskipped, skipped_cap;
    ig_skipped *skipped;     ///< owned array (free with igi_ingest_stats_free)
} ig_ingest_stats;

void igi_ingest_stats_free(ig_ingest_stats *s);
/** Frees n skip records and the array. */
void igi_skipped_free(ig_skipped *list, size_t n);

/**
 * Expands sources into the list of files to read: a file stays itself; a directory is
 * walked recursively in strcmp order of names, skipping names starting with '.', and
 * non-regular files. Errors: missing or unreadable source (IG_ENOTFOUND / IG_EIO), a
 * directory with no files (IG_EINVAL). Inline sources produce no entry. Free with
 * igi_ingest_files_free.
 */
int igi_ingest_list(const ig_source *sources, size_t n, ig_ingest_file **files,
                   size_t *nfiles, ig_error *err);
void igi_ingest_files_free(ig_ingest_file *files, size_t n);

/**
 * Reads one file and emits its documents. For a file in a walk, problems with the file
 * itself (unreadable, NUL byte in the first 8 KiB = binary, invalid UTF-8 when not
 * lossy, empty) are recorded in stats->skipped and 0 is returned, unless opts->strict.
 * For a file named directly: empty file, invalid UTF-8 or 0xFF → IG_EINVAL naming the
 * file and byte offset (unless lossy); NUL bytes are text.
 */
int igi_ingest_file_read(const ig_ingest_file *f, const ig_ingest_options *opts,
                        ig_doc_sink sink, void *ctx, ig_ingest_stats *stats,
                        const volatile sig_atomic_t *cancel, ig_error *err);

/**
 * Reads the one file `path` as a source named directly (never walked), keeping no stats. A
 * directory is refused as not being `what` ("a text file", "an eval set"); `cannot` is what
 * a path that cannot be looked at says. An empty file gives no document and no error when
 * empty_ok, else it is refused as igi_ingest_file_read refuses it.
 */
int igi_ingest_path(const char *path, const char *what, const char *cannot, int empty_ok,
                    const ig_ingest_options *opts, ig_doc_sink sink, void *ctx, ig_error *err);

/** Emits inline text (validated/normalised like a file named directly) as "<inline>". */
int igi_ingest_inline(const char *text, size_t len, const ig_ingest_options *opts,
                     ig_doc_sink sink, void *ctx, ig_ingest_stats *stats, ig_error *err);

/**
 * UTF-8 helpers. igi_utf8_check returns 1 if valid (no 0xFF, no overlongs, no surrogates),
 * else 0 and *bad = offset of the first invalid byte.
 */
int igi_utf8_check(const uint8_t *p, size_t n, size_t *bad);

/** Appends p with every invalid byte replaced by U+FFFD; *replaced += substitutions. */
int igi_utf8_lossy(const uint8_t *p, size_t n, ig_buf *out, uint64_t *replaced);

/** Appends the NFC form of valid UTF-8 `p` to out (ASCII runs copied as-is: fast path).
 *  With `same` (may be NULL), text that is its own NFC is not copied: *same = 1 and out is
 *  left as it was. */
int igi_utf8_nfc(const uint8_t *p, size_t n, ig_buf *out, int *same, ig_error *err);

/** Fingerprint of a source for staleness: size and mtime of the path itself; for a
 *  directory with deep = 1 also a hash over every walked file's (relative path, size,
 *  mtime) and their total size. */
typedef struct ig_fingerprint {
    int is_dir;
    int walked;          ///< a directory whose tree was walked (size and tree_hash are set)
    uint64_t size;       ///< file size, or total size of walked files
    int64_t mtime_ns;    ///< of the path itself
    uint64_t tree_hash;  ///< of every (path, size, mtime) below a walked directory
} ig_fingerprint;

/* A file's size and mtime; a directory's mtime and, when it holds at most `limit` entries
 * (0: never walked; UINT64_MAX: always), the total size and tree hash of what is below. */
int igi_source_fingerprint(const char *path, uint64_t limit, ig_fingerprint *out, ig_error *err);

#endif
