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
 *                  before every byte; then each part's next-byte counts there); --n: 1; a
 *                  mixture (--weighted, --interp): predict's 2 round trips for every byte
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
 *                  (every candidate's count is needed before the filter: one more between);
 *                  --rank bm25: the second also brings each part's BM25 statistics for the
 *                  text's terms (documents, terms, document frequencies: the corpus's are
 *                  their sums) and, from the part holding each candidate source document,
 *                  its length in terms and the text's term frequencies in it, which rank 0
 *                  scores (ig_bm25_part_get, ig_bm25_part_add, ig_bm25_docs_get,
 *                  ig_bm25_score, ig_spans_rank); one more when two candidates may be
 *                  identical (equal hash and size): their bytes, compared to fold them
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
 *   eval           1 round trip whatever the model, for a text of up to a million positions
 *                  (each part's levels of every position: its count profile down to the
 *                  shortest length the model reads, with the counts of the position's byte
 *                  and of <end> at every change point, and the bytes following its ℓ*;
 *                  summed, they are the corpus's: ig_eval_levels_text, ig_eval_levels_add,
 *                  ig_eval_parts_score, which applies the formula ig_eval applies on one
 *                  machine); a longer text 1 per million positions, so that rank 0 holds the
 *                  levels of a million positions at most
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
 * each part's own sample. explain --step/--last read the session's last generation, kept on
 * rank 0 (generate.h). Every other command is
 * refused with an error naming it: it is not distributed yet, and an answer from some parts
 * only would be wrong. Token ids (--ids) are refused as on any byte dataset.
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
 * operation's field table, to the command's own code (serve_runner, serve.h), so the JSON is the
 * one machine's. The server's threads take turns on MPI (a mutex; MPI_THREAD_SERIALIZED).
 * While serving, a rank that does not answer in time is lost rather than the end of the job:
 * its requests answer IG_EBUSY (503) naming it, at once after the first, and what it sends
 * later is dropped; the job ends non-zero when the server stops. /v1/datasets lists a dataset
 * built over the ranks whole (srv_config.whole: its parts' sizes summed from rank 0's record
 * of the build, parts_whole).
 *
 * Messages over 2 GiB: an MPI count is an int, so every message goes as pieces of at most
 * INT_MAX bytes, the last one shorter (send_msg, recv_msg, round_trip); INFINIGRAM_MPI_PIECE on
 * rank 0 (broadcast at the start) makes the pieces small, so that the tests cut every message.
 *
 * Ranks are assumed to be alike (same program, same byte order): messages are the program's
 * own encoding (wire.h) sent as MPI_BYTE.
 *
 * Layout, dependencies pointing down this list: main.c (arguments, the driver: rank 0 reads
 * the commands, the others answer); serve.c; queries.c (the engine commands distributed, for
 * the driver and the server alike) and dispatch.c (a request to its handler, which main
 * hands to cluster.c as g.handle); one module per command family (counts, generate,
 * explain, mix, search, spans, models: rank 0's command and the parts' handlers of its
 * requests; generate uses spans' matching statistics, and generate, explain and mix the
 * models' distributions), build.c, parts.c (add, load, the parts' occurrences on the wire);
 * command.c (command lines, JSON output); cluster.c (ranks, round trips, deadlines,
 * failures); wire.c (the encoding).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <mpi.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "infinigram/infinigram.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"
#include "build.h"
#include "queries.h"
#include "serve.h"
#include "dispatch.h"
#include "build_id.h"

static void cmd_help(const words *ws, double t0);

/* The build, as the ranks compare it at start (an array, sent as it is). */
enum { ID_MAX = 96 };
static const char build_id[ID_MAX] = IG_MPI_BUILD_ID;

