/*
 * Oracle for case-folded indexes: random small corpora rich in the characters whose folding
 * is unusual (ß and ẞ → ss, Turkish İ → i̇ and ı, Greek σ/ς/Σ, combining marks, ligatures,
 * the Kelvin sign, ΐ → three code points), mixed with ASCII, built with --casefold into one
 * or several shards, with and without NFC. Every query's count is checked against a brute
 * force over the folded documents (folded here one code point at a time through utf8proc's
 * whole-string entry point, apart from the library's code), and every occurrence's
 * location — document, original byte offset, line and column — against the original
 * documents; snippets must highlight, and `doc` must return, the original bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "oracle.h"
#include "infinigram/query.h"

static const char *const pieces[] = {
    "a", "A", "b", "B", "s", "S", "x", " ", " ", "\n", "ss", "SS", "Ss",
    "\xc3\x9f",             /* ß */
    "\xe1\xba\x9e",         /* ẞ */
    "i", "I",
    "\xc4\xb0",             /* İ */
    "\xc4\xb1",             /* ı */
    "\xcf\x83",             /* σ */
    "\xcf\x82",             /* ς */
    "\xce\xa3",             /* Σ */
    "\xce\xa3\xce\x91\xce\xa3", /* ΣΑΣ */
    "e\xcc\x81",            /* e + combining acute */
    "E\xcc\x81",            /* E + combining acute */
    "\xc3\xa9",             /* é */
    "\xc3\x89",             /* É */
    "\xcc\x88",             /* a lone combining diaeresis */
    "\xef\xac\x81",         /* ﬁ */
    "\xe2\x84\xaa",         /* Kelvin sign */
    "\xce\x90",             /* ΐ */
    "\xc7\x85",             /* ǅ */
    "\xc5\xbf",             /* ſ */
    "\xd0\x96\xd0\xb6",     /* Жж */
    "\xe6\xbc\xa2",         /* 漢 */
};
#define NPIECES (sizeof pieces / sizeof *pieces)

static void random_doc(test_rng *r, ig_buf *b, size_t maxp)
{
    size_t k = 1 + rng_below(r, maxp);
    for (size_t j = 0; j < k; j++) {
        const char *p = pieces[rng_below(r, NPIECES)];
        ig_buf_append(b, p, strlen(p));
    }
}

/* ---- brute force ---- */

/* NFC of p[0, n) when norm, else a copy (what ingestion indexes). */
static void maybe_nfc(const uint8_t *p, size_t n, int norm, ig_buf *out)
{
    if (!norm) {
        ig_buf_append(out, p, n);
        return;
    }
    utf8proc_uint8_t *d = NULL;
    utf8proc_ssize_t m = utf8proc_map(p, (utf8proc_ssize_t)n, &d, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    CHECK(m >= 0, "NFC failed");
    if (m >= 0)
        ig_buf_append(out, d, (size_t)m);
    free(d);
}

/* The folding of text t[0, n) into f, with, for every folded byte, the original offset of
 * the character it comes from (of[]) and whether it is the first byte of that character's
 * folding; of[f->len] = n. */
typedef struct folded {
    ig_buf f;
    uint64_t *of;
    uint8_t *first;
} folded;

static void fold_brute(const uint8_t *t, size_t n, folded *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 4 * n + 8;
    out->of = malloc(cap * sizeof *out->of);
    out->first = malloc(cap);
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        while (i + k < n && (t[i + k] & 0xC0) == 0x80)
            k++;
        utf8proc_uint8_t *d = NULL;
        utf8proc_ssize_t m = utf8proc_map(t + i, (utf8proc_ssize_t)k, &d, UTF8PROC_CASEFOLD);
        CHECK(m > 0, "casefold failed at %zu", i);
        for (utf8proc_ssize_t j = 0; j < m && out->f.len < cap - 1; j++) {
            out->of[out->f.len] = i;
            out->first[out->f.len] = j == 0;
            ig_buf_append(&out->f, d + j, 1);
        }
        free(d);
        i += k;
    }
    out->of[out->f.len] = n;
    out->first[out->f.len] = 1;
}

static void folded_free(folded *f)
{
    ig_buf_free(&f->f);
    free(f->of);
    free(f->first);
}

