/*
 * The lcp file (format.h): per window of `stride` suffix-array rows, each row's common prefix
 * with the row before (capped) and its branching byte, so that a search can place a pattern
 * among a window's rows with one text comparison (query/find.c). Made by the sorter, which
 * has the text and the suffix array; each window carries a checksum tied to its number and
 * its sampled key, checked by the search on the window's first use.
 */
#ifndef IG_LCP_H
#define IG_LCP_H

#include <stdint.h>
#include "infinigram/error.h"

/** Fills the lcp file of text t[0, n) sorted into sa (int64 entries when wide, else int32)
 *  into out (ig_lcp_bytes(n, stride) bytes, the caller's), the sampled keys `sample` (format.h,
 *  already filled) standing in each window's checksum. */
void igi_lcp_fill(const uint8_t *t, uint64_t n, int wide, const void *sa, uint32_t stride, const uint8_t *sample,
                  uint8_t *out);

/** The checksum of window w: its 2·stride bytes at rec, with w and its sampled key (8 bytes
 *  as stored) — a record moved to another window or another shard does not match. */
uint64_t igi_lcp_window_sum(uint64_t w, const uint8_t *key, const uint8_t *rec, uint32_t stride);

/** The checksum of block b of key lcps (its 4096 bytes at block). */
uint64_t igi_lcp_block_sum(uint64_t b, const uint8_t *block);

struct ig_shard;

/** 1 when block b of the shard's key lcps matches its checksum (as igi_lcp_window_ok). */
int igi_lcp_block_ok(const struct ig_shard *s, uint64_t b);

/** 1 when window w of the shard's lcp file matches its checksum (checked on its first use,
 *  remembered when it does; a window that does not is checked again each time, and its search
 *  goes without it). */
int igi_lcp_window_ok(const struct ig_shard *s, uint64_t w);

/** The load's check: up to IG_LCP_CHECK_WINDOWS windows spread over the file (the first and
 *  the last among them) match their checksums. 0 when one does not: the file is then left
 *  unused (a stale file, one of another shard, a zeroed or truncated-and-padded one). */
#define IG_LCP_CHECK_WINDOWS 16
int igi_lcp_spot_check(const struct ig_shard *s);

/** Sets up a mapped lcp file (s->maps[IG_F_LCP], s->stride set): its window records in s->lcp
 *  and its top keys read into s->lcp_top (owned by the shard). IG_ENOMEM. */
int igi_lcp_open(struct ig_shard *s, ig_error *err);

#endif
