/*
 * infinigram-mpi: one dataset spread over the ranks of an Open MPI job, queried as if it
 * had been built on one machine.
 *
 *   mpirun -np N infinigram-mpi --home DIR [-d NAME] [--timeout S] [-c LINE]... [-f FILE|-]
 *
 * Every rank has its own home (node-local disk; "%r" in --home is replaced by the rank, so
 * that ranks sharing a machine can have one each) with its own catalog. Rank 0 reads the
 * commands (-c lines, then -f FILE, or standard input) and writes one JSON line per command,
 * shaped as `infinigram --json` writes it; the other ranks answer rank 0 for their parts.
 *
 * Build. `:dataset add NAME SOURCE... [--format F] [--field F]` registers the same sources
 * on every rank (they must be readable from every node, e.g. on a shared file system);
 * `build NAME` has each rank build part `rank` of `size` with the library's sharded builder
 * (ig_build_options.part: contiguous runs of documents of near-equal size, in document
 * order, so that rank r holds the documents after rank r-1's). Each part is written into a
 * fresh directory and fsynced; then the ranks vote (one MPI_Iallreduce of their success
 * flags, under the build deadline) and each switches its part in only when every rank
 * succeeded, so a failure anywhere leaves every rank's previous index in force (the new
 * directories are removed; a rank killed outright leaves one, removed by the cleanup at its
 * next start). Rank 0's catalog then records the dataset as distributed: setting
 * "cluster.NAME" holds {parts, ranks: [{rank, host, home, index, bytes, documents, shards,
 * checksum}]}.
 *
 * Queries. `load NAME` opens each rank's part and checks it against that record (a part
 * missing or rebuilt alone is an error naming rank, host and path). A count is the sum of
 * the parts' counts; the first K positions in corpus order are rank 0's, then rank 1's...
 * with document numbers offset by the documents of the ranks before (documents never cross
 * parts, and no match crosses a document's end, so this is exactly the one-machine answer).
 *
 * Messages per command, n ranks (a round trip is one request from rank 0 to each rank that
 * takes part and one reply from each):
 *   :dataset add   1 round trip: 2(n-1) messages
 *   build          1 round trip plus one MPI_Iallreduce (the vote): 2(n-1) messages + the vote
 *   load           1 round trip: 2(n-1) messages
 *   count          1 round trip: 2(n-1) messages, with or without --positions
 *   predict        ∞-gram: 2 round trips, 4(n-1) messages (each part's ℓ*; then each part's
 *                  next-byte histogram and character counts at the largest); --n: 1 round
 *                  trip (its length is known); --weighted, --interp: 2 round trips (each
 *                  part's count profile, the lengths where its suffix count changes; then
 *                  each part's histograms and character counts at every change point of the
 *                  summed profile, which are all the levels a mixture can read)
 *   prob           ∞-gram: 2 round trips whatever the continuation's length (each part's ℓ*
 *                  before every byte; then each part's next-byte counts there); --n: 1
 *   backoff        2 round trips, 4(n-1) messages (each part's count profile: ℓτ and the
 *                  change points under it come from the sum; then each part's level at
 *                  each of those lengths, with the suffix as the whole context)
 *   generate       2 round trips per byte generated (each part's count profile of the text
 *                  so far, then its levels: the distribution of any model, drawn from as on
 *                  one machine, so a seeded generation is byte-identical), then 2 for the
 *                  summary (matching statistics, the max of the parts'; the longest span's
 *                  first occurrence)
 *   doc ID         1 round trip to the rank holding the document: 2 messages (0 on rank 0);
 *   doc NAME       one more before it, to every rank: how many documents of that name each
 *                  holds, and its first (ig_doc_find_name, ig_doc_name_pick)
 *   spans          2 round trips, 4(n-1) messages (each part's matching statistics: the
 *                  corpus's m(i) is the largest, since a string occurs in the corpus when it
 *                  occurs in a part; the spans follow from it alone (ig_spans_from_matching),
 *                  then each span's count and first sources from every part); --max-count: 3
 *                  (every candidate's count is needed before the filter: one more between)
 *   mix            2 round trips whatever the number of candidates: every byte factor reads
 *                  the ∞-gram after the context and a proper prefix of a candidate, all known
 *                  in advance (each part's ℓ* of every one; then its level at the largest)
 *   explain        3 round trips, 6(n-1) messages: the distribution as predict's mixtures get it
 *                  (2), then every count explain reads after it (the profile, each candidate's
 *                  level counts, the longest suffix it follows in each part, whose largest is
 *                  the corpus's, and its first sources there) in one more
 *   search         2 round trips: each part's occurrences of every clause (summed: the order
 *                  and sampling of the clauses are the corpus's), then each part's documents
 *                  up to the page's end (in corpus order: rank 0's first); 3 when the page
 *                  ends past the millionth document (how many match in each part, then each
 *                  part's share of the page)
 *   eval           ∞-gram: 2 round trips whatever the text's length (each part's ℓ* of every
 *                  position's context; then, at the largest, its count of the suffix, of the
 *                  byte that follows in the text, and the bytes that may follow:
 *                  ig_eval_point_get, ig_eval_point_add, ig_eval_from_points)
 * A prediction is exact: a suffix occurs in the corpus when it occurs in some part, so ℓ* is
 * the parts' largest, and counts, histograms and character counts at a length are sums over
 * the parts (ig_part_level_get, ig_part_level_add, ig_predict_from_level,
 * ig_part_profile_get, ig_part_profile_add, ig_predict_from_parts, ig_prob_from_levels,
 * ig_backoff_lengths, ig_backoff_from_parts, ig_gen_backend, ig_mix_options.backend). Spans
 * are as exact: a span is maximal over the union of the parts, its count is the sum of
 * theirs, its sources are the first in corpus order, and the searches it reports are those
 * one index makes for the same matching statistics (ig_spans_searches). An evaluation sums
 * the positions' log-probabilities in the shares ig_eval's threads would, so even its
 * rounding is one machine's. A search is exact where one machine's is; past the budget it is
 * flagged approximate with one machine's scale (ig_search_sampling), its documents those of
 * each part's own sample. Every other command, explain --step/--last (the
 * shell's generation is not kept here), spans --rank bm25
 * (the BM25 statistics are the whole corpus's), --ids, eval of another model than the ∞-gram,
 * and prob with a mixture (--weighted, --interp), is refused with an error naming it: it is
 * not distributed yet, and an answer from some parts only would be wrong.
 *
 * Failure. The communicator returns errors (MPI_ERRORS_RETURN) instead of aborting; every
 * wait is a poll (MPI_Test / MPI_Iprobe) with a deadline: --timeout seconds for a reply to a
 * query (default 8), --build-timeout for a build's vote and reply (default 86400). A rank
 * that does not answer in time, or whose message fails, is named ("rank 2 (host node3) did
 * not answer within 8 s") and rank 0 ends the job with MPI_Abort, so mpirun exits non-zero
 * instead of hanging. A rank that dies (a crash, SIGKILL) is seen first by Open MPI 4.1,
 * which stops the whole job within about a second (SIGTERM, then SIGKILL): rank 0's SIGTERM
 * handler then names the ranks it was still waiting for, and mpirun exits non-zero. Rank 0
 * does not survive a dead rank: with --enable-recovery the job is not stopped, but MPI_Abort
 * then ends it with status 0, so that mode is not used. Progress: nothing runs MPI in the background; a waiting rank polls,
 * spinning for a moment and then sleeping between polls (50 us growing to 1 ms), so that
 * idle ranks do not take the cores from busy ones.
 *
 * Serve. `serve` runs on rank 0 the HTTP server of infinigram serve (src/serve, linked in) over
 * rank 0's catalog; srv_config.runner hands each engine request, decoded through the
 * operation's field table, to the command's own code here (serve_runner), so the JSON is the
 * one machine's. The server's threads take turns on MPI (a mutex; MPI_THREAD_SERIALIZED).
 * While serving, a rank that does not answer in time is lost rather than the end of the job:
 * its requests answer IG_EBUSY (503) naming it, at once after the first, and what it sends
 * later is dropped; the job ends non-zero when the server stops.
 *
 * Ranks are assumed to be alike (same program, same byte order): messages are the program's
 * own encoding (wire.h) sent as MPI_BYTE.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <pthread.h>

#include "server.h"

#include "infinigram/infinigram.h"
#include "infinigram/explain.h"
#include "wire.h"

enum { TAG_REQ = 1, TAG_REP = 2 };
enum { OP_QUIT = 0, OP_ADD, OP_BUILD, OP_LOAD, OP_COUNT, OP_DOC, OP_LONGEST, OP_LEVEL, OP_PLONGEST, OP_PLEVELS, OP_PROFILE, OP_LEVELS, OP_DOCNAME, OP_MATCHING, OP_SPANS, OP_BATCH, OP_EVALPTS, OP_EXPLAIN, OP_SEARCHTOT, OP_SEARCH };

#define HOST_MAX 256

/* This rank's state. */
static struct {
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
} g;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Between two polls: a few hundred quick ones first (an answer is often that close), then
 * sleeps growing from 50 us to 1 ms so that an idle rank leaves the core to the others. */
