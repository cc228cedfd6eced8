/*
 * Oracle tests of composed indexes. Random corpora are cut into members (each built with
 * its own shard size and tables), and a random set of their documents is taken away by a
 * subtracted index of copies. The composition must answer as the documents that remain
 * (found by brute force, applying the rule "each copy takes away the first document with
 * the same bytes that is not yet taken, in corpus order"): counts, positions with
 * document, offset, line and column, document ids and texts, the member of each document;
 * and every typed operation's JSON must equal that of one index built from the remaining
 * documents (the "member" keys aside). Bad compositions fail with clear errors.
 * Fixed seeds; IG_ORACLE_SCALE scales the number of cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle.h"

typedef struct doclist {
    ig_buf *d;
    size_t n;
} doclist;

static void gen_doc(test_rng *r, int shape, ig_buf *b)
{
    static const char *pieces[] = {"a", "b", "ab", "é", "ba", "\xe2\x82\xac", " ", "\n", "the ", "cat", "ß", "\r\n"};
    size_t len = shape == 0 ? 1 + rng_below(r, 4) : 1 + rng_below(r, 60);
    for (size_t j = 0; j < len; j++) {
        if (shape == 2)
            put_cp(b, random_cp(r));
        else {
            const char *p = pieces[rng_below(r, shape == 0 ? 3 : 12)];
            ig_buf_append(b, p, strlen(p));
        }
    }
}

/* Occurrences of p over the documents, in corpus order: (doc, offset). */
static size_t brute(const doclist *L, const uint8_t *p, size_t m, uint64_t *doc, uint64_t *off, size_t max)
{
    size_t k = 0;
    if (m > 1 && memchr(p, 0xFF, m - 1))
        return 0;
    for (size_t d = 0; d < L->n; d++) {
        const uint8_t *t = L->d[d].data;
        size_t n = L->d[d].len + 1; /* the end marker is indexed too */
        for (size_t i = 0; i < n && i + m <= n; i++) {
            int eq = 1;
            for (size_t j = 0; j < m && eq; j++)
                eq = (i + j < L->d[d].len ? t[i + j] : 0xFF) == p[j];
            if (eq) {
                if (k < max) {
                    doc[k] = d;
                    off[k] = i;
                }
                k++;
            }
        }
    }
    return k;
}

static ig_source *sources_of(ig_buf *d, size_t n)
{
    ig_source *s = calloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; i < n; i++)
        s[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)d[i].data, .text_len = d[i].len};
    return s;
}

static int g_wide; /* this case's members use 5-byte pointers */

static int build(const char *dir, ig_buf *d, size_t n, test_rng *r, int wide)
{
    ig_source *s = sources_of(d, n);
    ig_index *idx = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += d[i].len + 1;
    uint64_t shard = rng_below(r, 2) ? 1ull << 30 : 1 + rng_below(r, total / 2 + 1);
    int rc = oracle_build(dir, s, n, shard, wide || g_wide, rng_below(r, 2), &idx);
    ig_index_close(&idx);
    free(s);
    return rc;
}

/* Removes every "member" key from operation JSON (a plain index has none). */
static void strip_member(char *s)
{
    char *p;
    while (s && (p = strstr(s, "\"member\":\""))) {
        char *q = p + 10;
        while (*q && *q != '"')
            q += *q == '\\' && q[1] ? 2 : 1;
        if (*q)
            q++;
        if (*q == ',')
            q++;
        memmove(p, q, strlen(q) + 1);
    }
}

