/*
 * The part side of every request: a request's opcode dispatched to its handler (the do_*
 * functions of each command family), and the loop the ranks other than 0 run, answering rank 0
 * until it says quit.
 */
#ifndef IG_MPI_WORKER_H
#define IG_MPI_WORKER_H

#include "cluster.h"

/* Runs one request on this rank into reply w. 0, or 1 for OP_QUIT. */
int handle(const uint8_t *msg, size_t n, wire *w);

/* The other ranks: answer rank 0 until it says quit. */
void serve_rank0(void);

#endif
