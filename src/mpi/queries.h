/*
 * The engine commands infinigram-mpi answers over the parts: one table, read by the driver
 * (a command line's first word) and by the server (an engine request's operation), so that
 * the two faces answer the same commands with the same code.
 */
#ifndef IG_MPI_QUERIES_H
#define IG_MPI_QUERIES_H

#include "cluster.h"
#include "command.h"

/* A distributed engine command: its operation (static, the library's) and rank 0's code for it,
 * the part of the command between its options and its end (each family's cmd_* functions):
 * opts filled and result zeroed, both query_answer's (which frees them after), ws the command
 * line (NULL while serving), t0 the command's start. It writes the answer or the error (emit,
 * fail, answer_or_fail) and frees what it made besides the result: 0, or -1 when it failed. */
typedef struct query_cmd {
    const ig_op *op;
    int (*run)(void *opts, void *result, const words *ws, double t0);
    /* The command's own check of a typed line, before its options are read (the shell's order:
     * prob's two quoted texts); reports and returns -1, or 0. NULL: none. */
    int (*check)(const words *ws, double t0);
} query_cmd;

/* The command whose operation is `op`, or else whose operation is named `name` (either may be
 * NULL): a static row, or NULL when that command is not distributed. */
const query_cmd *query_find(const ig_op *op, const char *name);

/* Command qc from start to end: its options at their defaults and its result zeroed, the
 * dataset loaded (cmd_begin), the options filled from ws (fill_opts: NULL while serving), then
 * qc->run, or the filling's error written; the result and options freed. 0, or -1 when the
 * command failed. */
int query_answer(const query_cmd *qc, const words *ws, double t0);

#endif
