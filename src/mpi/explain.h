/*
 * explain over the parts: the distribution as predict's mixtures get it, then every count
 * explain reads after it (the profile, each candidate's level counts, the longest suffix it
 * follows in each part and its first sources there) in one more round trip, merged by the
 * library's ig_explain_*_part helpers.
 */
#ifndef IG_MPI_EXPLAIN_H
#define IG_MPI_EXPLAIN_H

#include "cluster.h"
#include "command.h"

/* explain, round 3: with the corpus's distribution known (its ℓ* L, its levels, its top
 * candidates, the symbol in focus), this part's profile (ig_explain_profile_part) and its
 * answer for each candidate (ig_explain_cand_part). */
void do_explain(wire_rd *q, wire *w);

/* explain over the parts, 3 round trips: the distribution as predict gets it from the parts
 * (2: profiles, then levels at every change point), then in one more every count explain
 * reads after it, with each candidate's first sources (do_explain, explain_merge). */
int cmd_explain(void *opts, void *result, const words *ws, double t0);

#endif
