/*
 * search — documents matching a CNF query of quoted terms, and doc — printing (part of)
 * a document with line numbers.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

typedef struct qterm {
    char *text;
    size_t len;
    size_t col;
} qterm;

typedef struct query {
    qterm **terms;   ///< per clause
    size_t *nterms;
    size_t nclauses;
} query;

static void query_free(query *q)
{
    for (size_t c = 0; c < q->nclauses; c++) {
        for (size_t t = 0; t < q->nterms[c]; t++)
            free(q->terms[c][t].text);
        free(q->terms[c]);
    }
    free(q->terms);
    free(q->nterms);
    memset(q, 0, sizeof *q);
}

static void add_term(query *q, int new_clause, char *text, size_t len, size_t col)
{
    if (new_clause || !q->nclauses) {
        q->terms = realloc(q->terms, (q->nclauses + 1) * sizeof *q->terms);
        q->nterms = realloc(q->nterms, (q->nclauses + 1) * sizeof *q->nterms);
        q->terms[q->nclauses] = NULL;
        q->nterms[q->nclauses] = 0;
        q->nclauses++;
    }
    size_t c = q->nclauses - 1;
    q->terms[c] = realloc(q->terms[c], (q->nterms[c] + 1) * sizeof **q->terms);
    q->terms[c][q->nterms[c]++] = (qterm){text, len, col};
}

/* Parses the query text of the command line: clauses joined by AND (or written side by
 * side), each a term or a parenthesised OR of terms; terms are quoted strings with the
 * usual escapes, or bare words. Options (--name VALUE) are skipped: sh_parse took them. */
static int parse_query(shell *sh, sh_args *a, query *q)
{
    const char *s = a->line;
    size_t i = 0, n = strlen(s);
    while (i < n && !isspace((unsigned char)s[i]))
        i++; /* the command word */
    int depth = 0, expect_term = 1, after_or = 0, new_clause = 1, options_done = 0;
    size_t open_col = 0;
    for (;;) {
        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        size_t col = i;
        if (!options_done && s[i] == '-' && i + 1 < n && s[i + 1] == '-' && (i + 2 == n || isspace((unsigned char)s[i + 2]))) {
            options_done = 1; /* "--" ends the options */
            i += 2;
            continue;
        }
        if (!options_done && s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && !isspace((unsigned char)s[i]))
                i++;
            while (i < n && isspace((unsigned char)s[i]))
                i++;
            if (s[i] == '"') {
                for (i++; i < n && s[i] != '"'; i++)
                    if (s[i] == '\\')
                        i++;
                i++;
            } else {
                while (i < n && !isspace((unsigned char)s[i]))
                    i++;
            }
            continue;
        }
        if (s[i] == '(') {
            if (depth)
                return sh_fail_at(sh, a, col, "usage", "nested parentheses: a clause is an OR of terms");
            if (!expect_term)
                new_clause = 1;
            depth = 1;
            open_col = col;
            new_clause = new_clause || !after_or;
            expect_term = 1;
            i++;
            continue;
        }
        if (s[i] == ')') {
            if (!depth)
                return sh_fail_at(sh, a, col, "usage", "unbalanced parenthesis");
            if (expect_term)
                return sh_fail_at(sh, a, col, "usage", "a term is missing before ')'");
            depth = 0;
            i++;
            continue;
        }
        size_t w = i;
        while (w < n && !isspace((unsigned char)s[w]) && s[w] != '(' && s[w] != ')' && s[w] != '"')
            w++;
        if (w - i == 3 && !strncmp(s + i, "AND", 3)) {
            if (expect_term || depth)
                return sh_fail_at(sh, a, col, "usage", depth ? "AND inside parentheses: write (A OR B) AND C" : "AND needs a term before it");
            new_clause = 1;
            after_or = 0;
            expect_term = 1;
            i = w;
            continue;
        }
        if (w - i == 2 && !strncmp(s + i, "OR", 2)) {
            if (expect_term)
                return sh_fail_at(sh, a, col, "usage", "OR needs a term before it");
            after_or = 1;
            new_clause = 0;
            expect_term = 1;
            i = w;
            continue;
        }
        /* a term */
        char *t = malloc(n + 1);
        size_t tl = 0;
        if (s[i] == '"') {
            i++;
            for (;; i++) {
                if (i >= n) {
                    free(t);
                    return sh_fail_at(sh, a, col, "usage", "unterminated quote");
                }
                if (s[i] == '"') {
                    i++;
                    break;
                }
                if (s[i] == '\\' && i + 1 < n) {
                    char c = s[++i];
                    if (c == 'n') t[tl++] = '\n';
                    else if (c == 't') t[tl++] = '\t';
                    else if (c == '\\' || c == '"') t[tl++] = c;
                    else if (c == 'x' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2])) {
                        char hx[3] = {s[i + 1], s[i + 2], 0};
                        t[tl++] = (char)strtol(hx, NULL, 16);
                        i += 2;
                    } else {
                        free(t);
                        return sh_fail_at(sh, a, i - 1, "usage", "invalid escape \"\\%c\"", c);
                    }
                    continue;
                }
                t[tl++] = s[i];
            }
        } else {
            memcpy(t, s + i, w - i);
            tl = w - i;
            i = w;
        }
        if (!tl) {
            free(t);
            return sh_fail_at(sh, a, col, "usage", "empty term");
        }
        if (!expect_term && !depth)
            new_clause = 1; /* side by side: AND */
        else if (!expect_term)
            return sh_fail_at(sh, a, col, "usage", "inside parentheses, terms are joined by OR");
        add_term(q, new_clause, t, tl, col);
        new_clause = 0;
        after_or = 0;
        expect_term = 0;
    }
    if (depth)
        return sh_fail_at(sh, a, open_col, "usage", "unbalanced parenthesis");
    if (expect_term)
        return sh_fail(sh, a, "usage", q->nclauses ? "the query ends with an operator" : "empty query; usage: search \"TERM\" [AND (\"A\" OR \"B\")]...");
    return SH_OK;
}