static void pause_poll(unsigned *polls)
{
    if (++*polls < 200)
        return;
    long ns = 50000L << ((*polls - 200) / 64 < 4 ? (*polls - 200) / 64 : 4);
    if (ns > 1000000L)
        ns = 1000000L;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* Rank 0: whether a build is running, and the ranks whose replies it is waiting for
 * (pending[r] = 1). When a rank dies, Open MPI stops the job with SIGTERM before SIGKILL: the
 * handler names the ranks the command in flight was still waiting for. */
static volatile sig_atomic_t building;
static volatile sig_atomic_t *pending;

static const char *host_of(int r) { return g.hosts && r >= 0 && r < g.size ? g.hosts[r] : "?"; }

/* Ends the job: a rank that does not answer leaves the protocol in an unknown state, and
 * mpirun must not wait for it. */
static _Noreturn void fatal(int r, const char *what)
{
    fprintf(stderr, "infinigram-mpi: rank %d (host %s) %s: stopping the job\n", r, host_of(r), what);
    fflush(stderr);
    MPI_Abort(g.comm, 3);
    _exit(3);
}

static size_t put_text(char *b, size_t o, size_t cap, const char *s)
{
    while (*s && o + 1 < cap)
        b[o++] = *s++;
    return o;
}

/* Async-signal-safe: formats with put_text only, writes with write(2). */
static void on_term(int sig)
{
    (void)sig;
    char b[512], num[16];
    size_t o = put_text(b, 0, sizeof b, "infinigram-mpi: the job is being stopped");
    int any = 0;
    for (int r = 0; pending && r < g.size; r++) {
        if (!pending[r])
            continue;
        size_t k = sizeof num - 1;
        num[k] = '\0';
        int v = r;
        do
            num[--k] = (char)('0' + v % 10);
        while ((v /= 10) && k);
        o = put_text(b, o, sizeof b, any ? ", rank " : " while rank 0 waited for rank ");
        o = put_text(b, o, sizeof b, num + k);
        o = put_text(b, o, sizeof b, " (host ");
        o = put_text(b, o, sizeof b, host_of(r));
        o = put_text(b, o, sizeof b, ")");
        any = 1;
    }
    if (building)
        o = put_text(b, o, sizeof b, " during a build: a rank died or was killed; every rank keeps its previous "
                                     "index (a part left half-written is removed at the next start)");
    else if (any)
        o = put_text(b, o, sizeof b, ": one of them died or was killed; no answer was given");
    else
        o = put_text(b, o, sizeof b, ": a rank died or was killed");
    o = put_text(b, o, sizeof b, "\n");
    ssize_t wr = write(STDERR_FILENO, b, o);
    (void)wr;
    _exit(3);
}

/* Waits for a request until `deadline` (0: none). 0 when done, -1 at the deadline, else the
 * MPI error. */
static int wait_req(MPI_Request *rq, double deadline)
{
    unsigned polls = 0;
    for (;;) {
        int done = 0, rc = MPI_Test(rq, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (done)
            return 0;
        if (deadline > 0 && now() > deadline)
            return -1;
        pause_poll(&polls);
    }
}

/* Receives the next message from `src` with `tag` into a malloc'd buffer. 0, -1 at the
 * deadline (0: none), or the MPI error. */
static int recv_msg(int src, int tag, double deadline, uint8_t **out, size_t *n)
{
    unsigned polls = 0;
    MPI_Status st;
    for (;;) {
        int flag = 0, rc = MPI_Iprobe(src, tag, g.comm, &flag, &st);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            break;
        if (deadline > 0 && now() > deadline)
            return -1;
        pause_poll(&polls);
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    uint8_t *p = malloc(count > 0 ? (size_t)count : 1);
    if (!p)
        return MPI_ERR_NO_MEM;
    int rc = MPI_Recv(p, count, MPI_BYTE, src, tag, g.comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(p);
        return rc;
    }
    *out = p;
    *n = (size_t)count;
    return 0;
}

static void mpi_fail(int r, int rc, double limit)
{
    char what[MPI_MAX_ERROR_STRING + 1024];
    if (rc == -1) {
        size_t o = (size_t)snprintf(what, sizeof what, "did not answer within %g s", limit);
        for (int k = r + 1; pending && k < g.size && o < sizeof what; k++)
            if (pending[k])
                o += (size_t)snprintf(what + o, sizeof what - o, "; nor did rank %d (host %s)", k, host_of(k));
    } else {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        snprintf(what, sizeof what, "cannot be reached (%s)", s);
    }
    fatal(r, what);
}

/* ---------------------------------------------------------------- replies */

/* A reply starts with the handler's status and message. */
static void reply_status(wire *w, int rc, const ig_error *e)
{
    wire_u32(w, (uint32_t)rc);
    wire_str(w, rc ? e->msg : "");
}

/* The reply to a query: its status, then what was written to `out` (freed), unless the part's
 * index met corruption answering or memory ran out writing it. */
static void reply_answer(wire *w, int rc, ig_error *e, wire *out)
{
    if (!rc && ig_index_health(g.idx, g.dataset, e))
        rc = IG_ECORRUPT;
    if (!rc && out->oom)
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    reply_status(w, rc, e);
    if (!rc)
        wire_bytes(w, out->p, out->n);
    wire_free(out);
}

static int need_catalog(ig_error *e)
{
    if (g.cat)
        return 0;
    return ig_error_set(e, g.cat_err.code ? g.cat_err.code : IG_EIO, "home %s: %s", g.home, g.cat_err.msg);
}

/* :dataset add on this rank. */
static void do_add(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    uint32_t n = wire_get_u32(q), format = 0;
    ig_source *src = calloc(n ? n : 1, sizeof *src);
    char **paths = calloc(n ? n : 1, sizeof *paths);
    int rc = 0;
    if (!src || !paths || q->bad)
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < n; i++) {
        if (!(paths[i] = wire_get_str(q)))
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
        src[i].kind = IG_SOURCE_FILE;
        src[i].path = paths[i];
    }
    format = wire_get_u32(q);
    char *field = wire_get_str(q);
    if (!rc && (q->bad || !field))
        rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
    if (!rc)
        rc = need_catalog(&e);
    if (!rc) {
        ig_ingest_options o;
        ig_ingest_options_default(&o);
        o.format = (ig_format)format;
        if (*field)
            o.field = field;
        rc = ig_catalog_add(g.cat, name, src, n, &o, NULL, &e);
    }
    reply_status(w, rc, &e);
    for (uint32_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(src);
    free(field);
    free(name);
}

/* The vote of a build: every rank's success flag, the minimum of which every rank gets. */
typedef struct vote {
    int voted;
} vote;

static int cast_vote(int ok, ig_error *err)
{
    int all = 0;
    MPI_Request rq;
    double limit = g.build_timeout;
    int rc = MPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g.comm, &rq);
    if (rc == MPI_SUCCESS)
        rc = wait_req(&rq, now() + limit);
    if (rc)
        return ig_error_set(err, IG_EIO, "the ranks could not agree on the build (%s)",
                            rc == -1 ? "no agreement before the build deadline" : "a rank cannot be reached");
    if (!all && ok)
        return ig_error_set(err, IG_ECANCELLED, "another rank's part failed: this part is abandoned, the "
                            "previous index stays in force");
    return all ? 0 : IG_ECANCELLED;
}

static int agree(void *user, const char *dir, const ig_build_result *res, ig_error *err)
{
    (void)dir;
    (void)res;
    vote *v = user;
    v->voted = 1;
    return cast_vote(1, err);
}

static void do_build(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = (int)wire_get_u64(q);
    bo.memory = wire_get_u64(q);
    uint64_t shard = wire_get_u64(q);
    if (shard)
        bo.shard_size = shard;
    bo.part = (uint32_t)g.rank;
    bo.parts = (uint32_t)g.size;
    vote v = {0};
    ig_build_result res;
    memset(&res, 0, sizeof res);
    int rc = q->bad || !name ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : need_catalog(&e);
    /* one rank alone builds the whole dataset: part 0 of 1 */
    if (!rc && g.size == 1)
        bo.parts = 0;
    if (!rc) {
        /* the index in force, if any, goes when the new one is switched in */
        ig_index_close(&g.idx);
        free(g.dataset);
        g.dataset = NULL;
        rc = ig_catalog_build_agreed(g.cat, name, &bo, NULL, NULL, NULL, agree, &v, &res, &e);
    }
    if (!v.voted) { /* failed before the vote: the others must still hear this rank's no */
        ig_error scratch;
        cast_vote(0, &scratch);
    }
    ig_dataset d;
    uint64_t sum = 0;
    memset(&d, 0, sizeof d);
    if (!rc && !(rc = ig_catalog_get(g.cat, name, &d, &e)))
        rc = ig_index_checksum(d.index_path, &sum, &e);
    reply_status(w, rc, &e);
    wire_str(w, d.index_path);
    wire_u64(w, res.bytes);
    wire_u64(w, res.documents);
    wire_u64(w, res.shards);
    wire_u64(w, sum);
    wire_f64(w, res.seconds);
    wire_str(w, g.home);
    if (d.name)
        ig_dataset_free(&d);
    ig_build_result_free(&res);
    free(name);
}

static void do_load(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    uint64_t sum = 0;
    ig_dataset d;
    memset(&d, 0, sizeof d);
    ig_index_close(&g.idx);
    free(g.dataset);
    g.dataset = NULL;
    int rc = !name ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : need_catalog(&e);
    if (!rc)
        rc = ig_catalog_get(g.cat, name, &d, &e);
    if (!rc)
        rc = ig_catalog_open_index(g.cat, name, &g.idx, NULL, &e);
    if (!rc)
        rc = ig_index_checksum(d.index_path, &sum, &e);
    ig_index_info info = {0};
    if (!rc) {
        ig_index_get_info(g.idx, &info);
        g.dataset = name;
        name = NULL;
    } else {
        ig_index_close(&g.idx);
    }
    reply_status(w, rc, &e);
    wire_str(w, d.index_path);
    wire_u64(w, info.documents);
    wire_u64(w, sum);
    if (d.name)
        ig_dataset_free(&d);
    free(name);
}

static void put_bytes_opt(wire *w, const char *p)
{
    wire_u32(w, p != NULL);
    wire_str(w, p);
}

/* An occurrence on the wire: its location, snippet (or none) and match. */
static void put_occ(wire *w, const ig_occurrence *oc)
{
    wire_u64(w, oc->loc.doc);
    wire_str(w, oc->loc.name);
    wire_u64(w, oc->loc.source_line);
    wire_u64(w, oc->loc.offset);
    wire_u64(w, oc->loc.line);
    wire_u64(w, oc->loc.column);
    put_bytes_opt(w, oc->snippet);
    wire_u64(w, oc->hl0);
    wire_u64(w, oc->hl1);
    wire_u64(w, oc->length);
}

/* Reads one written by put_occ into *oc, its document numbered `base` more (the documents of
 * the ranks before): name and snippet malloc'd (the caller's, NULL when absent). */
static void get_occ(wire_rd *rd, uint64_t base, ig_occurrence *oc)
{
    memset(oc, 0, sizeof *oc);
    oc->loc.doc = base + wire_get_u64(rd);
    oc->loc.name = wire_get_str(rd);
    oc->loc.source_line = wire_get_u64(rd);
    oc->loc.offset = wire_get_u64(rd);
    oc->loc.line = wire_get_u64(rd);
    oc->loc.column = wire_get_u64(rd);
    int has = (int)wire_get_u32(rd);
    char *snip = wire_get_str(rd);
    oc->hl0 = (size_t)wire_get_u64(rd);
    oc->hl1 = (size_t)wire_get_u64(rd);
    oc->length = wire_get_u64(rd);
    if (has)
        oc->snippet = snip;
    else
        free(snip);
}

static void do_count(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_count_opts o;
    ig_count_defaults(&o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o.query.p = (uint8_t *)p;
    o.query.n = n;
    o.positions = wire_get_u64(q);
    o.width = wire_get_u64(q);
    ig_count_result r;
    memset(&r, 0, sizeof r);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = q->bad ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                      : ig_op_count.run(&ctx, &o, &r, &e);
    reply_status(w, rc, &e);
    if (!rc) {
        wire_bytes(w, r.query, r.qlen);
        wire_u64(w, r.count);
        wire_u64(w, r.nocc);
        for (size_t i = 0; i < r.nocc; i++)
            put_occ(w, &r.occ[i]);
        ig_count_result_free(&r);
    }
}

static void do_doc(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_doc_opts o;
    ig_doc_defaults(&o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o.query = (ig_bytes){(uint8_t *)p, n};
    /* an option not given is NULL, as a codec leaves it (an empty one is given) */
    int has = (int)wire_get_u32(q);
    p = wire_get_bytes(q, &n);
    o.lines = has ? (ig_bytes){(uint8_t *)p, n} : (ig_bytes){NULL, 0};
    has = (int)wire_get_u32(q);
    p = wire_get_bytes(q, &n);
    o.range = has ? (ig_bytes){(uint8_t *)p, n} : (ig_bytes){NULL, 0};
    ig_doc_result r;
    memset(&r, 0, sizeof r);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = q->bad ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                      : ig_op_doc.run(&ctx, &o, &r, &e);
    reply_status(w, rc, &e);
    if (!rc) {
        wire_str(w, r.doc.name);
        wire_u64(w, r.doc.source_line);
        wire_u64(w, r.doc.length);
        wire_u64(w, r.offset);
        wire_u64(w, r.first_line);
        wire_bytes(w, r.text, r.len);
        ig_doc_result_free(&r);
    }
}

/* The context of a model request, normalised as this part's sources were (every part
 * alike). 0, or an error with *out NULL. */
static int model_context(wire_rd *q, uint8_t **out, size_t *n, ig_error *e)
{
    size_t qn;
    const uint8_t *qp = wire_get_bytes(q, &qn);
    *out = NULL;
    if (q->bad)
        return ig_error_set(e, IG_EINTERNAL, "garbled request");
    if (!g.idx)
        return ig_error_set(e, IG_EUSAGE, "no dataset loaded (use: load NAME)");
    return ig_query_normalize(g.idx, qp ? qp : (const uint8_t *)"", qn, out, n, e);
}

/* Round 1 of the ∞-gram: this part's ℓ* (a suffix occurs in the corpus when it occurs in a
 * part, so the corpus's ℓ* is the largest). */
static void do_longest(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *ctx = NULL;
    size_t n = 0;
    int rc = model_context(q, &ctx, &n, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint64_t count = 0, ell = rc ? 0 : ig_longest_suffix(g.idx, ctx, n, cap, &count);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, ell);
    free(ctx);
}

/* A level on the wire: the suffix count, the next-byte counts that are not 0, the symbols. */
static void put_level(wire *w, const ig_part_level *lv)
{
    int nz = 0;
    for (int b = 0; b < 256; b++)
        nz += lv->count[b] != 0;
    wire_u64(w, lv->suffix_count);
    wire_u32(w, (uint32_t)nz);
    for (int b = 0; b < 256; b++)
        if (lv->count[b]) {
            wire_u32(w, (uint32_t)b);
            wire_u64(w, lv->count[b]);
        }
    wire_u64(w, lv->nsyms);
    for (size_t i = 0; i < lv->nsyms; i++) {
        wire_bytes(w, lv->syms[i].bytes, lv->syms[i].len);
        wire_u64(w, lv->syms[i].count);
    }
}

/* Reads a level written by put_level into *lv (ell set by the caller; syms malloc'd). -1 when
 * the message is garbled or memory ran out (lv then holds nothing). */
static int get_level(wire_rd *rd, ig_part_level *lv)
{
    lv->suffix_count = wire_get_u64(rd);
    uint32_t nz = wire_get_u32(rd);
    for (uint32_t j = 0; !rd->bad && j < nz; j++) {
        uint32_t b = wire_get_u32(rd);
        uint64_t v = wire_get_u64(rd);
        if (b > 255)
            rd->bad = 1;
        else
            lv->count[b] = v;
    }
    uint64_t nsyms = wire_get_u64(rd);
    if (rd->bad || nsyms > rd->n || !(lv->syms = calloc(nsyms ? nsyms : 1, sizeof *lv->syms)))
        return -1;
    for (uint64_t i = 0; !rd->bad && i < nsyms; i++) {
        size_t bn;
        const uint8_t *bp = wire_get_bytes(rd, &bn);
        if (bn < 1 || bn > sizeof lv->syms[i].bytes) {
            rd->bad = 1;
            break;
        }
        memcpy(lv->syms[i].bytes, bp, bn);
        lv->syms[i].len = (uint8_t)bn;
        lv->syms[i].count = wire_get_u64(rd);
        lv->nsyms++;
    }
    if (rd->bad) {
        ig_part_level_free(lv);
        return -1;
    }
    return 0;
}

/* Mixtures, round 1: this part's count profile of the context. */
static void do_profile(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *ctx = NULL;
    size_t n = 0;
    int rc = model_context(q, &ctx, &n, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    ig_part_profile pr = {0};
    if (!rc)
        rc = ig_part_profile_get(g.idx, ctx, n, cap, &pr, &e);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, pr.n);
    for (size_t i = 0; i < pr.n; i++) {
        wire_u64(w, pr.ell[i]);
        wire_u64(w, pr.count[i]);
    }
    ig_part_profile_free(&pr);
    free(ctx);
}

/* Mixtures, round 2: this part's levels at every change point of the corpus's profile. */
static void do_levels(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *ctx = NULL;
    size_t n = 0;
    int rc = model_context(q, &ctx, &n, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint32_t flags = wire_get_u32(q);
    int chars = flags & 1, suffixes = (flags >> 1) & 1;
    uint64_t k = wire_get_u64(q);
    if (!rc && (q->bad || k > q->n))
        rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
    wire out = {0};
    for (uint64_t i = 0; !rc && i < k; i++) {
        ig_part_level lv;
        uint64_t ell = wire_get_u64(q);
        if (suffixes && ell > n)
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
        else if (suffixes) /* backoff: the suffix itself is the whole context */
            rc = ig_part_level_get(g.idx, ctx + n - ell, ell, -1, ell, chars, &lv, &e);
        else
            rc = ig_part_level_get(g.idx, ctx, n, cap, ell, chars, &lv, &e);
        if (rc)
            break;
        put_level(&out, &lv);
        ig_part_level_free(&lv);
    }
    reply_answer(w, rc, &e, &out);
    free(ctx);
}

/* Round 2 of a single-level model: this part's level at the length the corpus's model reads. */
static void do_level(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *ctx = NULL;
    size_t n = 0;
    int rc = model_context(q, &ctx, &n, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint64_t ell = wire_get_u64(q);
    int chars = (int)wire_get_u32(q);
    ig_part_level lv;
    memset(&lv, 0, sizeof lv);
    uint64_t count, longest = rc ? 0 : ig_longest_suffix(g.idx, ctx, n, cap, &count); /* the n-gram reports it too */
    if (!rc)
        rc = ig_part_level_get(g.idx, ctx, n, cap, ell, chars, &lv, &e);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, longest);
    put_level(w, &lv);
    ig_part_level_free(&lv);
    free(ctx);
}

/* prob's text: the context and the continuation, each normalised on its own (as prob does),
 * one after the other in *buf (malloc'd); *cn bytes of context, *kn of continuation. */
static int prob_text(wire_rd *q, uint8_t **buf, size_t *cn, size_t *kn, ig_error *e)
{
    uint8_t *c = NULL, *k = NULL;
    *buf = NULL;
    int rc = model_context(q, &c, cn, e);
    if (!rc)
        rc = model_context(q, &k, kn, e);
    if (!rc && !(*buf = malloc(*cn + *kn + 1)))
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    if (!rc) {
        memcpy(*buf, c, *cn);
        memcpy(*buf + *cn, k, *kn);
    }
    free(c);
    free(k);
    return rc;
}

/* prob, round 1 (∞-gram): this part's ℓ* before each byte of the continuation. */
static void do_plongest(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *buf = NULL;
    size_t cn = 0, kn = 0;
    int rc = prob_text(q, &buf, &cn, &kn, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, rc ? 0 : kn);
    for (size_t i = 0; !rc && i < kn; i++) {
        uint64_t count;
        wire_u64(w, ig_longest_suffix(g.idx, buf, cn + i, cap, &count));
    }
    free(buf);
}

/* prob, round 2: this part's level before each byte, at the length given for that step
 * (the next-byte counts that are not 0). */
static void do_plevels(wire_rd *q, wire *w)
{
    ig_error e = {0};
    uint8_t *buf = NULL;
    size_t cn = 0, kn = 0;
    int rc = prob_text(q, &buf, &cn, &kn, &e);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint64_t n = wire_get_u64(q);
    if (!rc && (q->bad || n != kn))
        rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
    wire out = {0};
    for (size_t i = 0; !rc && i < kn; i++) {
        ig_part_level lv;
        if ((rc = ig_part_level_get(g.idx, buf, cn + i, cap, wire_get_u64(q), 0, &lv, &e)))
            break;
        int nz = 0;
        for (int b = 0; b < 256; b++)
            nz += lv.count[b] != 0;
        wire_u64(&out, lv.suffix_count);
        wire_u32(&out, (uint32_t)nz);
        for (int b = 0; b < 256; b++)
            if (lv.count[b]) {
                wire_u32(&out, (uint32_t)b);
                wire_u64(&out, lv.count[b]);
            }
        ig_part_level_free(&lv);
    }
    reply_answer(w, rc, &e, &out);
    free(buf);
}

/* generate's summary: this part's matching statistics of the text. */
static void do_matching(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = 1;
    ig_span *sp = NULL;
    size_t nsp = 0;
    uint64_t *ms = NULL;
    int rc = q->bad ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                      : ig_spans(g.idx, p ? p : (const uint8_t *)"", n, &so, &sp, &nsp, &ms, NULL, &e);
    if (!rc && ig_index_health(g.idx, g.dataset, &e))
        rc = IG_ECORRUPT;
    reply_status(w, rc, &e);
    wire_u64(w, rc ? 0 : n);
    for (size_t i = 0; !rc && i < n; i++)
        wire_u64(w, ms[i]);
    free(sp);
    free(ms);
}

/* spans: this part's count of each span of the text, and, when `listed` is not 0, its first
 * `listed` occurrences (count's, in corpus order), unless this part alone would list more
 * than a request may (then the whole corpus would too: rank 0 says so). */
static void do_spans(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t tn;
    const uint8_t *text = wire_get_bytes(q, &tn);
    ig_spans_opts so;
    ig_spans_defaults(&so);
    so.positions = wire_get_u64(q);
    uint64_t n = wire_get_u64(q);
    ig_span *sp = !q->bad && n <= q->n ? calloc(n ? n : 1, sizeof *sp) : NULL;
    int rc = q->bad || n > q->n ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !sp              ? ig_error_set(&e, IG_ENOMEM, "out of memory")
             : !g.idx           ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                                : 0;
    for (uint64_t i = 0; !rc && i < n; i++) {
        sp[i].start = wire_get_u64(q);
        sp[i].length = wire_get_u64(q);
        if (q->bad || sp[i].start > tn || sp[i].length > tn - sp[i].start)
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
        else
            sp[i].count = ig_count(g.idx, text + sp[i].start, (size_t)sp[i].length);
    }
    ig_error scratch;
    int list = !rc && so.positions && !ig_spans_check_listed(&so, sp, (size_t)n, &scratch);
    wire out = {0};
    for (uint64_t i = 0; !rc && i < n; i++) {
        wire_u64(&out, sp[i].count);
        wire_u32(&out, (uint32_t)list);
        if (!list)
            continue;
        ig_occurrence *occ = NULL;
        size_t nocc = 0;
        uint64_t total;
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        if ((rc = ig_occurrences(&ctx, text + sp[i].start, (size_t)sp[i].length, (size_t)so.positions, -1, &occ, &nocc,
                                 &total, &e)))
            break;
        wire_u64(&out, nocc);
        for (size_t k = 0; k < nocc; k++)
            put_occ(&out, &occ[k]);
        ig_occurrences_free(occ, nocc);
    }
    reply_answer(w, rc, &e, &out);
    free(sp);
}

/* mix, eval: contexts known beforehand, each a window [a, b) of a text followed by bytes of
 * its own (taken as they are: the text is normalised already, a token's bytes are the
 * model's to read). Flag 0: this part's ℓ* of each; flag 1: its level at the length given for
 * each (byte view). */
static void do_batch(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t cn;
    const uint8_t *cp = wire_get_bytes(q, &cn);
    int64_t cap = (int64_t)wire_get_u64(q);
    uint32_t levels = wire_get_u32(q);
    uint64_t n = wire_get_u64(q);
    int rc = q->bad || n > q->n ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx           ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                                : 0;
    uint8_t *buf = NULL;
    size_t bcap = 0;
    wire out = {0};
    for (uint64_t i = 0; !rc && i < n; i++) {
        uint64_t a = wire_get_u64(q), b = wire_get_u64(q);
        size_t xn;
        const uint8_t *xp = wire_get_bytes(q, &xn);
        uint64_t ell = levels ? wire_get_u64(q) : 0;
        if (q->bad || a > b || b > cn) {
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
            break;
        }
        size_t wn = (size_t)(b - a);
        if (wn + xn + 1 > bcap) {
            uint8_t *p = realloc(buf, wn + xn + 1);
            if (!p) {
                rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
                break;
            }
            buf = p;
            bcap = wn + xn + 1;
        }
        if (wn)
            memcpy(buf, cp + a, wn);
        if (xn)
            memcpy(buf + wn, xp, xn);
        if (!levels) {
            uint64_t count;
            wire_u64(&out, ig_longest_suffix(g.idx, buf, wn + xn, cap, &count));
            continue;
        }
        ig_part_level lv;
        if ((rc = ig_part_level_get(g.idx, buf, wn + xn, cap, ell, 0, &lv, &e)))
            break;
        put_level(&out, &lv);
        ig_part_level_free(&lv);
    }
    reply_answer(w, rc, &e, &out);
    free(buf);
}

/* eval, round 2: this part's point (ig_eval_point) of each position i in [1, n] of the text,
 * its context capped at L bytes (-1: none), at the ℓ* given for it. */
static void do_evalpts(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t tn;
    const uint8_t *text = wire_get_bytes(q, &tn);
    int64_t L = (int64_t)wire_get_u64(q);
    int rc = q->bad || tn < 1 ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx         ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                              : 0;
    wire out = {0};
    for (size_t i = 1; !rc && i < tn; i++) {
        uint64_t ell = wire_get_u64(q);
        size_t lo = L >= 0 && i > (size_t)L ? i - (size_t)L : 0;
        ig_eval_point pt;
        if (q->bad)
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
        else if (!(rc = ig_eval_point_get(g.idx, text + lo, i - lo, ell, text[i], &pt, &e))) {
            wire_u64(&out, pt.count);
            wire_u64(&out, pt.next);
            wire_u32(&out, (uint32_t)pt.distinct | (uint32_t)pt.only << 8);
        }
    }
    reply_answer(w, rc, &e, &out);
}

/* explain, round 3: with the corpus's distribution known (its ℓ* L, its levels, its top
 * candidates, the symbol in focus), this part's profile (ig_explain_profile_part) and its
 * answer for each candidate (ig_explain_cand_part). */
static void do_explain(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t cn, fn;
    const uint8_t *ctx = wire_get_bytes(q, &cn), *focus = wire_get_bytes(q, &fn);
    uint64_t L = wire_get_u64(q), nlev = wire_get_u64(q);
    int rc = q->bad || L > cn || fn > 4 || nlev > q->n ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx                                  ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                                                       : 0;
    uint64_t *lens = rc ? NULL : calloc(nlev ? nlev : 1, sizeof *lens);
    ig_explain_row *rows = rc ? NULL : calloc(L ? L : 1, sizeof *rows);
    if (!rc && (!lens || !rows))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (uint64_t j = 0; !rc && j < nlev; j++)
        lens[j] = wire_get_u64(q);
    int end_excluded = (int)wire_get_u32(q);
    uint64_t ncand = wire_get_u64(q), positions = wire_get_u64(q);
    if (!rc && (q->bad || ncand > 256))
        rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
    ig_op_ctx octx = {g.idx, g.dataset, NULL};
    if (!rc && fn)
        rc = ig_explain_profile_part(&octx, ctx, cn, L, focus, fn, rows, &e);
    wire out = {0};
    for (uint64_t i = 0; !rc && fn && i < L; i++) {
        wire_u64(&out, rows[i].count);
        wire_u64(&out, rows[i].continue_count);
    }
    for (uint64_t i = 0; !rc && i < ncand; i++) {
        size_t sn;
        const uint8_t *sym = wire_get_bytes(q, &sn);
        ig_symbol s = {0};
        if (q->bad || sn < 1 || sn > sizeof s.bytes) {
            rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
            break;
        }
        memcpy(s.bytes, sym, sn);
        s.len = (uint8_t)sn;
        ig_explain_part_cand p;
        if ((rc = ig_explain_cand_part(&octx, ctx, cn, L, lens, (size_t)nlev, end_excluded, &s, positions, &p, &e)))
            break;
        for (uint64_t j = 0; nlev > 1 && j < nlev; j++)
            wire_u64(&out, p.level_counts[j]);
        wire_u64(&out, p.matched);
        wire_u64(&out, p.total);
        wire_u64(&out, p.nocc);
        for (size_t k = 0; k < p.nocc; k++)
            put_occ(&out, &p.occ[k]);
        ig_explain_part_cand_free(&p);
    }
    reply_answer(w, rc, &e, &out);
    free(lens);
    free(rows);
}

/* search, round 1: this part's occurrences of each clause of the query. */
static void do_searchtot(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_search_opts o;
    ig_search_defaults(&o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o.query = (ig_bytes){(uint8_t *)p, n};
    uint64_t *totals = NULL;
    size_t nc = 0;
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = q->bad ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : ig_search_clause_totals(&ctx, &o, &totals, &nc, &e);
    wire out = {0};
    wire_u64(&out, nc);
    for (size_t c = 0; !rc && c < nc; c++)
        wire_u64(&out, totals[c]);
    reply_answer(w, rc, &e, &out);
    free(totals);
}

/* search, round 2 (and 3): the query searched in this part by the corpus's clause totals, the
 * window of its matching documents given for this rank: how many match here, how many
 * clauses were taken, and the window's documents (the first hit's location). */
static void do_search(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_search_opts o;
    ig_search_defaults(&o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o.query = (ig_bytes){(uint8_t *)p, n};
    o.within = wire_get_u64(q);
    o.budget = wire_get_u64(q);
    uint64_t nc = wire_get_u64(q);
    uint64_t *totals = !q->bad && nc <= q->n ? calloc(nc ? nc : 1, sizeof *totals) : NULL;
    for (uint64_t c = 0; totals && c < nc; c++)
        totals[c] = wire_get_u64(q);
    for (int r = 0; r < g.size; r++) { /* each rank's window */
        uint64_t off = wire_get_u64(q), lim = wire_get_u64(q);
        if (r == g.rank) {
            o.offset = off;
            o.limit = lim;
        }
    }
    ig_search_plan plan = {totals, 0};
    o.plan = &plan;
    ig_search_op_result r;
    memset(&r, 0, sizeof r);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = q->bad || !totals ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : ig_op_search.run(&ctx, &o, &r, &e);
    wire out = {0};
    if (!rc) {
        wire_u64(&out, r.documents_total);
        wire_u64(&out, plan.processed);
        wire_u64(&out, r.ndocs);
        for (size_t i = 0; i < r.ndocs; i++) {
            ig_occurrence oc = {0};
            oc.loc = r.docs[i].loc;
            wire_u64(&out, r.docs[i].hit.hits);
            put_occ(&out, &oc);
        }
        ig_search_op_result_free(&r);
    }
    reply_answer(w, rc, &e, &out);
    free(totals);
}

/* doc by name: this part's documents of that name (how many, and its first). */
static void do_docname(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    uint64_t first = UINT64_MAX, count = 0;
    int rc = q->bad ? ig_error_set(&e, IG_EINTERNAL, "garbled request")
             : !g.idx ? ig_error_set(&e, IG_EUSAGE, "no dataset loaded (use: load NAME)")
                      : ig_doc_find_name(g.idx, p ? p : (const uint8_t *)"", n, &first, &count, &e);
    reply_status(w, rc, &e);
    wire_u64(w, first);
    wire_u64(w, count);
}

/* Runs one request on this rank into reply w. 0, or 1 for OP_QUIT. */
static int handle(const uint8_t *msg, size_t n, wire *w)
{
    wire_rd q = {msg, n, 0, 0};
    uint32_t op = wire_get_u32(&q);
    switch (q.bad ? OP_QUIT : op) {
    case OP_ADD: do_add(&q, w); break;
    case OP_BUILD: do_build(&q, w); break;
    case OP_LOAD: do_load(&q, w); break;
    case OP_COUNT: do_count(&q, w); break;
    case OP_DOC: do_doc(&q, w); break;
    case OP_LONGEST: do_longest(&q, w); break;
    case OP_LEVEL: do_level(&q, w); break;
    case OP_PLONGEST: do_plongest(&q, w); break;
    case OP_PLEVELS: do_plevels(&q, w); break;
    case OP_PROFILE: do_profile(&q, w); break;
    case OP_LEVELS: do_levels(&q, w); break;
    case OP_DOCNAME: do_docname(&q, w); break;
    case OP_MATCHING: do_matching(&q, w); break;
    case OP_SPANS: do_spans(&q, w); break;
    case OP_BATCH: do_batch(&q, w); break;
    case OP_EVALPTS: do_evalpts(&q, w); break;
    case OP_EXPLAIN: do_explain(&q, w); break;
    case OP_SEARCHTOT: do_searchtot(&q, w); break;
    case OP_SEARCH: do_search(&q, w); break;
    default: return 1;
    }
    return 0;
}

/* The other ranks: answer rank 0 until it says quit. */
static void serve_rank0(void)
{
    for (;;) {
        uint8_t *msg = NULL;
        size_t n = 0;
        int rc = recv_msg(0, TAG_REQ, 0, &msg, &n);
        if (rc)
            mpi_fail(0, rc, 0);
        wire w = {0};
        int quit = handle(msg, n, &w);
        free(msg);
        if (quit) {
            wire_free(&w);
            return;
        }
        if (w.oom) { /* an answer lost to memory must still be an answer: an error */
            wire_free(&w);
            ig_error e;
            ig_error_set(&e, IG_ENOMEM, "rank %d (host %s): out of memory writing the answer", g.rank, host_of(g.rank));
            reply_status(&w, IG_ENOMEM, &e);
        }
        if ((rc = MPI_Send(w.p, (int)w.n, MPI_BYTE, 0, TAG_REP, g.comm)) != MPI_SUCCESS)
            mpi_fail(0, rc, 0);
        wire_free(&w);
    }
}

/* ---------------------------------------------------------------- rank 0: requests and merges */

/* serve: a rank that failed to answer is lost for the rest of the job (what it sends later is
 * read and dropped); each request that needs it is answered at once with the error that lost
 * it, IG_EBUSY (503 from the server). */
static void lose(int r, int rc, double limit)
{
    if (g.lost[r])
        return;
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != -1)
        MPI_Error_string(rc, s, &len);
    if (rc == -1)
        snprintf(g.lost_why[r], sizeof g.lost_why[r], "did not answer within %g s: the cluster answers no request "
                 "that needs this rank until the job is restarted", limit);
    else
        snprintf(g.lost_why[r], sizeof g.lost_why[r], "cannot be reached (%s): the cluster answers no request that "
                 "needs this rank until the job is restarted", s);
    g.lost[r] = 1;
    fprintf(stderr, "infinigram-mpi: rank %d (host %s) %s\n", r, host_of(r), g.lost_why[r]);
    fflush(stderr);
}

/* A rank that fails: the end of the job, or while serving, lost. */
static void rank_failed(int r, int rc, double limit)
{
    if (!g.serving)
        mpi_fail(r, rc, limit);
    lose(r, rc, limit);
}

/* One round trip: sends request q to every rank in [from, to) but 0, runs it here when 0 is
 * in the range, and gathers every reply (rep[r], malloc'd, with its length) under the
 * deadline. A rank that fails to answer ends the job (fatal), or while serving is lost: its
 * reply is then its error (lose). */
static void round_trip(const wire *q, int from, int to, double limit, uint8_t **rep, size_t *nrep)
{
    if (q->oom) {
        fprintf(stderr, "infinigram-mpi: out of memory writing a request\n");
        MPI_Abort(g.comm, 3);
    }
    int nreq = 0;
    g.round_trips++;
    g.messages += 2u * (unsigned)(to - (from > 0 ? from : 1));
    MPI_Request *rq = calloc((size_t)g.size, sizeof *rq);
    int *rank_of = calloc((size_t)g.size, sizeof *rank_of);
    if (!rq || !rank_of)
        fatal(0, "is out of memory");
    for (int r = from; r < to; r++) {
        if (r == 0 || g.lost[r])
            continue;
        int rc = MPI_Isend(q->p, (int)q->n, MPI_BYTE, r, TAG_REQ, g.comm, &rq[nreq]);
        if (rc)
            rank_failed(r, rc, limit);
        else
            rank_of[nreq++] = r;
    }
    if (from == 0) {
        wire w = {0};
        handle(q->p, q->n, &w);
        if (w.oom)
            fatal(0, "is out of memory");
        rep[0] = w.p;
        nrep[0] = w.n;
    }
    double deadline = now() + limit;
    for (int i = 0; i < nreq; i++) {
        int rc = wait_req(&rq[i], deadline);
        if (rc)
            rank_failed(rank_of[i], rc, limit);
    }
    free(rq);
    free(rank_of);
    /* replies in the order they come: the ones still missing are those pending */
    int left = 0;
    for (int r = from > 0 ? from : 1; r < to; r++)
        left += pending[r] = !g.lost[r];
    while (left > 0) {
        MPI_Status st;
        unsigned polls = 0;
        int flag = 0, rc;
        while (!(rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG_REP, g.comm, &flag, &st)) && !flag && now() <= deadline)
            pause_poll(&polls);
        int src = flag && !rc ? st.MPI_SOURCE : -1;
        if (src >= 0 && src < g.size && g.lost[src] && !pending[src]) { /* a lost rank's late answer */
            uint8_t *late = NULL;
            size_t nlate = 0;
            if (!recv_msg(src, TAG_REP, deadline, &late, &nlate))
                free(late);
            continue;
        }
        if (src < 0 || src >= g.size || !pending[src]) { /* the deadline passed, or MPI failed */
            for (int r = 0; r < g.size; r++)
                if (pending[r]) {
                    if (!g.serving) /* names it and every other rank still awaited */
                        mpi_fail(r, rc ? rc : -1, limit);
                    lose(r, rc ? rc : -1, limit);
                    pending[r] = 0;
                    left--;
                }
            break;
        }
        if ((rc = recv_msg(src, TAG_REP, deadline, &rep[src], &nrep[src]))) {
            rank_failed(src, rc, limit);
            rep[src] = NULL;
        }
        pending[src] = 0;
        left--;
    }
    for (int r = from > 0 ? from : 1; r < to; r++)
        if (g.lost[r]) { /* its answer: the error that lost it */
            free(rep[r]);
            wire w = {0};
            ig_error e;
            ig_error_set(&e, IG_EBUSY, "%s", g.lost_why[r]);
            reply_status(&w, IG_EBUSY, &e);
            rep[r] = w.p;
            nrep[r] = w.n;
        }
}

static void free_replies(uint8_t **rep)
{
    for (int r = 0; r < g.size; r++) {
        free(rep[r]);
        rep[r] = NULL;
    }
}

/* Output: one JSON line per command, as infinigram --json writes it. */
/* serve: a command's answer is kept for the server instead of printed (its members, or its
 * error with the library's {field} names, which the server writes its own way). */
static struct {
    int on;
    char *members;
    int failed;
    ig_error err;
} captured;

static void emit(const char *cmd, const char *members, double t0)
{
    if (captured.on) {
        free(captured.members);
        if (!(captured.members = strdup(members))) {
            captured.failed = 1;
            ig_error_set(&captured.err, IG_ENOMEM, "out of memory");
        }
        return;
    }
    cJSON *ms = cJSON_CreateNumber(g.fake_clock ? 0 : round((now() - t0) * 1e9) / 1e6);
    char *m = ms ? cJSON_PrintUnformatted(ms) : NULL;
    cJSON *c = cJSON_CreateString(cmd);
    char *cs = c ? cJSON_PrintUnformatted(c) : NULL;
    if (m && cs)
        printf("{\"command\":%s%s%s,\"elapsed_ms\":%s}\n", cs, *members ? "," : "", members, m);
    else
        printf("{\"command\":\"%s\",\"error\":{\"message\":\"out of memory\",\"code\":\"out_of_memory\"}}\n", cmd);
    fflush(stdout);
    cJSON_Delete(ms);
    cJSON_Delete(c);
    free(m);
    free(cs);
}

/* A library message names fields as {name}: written as the shell writes them, so that the
 * answers match infinigram's — an option as --name, a positional argument by its placeholder,
 * which at the very start ("{query}: ...") the shell leaves out. */
static void render_fields(const ig_op *op, const char *msg, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < cap; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close || close == p + 1 || memchr(p + 1, ' ', (size_t)(close - p - 1))) {
            out[o++] = *p;
            continue;
        }
        size_t len = (size_t)(close - p - 1);
        const ig_field *f = op ? ig_field_find(op->fields, p + 1, len) : NULL;
        int positional = f && (f->flags & IG_FIELD_POSITIONAL);
        if (positional && p == msg && !strncmp(close, "}: ", 3)) {
            p = close + 2;
            continue;
        }
        if (positional && f->arg)
            o += (size_t)snprintf(out + o, cap - o, "%s", f->arg);
        else {
            o += (size_t)snprintf(out + o, cap - o, "--%.*s", (int)len, p + 1);
            for (size_t k = o >= len ? o - len : 0; k < o && k < cap; k++)
                if (out[k] == '_')
                    out[k] = '-';
        }
        if (o >= cap)
            o = cap - 1;
        p = close;
    }
    out[o] = '\0';
}

static int fail(const char *cmd, int code, double t0, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(const char *cmd, int code, double t0, const char *fmt, ...)
{
    char raw[IG_ERRMSG_MAX + 512], msg[IG_ERRMSG_MAX + 1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (captured.on) {
        captured.failed = 1;
        ig_error_set(&captured.err, code, "%s", raw);
        return -1;
    }
    render_fields(ig_op_find(cmd), raw, msg, sizeof msg);
    cJSON *o = cJSON_CreateObject(), *e = cJSON_CreateObject();
    char *s = NULL;
    if (o && e) {
        cJSON_AddStringToObject(e, "message", msg);
        cJSON_AddStringToObject(e, "code", ig_error_code_name(code));
        cJSON_AddItemToObject(o, "error", e);
        e = NULL;
        s = cJSON_PrintUnformatted(o);
    }
    if (s) { /* the members without the braces */
        s[strlen(s) - 1] = '\0';
        emit(cmd, s + 1, t0);
    } else {
        emit(cmd, "\"error\":{\"message\":\"out of memory\",\"code\":\"out_of_memory\"}", t0);
    }
    free(s);
    cJSON_Delete(o);
    cJSON_Delete(e);
    g.failed = 1;
    return -1;
}

/* Prints the answer made of a result's JSON members (malloc'd by the operation's writer; NULL
 * when writing them ran out of memory, which is then the command's error). Frees them. */
static int emit_answer(const char *cmd, char *members, double t0)
{
    int rc = 0;
    if (members)
        emit(cmd, members, t0);
    else
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory writing the answer");
    free(members);
    return rc;
}

/* Reads a reply's status into *rc and its message into *msg (malloc'd; NULL, with *rc
 * IG_EINTERNAL, when the reply is garbled). 1 when the rank succeeded. */
static int reply_ok(wire_rd *rd, int *rc, char **msg)
{
    *rc = (int)wire_get_u32(rd);
    *msg = wire_get_str(rd);
    if (rd->bad) {
        *rc = IG_EINTERNAL;
        free(*msg);
        *msg = NULL;
    }
    return *rc == 0;
}

/* A reply that cannot be read: the error naming its rank. */
static int garbled(ig_error *e, int k)
{
    return ig_error_set(e, IG_EINTERNAL, "rank %d (host %s): garbled reply", k, host_of(k));
}

/* The reply of rank k, read past its status (which replies_error has checked). */
static wire_rd reply_of(uint8_t **rep, size_t *nrep, int k)
{
    wire_rd rd = {rep[k], nrep[k], 0, 0};
    int st;
    char *msg;
    reply_ok(&rd, &st, &msg);
    free(msg);
    return rd;
}

/* The answer in the reply of rank k, as reply_answer wrote it. */
static wire_rd answer_of(uint8_t **rep, size_t *nrep, int k)
{
    wire_rd rd = reply_of(rep, nrep, k);
    size_t bn;
    const uint8_t *bp = wire_get_bytes(&rd, &bn);
    return (wire_rd){bp, bn, 0, rd.bad};
}

/* The first failing reply as an error: "rank R (host H): message" unless every rank failed
 * the same way (then it is the request's fault, as on one machine). 0 when none failed. */
static int replies_error(uint8_t **rep, size_t *nrep, int from, int to, ig_error *e)
{
    int first = -1, frc = 0, same = 1;
    char *fmsg = NULL;
    for (int r = from; r < to; r++) {
        wire_rd rd = {rep[r], nrep[r], 0, 0};
        int rc;
        char *msg;
        reply_ok(&rd, &rc, &msg);
        if (rc && first >= 0 && frc == IG_ECANCELLED && rc != IG_ECANCELLED) { /* the cause, not the vote */
            free(fmsg);
            first = r;
            frc = rc;
            fmsg = msg;
            same = 0;
            continue;
        }
        if (rc && first < 0) {
            first = r;
            frc = rc;
            fmsg = msg;
            continue;
        }
        if (first < 0 || rc != frc || !msg || !fmsg || strcmp(msg, fmsg))
            same = 0;
        free(msg);
    }
    if (first < 0)
        return 0;
    if (same && first == from)
        ig_error_set(e, frc, "%s", fmsg ? fmsg : "garbled reply");
    else
        ig_error_set(e, frc, "rank %d (host %s): %s", first, host_of(first), fmsg ? fmsg : "garbled reply");
    free(fmsg);
    return frc;
}

/* One round trip of request w (freed) to every rank: 0, or the first failing reply's error. */
static int ask_all(wire *w, uint8_t **rep, size_t *nrep, ig_error *e)
{
    round_trip(w, 0, g.size, g.timeout, rep, nrep);
    wire_free(w);
    return replies_error(rep, nrep, 0, g.size, e);
}

/* The same, reported as the command's error. */
static int report_failures(const char *cmd, double t0, uint8_t **rep, size_t *nrep, int from, int to)
{
    ig_error e;
    if (!replies_error(rep, nrep, from, to, &e))
        return 0;
    fail(cmd, e.code, t0, "%s", e.msg);
    return -1;
}

/* ---------------------------------------------------------------- commands */

/* Words of a command line: bare words, or "..." with \n \t \\ \" \xHH escapes. Each word is
 * malloc'd (exact bytes: a quoted word may hold a NUL). */
typedef struct words {
    char **w;
    size_t *len;
    size_t n;
    const char *line;  ///< the line split
    size_t *at, *end;  ///< each word's source in it: line[at, end), quotes and escapes included
} words;

static void words_free(words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    free(ws->w);
    free(ws->len);
    free(ws->at);
    free(ws->end);
    memset(ws, 0, sizeof *ws);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int split(const char *s, words *ws, char *why, size_t whylen)
{
    size_t cap = strlen(s) + 1;
    memset(ws, 0, sizeof *ws);
    ws->line = s;
    if (!(ws->w = calloc(cap, sizeof *ws->w)) || !(ws->len = calloc(cap, sizeof *ws->len)) ||
        !(ws->at = calloc(cap, sizeof *ws->at)) || !(ws->end = calloc(cap, sizeof *ws->end))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (const char *p = s;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return 0;
        char *out = malloc(strlen(p) + 1);
        if (!out) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        size_t o = 0;
        ws->w[ws->n] = out;
        ws->at[ws->n] = (size_t)(p - s);
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p != '\\') {
                    out[o++] = *p;
                    continue;
                }
                p++;
                if (*p == 'n')
                    out[o++] = '\n';
                else if (*p == 't')
                    out[o++] = '\t';
                else if (*p == 'x' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
                    out[o++] = (char)(hexval(p[1]) * 16 + hexval(p[2]));
                    p += 2;
                } else if (*p)
                    out[o++] = *p;
                else
                    break;
            }
            if (*p != '"') {
                ws->n++;
                snprintf(why, whylen, "unterminated quote");
                return -1;
            }
            p++;
        } else {
            while (*p && *p != ' ' && *p != '\t')
                out[o++] = *p++;
        }
        out[o] = '\0';
        ws->end[ws->n] = (size_t)(p - s);
        ws->len[ws->n++] = o;
    }
}

/* Fills an operation's options from words[1..] by its field table: --name VALUE (a switch
 * for booleans), then the positional fields in order (the last may take the rest, joined by
 * spaces). */
/* serve: the request's options, decoded by the server through the same field table (taken by
 * fill_opts, which then zeroes them: the command frees what it took). */
static void *preset;

static int fill_opts(const ig_op *op, void *opts, const words *ws, ig_error *e)
{
    if (!ws) {
        if (!preset)
            return ig_error_set(e, IG_EINTERNAL, "no options");
        memcpy(opts, preset, op->opts_size);
        memset(preset, 0, op->opts_size);
        return 0;
    }
    const ig_field *pos[8];
    size_t npos = 0;
    for (const ig_field *f = op->fields; f->name && npos < 8; f++)
        if (f->flags & IG_FIELD_POSITIONAL)
            pos[npos++] = f;
    char *rest = NULL;
    size_t restn = 0, used = 0;
    int rc = 0;
    for (size_t i = 1; !rc && i < ws->n; i++) {
        const char *w = ws->w[i];
        if (!strncmp(w, "--", 2) && w[2]) {
            const ig_field *f = ig_field_find(op->fields, w + 2, strlen(w + 2));
            if (!f || (f->flags & (IG_FIELD_POSITIONAL | IG_FIELD_HTTP)))
                return ig_error_set(e, IG_EUSAGE, "%s has no option %s", op->name, w);
            if (f->type == IG_FIELD_BOOL)
                rc = ig_field_set_bool(f, opts, 1, e);
            else if (i + 1 >= ws->n)
                return ig_error_set(e, IG_EUSAGE, "%s needs a value", w);
            else if ((rc = ig_field_set_text(f, opts, (const uint8_t *)ws->w[i + 1], ws->len[i + 1], e))) {
                char msg[IG_ERRMSG_MAX]; /* the setter's message says what is wrong, not with which option */
                snprintf(msg, sizeof msg, "%s", e->msg);
                ig_error_set(e, rc, "%s: %s", w, msg);
            }
            if (f->type != IG_FIELD_BOOL)
                i++;
            continue;
        }
        if (used < npos && (pos[used]->flags & IG_FIELD_REST)) { /* the remaining words, joined */
            char *p = realloc(rest, restn + ws->len[i] + 2);
            if (!p) {
                free(rest);
                return ig_error_set(e, IG_ENOMEM, "out of memory");
            }
            rest = p;
            if (restn)
                rest[restn++] = ' ';
            memcpy(rest + restn, ws->w[i], ws->len[i]);
            restn += ws->len[i];
            continue;
        }
        if (used >= npos)
            return ig_error_set(e, IG_EUSAGE, "%s: unexpected argument \"%s\"", op->name, w);
        rc = ig_field_set_text(pos[used++], opts, (const uint8_t *)w, ws->len[i], e);
    }
    if (!rc && rest)
        rc = ig_field_set_text(pos[used], opts, (const uint8_t *)rest, restn, e);
    free(rest);
    return rc;
}

static const char *opt_value(const words *ws, const char *name)
{
    for (size_t i = 1; i + 1 < ws->n; i++)
        if (!strcmp(ws->w[i], name))
            return ws->w[i + 1];
    return NULL;
}

static int cmd_add(const words *ws, double t0)
{
    const char *cmd = "dataset add";
    if (ws->n < 4)
        return fail(cmd, IG_EUSAGE, t0, "usage: :dataset add NAME SOURCE... [--format text|lines|jsonl] [--field F]");
    const char *fmt = opt_value(ws, "--format"), *field = opt_value(ws, "--field");
    uint32_t format = 0;
    if (fmt && !strcmp(fmt, "lines"))
        format = IG_FORMAT_LINES;
    else if (fmt && !strcmp(fmt, "jsonl"))
        format = IG_FORMAT_JSONL;
    else if (fmt && strcmp(fmt, "text"))
        return fail(cmd, IG_EUSAGE, t0, "--format takes text, lines or jsonl");
    wire q = {0};
    wire_u32(&q, OP_ADD);
    wire_str(&q, ws->w[2]);
    uint32_t n = 0;
    for (size_t i = 3; i < ws->n; i++) {
        if (!strncmp(ws->w[i], "--", 2)) {
            if (strcmp(ws->w[i], "--format") && strcmp(ws->w[i], "--field")) {
                wire_free(&q);
                return fail(cmd, IG_EUSAGE, t0, "unknown option %s", ws->w[i]);
            }
            i++;
            continue;
        }
        n++;
    }
    wire_u32(&q, n);
    char resolved[4096];
    for (size_t i = 3; i < ws->n; i++) {
        if (!strncmp(ws->w[i], "--", 2)) {
            i++;
            continue;
        }
        /* every rank must read the same files: an absolute path, whatever each rank's cwd */
        wire_str(&q, realpath(ws->w[i], resolved) ? resolved : ws->w[i]);
    }
    wire_u32(&q, format);
    wire_str(&q, field ? field : "");
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    round_trip(&q, 0, g.size, g.timeout, rep, nrep);
    wire_free(&q);
    int rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    if (!rc)
        emit(cmd, "\"dataset\":\"\"", t0);
    free_replies(rep);
    return rc;
}

static int cmd_load(const char *name, int quiet, double t0);

static int cmd_build(const words *ws, double t0)
{
    const char *cmd = "build";
    if (ws->n < 2)
        return fail(cmd, IG_EUSAGE, t0, "usage: build NAME [--jobs N] [--memory SIZE] [--shard-size SIZE]");
    const char *jobs = opt_value(ws, "--jobs"), *mem = opt_value(ws, "--memory"), *shard = opt_value(ws, "--shard-size");
    uint64_t m = 0, s = 0;
    if ((mem && ig_parse_size(mem, &m)) || (shard && ig_parse_size(shard, &s)))
        return fail(cmd, IG_EUSAGE, t0, "%s is not a size", mem && ig_parse_size(mem, &m) ? mem : shard);
    wire q = {0};
    wire_u32(&q, OP_BUILD);
    wire_str(&q, ws->w[1]);
    wire_u64(&q, jobs ? strtoull(jobs, NULL, 10) : 0);
    wire_u64(&q, m);
    wire_u64(&q, s);
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    g.loaded = 0; /* each rank closes its part before building */
    building = 1;
    round_trip(&q, 0, g.size, g.build_timeout, rep, nrep);
    building = 0;
    wire_free(&q);
    int rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    cJSON *rec = rc ? NULL : cJSON_CreateObject(), *ranks = rec ? cJSON_AddArrayToObject(rec, "ranks") : NULL;
    uint64_t bytes = 0, docs = 0, shards = 0;
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = reply_of(rep, nrep, r);
        char *path = wire_get_str(&rd);
        uint64_t b = wire_get_u64(&rd), d = wire_get_u64(&rd), sh = wire_get_u64(&rd), sum = wire_get_u64(&rd);
        (void)wire_get_f64(&rd);
        char *home = wire_get_str(&rd);
        cJSON *o = cJSON_CreateObject();
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, sum);
        if (o) {
            cJSON_AddNumberToObject(o, "rank", r);
            cJSON_AddStringToObject(o, "host", host_of(r));
            cJSON_AddStringToObject(o, "home", home ? home : "");
            cJSON_AddStringToObject(o, "index", path ? path : "");
            cJSON_AddNumberToObject(o, "bytes", (double)b);
            cJSON_AddNumberToObject(o, "documents", (double)d);
            cJSON_AddNumberToObject(o, "shards", (double)sh);
            cJSON_AddStringToObject(o, "checksum", hex);
            cJSON_AddItemToArray(ranks, o);
        }
        bytes += b;
        docs += d;
        shards += sh;
        free(path);
        free(home);
    }
    if (!rc) {
        cJSON_AddNumberToObject(rec, "parts", g.size);
        char *text = cJSON_PrintUnformatted(rec), key[128];
        ig_error e;
        snprintf(key, sizeof key, "cluster.%s", ws->w[1]);
        if (!text)
            rc = fail(cmd, IG_ENOMEM, t0, "out of memory recording the parts");
        else if (ig_catalog_setting_set(g.cat, key, text, &e))
            rc = fail(cmd, e.code, t0, "the parts are built but rank 0 cannot record them: %s", e.msg);
        free(text);
    }
    if (!rc) {
        char members[512];
        snprintf(members, sizeof members,
                 "\"dataset\":\"%s\",\"parts\":%d,\"bytes\":%" PRIu64 ",\"documents\":%" PRIu64 ",\"shards\":%" PRIu64,
                 ws->w[1], g.size, bytes, docs, shards);
        emit(cmd, members, t0);
    }
    cJSON_Delete(rec);
    free_replies(rep);
    /* a rebuilt current dataset is reopened so that queries see the new parts, as the shell
     * does (a failed build leaves the previous parts, reopened too) */
    if (g.current && !strcmp(g.current, ws->w[1]))
        cmd_load(ws->w[1], 1, now());
    return rc;
}

static int cmd_load(const char *name, int quiet, double t0)
{
    const char *cmd = "load";
    g.loaded = 0;
    char key[128], *text = NULL;
    ig_error e;
    snprintf(key, sizeof key, "cluster.%s", name);
    if (!g.cat)
        return fail(cmd, g.cat_err.code, t0, "rank 0 (host %s): home %s: %s", host_of(0), g.home, g.cat_err.msg);
    if (ig_catalog_setting_get(g.cat, key, &text, &e))
        return fail(cmd, e.code, t0, "%s", e.msg);
    if (!text)
        return fail(cmd, IG_ENOTFOUND, t0,
                    "%s is not a dataset of this cluster: build it with infinigram-mpi (build %s)", name, name);
    cJSON *rec = cJSON_Parse(text);
    free(text);
    cJSON *parts = cJSON_GetObjectItemCaseSensitive(rec, "parts"), *ranks = cJSON_GetObjectItemCaseSensitive(rec, "ranks");
    if (!cJSON_IsNumber(parts) || !cJSON_IsArray(ranks) || cJSON_GetArraySize(ranks) != (int)parts->valuedouble) {
        cJSON_Delete(rec);
        return fail(cmd, IG_ECORRUPT, t0, "rank 0's record of %s's parts is unreadable: rebuild %s", name, name);
    }
    if ((int)parts->valuedouble != g.size) {
        int n = (int)parts->valuedouble;
        cJSON_Delete(rec);
        return fail(cmd, IG_EUSAGE, t0, "%s was built over %d ranks and this job has %d: run it with -np %d (or rebuild)",
                    name, n, g.size, n);
    }
    wire q = {0};
    wire_u32(&q, OP_LOAD);
    wire_str(&q, name);
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    round_trip(&q, 0, g.size, g.timeout, rep, nrep);
    wire_free(&q);
    int rc = 0;
    uint64_t *docs = calloc((size_t)g.size, sizeof *docs);
    if (!docs)
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = {rep[r], nrep[r], 0, 0};
        int st;
        char *msg;
        reply_ok(&rd, &st, &msg);
        char *path = wire_get_str(&rd);
        docs[r] = wire_get_u64(&rd);
        uint64_t sum = wire_get_u64(&rd);
        cJSON *o = cJSON_GetArrayItem(ranks, r);
        cJSON *want = cJSON_GetObjectItemCaseSensitive(o, "checksum"), *ip = cJSON_GetObjectItemCaseSensitive(o, "index");
        const char *recorded = cJSON_IsString(ip) ? ip->valuestring : "?";
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, sum);
        if (st)
            rc = fail(cmd, st, t0, "rank %d (host %s), part %s: %s", r, host_of(r), recorded, msg ? msg : "garbled reply");
        else if (!path || strcmp(path, recorded) || !cJSON_IsString(want) || strcmp(want->valuestring, hex))
            rc = fail(cmd, IG_ECORRUPT, t0,
                      "rank %d (host %s): its part %s is not the one recorded at the cluster build (%s): rebuild %s with "
                      "infinigram-mpi",
                      r, host_of(r), path ? path : "?", recorded, name);
        free(msg);
        free(path);
    }
    cJSON_Delete(rec);
    free_replies(rep);
    if (rc) {
        free(docs);
        return rc;
    }
    free(g.docs);
    g.docs = docs;
    g.loaded = 1;
    char *cur = strdup(name);
    if (cur) {
        free(g.current);
        g.current = cur;
    }
    if (quiet)
        return 0;
    uint64_t total = 0;
    for (int r = 0; r < g.size; r++)
        total += docs[r];
    char members[256];
    snprintf(members, sizeof members, "\"dataset\":\"%s\",\"parts\":%d,\"documents\":%" PRIu64, name, g.size, total);
    emit(cmd, members, t0);
    return 0;
}

