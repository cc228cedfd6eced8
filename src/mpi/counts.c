/* counts: see counts.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "counts.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"

/* This part's run of operation op over opts, request q checked first (request_ready): the
 * status written to w, the result (zeroed first) then the caller's to write and free. 0, or
 * the error's code. */
static int run_part(const ig_op *op, wire_rd *q, const void *opts, void *result, wire *w)
{
    ig_error e = {0};
    memset(result, 0, op->result_size);
    ig_op_ctx ctx = {g.idx, g.dataset, NULL};
    int rc = request_ready(q, 1, &e);
    if (!rc)
        rc = op->run(&ctx, opts, result, &e);
    reply_status(w, rc, &e);
    return rc;
}

void do_count(wire_rd *q, wire *w)
{
    ig_count_opts o;
    ig_count_defaults(&o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o.query.p = (uint8_t *)p;
    o.query.n = n;
    o.positions = wire_get_u64(q);
    o.width = wire_get_u64(q);
    ig_count_result r;
    if (!run_part(&ig_op_count, q, &o, &r, w)) {
        wire_bytes(w, r.query, r.qlen);
        wire_u64(w, r.count);
        wire_u64(w, r.nocc);
        for (size_t i = 0; i < r.nocc; i++)
            put_occ(w, &r.occ[i]);
        ig_count_result_free(&r);
    }
}

void do_doc(wire_rd *q, wire *w)
{
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
    if (!run_part(&ig_op_doc, q, &o, &r, w)) {
        wire_str(w, r.doc.name);
        wire_u64(w, r.doc.source_line);
        wire_u64(w, r.doc.length);
        wire_u64(w, r.offset);
        wire_u64(w, r.first_line);
        wire_bytes(w, r.text, r.len);
        ig_doc_result_free(&r);
    }
}

void do_docname(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    uint64_t first = UINT64_MAX, count = 0;
    int rc = request_ready(q, 1, &e);
    if (!rc)
        rc = ig_doc_find_name(g.idx, p ? p : (const uint8_t *)"", n, &first, &count, &e);
    reply_status(w, rc, &e);
    wire_u64(w, first);
    wire_u64(w, count);
}

int cmd_count(void *opts, void *result, const words *ws, double t0)
{
    const char *cmd = "count";
    ig_count_opts *o = opts;
    ig_count_result *m = result;
    (void)ws;
    wire q = {0};
    wire_u32(&q, OP_COUNT);
    wire_bytes(&q, o->query.p, o->query.n);
    wire_u64(&q, o->positions);
    wire_u64(&q, o->width);
    REPLIES(rep, nrep);
    int rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
    /* the merge: counts summed, occurrences in rank order (corpus order), documents offset */
    char **names = NULL;
    size_t nnames = 0;
    if (!rc && (!(m->occ = calloc(o->positions ? o->positions : 1, sizeof *m->occ)) ||
                !(names = calloc(o->positions ? o->positions : 1, sizeof *names))))
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
    uint64_t base = 0;
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = reply_of(rep, nrep, r);
        size_t qn;
        const uint8_t *qp = wire_get_bytes(&rd, &qn);
        if (r == 0 && !(m->query = malloc(qn ? qn : 1))) {
            rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
            break;
        }
        if (r == 0) {
            memcpy(m->query, qp ? (const void *)qp : "", qn);
            m->qlen = qn;
        }
        m->count += wire_get_u64(&rd);
        uint64_t nocc = wire_get_u64(&rd);
        for (uint64_t i = 0; i < nocc && !rd.bad; i++) {
            ig_occurrence oc;
            get_occ(&rd, base, &oc);
            if (m->nocc < o->positions && !rd.bad) {
                names[nnames++] = (char *)oc.loc.name;
                m->occ[m->nocc++] = oc;
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
        rc = emit_answer(cmd, ig_count_json(&ctx, o, m), t0);
    }
    for (size_t i = 0; i < nnames; i++) /* the names were ours; query_answer frees the snippets and the query */
        free(names[i]);
    free(names);
    free_replies(rep);
    return rc;
}

int cmd_doc(void *opts, void *result, const words *ws, double t0)
{
    const char *cmd = "doc";
    ig_doc_opts *o = opts;
    ig_error e;
    (void)result; /* the answer's text stays in the owner's reply: a result of our own */
    (void)ws;
    uint64_t id = 0, total = 0;
    int numeric, rc = ig_doc_query_id(&o->query, &numeric, &id, &e);
    for (int r = 0; r < g.size; r++)
        total += g.docs[r];
    if (!rc && !numeric) { /* by name: one more round trip, every part's matches */
        wire q = {0};
        wire_u32(&q, OP_DOCNAME);
        wire_bytes(&q, o->query.p, o->query.n);
        REPLIES(rep, nrep);
        if (ask_all_or_fail(cmd, t0, &q, rep, nrep)) {
            free_replies(rep);
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
        rc = ig_doc_name_pick(o->query.p ? o->query.p : (const uint8_t *)"", o->query.n, first, count, &id, &e);
    }
    char ids[64];
    if (!rc && id >= total) /* past the end: as one index of every part says it */
        rc = ig_error_set(&e, IG_ENOTFOUND, "{query}: no document %" PRIu64 " (%s)", id, ig_doc_ids(total, ids, sizeof ids));
    else if (rc && numeric) { /* past 2^64: doc's message, with the corpus's size */
        char msg[IG_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", e.msg);
        ig_error_set(&e, rc, "%s (%s)", msg, ig_doc_ids(total, ids, sizeof ids));
    }
    if (rc)
        return fail_error(cmd, &e, t0);
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
    wire_u32(&q, o->lines.p != NULL);
    wire_bytes(&q, o->lines.p, o->lines.n);
    wire_u32(&q, o->range.p != NULL);
    wire_bytes(&q, o->range.p, o->range.n);
    REPLIES(rep, nrep);
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
        char *members = rd.bad ? NULL : ig_doc_json(&ctx, o, &r);
        if (members)
            emit(cmd, members, t0);
        else
            rc = fail(cmd, rd.bad ? IG_EINTERNAL : IG_ENOMEM, t0, "rank %d (host %s): %s", owner, host_of(owner),
                      rd.bad ? "garbled reply" : "out of memory writing the answer");
        free(members);
        free(name);
    }
    free_replies(rep);
    return rc;
}
