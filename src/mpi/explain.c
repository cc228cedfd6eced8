/* explain: see explain.h. */
#include <stdlib.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "infinigram/explain.h"
#include "explain.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"
#include "models.h"
#include "generate.h"

void do_explain(wire_rd *q, wire *w)
{
    ig_error e = {0};
    size_t cn, fn;
    const uint8_t *ctx = wire_get_bytes(q, &cn), *focus = wire_get_bytes(q, &fn);
    uint64_t L = wire_get_u64(q), nlev = wire_get_u64(q);
    int rc = request_ready(q, L <= cn && fn <= 4 && nlev <= q->n, &e);
    uint64_t *lens = rc ? NULL : calloc(nlev ? nlev : 1, sizeof *lens);
    ig_explain_row *rows = rc ? NULL : calloc(L ? L : 1, sizeof *rows);
    if (!rc && (!lens || !rows))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (uint64_t j = 0; !rc && j < nlev; j++)
        lens[j] = wire_get_u64(q);
    int end_excluded = (int)wire_get_u32(q);
    uint64_t ncand = wire_get_u64(q), positions = wire_get_u64(q), width = wire_get_u64(q), spent = 0;
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
        /* the snippets are this part's to make: the root holds no text */
        if ((rc = ig_explain_part_sources(&octx, &p, &s, width, &spent, &e))) {
            ig_explain_part_cand_free(&p);
            break;
        }
        for (uint64_t j = 0; nlev > 1 && j < nlev; j++)
            wire_u64(&out, p.level_counts[j]);
        wire_u64(&out, p.matched);
        wire_u64(&out, p.total);
        wire_u64(&out, p.nocc);
        for (size_t k = 0; k < p.nocc; k++) { /* each with its snippet, highlighted in three */
            ig_occurrence oc = p.occ[k];
            oc.snippet = p.sources[k].snippet;
            oc.hl0 = p.sources[k].hl[0];
            oc.hl1 = p.sources[k].hl[1];
            put_occ(&out, &oc);
            wire_u64(&out, p.sources[k].hl[2]);
        }
        ig_explain_part_cand_free(&p);
    }
    reply_answer(w, rc, &e, &out);
    free(lens);
    free(rows);
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
            if (!lr.bad && nocc <= lr.n &&
                (!more || !(p.occ = calloc(nocc ? nocc : 1, sizeof *p.occ)) ||
                 !(p.sources = calloc(nocc ? nocc : 1, sizeof *p.sources))))
                rc = ig_error_set(e, IG_ENOMEM, "out of memory");
            for (uint64_t q = 0; !rc && more && !lr.bad && q < nocc; q++) {
                get_occ(&lr, 0, &p.occ[q]);
                ig_explain_source *src = &p.sources[q]; /* the part's snippet, moved */
                src->loc = p.occ[q].loc;
                src->snippet = p.occ[q].snippet;
                src->hl[0] = p.occ[q].hl0;
                src->hl[1] = p.occ[q].hl1;
                src->hl[2] = (size_t)wire_get_u64(&lr);
                p.occ[q].snippet = NULL;
                /* a part's snippet is shown by its highlights: both inside it, in order */
                if (!src->snippet || src->hl[0] > src->hl[1] || src->hl[1] > src->hl[2] ||
                    src->hl[2] > strlen(src->snippet))
                    lr.bad = 1;
                (*names)[(*nnames)++] = (char *)p.occ[q].loc.name;
                p.nocc++;
            }
            if (!rc && !lr.bad)
                rc = ig_explain_cand_add(&r->cands[i], counts + i * (nl > 1 ? nl : 0), (size_t)nl, &p, k == 0, base,
                                         positions, e);
            for (size_t q = 0; p.sources && q < p.nocc; q++)
                free(p.sources[q].snippet);
            free(p.sources);
            free(p.level_counts);
            free(p.occ);
        }
        if (!rc && lr.bad)
            rc = garbled(e, k);
        base += g.docs[k];
    }
    return rc ? rc : ig_explain_level_probs(r, counts, e);
}

/* explain --step N / --last: the context is the last generation's prompt and text up to the
 * N-th character (all of it for --last), explained with the generation's own model and, for
 * --step, the character it drew; the checks and messages are the shell's. */
