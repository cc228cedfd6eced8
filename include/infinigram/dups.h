/*
 * Repeated passages (the dups operation): every maximal substring of at least K bytes
 * that occurs at least twice in the corpus, across shards as well as within them, never
 * joined across a document end; how many bytes sit in an occurrence after the first of
 * such a repeat (the duplicated bytes, split by whether the earlier copy is in the same
 * document or in an earlier one), the top repeats by length × count with their sources,
 * and the corpus with every later occurrence removed (ig_dups_write).
 *
 * Method. The shards' suffix arrays are merged on the fly by their first K bytes (one
 * shard: its suffix array as it is), and the LCP of each suffix with the one before it
 * is computed by comparing their text, capped at K and stopped by a document end: runs
 * of LCP ≥ K are the K-grams that occur more than once. A K-gram occurrence whose bytes
 * occur earlier in corpus order (shard, then offset) is a later window; the duplicated
 * bytes are the union of the later windows, which is exactly the set of bytes covered by
 * an occurrence after the first of some repeat of ≥ K bytes. Inside each such run the
 * suffixes are put in full lexicographic order (runs from several shards are merged) and
 * their exact LCPs found by comparing past the K known bytes; the LCP intervals of value
 * ≥ K are the right-maximal repeats, and those whose occurrences are not all preceded by
 * the same byte (a document start counts as a unique byte) are the maximal repeats.
 *
 * Cost and memory. Time is one pass over every suffix array with at most K bytes of
 * text compared per row, plus, inside runs, comparisons past K. A run whose suffixes are
 * all preceded by the same byte holds no maximal repeat and is skipped, so a passage
 * copied verbatim costs its length once (at the run of its first bytes); what remains
 * quadratic is a periodic stretch (a long run of one byte or one short pattern), whose
 * R bytes cost about R²/(2·period) byte comparisons (sequential, eight at a time). Memory is two bits per
 * corpus byte (the later-window marks, within-document and across-documents), kept by
 * the result for ig_dups_write and ig_dups_ranges, plus 32 bytes per occurrence of the
 * most frequent K-gram; the run fails with IG_ENOMEM naming the figure when these exceed
 * the {memory} budget. No LCP array is stored: each value is used once, in order, when
 * it is computed. Threads take turns at parts of the suffix order (eight per thread, cut at
 * first-byte boundaries, which no run of K ≥ 1 shared bytes straddles) and share the marks.
 */
#ifndef IG_DUPS_H
#define IG_DUPS_H

#include <stddef.h>
#include <stdint.h>
#include "fields.h"
#include "index.h"
#include "query.h"

IG_BEGIN_DECLS

/** Progress of a dups run over the suffix arrays (rows done of rows in all shards).
 *  Return non-zero to cancel (as the cancel flag does). */
typedef int (*ig_dups_progress_fn)(void *user, uint64_t done, uint64_t total);

typedef struct ig_dups_opts {
    uint64_t min_len;     ///< K: shortest repeat, bytes (default 100)
    uint64_t top;         ///< repeats listed, by length × count (default 10)
    uint64_t positions;   ///< sources listed per repeat (default 3)
    int within_doc;       ///< only repeats with two occurrences in one document (and the bytes they duplicate)
    int across_docs;      ///< only repeats in two or more documents (and the bytes they duplicate)
    uint64_t memory;      ///< budget for the marks and the largest K-gram's occurrences (default 4G)
    uint64_t threads;     ///< worker threads (0: one per core, at most 8)
    ig_bytes write;       ///< shell only: the deduplicated corpus goes to this JSONL file (ig_dups_write)
    /** Not fields: progress (may be NULL) and its user pointer. */
    ig_dups_progress_fn progress;
    void *user;
    uint8_t reserved[16]; ///< zero (the defaults function clears it): room for options to come
} ig_dups_opts;

/** A maximal repeat. */
typedef struct ig_dups_repeat {
    uint64_t length;      ///< bytes
    uint64_t count;       ///< occurrences in the corpus
    uint64_t documents;   ///< distinct documents holding an occurrence
    int within_doc;       ///< some document holds two occurrences
    int across_docs;      ///< occurrences in two or more documents
    ig_pos first;         ///< first occurrence in corpus order
    ig_occurrence *sources; ///< its first `positions` occurrences in corpus order, located (malloc'd)
    size_t nsources;
} ig_dups_repeat;

typedef struct ig_dups_result {
    uint64_t bytes;               ///< text bytes of the corpus (document ends not counted)
    uint64_t duplicated;          ///< bytes removed under the chosen filter
    uint64_t duplicated_within;   ///< bytes in a later window whose K-gram occurs earlier in the same document
    uint64_t duplicated_across;   ///< bytes in a later window whose K-gram occurs in an earlier document
    uint64_t duplicated_any;      ///< bytes in a later window (the union of the two)
    uint64_t repeats;             ///< distinct maximal repeats passing the filter
    uint64_t repeats_within;      ///< distinct maximal repeats with two occurrences in one document
    uint64_t repeats_across;      ///< distinct maximal repeats in two or more documents
    uint64_t repeats_all;         ///< distinct maximal repeats
    uint64_t longest;             ///< length of the longest repeat passing the filter
    ig_dups_repeat *top;          ///< by length × count, longest first on ties (malloc'd)
    size_t ntop;
    struct igi_dups_marks *marks; ///< private: the later-window marks
} ig_dups_result;

IG_API void ig_dups_defaults(ig_dups_opts *o);
IG_API int ig_dups_run(const ig_op_ctx *ctx, const ig_dups_opts *o, ig_dups_result *r, ig_error *err);
/** JSON members: dataset, min_len, filter, bytes, duplicated (+ _within, _across, _any),
 *  duplicated_share, repeats (+ _within, _across, _all), longest, top [{length, count,
 *  documents, within_doc, across_docs, text|text_hex, sources}]. malloc'd. */
IG_API char *ig_dups_json(const ig_op_ctx *ctx, const ig_dups_opts *o, const ig_dups_result *r);
IG_API void ig_dups_result_free(ig_dups_result *r);
IG_API extern const ig_field ig_dups_fields[];
IG_API extern const ig_op ig_op_dups;

/**
 * The removed byte ranges of shard `shard` under the run's filter, merged and in order
 * (each a union of later windows, inside one document). *out is malloc'd (may be NULL
 * when *n is 0).
 */
IG_API int ig_dups_ranges(const ig_index *idx, const ig_dups_result *r, uint32_t shard, ig_range **out, size_t *n,
                          ig_error *err);

/**
 * Writes the corpus without its removed ranges to `path` as JSONL: for each document in
 * corpus order, one record {"name", "source_line", "text"} per maximal piece of it that
 * is kept (a document without removals is one record; a removed range never joins the
 * text around it, so the output holds no repeat of ≥ K bytes). Removed ranges are widened
 * to whole UTF-8 characters. Written to a temporary file beside `path`, synced, then
 * renamed over it: a failed or cancelled run (cancel is polled) leaves no file at `path`
 * and removes its temporary. *records (may be NULL) gets the records written, *kept the
 * text bytes.
 */
IG_API int ig_dups_write(const ig_index *idx, const ig_dups_result *r, const char *path,
                         const volatile int *cancel, uint64_t *records, uint64_t *kept, ig_error *err);

IG_END_DECLS

#endif
