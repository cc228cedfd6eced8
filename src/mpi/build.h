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

/* The part side of this family's requests (dispatch.c calls them by opcode): each reads its
 * request from q and appends its reply to w, its status first (reply_status); both are the
 * caller's. An error is the reply's status, never the end of the rank. */
void do_build(wire_rd *q, wire *w);

/* Rank 0's commands of this family: ws is the command line (the caller's; NULL while serving,
 * when fill_opts takes the options the server decoded), t0 the command's start. Each writes
 * its answer or its error (emit, fail): 0, or -1 when it failed. */
int cmd_build(const words *ws, double t0);

#endif
