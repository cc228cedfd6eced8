/*
 * The ∞-gram models over the parts: each part's ℓ* (the corpus's is the largest), its level at
 * a length (suffix count, next-byte histogram, character counts: the corpus's are the sums), its
 * count profile (the lengths where its suffix count changes); and predict, prob and backoff
 * built from them as one machine builds them (ig_predict_from_level, ig_prob_from_levels,
 * ig_backoff_from_parts). parts_dist, any model's distribution over the parts, is what
 * generate and explain reuse.
 */
#ifndef IG_MPI_MODELS_H
#define IG_MPI_MODELS_H

#include "cluster.h"
#include "command.h"

/* Round 1 of the ∞-gram: this part's ℓ* (a suffix occurs in the corpus when it occurs in a
 * part, so the corpus's ℓ* is the largest). */
void do_longest(wire_rd *q, wire *w);

/* A level on the wire: the suffix count, the next-byte counts that are not 0, the symbols. */
void put_level(wire *w, const ig_part_level *lv);

/* Reads a level written by put_level into *lv (zeroed but for ell, which the caller sets; syms
 * malloc'd). -1 when the message is garbled or memory ran out (lv then holds nothing). */
int get_level(wire_rd *rd, ig_part_level *lv);

/* Mixtures, round 1: this part's count profile of the context. */
void do_profile(wire_rd *q, wire *w);

/* Mixtures, round 2: this part's levels at every change point of the corpus's profile. */
void do_levels(wire_rd *q, wire *w);

/* Round 2 of a single-level model: this part's level at the length the corpus's model reads. */
void do_level(wire_rd *q, wire *w);

/* prob, round 1 (∞-gram): this part's ℓ* before each byte of the continuation. */
void do_plongest(wire_rd *q, wire *w);

/* prob, round 2: this part's level before each byte, at the length given for that step
 * (the next-byte counts that are not 0). */
void do_plevels(wire_rd *q, wire *w);

/* Any model's distribution after q[0, qn) over the parts, 2 round trips: each part's count
 * profile of the context, summed; then each part's levels at every change point of the sum
 * (all the levels a model can read), summed; ig_predict_from_parts does the rest. Outputs as
 * ig_predict_from_parts; errors name the rank at fault. */
/* ig_gen_backend's and ig_prob_with's predict over the parts: parts_dist, byte view (user
 * unused; *d is freed first, so it must be zeroed or hold a distribution). */
int parts_predict(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d, ig_error *err);

int parts_dist(const ig_model *model, const uint8_t *q, size_t qn, int chars, ig_dist *d, ig_symbol **syms,
               size_t *nsyms, double *unseen, int *sparse, ig_error *e);

/* predict over the parts: the ∞-gram in 2 round trips (the parts' ℓ*, then their levels at
 * the largest), the n-gram in 1 (its length is known; the parts' ℓ*, which it reports, come
 * with their levels). */
int cmd_predict(void *opts, void *result, const words *ws, double t0);

/* prob over the parts: every step's context is known before the first is predicted, so
 * the ∞-gram takes 2 round trips whatever the continuation's length (every step's ℓ* from
 * each part; then every step's level), the n-gram 1. */
/* prob's check of a typed line (query_cmd.check): two quoted texts, as the shell wants them. */
int prob_words(const words *ws, double t0);
int cmd_prob(void *opts, void *result, const words *ws, double t0);

/* backoff over the parts, 2 round trips: the parts' count profiles (ℓτ and the change points
 * under it come from their sum), then their levels at those lengths, each with its suffix as
 * the whole context. */
int cmd_backoff(void *opts, void *result, const words *ws, double t0);

#endif
