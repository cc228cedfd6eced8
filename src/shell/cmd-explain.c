/*
 * explain — parse (a text, or a step of the last generation with its own model), run the
 * explain operation, render: the context, the n-gram profile with runs of equal counts
 * folded into one row, and each candidate with its level shares and corpus positions.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static void profile_row(shell *sh, uint64_t l0, uint64_t l1, uint64_t cnt, uint64_t cont, uint64_t maxc)
{
    char lab[48];
    if (l0 == l1)
        snprintf(lab, sizeof lab, "%" PRIu64, l0);
    else
        snprintf(lab, sizeof lab, "%" PRIu64 "-%" PRIu64, l0, l1);
    sh_printf(sh, "  %9s %10" PRIu64 " %10" PRIu64 "  ", lab, cnt, cont);
    /* bars on a log scale: counts span many orders of magnitude */
    sh_bar(sh, maxc > 1 ? log((double)cnt + 1) / log((double)maxc + 1) : 1, 24);
    sh_puts(sh, "\n");
}

/* --step N / --last: the context is the last generation's, explained with its model. */
static int from_last(shell *sh, sh_args *a, ig_explain_opts *o, uint64_t given)
{
    if (a->nwords)
        return sh_fail_at(sh, a, a->words[0].col, "usage", "give TEXT, or --step N / --last, not both");
    if (o->step && o->last) {
        const sh_optval *l = sh_opt_get(a, "last");
        return sh_fail_at(sh, a, l ? l->col : 0, "usage", "give --step N or --last, not both");
    }
    if (!sh->last.dataset)
        return sh_fail(sh, a, "usage", "no previous generation (run generate first)");
    if (strcmp(sh->last.dataset, sh->current))
        return sh_fail(sh, a, "usage", "the last generation came from %s; load it first", sh->last.dataset);
    /* the generation's own model is explained: a model option here would be ignored */
    size_t lo = offsetof(ig_explain_opts, model), hi = lo + sizeof o->model;
    for (const ig_field *f = ig_explain_fields; f->name; f++)
        if ((given >> (f - ig_explain_fields) & 1) && f->offset >= lo && f->offset < hi && strcmp(f->name, "max_context")) {
            char name[64];
            snprintf(name, sizeof name, "%s", f->name);
            for (char *p = name; *p; p++)
                *p = *p == '_' ? '-' : *p;
            sh_optval *ov = sh_opt_get(a, name);
            return sh_fail_at(sh, a, ov ? ov->col : 0, "usage",
                              "--%s: --step and --last explain the generation with its own model (%s); drop the option",
                              name, sh_model_name(&sh->last.model, (char[96]){0}, 96));
        }
    ig_error e;
    int rc = ig_explain_follow(o, &sh->last, &e);
    if (rc == IG_EUSAGE) { /* --step past the generation: the caret goes under its value */
        char msg[IG_ERRMSG_MAX + 64];
        ig_field_msg_render(e.msg, "--", '-', "", msg, sizeof msg);
        return sh_fail_at(sh, a, sh_opt_get(a, "step")->value.col, "usage", "%s", msg);
    }
    return rc ? sh_fail_ig(sh, a, &e) : SH_OK;
}

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_explain_opts *o = opts;
    const ig_explain_result *r = result;
    (void)given, (void)self;
    const ig_dist *d = &r->dist;
    char sym[160];
    uint32_t tw = ig_index_token_width(sh->idx);
    sh_print_dist_head(sh, r->context, r->clen, d, &r->model, r->sparse);
    if (r->has_chosen) {
        if (tw)
            sh_token_label(sh, r->chosen.bytes, tw, sym, sizeof sym);
        else
            sh_symbol_text(r->chosen.bytes, r->chosen.len, sym, sizeof sym);
        sh_printf(sh, "step %" PRIu64 " chose %s with probability %.4f\n", o->step, sym, r->chosen.prob);
    }
    if (r->flen) {
        if (tw)
            sh_token_label(sh, r->focus, tw, sym, sizeof sym);
        else
            sh_symbol_text(r->focus, r->flen, sym, sizeof sym);
        sh_printf(sh, "n-gram profile (suffix length ℓ: occurrences, and how many continue with %s)\n", sym);
        sh_printf(sh, "  %9s %10s %10s\n", "ℓ", "count", "→ next");
    }
    /* runs of lengths with the same counts are one row */
    uint64_t maxc = r->nprofile ? r->profile[0].count : 0, run0 = 0, cnt = 0, cont = 0;
    for (size_t i = 0; i < r->nprofile; i++) {
        const ig_explain_row *x = &r->profile[i];
        if (run0 && (x->count != cnt || x->continue_count != cont)) {
            profile_row(sh, run0, x->length - 1, cnt, cont, maxc);
            run0 = 0;
        }
        if (!run0) {
            run0 = x->length;
            cnt = x->count;
            cont = x->continue_count;
        }
    }
    if (run0)
        profile_row(sh, run0, r->profile[r->nprofile - 1].length, cnt, cont, maxc);
    sh_puts(sh, d->defined ? "candidates:\n" : "no estimate for this context\n");
    for (size_t i = 0; i < r->ncands; i++) {
        const ig_explain_cand *c = &r->cands[i];
        if (tw)
            sh_token_label(sh, c->sym.bytes, tw, sym, sizeof sym);
        else
            sh_symbol_text(c->sym.bytes, c->sym.len, sym, sizeof sym);
        sh_printf(sh, "  %-*s count %-8" PRIu64 " prob %.4f", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                  c->sym.count, c->sym.prob);
        if (c->level_prob) {
            sh_puts(sh, "   from:");
            for (size_t j = 0; j < d->nlevels && j < 6; j++)
                if (c->level_prob[j] > 0)
                    sh_printf(sh, " ℓ=%" PRIu64 " %.4f", d->levels[j].length, c->level_prob[j]);
        }
        sh_puts(sh, "\n");
        if (c->matched < d->longest)
            sh_printf(sh, "      (after the last %" PRIu64 " %s of the context)\n", c->matched, tw ? "tokens" : "bytes");
        for (size_t q = 0; q < c->nsources; q++) {
            const ig_explain_source *s = &c->sources[q];
            char nm[160];
            sh_doc_label(sh, s->loc.doc, s->loc.name, s->loc.source_line, 24, nm, sizeof nm);
            if (tw)
                sh_printf(sh, "      %s doc %" PRIu64 " token %" PRIu64 "  ", nm, s->loc.doc, s->loc.offset);
            else
                sh_printf(sh, "      %s:%" PRIu64 ":%" PRIu64 " @%" PRIu64 "  ", nm, s->loc.line, s->loc.column,
                          s->loc.offset);
            if (s->snippet)
                sh_print_snippet2(sh, s->snippet, s->hl);
            sh_puts(sh, "\n");
        }
        if (c->total > c->nsources)
            sh_printf(sh, "      (%" PRIu64 " more)\n", c->total - c->nsources);
    }
}

/* The context: a text, or the last generation's step. */
static int prepare(shell *sh, sh_args *a, void *opts, uint64_t given, void *self)
{
    ig_explain_opts *o = opts;
    (void)self;
    if (o->step || o->last)
        return from_last(sh, a, o, given);
    if (!a->nwords && !o->ids.p)
        return sh_fail_usage(sh, a, NULL);
    return SH_OK;
}

const sh_face sh_explain_face = {prepare, NULL, render, NULL};
