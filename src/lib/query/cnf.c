/*
 * The CNF query language of search: clauses joined by AND (or side by side), each a
 * term or a parenthesised OR of terms. Terms are decoded into one copy of the query (a
 * term never decodes longer than it is written), and the clause and term arrays grow by
 * doubling within the caps, so a query costs memory in proportion to its length.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "infinigram/query.h"
#include "util/util.h"

typedef struct builder {
    ig_cnf *c;
    size_t cap;                 ///< clauses allocated
    size_t *tcap;               ///< terms allocated per clause
    size_t total;               ///< terms in all
} builder;

void ig_cnf_free(ig_cnf **cnf)
{
    if (!cnf || !*cnf)
        return;
    ig_cnf *c = *cnf;
    for (size_t i = 0; i < c->nclauses; i++) {
        free(c->terms[i]);
        free(c->lens[i]);
    }
    IGI_FREE(c->terms, c->lens, c->nterms, c);
    *cnf = NULL;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int add_term(builder *b, int new_clause, const uint8_t *t, size_t len, ig_error *err)
{
    ig_cnf *c = b->c;
    if (b->total >= IG_CNF_MAX_TERMS)
        return ig_error_set(err, IG_EUSAGE, "more than %d terms (the cap of a query)", IG_CNF_MAX_TERMS);
    if (new_clause || !c->nclauses) {
        if (c->nclauses >= IG_CNF_MAX_CLAUSES)
            return ig_error_set(err, IG_EUSAGE, "more than %d clauses (the cap of a query)", IG_CNF_MAX_CLAUSES);
        size_t cap = b->cap, k = c->nclauses + 1;
        /* four arrays of the same length grow together */
        if (grow((void **)&c->terms, &cap, k, sizeof *c->terms) || (cap = b->cap, grow((void **)&c->lens, &cap, k, sizeof *c->lens)) ||
            (cap = b->cap, grow((void **)&c->nterms, &cap, k, sizeof *c->nterms)) ||
            (cap = b->cap, grow((void **)&b->tcap, &cap, k, sizeof *b->tcap)))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        b->cap = cap;
        c->terms[c->nclauses] = NULL;
        c->lens[c->nclauses] = NULL;
        c->nterms[c->nclauses] = 0;
        b->tcap[c->nclauses] = 0;
        c->nclauses++;
    }
    size_t i = c->nclauses - 1, cap = b->tcap[i], k = c->nterms[i] + 1;
    if (grow((void **)&c->terms[i], &cap, k, sizeof **c->terms) ||
        (cap = b->tcap[i], grow((void **)&c->lens[i], &cap, k, sizeof **c->lens)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    b->tcap[i] = cap;
    c->terms[i][c->nterms[i]] = t;
    c->lens[i][c->nterms[i]++] = len;
    b->total++;
    return 0;
}

#define FAIL_AT(pos, ...)                                                                                              \
    do {                                                                                                               \
        if (err_at)                                                                                                    \
            *err_at = (pos);                                                                                           \
        rc = ig_error_set(err, IG_EUSAGE, __VA_ARGS__);                                                                \
        goto fail;                                                                                                     \
    } while (0)

int ig_cnf_parse(const uint8_t *q, size_t n, ig_cnf **out, size_t *err_at, ig_error *err)
{
    *out = NULL;
    /* the decoded terms live right after the struct, in one allocation with it */
    ig_cnf *c = calloc(1, sizeof *c + n + 1);
    builder b = {c, 0, NULL, 0};
    if (!c)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    uint8_t *arena = (uint8_t *)(c + 1);
    size_t o = 0, i = 0, open_col = 0;
    int depth = 0, expect_term = 1, after_or = 0, new_clause = 1, rc = 0;
    for (;;) {
        while (i < n && isspace(q[i]))
            i++;
        if (i >= n)
            break;
        size_t col = i;
        if (q[i] == '(') {
            if (depth)
                FAIL_AT(col, "nested parentheses: a clause is an OR of terms");
            depth = 1;
            open_col = col;
            new_clause = new_clause || !after_or || !expect_term;
            expect_term = 1;
            i++;
            continue;
        }
        if (q[i] == ')') {
            if (!depth)
                FAIL_AT(col, "unbalanced parenthesis");
            if (expect_term)
                FAIL_AT(col, "a term is missing before ')'");
            depth = 0;
            i++;
            continue;
        }
        size_t w = i;
        while (w < n && !isspace(q[w]) && q[w] != '(' && q[w] != ')' && q[w] != '"')
            w++;
        if (w - i == 3 && !memcmp(q + i, "AND", 3)) {
            if (expect_term || depth)
                FAIL_AT(col, "%s", depth ? "AND inside parentheses: write (A OR B) AND C" : "AND needs a term before it");
            new_clause = 1;
            after_or = 0;
            expect_term = 1;
            i = w;
            continue;
        }
        if (w - i == 2 && !memcmp(q + i, "OR", 2)) {
            if (expect_term)
                FAIL_AT(col, "OR needs a term before it");
            after_or = 1;
            new_clause = 0;
            expect_term = 1;
            i = w;
            continue;
        }
        uint8_t *t = arena + o;
        size_t tl = 0;
        if (q[i] == '"') {
            for (i++;; i++) {
                if (i >= n)
                    FAIL_AT(col, "unterminated quote");
                if (q[i] == '"') {
                    i++;
                    break;
                }
                if (q[i] != '\\') {
                    t[tl++] = q[i];
                    continue;
                }
                uint8_t e = i + 1 < n ? q[i + 1] : 0;
                if (e == 'n' || e == 't' || e == '\\' || e == '"') {
                    t[tl++] = e == 'n' ? '\n' : e == 't' ? '\t' : e;
                    i++;
                } else if (e == 'x' && i + 3 < n && igi_hex_digit(q[i + 2]) >= 0 && igi_hex_digit(q[i + 3]) >= 0) {
                    t[tl++] = (uint8_t)(igi_hex_digit(q[i + 2]) * 16 + igi_hex_digit(q[i + 3]));
                    i += 3;
                } else {
                    FAIL_AT(i, "invalid escape \"\\%c\"", e >= 0x20 && e < 0x7f ? e : '?');
                }
            }
        } else {
            /* a bare and/or/not is an operator mistyped, not the word searched for */
            if ((w - i == 3 && (!strncasecmp((const char *)q + i, "and", 3) || !strncasecmp((const char *)q + i, "not", 3))) ||
                (w - i == 2 && !strncasecmp((const char *)q + i, "or", 2)))
                FAIL_AT(col, "\"%.*s\" is not an operator: the operators are AND and OR, in capitals (there is no NOT); "
                        "quote it to search for the word", (int)(w - i), (const char *)q + i);
            memcpy(t, q + i, w - i);
            tl = w - i;
            i = w;
        }
        if (!tl)
            FAIL_AT(col, "empty term");
        if (!expect_term && !depth)
            new_clause = 1; /* side by side: AND */
        else if (!expect_term)
            FAIL_AT(col, "inside parentheses, terms are joined by OR");
        if ((rc = add_term(&b, new_clause, t, tl, err))) {
            if (err_at)
                *err_at = col;
            goto fail;
        }
        o += tl;
        new_clause = 0;
        after_or = 0;
        expect_term = 0;
    }
    if (depth)
        FAIL_AT(open_col, "unbalanced parenthesis");
    if (expect_term) {
        if (err_at)
            *err_at = n;
        rc = ig_error_set(err, IG_EUSAGE, "%s", c->nclauses ? "the query ends with an operator" : "empty query");
        goto fail;
    }
    free(b.tcap);
    *out = c;
    return 0;
fail:
    free(b.tcap);
    ig_cnf_free(&c);
    return rc;
}