static int need_loaded(const char *cmd, double t0)
{
    if (g.loaded)
        return 0;
    return fail(cmd, IG_EUSAGE, t0, "no dataset loaded (use: load NAME)");
}

static int cmd_count(const words *ws, double t0)
{
    const char *cmd = "count";
    ig_count_opts o;
    ig_count_defaults(&o);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    if (fill_opts(&ig_op_count, &o, ws, &e)) {
        ig_fields_free(ig_count_fields, &o);
        return fail(cmd, e.code, t0, "%s", e.msg);
    }
    wire q = {0};
    wire_u32(&q, OP_COUNT);
    wire_bytes(&q, o.query.p, o.query.n);
    wire_u64(&q, o.positions);
    wire_u64(&q, o.width);
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    round_trip(&q, 0, g.size, g.timeout, rep, nrep);
    wire_free(&q);
    int rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    /* the merge: counts summed, occurrences in rank order (corpus order), documents offset */
    ig_count_result m;
    memset(&m, 0, sizeof m);
    char **names = NULL;
    size_t nnames = 0;
    if (!rc && (!(m.occ = calloc(o.positions ? o.positions : 1, sizeof *m.occ)) ||
                !(names = calloc(o.positions ? o.positions : 1, sizeof *names))))
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
    uint64_t base = 0;
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = reply_of(rep, nrep, r);
        size_t qn;
        const uint8_t *qp = wire_get_bytes(&rd, &qn);
        if (r == 0 && !(m.query = malloc(qn ? qn : 1))) {
            rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
            break;
        }
        if (r == 0) {
            memcpy(m.query, qp ? (const void *)qp : "", qn);
            m.qlen = qn;
        }
        m.count += wire_get_u64(&rd);
        uint64_t nocc = wire_get_u64(&rd);
        for (uint64_t i = 0; i < nocc && !rd.bad; i++) {
            ig_occurrence oc;
            get_occ(&rd, base, &oc);
            if (m.nocc < o.positions && !rd.bad) {
                names[nnames++] = (char *)oc.loc.name;
                m.occ[m.nocc++] = oc;
            } else {
                free((char *)oc.loc.name);
                free((char *)oc.snippet);
            }
        }
        if (rd.bad)
            rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", r, host_of(r));
        base += g.docs[r];
    }
    if (!rc) {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_count_json(&ctx, &o, &m), t0);
    }
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    ig_count_result_free(&m); /* frees the snippets and the query; the names were ours */
    free_replies(rep);
    ig_fields_free(ig_count_fields, &o);
    return rc;
}

