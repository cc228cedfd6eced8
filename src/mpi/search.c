/* search: see search.h. */
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "search.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"

/* A search request's options: the defaults, with the query (pointing into the request). */
static void search_query(wire_rd *q, ig_search_opts *o)
{
    ig_search_defaults(o);
    size_t n;
    const uint8_t *p = wire_get_bytes(q, &n);
    o->query = (ig_bytes){(uint8_t *)p, n};
}

void do_searchtot(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_search_opts o;
    search_query(q, &o);
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

void do_search(wire_rd *q, wire *w)
{
    ig_error e = {0};
    ig_search_opts o;
    search_query(q, &o);
    o.within = wire_get_u64(q);
    o.budget = wire_get_u64(q);
    o.width = wire_get_u64(q);
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
            ig_occurrence oc = {0}; /* borrows the document's snippet for the wire */
            oc.loc = r.docs[i].loc;
            oc.snippet = r.docs[i].snippet;
            oc.hl0 = r.docs[i].hl0;
            oc.hl1 = r.docs[i].hl1;
            wire_u64(&out, r.docs[i].hit.hits);
            put_occ(&out, &oc);
        }
        ig_search_op_result_free(&r);
    }
    reply_answer(w, rc, &e, &out);
    free(totals);
}

/* ---- search */

/* A query language keeps its quotes (search's: a quoted term may hold spaces; side by side,
 * terms are ANDed): the positional words as the line wrote them replace the unquoted ones
 * fill_opts set. Words that follow each other are copied with the line's own bytes between
 * them, since the splitter's words need not fall where the query's do (in ("red " OR "b")
 * it cuts inside the quotes); a space stands for each option taken out. */
static int raw_query(const ig_op *op, void *opts, const words *ws, ig_error *e)
{
    size_t cap = strlen(ws->line) + 1, n = 0, prev = 0;
    char *q = malloc(cap);
    if (!q)
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    int options_done = 0; /* as fill_opts reads them: "--" ends the options, a quoted word is none */
    for (size_t i = 1; i < ws->n; i++) {
        if (!options_done && !ws->quoted[i] && !strcmp(ws->w[i], "--")) {
            options_done = 1;
            continue;
        }
        const char *eq = strchr(ws->w[i], '=');
        size_t nlen = eq ? (size_t)(eq - ws->w[i]) : strlen(ws->w[i]);
        const ig_field *f = !options_done && !ws->quoted[i] && !strncmp(ws->w[i], "--", 2) && nlen > 2
                                ? ig_field_find(op->fields, ws->w[i] + 2, nlen - 2)
                                : NULL;
        if (f) { /* an option, and its value unless it is a switch or given as --name=VALUE */
            i += f->type != IG_FIELD_BOOL && !eq;
            continue;
        }
        size_t from = ws->at[i];
        if (n && prev == i - 1)
            from = ws->end[i - 1];
        else if (n)
            q[n++] = ' ';
        memcpy(q + n, ws->line + from, ws->end[i] - from);
        n += ws->end[i] - from;
        prev = i;
    }
    int rc = ig_field_set_text(ig_field_find(op->fields, "query", 5), opts, (const uint8_t *)q, n, e);
    free(q);
    return rc;
}

/* What search_round gathers from each part's answer. */
typedef struct search_gather {
    uint64_t *per;
    size_t *processed;
    ig_search_op_result *into;
    size_t keep;
    uint64_t base;       ///< documents in the ranks before
} search_gather;

/* Rank k's answer to a search round: its count, the clauses it took, its window's documents. */
static int gather_search(void *u, int k, wire_rd *lr, ig_error *e)
{
    search_gather *s = u;
    ig_search_op_result *into = s->into;
    int rc = 0;
    s->per[k] = wire_get_u64(lr);
    uint64_t pr = wire_get_u64(lr), nd = wire_get_u64(lr);
    if (pr > *s->processed)
        *s->processed = (size_t)pr;
    for (uint64_t i = 0; !rc && !lr->bad && i < nd; i++) {
        uint64_t hits = wire_get_u64(lr);
        ig_occurrence oc;
        get_occ(lr, s->base, &oc);
        if (!into || lr->bad || into->ndocs >= s->keep) {
            free(oc.snippet);
            free((char *)oc.loc.name);
            continue;
        }
        ig_search_doc *grown = realloc(into->docs, (into->ndocs + 1) * sizeof *grown);
        if (!grown) {
            free(oc.snippet);
            free((char *)oc.loc.name);
            rc = ig_error_set(e, IG_ENOMEM, "out of memory");
            break;
        }
        into->docs = grown;
        memset(&into->docs[into->ndocs], 0, sizeof *grown);
        into->docs[into->ndocs].hit.doc = oc.loc.doc;
        into->docs[into->ndocs].hit.hits = hits;
        into->docs[into->ndocs].snippet = oc.snippet; /* the part's, around the document's first hit */
        into->docs[into->ndocs].hl0 = oc.hl0;
        into->docs[into->ndocs].hl1 = oc.hl1;
        into->docs[into->ndocs++].loc = oc.loc;
    }
    if (!rc && lr->bad)
        rc = garbled(e, k);
    s->base += g.docs[k];
    return rc;
}

