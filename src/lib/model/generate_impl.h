/*
 * What a generator knows that the generate operation's summary needs: the matching
 * statistics of its output. A generator finds ℓ*, the longest suffix of its text that
 * occurs in the corpus, after every byte (it needs it to choose the next), so the longest
 * corpus match starting at each output byte follows in one pass, without the search per
 * byte that ig_spans makes on a text it knows nothing about.
 */
#ifndef IG_GENERATE_IMPL_H
#define IG_GENERATE_IMPL_H

#include "infinigram/generate.h"

/**
 * The matching statistics of the first len bytes of g's output (len ≤ the output's length:
 * what is left after a stop string is cut): (*ms)[i] is the length of the longest prefix of
 * output[i..len) that occurs in the corpus, as ig_spans gives it. *ms is malloc'd (the
 * caller's). Returns 1 when the generator cannot tell (a token index, a caller's predictor,
 * ℓ* cut by a cap on the context: then *ms is NULL and the caller searches), 0, or IG_ENOMEM.
 */
int igi_gen_matching(const ig_gen *g, size_t len, uint64_t **ms, ig_error *err);

#endif
