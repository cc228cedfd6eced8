/*
 * Suffix sorting through libdivsufsort. The 32-bit and 64-bit APIs live in separate
 * files because their headers declare the same helper types.
 */
#ifndef IG_SORT_H
#define IG_SORT_H

#include <stdint.h>
#include "infinigram/error.h"

/** Suffix array of t[0..n) with the 32-bit API (n < 2^31); *sa is malloc'd. */
int ig_sort32(const uint8_t *t, uint64_t n, int32_t **sa, ig_error *err);
/** The same with the 64-bit API (any n); *sa is malloc'd. */
int ig_sort64(const uint8_t *t, uint64_t n, int64_t **sa, ig_error *err);

#endif
