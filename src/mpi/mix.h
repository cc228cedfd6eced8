/*
 * mix and eval over the parts whatever the number of candidates or the text's length: every
 * context those commands read is known in advance. mix, 2 round trips: each part is asked for
 * the ℓ* of all of them in one batch, then for its level at the largest. eval, 1: each part is
 * asked once for every position's levels (ig_eval_levels).
 */
#ifndef IG_MPI_MIX_H
#define IG_MPI_MIX_H

#include "cluster.h"
#include "command.h"

/* mix: contexts known beforehand, each a window [a, b) of a text followed by bytes of
 * its own (taken as they are: the text is normalised already, a token's bytes are the
 * model's to read). Flag 0: this part's ℓ* of each; flag 1: its level at the length given for
 * each (byte view). */
void do_batch(wire_rd *q, wire *w);

/* eval, a round trip: this part's levels (ig_eval_levels_text) of each position i in [from, to)
 * of the text sent (from the first byte a context of those positions reads), its context capped
 * at L bytes (-1: none), down to the floor given (ig_eval_floor of the model). */
void do_evallv(wire_rd *q, wire *w);

/* mix over the parts, 2 round trips: every byte factor of every candidate reads the ∞-gram
 * after the context and a proper prefix of the candidate, all known at the start: each part's
 * ℓ* of all of them, then each part's level at the largest of each; ig_mix reads them. */
int cmd_mix(void *opts, void *result, const words *ws, double t0);

/* ---- eval: every position's context is known before the first is scored */

/* eval over the parts, 1 round trip in every model (per million positions: what rank 0 holds at
 * once is bounded): each part's levels of every position (its
 * count profile down to the shortest length the model reads, with the counts of the position's
 * byte and of <end> at each change point, and the bytes following ℓ*), summed
 * (ig_eval_levels_add); ig_eval_parts_score applies the model's formula, the one ig_eval
 * applies on one machine, in the shares of its threads. */
int cmd_eval(void *opts, void *result, const words *ws, double t0);

#endif
