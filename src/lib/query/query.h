/*
 * Internal query primitives shared by the models: per-shard SA intervals of a pattern,
 * narrowing an interval when the pattern grows by one byte, and next-byte histograms
 * of an interval computed from its sorted sub-intervals (each next byte owns a contiguous
 * sub-interval of a pattern's suffix-array interval).
 */
#ifndef IG_QUERY_PRIVATE_H
#define IG_QUERY_PRIVATE_H

#include <stdint.h>
#include "index/index_impl.h"

/** Per-shard intervals of one pattern (one per shard, allocated by the caller). */
typedef struct ig_match {
    uint64_t count;        ///< total over shards
    size_t len;            ///< pattern length
    ig_range *r;           ///< idx->nshards intervals (caller-owned storage)
} ig_match;

/** Finds p in every shard into m (m->r must hold nshards entries). */
void igi_match_find(const ig_index *idx, const uint8_t *p, size_t len, ig_match *m);

/** Narrows `from` (the match of p[0..len)) to the match of p[0..len]·b, into `to`. */
void igi_match_extend(const ig_index *idx, const ig_match *from, const uint8_t *p, uint8_t b,
                     ig_match *to);

/** Count of p[0..len)·b given the match of p[0..len) (one narrowing search per shard). */
uint64_t igi_match_count_next(const ig_index *idx, const ig_match *m, const uint8_t *p, uint8_t b);

/**
 * Next-byte histogram of a match: cnt[b] += occurrences followed by b. Cost
 * O(d · log count) per shard for d distinct next bytes. If sub is non-NULL it receives
 * the sub-interval of each byte per shard: sub[b * nshards + s].
 */
void igi_match_hist(const ig_index *idx, const ig_match *m, uint64_t cnt[256], ig_range *sub);
/** The same, also setting bit b of bits (4 words) for every byte b counted: a caller can then
 *  visit (and clear) only the bytes that occur, not all 256. */
void igi_match_hist_bits(const ig_index *idx, const ig_match *m, uint64_t cnt[256], ig_range *sub, uint64_t bits[4]);

/** The occurrence at the lowest row of the first shard of `r` (per-shard intervals) that is
 *  shown — not in a subtracting shard nor in a document taken away. 0 when none is. */
int igi_ranges_first_shown(const ig_index *idx, const ig_range *r, ig_pos *out);

/** 1 when every occurrence of the match is followed by the same byte (O(1) per shard). */
int igi_match_single_next(const ig_index *idx, const ig_match *m, int *byte);

/** Matching statistics from the other side: given e[k], the length of the longest suffix of
 *  text[0..k] that occurs (k < len), m[i] = the length of the longest prefix of text[i..len)
 *  that occurs. text[i..j) occurs iff j − i ≤ e[j − 1], and j − e[j − 1] never decreases
 *  (e[k] ≤ e[k − 1] + 1), so one pass with two cursors finds every m[i]. */
void igi_matching_from_ends(const uint64_t *e, size_t len, uint64_t *m);

#endif
