/*
 * search — documents matching a CNF query of quoted terms, with the snippet of each
 * document's first match.
 */
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* The query text as the library's parser reads it: quoted words quoted again (their
 * escapes were decoded by the shell's tokenizer), bare words as typed. cols[i] maps the
 * text's word i back to its column in the line, for carets. malloc'd. */
static char *query_text(const sh_args *a, size_t *len, size_t **starts)
{
    size_t cap = 1;
    for (int i = 0; i < a->nwords; i++)
        cap += 4 * a->words[i].len + 3;
    char *t = malloc(cap);
    *starts = calloc((size_t)a->nwords + 1, sizeof **starts);
    if (!t || !*starts) {
        free(t);
        free(*starts);
        return NULL;
    }
    size_t o = 0;
    for (int i = 0; i < a->nwords; i++) {
        const sh_word *w = &a->words[i];
        if (i)
            t[o++] = ' ';
        (*starts)[i] = o;
        if (!w->quoted) {
            memcpy(t + o, w->text, w->len);
            o += w->len;
            continue;
        }
        t[o++] = '"';
        for (size_t k = 0; k < w->len; k++) {
            unsigned char c = (unsigned char)w->text[k];
            if (c == '"' || c == '\\') {
                t[o++] = '\\';
                t[o++] = (char)c;
            } else if (c < 0x20 || c == 0x7f) {
                o += (size_t)sprintf(t + o, "\\x%02x", c);
            } else {
                t[o++] = (char)c;
            }
        }
        t[o++] = '"';
    }
    t[o] = '\0';
    *len = o;
    return t;
}

int cmd_search(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    if (!a->nwords)
        return sh_fail_usage(sh, a, "empty query");
    ig_search_opts o;
    ig_search_op_result r;
    if (sh_op_begin(sh, a, &ig_op_search, &o, NULL))
        return SH_ERR;
    size_t len = 0, *starts = NULL, at = 0;
    char *text = query_text(a, &len, &starts);
    ig_error e;
    ig_cnf *q = NULL;
    int rc = text ? ig_field_set_text(ig_field_find(ig_search_fields, "query", 5), &o, (const uint8_t *)text, len, &e)
                  : ig_error_set(&e, IG_EINTERNAL, "out of memory");
    if (!rc && (rc = ig_cnf_parse((const uint8_t *)text, len, &q, &at, &e))) {
        /* a syntax error: the caret under the word, or the character, it is at */
        int w = 0;
        while (w + 1 < a->nwords && starts[w + 1] <= at)
            w++;
        size_t col = at >= len ? 0 : a->words[w].quoted ? a->words[w].col : a->words[w].col + (at - starts[w]);
        if (at >= len)
            sh_fail_field(sh, a, &e);
        else
            sh_fail_at(sh, a, col, "usage", "%s", e.msg);
    }
    ig_cnf_free(&q);
    free(text);
    free(starts);
    if (rc == IG_EINTERNAL)
        sh_fail_field(sh, a, &e);
    if (rc || sh_op_run(sh, a, &ig_op_search, &o, &r)) {
        ig_fields_free(ig_search_fields, &o);
        return SH_ERR;
    }
    if (sh->json) {
        sh_op_json(sh, a, &ig_op_search, &o, &r);
    } else {
        sh_printf(sh, "%" PRIu64 " document%s match%s", r.documents_total, r.documents_total == 1 ? "" : "s",
                  r.documents_total == 1 ? "es" : "");
        if (r.approximate)
            sh_printf(sh, " (approximate: frequent clauses were sampled 1 in %.3f; hits are estimates)", r.scale);
        int tokens = ig_index_token_width(sh->idx) != 0;
        const char *at = tokens ? "token" : "line";
        if (o.within)
            sh_printf(sh, " with all clauses within %" PRIu64 " %s", o.within, tokens ? "tokens" : "bytes");
        sh_puts(sh, "\n");
        for (size_t i = 0; i < r.ndocs; i++) {
            const ig_search_doc *d = &r.docs[i];
            char nm[160];
            sh_doc_label(sh, d->loc.doc, d->loc.name, d->loc.source_line, 28, nm, sizeof nm);
            if (r.approximate)
                sh_printf(sh, "  doc %" PRIu64 "  %s  ~%" PRIu64 " hits (%" PRIu64 " sampled), first at %s %" PRIu64 "\n",
                          d->loc.doc, nm, ig_search_hits_estimate(&r, d), d->hit.hits, at,
                          tokens ? d->loc.offset : d->loc.line);
            else
                sh_printf(sh, "  doc %" PRIu64 "  %s  %" PRIu64 " hit%s, first at %s %" PRIu64 "\n", d->loc.doc, nm,
                          d->hit.hits, d->hit.hits == 1 ? "" : "s", at, tokens ? d->loc.offset : d->loc.line);
            if (d->snippet) {
                sh_puts(sh, "      ");
                sh_print_snippet(sh, d->snippet, d->hl0, d->hl1);
                sh_puts(sh, "\n");
            }
        }
        if (r.ndocs && o.offset + r.ndocs < r.documents_total) /* a page of none (--limit 0) has no next page */
            sh_printf(sh, "  (more: --offset %" PRIu64 ")\n", o.offset + (uint64_t)r.ndocs);
    }
    ig_search_op_result_free(&r);
    ig_fields_free(ig_search_fields, &o);
    return SH_OK;
}
