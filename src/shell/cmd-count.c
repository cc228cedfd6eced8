/*
 * count — parse, run the count operation, render: the number, then each listed
 * occurrence as name:line:column @offset and a highlighted snippet.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_count_opts *o = opts;
    const ig_count_result *r = result;
    (void)self;
    sh_printf(sh, "%" PRIu64 "\n", r->count);
    int fit = !(given & sh_field_bit(&ig_op_count, "width"));
    uint32_t tw = ig_index_token_width(sh->idx);
    size_t i = 0;
    for (; i < r->nocc && !sh_interrupted; i++) { /* Ctrl-C stops a long listing on a slow terminal */
        const ig_occurrence *oc = &r->occ[i];
        char prefix[512], name[160];
        sh_doc_label(sh, oc->loc.doc, oc->loc.name, oc->loc.source_line, 28, name, sizeof name);
        if (tw) /* tokens have no lines: document and token offset */
            snprintf(prefix, sizeof prefix, "  %s doc %" PRIu64 " token %" PRIu64 "  ", name, oc->loc.doc,
                     oc->loc.offset);
        else
            snprintf(prefix, sizeof prefix, "  %s:%" PRIu64 ":%" PRIu64 " @%" PRIu64 "  ", name,
                     oc->loc.line, oc->loc.column, oc->loc.offset);
        sh_printf(sh, "%s%s%s", sh_c(sh, SH_CYAN), prefix, sh_c(sh, SH_RESET));
        /* on the default width, fit the line to the terminal */
        size_t w = (size_t)o->width;
        long room = (long)sh->columns - (long)sh_display_width(prefix) - 2 - (long)r->qlen;
        size_t fitted = room > 16 ? (size_t)room / 2 : 8;
        if (fit && fitted < w && !tw) {
            size_t hl[3];
            char *snip = ig_snippet(sh->idx, oc->pos, r->qlen, 0, fitted, hl);
            if (snip)
                sh_print_snippet(sh, snip, hl[0], hl[1]);
            free(snip);
        } else if (oc->snippet) {
            sh_print_snippet(sh, oc->snippet, oc->hl0, oc->hl1);
        }
        sh_puts(sh, "\n");
    }
    if (i < r->nocc)
        sh_printf(sh, "  (interrupted: %zu of %zu listed)\n", i, r->nocc);
    else if (r->nocc < r->count && o->positions)
        sh_printf(sh, "  (%" PRIu64 " more)\n", r->count - r->nocc);
}

const sh_face sh_count_face = {NULL, NULL, render, NULL};
