/*
 * The server's one clock: seconds on the monotonic clock, for deadlines (the watchdog's and
 * a stream's) and for elapsed times. A header of its own so that the watchdog, which knows
 * nothing else of the server, shares it.
 */
#ifndef IG_SERVE_CLOCK_H
#define IG_SERVE_CLOCK_H

#include <time.h>

static inline double srv_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
