/*
 * spans — which parts of a text occur verbatim in the corpus, and where (OLMoTrace's
 * maximal matching spans), plus the share of the text that is novel.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int cmd_spans(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    long long min_len = 8, max_count = 0, npos = 3;
    if (sh_opt_int(sh, a, "min-len", 1, INT64_MAX, &min_len) || sh_opt_int(sh, a, "max-count", 1, INT64_MAX, &max_count) ||
        sh_opt_int(sh, a, "positions", 0, 1000, &npos))
        return SH_ERR;
    uint8_t *text = NULL;
    size_t n = 0;
    ig_error e;
    if (sh_opt_has(a, "last")) {
        if (a->nwords)
            return sh_fail_at(sh, a, a->words[0].col, "usage", "give TEXT or --last, not both");
        if (!sh->last.dataset)
            return sh_fail(sh, a, "usage", "no previous generation (run generate first)");
        text = malloc(sh->last.tlen + 1);
        memcpy(text, sh->last.text, sh->last.tlen);
        n = sh->last.tlen;
    } else {
        if (!a->nwords)
            return sh_fail(sh, a, "usage", "usage: spans [--min-len N] [--max-count C] [--words] TEXT | spans --last");
        if (!(text = sh_query_text(sh, a, 0, &n)))
            return SH_ERR;
    }
    ig_span_options so = {.min_len = (uint64_t)min_len, .max_count = (uint64_t)max_count, .words = sh_opt_has(a, "words")};
    ig_span *sp = NULL;
    size_t nsp = 0;
    uint64_t *ms = NULL, searches = 0;
    if (SH_TIMED(sh, ig_spans(sh->idx, text, n, &so, &sp, &nsp, &ms, &searches, &e))) {
        free(text);
        return sh_fail_ig(sh, a, &e);
    }
    double novelty = ig_novelty(ms, n, (uint64_t)min_len);
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL, *arr = NULL;
    if (o) {
        cJSON_AddStringToObject(o, "dataset", sh->current);
        arr = cJSON_AddArrayToObject(o, "spans");
    } else if (sh->color) {
        /* the text with spans highlighted; parts covered by two spans in another colour */
        int *depth = calloc(n + 1, sizeof *depth);
        for (size_t i = 0; i < nsp; i++)
            for (uint64_t j = sp[i].start; j < sp[i].start + sp[i].length; j++)
                depth[j]++;
        int cur = 0;
        for (size_t j = 0; j < n; j++) {
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
    if (!o)
        sh_printf(sh, "%zu span%s of at least %lld bytes%s%s\n", nsp, nsp == 1 ? "" : "s", min_len,
                  max_count ? " (rare: at most " : "", max_count ? "that often)" : "");
    if (!o && max_count) {
        /* restate the filter exactly */
    }
    if (!o && nsp)
        sh_printf(sh, "  %6s %6s %8s  %s\n", "start", "length", "count", "text / sources");
    for (size_t i = 0; i < nsp; i++) {
        const ig_span *s = &sp[i];
        cJSON *sj = NULL, *src = NULL;
        if (o) {
            sj = cJSON_CreateObject();
            sh_json_u64(sj, "start", s->start);
            sh_json_u64(sj, "length", s->length);
            sh_json_u64(sj, "count", s->count);
            cJSON_AddItemToArray(arr, sj);
            if (ig_utf8_valid(text + s->start, s->length, NULL)) {
                char *t = malloc(s->length + 1);
                memcpy(t, text + s->start, s->length);
                t[s->length] = '\0';
                cJSON_AddStringToObject(sj, "text", t);
                free(t);
            }
            src = cJSON_AddArrayToObject(sj, "sources");
        } else {
            char *q = sh_quote((const char *)text + s->start, s->length);
            sh_printf(sh, "  %6" PRIu64 " %6" PRIu64 " %8" PRIu64 "  %s\n", s->start, s->length, s->count, q);
            free(q);
        }
        ig_pos *pos;
        ig_location *locs;
        uint64_t tot = 0;
        size_t k = sh_find_locations(sh, text + s->start, s->length, (size_t)npos, &pos, &locs, &tot);
        for (size_t q = 0; q < k; q++) {
            ig_location loc = locs[q];
            if (o) {
                sh_json_position(src, &loc);
            } else {
                char nm[64];
                sh_short_name(loc.name, 40, nm, sizeof nm);
                sh_printf(sh, "  %24s doc %" PRIu64 " %s line %" PRIu64 "\n", "", loc.doc, nm, loc.line);
            }
        }
        if (!o && tot > k)
            sh_printf(sh, "  %24s (%" PRIu64 " more)\n", "", tot - k);
        free(pos);
        free(locs);
    }
    if (o) {
        cJSON *nv = cJSON_AddObjectToObject(o, "novelty");
        sh_json_u64(nv, "n", (uint64_t)min_len);
        cJSON_AddNumberToObject(nv, "uncovered_fraction", novelty);
        sh_json_u64(o, "searches", searches);
        sh_json_emit(sh, o);
    } else {
        sh_printf(sh, "novelty: %.1f%% of the %zu bytes are not inside a corpus span of %lld bytes or more\n",
                  100 * novelty, n, min_len);
    }
    free(sp);
    free(ms);
    free(text);
    return SH_OK;
}
