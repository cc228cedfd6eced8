/* generate: see generate.h. */
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "generate.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"
#include "models.h"
#include "spans.h"

/* ---- generate: the corpus the generation reads is the parts' (ig_gen_backend) */

typedef struct parts_backend {
    char *name;            ///< the located source's document name (the answer points to it)
} parts_backend;

/* What gen_first looks for: the first part with an occurrence (documents numbered past the
 * parts' before it). */
typedef struct first_occ {
    parts_backend *be;
    ig_location *loc;
    int *found;
    uint64_t base;
} first_occ;

/* Rank k's reply to count (at most one position): its occurrence, unless an earlier rank had one. */
static int take_first(void *u, int k, wire_rd *rd, ig_error *err)
{
    first_occ *f = u;
    if (*f->found)
        return 0;
    size_t qn;
    wire_get_bytes(rd, &qn);
    wire_get_u64(rd);
    if (wire_get_u64(rd) > 0 && !rd->bad) {
        ig_occurrence oc;
        get_occ(rd, f->base, &oc);
        free(oc.snippet);
        free(f->be->name);
        f->be->name = (char *)oc.loc.name;
        *f->loc = oc.loc;
        *f->found = !rd->bad;
    }
    f->base += g.docs[k];
    return rd->bad ? garbled(err, k) : 0;
}

/* The first occurrence in corpus order, 1 round trip: count's first position of each part, the
 * first part that has one. */
static int gen_first(void *user, const uint8_t *p, size_t len, ig_location *loc, int *found, ig_error *err)
{
    wire w = {0};
    wire_u32(&w, OP_COUNT);
    wire_bytes(&w, p, len);
    wire_u64(&w, 1);
    wire_u64(&w, 0);
    *found = 0;
    first_occ f = {user, loc, found, 0};
    return ask_each(&w, 0, take_first, &f, err);
}

static ig_generation last;

const ig_generation *generation_last(void) { return &last; }

int cmd_generate(void *opts, void *result, const words *ws, double t0)
{
    ig_generate_opts *o = opts;
    ig_generate_result *r = result;
    ig_error e;
    (void)ws;
    parts_backend pb = {0};
    ig_gen_backend be = {parts_predict, gen_matching, gen_first, &pb};
    o->backend = &be;
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = ig_op_generate.run(&ctx, o, r, &e);
    rc = answer_or_fail(&ig_op_generate, rc, &e, o, r, t0);
    if (!rc) /* out of memory: explain --step then says there was no generation */
        ig_generation_keep(&last, g.dataset, r, &e);
    free(pb.name);
    return rc;
}
