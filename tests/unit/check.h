/*
 * A minimal assertion kit for the C tests: CHECK(cond, fmt, ...) records a failure
 * with file and line and goes on; check_done() prints "N passed, N failed" for the
 * program and returns its exit status. Random tests use the fixed-seed generator below
 * so every failure can be replayed.
 */
#ifndef IG_TEST_CHECK_H
#define IG_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long check_pass, check_fail;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (cond) { check_pass++; }                                             \
        else {                                                                  \
            check_fail++;                                                       \
            if (check_fail <= 50) {                                             \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                   \
                fputc('\n', stderr);                                            \
            }                                                                   \
        }                                                                       \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %ld passed, %ld failed\n", name, check_pass, check_fail);
    return check_fail ? 1 : 0;
}

/* splitmix64: tiny, fast, good enough for test-case generation. */
typedef struct { uint64_t s; } test_rng;
static inline uint64_t rng_next(test_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline uint64_t rng_below(test_rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

#endif