/* The display form ig_snippet gives bytes. */
static void visible(const uint8_t *p, size_t n, ig_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\n')
            ig_buf_append(b, "\xe2\x86\xb5", 3);
        else if (c == '\t' || c == '\r')
            ig_buf_append(b, " ", 1);
        else if (c < 0x20 || c == 0x7f || c == 0xff)
            ig_buf_append(b, ".", 1);
        else
            ig_buf_append(b, &c, 1);
    }
}

static uint64_t seen_occ, seen_inside, seen_multishard, seen_longer;

/* One query: its folding by the library against the brute force's, its count, and the
 * location and snippet of every occurrence. */
static void check_query(const ig_index *idx, const ig_buf *orig, const folded *fd, size_t ndocs, const uint8_t *q,
                        size_t qn, int norm)
{
    ig_error e;
    uint8_t *lq = NULL;
    size_t lqn = 0;
    if (ig_query_normalize(idx, q, qn, &lq, &lqn, &e)) {
        CHECK(0, "normalize: %s", e.msg);
        return;
    }
    ig_buf nq = {0};
    maybe_nfc(q, qn, norm, &nq);
    folded fq;
    fold_brute(nq.data, nq.len, &fq);
    CHECK(lqn == fq.f.len && !memcmp(lq, fq.f.data, lqn), "query \"%.*s\" folds to \"%.*s\", expected \"%.*s\"",
          (int)qn, q, (int)lqn, lq, (int)fq.f.len, fq.f.data);
    /* brute force: every occurrence in every folded document */
    size_t cap = 64, nb = 0;
    ig_pos *bp = malloc(cap * sizeof *bp);
    uint64_t *bdoc = malloc(cap * sizeof *bdoc), *boff = malloc(cap * sizeof *boff);
    for (size_t d = 0; d < ndocs && lqn; d++) {
        ig_doc doc;
        if (ig_doc_get(idx, d, &doc, &e)) {
            CHECK(0, "doc %zu: %s", d, e.msg);
            continue;
        }
        const folded *f = &fd[d];
        for (size_t i = 0; i + lqn <= f->f.len; i++) {
            if (memcmp(f->f.data + i, lq, lqn))
                continue;
            if (nb == cap) {
                cap *= 2;
                bp = realloc(bp, cap * sizeof *bp);
                bdoc = realloc(bdoc, cap * sizeof *bdoc);
                boff = realloc(boff, cap * sizeof *boff);
            }
            bp[nb] = (ig_pos){doc.shard, doc.start + i};
            bdoc[nb] = d;
            boff[nb] = i;
            nb++;
        }
    }
    uint64_t cnt = ig_count(idx, lq, lqn);
    if (lqn)
        CHECK(cnt == nb, "count \"%.*s\": %llu, brute force %zu", (int)lqn, lq, (unsigned long long)cnt, nb);
    ig_pos *lp = malloc((nb ? nb : 1) * sizeof *lp);
    uint64_t tot = 0;
    size_t got = lqn ? ig_positions(idx, lq, lqn, lp, nb, &tot) : 0;
    CHECK(got == nb, "positions: %zu of %zu", got, nb);
    for (size_t i = 0; i < got && i < nb; i++) {
        CHECK(lp[i].shard == bp[i].shard && lp[i].offset == bp[i].offset, "occurrence %zu at %u:%llu, expected %u:%llu", i,
              lp[i].shard, (unsigned long long)lp[i].offset, bp[i].shard, (unsigned long long)bp[i].offset);
        const folded *f = &fd[bdoc[i]];
        const ig_buf *o = &orig[bdoc[i]];
        uint64_t fo = boff[i], oo = f->of[fo];
        uint64_t line = 1, ls = 0;
        for (uint64_t j = 0; j < oo; j++)
            if (o->data[j] == '\n') {
                line++;
                ls = j + 1;
            }
        /* the column of the character holding the byte: those that start on its line up to
         * and including it */
        uint64_t col = 0;
        for (uint64_t j = ls; j <= oo && j < o->len; j++)
            col += (o->data[j] & 0xC0) != 0x80;
        col += oo >= o->len; /* the document's closing separator, a character of its own */
        ig_location loc;
        if (ig_locate(idx, bp[i], NULL, &loc, &e)) {
            CHECK(0, "locate: %s", e.msg);
            continue;
        }
        seen_occ++;
        seen_inside += !f->first[fo];
        CHECK(loc.doc == bdoc[i] && loc.offset == oo && loc.line == line && loc.column == col,
              "\"%.*s\" in doc %llu at folded %llu: located doc %llu offset %llu %llu:%llu, expected offset %llu %llu:%llu",
              (int)lqn, lq, (unsigned long long)bdoc[i], (unsigned long long)fo, (unsigned long long)loc.doc,
              (unsigned long long)loc.offset, (unsigned long long)loc.line, (unsigned long long)loc.column,
              (unsigned long long)oo, (unsigned long long)line, (unsigned long long)col);
        /* the highlighted match: the original characters the folded match touches */
        uint64_t fe = fo + lqn;
        while (!f->first[fe])
            fe++;
        ig_buf want = {0}, pre = {0}, whole = {0};
        visible(o->data, (size_t)oo, &pre);
        visible(o->data + oo, (size_t)(f->of[fe] - oo), &want);
        visible(o->data, o->len, &whole);
        size_t hl[3];
        char *snip = ig_snippet(idx, bp[i], lqn, 0, 4, hl);
        CHECK(snip && hl[1] - hl[0] == want.len && !memcmp(snip + hl[0], want.data, want.len),
              "snippet of \"%.*s\" at doc %llu folded %llu: [%s] highlights \"%.*s\", expected \"%.*s\"", (int)lqn, lq,
              (unsigned long long)bdoc[i], (unsigned long long)fo, snip ? snip : "(null)", snip ? (int)(hl[1] - hl[0]) : 0,
              snip ? snip + hl[0] : "", (int)want.len, want.data);
        free(snip);
        /* wide enough for the whole document: exactly its original text, the match in place */
        snip = ig_snippet(idx, bp[i], lqn, 0, 100000, hl);
        CHECK(snip && strlen(snip) == whole.len && !memcmp(snip, whole.data, whole.len) && hl[0] == pre.len &&
                  hl[1] == pre.len + want.len,
              "whole snippet of \"%.*s\" at doc %llu folded %llu: [%s] (%zu:%zu), expected [%.*s] (%zu:%zu)", (int)lqn, lq,
              (unsigned long long)bdoc[i], (unsigned long long)fo, snip ? snip : "(null)", hl[0], hl[1], (int)whole.len,
              whole.data, pre.len, pre.len + want.len);
        ig_buf_free(&pre);
        ig_buf_free(&whole);
        free(snip);
        ig_buf_free(&want);
    }
    free(lp);
    free(bp);
    free(bdoc);
    free(boff);
    free(lq);
    ig_buf_free(&nq);
    folded_free(&fq);
}

