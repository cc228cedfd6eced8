/*
 * The MPI runtime of infinigram-mpi: this rank's state (communicator, ranks and their hosts,
 * catalog, loaded part, deadlines), the polled waits with deadlines, one round trip of a request
 * from rank 0 to a range of ranks with its replies gathered, and what a failure does: a rank
 * that does not answer in time, or cannot be reached, ends the job naming it (mpirun exits
 * non-zero instead of hanging), or while serving is lost for the rest of the job. A reply is
 * its handler's status and message, then its answer; the readers here check the status and
 * name the rank that failed. Rank 0's SIGTERM handler (on_term) names the ranks it was still
 * waiting for when Open MPI stops the job after a rank died.
 */
#ifndef IG_MPI_CLUSTER_H
#define IG_MPI_CLUSTER_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "infinigram/infinigram.h"
#include "wire.h"

enum { TAG_REQ = 1, TAG_REP = 2 };
enum { OP_QUIT = 0, OP_ADD, OP_BUILD, OP_LOAD, OP_COUNT, OP_DOC, OP_LONGEST, OP_LEVEL, OP_PLONGEST, OP_PLEVELS, OP_PROFILE, OP_LEVELS, OP_DOCNAME, OP_MATCHING, OP_SPANS, OP_BATCH, OP_EXPLAIN, OP_SEARCHTOT, OP_SEARCH, OP_EVALLV, OP_DOCTEXTS };

#define HOST_MAX 256


/* This rank's state. */
typedef struct mpi_state {
    MPI_Comm comm;
    int rank, size;
    char (*hosts)[HOST_MAX]; ///< every rank's host name
    char *home;
    ig_catalog *cat;         ///< NULL when the home could not be opened (then `cat_err` says why)
    ig_error cat_err;
    ig_index *idx;           ///< this rank's part of the loaded dataset, or NULL
    char *dataset;           ///< its name
    double timeout, build_timeout;
    /* rank 0 only */
    int loaded;              ///< every rank's part is open and checked
    char *current;           ///< the dataset last loaded (reopened after its own rebuild)
    uint64_t *docs;          ///< documents per rank of the loaded dataset
    int fake_clock;
    int failed;              ///< a command failed (the exit status)
    /* INFINIGRAM_MPI_TRACE=1: after each command, rank 0 writes to stderr how many round trips
     * and messages it took (what the benchmark reports) */
    int trace;
    /* serve */
    int serving;             ///< rank 0 is serving: a rank that fails is lost, not the end
    char *lost;              ///< lost[r]: rank r failed while serving
    char (*lost_why)[256];   ///< and why
    unsigned round_trips, messages;
    /* a message longer than this goes as pieces (an MPI count is an int): INT_MAX, or what
     * INFINIGRAM_MPI_PIECE sets on rank 0 (at least PIECE_MIN; the tests cut every message) */
    size_t piece;
    /* the part side of a request (set by main before any message): 0, or 1 when the request
     * is OP_QUIT or unknown; its reply appended to w (the caller's) */
    int (*handle)(const uint8_t *msg, size_t n, wire *w);
} mpi_state;

extern mpi_state g;

/* Monotonic seconds. */
double now(void);

/* Rank 0: whether a build is running, and the ranks whose replies it is waiting for
 * (pending[r] = 1). When a rank dies, Open MPI stops the job with SIGTERM before SIGKILL: the
 * handler names the ranks the command in flight was still waiting for. */
extern volatile sig_atomic_t building;

extern volatile sig_atomic_t *pending;

/* Rank r's host name (static while the job runs), "?" when unknown. */
const char *host_of(int r);

/* Ends the job: a rank that does not answer leaves the protocol in an unknown state, and
 * mpirun must not wait for it. */
_Noreturn void fatal(int r, const char *what);

/* Async-signal-safe: formats with put_text only, writes with write(2). */
void on_term(int sig);

/* Waits for a request until `deadline` (0: none). 0 when done, -1 at the deadline, else the
 * MPI error. */
int wait_req(MPI_Request *rq, double deadline);

/* Messages over 2 GiB: an MPI count is an int, so a message is sent as pieces of g.piece bytes,
 * the last one shorter (empty when the length is a multiple of it), and read back piece by
 * piece until a short one. MPI keeps the order of the messages from one rank with one tag, so
 * the pieces of two messages never mix. The smallest piece size the test hook accepts: */
