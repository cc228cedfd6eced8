/*
 * search over the parts: each part's occurrences of every clause (summed: the order and
 * sampling of the clauses are the corpus's), then each part's documents up to the page's end,
 * in corpus order.
 */
#ifndef IG_MPI_SEARCH_H
#define IG_MPI_SEARCH_H

#include "cluster.h"
#include "command.h"

/* search, round 1: this part's occurrences of each clause of the query. */
void do_searchtot(wire_rd *q, wire *w);

/* search, round 2 (and 3): the query searched in this part by the corpus's clause totals, the
 * window of its matching documents given for this rank: how many match here, how many
 * clauses were taken, and the window's documents (the first hit's location). */
void do_search(wire_rd *q, wire *w);

/* search over the parts: each part's occurrences of every clause, summed (1 round trip: the
 * order and the sampling of the clauses are the corpus's); then each part searched by them,
 * the page cut from the parts' documents in corpus order (1 more when every part can list
 * the documents up to the page's end, at most a million; else 2: how many match in each part,
 * then each part's share of the page). Exact answers are one machine's; past the budget the
 * answer is flagged approximate with one machine's scale (ig_search_sampling), the documents
 * then those of each part's own sample. */
int cmd_search(void *opts, void *result, const words *ws, double t0);

#endif
