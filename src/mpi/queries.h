/*
 * The engine commands infinigram-mpi answers over the parts: one table, read by the driver
 * (a command line's first word) and by the server (an engine request's operation), so that
 * the two faces answer the same commands with the same code.
 */
#ifndef IG_MPI_QUERIES_H
#define IG_MPI_QUERIES_H

#include "cluster.h"
#include "command.h"

/* A distributed engine command: its operation (static, the library's) and rank 0's code for it
 * (as each family's cmd_* functions: ws NULL while serving). */
typedef struct query_cmd {
    const ig_op *op;
    int (*run)(const words *ws, double t0);
} query_cmd;

/* The command whose operation is `op`, or else whose operation is named `name` (either may be
 * NULL): a static row, or NULL when that command is not distributed. */
const query_cmd *query_find(const ig_op *op, const char *name);

#endif
