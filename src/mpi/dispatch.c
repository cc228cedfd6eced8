/* dispatch: see dispatch.h. */

#include "infinigram/infinigram.h"
#include "dispatch.h"
#include "cluster.h"
#include "parts.h"
#include "build.h"
#include "counts.h"
#include "models.h"
#include "mix.h"
#include "spans.h"
#include "explain.h"
#include "search.h"

/* The handler of each opcode, indexed by it (OP_QUIT and any opcode past the table end the
 * loop of the ranks other than 0). */
static void (*const handlers[])(wire_rd *q, wire *w) = {
    [OP_ADD] = do_add,           [OP_BUILD] = do_build,       [OP_LOAD] = do_load,
    [OP_COUNT] = do_count,       [OP_DOC] = do_doc,           [OP_LONGEST] = do_longest,
    [OP_LEVEL] = do_level,       [OP_PLONGEST] = do_plongest, [OP_PLEVELS] = do_plevels,
    [OP_PROFILE] = do_profile,   [OP_LEVELS] = do_levels,     [OP_DOCNAME] = do_docname,
    [OP_MATCHING] = do_matching, [OP_SPANS] = do_spans,       [OP_BATCH] = do_batch,
    [OP_EXPLAIN] = do_explain,   [OP_SEARCHTOT] = do_searchtot,
    [OP_SEARCH] = do_search,     [OP_EVALLV] = do_evallv,     [OP_DOCTEXTS] = do_doctexts,
};

int handle(const uint8_t *msg, size_t n, wire *w)
{
    wire_rd q = {msg, n, 0, 0};
    uint32_t op = wire_get_u32(&q);
    if (q.bad || op >= sizeof handlers / sizeof *handlers || !handlers[op])
        return 1;
    handlers[op](&q, w);
    return 0;
}