int cmd_search(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    long long within = 0, limit = 10, offset = 0, budget = 20000000, width = 30;
    if (sh_opt_int(sh, a, "within", 0, INT64_MAX, &within) || sh_opt_int(sh, a, "limit", 0, 1000000, &limit) ||
        sh_opt_int(sh, a, "offset", 0, INT64_MAX, &offset) || sh_opt_int(sh, a, "budget", 0, INT64_MAX, &budget) ||
        sh_opt_int(sh, a, "width", 0, 10000, &width))
        return SH_ERR;
    query q = {0};
    if (parse_query(sh, a, &q)) {
        query_free(&q);
        return SH_ERR;
    }
    /* normalise terms like any query */
    const uint8_t ***terms = calloc(q.nclauses, sizeof *terms);
    size_t **lens = calloc(q.nclauses, sizeof *lens);
    uint8_t **norm = NULL;
    size_t nnorm = 0;
    ig_error e;
    for (size_t c = 0; c < q.nclauses; c++) {
        terms[c] = calloc(q.nterms[c], sizeof **terms);
        lens[c] = calloc(q.nterms[c], sizeof **lens);
        for (size_t t = 0; t < q.nterms[c]; t++) {
            uint8_t *b;
            size_t bl;
            if (ig_query_normalize(sh->idx, (const uint8_t *)q.terms[c][t].text, q.terms[c][t].len, &b, &bl, &e))
                abort();
            norm = realloc(norm, (nnorm + 1) * sizeof *norm);
            norm[nnorm++] = b;
            terms[c][t] = b;
            lens[c][t] = bl;
        }
    }
    ig_search_result r;
    int rc = SH_TIMED(sh, ig_search(sh->idx, (const uint8_t *const *const *)terms, (const size_t *const *)lens, q.nterms,
                                    q.nclauses, (uint64_t)within, (uint64_t)budget, (uint64_t)offset, (uint64_t)limit,
                                    &r, &e));
    if (rc) {
        rc = sh_fail_ig(sh, a, &e);
        goto out;
    }
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL, *docs = NULL;
    if (o) {
        cJSON_AddStringToObject(o, "dataset", sh->current);
        sh_json_u64(o, "documents_total", r.documents_total);
        cJSON_AddBoolToObject(o, "approximate", r.approximate);
        cJSON_AddNumberToObject(o, "scale", r.scale);
        docs = cJSON_AddArrayToObject(o, "documents");
    } else {
        sh_printf(sh, "%" PRIu64 " document%s match%s", r.documents_total, r.documents_total == 1 ? "" : "s",
                  r.documents_total == 1 ? "es" : "");
        if (r.approximate)
            sh_printf(sh, " (approximate: frequent clauses were sampled; counts scaled by %.3f)", r.scale);
        if (within)
            sh_printf(sh, " with all clauses within %lld bytes", within);
        sh_puts(sh, "\n");
    }
    for (size_t i = 0; i < r.nhits; i++) {
        ig_location loc;
        if (ig_locate(sh->idx, r.hits[i].first, NULL, &loc, &e))
            continue;
        if (o) {
            cJSON *d = cJSON_CreateObject();
            sh_json_u64(d, "doc", loc.doc);
            cJSON_AddStringToObject(d, "name", loc.name);
            sh_json_u64(d, "hits", r.hits[i].hits);
            sh_json_u64(d, "first_line", loc.line);
            if (loc.source_line)
                sh_json_u64(d, "source_line", loc.source_line);
            cJSON_AddItemToArray(docs, d);
        } else {
            char nm[64];
            sh_short_name(loc.name, 28, nm, sizeof nm);
            sh_printf(sh, "  doc %" PRIu64 "  %s  %" PRIu64 " hit%s, first at line %" PRIu64 "\n", loc.doc, nm,
                      r.hits[i].hits, r.hits[i].hits == 1 ? "" : "s", loc.line);
            size_t h0, h1;
            char *snip = sh_snippet_text(sh->idx, r.hits[i].first, r.hits[i].first_len, (size_t)width, &h0, &h1);
            if (snip) {
                sh_puts(sh, "      ");
                sh_print_snippet(sh, snip, h0, h1);
                sh_puts(sh, "\n");
            }
            free(snip);
        }
    }
    if (!o && offset + (long long)r.nhits < (long long)r.documents_total)
        sh_printf(sh, "  (more: --offset %lld)\n", offset + (long long)r.nhits);
    if (o)
        sh_json_emit(sh, o);
    ig_search_result_free(&r);
    rc = SH_OK;
out:
    for (size_t c = 0; c < q.nclauses; c++) {
        free(terms[c]);
        free(lens[c]);
    }
    free(terms);
    free(lens);
    for (size_t i = 0; i < nnorm; i++)
        free(norm[i]);
    free(norm);
    query_free(&q);
    return rc;
}