/* A query: a piece of an original document with its case changed here and there, or
 * random pieces. */
static void random_query(test_rng *r, const ig_buf *orig, size_t ndocs, ig_buf *q)
{
    if (rng_below(r, 4) == 0) {
        random_doc(r, q, 3);
        return;
    }
    const ig_buf *o = &orig[rng_below(r, ndocs)];
    size_t a = rng_below(r, o->len), len = 1 + rng_below(r, 6);
    while (a > 0 && (o->data[a] & 0xC0) == 0x80)
        a--;
    size_t b = a + len > o->len ? o->len : a + len;
    while (b < o->len && (o->data[b] & 0xC0) == 0x80)
        b++;
    for (size_t i = a; i < b; i++) {
        uint8_t c = o->data[i];
        if (c >= 'a' && c <= 'z' && rng_below(r, 2))
            c -= 32;
        else if (c >= 'A' && c <= 'Z' && rng_below(r, 2))
            c += 32;
        ig_buf_append(q, &c, 1);
    }
}

static void casefold_case(test_rng *r, const char *dir)
{
    size_t ndocs = 1 + rng_below(r, 6);
    int norm = rng_below(r, 2);
    ig_buf *docs = calloc(ndocs, sizeof *docs), *orig = calloc(ndocs, sizeof *orig);
    ig_source *src = calloc(ndocs, sizeof *src);
    folded *fd = calloc(ndocs, sizeof *fd);
    size_t total = 0;
    for (size_t d = 0; d < ndocs; d++) {
        random_doc(r, &docs[d], 40);
        src[d] = oracle_inline_source(&docs[d], "x");
        maybe_nfc(docs[d].data, docs[d].len, norm, &orig[d]);
        fold_brute(orig[d].data, orig[d].len, &fd[d]);
        total += orig[d].len + 1;
        seen_longer += fd[d].f.len > orig[d].len;
    }
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.normalize = norm;
    in.casefold = 1;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.shard_size = rng_below(r, 2) ? 1 + rng_below(r, total) : total * 4 + 64;
    if (rng_below(r, 2)) { /* forced tables: prefix, keys, stored line index */
        bo.prefix_min = 1;
        bo.sample_stride = 4;
    }
    ig_build_result res;
    ig_error e;
    ig_index *idx = NULL;
    int rc = ig_build_index(dir, src, ndocs, &in, &bo, NULL, NULL, NULL, &res, &e);
    CHECK(rc == 0, "build %s: %s", dir, e.msg);
    if (!rc) {
        seen_multishard += res.shards > 1;
        ig_build_result_free(&res);
        rc = ig_index_open(&idx, dir, &e);
        CHECK(rc == 0, "open %s: %s", dir, e.msg);
    }
    if (!rc) {
        ig_index_info info;
        ig_index_get_info(idx, &info);
        CHECK(info.casefold == 1, "the index does not say it is case-folded");
        CHECK(ig_index_verify(dir, &e) == 0, "verify: %s", e.msg);
        /* every document: the original bytes back, whole and through the doc operation */
        ig_op_ctx ctx = {idx, "t", NULL};
        for (size_t d = 0; d < ndocs; d++) {
            ig_doc doc;
            CHECK(ig_doc_get(idx, d, &doc, &e) == 0, "doc_get: %s", e.msg);
            CHECK(doc.length == fd[d].f.len, "doc %zu: %llu folded bytes, expected %zu", d,
                  (unsigned long long)doc.length, fd[d].f.len);
            ig_doc_opts dop;
            ig_doc_defaults(&dop);
            char id[24];
            snprintf(id, sizeof id, "%zu", d);
            dop.query = (ig_bytes){(uint8_t *)id, strlen(id)};
            ig_doc_result dr;
            if (ig_doc_run(&ctx, &dop, &dr, &e)) {
                CHECK(0, "doc %zu: %s", d, e.msg);
                continue;
            }
            CHECK(dr.len == orig[d].len && !memcmp(dr.text, orig[d].data, dr.len) && dr.doc.length == orig[d].len,
                  "doc %zu: \"%.*s\", expected \"%.*s\"", d, (int)dr.len, dr.text, (int)orig[d].len, orig[d].data);
            ig_doc_result_free(&dr);
        }
        /* any byte of a document, inside a character too (explain and spans find such
         * positions): the line and column of the character holding it; the offset the byte's
         * own where folding left the character alone, else the character's */
        for (size_t d = 0; d < ndocs; d++) {
            const folded *f = &fd[d];
            const ig_buf *o = &orig[d];
            ig_doc doc;
            if (!f->f.len || ig_doc_get(idx, d, &doc, &e))
                continue;
            for (int k = 0; k < 20; k++) {
                size_t p = rng_below(r, f->f.len), c0 = p, c1 = p + 1;
                while (c0 > 0 && !f->first[c0])
                    c0--;
                while (c1 < f->f.len && !f->first[c1])
                    c1++;
                uint64_t i = f->of[p], ol = 1; /* the original character: its start and length */
                while (i + ol < o->len && (o->data[i + ol] & 0xC0) == 0x80)
                    ol++;
                int same = ol == c1 - c0 && !memcmp(o->data + i, f->f.data + c0, ol);
                uint64_t want_off = same ? i + (p - c0) : i, line = 1, col = 0;
                for (uint64_t j = 0; j <= i && j < o->len; j++) {
                    if (j < i && o->data[j] == '\n')
                        line++, col = 0;
                    else
                        col += (o->data[j] & 0xC0) != 0x80;
                }
                ig_location loc;
                CHECK(ig_locate(idx, (ig_pos){doc.shard, doc.start + p}, NULL, &loc, &e) == 0 && loc.doc == d &&
                          loc.offset == want_off && loc.line == line && loc.column == col,
                      "doc %zu folded byte %zu: offset %llu %llu:%llu, expected %llu %llu:%llu", d, p,
                      (unsigned long long)loc.offset, (unsigned long long)loc.line, (unsigned long long)loc.column,
                      (unsigned long long)want_off, (unsigned long long)line, (unsigned long long)col);
            }
        }
        for (int k = 0; k < 30; k++) {
            ig_buf q = {0};
            random_query(r, orig, ndocs, &q);
            check_query(idx, orig, fd, ndocs, q.data, q.len, norm);
            ig_buf_free(&q);
        }
        CHECK(ig_index_health(idx, NULL, &e) == 0, "health: %s", e.msg);
    }
    ig_index_close(&idx);
    ig_error ke;
    igi_remove_tree(dir, &ke);
    for (size_t d = 0; d < ndocs; d++) {
        ig_buf_free(&orig[d]);
        folded_free(&fd[d]);
    }
    free(orig);
    free(fd);
    oracle_docs_free(docs, ndocs, src);
}

