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
    if (sh_need_index(sh, a) || sh_need_words(sh, a, 1, 1, "doc ID|NAME [--lines A:B | --range A:B]"))
        return SH_ERR;
    ig_index_info info;
    ig_index_get_info(sh->idx, &info);
    ig_doc d;
    ig_error e;
    const char *w = a->words[0].text;
    char *end;
    uint64_t id = strtoull(w, &end, 10);
    if (!*w || *end || w[0] == '-') {
        /* by name: must be unique */
        uint64_t found = UINT64_MAX, nfound = 0;
        for (uint64_t i = 0; i < info.documents; i++) {
            if (ig_doc_get(sh->idx, i, &d, &e))
                break;
            const char *base = strrchr(d.name, '/');
            if (!strcmp(d.name, w) || (base && !strcmp(base + 1, w))) {
                if (!nfound)
                    found = i;
                nfound++;
            }
        }
        if (!nfound)
            return sh_fail_at(sh, a, a->words[0].col, "not_found", "no document named \"%s\"", w);
        if (nfound > 1)
            return sh_fail_at(sh, a, a->words[0].col, "usage", "%" PRIu64 " documents are named \"%s\" (the first is doc %" PRIu64 "): give an id",
                              nfound, w, found);
        id = found;
    }
    if (SH_TIMED(sh, ig_doc_get(sh->idx, id, &d, &e)))
        return sh_fail_at(sh, a, a->words[0].col, "not_found", "%s", e.msg);
    sh_optval *lines = sh_opt_get(a, "lines"), *range = sh_opt_get(a, "range");
    if (lines && range)
        return sh_fail_at(sh, a, range->col, "usage", "give --lines or --range, not both");
    size_t len = (size_t)d.length;
    const uint8_t *t = ig_text(sh->idx, d.shard, d.start, &len);
    uint64_t a0 = 0, a1 = len, first_line = 1;
    if (range || lines) {
        sh_optval *ov = range ? range : lines;
        const char *v = ov->value.text, *colon = strchr(v, ':');
        char *e1 = NULL, *e2 = NULL;
        uint64_t x = 0, y = UINT64_MAX;
        int ok = colon != NULL;
        if (ok && colon > v) {
            x = strtoull(v, &e1, 10);
            ok = e1 == colon && v[0] != '-';
        }
        if (ok && colon[1]) {
            y = strtoull(colon + 1, &e2, 10);
            ok = !*e2 && colon[1] != '-';
        }
        if (!ok || x > y)
            return sh_fail_at(sh, a, ov->value.col, "usage", "--%s: expected A:B (start inclusive, end exclusive)", ov->name);
        if (range) {
            if (x > len)
                return sh_fail_at(sh, a, ov->value.col, "usage", "--range: %" PRIu64 " is past the end of the document (%zu bytes)", x, len);
            a0 = x;
            a1 = y < len ? y : len;
            while (a0 < a1 && (t[a0] & 0xC0) == 0x80)
                a0++; /* never start inside a character */
            for (uint64_t i = 0; i < a0; i++)
                first_line += t[i] == '\n';
        } else {
            if (x == 0)
                return sh_fail_at(sh, a, ov->value.col, "usage", "--lines: lines are numbered from 1");
            uint64_t line = 1, i = 0;
            while (i < len && line < x)
                line += t[i++] == '\n';
            if (line < x)
                return sh_fail_at(sh, a, ov->value.col, "usage", "--lines: the document has only %" PRIu64 " lines", line);
            a0 = i;
            first_line = x;
            while (i < len && line < y)
                line += t[i++] == '\n';
            a1 = i;
        }
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        sh_json_u64(o, "doc", d.id);
        cJSON_AddStringToObject(o, "name", d.name);
        sh_json_u64(o, "bytes", d.length);
        sh_json_u64(o, "first_line", first_line);
        sh_json_u64(o, "offset", a0);
        char *s = malloc((size_t)(a1 - a0) + 1);
        memcpy(s, t + a0, (size_t)(a1 - a0));
        s[a1 - a0] = '\0';
        cJSON_AddStringToObject(o, "text", s);
        free(s);
        sh_json_emit(sh, o);
        return SH_OK;
    }
    sh_printf(sh, "%sdoc %" PRIu64 " · %s · %" PRIu64 " bytes%s\n", sh_c(sh, SH_DIM), d.id, d.name, d.length, sh_c(sh, SH_RESET));
    uint64_t line = first_line;
    for (uint64_t i = a0; i < a1;) {
        const uint8_t *nl = memchr(t + i, '\n', (size_t)(a1 - i));
        uint64_t e2 = nl ? (uint64_t)(nl - t) : a1;
        sh_printf(sh, "%s%6" PRIu64 "%s  ", sh_c(sh, SH_DIM), line++, sh_c(sh, SH_RESET));
        sh_write(sh, t + i, (size_t)(e2 - i));
        sh_puts(sh, "\n");
        i = e2 + 1;
        if (sh_interrupted)
            break;
    }
    return SH_OK;
}
