/* cluster: see cluster.h. */
#include <limits.h>
#include <signal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "infinigram/infinigram.h"
#include "cluster.h"

/* This rank's state. */
mpi_state g;

double now(void)
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

volatile sig_atomic_t building;

volatile sig_atomic_t *pending;

const char *host_of(int r) { return g.hosts && r >= 0 && r < g.size ? g.hosts[r] : "?"; }

_Noreturn void fatal(int r, const char *what)
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

void on_term(int sig)
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

int wait_req(MPI_Request *rq, double deadline)
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

void pieces_init(void)
{
    unsigned long long v = INT_MAX;
    const char *env = getenv("INFINIGRAM_MPI_PIECE");
    if (g.rank == 0 && env && *env) {
        char *end;
        unsigned long long x = strtoull(env, &end, 10);
        if (*end || x < PIECE_MIN || x > INT_MAX)
            fprintf(stderr, "infinigram-mpi: INFINIGRAM_MPI_PIECE=%s is not a piece size in [%d, %d]: using %d\n", env,
                    PIECE_MIN, INT_MAX, INT_MAX);
        else
            v = x;
    }
    /* every rank reads pieces as rank 0 cuts them */
    MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, g.comm);
    g.piece = (size_t)v;
}

/* The piece size (INT_MAX until pieces_init has run). */
static size_t piece(void)
{
    return g.piece ? g.piece : INT_MAX;
}

/* How many pieces a message of n bytes is sent as: full ones, then one shorter (maybe empty). */
static size_t pieces_of(size_t n)
{
    return n / piece() + 1;
}

/* Piece k of the message p[0, n), in *len bytes. */
static const uint8_t *piece_at(const uint8_t *p, size_t n, size_t k, int *len)
{
    size_t at = k * piece(), left = n - at;
    *len = (int)(left < piece() ? left : piece());
    return p + at;
}

int send_msg(const uint8_t *p, size_t n, int dest, int tag, double deadline)
{
    for (size_t k = 0, np = pieces_of(n); k < np; k++) {
        int len;
        const uint8_t *at = piece_at(p, n, k, &len);
        MPI_Request rq;
        int rc = MPI_Isend(at, len, MPI_BYTE, dest, tag, g.comm, &rq);
        if (rc == MPI_SUCCESS)
            rc = wait_req(&rq, deadline);
        if (rc)
            return rc;
    }
    return 0;
}

int recv_msg(int src, int tag, double deadline, uint8_t **out, size_t *n)
{
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) { /* pieces until a short one */
        unsigned polls = 0;
        MPI_Status st;
        for (;;) {
            int flag = 0, rc = MPI_Iprobe(src, tag, g.comm, &flag, &st);
            if (rc != MPI_SUCCESS) {
                free(buf);
                return rc;
            }
            if (flag)
                break;
            if (deadline > 0 && now() > deadline) {
                free(buf);
                return -1;
            }
            pause_poll(&polls);
        }
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count < 0 || (size_t)count > piece()) {
            free(buf);
            return MPI_ERR_COUNT;
        }
        if (len + (size_t)count + 1 > cap) { /* doubling: a message of many pieces is copied O(1) times a byte */
            size_t c = cap ? cap : 64;
            while (c < len + (size_t)count + 1)
                c *= 2;
            uint8_t *p = realloc(buf, c);
            if (!p) {
                free(buf);
                return MPI_ERR_NO_MEM;
            }
            buf = p;
            cap = c;
        }
        int rc = MPI_Recv(buf + len, count, MPI_BYTE, src, tag, g.comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            free(buf);
            return rc;
        }
        len += (size_t)count;
        if ((size_t)count < piece())
            break;
    }
    *out = buf;
    *n = len;
    return 0;
}

void mpi_fail(int r, int rc, double limit)
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

void reply_status(wire *w, int rc, const ig_error *e)
{
    wire_u32(w, (uint32_t)rc);
    wire_str(w, rc ? e->msg : "");
}

int request_ready(const wire_rd *q, int ok, ig_error *e)
{
    if (q->bad || !ok)
        return ig_error_set(e, IG_EINTERNAL, "garbled request");
    if (!g.idx)
        return ig_error_set(e, IG_EUSAGE, "no dataset loaded (use: load NAME)");
    return 0;
}

