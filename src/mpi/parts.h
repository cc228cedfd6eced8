/*
 * The parts of a distributed dataset: `:dataset add` on every rank, `load` (each rank opens its
 * part and rank 0 checks it against the catalog's record of the build, naming rank, host and
 * path of a part missing or rebuilt alone), and an occurrence's encoding on the wire, shared by
 * the handlers that send positions back to rank 0.
 */
#ifndef IG_MPI_PARTS_H
#define IG_MPI_PARTS_H

#include "cluster.h"
#include "command.h"

/* 0 when this rank's home holds an open catalog, else the error naming the home. */
int need_catalog(ig_error *e);

/* :dataset add on this rank. */
void do_add(wire_rd *q, wire *w);

/* load on this rank: opens its part (replacing the one open) and replies with its path,
 * documents and checksum for rank 0 to check against the catalog's record. */
void do_load(wire_rd *q, wire *w);

/* The whole of dataset `name` built over the ranks, from rank 0's record of the build: the sums
 * of the parts' bytes, documents and shards, and the number of parts. 1 when it has such a
 * record (readable), else 0. */
int parts_whole(const char *name, uint64_t *bytes, uint64_t *documents, uint64_t *shards, uint64_t *parts);

/* An occurrence on the wire: its location, snippet (or none) and match. */
void put_occ(wire *w, const ig_occurrence *oc);

/* Reads one written by put_occ into *oc, its document numbered `base` more (the documents of
 * the ranks before): name and snippet malloc'd (the caller's, NULL when absent). */
void get_occ(wire_rd *rd, uint64_t base, ig_occurrence *oc);

/* Rank 0's commands of this family: ws is the command line (the caller's; NULL while serving,
 * when fill_opts takes the options the server decoded), t0 the command's start. Each writes
 * its answer or its error (emit, fail): 0, or -1 when it failed. */
int cmd_add(const words *ws, double t0);

/* load NAME: opens every rank's part and checks it against the record of the build; with
 * `quiet` (serve, which loads before a request) only a failure is written. */
int cmd_load(const char *name, int quiet, double t0);

#endif
