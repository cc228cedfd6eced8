/*
 * generate over the parts: ig_gen_backend's callbacks answered by the parts (each byte's
 * distribution from their profile and levels, the summary's matching statistics and the longest
 * span's first occurrence), so that a seeded generation is byte-identical to one machine's.
 */
#ifndef IG_MPI_GENERATE_H
#define IG_MPI_GENERATE_H

#include "infinigram/explain.h"
#include "cluster.h"
#include "command.h"

/* generate over the parts: each byte of a step 2 round trips (parts_dist), then 2 for the
 * summary (matching statistics; the longest span's first source); the draws are the one
 * machine's, so a seeded generation is byte-identical. */
int cmd_generate(void *opts, void *result, const words *ws, double t0);

/* The session's last generation, kept by cmd_generate for explain --step/--last (never NULL;
 * its dataset is NULL when there was none). */
const ig_generation *generation_last(void);

#endif