void reply_answer(wire *w, int rc, ig_error *e, wire *out)
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

void round_trip(const wire *q, int from, int to, double limit, uint8_t **rep, size_t *nrep)
{
    if (q->oom) {
        fprintf(stderr, "infinigram-mpi: out of memory writing a request\n");
        MPI_Abort(g.comm, 3);
    }
    size_t nreq = 0, np = pieces_of(q->n);
    g.round_trips++;
    g.messages += 2u * (unsigned)(to - (from > 0 ? from : 1));
    MPI_Request *rq = calloc((size_t)g.size * np, sizeof *rq);
    int *rank_of = calloc((size_t)g.size * np, sizeof *rank_of);
    if (!rq || !rank_of)
        fatal(0, "is out of memory");
    for (int r = from; r < to; r++) {
        if (r == 0 || g.lost[r])
            continue;
        for (size_t k = 0; k < np; k++) { /* a request is sent as pieces (send_msg) */
            int len;
            const uint8_t *at = piece_at(q->p, q->n, k, &len);
            int rc = MPI_Isend(at, len, MPI_BYTE, r, TAG_REQ, g.comm, &rq[nreq]);
            if (rc) {
                rank_failed(r, rc, limit);
                break;
            }
            rank_of[nreq++] = r;
        }
    }
    if (from == 0) {
        wire w = {0};
        g.handle(q->p, q->n, &w);
        if (w.oom)
            fatal(0, "is out of memory");
        rep[0] = w.p;
        nrep[0] = w.n;
    }
    double deadline = now() + limit;
    for (size_t i = 0; i < nreq; i++) {
        if (i && rank_of[i] == rank_of[i - 1] && g.lost[rank_of[i]])
            continue; /* lost at an earlier piece */
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

void free_replies(uint8_t **rep)
{
    for (int r = 0; r < g.size; r++) {
        free(rep[r]);
        rep[r] = NULL;
    }
}

int reply_ok(wire_rd *rd, int *rc, char **msg)
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

int garbled(ig_error *e, int k)
{
    return ig_error_set(e, IG_EINTERNAL, "rank %d (host %s): garbled reply", k, host_of(k));
}

wire_rd reply_of(uint8_t **rep, size_t *nrep, int k)
{
    wire_rd rd = {rep[k], nrep[k], 0, 0};
    int st;
    char *msg;
    reply_ok(&rd, &st, &msg);
    free(msg);
    return rd;
}

wire_rd answer_of(uint8_t **rep, size_t *nrep, int k)
{
    wire_rd rd = reply_of(rep, nrep, k);
    size_t bn;
    const uint8_t *bp = wire_get_bytes(&rd, &bn);
    return (wire_rd){bp, bn, 0, rd.bad};
}

int replies_error(uint8_t **rep, size_t *nrep, int from, int to, ig_error *e)
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

int ask_all(wire *w, uint8_t **rep, size_t *nrep, ig_error *e)
{
    round_trip(w, 0, g.size, g.timeout, rep, nrep);
    wire_free(w);
    return replies_error(rep, nrep, 0, g.size, e);
}

int ask_each(wire *w, int answers, int (*each)(void *u, int k, wire_rd *rd, ig_error *e), void *u, ig_error *e)
{
    REPLIES(rep, nrep);
    int rc = ask_all(w, rep, nrep, e);
    for (int k = 0; !rc && k < g.size; k++) {
        wire_rd rd = answers ? answer_of(rep, nrep, k) : reply_of(rep, nrep, k);
        rc = each(u, k, &rd, e);
    }
    free_replies(rep);
    return rc;
}

void cluster_answer(void)
{
    for (;;) {
        uint8_t *msg = NULL;
        size_t n = 0;
        int rc = recv_msg(0, TAG_REQ, 0, &msg, &n);
        if (rc)
            mpi_fail(0, rc, 0);
        wire w = {0};
        int quit = g.handle(msg, n, &w);
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
        if ((rc = send_msg(w.p, w.n, 0, TAG_REP, 0)) != MPI_SUCCESS)
            mpi_fail(0, rc, 0);
        wire_free(&w);
    }
}