static int cmd_doc(const words *ws, double t0)
{
    const char *cmd = "doc";
    ig_doc_opts o;
    ig_doc_defaults(&o);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    if (fill_opts(&ig_op_doc, &o, ws, &e)) {
        ig_fields_free(ig_doc_fields, &o);
        return fail(cmd, e.code, t0, "%s", e.msg);
    }
    uint64_t id = 0, total = 0;
    int numeric, rc = ig_doc_query_id(&o.query, &numeric, &id, &e);
    for (int r = 0; r < g.size; r++)
        total += g.docs[r];
    if (!rc && !numeric) { /* by name: one more round trip, every part's matches */
        wire q = {0};
        wire_u32(&q, OP_DOCNAME);
        wire_bytes(&q, o.query.p, o.query.n);
        uint8_t *rep[g.size];
        size_t nrep[g.size];
        memset(rep, 0, sizeof rep);
        round_trip(&q, 0, g.size, g.timeout, rep, nrep);
        wire_free(&q);
        if (report_failures(cmd, t0, rep, nrep, 0, g.size)) {
            free_replies(rep);
            ig_fields_free(ig_doc_fields, &o);
            return -1;
        }
        uint64_t first = UINT64_MAX, count = 0, base = 0;
        for (int r = 0; r < g.size; r++) {
            wire_rd rd = reply_of(rep, nrep, r);
            uint64_t f = wire_get_u64(&rd), c = wire_get_u64(&rd);
            if (c && !count)
                first = base + f; /* the first of the first part that has one */
            count += c;
            base += g.docs[r];
        }
        free_replies(rep);
        rc = ig_doc_name_pick(o.query.p ? o.query.p : (const uint8_t *)"", o.query.n, first, count, &id, &e);
    }
    if (!rc && id >= total) /* past the end: as one index of every part says it */
        rc = ig_error_set(&e, IG_ENOTFOUND, "{query}: no document %" PRIu64 " (the index has %" PRIu64 ")", id, total);
    else if (rc && numeric) { /* past 2^64: doc's message, with the corpus's size */
        char msg[IG_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", e.msg);
        ig_error_set(&e, rc, "%s (the index has %" PRIu64 ")", msg, total);
    }
    if (rc) {
        ig_fields_free(ig_doc_fields, &o);
        return fail(cmd, e.code, t0, "%s", e.msg);
    }
    /* the rank holding document id, and its number there */
    int owner = 0;
    uint64_t local = id;
    while (owner < g.size && local >= g.docs[owner])
        local -= g.docs[owner++];
    char idtext[32];
    snprintf(idtext, sizeof idtext, "%" PRIu64, local);
    wire q = {0};
    wire_u32(&q, OP_DOC);
    wire_bytes(&q, idtext, strlen(idtext));
    wire_u32(&q, o.lines.p != NULL);
    wire_bytes(&q, o.lines.p, o.lines.n);
    wire_u32(&q, o.range.p != NULL);
    wire_bytes(&q, o.range.p, o.range.n);
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    round_trip(&q, owner, owner + 1, g.timeout, rep, nrep);
    wire_free(&q);
    rc = report_failures(cmd, t0, rep, nrep, owner, owner + 1);
    if (!rc) {
        wire_rd rd = reply_of(rep, nrep, owner);
        ig_doc_result r;
        memset(&r, 0, sizeof r);
        char *name = wire_get_str(&rd);
        r.doc.id = id;
        r.doc.name = name;
        r.doc.source_line = wire_get_u64(&rd);
        r.doc.length = wire_get_u64(&rd);
        r.offset = wire_get_u64(&rd);
        r.first_line = wire_get_u64(&rd);
        size_t tn;
        r.text = wire_get_bytes(&rd, &tn);
        r.len = tn;
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        char *members = rd.bad ? NULL : ig_doc_json(&ctx, &o, &r);
        if (members)
            emit(cmd, members, t0);
        else
            rc = fail(cmd, rd.bad ? IG_EINTERNAL : IG_ENOMEM, t0, "rank %d (host %s): %s", owner, host_of(owner),
                      rd.bad ? "garbled reply" : "out of memory writing the answer");
        free(members);
        free(name);
    }
    free_replies(rep);
    ig_fields_free(ig_doc_fields, &o);
    return rc;
}

/* Any model's distribution after q[0, qn) over the parts, 2 round trips: each part's count
 * profile of the context, summed; then each part's levels at every change point of the sum
 * (all the levels a model can read), summed; ig_predict_from_parts does the rest. Outputs as
 * ig_predict_from_parts; errors name the rank at fault. */
/* The parts' count profiles of the context q[0, qn) capped at `cap`, summed into *sum: 1 round
 * trip. */
static int parts_profile(const uint8_t *q, size_t qn, int64_t cap, ig_part_profile *sum, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    memset(sum, 0, sizeof *sum);
    wire w = {0};
    wire_u32(&w, OP_PROFILE);
    wire_bytes(&w, q, qn);
    wire_u64(&w, (uint64_t)cap);
    int rc = ask_all(&w, rep, nrep, e);
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        uint64_t n = wire_get_u64(&rd);
        ig_part_profile pr = {0};
        if (!rd.bad && n <= nrep[k] && (!(pr.ell = calloc(n ? n : 1, 8)) || !(pr.count = calloc(n ? n : 1, 8))))
            rc = ig_error_set(e, IG_ENOMEM, "out of memory");
        for (uint64_t i = 0; !rc && pr.ell && pr.count && !rd.bad && i < n; i++) {
            pr.ell[i] = wire_get_u64(&rd);
            pr.count[i] = wire_get_u64(&rd);
            pr.n++;
        }
        if (!rc && (rd.bad || n > nrep[k]))
            rc = garbled(e, k);
        if (!rc)
            rc = ig_part_profile_add(sum, &pr, e);
        ig_part_profile_free(&pr);
    }
    free_replies(rep);
    if (rc)
        ig_part_profile_free(sum);
    return rc;
}

