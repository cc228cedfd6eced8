/*
 * doc — a document by number or name, whole or sliced by lines or bytes (the library
 * never cuts a character), printed with line numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_doc_result *r = result;
    (void)opts, (void)given, (void)self;
    const char *member = ig_index_member(sh->idx, r->doc.id);
    int tokens = ig_index_token_width(sh->idx) != 0;
    char rec[24] = ""; /* line or record N of its source, as positions name it */
    if (r->doc.source_line)
        snprintf(rec, sizeof rec, "#%" PRIu64, r->doc.source_line);
    char *name = strdup(r->doc.name ? r->doc.name : ""); /* shown whole, its control bytes hidden */
    if (name)
        sh_controls_hidden(name);
    sh_printf(sh, "%sdoc %" PRIu64 " · %s%s%s%s · %" PRIu64 " %s%s\n", sh_c(sh, SH_DIM), r->doc.id,
              member ? member : "", member ? ":" : "", name ? name : "?", rec, tokens ? r->tokens : r->doc.length,
              tokens ? "tokens" : "bytes", sh_c(sh, SH_RESET));
    free(name);
    const char *meta;
    size_t mlen;
    int mr = tokens ? ig_doc_metadata(sh->idx, r->doc.id, &meta, &mlen) : IG_ENOTFOUND;
    if (!mr) {
        sh_printf(sh, "%smetadata ", sh_c(sh, SH_DIM));
        sh_write_text(sh, (const uint8_t *)meta, mlen);
        sh_printf(sh, "%s\n", sh_c(sh, SH_RESET));
    } else if (mr == IG_ECORRUPT)
        sh_printf(sh, "%smetadata not shown: its record runs past %zu bytes (a damaged metadata file?)%s\n",
                  sh_c(sh, SH_DIM), IG_DOC_METADATA_MAX, sh_c(sh, SH_RESET));
    uint64_t line = r->first_line;
    for (size_t i = 0; i < r->len && !sh_interrupted;) {
        const uint8_t *nl = memchr(r->text + i, '\n', r->len - i);
        size_t e = nl ? (size_t)(nl - r->text) : r->len;
        sh_printf(sh, "%s%6" PRIu64 "%s  ", sh_c(sh, SH_DIM), line++, sh_c(sh, SH_RESET));
        sh_write_text(sh, r->text + i, e - i);
        sh_puts(sh, "\n");
        i = e + 1;
    }
}

const sh_face sh_doc_face = {NULL, NULL, render, NULL};