/* The fixed strings of the documentation: each spelling finds the others. */
static void fixed_cases(const char *tmp)
{
    static const char *const doc = "Stra\xc3\x9f" "e STRASSE strasse\n\xc4\xb0stanbul istanbul\n"
                                   "\xce\xa3\xce\xbf\xcf\x86\xce\xbf\xcf\x82 \xcf\x83\xce\xbf\xcf\x86\xce\xbf\xcf\x83";
    char *dir = igi_aprintf("%s/fixed", tmp);
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = doc, .text_len = strlen(doc)};
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.casefold = 1;
    ig_build_result res;
    ig_error e;
    ig_index *idx = NULL;
    if (ig_build_index(dir, &src, 1, &in, NULL, NULL, NULL, NULL, &res, &e) == 0 && ig_index_open(&idx, dir, &e) == 0) {
        static const struct { const char *q; uint64_t n; } qs[] = {
            {"STRASSE", 3}, {"Stra\xc3\x9f" "e", 3}, {"SS", 3}, {"\xc3\x9f", 3},
            {"\xc4\xb0stanbul", 1}, {"ISTANBUL", 1}, {"\xce\xa3\xce\x9f\xce\xa6\xce\x9f\xce\xa3", 2},
        };
        for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
            uint8_t *q;
            size_t n;
            CHECK(ig_query_normalize(idx, (const uint8_t *)qs[i].q, strlen(qs[i].q), &q, &n, &e) == 0, "%s", e.msg);
            uint64_t c = ig_count(idx, q, n);
            CHECK(c == qs[i].n, "count \"%s\": %llu, expected %llu", qs[i].q, (unsigned long long)c,
                  (unsigned long long)qs[i].n);
            free(q);
        }
        ig_build_result_free(&res);
    } else {
        CHECK(0, "fixed: %s", e.msg);
    }
    ig_index_close(&idx);
    igi_remove_tree(dir, &e);
    free(dir);
}