/* The parts' levels at lengths lens[0, n) of the context q[0, qn), summed into lv[i] (ell
 * set by the caller): 1 round trip. `suffixes`: each level with its suffix as the whole
 * context (backoff), else of the context capped at `cap`. */
static int parts_levels(const uint8_t *q, size_t qn, int64_t cap, int chars, int suffixes, const uint64_t *lens,
                        size_t n, ig_part_level *lv, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_LEVELS);
    wire_bytes(&w, q, qn);
    wire_u64(&w, (uint64_t)cap);
    wire_u32(&w, (uint32_t)chars | (uint32_t)suffixes << 1);
    wire_u64(&w, n);
    for (size_t i = 0; i < n; i++)
        wire_u64(&w, lens[i]);
    int rc = ask_all(&w, rep, nrep, e);
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (size_t i = 0; !rc && i < n; i++) {
            ig_part_level one;
            memset(&one, 0, sizeof one);
            one.ell = lens[i];
            if (get_level(&lr, &one))
                rc = garbled(e, k);
            else
                rc = ig_part_level_add(&lv[i], &one, e);
            ig_part_level_free(&one);
        }
    }
    free_replies(rep);
    return rc;
}

static int parts_dist(const ig_model *model, const uint8_t *q, size_t qn, int chars, ig_dist *d, ig_symbol **syms,
                      size_t *nsyms, double *unseen, int *sparse, ig_error *e)
{
    *syms = NULL;
    *nsyms = 0;
    ig_part_profile sum = {0};
    int rc = parts_profile(q, qn, model->max_context, &sum, e);
    ig_part_level *lv = rc ? NULL : calloc(sum.n ? sum.n : 1, sizeof *lv);
    if (!rc && !lv)
        rc = ig_error_set(e, IG_ENOMEM, "out of memory");
    for (size_t i = 0; lv && i < sum.n; i++)
        lv[i].ell = sum.ell[i];
    if (!rc)
        rc = parts_levels(q, qn, model->max_context, chars, 0, sum.ell, sum.n, lv, e);
    if (!rc)
        rc = ig_predict_from_parts(model, q, qn, &sum, lv, chars, d, syms, nsyms, unseen, sparse, e);
    for (size_t i = 0; lv && i < sum.n; i++)
        ig_part_level_free(&lv[i]);
    free(lv);
    ig_part_profile_free(&sum);
    return rc;
}

/* predict with a mixture (weighted, interpolation) over the parts: parts_dist, 2 round trips. */
static int predict_mixture(const ig_predict_opts *o, ig_predict_result *r, double t0)
{
    const char *cmd = "predict";
    ig_error e;
    int rc = parts_dist(&r->model, o->query.p, o->query.n, !o->bytes, &r->dist, &r->syms, &r->nsyms, &r->unseen,
                        &r->sparse, &e);
    if (rc)
        return fail(cmd, e.code, t0, "%s", e.msg);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    return emit_answer(cmd, ig_predict_json(&ctx, o, r), t0);
}

/* ---- generate: the corpus the generation reads is the parts' (ig_gen_backend) */

typedef struct parts_backend {
    char *name;            ///< the located source's document name (the answer points to it)
} parts_backend;

/* Each step's distribution: parts_dist, byte view. */
static int gen_predict(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d, ig_error *err)
{
    (void)user;
    ig_symbol *syms = NULL;
    size_t nsyms = 0;
    double unseen;
    int sparse;
    ig_dist_free(d);
    int rc = parts_dist(model, text, len, 0, d, &syms, &nsyms, &unseen, &sparse, err);
    free(syms);
    return rc;
}

/* Matching statistics over the parts, 1 round trip: the longest prefix of text[i..] that occurs
 * in the corpus is the longest that occurs in some part. */
static int gen_matching(void *user, const uint8_t *text, size_t len, uint64_t **ms, ig_error *err)
{
    (void)user;
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_MATCHING);
    wire_bytes(&w, text, len);
    round_trip(&w, 0, g.size, g.timeout, rep, nrep);
    wire_free(&w);
    int rc = replies_error(rep, nrep, 0, g.size, err);
    uint64_t *m = rc ? NULL : calloc(len ? len : 1, sizeof *m);
    if (!rc && !m)
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        if (wire_get_u64(&rd) != len)
            rd.bad = 1;
        for (size_t i = 0; !rd.bad && i < len; i++) {
            uint64_t v = wire_get_u64(&rd);
            if (v > m[i])
                m[i] = v;
        }
        if (rd.bad)
            rc = garbled(err, k);
    }
    free_replies(rep);
    if (rc) {
        free(m);
        return rc;
    }
    *ms = m;
    return 0;
}

/* The first occurrence in corpus order, 1 round trip: count's first position of each part, the
 * first part that has one. */
static int gen_first(void *user, const uint8_t *p, size_t len, ig_location *loc, int *found, ig_error *err)
{
    parts_backend *be = user;
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_COUNT);
    wire_bytes(&w, p, len);
    wire_u64(&w, 1);
    wire_u64(&w, 0);
    round_trip(&w, 0, g.size, g.timeout, rep, nrep);
    wire_free(&w);
    *found = 0;
    int rc = replies_error(rep, nrep, 0, g.size, err);
    uint64_t base = 0;
    for (int k = 0; !rc && !*found && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        size_t qn;
        wire_get_bytes(&rd, &qn);
        wire_get_u64(&rd);
        if (wire_get_u64(&rd) > 0 && !rd.bad) {
            ig_occurrence oc;
            get_occ(&rd, base, &oc);
            free(oc.snippet);
            free(be->name);
            be->name = (char *)oc.loc.name;
            *loc = oc.loc;
            *found = !rd.bad;
        }
        if (rd.bad)
            rc = garbled(err, k);
        base += g.docs[k];
    }
    free_replies(rep);
    return rc;
}

/* generate over the parts: each byte of a step 2 round trips (parts_dist), then 2 for the
 * summary (matching statistics; the longest span's first source); the draws are the one
 * machine's, so a seeded generation is byte-identical. */
static int cmd_generate(const words *ws, double t0)
{
    const char *cmd = "generate";
    ig_generate_opts o;
    ig_generate_defaults(&o);
    ig_generate_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    parts_backend pb = {0};
    ig_gen_backend be = {gen_predict, gen_matching, gen_first, &pb};
    int rc = fill_opts(&ig_op_generate, &o, ws, &e);
    o.backend = &be;
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    if (!rc)
        rc = ig_op_generate.run(&ctx, &o, &r, &e);
    if (rc) {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    } else {
        rc = emit_answer(cmd, ig_generate_json(&ctx, &o, &r), t0);
        ig_generate_result_free(&r);
    }
    free(pb.name);
    ig_fields_free(ig_generate_fields, &o);
    return rc;
}

/* ---- spans: maximal over the union of the parts */

/* The parts' counts of spans sp[0, n) of text, summed into sp[i].count, and when `listed` is
 * not 0 each span's first `listed` occurrences in corpus order (rank 0's first, documents
 * numbered past the ranks' before) appended to src[i] (malloc'd, with malloc'd names): 1 round
 * trip. *unlisted is set when a part held its occurrences back (a request listing too many). */
static int parts_spans(const uint8_t *text, size_t len, ig_span *sp, size_t n, uint64_t listed, ig_occurrence **src,
                       size_t *nsrc, int *unlisted, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_SPANS);
    wire_bytes(&w, text, len);
    wire_u64(&w, listed);
    wire_u64(&w, n);
    for (size_t i = 0; i < n; i++) {
        wire_u64(&w, sp[i].start);
        wire_u64(&w, sp[i].length);
        sp[i].count = 0;
    }
    round_trip(&w, 0, g.size, g.timeout, rep, nrep);
    wire_free(&w);
    *unlisted = 0;
    int rc = replies_error(rep, nrep, 0, g.size, e);
    uint64_t base = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (size_t i = 0; !rc && !lr.bad && i < n; i++) {
            sp[i].count += wire_get_u64(&lr);
            int has = (int)wire_get_u32(&lr);
            *unlisted |= listed && !has;
            uint64_t nocc = has ? wire_get_u64(&lr) : 0;
            for (uint64_t j = 0; !rc && !lr.bad && j < nocc; j++) {
                ig_occurrence oc;
                get_occ(&lr, base, &oc);
                if (lr.bad || nsrc[i] >= listed) {
                    free((char *)oc.loc.name);
                    free(oc.snippet);
                    continue;
                }
                ig_occurrence *grown = realloc(src[i], (nsrc[i] + 1) * sizeof *grown);
                if (!grown) {
                    free((char *)oc.loc.name);
                    free(oc.snippet);
                    rc = ig_error_set(e, IG_ENOMEM, "out of memory");
                    break;
                }
                free(oc.snippet); /* a span's sources have none */
                oc.snippet = NULL;
                src[i] = grown;
                src[i][nsrc[i]++] = oc;
            }
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
        base += g.docs[k];
    }
    free_replies(rep);
    return rc;
}

/* spans --max-count: the candidates' counts decide which are kept, so every candidate is
 * counted first (one round trip for all): a first pass records them (each "counted" past the
 * limit, so that none is kept and none hides a later one), the second reads their sums. */
typedef struct span_tally {
    ig_span *c;
    size_t n, cap, next;
    uint64_t over;
} span_tally;

static int tally_record(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err)
{
    span_tally *t = user;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        ig_span *p = realloc(t->c, cap * sizeof *p);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        t->c = p;
        t->cap = cap;
    }
    t->c[t->n++] = (ig_span){start, length, 0};
    *count = t->over;
    return 0;
}

static int tally_read(void *user, uint64_t start, uint64_t length, uint64_t *count, ig_error *err)
{
    span_tally *t = user; /* the candidates come in the same order, some skipped */
    while (t->next < t->n && (t->c[t->next].start != start || t->c[t->next].length != length))
        t->next++;
    if (t->next == t->n)
        return ig_error_set(err, IG_EINTERNAL, "span %" PRIu64 "+%" PRIu64 " was not counted", start, length);
    *count = t->c[t->next].count;
    return 0;
}

/* spans over the parts: the parts' matching statistics, the largest at each position (1 round
 * trip); the maximal spans from them as one index finds them (ig_spans_from_matching); then
 * each span's count and first sources from every part (1 round trip); with --max-count one more
 * before, every candidate's count. */
