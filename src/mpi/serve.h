/*
 * serve on rank 0: the HTTP server of infinigram serve over rank 0's catalog, each engine
 * request handed to the command's own code here, so the JSON is the one machine's. The server's
 * threads take turns on the communicator (MPI_THREAD_SERIALIZED).
 */
#ifndef IG_MPI_SERVE_H
#define IG_MPI_SERVE_H

#include "cluster.h"
#include "command.h"

/* serve [--host H] [--port N] [--threads N]: rank 0 runs the HTTP server of infinigram serve
 * over its catalog (every dataset built here), engine requests answered over the parts, until
 * SIGINT. A rank that does not answer in time ends the job naming it (mpirun exits non-zero);
 * Open MPI 4.1 ends it as well when a rank dies. */
int cmd_serve(const words *ws, double t0);

#endif