#define PIECE_MIN 16

/* Sets g.piece on every rank to rank 0's (collective: every rank calls it once at the start). */
void pieces_init(void);

/* Sends p[0, n) to rank dest with tag, as pieces, each waited for until `deadline` (0: none). 0,
 * -1 at the deadline, or the MPI error. */
int send_msg(const uint8_t *p, size_t n, int dest, int tag, double deadline);

/* Receives the next message from `src` with `tag` (its pieces) into a malloc'd buffer. 0, -1 at
 * the deadline (0: none), or the MPI error. */
int recv_msg(int src, int tag, double deadline, uint8_t **out, size_t *n);

/* Ends the job (fatal) for rank r's failed message: rc -1 at the deadline of `limit` seconds
 * (the other ranks still pending named too), else the MPI error. */
void mpi_fail(int r, int rc, double limit);

/* A reply starts with the handler's status and message. */
void reply_status(wire *w, int rc, const ig_error *e);

/* Whether this rank can answer request q: 0 when it was read whole and `ok` (the handler's
 * own checks of its fields) and a part is loaded; else the error, in *e: a garbled request
 * (IG_EINTERNAL, rank 0 and this rank disagree on its layout) or no dataset loaded. */
int request_ready(const wire_rd *q, int ok, ig_error *e);

/* The reply to a query: its status, then what was written to `out` (freed), unless the part's
 * index met corruption answering or memory ran out writing it. */
void reply_answer(wire *w, int rc, ig_error *e, wire *out);

/* One round trip: sends request q to every rank in [from, to) but 0, runs it here when 0 is
 * in the range, and gathers every reply (rep[r], malloc'd, with its length) under the
 * deadline. A rank that fails to answer ends the job (fatal), or while serving is lost: its
 * reply is then its error (lose). */
void round_trip(const wire *q, int from, int to, double limit, uint8_t **rep, size_t *nrep);

/* Frees every rank's reply (rep[0, size)) and sets it to NULL. */
void free_replies(uint8_t **rep);
/* Declares the reply arrays a round trip fills: rep[k] (malloc'd, NULL until rank k
 * answers; free_replies frees them) and nrep[k], its length, one per rank. */
#define REPLIES(rep, nrep)                                                                                              \
    uint8_t *rep[g.size];                                                                                              \
    size_t nrep[g.size];                                                                                               \
    memset(rep, 0, sizeof rep)

/* Reads a reply's status into *rc and its message into *msg (malloc'd; NULL, with *rc
 * IG_EINTERNAL, when the reply is garbled). 1 when the rank succeeded. */
int reply_ok(wire_rd *rd, int *rc, char **msg);

/* A reply that cannot be read: the error naming its rank. */
int garbled(ig_error *e, int k);

/* The reply of rank k, read past its status (which replies_error has checked). */
wire_rd reply_of(uint8_t **rep, size_t *nrep, int k);

/* The answer in the reply of rank k, as reply_answer wrote it. */
wire_rd answer_of(uint8_t **rep, size_t *nrep, int k);

/* The first failing reply as an error: "rank R (host H): message" unless every rank failed
 * the same way (then it is the request's fault, as on one machine). 0 when none failed. */
int replies_error(uint8_t **rep, size_t *nrep, int from, int to, ig_error *e);

/* One round trip of request w (freed) to every rank: 0, or the first failing reply's error. */
int ask_all(wire *w, uint8_t **rep, size_t *nrep, ig_error *e);

/* One round trip of request w (freed) to every rank, then each(u, k, &rd, e) on rank k's reply
 * in rank order (rd its answer as reply_answer wrote it when `answers`, else the reply past its
 * status) until one returns non-zero; the replies are freed on return, so each copies what it
 * keeps. 0, the first failing reply's error (replies_error), or what each returned. */
int ask_each(wire *w, int answers, int (*each)(void *u, int k, wire_rd *rd, ig_error *e), void *u, ig_error *e);

/* The ranks other than 0: answer rank 0's requests through g.handle until it says quit. A
 * message that fails ends the job (mpi_fail). */
void cluster_answer(void);

#endif
