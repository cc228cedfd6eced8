/*
 * The part side of every request: a request's opcode dispatched to its handler, the do_*
 * function of its command family's module. Every rank runs it: the ranks other than 0 from
 * their loop (cluster_answer), rank 0 for its own part inside a round trip.
 */
#ifndef IG_MPI_DISPATCH_H
#define IG_MPI_DISPATCH_H

#include "cluster.h"

/* Runs one request on this rank into reply w. 0, or 1 for OP_QUIT. */
int handle(const uint8_t *msg, size_t n, wire *w);

#endif