static int cmd_spans(const words *ws, double t0)
{
    const char *cmd = "spans";
    ig_spans_opts o;
    ig_spans_defaults(&o);
    ig_spans_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    uint64_t *ms = NULL;
    span_tally t = {0};
    if (need_loaded(cmd, t0))
        return -1;
    int rc = fill_opts(&ig_op_spans, &o, ws, &e), unlisted = 0;
    if (!rc && (o.rank == IG_RANK_BM25 || o.ids.p))
        rc = ig_error_set(&e, IG_EUSAGE, "spans %s is not distributed yet: run it with infinigram on one machine",
                          o.ids.p ? "--ids" : "--rank bm25");
    if (!rc && !o.query.p)
        rc = ig_error_set(&e, IG_EUSAGE, "{query}: missing TEXT");
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p, o.query.n, &r.text, &r.len, &e);
    if (!rc)
        rc = gen_matching(NULL, r.text, r.len, &ms, &e);
    ig_span_options so;
    ig_span_options_default(&so);
    so.min_len = o.min_len;
    so.max_count = o.max_count;
    so.words = o.words;
    if (!rc && o.max_count) {
        t.over = o.max_count + 1;
        rc = ig_spans_from_matching(r.text, r.len, ms, &so, tally_record, &t, &r.spans, &r.nspans, &e);
        free(r.spans);
        r.spans = NULL;
        if (!rc && t.n)
            rc = parts_spans(r.text, r.len, t.c, t.n, 0, NULL, NULL, &unlisted, &e);
        if (!rc)
            rc = ig_spans_from_matching(r.text, r.len, ms, &so, tally_read, &t, &r.spans, &r.nspans, &e);
    } else if (!rc) {
        rc = ig_spans_from_matching(r.text, r.len, ms, &so, NULL, NULL, &r.spans, &r.nspans, &e);
    }
    size_t n = r.nspans ? r.nspans : 1;
    if (!rc && (!(r.sources = calloc(n, sizeof *r.sources)) || !(r.nsources = calloc(n, sizeof *r.nsources)) ||
                !(r.totals = calloc(n, sizeof *r.totals))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc && r.nspans)
        rc = parts_spans(r.text, r.len, r.spans, r.nspans, o.positions, r.sources, r.nsources, &unlisted, &e);
    if (!rc)
        rc = ig_spans_check_listed(&o, r.spans, r.nspans, &e);
    if (!rc && unlisted)
        rc = ig_error_set(&e, IG_EINTERNAL, "a part held back occurrences that the corpus may list");
    if (!rc) {
        for (size_t i = 0; i < r.nspans; i++)
            r.totals[i] = r.spans[i].count;
        r.novelty = ig_novelty(ms, r.len, o.min_len);
        r.searches = ig_spans_searches(ms, r.len);
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_spans_json(&ctx, &o, &r), t0);
    } else {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    }
    for (size_t i = 0; r.sources && r.nsources && i < r.nspans; i++)
        for (size_t k = 0; k < r.nsources[i]; k++)
            free((char *)r.sources[i][k].loc.name);
    ig_spans_result_free(&r);
    free(ms);
    free(t.c);
    ig_fields_free(ig_spans_fields, &o);
    return rc;
}

/* ---- mix: every byte factor's context is known before the first is read */

/* The contexts of a mix, the context followed by each proper prefix of each candidate (the
 * empty one included), with their ∞-gram ℓ* and level summed over the parts. */
typedef struct batch_ctx {
    const uint8_t *x; ///< the bytes after the context (in the candidates' arena)
    size_t n;
    uint64_t longest;
    ig_part_level *lv; ///< its level at `longest` (mix; malloc'd by the levels round)
    uint64_t a, b;    ///< the window of the text before them (eval: the position's context)
} batch_ctx;

typedef struct mix_cache {
    const uint8_t *ctx;
    size_t clen;
    batch_ctx *c;
    size_t n;
} mix_cache;

static int cmp_batch_ctx(const void *a, const void *b)
{
    const batch_ctx *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int d = n ? memcmp(x->x, y->x, n) : 0;
    return d ? d : (x->n > y->n) - (x->n < y->n);
}

/* ig_mix's predictions from the cache: the ∞-gram at the parts' largest ℓ*, as one index
 * gives it. */
static int mix_cached(void *user, const ig_model *model, const uint8_t *text, size_t len, ig_dist *d, ig_error *err)
{
    const mix_cache *mc = user;
    batch_ctx key = {text + mc->clen, len - mc->clen, 0, NULL, 0, 0};
    batch_ctx *hit = len >= mc->clen && !memcmp(text, mc->ctx, mc->clen)
                       ? bsearch(&key, mc->c, mc->n, sizeof *mc->c, cmp_batch_ctx)
                       : NULL;
    if (!hit || !hit->lv)
        return ig_error_set(err, IG_EINTERNAL, "a context of the mix was not fetched from the parts");
    ig_symbol *syms = NULL;
    size_t nsyms = 0;
    double unseen;
    int sparse;
    int rc = ig_predict_from_level(model, text, len, hit->longest, hit->lv, 0, d, &syms, &nsyms, &unseen, &sparse, err);
    free(syms);
    return rc;
}

/* One round trip of OP_BATCH over the cache's contexts (mix's, or eval's windows): their ℓ*
 * (levels 0), then their levels at those lengths. */
static int batch_round(mix_cache *mc, int64_t cap, int levels, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_BATCH);
    wire_bytes(&w, mc->ctx, mc->clen);
    wire_u64(&w, (uint64_t)cap);
    wire_u32(&w, (uint32_t)levels);
    wire_u64(&w, mc->n);
    for (size_t i = 0; i < mc->n; i++) {
        wire_u64(&w, mc->c[i].a);
        wire_u64(&w, mc->c[i].b);
        wire_bytes(&w, mc->c[i].x, mc->c[i].n);
        if (levels)
            wire_u64(&w, mc->c[i].longest);
    }
    int rc = ask_all(&w, rep, nrep, e);
    for (size_t i = 0; !rc && levels && i < mc->n; i++) {
        if (!mc->c[i].lv && !(mc->c[i].lv = calloc(1, sizeof *mc->c[i].lv)))
            rc = ig_error_set(e, IG_ENOMEM, "out of memory");
        else
            mc->c[i].lv->ell = mc->c[i].longest;
    }
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (size_t i = 0; !rc && !lr.bad && i < mc->n; i++) {
            if (!levels) {
                uint64_t ell = wire_get_u64(&lr);
                if (ell > mc->c[i].longest)
                    mc->c[i].longest = ell;
                continue;
            }
            ig_part_level one;
            memset(&one, 0, sizeof one);
            one.ell = mc->c[i].longest;
            if (get_level(&lr, &one))
                break;
            rc = ig_part_level_add(mc->c[i].lv, &one, e);
            ig_part_level_free(&one);
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
    }
    free_replies(rep);
    return rc;
}

/* Fills the cache for the candidates tokens[0, n) after ctx: 2 round trips. */
static int mix_fetch(mix_cache *mc, const uint8_t *ctx, size_t clen, const ig_mix_token *tokens, size_t n,
                     int64_t cap, ig_error *e)
{
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += tokens[i].len;
    mc->ctx = ctx;
    mc->clen = clen;
    if (!(mc->c = calloc(total, sizeof *mc->c)))
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    mc->c[mc->n++] = (batch_ctx){(const uint8_t *)"", 0, 0, NULL, 0, clen};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 1; k < tokens[i].len; k++)
            mc->c[mc->n++] = (batch_ctx){tokens[i].bytes, k, 0, NULL, 0, clen};
    qsort(mc->c, mc->n, sizeof *mc->c, cmp_batch_ctx);
    size_t kept = 0;
    for (size_t i = 0; i < mc->n; i++)
        if (!kept || cmp_batch_ctx(&mc->c[kept - 1], &mc->c[i]))
            mc->c[kept++] = mc->c[i];
    mc->n = kept;
    int rc = batch_round(mc, cap, 0, e);
    return rc ? rc : batch_round(mc, cap, 1, e);
}

static void mix_cache_free(mix_cache *mc)
{
    for (size_t i = 0; i < mc->n; i++)
        if (mc->c[i].lv) {
            ig_part_level_free(mc->c[i].lv);
            free(mc->c[i].lv);
        }
    free(mc->c);
    memset(mc, 0, sizeof *mc);
}

/* mix over the parts, 2 round trips: every byte factor of every candidate reads the ∞-gram
 * after the context and a proper prefix of the candidate, all known at the start: each part's
 * ℓ* of all of them, then each part's level at the largest of each; ig_mix reads them. */
static int cmd_mix(const words *ws, double t0)
{
    const char *cmd = "mix";
    ig_mix_opts o;
    ig_mix_defaults(&o);
    ig_mix_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    mix_cache mc = {0};
    ig_gen_backend be = {mix_cached, NULL, NULL, &mc};
    ig_mix_token *tokens = NULL;
    size_t ntokens = 0;
    uint8_t *arena = NULL, *ctx = NULL;
    size_t clen = 0;
    int rc = fill_opts(&ig_op_mix, &o, ws, &e);
    /* as in the shell: --llm names a file (read on rank 0) unless it is the JSON itself; never
     * for a request to the server, which opens no path a request names */
    if (!rc && ws && o.llm.p && o.llm.n && o.llm.p[0] != '[' && o.llm.p[0] != '{') {
        char *path = strndup((const char *)o.llm.p, o.llm.n), *text = NULL;
        FILE *fp = path ? fopen(path, "r") : NULL;
        size_t cap = 0;
        ssize_t got = fp ? getdelim(&text, &cap, '\0', fp) : -1;
        int eno = errno;
        if (fp)
            fclose(fp);
        if (!path)
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
        else if (!fp)
            rc = ig_error_set(&e, IG_ENOTFOUND, "%s: cannot open: %s", path, strerror(eno));
        else if (got < 0)
            rc = ig_error_set(&e, IG_EIO, "%s: cannot read", path);
        else
            rc = ig_field_set_text(ig_field_find(ig_mix_fields, "llm", 3), &o, (const uint8_t *)text, (size_t)got, &e);
        free(text);
        free(path);
    }
    if (!rc && o.ids.p)
        rc = ig_error_set(&e, IG_EUSAGE, "mix --ids is not distributed yet: run it with infinigram on one machine");
    /* what the corpus must answer; a request the operation refuses is left to it, for its message */
    ig_error later;
    if (!rc && o.llm.p && o.query.p && !ig_mix_candidates_parse(o.llm.p, o.llm.n, &tokens, &ntokens, &arena, &later) &&
        !ig_query_normalize(g.idx, o.query.p, o.query.n, &ctx, &clen, &later)) {
        ig_mix_options mo;
        ig_mix_options_default(&mo);
        rc = mix_fetch(&mc, ctx, clen, tokens, ntokens, mo.model.max_context, &e);
    }
    o.backend = &be;
    ig_op_ctx octx = {g.idx, g.dataset, NULL};
    if (!rc)
        rc = ig_op_mix.run(&octx, &o, &r, &e);
    if (rc) {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    } else {
        rc = emit_answer(cmd, ig_mix_json(&octx, &o, &r), t0);
        ig_mix_result_free(&r);
    }
    mix_cache_free(&mc);
    free(tokens);
    free(arena);
    free(ctx);
    ig_fields_free(ig_mix_fields, &o);
    return rc;
}

/* ---- eval: every position's context is known before the first is scored */

/* eval over the parts, ∞-gram only, 2 round trips: each part's ℓ* of every position's context
 * (the corpus's is the largest), then each part's point there (the suffix's count, the count
 * of the byte that follows in the text, the bytes that may follow), summed; ig_eval_from_points
 * scores them as one index would. */
static int cmd_eval(const words *ws, double t0)
{
    const char *cmd = "eval";
    ig_eval_opts o;
    ig_eval_defaults(&o);
    ig_eval_op_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    uint8_t *text = NULL;
    size_t len = 0;
    mix_cache mc = {0};
    ig_eval_point *pts = NULL;
    char *label = NULL;
    int rc = fill_opts(&ig_op_eval, &o, ws, &e);
    if (!rc)
        rc = ig_model_resolve(&o.model, &r.model, &e);
    if (!rc && r.model.kind != IG_MODEL_INFGRAM)
        rc = ig_error_set(&e, IG_EUSAGE, "eval with another model than the infinity-gram is not distributed yet: run it "
                          "with infinigram on one machine");
    if (!rc && o.ids.p)
        rc = ig_error_set(&e, IG_EUSAGE, "eval --ids is not distributed yet: run it with infinigram on one machine");
    if (!rc && !ws && (o.file.p || o.range.p)) /* the server opens no path a request names */
        rc = ig_error_set(&e, IG_EUSAGE, "{file}: the shell reads files; give the text");
    else if (!rc && o.file.p && o.text.p)
        rc = ig_error_set(&e, IG_EUSAGE, "give either FILE or --text, not both");
    else if (!rc && o.range.p && !o.file.p)
        rc = ig_error_set(&e, IG_EUSAGE, "--range applies to FILE");
    else if (!rc && o.file.p) { /* rank 0 reads the file, as the shell does */
        ig_index_info info;
        ig_index_get_info(g.idx, &info);
        char *range = o.range.p ? strndup((const char *)o.range.p, o.range.n) : NULL;
        if (!(label = strndup((const char *)o.file.p, o.file.n)) || (o.range.p && !range))
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
        else
            rc = ig_load_text(label, range, info.normalized, &text, &len, &e);
        free(range);
        o.label = label;
    } else if (!rc && o.text.p) {
        rc = ig_query_normalize(g.idx, o.text.p, o.text.n, &text, &len, &e);
    } else if (!rc) {
        rc = ig_error_set(&e, IG_EUSAGE, "usage: eval [MODEL OPTIONS] FILE [--range A:B] | eval --text \"TEXT\"");
    }
    if (!rc && len < 2)
        rc = ig_error_set(&e, IG_EUSAGE, "nothing to score: the text needs at least 2 bytes");
    int64_t L = r.model.max_context;
    if (!rc && (!(mc.c = calloc(len - 1, sizeof *mc.c)) || !(pts = calloc(len - 1, sizeof *pts))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc) {
        mc.ctx = text;
        mc.clen = len;
        for (size_t i = 1; i < len; i++)
            mc.c[mc.n++] = (batch_ctx){NULL, 0, 0, NULL, L >= 0 && i > (size_t)L ? i - (size_t)L : 0, i};
        rc = batch_round(&mc, -1, 0, &e);
    }
    if (!rc) {
        uint8_t *rep[g.size];
        size_t nrep[g.size];
        memset(rep, 0, sizeof rep);
        wire w = {0};
        wire_u32(&w, OP_EVALPTS);
        wire_bytes(&w, text, len);
        wire_u64(&w, (uint64_t)L);
        for (size_t i = 0; i < mc.n; i++) {
            wire_u64(&w, mc.c[i].longest);
            pts[i].ell = mc.c[i].longest;
        }
        rc = ask_all(&w, rep, nrep, &e);
        for (int k = 0; !rc && k < g.size; k++) {
            wire_rd lr = answer_of(rep, nrep, k);
            for (size_t i = 0; !lr.bad && i < mc.n; i++) {
                ig_eval_point one = {pts[i].ell, 0, 0, 0, 0};
                one.count = wire_get_u64(&lr);
                one.next = wire_get_u64(&lr);
                uint32_t d = wire_get_u32(&lr);
                one.distinct = (int)(d & 0xff);
                one.only = (uint8_t)(d >> 8);
                if (one.distinct > 2)
                    lr.bad = 1;
                ig_eval_point_add(&pts[i], &one);
            }
            if (lr.bad)
                rc = garbled(&e, k);
        }
        free_replies(rep);
    }
    if (!rc) {
        r.bytes = len;
        rc = ig_eval_from_points(&r.model, text, len, (int)o.threads, pts, &r.r, &e);
    }
    if (rc) {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    } else {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_eval_json(&ctx, &o, &r), t0);
    }
    ig_eval_op_result_free(&r);
    free(mc.c);
    free(pts);
    free(text);
    free(label);
    o.label = NULL;
    ig_fields_free(ig_eval_fields, &o);
    return rc;
}

/* ---- explain */

/* The parts' answers to do_explain merged into r (its distribution, candidates and focus
 * set): profile rows summed, each candidate merged by ig_explain_cand_add, the level shares
 * from the summed counts (ig_explain_level_probs). The sources' names are malloc'd, kept in
 * *names (*nnames of them) for the caller to free. */
static int explain_merge(ig_explain_result *r, uint64_t positions, uint8_t **rep, size_t *nrep, uint64_t *counts,
                         char ***names, size_t *nnames, ig_error *e)
{
    const ig_dist *d = &r->dist;
    uint64_t L = d->longest, nl = d->nlevels;
    int rc = 0;
    uint64_t base = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        for (uint64_t i = 0; r->flen && i < L; i++) {
            r->profile[i].count += wire_get_u64(&lr);
            r->profile[i].continue_count += wire_get_u64(&lr);
        }
        for (size_t i = 0; !rc && !lr.bad && i < r->ncands; i++) {
            ig_explain_part_cand p = {0};
            if (nl > 1 && !(p.level_counts = calloc(nl, sizeof *p.level_counts))) {
                rc = ig_error_set(e, IG_ENOMEM, "out of memory");
                break;
            }
            for (uint64_t j = 0; nl > 1 && j < nl; j++)
                p.level_counts[j] = wire_get_u64(&lr);
            p.matched = wire_get_u64(&lr);
            p.total = wire_get_u64(&lr);
            uint64_t nocc = wire_get_u64(&lr);
            char **more = !lr.bad && nocc <= lr.n ? realloc(*names, (*nnames + nocc + 1) * sizeof **names) : NULL;
            if (more)
                *names = more;
            if (!lr.bad && nocc <= lr.n && (!more || !(p.occ = calloc(nocc ? nocc : 1, sizeof *p.occ))))
                rc = ig_error_set(e, IG_ENOMEM, "out of memory");
            for (uint64_t q = 0; !rc && more && !lr.bad && q < nocc; q++) {
                get_occ(&lr, 0, &p.occ[q]);
                free(p.occ[q].snippet);
                p.occ[q].snippet = NULL;
                (*names)[(*nnames)++] = (char *)p.occ[q].loc.name;
                p.nocc++;
            }
            if (!rc && !lr.bad)
                rc = ig_explain_cand_add(&r->cands[i], counts + i * (nl > 1 ? nl : 0), (size_t)nl, &p, k == 0, base,
                                         positions, e);
            free(p.level_counts);
            free(p.occ);
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
        base += g.docs[k];
    }
    return rc ? rc : ig_explain_level_probs(r, counts, e);
}

/* explain over the parts, 3 round trips: the distribution as predict gets it from the parts
 * (2: profiles, then levels at every change point), then in one more every count explain
 * reads after it, with each candidate's first sources (do_explain, explain_merge). */
