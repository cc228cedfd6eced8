/*
 * spans over the parts: the corpus's matching statistics are the largest of the parts'
 * (a string occurs in the corpus when it occurs in a part); the spans follow from them alone,
 * then each span's count is the sum of the parts' and its sources the first in corpus order.
 */
#ifndef IG_MPI_SPANS_H
#define IG_MPI_SPANS_H

#include "cluster.h"
#include "command.h"

/* generate's summary: this part's matching statistics of the text. */
void do_matching(wire_rd *q, wire *w);

/* spans: this part's count of each span of the text, and, when `listed` is not 0, its first
 * `listed` occurrences (count's, in corpus order), unless this part alone would list more
 * than a request may (then the whole corpus would too: rank 0 says so); ranked (--rank bm25),
 * then its BM25 statistics for the text's terms and, for each document it listed, its length
 * in terms, hash, size and the text's term frequencies in it (ig_bm25_part_get,
 * ig_bm25_docs_get). */
void do_spans(wire_rd *q, wire *w);

/* spans --rank bm25: the texts of the documents listed (each a rank and its id there) that
 * this rank holds, to tell identical candidate sources apart. */
void do_doctexts(wire_rd *q, wire *w);

/* Matching statistics over the parts, 1 round trip: the longest prefix of text[i..] that occurs
 * in the corpus is the longest that occurs in some part. */
int gen_matching(void *user, const uint8_t *text, size_t len, uint64_t **ms, ig_error *err);

/* spans over the parts: the parts' matching statistics, the largest at each position (1 round
 * trip); the maximal spans from them as one index finds them (ig_spans_from_matching); then
 * each span's count and first sources from every part (1 round trip); with --max-count one more
 * before, every candidate's count. --rank bm25: the second round trip also brings each part's
 * BM25 statistics for the text's terms (documents, terms, document frequencies: the corpus's
 * are their sums) and what scoring reads of each candidate document (its length in terms and
 * the text's term frequencies in it, from the part holding it): rank 0 scores them as one index
 * does (ig_bm25_score) and ranks (ig_spans_rank); one more round trip fetches the bytes of the
 * candidates that may be identical (equal hash and size) to fold them exactly. */
int cmd_spans(void *opts, void *result, const words *ws, double t0);

#endif