int main(void)
{
    char tmpl[] = "/tmp/ig-casefold-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp)
        return check_done("casefold");
    fixed_cases(tmp);
    test_rng r = {20261125};
    int n = scaled(300);
    for (int c = 0; c < n; c++) {
        char *dir = igi_aprintf("%s/c%d", tmp, c);
        casefold_case(&r, dir);
        free(dir);
    }
    /* the cases must reach what they test */
    CHECK(seen_occ > (uint64_t)scaled(1000) && seen_inside > (uint64_t)scaled(20) &&
              seen_multishard > (uint64_t)scaled(50) && seen_longer > (uint64_t)scaled(50),
          "coverage: %llu occurrences, %llu inside a character's folding, %llu multi-shard corpora, %llu longer folded",
          (unsigned long long)seen_occ, (unsigned long long)seen_inside, (unsigned long long)seen_multishard,
          (unsigned long long)seen_longer);
    printf("coverage: %llu occurrences, %llu inside a character's folding, %llu multi-shard corpora, %llu documents "
           "longer folded\n",
           (unsigned long long)seen_occ, (unsigned long long)seen_inside, (unsigned long long)seen_multishard,
           (unsigned long long)seen_longer);
    ig_error e;
    igi_remove_tree(tmp, &e);
    return check_done("casefold");
}