/* Runs one command line on rank 0. */
static void run_line(const char *line)
{
    double t0 = now();
    words ws;
    char why[IG_ERRMSG_MAX];
    if (split(line, &ws, why, sizeof why)) {
        /* named by its first word, as the shell names it */
        size_t at = strspn(line, " \t"), n = strcspn(line + at, " \t");
        char *cmd = strndup(line + at, n);
        const query_cmd *named = cmd ? query_find(NULL, cmd) : NULL;
        fail(named ? named->op->name : cmd ? cmd : "", IG_EUSAGE, t0, "%s", why);
        free(cmd);
        words_free(&ws);
        return;
    }
    if (!ws.n || ws.w[0][0] == '#') {
        words_free(&ws);
        return;
    }
    const char *c = ws.w[0];
    g.round_trips = g.messages = 0;
    const query_cmd *qc = query_find(NULL, c);
    if (!strcmp(c, ":help") || !strcmp(c, "help")) {
        cmd_help(&ws, t0);
    } else if (!strcmp(c, ":dataset") && ws.n > 1 && !strcmp(ws.w[1], "add")) {
        cmd_add(&ws, t0);
    } else if (!strcmp(c, "build")) {
        cmd_build(&ws, t0);
    } else if (!strcmp(c, "load") || !strcmp(c, ":load")) {
        static const ig_option none[] = {{NULL, NULL, NULL}};
        ig_line l;
        if (!read_own("load", &ws, none, &l, t0)) {
            if (l.nargs != 1)
                fail("load", IG_EUSAGE, t0, "usage: load NAME");
            else
                cmd_load(l.args[0].text, 0, t0);
        }
        ig_line_free(&l);
    } else if (qc) {
        query_answer(qc, &ws, t0);
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

static void usage(FILE *f);

/* :help [COMMAND]: the command list of --help, or one command's lines of it and, for an
 * engine command, its options from the operation's field table (the one the shell's and the
 * server's help come from, so they cannot disagree). */
static void cmd_help(const words *ws, double t0)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f) {
        fail(":help", IG_ENOMEM, t0, "out of memory");
        return;
    }
    usage(f);
    cJSON *o = fclose(f) == 0 ? cJSON_CreateObject() : NULL;
    int ok = o != NULL;
    if (ok && ws->n < 2) {
        ok = cJSON_AddStringToObject(o, "text", text) != NULL;
    } else if (ok) {
        const char *c = ws->w[1];
        size_t cl = strlen(c);
        char *lines = calloc(n + 1, 1);
        ok = lines != NULL;
        for (char *l = text; ok && *l;) { /* the lines "  COMMAND ..." of the command list */
            char *e = strchr(l, '\n');
            size_t len = e ? (size_t)(e - l) + 1 : strlen(l);
            if (len > cl + 2 && !strncmp(l, "  ", 2) && !strncmp(l + 2, c, cl) && (l[2 + cl] == ' ' || l[2 + cl] == '\n'))
                strncat(lines, l, len);
            l += len;
        }
        if (ok && !*lines) {
            free(lines);
            cJSON_Delete(o);
            free(text);
            fail(":help", IG_EUSAGE, t0, "no help for %s: infinigram-mpi's commands are :dataset add, build, load, "
                 "count, predict, prob, backoff, generate, doc, spans, mix, eval, explain, search and serve", c);
            return;
        }
        ok = ok && cJSON_AddStringToObject(o, "name", c) && cJSON_AddStringToObject(o, "usage", lines);
        free(lines);
        const ig_op *op = ig_op_find(c);
        cJSON *opts = op && ok ? cJSON_AddArrayToObject(o, "options") : NULL;
        ok = ok && (!op || opts);
        for (const ig_field *fd = op ? op->fields : NULL; ok && fd && fd->name; fd++) {
            if (fd->flags & IG_FIELD_HTTP)
                continue;
            char name[64];
            snprintf(name, sizeof name, "%s%s", fd->flags & IG_FIELD_POSITIONAL ? "" : "--", fd->name);
            for (char *q = name; *q; q++)
                if (*q == '_')
                    *q = '-';
            cJSON *x = cJSON_CreateObject();
            ok = x && cJSON_AddItemToArray(opts, x) && cJSON_AddStringToObject(x, "option", name) &&
                 (!fd->arg || cJSON_AddStringToObject(x, "arg", fd->arg)) &&
                 (!fd->def || cJSON_AddStringToObject(x, "default", fd->def)) &&
                 cJSON_AddStringToObject(x, "help", fd->help ? fd->help : "");
            if (x && !ok && !cJSON_IsArray(opts))
                cJSON_Delete(x);
        }
    }
    char *all = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    free(text);
    if (!all) {
        fail(":help", IG_ENOMEM, t0, "out of memory");
        return;
    }
    size_t al = strlen(all); /* the object's members: emit adds the command and the time */
    all[al - 1] = 0;
    emit(":help", all + 1, t0);
    free(all);
}