static int from_last(ig_explain_opts *o, const words *ws, ig_explain_result *r, ig_error *e)
{
    const ig_generation *lg = generation_last();
    if (o->query.p)
        return ig_error_set(e, IG_EUSAGE, "give TEXT, or --step N / --last, not both");
    if (o->step && o->last)
        return ig_error_set(e, IG_EUSAGE, "give --step N or --last, not both");
    if (!lg->dataset)
        return ig_error_set(e, IG_EUSAGE, "no previous generation (run generate first)");
    if (strcmp(lg->dataset, g.dataset ? g.dataset : ""))
        return ig_error_set(e, IG_EUSAGE, "the last generation came from %s; load it first", lg->dataset);
    size_t lo = offsetof(ig_explain_opts, model), hi = lo + sizeof o->model;
    for (size_t i = 1; ws && i < ws->n; i++) { /* the generation's own model: a model option would be ignored */
        const ig_field *f = !strncmp(ws->w[i], "--", 2) ? ig_field_find(ig_explain_fields, ws->w[i] + 2,
                                                                        strlen(ws->w[i] + 2)) : NULL;
        if (f && f->offset >= lo && f->offset < hi && strcmp(f->name, "max_context")) {
            char mname[96];
            return ig_error_set(e, IG_EUSAGE, "%s: --step and --last explain the generation with its own model (%s); "
                                "drop the option", ws->w[i], ig_model_name(&lg->model, mname, sizeof mname));
        }
    }
    int rc = ig_explain_follow(o, lg, e);
    if (rc)
        return rc;
    if (o->chosen) {
        r->has_chosen = 1;
        r->chosen = *o->chosen;
    }
    if (!(r->context = malloc(o->query.n + 1))) /* a generation's bytes are already the index's */
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    memcpy(r->context, o->query.p, o->query.n);
    r->clen = o->query.n;
    r->model = *o->use_model;
    return 0;
}

int cmd_explain(void *opts, void *result, const words *ws, double t0)
{
    ig_explain_opts *o = opts;
    ig_explain_result *r = result;
    ig_error e;
    uint64_t *counts = NULL;
    char **names = NULL;
    size_t nnames = 0;
    int rc;
    if (o->step || o->last)
        rc = from_last(o, ws, r, &e);
    else if (!(rc = ig_model_resolve(&o->model, &r->model, &e)))
        rc = normalize_text(o->query.p, o->query.n, &r->context, &r->clen, &e);
    if (!rc)
        rc = parts_dist(&r->model, r->context, r->clen, !o->bytes, &r->dist, &r->syms, &r->nsyms, &r->unseen,
                        &r->sparse, &e);
    const ig_symbol *top = !rc && r->nsyms ? &r->syms[0] : NULL;
    r->flen = r->has_chosen ? r->chosen.len : top ? top->len : 0;
    if (r->flen)
        memcpy(r->focus, r->has_chosen ? r->chosen.bytes : top->bytes, (size_t)r->flen);
    uint64_t L = r->dist.longest;
    size_t ncand = r->nsyms < o->top ? r->nsyms : (size_t)o->top, nl = r->dist.nlevels > 1 ? r->dist.nlevels : 0;
    if (!rc && ((r->flen && L && !(r->profile = calloc(L, sizeof *r->profile))) ||
                (ncand && !(r->cands = calloc(ncand, sizeof *r->cands))) ||
                !(counts = calloc(ncand * nl + 1, sizeof *counts))))
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    if (!rc) {
        for (uint64_t ell = 1; r->flen && ell <= L; ell++)
            r->profile[r->nprofile++].length = ell;
        r->ncands = ncand;
        for (size_t i = 0; i < ncand; i++)
            r->cands[i].sym = r->syms[i];
        REPLIES(rep, nrep);
        wire w = {0};
        wire_u32(&w, OP_EXPLAIN);
        wire_bytes(&w, r->context, r->clen);
        wire_bytes(&w, r->focus, (size_t)r->flen);
        wire_u64(&w, L);
        wire_u64(&w, r->dist.nlevels);
        for (size_t j = 0; j < r->dist.nlevels; j++)
            wire_u64(&w, r->dist.levels[j].length);
        wire_u32(&w, (uint32_t)r->dist.end_excluded);
        wire_u64(&w, ncand);
        wire_u64(&w, o->positions);
        wire_u64(&w, o->width);
        for (size_t i = 0; i < ncand; i++)
            wire_bytes(&w, r->syms[i].bytes, r->syms[i].len);
        rc = ask_all(&w, rep, nrep, &e);
        if (!rc)
            rc = explain_merge(r, o->positions, rep, nrep, counts, &names, &nnames, &e);
        if (!rc) /* each part bounded its own snippets; what the parts gave together is bounded too */
            rc = ig_explain_sources_check(r, o->width, &e);
        free_replies(rep);
    }
    rc = answer_or_fail(&ig_op_explain, rc, &e, o, r, t0);
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    free(counts);
    return rc;
}
