/*
 * count and doc over the parts: a count is the sum of the parts' counts, the positions are
 * rank 0's first, then rank 1's..., with document numbers offset by the documents of the ranks
 * before; a document is fetched from the rank that holds it (by name: each rank's count of
 * documents of that name first).
 */
#ifndef IG_MPI_COUNTS_H
#define IG_MPI_COUNTS_H

#include "cluster.h"
#include "command.h"

/* The part side of this family's requests (dispatch.c calls them by opcode): each reads its
 * request from q and appends its reply to w, its status first (reply_status); both are the
 * caller's. An error is the reply's status, never the end of the rank. */
void do_count(wire_rd *q, wire *w);

void do_doc(wire_rd *q, wire *w);

/* doc by name: this part's documents of that name (how many, and its first). */
void do_docname(wire_rd *q, wire *w);

/* Rank 0's code for this family's commands, as query_cmd.run (queries.h): opts filled and
 * result zeroed by query_answer, which frees them after. */
int cmd_count(void *opts, void *result, const words *ws, double t0);

int cmd_doc(void *opts, void *result, const words *ws, double t0);

#endif
