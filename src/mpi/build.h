/*
 * The distributed build: each rank builds part `rank` of `size` of the dataset with the
 * library's sharded builder, then the ranks vote (one MPI_Iallreduce of their success flags under
 * the build deadline) and each switches its part in only when every rank succeeded; rank 0
 * records the parts in its catalog.
 */
#ifndef IG_MPI_BUILD_H
#define IG_MPI_BUILD_H

#include "cluster.h"
#include "command.h"

void do_build(wire_rd *q, wire *w);

int cmd_build(const words *ws, double t0);

#endif