static void usage(FILE *f)
{
    fputs("usage: mpirun -np N infinigram-mpi [--home DIR] [-d NAME] [--timeout S] [--build-timeout S] [--version]\n"
          "                                 [-c LINE]... [-f FILE|-]\n"
          "One dataset spread over the ranks of an Open MPI job. Each rank has its own home\n"
          "(%r in DIR is replaced by the rank); rank 0 runs the commands and writes JSON lines:\n"
          "  :help [COMMAND]      the commands, or one command's usage and options (from its field table)\n"
          "  :dataset add NAME SOURCE... [--format text|lines|jsonl] [--field F]\n"
          "  build NAME [--jobs N] [--memory SIZE] [--shard-size SIZE]   each rank builds its part\n"
          "  load NAME                                                   open and check every part\n"
          "  count [--positions K] [--width W] TEXT                      1 round trip\n"
          "  predict [MODEL] [--bytes] [--top K] TEXT                    2 round trips (--n: 1)\n"
          "  prob [MODEL] [--bytes] TEXT CONTINUATION    2 round trips (--n: 1; a mixture: 2 a byte)\n"
          "  backoff [--factor F] [--threshold T] [--bytes] TEXT         2 round trips\n"
          "  generate [MODEL] [--seed S] [--max N] ... TEXT              2 round trips a byte, +2\n"
          "  doc ID|NAME [--lines A:B] [--range A:B]                   1 round trip (NAME: 2)\n"
          "  spans [--min-len N] [--max-count C] [--words] [--positions K] [--rank bm25] TEXT   2\n"
          "           (--max-count: 3; --rank bm25: 3 when two candidate sources may be identical)\n"
          "  mix CONTEXT --llm FILE|JSON [--lambda L|--lambda-sparse A --lambda-dense B|--adaptive]  2\n"
          "  eval [MODEL] [--max-context L] FILE [--range A:B] | eval --text TEXT  1 per 1e6 bytes\n"
          "  explain [MODEL] [--bytes] [--top K] [--positions K] TEXT | --step N | --last 3\n"
          "  search QUERY [--within W] [--limit N] [--offset N] [--budget N]   2 (page past 1e6: 3)\n"          "  serve [--host H] [--port N] [--threads N]   the HTTP server on rank 0, over the parts\n"
          "Answers are those of one machine holding all the sources. Other commands are refused\n"
          "with an error naming them.\n"
          "Messages per command (n ranks): add, build, load and count 2(n-1) (build adds one\n"
          "MPI_Iallreduce, the vote), eval 2(n-1) (per million bytes); predict, prob, backoff, spans, mix, search 4(n-1) (predict\n"
          "and prob --n: 2(n-1); spans --max-count, explain, and\n"
          "spans --rank bm25 with candidates that may be identical: 6(n-1));\n"
          "doc 2 (by name: 2n); generate 4(n-1)\n"
          "a byte, 4(n-1) more for its summary.\n"
          "A rank that does not answer within --timeout seconds (default 8; builds:\n"
          "--build-timeout, default 86400) ends the job, naming it; while serving it is lost\n"
          "instead, and the requests that need it answer 503. INFINIGRAM_MPI_TRACE=1:\n"
          "each command's round trips and messages on stderr. A message over 2 GiB goes as\n"
          "pieces of at most INT_MAX bytes (INFINIGRAM_MPI_PIECE=N on rank 0: pieces of N\n"
          "bytes, N >= 16, a test hook; INFINIGRAM_MPI_EVAL_SLICE=N: eval asks for N positions at a time). Under serve, /v1/datasets lists each dataset built\n"
          "over the ranks whole (bytes, documents, shards summed; its parts).\n",
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
    g.handle = handle;
    g.timeout = 8;
    g.build_timeout = 86400;
    g.trace = getenv("INFINIGRAM_MPI_TRACE") && !strcmp(getenv("INFINIGRAM_MPI_TRACE"), "1");
    g.fake_clock = getenv("INFINIGRAM_FAKE_CLOCK") && !strcmp(getenv("INFINIGRAM_FAKE_CLOCK"), "1");

    static const struct option longopts[] = {
        {"home", required_argument, NULL, 'H'},    {"dataset", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 'T'}, {"build-timeout", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},          {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *home_opt = NULL, *dataset = NULL, *script = NULL;
    char **cmds = calloc((size_t)argc + 1, sizeof *cmds);
    int ncmds = 0, c, bad = !cmds;
    while (!bad && (c = getopt_long(argc, argv, "d:c:f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': dataset = optarg; break;
        case 'c': cmds[ncmds++] = optarg; break;
        case 'f': script = optarg; break;
        case 'T':
        case 'B': { /* seconds, finite and above 0: a typo is named, not taken for another wait */
            char *end = NULL;
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !(v > 0) || !isfinite(v) || v > 1e9) {
                if (g.rank == 0)
                    fprintf(stderr, "infinigram-mpi: --%s: \"%s\" is not a number of seconds above 0\n",
                            c == 'T' ? "timeout" : "build-timeout", optarg);
                bad = 1;
            } else {
                *(c == 'T' ? &g.timeout : &g.build_timeout) = v;
            }
            break;
        }
        case 'H':
            if (!*optarg) {
                if (g.rank == 0)
                    fprintf(stderr, "infinigram-mpi: --home: an empty directory name\n");
                bad = 1;
            }
            home_opt = optarg;
            break;
        case 'V': /* the build every rank must run */
            if (g.rank == 0)
                printf("infinigram-mpi %s\n", build_id);
            free(cmds);
            MPI_Finalize();
            return 0;
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
    /* one build on every rank: another's messages may parse and mean something else */
    char *ids = calloc((size_t)g.size, ID_MAX);
    if (!ids) {
        fprintf(stderr, "infinigram-mpi: out of memory\n");
        MPI_Abort(g.comm, 1);
    }
    MPI_Allgather(build_id, ID_MAX, MPI_CHAR, ids, ID_MAX, MPI_CHAR, g.comm);
    for (int r = 1; r < g.size; r++)
        if (strncmp(ids + (size_t)r * ID_MAX, ids, ID_MAX)) {
            if (g.rank == 0)
                fprintf(stderr, "infinigram-mpi: rank %d (host %s) runs build %.*s and rank 0 (host %s) build %.*s: "
                        "run the same build on every rank\n", r, host_of(r), ID_MAX, ids + (size_t)r * ID_MAX,
                        host_of(0), ID_MAX, ids);
            free(ids);
            free(cmds);
            MPI_Finalize();
            return 1;
        }
    free(ids);
    pieces_init();

    /* a rank without a usable home still answers: with the reason, in every reply */
    if (!(g.home = home_for_rank(home_opt)))
        ig_error_set(&g.cat_err, IG_EUSAGE, "no home directory: use --home DIR or set INFINIGRAM_HOME");
    else if (ig_catalog_open(&g.cat, g.home, &g.cat_err))
        g.cat = NULL;
    /* Each rank needs a home of its own: ranks sharing one (no %r in --home, two slots on a
     * host) would build over each other's parts. Homes are told apart by host and inode, so
     * a symbolic link or a second path to the same directory counts as the same home. */
    struct { char host[HOST_MAX]; uint64_t dev, ino; } me = {{0}, 0, 0}, *all = calloc((size_t)g.size, sizeof me);
    struct stat hs;
    memcpy(me.host, host, HOST_MAX);
    if (g.cat && !stat(g.home, &hs)) {
        me.dev = (uint64_t)hs.st_dev;
        me.ino = (uint64_t)hs.st_ino;
    }
    if (!all) {
        fprintf(stderr, "infinigram-mpi: out of memory\n");
        MPI_Abort(g.comm, 1);
    }
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, g.comm);
    for (int r = 0; g.cat && me.ino && r < g.size; r++)
        if (r != g.rank && all[r].ino == me.ino && all[r].dev == me.dev && !strcmp(all[r].host, me.host)) {
            ig_error_set(&g.cat_err, IG_EUSAGE,
                         "rank %d shares its home %s with rank %d on host %s: give each rank its own home (%%r in "
                         "--home is replaced by the rank)", g.rank, g.home, r, me.host);
            ig_catalog_close(&g.cat);
            break;
        }
    free(all);
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
        cluster_answer();
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
            int rc = send_msg(q.p, q.n, r, TAG_REQ, now() + g.timeout);
            if (rc)
                mpi_fail(r, rc, g.timeout);
        }
        wire_free(&q);
    }
    free(g.dataset);
    free(g.docs);
    free(g.current);
    free(g.home);
    free(g.hosts);
    free(g.lost);
    free(g.lost_why);
    free((void *)pending);
    free(cmds);
    ig_index_close(&g.idx);
    ig_catalog_close(&g.cat);
    MPI_Comm_free(&g.comm);
    MPI_Finalize();
    return g.failed ? 1 : 0;
}