/* ---------------------------------------------------------------- doc */

int cmd_doc(shell *sh, sh_args *a)
{
    const sh_cmd *c = sh_find_cmd(sh, "doc", NULL);
    ig_doc_opts o;
    ig_doc_result r;
    ig_doc_defaults(&o);
    if (sh_need_index(sh, a) || sh_fill_opts(sh, a, c, &o, NULL) || sh_op_run(sh, a, &ig_op_doc, &o, &r)) {
        ig_fields_free(ig_doc_fields, &o);
        return SH_ERR;
    }
    if (sh->json) {
        sh_op_json(sh, a, &ig_op_doc, &o, &r);
    } else {
        sh_printf(sh, "%sdoc %" PRIu64 " · %s · %" PRIu64 " bytes%s\n", sh_c(sh, SH_DIM), r.doc.id, r.doc.name,
                  r.doc.length, sh_c(sh, SH_RESET));
        uint64_t line = r.first_line;
        for (size_t i = 0; i < r.len && !sh_interrupted;) {
            const uint8_t *nl = memchr(r.text + i, '\n', r.len - i);
            size_t e = nl ? (size_t)(nl - r.text) : r.len;
            sh_printf(sh, "%s%6" PRIu64 "%s  ", sh_c(sh, SH_DIM), line++, sh_c(sh, SH_RESET));
            sh_write(sh, r.text + i, e - i);
            sh_puts(sh, "\n");
            i = e + 1;
        }
    }
    ig_doc_result_free(&r);
    ig_fields_free(ig_doc_fields, &o);
    return SH_OK;
}