/* One search round over the parts (do_search), rank r's window [win[2r], win[2r] + win[2r+1])
 * of its matching documents: each part's count into per[r], the most clauses a part took into
 * *processed, and when `into` is set the windows' documents appended in rank order (documents
 * numbered across the corpus; names malloc'd). */
static int search_round(const ig_search_opts *o, const uint64_t *totals, size_t nc, const uint64_t *win, uint64_t *per,
                        size_t *processed, ig_search_op_result *into, size_t keep, ig_error *e)
{
    wire w = {0};
    wire_u32(&w, OP_SEARCH);
    wire_bytes(&w, o->query.p, o->query.n);
    wire_u64(&w, o->within);
    wire_u64(&w, o->budget);
    wire_u64(&w, o->width);
    wire_u64(&w, nc);
    for (size_t c = 0; c < nc; c++)
        wire_u64(&w, totals[c]);
    for (int r = 0; r < 2 * g.size; r++)
        wire_u64(&w, win[r]);
    search_gather s = {per, processed, into, keep, 0};
    return ask_each(&w, 1, gather_search, &s, e);
}

int cmd_search(void *opts, void *result, const words *ws, double t0)
{
    const char *cmd = "search";
    ig_search_opts *o = opts;
    ig_search_op_result *r = result;
    ig_error e;
    uint64_t *totals = NULL, *win = calloc(2 * (size_t)g.size, sizeof *win), *per = calloc((size_t)g.size, sizeof *per);
    size_t nc = 0, processed = 0;
    int rc = !win || !per ? ig_error_set(&e, IG_ENOMEM, "out of memory") : 0;
    if (!rc && ws)
        rc = raw_query(&ig_op_search, o, ws, &e);
    if (!rc) {
        REPLIES(rep, nrep);
        wire w = {0};
        wire_u32(&w, OP_SEARCHTOT);
        wire_bytes(&w, o->query.p, o->query.n);
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
    int direct = o->offset <= 1000000 && o->offset + o->limit <= 1000000;
    for (int k = 0; !rc && k < g.size; k++) { /* every part lists up to the page's end, or counts only */
        win[2 * k] = 0;
        win[2 * k + 1] = direct ? o->offset + o->limit : 0;
    }
    ig_search_op_result page = {0};
    if (!rc)
        rc = search_round(o, totals, nc, win, per, &processed, direct ? &page : NULL, (size_t)(o->offset + o->limit),
                          &e);
    uint64_t before = 0;
    for (int k = 0; !rc && k < g.size; k++) {
        r->documents_total += per[k];
        /* this part's share of [offset, offset + limit) */
        uint64_t a = o->offset > before ? o->offset - before : 0;
        uint64_t room = o->offset + o->limit > before + a ? o->offset + o->limit - before - a : 0;
        win[2 * k] = a < per[k] ? a : per[k];
        win[2 * k + 1] = a < per[k] ? (room < per[k] - a ? room : per[k] - a) : 0;
        before += per[k];
    }
    if (!rc && !direct)
        rc = search_round(o, totals, nc, win, per, &processed, &page, (size_t)o->limit, &e);
    if (!rc) {
        size_t skip = direct ? (size_t)(o->offset < page.ndocs ? o->offset : page.ndocs) : 0;
        r->docs = page.docs;
        r->ndocs = page.ndocs;
        if (skip) { /* the page's documents after the offset */
            for (size_t i = 0; i < skip; i++) {
                free((char *)page.docs[i].loc.name);
                free(page.docs[i].snippet);
            }
            memmove(r->docs, r->docs + skip, (r->ndocs - skip) * sizeof *r->docs);
            r->ndocs -= skip;
        }
        page.docs = NULL;
        ig_search_sampling(totals, nc, o->budget, processed, &r->approximate, &r->scale);
        ig_op_ctx ctx = {g.idx, g.dataset, NULL};
        rc = emit_answer(cmd, ig_search_json(&ctx, o, r), t0);
    } else {
        rc = fail_error(cmd, &e, t0);
        for (size_t i = 0; i < page.ndocs; i++) {
            free((char *)page.docs[i].loc.name);
            free(page.docs[i].snippet);
        }
        free(page.docs);
    }
    for (size_t i = 0; i < r->ndocs; i++)
        free((char *)r->docs[i].loc.name);
    free(totals);
    free(win);
    free(per);
    return rc;
}