/* Runs operation `name` with the given field=value pairs (NULL-terminated) and returns its JSON. */
static char *run_op(const ig_index *idx, const char *name, const char *const *kv, int *rc_out)
{
    const ig_op *op = ig_op_find(name);
    CHECK(op != NULL, "op %s", name);
    if (!op)
        return NULL;
    void *o = calloc(1, op->opts_size), *res = calloc(1, op->result_size);
    op->defaults(o);
    ig_error e;
    int rc = 0;
    for (size_t i = 0; kv[i] && !rc; i += 2) {
        const ig_field *f = ig_field_find(op->fields, kv[i], strlen(kv[i]));
        CHECK(f != NULL, "%s has no field %s", name, kv[i]);
        rc = f ? ig_field_set_text(f, o, (const uint8_t *)kv[i + 1], strlen(kv[i + 1]), &e) : -1;
        CHECK(rc == 0, "%s %s=%s: %s", name, kv[i], kv[i + 1], e.msg);
    }
    ig_op_ctx ctx = {idx, "c", NULL};
    char *js = NULL;
    if (!rc && !(rc = op->run(&ctx, o, res, &e)))
        js = op->json(&ctx, o, res);
    else if (rc)
        js = strdup(e.msg);
    if (!rc)
        op->free_result(res);
    ig_fields_free(op->fields, o);
    free(o);
    free(res);
    *rc_out = rc;
    return js;
}

/* The composition's and the reference's answers to one operation must be the same. */
static void same_op(const ig_index *comp, const ig_index *ref, const char *name, const char *const *kv, int ci)
{
    int rc1 = 0, rc2 = 0;
    char *a = run_op(comp, name, kv, &rc1), *b = run_op(ref, name, kv, &rc2);
    strip_member(a);
    CHECK(rc1 == rc2 && a && b && !strcmp(a, b), "case %d: %s %s=%.40s differs:\n  composed:  %.300s\n  reference: %.300s",
          ci, name, kv[0] ? kv[0] : "", kv[1] ? kv[1] : "", a ? a : "(null)", b ? b : "(null)");
    free(a);
    free(b);
}

static int same_doc(const ig_buf *a, const ig_buf *b) { return a->len == b->len && !memcmp(a->data, b->data, a->len); }

