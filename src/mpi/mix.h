/*
 * mix and eval over the parts in at most two round trips whatever the number of candidates or
 * the text's length: every context those commands read is known in advance, so each part is
 * asked for the ℓ* of all of them in one batch, then for its level (mix) or its evaluation
 * point (eval of the ∞-gram) at the largest; eval of any other model asks each part once for
 * every position's levels (ig_eval_levels).
 */
#ifndef IG_MPI_MIX_H
#define IG_MPI_MIX_H

#include "cluster.h"
#include "command.h"

/* mix, eval: contexts known beforehand, each a window [a, b) of a text followed by bytes of
 * its own (taken as they are: the text is normalised already, a token's bytes are the
 * model's to read). Flag 0: this part's ℓ* of each; flag 1: its level at the length given for
 * each (byte view). */
void do_batch(wire_rd *q, wire *w);

/* eval, round 2: this part's point (ig_eval_point) of each position i in [1, n] of the text,
 * its context capped at L bytes (-1: none), at the ℓ* given for it. */
void do_evalpts(wire_rd *q, wire *w);

/* eval of another model than the ∞-gram, its one round trip: this part's levels
 * (ig_eval_levels_get) of each position i in [1, n) of the text, its context capped at L bytes
 * (-1: none), down to the floor given (ig_eval_floor of the model). */
void do_evallv(wire_rd *q, wire *w);

/* mix over the parts, 2 round trips: every byte factor of every candidate reads the ∞-gram
 * after the context and a proper prefix of the candidate, all known at the start: each part's
 * ℓ* of all of them, then each part's level at the largest of each; ig_mix reads them. */
int cmd_mix(const words *ws, double t0);

/* ---- eval: every position's context is known before the first is scored */

/* eval over the parts. The ∞-gram, 2 round trips: each part's ℓ* of every position's context
 * (the corpus's is the largest), then each part's point there (the suffix's count, the count
 * of the byte that follows in the text, the bytes that may follow), summed; ig_eval_from_points
 * scores them as one index would. Any other model, 1 round trip: each part's levels of every
 * position (its count profile, with the counts of the position's byte and of <end> at each
 * change point), summed (ig_eval_levels_add); ig_eval_from_levels applies the model's formula,
 * the one ig_eval applies on one machine. */
int cmd_eval(const words *ws, double t0);

#endif
