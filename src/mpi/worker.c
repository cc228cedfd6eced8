/* worker: see worker.h. */
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


#include "infinigram/infinigram.h"
#include "infinigram/explain.h"
#include "worker.h"
#include "cluster.h"
#include "parts.h"
#include "build.h"
#include "counts.h"
#include "models.h"
#include "mix.h"
#include "spans.h"
#include "explain.h"
#include "search.h"

int handle(const uint8_t *msg, size_t n, wire *w)
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

void serve_rank0(void)
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