static void one_case(test_rng *r, const char *tmp, int ci)
{
    int shape = ci % 3;
    g_wide = ci % 7 == 6;
    /* the base: documents, some of which will be taken away (and some repeated) */
    size_t nb = 2 + rng_below(r, shape == 0 ? 80 : 25);
    ig_buf *base = calloc(nb, sizeof *base);
    for (size_t i = 0; i < nb; i++) {
        if (i > 0 && rng_below(r, 5) == 0) { /* a repeat of an earlier document */
            const ig_buf *src = &base[rng_below(r, i)];
            ig_buf_append(&base[i], src->data, src->len);
        } else
            gen_doc(r, shape, &base[i]);
    }
    /* the taken-away set: copies of a random subset, in random order */
    int minus = rng_below(r, 4) != 0;
    size_t nt = 0;
    ig_buf *take = calloc(nb, sizeof *take);
    for (size_t i = 0; minus && i < nb; i++)
        if (rng_below(r, 3) == 0)
            ig_buf_append(&take[nt++], base[i].data, base[i].len);
    if (minus && nt == nb) /* keep at least one document */
        ig_buf_free(&take[--nt]);
    for (size_t i = nt; i > 1; i--) {
        size_t j = rng_below(r, i);
        ig_buf t = take[i - 1];
        take[i - 1] = take[j];
        take[j] = t;
    }
    minus = minus && nt > 0;
    /* what remains, by the rule */
    char *gone = calloc(nb, 1);
    for (size_t t = 0; t < nt; t++)
        for (size_t i = 0; i < nb; i++)
            if (!gone[i] && same_doc(&base[i], &take[t])) {
                gone[i] = 1;
                break;
            }
    doclist rem = {calloc(nb, sizeof(ig_buf)), 0};
    size_t nm = 1 + rng_below(r, 3 < nb ? 3 : nb);
    size_t cut[4] = {0, 0, 0, nb};
    cut[nm] = nb;
    for (size_t k = 1; k < nm; k++)
        cut[k] = cut[k - 1] + 1 + rng_below(r, nb - cut[k - 1] - (nm - k));
    char **member_of = calloc(nb, sizeof *member_of);
    char names[3][8] = {"m0", "m1", "m2"};
    for (size_t k = 0; k < nm; k++)
        for (size_t i = cut[k]; i < cut[k + 1]; i++)
            if (!gone[i]) {
                member_of[rem.n] = names[k];
                rem.d[rem.n++] = base[i];
            }
    /* build the members, the subtracted set and the reference */
    char dirs[3][256], tdir[256], rdir[256];
    ig_index_member_spec ms[3], ts = {"gone", tdir};
    int ok = 1;
    for (size_t k = 0; k < nm && ok; k++) {
        snprintf(dirs[k], sizeof dirs[k], "%s/c%d-m%zu", tmp, ci, k);
        ms[k] = (ig_index_member_spec){names[k], dirs[k]};
        ok = !build(dirs[k], base + cut[k], cut[k + 1] - cut[k], r, 0);
    }
    snprintf(tdir, sizeof tdir, "%s/c%d-t", tmp, ci);
    snprintf(rdir, sizeof rdir, "%s/c%d-ref", tmp, ci);
    ok = ok && (!minus || !build(tdir, take, nt, r, 0)) && !build(rdir, rem.d, rem.n, r, 0);
    ig_index *comp = NULL, *ref = NULL;
    ig_error e;
    if (ok) {
        int rc = ig_index_open_composed(&comp, ms, nm, minus ? &ts : NULL, minus ? 1 : 0, &e);
        CHECK(rc == 0, "case %d: compose: %s", ci, e.msg);
        rc = ig_index_open(&ref, rdir, &e);
        CHECK(rc == 0, "case %d: reference: %s", ci, e.msg);
    }
    if (comp && ref) {
        ig_index_info ci_info;
        ig_index_get_info(comp, &ci_info);
        size_t bytes = 0;
        for (size_t d = 0; d < rem.n; d++)
            bytes += rem.d[d].len + 1;
        CHECK(ci_info.documents == rem.n && ci_info.bytes == bytes, "case %d: %llu documents, %llu bytes; want %zu, %zu",
              ci, (unsigned long long)ci_info.documents, (unsigned long long)ci_info.bytes, rem.n, bytes);
        uint32_t a = 0, b = 0;
        CHECK(ig_index_composed(comp, &a, &b) && a == nm && b == (uint32_t)minus, "composed %u + %u", a, b);
        /* documents: text, and member */
        for (size_t d = 0; d < rem.n; d++) {
            ig_doc doc;
            int rc = ig_doc_get(comp, d, &doc, &e);
            size_t len = doc.length;
            const uint8_t *t = rc ? NULL : ig_text(comp, doc.shard, doc.start, &len);
            CHECK(rc == 0 && t && len == rem.d[d].len && !memcmp(t, rem.d[d].data, len), "case %d: doc %zu", ci, d);
            const char *mb = ig_index_member(comp, d);
            CHECK(mb && !strcmp(mb, member_of[d]), "case %d: doc %zu member %s, want %s", ci, d, mb ? mb : "(null)",
                  member_of[d]);
        }
        CHECK(ig_doc_get(comp, rem.n, &(ig_doc){0}, &e) != 0, "a document past the end");
        CHECK(ig_index_member(comp, rem.n) == NULL, "no member past the end");
        /* queries: counts, positions and their locations */
        for (int q = 0; q < scaled(120); q++) {
            uint8_t p[64];
            size_t m;
            if (rng_below(r, 4) == 0) { /* often a piece of a document that was taken away */
                const ig_buf *src = &base[rng_below(r, nb)];
                size_t at = rng_below(r, src->len + 1);
                m = 1 + rng_below(r, 12);
                for (size_t j = 0; j < m; j++)
                    p[j] = at + j < src->len ? src->data[at + j] : 0xFF;
                if (at + m > src->len + 1)
                    m = src->len + 1 - at;
            } else {
                const ig_buf *src = &rem.d[rng_below(r, rem.n)];
                size_t at = rng_below(r, src->len);
                m = rng_below(r, 10);
                for (size_t j = 0; j < m; j++)
                    p[j] = at + j < src->len ? src->data[at + j] : 0xFF;
                if (at + m > src->len + 1)
                    m = src->len + 1 - at;
            }
            uint64_t wd[16], wo[16];
            size_t want = brute(&rem, p, m, wd, wo, 16);
            uint64_t got = ig_count(comp, p, m);
            CHECK(got == want, "case %d: count %llu, brute force %zu (m=%zu)", ci, (unsigned long long)got, want, m);
            ig_pos pos[16];
            uint64_t total = 0;
            size_t maxp = 1 + rng_below(r, 16);
            size_t k = ig_positions(comp, p, m, pos, maxp, &total);
            CHECK(total == want && k == (want < maxp ? want : maxp), "case %d: positions %zu of %llu, want %zu", ci, k,
                  (unsigned long long)total, want);
            for (size_t i = 0; i < k && i < want; i++) {
                ig_location loc;
                int rc = ig_locate(comp, pos[i], NULL, &loc, &e);
                /* the column of the character holding the byte (the document's separator after
                 * its last byte is a character of its own) */
                size_t line = 1, col = 0;
                for (size_t j = 0; j <= wo[i]; j++) {
                    uint8_t c = j < rem.d[wd[i]].len ? rem.d[wd[i]].data[j] : 0xFF;
                    if (j < wo[i] && c == '\n') {
                        line++;
                        col = 0;
                    } else if ((c & 0xC0) != 0x80)
                        col++;
                }
                CHECK(rc == 0 && loc.doc == wd[i] && loc.offset == wo[i] && loc.line == line && loc.column == col,
                      "case %d: position %zu: doc %llu @%llu %llu:%llu, want doc %llu @%llu %zu:%zu", ci, i,
                      (unsigned long long)loc.doc, (unsigned long long)loc.offset, (unsigned long long)loc.line,
                      (unsigned long long)loc.column, (unsigned long long)wd[i], (unsigned long long)wo[i], line, col);
            }
        }
        /* every operation, through its JSON, against the reference index */
        const ig_buf *sd = &rem.d[rng_below(r, rem.n)];
        char text[96], pre[16], docid[24];
        size_t tl = sd->len < sizeof text - 1 ? sd->len : sizeof text - 1;
        while (tl && (sd->data[tl] & 0xC0) == 0x80 && tl < sd->len)
            tl--;
        memcpy(text, sd->data, tl);
        text[tl] = 0;
        size_t pl = tl < 4 ? tl : 4;
        while (pl && (text[pl] & 0xC0) == 0x80)
            pl--;
        memcpy(pre, text, pl);
        pre[pl] = 0;
        snprintf(docid, sizeof docid, "%llu", (unsigned long long)rng_below(r, rem.n));
        same_op(comp, ref, "count", (const char *const[]){"query", pre, "positions", "8", NULL}, ci);
        same_op(comp, ref, "predict", (const char *const[]){"query", pre, NULL}, ci);
        same_op(comp, ref, "predict", (const char *const[]){"query", text, "n", "3", NULL}, ci);
        same_op(comp, ref, "prob", (const char *const[]){"query", pre, "continuation", "a", NULL}, ci);
        same_op(comp, ref, "backoff", (const char *const[]){"query", text, NULL}, ci);
        same_op(comp, ref, "generate", (const char *const[]){"query", pre, "seed", "7", "max", "80", NULL}, ci);
        same_op(comp, ref, "spans", (const char *const[]){"query", text, "min_len", "2", NULL}, ci);
        same_op(comp, ref, "spans", (const char *const[]){"query", text, "rank", "bm25", NULL}, ci);
        same_op(comp, ref, "explain", (const char *const[]){"query", text, NULL}, ci);
        same_op(comp, ref, "eval", (const char *const[]){"text", text, NULL}, ci);
        same_op(comp, ref, "doc", (const char *const[]){"query", docid, NULL}, ci);
        same_op(comp, ref, "mix",
                (const char *const[]){"query", pre, "llm", "[{\"token\":\"a\",\"logprob\":-0.5},{\"token\":\"the\","
                                      "\"logprob\":-1.5},{\"token\":\"\u00e9\",\"prob\":0.1}]", "adaptive", "true", NULL},
                ci);
        if (pl && !strpbrk(pre, "\"\\\n\r"))
            same_op(comp, ref, "search", (const char *const[]){"query", pre, NULL}, ci);
    }
    ig_index_close(&comp);
    ig_index_close(&ref);
    free(member_of);
    free(rem.d);
    free(gone);
    for (size_t i = 0; i < nb; i++) {
        ig_buf_free(&base[i]);
        ig_buf_free(&take[i]);
    }
    free(base);
    free(take);
}

