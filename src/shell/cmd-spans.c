/*
 * spans — which parts of a text occur verbatim in the corpus, and where (OLMoTrace's
 * maximal matching spans), plus the share of the text that is novel.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* The text: the words, or with --last the last generation. */
static int prepare(shell *sh, sh_args *a, void *opts, uint64_t given, void *self)
{
    ig_spans_opts *o = opts;
    (void)given, (void)self;
    int rc = SH_OK;
    if (o->last) {
        /* the last generation is the shell's: it becomes the text to trace */
        if (a->nwords)
            rc = sh_fail_at(sh, a, a->words[0].col, "usage", "give TEXT or --last, not both");
        else if (!sh->last.dataset)
            rc = sh_fail(sh, a, "usage", "no previous generation (run generate first)");
        else if (ig_index_token_width(sh->idx)) { /* the generated tokens, as ids */
            uint32_t tw = ig_index_token_width(sh->idx);
            size_t cap = sh->last.tlen / tw * 12 + 1, len = 0; /* ten digits and a comma an id */
            char *ids = malloc(cap);
            for (size_t i = 0; ids && i + tw <= sh->last.tlen; i += tw)
                len += (size_t)snprintf(ids + len, cap - len, "%s%" PRIu32, i ? "," : "", ig_token_at(sh->last.text + i, tw));
            if (!ids || ig_field_set_text(ig_field_find(ig_spans_fields, "ids", 3), o, (const uint8_t *)ids, len, NULL))
                rc = sh_fail(sh, a, "internal", "out of memory");
            free(ids);
        } else if (ig_field_set_text(ig_field_find(ig_spans_fields, "query", 5), o, sh->last.text, sh->last.tlen, NULL))
            rc = sh_fail(sh, a, "internal", "out of memory");
    } else if (!a->nwords && !o->ids.p) {
        rc = sh_fail_usage(sh, a, NULL);
    }
    return rc;
}

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_spans_opts *o = opts;
    const ig_spans_result *r = result;
    (void)given, (void)self;
    const uint8_t *text = r->text;
    size_t n = r->len;
    uint32_t tw = ig_index_token_width(sh->idx);
    const char *unit = tw ? "tokens" : "bytes";
    if (sh->color && !tw) {
        /* the text with spans highlighted; parts covered by two spans in another colour */
        int *depth = calloc(n + 1, sizeof *depth);
        for (size_t i = 0; depth && i < r->nspans; i++)
            for (uint64_t j = r->spans[i].start; j < r->spans[i].start + r->spans[i].length; j++)
                depth[j]++;
        int cur = 0;
        for (size_t j = 0; depth && j < n; j++) {
            if (depth[j] != cur) {
                sh_puts(sh, SH_RESET);
                sh_puts(sh, depth[j] == 0 ? "" : depth[j] == 1 ? SH_HL : SH_HL2);
                cur = depth[j];
            }
            sh_write(sh, text + j, 1);
        }
        sh_puts(sh, SH_RESET);
        sh_puts(sh, "\n");
        free(depth);
    }
    sh_printf(sh, "%zu span%s of at least %" PRIu64 " %s", r->nspans, r->nspans == 1 ? "" : "s", o->min_len, unit);
    if (o->max_count)
        sh_printf(sh, " (rare: at most %" PRIu64 " occurrence%s)", o->max_count, o->max_count == 1 ? "" : "s");
    sh_puts(sh, "\n");
    if (r->nspans)
        sh_printf(sh, "  %6s %6s %8s  %s\n", "start", "length", "count", "text / sources");
    for (size_t i = 0; i < r->nspans; i++) {
        const ig_span *s = &r->spans[i];
        char *t = NULL, *q = NULL;
        size_t tl = 0;
        if (!tw) /* the span's bytes, or its tokens through the vocabulary */
            q = sh_quote((const char *)text + s->start, s->length);
        else if (!ig_tokens_text(sh->idx, text + s->start * tw, (size_t)s->length * tw, "<end>", &t, &tl, NULL))
            q = sh_quote(t, tl);
        sh_printf(sh, "  %6" PRIu64 " %6" PRIu64 " %8" PRIu64 "  %s\n", s->start, s->length, s->count, q ? q : "");
        free(q);
        free(t);
        for (size_t k = 0; k < r->nsources[i]; k++) {
            const ig_location *loc = &r->sources[i][k].loc;
            char nm[160];
            sh_doc_label(sh, loc->doc, loc->name, loc->source_line, 40, nm, sizeof nm);
            sh_printf(sh, "  %24s doc %" PRIu64 " %s %s %" PRIu64, "", loc->doc, nm, tw ? "token" : "line",
                      tw ? loc->offset : loc->line);
            if (o->rank == IG_RANK_BM25) {
                sh_printf(sh, "  bm25 %.2f", r->sources[i][k].score);
                if (r->sources[i][k].duplicates)
                    sh_printf(sh, " (+%" PRIu64 " identical)", r->sources[i][k].duplicates);
            }
            sh_puts(sh, "\n");
        }
        if (o->rank == IG_RANK_BM25 && r->totals[i] > o->candidates)
            sh_printf(sh, "  %24s (ranked among the first %" PRIu64 " of %" PRIu64 " occurrences)\n", "", o->candidates,
                      r->totals[i]);
        else if (o->rank != IG_RANK_BM25 && r->totals[i] > r->nsources[i])
            sh_printf(sh, "  %24s (%" PRIu64 " more)\n", "", r->totals[i] - r->nsources[i]);
    }
    sh_printf(sh, "novelty: %.1f%% of the %zu %s are not inside a corpus span of %" PRIu64 " %s or more\n",
              100 * r->novelty, tw ? n / tw : n, unit, o->min_len, unit);
}

const sh_face sh_spans_face = {prepare, NULL, render, NULL};