static int cmd_explain(const words *ws, double t0)
{
    const char *cmd = "explain";
    ig_explain_opts o;
    ig_explain_defaults(&o);
    ig_explain_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    uint64_t *counts = NULL;
    char **names = NULL;
    size_t nnames = 0;
    int rc = fill_opts(&ig_op_explain, &o, ws, &e);
    if (!rc && (o.step || o.last || o.ids.p))
        rc = ig_error_set(&e, IG_EUSAGE, "explain %s is not distributed yet: run it with infinigram on one machine",
                          o.ids.p ? "--ids" : o.step ? "--step" : "--last");
    if (!rc)
        rc = ig_model_resolve(&o.model, &r.model, &e);
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p ? o.query.p : (const uint8_t *)"", o.query.n, &r.context, &r.clen, &e);
    if (!rc)
        rc = parts_dist(&r.model, r.context, r.clen, !o.bytes, &r.dist, &r.syms, &r.nsyms, &r.unseen, &r.sparse, &e);
    const ig_symbol *top = !rc && r.nsyms ? &r.syms[0] : NULL;
    r.flen = top ? top->len : 0;
    if (top)
        memcpy(r.focus, top->bytes, (size_t)r.flen);
    uint64_t L = r.dist.longest;
    size_t ncand = r.nsyms < o.top ? r.nsyms : (size_t)o.top, nl = r.dist.nlevels > 1 ? r.dist.nlevels : 0;
    if (!rc && ((r.flen && L && !(r.profile = calloc(L, sizeof *r.profile))) ||
                (ncand && !(r.cands = calloc(ncand, sizeof *r.cands))) ||
                !(counts = calloc(ncand * nl + 1, sizeof *counts))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc) {
        for (uint64_t ell = 1; r.flen && ell <= L; ell++)
            r.profile[r.nprofile++].length = ell;
        r.ncands = ncand;
        for (size_t i = 0; i < ncand; i++)
            r.cands[i].sym = r.syms[i];
        uint8_t *rep[g.size];
        size_t nrep[g.size];
        memset(rep, 0, sizeof rep);
        wire w = {0};
        wire_u32(&w, OP_EXPLAIN);
        wire_bytes(&w, r.context, r.clen);
        wire_bytes(&w, r.focus, (size_t)r.flen);
        wire_u64(&w, L);
        wire_u64(&w, r.dist.nlevels);
        for (size_t j = 0; j < r.dist.nlevels; j++)
            wire_u64(&w, r.dist.levels[j].length);
        wire_u32(&w, (uint32_t)r.dist.end_excluded);
        wire_u64(&w, ncand);
        wire_u64(&w, o.positions);
        for (size_t i = 0; i < ncand; i++)
            wire_bytes(&w, r.syms[i].bytes, r.syms[i].len);
        rc = ask_all(&w, rep, nrep, &e);
        if (!rc)
            rc = explain_merge(&r, o.positions, rep, nrep, counts, &names, &nnames, &e);
        free_replies(rep);
    }
    if (rc) {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    } else {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_explain_json(&ctx, &o, &r), t0);
    }
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    ig_explain_result_free(&r);
    free(counts);
    ig_fields_free(ig_explain_fields, &o);
    return rc;
}

/* ---- search */

/* A query language keeps its quotes (search's: a quoted term may hold spaces; side by side,
 * terms are ANDed): the positional words as the line wrote them, joined by spaces, replace
 * the unquoted ones fill_opts set. */
static int raw_query(const ig_op *op, void *opts, const words *ws, ig_error *e)
{
    size_t cap = strlen(ws->line) + 1, n = 0;
    char *q = malloc(cap);
    if (!q)
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    for (size_t i = 1; i < ws->n; i++) {
        const ig_field *f = !strncmp(ws->w[i], "--", 2) && ws->w[i][2]
                                ? ig_field_find(op->fields, ws->w[i] + 2, strlen(ws->w[i] + 2))
                                : NULL;
        if (f) { /* an option, and its value unless it is a switch */
            i += f->type != IG_FIELD_BOOL;
            continue;
        }
        if (n)
            q[n++] = ' ';
        memcpy(q + n, ws->line + ws->at[i], ws->end[i] - ws->at[i]);
        n += ws->end[i] - ws->at[i];
    }
    int rc = ig_field_set_text(ig_field_find(op->fields, "query", 5), opts, (const uint8_t *)q, n, e);
    free(q);
    return rc;
}

/* One search round over the parts (do_search), rank r's window [win[2r], win[2r] + win[2r+1])
 * of its matching documents: each part's count into per[r], the most clauses a part took into
 * *processed, and when `into` is set the windows' documents appended in rank order (documents
 * numbered across the corpus; names malloc'd). */
static int search_round(const ig_search_opts *o, const uint64_t *totals, size_t nc, const uint64_t *win, uint64_t *per,
                        size_t *processed, ig_search_op_result *into, size_t keep, ig_error *e)
{
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    wire w = {0};
    wire_u32(&w, OP_SEARCH);
    wire_bytes(&w, o->query.p, o->query.n);
    wire_u64(&w, o->within);
    wire_u64(&w, o->budget);
    wire_u64(&w, nc);
    for (size_t c = 0; c < nc; c++)
        wire_u64(&w, totals[c]);
    for (int r = 0; r < 2 * g.size; r++)
        wire_u64(&w, win[r]);
    int rc = ask_all(&w, rep, nrep, e);
    uint64_t base = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd lr = answer_of(rep, nrep, k);
        per[k] = wire_get_u64(&lr);
        uint64_t pr = wire_get_u64(&lr), nd = wire_get_u64(&lr);
        if (pr > *processed)
            *processed = (size_t)pr;
        for (uint64_t i = 0; !rc && !lr.bad && i < nd; i++) {
            uint64_t hits = wire_get_u64(&lr);
            ig_occurrence oc;
            get_occ(&lr, base, &oc);
            free(oc.snippet);
            if (!into || lr.bad || into->ndocs >= keep) {
                free((char *)oc.loc.name);
                continue;
            }
            ig_search_doc *grown = realloc(into->docs, (into->ndocs + 1) * sizeof *grown);
            if (!grown) {
                free((char *)oc.loc.name);
                rc = ig_error_set(e, IG_ENOMEM, "out of memory");
                break;
            }
            into->docs = grown;
            memset(&into->docs[into->ndocs], 0, sizeof *grown);
            into->docs[into->ndocs].hit.doc = oc.loc.doc;
            into->docs[into->ndocs].hit.hits = hits;
            into->docs[into->ndocs++].loc = oc.loc;
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
        base += g.docs[k];
    }
    free_replies(rep);
    return rc;
}

/* search over the parts: each part's occurrences of every clause, summed (1 round trip: the
 * order and the sampling of the clauses are the corpus's); then each part searched by them,
 * the page cut from the parts' documents in corpus order (1 more when every part can list
 * the documents up to the page's end, at most a million; else 2: how many match in each part,
 * then each part's share of the page). Exact answers are one machine's; past the budget the
 * answer is flagged approximate with one machine's scale (ig_search_sampling), the documents
 * then those of each part's own sample. */
static int cmd_search(const words *ws, double t0)
{
    const char *cmd = "search";
    ig_search_opts o;
    ig_search_defaults(&o);
    ig_search_op_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    uint64_t *totals = NULL, *win = calloc(2 * (size_t)g.size, sizeof *win), *per = calloc((size_t)g.size, sizeof *per);
    size_t nc = 0, processed = 0;
    int rc = !win || !per ? ig_error_set(&e, IG_ENOMEM, "out of memory") : fill_opts(&ig_op_search, &o, ws, &e);
    if (!rc && ws)
        rc = raw_query(&ig_op_search, &o, ws, &e);
    if (!rc) {
        uint8_t *rep[g.size];
        size_t nrep[g.size];
        memset(rep, 0, sizeof rep);
        wire w = {0};
        wire_u32(&w, OP_SEARCHTOT);
        wire_bytes(&w, o.query.p, o.query.n);
        rc = ask_all(&w, rep, nrep, &e);
        for (int k = 0; !rc && k < g.size; k++) {
            wire_rd lr = answer_of(rep, nrep, k);
            uint64_t n = wire_get_u64(&lr);
            if (k == 0 && !lr.bad && n <= lr.n && !(totals = calloc(n ? n : 1, sizeof *totals)))
                rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
            if (k == 0)
                nc = (size_t)n;
            for (uint64_t c = 0; !rc && !lr.bad && totals && c < n; c++)
                totals[c] += wire_get_u64(&lr);
            if (!rc && (lr.bad || n != nc || !totals))
                rc = garbled(&e, k);
        }
        free_replies(rep);
    }
    int direct = o.offset <= 1000000 && o.offset + o.limit <= 1000000;
    for (int k = 0; !rc && k < g.size; k++) { /* every part lists up to the page's end, or counts only */
        win[2 * k] = 0;
        win[2 * k + 1] = direct ? o.offset + o.limit : 0;
    }
    ig_search_op_result page = {0};
    if (!rc)
        rc = search_round(&o, totals, nc, win, per, &processed, direct ? &page : NULL, (size_t)(o.offset + o.limit), &e);
    uint64_t before = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        r.documents_total += per[k];
        /* this part's share of [offset, offset + limit) */
        uint64_t a = o.offset > before ? o.offset - before : 0;
        uint64_t room = o.offset + o.limit > before + a ? o.offset + o.limit - before - a : 0;
        win[2 * k] = a < per[k] ? a : per[k];
        win[2 * k + 1] = a < per[k] ? (room < per[k] - a ? room : per[k] - a) : 0;
        before += per[k];
    }
    if (!rc && !direct)
        rc = search_round(&o, totals, nc, win, per, &processed, &page, (size_t)o.limit, &e);
    if (!rc) {
        size_t skip = direct ? (size_t)(o.offset < page.ndocs ? o.offset : page.ndocs) : 0;
        r.docs = page.docs;
        r.ndocs = page.ndocs;
        if (skip) { /* the page's documents after the offset */
            for (size_t i = 0; i < skip; i++)
                free((char *)page.docs[i].loc.name);
            memmove(r.docs, r.docs + skip, (r.ndocs - skip) * sizeof *r.docs);
            r.ndocs -= skip;
        }
        page.docs = NULL;
        ig_search_sampling(totals, nc, o.budget, processed, &r.approximate, &r.scale);
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_search_json(&ctx, &o, &r), t0);
    } else {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
        for (size_t i = 0; i < page.ndocs; i++)
            free((char *)page.docs[i].loc.name);
        free(page.docs);
    }
    for (size_t i = 0; i < r.ndocs; i++)
        free((char *)r.docs[i].loc.name);
    ig_search_op_result_free(&r);
    free(totals);
    free(win);
    free(per);
    ig_fields_free(ig_search_fields, &o);
    return rc;
}

/* predict over the parts: the ∞-gram in 2 round trips (the parts' ℓ*, then their levels at
 * the largest), the n-gram in 1 (its length is known; the parts' ℓ*, which it reports, come
 * with their levels). */
static int cmd_predict(const words *ws, double t0)
{
    const char *cmd = "predict";
    ig_predict_opts o;
    ig_predict_defaults(&o);
    ig_predict_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    if (need_loaded(cmd, t0))
        return -1;
    int rc = fill_opts(&ig_op_predict, &o, ws, &e);
    if (!rc)
        rc = ig_model_resolve(&o.model, &r.model, &e);
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p ? o.query.p : (const uint8_t *)"", o.query.n, &r.context, &r.clen, &e);
    if (rc) {
        ig_fields_free(ig_predict_fields, &o);
        ig_predict_result_free(&r);
        return fail(cmd, e.code, t0, "%s", e.msg);
    }
    if (r.model.kind != IG_MODEL_INFGRAM && r.model.kind != IG_MODEL_NGRAM) {
        rc = predict_mixture(&o, &r, t0);
        ig_fields_free(ig_predict_fields, &o);
        ig_predict_result_free(&r);
        return rc;
    }
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    uint64_t longest = 0;
    if (r.model.kind == IG_MODEL_INFGRAM) {
        wire q = {0};
        wire_u32(&q, OP_LONGEST);
        wire_bytes(&q, o.query.p, o.query.n);
        wire_u64(&q, (uint64_t)r.model.max_context);
        round_trip(&q, 0, g.size, g.timeout, rep, nrep);
        wire_free(&q);
        rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
        for (int k = 0; !rc && k < g.size; k++) {
            wire_rd rd = reply_of(rep, nrep, k);
            uint64_t ell = wire_get_u64(&rd);
            if (ell > longest)
                longest = ell;
        }
        free_replies(rep);
    }
    uint64_t ell = r.model.kind == IG_MODEL_NGRAM ? r.model.n - 1 : longest;
    ig_part_level sum;
    memset(&sum, 0, sizeof sum);
    sum.ell = ell;
    if (!rc) {
        wire q = {0};
        wire_u32(&q, OP_LEVEL);
        wire_bytes(&q, o.query.p, o.query.n);
        wire_u64(&q, (uint64_t)r.model.max_context);
        wire_u64(&q, ell);
        wire_u32(&q, !o.bytes);
        round_trip(&q, 0, g.size, g.timeout, rep, nrep);
        wire_free(&q);
        rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    }
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = reply_of(rep, nrep, k);
        ig_part_level lv;
        memset(&lv, 0, sizeof lv);
        lv.ell = ell;
        uint64_t part_longest = wire_get_u64(&rd);
        if (r.model.kind == IG_MODEL_NGRAM && part_longest > longest)
            longest = part_longest;
        if (get_level(&rd, &lv))
            rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", k, host_of(k));
        if (!rc && ig_part_level_add(&sum, &lv, &e))
            rc = fail(cmd, e.code, t0, "%s", e.msg);
        ig_part_level_free(&lv);
    }
    free_replies(rep);
    if (!rc && ig_predict_from_level(&r.model, r.context, r.clen, longest, &sum, !o.bytes, &r.dist, &r.syms, &r.nsyms,
                                     &r.unseen, &r.sparse, &e))
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    if (!rc) {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_predict_json(&ctx, &o, &r), t0);
    }
    ig_part_level_free(&sum);
    ig_predict_result_free(&r);
    ig_fields_free(ig_predict_fields, &o);
    return rc;
}

/* prob over the parts: every step's context is known before the first is predicted, so
 * the ∞-gram takes 2 round trips whatever the continuation's length (every step's ℓ* from
 * each part; then every step's level), the n-gram 1. */
static int cmd_prob(const words *ws, double t0)
{
    const char *cmd = "prob";
    ig_prob_opts o;
    ig_prob_defaults(&o);
    ig_prob_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    uint8_t *c = NULL, *k = NULL;
    size_t cn = 0, kn = 0;
    if (need_loaded(cmd, t0))
        return -1;
    int rc = fill_opts(&ig_op_prob, &o, ws, &e);
    if (!rc)
        rc = ig_model_resolve(&o.model, &r.model, &e);
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p ? o.query.p : (const uint8_t *)"", o.query.n, &c, &cn, &e);
    if (!rc)
        rc = ig_query_normalize(g.idx, o.continuation.p ? o.continuation.p : (const uint8_t *)"", o.continuation.n,
                                &k, &kn, &e);
    if (!rc && kn == 0)
        rc = ig_error_set(&e, IG_EUSAGE, "{continuation}: empty continuation");
    if (!rc && r.model.kind != IG_MODEL_INFGRAM && r.model.kind != IG_MODEL_NGRAM)
        rc = ig_error_set(&e, IG_EUSAGE, "prob --weighted and --interp are not distributed yet: infinigram-mpi "
                          "computes prob with the infinity-gram and --n");
    uint64_t *longest = rc ? NULL : calloc(kn, sizeof *longest);
    ig_part_level *lv = rc ? NULL : calloc(kn, sizeof *lv);
    if (!rc && (!longest || !lv))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (rc) {
        free(c);
        free(k);
        free(longest);
        free(lv);
        ig_fields_free(ig_prob_fields, &o);
        return fail(cmd, e.code, t0, "%s", e.msg);
    }
    uint8_t *rep[g.size];
    size_t nrep[g.size];
    memset(rep, 0, sizeof rep);
    if (r.model.kind == IG_MODEL_INFGRAM) {
        wire q = {0};
        wire_u32(&q, OP_PLONGEST);
        wire_bytes(&q, o.query.p, o.query.n);
        wire_bytes(&q, o.continuation.p, o.continuation.n);
        wire_u64(&q, (uint64_t)r.model.max_context);
        round_trip(&q, 0, g.size, g.timeout, rep, nrep);
        wire_free(&q);
        rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
        for (int p = 0; !rc && p < g.size; p++) {
            wire_rd rd = reply_of(rep, nrep, p);
            if (wire_get_u64(&rd) != kn)
                rd.bad = 1;
            for (size_t i = 0; !rd.bad && i < kn; i++) {
                uint64_t ell = wire_get_u64(&rd);
                if (ell > longest[i])
                    longest[i] = ell;
            }
            if (rd.bad)
                rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", p, host_of(p));
        }
        free_replies(rep);
    }
    for (size_t i = 0; i < kn; i++)
        lv[i].ell = r.model.kind == IG_MODEL_NGRAM ? r.model.n - 1 : longest[i];
    if (!rc) {
        wire q = {0};
        wire_u32(&q, OP_PLEVELS);
        wire_bytes(&q, o.query.p, o.query.n);
        wire_bytes(&q, o.continuation.p, o.continuation.n);
        wire_u64(&q, (uint64_t)r.model.max_context);
        wire_u64(&q, kn);
        for (size_t i = 0; i < kn; i++)
            wire_u64(&q, lv[i].ell);
        round_trip(&q, 0, g.size, g.timeout, rep, nrep);
        wire_free(&q);
        rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    }
    for (int p = 0; !rc && p < g.size; p++) {
        wire_rd lr = answer_of(rep, nrep, p);
        for (size_t i = 0; !lr.bad && i < kn; i++) {
            lv[i].suffix_count += wire_get_u64(&lr);
            uint32_t nz = wire_get_u32(&lr);
            for (uint32_t j = 0; !lr.bad && j < nz; j++) {
                uint32_t b = wire_get_u32(&lr);
                uint64_t v = wire_get_u64(&lr);
                if (b > 255)
                    lr.bad = 1;
                else
                    lv[i].count[b] += v;
            }
        }
        if (lr.bad)
            rc = fail(cmd, IG_EINTERNAL, t0, "rank %d (host %s): garbled reply", p, host_of(p));
    }
    free_replies(rep);
    if (!rc && ig_prob_from_levels(&r.model, c, cn, k, kn, !o.bytes, longest, lv, &r.factors, &r.nfactors, &r.prob,
                                   &r.log2p, &e))
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    if (!rc) {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_prob_json(&ctx, &o, &r), t0);
    }
    free(c);
    free(k);
    free(longest);
    free(lv);
    ig_prob_result_free(&r);
    ig_fields_free(ig_prob_fields, &o);
    return rc;
}

