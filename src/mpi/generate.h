/*
 * generate over the parts: ig_gen_backend's callbacks answered by the parts (each byte's
 * distribution from their profile and levels, the summary's matching statistics and the longest
 * span's first occurrence), so that a seeded generation is byte-identical to one machine's.
 */
#ifndef IG_MPI_GENERATE_H
#define IG_MPI_GENERATE_H

#include "cluster.h"
#include "command.h"

/* generate over the parts: each byte of a step 2 round trips (parts_dist), then 2 for the
 * summary (matching statistics; the longest span's first source); the draws are the one
 * machine's, so a seeded generation is byte-identical. */
int cmd_generate(const words *ws, double t0);

/* The last generation of the session, kept by cmd_generate for explain --step/--last (all
 * owned here; dataset NULL before the first generation). */
typedef struct last_generation {
    char *dataset;         ///< the dataset it read
    ig_model model;        ///< its resolved model
    uint8_t *prompt, *text;
    size_t plen, tlen;
    ig_gen_step *steps;    ///< one per generated character
    size_t nsteps;
} last_generation;

/* The last generation (never NULL; its dataset is NULL when there was none). */
const last_generation *generation_last(void);

#endif