/* Bad compositions: each fails, saying why. */
static void bad_cases(const char *tmp)
{
    test_rng r = {7};
    ig_buf d[3] = {0};
    ig_buf_append(&d[0], "one two", 7);
    ig_buf_append(&d[1], "three", 5);
    ig_buf_append(&d[2], "four", 4);
    char a[256], w[256], t[256], t2[256];
    snprintf(a, sizeof a, "%s/bad-a", tmp);
    snprintf(w, sizeof w, "%s/bad-wide", tmp);
    snprintf(t, sizeof t, "%s/bad-t", tmp);
    snprintf(t2, sizeof t2, "%s/bad-t2", tmp);
    ig_buf twice[2] = {0};
    ig_buf_append(&twice[0], "three", 5);
    ig_buf_append(&twice[1], "three", 5);
    if (build(a, d, 2, &r, 0) || build(w, d + 2, 1, &r, 1) || build(t, d + 2, 1, &r, 0) || build(t2, twice, 2, &r, 0))
        return;
    ig_index *idx = NULL;
    ig_error e;
    ig_index_member_spec ma = {"a", a}, mw = {"w", w}, mt = {"t", t}, mt2 = {"t2", t2}, mx = {"x", "/nonexistent/ig"};
    CHECK(ig_index_open_composed(&idx, &ma, 0, NULL, 0, &e) == IG_EUSAGE, "no member");
    CHECK(ig_index_open_composed(&idx, (ig_index_member_spec[]){ma, mw}, 2, NULL, 0, &e) == IG_EUSAGE &&
              strstr(e.msg, "pointer widths"),
          "different pointer widths: %s", e.msg);
    CHECK(ig_index_open_composed(&idx, &ma, 1, &mt, 1, &e) == IG_EUSAGE && strstr(e.msg, "t: document 0 (<inline>)") &&
              strstr(e.msg, "not a document of"),
          "a subtracted document that is not in the base: %s", e.msg);
    CHECK(ig_index_open_composed(&idx, &ma, 1, &mt2, 1, &e) == IG_EUSAGE && strstr(e.msg, "t2: document 1"),
          "two copies of a document present once: %s", e.msg);
    CHECK(ig_index_open_composed(&idx, (ig_index_member_spec[]){ma, mx}, 2, NULL, 0, &e) != 0 &&
              !strncmp(e.msg, "x: ", 3),
          "a missing member is named: %s", e.msg);
    CHECK(idx == NULL, "nothing is returned on failure");
    /* a subtracted set may take away everything: counts are then 0 */
    ig_index_member_spec mall = {"all", a};
    CHECK(ig_index_open_composed(&idx, &ma, 1, &mall, 1, &e) == 0, "a set minus itself: %s", e.msg);
    if (idx) {
        CHECK(ig_count(idx, (const uint8_t *)"t", 1) == 0 && ig_count(idx, (const uint8_t *)"", 0) == 0, "nothing left");
        ig_pos p;
        uint64_t total = 1;
        CHECK(ig_positions(idx, (const uint8_t *)"e", 1, &p, 1, &total) == 0 && total == 0, "no positions left");
    }
    ig_index_close(&idx);
    for (int i = 0; i < 3; i++)
        ig_buf_free(&d[i]);
    ig_buf_free(&twice[0]);
    ig_buf_free(&twice[1]);
}

int main(void)
{
    char tmpl[] = "/tmp/igcomposeXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    test_rng r = {20261125};
    int n = scaled(60);
    for (int ci = 0; ci < n; ci++)
        one_case(&r, tmpl, ci);
    g_wide = 0;
    bad_cases(tmpl);
    ig_error e;
    igi_remove_tree(tmpl, &e);
    return check_done("compose");
}