/* backoff over the parts, 2 round trips: the parts' count profiles (ℓτ and the change points
 * under it come from their sum), then their levels at those lengths, each with its suffix as
 * the whole context. */
static int cmd_backoff(const words *ws, double t0)
{
    const char *cmd = "backoff";
    ig_backoff_opts o;
    ig_backoff_defaults(&o);
    ig_backoff_result r;
    memset(&r, 0, sizeof r);
    ig_error e;
    ig_model m;
    if (need_loaded(cmd, t0))
        return -1;
    ig_part_profile sum = {0};
    uint64_t *lens = NULL;
    size_t nl = 0;
    ig_part_level *lv = NULL;
    int rc = fill_opts(&ig_op_backoff, &o, ws, &e);
    if (!rc)
        rc = ig_backoff_model(&o, &m, &e);
    if (!rc)
        rc = ig_query_normalize(g.idx, o.query.p ? o.query.p : (const uint8_t *)"", o.query.n, &r.context, &r.clen, &e);
    if (!rc)
        rc = parts_profile(o.query.p, o.query.n, m.max_context, &sum, &e);
    if (!rc)
        rc = ig_backoff_lengths(&m, r.context, r.clen, &sum, &lens, &nl, &e);
    if (!rc && !(lv = calloc(nl ? nl : 1, sizeof *lv)))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nl; i++)
        lv[i].ell = lens[i];
    if (!rc)
        rc = parts_levels(o.query.p, o.query.n, m.max_context, !o.bytes, 1, lens, nl, lv, &e);
    if (!rc)
        rc = ig_backoff_from_parts(&m, r.context, r.clen, !o.bytes, &sum, lv, nl, &r.cands, &r.ncands, &r.ltau, &e);
    if (rc) {
        rc = fail(cmd, e.code, t0, "%s", e.msg);
    } else {
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_backoff_json(&ctx, &o, &r), t0);
    }
    for (size_t i = 0; lv && i < nl; i++)
        ig_part_level_free(&lv[i]);
    free(lv);
    free(lens);
    ig_part_profile_free(&sum);
    ig_backoff_result_free(&r);
    ig_fields_free(ig_backoff_fields, &o);
    return rc;
}

/* ---------------------------------------------------------------- serve */

/* The HTTP server's threads take turns on the communicator (MPI_THREAD_SERIALIZED). */
static pthread_mutex_t serve_mu = PTHREAD_MUTEX_INITIALIZER;

/* srv_config.runner: an engine request answered over the parts by the command's own code
 * (its options as the server decoded them), the dataset loaded first when it is not the
 * current one. */
static int serve_runner(void *user, const ig_op *op, const char *dataset, void *opts, char **members, ig_error *err)
{
    (void)user;
    static const struct {
        const ig_op *op;
        int (*run)(const words *ws, double t0);
    } cmds[] = {
        {&ig_op_count, cmd_count},     {&ig_op_doc, cmd_doc},         {&ig_op_predict, cmd_predict},
        {&ig_op_prob, cmd_prob},       {&ig_op_backoff, cmd_backoff}, {&ig_op_generate, cmd_generate},
        {&ig_op_spans, cmd_spans},     {&ig_op_mix, cmd_mix},         {&ig_op_eval, cmd_eval},
        {&ig_op_explain, cmd_explain}, {&ig_op_search, cmd_search},
    };
    pthread_mutex_lock(&serve_mu);
    captured.on = 1;
    captured.failed = 0;
    captured.members = NULL;
    double t0 = now();
    if (!g.loaded || !g.current || strcmp(g.current, dataset))
        cmd_load(dataset, 1, t0);
    size_t i = 0;
    while (i < sizeof cmds / sizeof *cmds && cmds[i].op != op)
        i++;
    if (!captured.failed && i == sizeof cmds / sizeof *cmds)
        fail(op->name, IG_EUSAGE, t0, "%s is not distributed yet: infinigram-mpi serves count, predict, prob, backoff, "
             "generate, doc, spans, mix, eval, explain and search", op->name);
    else if (!captured.failed) {
        preset = opts;
        cmds[i].run(NULL, t0);
        preset = NULL;
    }
    int rc = 0;
    if (captured.failed) {
        *err = captured.err;
        rc = captured.err.code ? captured.err.code : IG_EINTERNAL;
        free(captured.members);
    } else if (!captured.members) {
        rc = ig_error_set(err, IG_EINTERNAL, "%s gave no answer", op->name);
    } else {
        *members = captured.members;
    }
    captured.members = NULL;
    captured.on = 0;
    pthread_mutex_unlock(&serve_mu);
    return rc;
}

/* serve [--host H] [--port N] [--threads N]: rank 0 runs the HTTP server of infinigram serve
 * over its catalog (every dataset built here), engine requests answered over the parts, until
 * SIGINT. A rank that does not answer in time ends the job naming it (mpirun exits non-zero);
 * Open MPI 4.1 ends it as well when a rank dies. */
static int cmd_serve(const words *ws, double t0)
{
    const char *cmd = "serve", *host = opt_value(ws, "--host"), *port = opt_value(ws, "--port"),
               *threads = opt_value(ws, "--threads");
    char *end = NULL;
    long p = port ? strtol(port, &end, 10) : 8080, th = threads ? strtol(threads, NULL, 10) : 4;
    if (port && (*end || p < 0 || p > 65535))
        return fail(cmd, IG_EUSAGE, t0, "--port takes 0 to 65535");
    if (th < 1 || th > 256)
        return fail(cmd, IG_EUSAGE, t0, "--threads takes 1 to 256");
    if (!g.cat)
        return fail(cmd, g.cat_err.code, t0, "rank 0 (host %s): home %s: %s", host_of(0), g.home, g.cat_err.msg);
    static const char *const no_settings[] = {NULL};
    srv_config cfg = {.cat = g.cat, .host = host ? host : "127.0.0.1", .port = (unsigned)p, .threads = (unsigned)th,
                      .timeout = 30, .deadline = 300, .body_limit = 1 << 20, .fake_clock = g.fake_clock,
                      .log = stderr, .settings = no_settings, .runner = serve_runner};
    /* SIGINT stops it: blocked in the server's threads (they inherit the mask), awaited here */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    srv_daemon *sd = srv_start(&cfg, 1);
    g.serving = sd != NULL;
    if (!sd) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return fail(cmd, IG_EIO, t0, "the server could not start on %s:%ld", cfg.host, p);
    }
    fprintf(stderr, "infinigram-mpi: serving on http://%s:%ld/v1 over %d ranks (Ctrl-C stops)\n", cfg.host, p, g.size);
    fflush(stderr);
    int sig;
    sigwait(&set, &sig);
    srv_stop(sd);
    g.serving = 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    emit(cmd, "\"stopped\":true", t0);
    return 0;
}

/* Runs one command line on rank 0. */
static void run_line(const char *line)
{
    double t0 = now();
    words ws;
    char why[128];
    if (split(line, &ws, why, sizeof why)) {
        fail("", IG_EUSAGE, t0, "%s", why);
        words_free(&ws);
        return;
    }
    if (!ws.n || ws.w[0][0] == '#') {
        words_free(&ws);
        return;
    }
    const char *c = ws.w[0];
    g.round_trips = g.messages = 0;
    if (!strcmp(c, ":dataset") && ws.n > 1 && !strcmp(ws.w[1], "add")) {
        cmd_add(&ws, t0);
    } else if (!strcmp(c, "build")) {
        cmd_build(&ws, t0);
    } else if (!strcmp(c, "load") || !strcmp(c, ":load")) {
        if (ws.n != 2)
            fail("load", IG_EUSAGE, t0, "usage: load NAME");
        else
            cmd_load(ws.w[1], 0, t0);
    } else if (!strcmp(c, "count")) {
        cmd_count(&ws, t0);
    } else if (!strcmp(c, "doc")) {
        cmd_doc(&ws, t0);
    } else if (!strcmp(c, "predict")) {
        cmd_predict(&ws, t0);
    } else if (!strcmp(c, "prob")) {
        cmd_prob(&ws, t0);
    } else if (!strcmp(c, "generate")) {
        cmd_generate(&ws, t0);
    } else if (!strcmp(c, "backoff")) {
        cmd_backoff(&ws, t0);
    } else if (!strcmp(c, "spans")) {
        cmd_spans(&ws, t0);
    } else if (!strcmp(c, "mix")) {
        cmd_mix(&ws, t0);
    } else if (!strcmp(c, "eval")) {
        cmd_eval(&ws, t0);
    } else if (!strcmp(c, "explain")) {
        cmd_explain(&ws, t0);
    } else if (!strcmp(c, "search")) {
        cmd_search(&ws, t0);
    } else if (!strcmp(c, "serve")) {
        cmd_serve(&ws, t0);
    } else if (ig_op_find(c)) {
        fail(c, IG_EUSAGE, t0,
             "%s is not distributed yet: infinigram-mpi answers count, predict, prob, backoff, generate, doc, spans, mix, eval, explain and search (run %s with infinigram on one machine)",
             c, c);
    } else {
        fail(c, IG_EUSAGE, t0, "%s is not a command of infinigram-mpi (:dataset add, build, load, count, predict, prob, backoff, generate, doc, spans, mix, eval, explain, search)", c);
    }
    if (g.trace)
        fprintf(stderr, "trace: %s: %u round trips, %u messages\n", c, g.round_trips, g.messages);
    words_free(&ws);
}

static void usage(FILE *f)
{
    fputs("usage: mpirun -np N infinigram-mpi [--home DIR] [-d NAME] [--timeout S] [--build-timeout S]\n"
          "                                 [-c LINE]... [-f FILE|-]\n"
          "One dataset spread over the ranks of an Open MPI job. Each rank has its own home\n"
          "(%r in DIR is replaced by the rank); rank 0 runs the commands and writes JSON lines:\n"
          "  :dataset add NAME SOURCE... [--format text|lines|jsonl] [--field F]\n"
          "  build NAME [--jobs N] [--memory SIZE] [--shard-size SIZE]   each rank builds its part\n"
          "  load NAME                                                   open and check every part\n"
          "  count [--positions K] [--width W] TEXT                      1 round trip\n"
          "  predict [MODEL] [--bytes] [--top K] TEXT                    2 round trips (--n: 1)\n"
          "  prob [--n N] [--alpha A] [--bytes] TEXT CONTINUATION         2 round trips (--n: 1)\n"
          "  backoff [--factor F] [--threshold T] [--bytes] TEXT         2 round trips\n"
          "  generate [MODEL] [--seed S] [--max N] ... TEXT              2 round trips a byte, +2\n"
          "  doc ID|NAME [--lines A:B] [--range A:B]                   1 round trip (NAME: 2)\n"
          "  spans [--min-len N] [--max-count C] [--words] [--positions K] TEXT   2 (--max-count: 3)\n"
          "  mix CONTEXT --llm FILE|JSON [--lambda L|--lambda-sparse A --lambda-dense B|--adaptive]  2\n"
          "  eval [--alpha A] [--max-context L] FILE [--range A:B] | eval --text TEXT      2\n"
          "  explain [MODEL] [--bytes] [--top K] [--positions K] TEXT                      3\n"
          "  search QUERY [--within W] [--limit N] [--offset N] [--budget N]   2 (page past 1e6: 3)\n"          "  serve [--host H] [--port N] [--threads N]   the HTTP server on rank 0, over the parts\n"
          "Answers are those of one machine holding all the sources. Other commands, spans\n"
          "--rank bm25, eval of other models and prob --weighted/--interp are refused with an\n"
          "error naming them.\n"
          "Messages per command (n ranks): add, build, load and count 2(n-1) (build adds one\n"
          "MPI_Iallreduce, the vote); predict, prob, backoff, spans, mix, eval, search 4(n-1) (predict and\n"
          "prob --n: 2(n-1); spans --max-count, explain: 6(n-1)); doc 2 (by name: 2n); generate 4(n-1)\n"
          "a byte, 4(n-1) more for its summary.\n"
          "A rank that does not answer within --timeout seconds (default 8; builds:\n"
          "--build-timeout, default 86400) ends the job, naming it; while serving it is lost\n"
          "instead, and the requests that need it answer 503. INFINIGRAM_MPI_TRACE=1:\n"
          "each command's round trips and messages on stderr.\n",
          f);
}

static char *home_for_rank(const char *opt)
{
    const char *h = opt ? opt : getenv("INFINIGRAM_HOME");
    if (!h || !*h)
        return NULL;
    size_t n = strlen(h) + 32;
    char *out = malloc(n), rank[16];
    if (!out)
        return NULL;
    snprintf(rank, sizeof rank, "%d", g.rank);
    size_t o = 0;
    for (const char *p = h; *p; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(out + o, n - o, "%s", rank);
            p++;
        } else if (o + 1 < n) {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return out;
}

int main(int argc, char **argv)
{
    /* serve's threads take turns on MPI (serve_mu): serialized is enough */
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "infinigram-mpi: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &g.comm);
    /* errors come back as return codes: a peer's failure is ours to report */
    MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g.comm, &g.rank);
    MPI_Comm_size(g.comm, &g.size);
    g.timeout = 8;
    g.build_timeout = 86400;
    g.trace = getenv("INFINIGRAM_MPI_TRACE") && !strcmp(getenv("INFINIGRAM_MPI_TRACE"), "1");
    g.fake_clock = getenv("INFINIGRAM_FAKE_CLOCK") && !strcmp(getenv("INFINIGRAM_FAKE_CLOCK"), "1");

    static const struct option longopts[] = {
        {"home", required_argument, NULL, 'H'},    {"dataset", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 'T'}, {"build-timeout", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *home_opt = NULL, *dataset = NULL, *script = NULL;
    char **cmds = calloc((size_t)argc + 1, sizeof *cmds);
    int ncmds = 0, c, bad = !cmds;
    while (!bad && (c = getopt_long(argc, argv, "d:c:f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'H': home_opt = optarg; break;
        case 'd': dataset = optarg; break;
        case 'c': cmds[ncmds++] = optarg; break;
        case 'f': script = optarg; break;
        case 'T': g.timeout = atof(optarg); break;
        case 'B': g.build_timeout = atof(optarg); break;
        case 'h':
            if (g.rank == 0)
                usage(stdout);
            free(cmds);
            MPI_Finalize();
            return 0;
        default: bad = 1;
        }
    }
    if (bad || optind < argc || !(g.timeout > 0) || !(g.build_timeout > 0)) {
        if (g.rank == 0)
            usage(stderr);
        free(cmds);
        MPI_Finalize();
        return 2;
    }
    if (!(g.hosts = calloc((size_t)g.size, sizeof *g.hosts)) || !(pending = calloc((size_t)g.size, sizeof *pending)) ||
        !(g.lost = calloc((size_t)g.size, 1)) || !(g.lost_why = calloc((size_t)g.size, sizeof *g.lost_why))) {
        fprintf(stderr, "infinigram-mpi: out of memory\n");
        MPI_Abort(g.comm, 1);
    }
    char host[HOST_MAX] = "";
    gethostname(host, sizeof host - 1);
    MPI_Allgather(host, HOST_MAX, MPI_CHAR, g.hosts, HOST_MAX, MPI_CHAR, g.comm);

    /* a rank without a usable home still answers: with the reason, in every reply */
    if (!(g.home = home_for_rank(home_opt)))
        ig_error_set(&g.cat_err, IG_EUSAGE, "no home directory: use --home DIR or set INFINIGRAM_HOME");
    else if (ig_catalog_open(&g.cat, g.home, &g.cat_err))
        g.cat = NULL;
    size_t removed = 0;
    ig_error scratch;
    if (g.cat)
        ig_catalog_cleanup(g.cat, &removed, &scratch); /* what a killed build left */

    if (g.rank == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
    }
    if (g.rank != 0) {
        serve_rank0();
    } else {
        if (dataset)
            cmd_load(dataset, 0, now());
        for (int i = 0; i < ncmds; i++)
            for (char *line = cmds[i], *nl; line; line = nl ? nl + 1 : NULL) {
                if ((nl = strchr(line, '\n')))
                    *nl = '\0';
                run_line(line);
            }
        if (script || !ncmds) {
            FILE *f = !script || !strcmp(script, "-") ? stdin : fopen(script, "r");
            if (!f) {
                fprintf(stderr, "infinigram-mpi: %s: %s\n", script, strerror(errno));
                g.failed = 1;
            } else {
                char *line = NULL;
                size_t cap = 0;
                ssize_t n;
                while ((n = getline(&line, &cap, f)) >= 0) {
                    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                        line[--n] = '\0';
                    run_line(line);
                }
                free(line);
                if (f != stdin)
                    fclose(f);
            }
        }
        for (int r = 1; r < g.size; r++)
            if (g.lost[r]) /* it may never come back to finalize: end the job */
                fatal(r, "was lost while serving");
        wire q = {0};
        wire_u32(&q, OP_QUIT);
        for (int r = 1; r < g.size; r++) {
            MPI_Request rq;
            int rc = MPI_Isend(q.p, (int)q.n, MPI_BYTE, r, TAG_REQ, g.comm, &rq);
            if (rc == MPI_SUCCESS)
                rc = wait_req(&rq, now() + g.timeout);
            if (rc)
                mpi_fail(r, rc, g.timeout);
        }
        wire_free(&q);
    }
    ig_index_close(&g.idx);
    ig_catalog_close(&g.cat);
    free(g.dataset);
    free(g.docs);
    free(g.current);
    free(g.home);
    free(g.hosts);
    free(g.lost);
    free(g.lost_why);
    free((void *)pending);
    free(cmds);
    MPI_Comm_free(&g.comm);
    MPI_Finalize();
    return g.failed ? 1 : 0;
}
