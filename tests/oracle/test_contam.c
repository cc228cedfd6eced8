/*
 * Oracle for contamination: random small corpora (one or several shards) and random eval
 * items (fresh word sequences, and passages copied from the documents with their
 * separators changed); every item's n-gram count, matched n-grams, overlap, verdict,
 * longest match (length, count, first source) and the eval set's distinct n-grams are
 * checked against a brute force over the documents' bytes. Also: decontaminated builds
 * against a brute-force selection of documents, reading eval sets, and the Bloom formula.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "oracle.h"
#include "infinigram/contam.h"

static const char *const words[] = {"the", "The", "king", "KING", "caf\xc3\xa9", "CAF\xc3\x89", "sea,", "sea", "x",
                                    "\xe6\xbc\xa2", "a.b", "42"};
static const char *const seps[] = {" ", " ", " ", " ", "\n", "  ", "\t", "\xc2\xa0", "\xe3\x80\x80", ""};

/* Words and separators; `glue` (the empty separator) joins words into longer ones. */
static void random_text(test_rng *r, ig_buf *b, size_t maxw)
{
    size_t k = rng_below(r, maxw + 1);
    for (size_t j = 0; j < k; j++) {
        const char *w = words[rng_below(r, sizeof words / sizeof *words)];
        ig_buf_append(b, w, strlen(w));
        if (j + 1 < k) {
            const char *s = seps[rng_below(r, sizeof seps / sizeof *seps)];
            ig_buf_append(b, s, strlen(s));
        }
    }
}

/* ---- brute force ---- */

static double ov_of(uint64_t m, size_t n) { return n ? (double)m / (double)n : 0; }

static int space_at(const uint8_t *p, size_t n, size_t *len)
{
    /* the white space the generator uses, decoded independently of the library */
    if (n >= 1 && (p[0] == ' ' || p[0] == '\n' || p[0] == '\t' || p[0] == '\r' || p[0] == '\v' || p[0] == '\f')) {
        *len = 1;
        return 1;
    }
    if (n >= 2 && p[0] == 0xC2 && p[1] == 0xA0) {
        *len = 2;
        return 1;
    }
    if (n >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) {
        *len = 3;
        return 1;
    }
    return 0;
}

/* Words of p as (start, end) pairs. */
static size_t split(const uint8_t *p, size_t n, size_t *ws)
{
    size_t nw = 0, i = 0, k;
    while (i < n) {
        if (space_at(p + i, n - i, &k)) {
            i += k;
            continue;
        }
        size_t a = i;
        while (i < n && !space_at(p + i, n - i, &k))
            i++;
        ws[2 * nw] = a;
        ws[2 * nw + 1] = i;
        nw++;
    }
    return nw;
}

static void lower(const uint8_t *p, size_t n, ig_buf *out)
{
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &c);
        if (k <= 0) {
            ig_buf_append(out, p + i, 1);
            i++;
            continue;
        }
        uint8_t u[4];
        utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_tolower(c), u);
        ig_buf_append(out, u, (size_t)m);
        i += (size_t)k;
    }
}

/* Occurrences of g in the documents (overlapping), the first as (doc, offset). */
static uint64_t occurrences(const ig_buf *docs, size_t nd, const uint8_t *g, size_t len, long *doc0, size_t *off0)
{
    uint64_t c = 0;
    *doc0 = -1;
    for (size_t d = 0; d < nd; d++)
        for (size_t i = 0; len && i + len <= docs[d].len; i++)
            if (!memcmp(docs[d].data + i, g, len)) {
                if (*doc0 < 0) {
                    *doc0 = (long)d;
                    *off0 = i;
                }
                c++;
            }
    return c;
}

typedef struct gram_list {
    ig_buf *v;
    size_t n;
} gram_list;

static void grams(const uint8_t *p, size_t len, uint64_t n, int bytes, gram_list *out)
{
    out->v = calloc(len + 2, sizeof *out->v);
    out->n = 0;
    if (bytes) {
        if (len && len < n)
            ig_buf_append(&out->v[out->n++], p, len);
        for (size_t i = 0; len >= n && i + n <= len; i++)
            ig_buf_append(&out->v[out->n++], p + i, (size_t)n);
        return;
    }
    size_t *ws = calloc(2 * len + 2, sizeof *ws), nw = split(p, len, ws);
    size_t span = nw < n ? nw : (size_t)n, cnt = nw == 0 ? 0 : nw < n ? 1 : nw - (size_t)n + 1;
    for (size_t s = 0; s < cnt; s++) {
        ig_buf *b = &out->v[out->n++];
        for (size_t w = s; w < s + span; w++) {
            if (w > s)
                ig_buf_append(b, " ", 1);
            ig_buf_append(b, p + ws[2 * w], ws[2 * w + 1] - ws[2 * w]);
        }
    }
    free(ws);
}

static void grams_free(gram_list *g)
{
    for (size_t i = 0; i < g->n; i++)
        ig_buf_free(&g->v[i]);
    free(g->v);
}

/* How many checked items had matches, and were contaminated: the cases must reach both. */
static uint64_t seen_matched, seen_contaminated, seen_multishard;

static void contam_case(test_rng *r, const char *dir)
{
    size_t nd = 1 + rng_below(r, 10);
    ig_buf *docs = calloc(nd, sizeof *docs);
    ig_source *src = calloc(nd, sizeof *src);
    for (size_t d = 0; d < nd; d++) {
        random_text(r, &docs[d], 60);
        src[d] = oracle_inline_source(&docs[d], "sea");
    }
    ig_index *idx = NULL;
    if (oracle_build(dir, src, nd, rng_below(r, 2) ? 64 + rng_below(r, 200) : 1u << 30, 0, 0, &idx))
        goto out;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    seen_multishard += info.shards > 1;
    ig_contam_opts o;
    ig_contam_defaults(&o);
    o.bytes = rng_below(r, 4) == 0;
    o.n = o.bytes ? 1 + rng_below(r, 24) : 1 + rng_below(r, 8);
    o.lowercase = rng_below(r, 3) == 0;
    o.threshold = (double)rng_below(r, 11) / 10;
    o.partial = o.threshold * (double)rng_below(r, 5) / 4;
    o.normalized = 1;
    size_t ni = 1 + rng_below(r, 8);
    o.items.v = calloc(ni, sizeof *o.items.v);
    o.items.n = ni;
    for (size_t i = 0; i < ni; i++) {
        ig_buf b = {0};
        if (rng_below(r, 2)) {
            /* a passage of a document, its separators sometimes replaced by one space */
            const ig_buf *d = &docs[rng_below(r, nd)];
            size_t a = rng_below(r, d->len), e = a + rng_below(r, d->len - a + 1);
            for (size_t k = a; k < e; k++) {
                size_t sl;
                if (rng_below(r, 2) && space_at(d->data + k, e - k, &sl)) {
                    ig_buf_append(&b, " ", 1);
                    k += sl - 1;
                } else {
                    ig_buf_append(&b, d->data + k, 1);
                }
            }
        } else {
            random_text(r, &b, 20);
        }
        if (rng_below(r, 8) == 0)
            ig_buf_append(&b, "\xfe", 1); /* any bytes but 0xFF: the item is not corpus text */
        ig_buf_append(&b, "", 1);
        o.items.v[i] = (ig_bytes){b.data, b.len - 1};
    }
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_contam_result res;
    ig_error e;
    int rc = ig_contam_run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "contam: %s", e.msg);
    if (rc)
        goto items;
    CHECK(res.nitems == ni && !res.cancelled, "all %zu items done", ni);
    /* brute force */
    gram_list all = {calloc(1, sizeof(ig_buf)), 0};
    size_t allcap = 1;
    uint64_t contaminated = 0, partly = 0, total = 0;
    for (size_t i = 0; i < ni && i < res.nitems; i++) {
        ig_buf low = {0};
        const uint8_t *p = o.items.v[i].p;
        size_t len = o.items.v[i].n;
        if (o.lowercase) {
            lower(p, len, &low);
            p = low.data;
            len = low.len;
        }
        gram_list g;
        grams(p, len, o.n, o.bytes, &g);
        uint64_t matched = 0;
        for (size_t k = 0; k < g.n; k++) {
            long d0;
            size_t off0;
            matched += occurrences(docs, nd, g.v[k].data, g.v[k].len, &d0, &off0) > 0;
            size_t j;
            for (j = 0; j < all.n; j++)
                if (all.v[j].len == g.v[k].len && !memcmp(all.v[j].data, g.v[k].data, g.v[k].len))
                    break;
            if (j == all.n) {
                if (all.n == allcap) {
                    allcap *= 2;
                    all.v = realloc(all.v, allcap * sizeof *all.v);
                }
                all.v[all.n] = (ig_buf){0};
                ig_buf_append(&all.v[all.n++], g.v[k].data, g.v[k].len);
            }
        }
        const ig_contam_item *it = &res.items[i];
        seen_matched += matched > 0;
        seen_contaminated += g.n && ov_of(matched, g.n) >= 0.8;
        CHECK(it->ngrams == g.n, "item %zu: %llu n-grams, brute force %zu", i, (unsigned long long)it->ngrams, g.n);
        CHECK(it->matched == matched, "item %zu: %llu in corpus, brute force %llu", i, (unsigned long long)it->matched,
              (unsigned long long)matched);
        double ov = g.n ? (double)matched / (double)g.n : 0;
        CHECK(it->overlap == ov, "item %zu: overlap %g, brute force %g", i, it->overlap, ov);
        if (g.n && ov >= o.threshold)
            contaminated++;
        else if (g.n && ov >= o.partial)
            partly++;
        total += g.n;
        /* the longest substring occurring anywhere */
        uint64_t best = 0;
        size_t bs = 0;
        for (size_t a = 0; a < len; a++)
            for (size_t b = len; b > a + best; b--) {
                long d0;
                size_t off0;
                if (occurrences(docs, nd, p + a, b - a, &d0, &off0)) {
                    best = b - a;
                    bs = a;
                    break;
                }
            }
        CHECK(it->longest == best, "item %zu: longest %llu, brute force %llu", i, (unsigned long long)it->longest,
              (unsigned long long)best);
        if (best && it->longest == best) {
            long d0;
            size_t off0;
            CHECK(!memcmp(it->longest_text, p + bs, best) || occurrences(docs, nd, it->longest_text, best, &d0, &off0),
                  "item %zu: the longest match occurs", i);
            uint64_t c = occurrences(docs, nd, it->longest_text, best, &d0, &off0);
            CHECK(it->longest_count == c, "item %zu: longest count %llu, brute force %llu", i,
                  (unsigned long long)it->longest_count, (unsigned long long)c);
            CHECK(it->source.doc == (uint64_t)d0 && it->source.offset == off0,
                  "item %zu: first source doc %llu @%llu, brute force doc %ld @%zu", i,
                  (unsigned long long)it->source.doc, (unsigned long long)it->source.offset, d0, off0);
        }
        grams_free(&g);
        ig_buf_free(&low);
    }
    CHECK(res.contaminated == contaminated && res.partly == partly, "verdicts %llu/%llu, brute force %llu/%llu",
          (unsigned long long)res.contaminated, (unsigned long long)res.partly, (unsigned long long)contaminated,
          (unsigned long long)partly);
    CHECK(res.ngrams == total && res.distinct == all.n, "n-grams %llu (%llu distinct), brute force %llu (%zu)",
          (unsigned long long)res.ngrams, (unsigned long long)res.distinct, (unsigned long long)total, all.n);
    char *js = ig_contam_json(&ctx, &o, &res);
    CHECK(js && strstr(js, "\"summary\""), "json written");
    free(js);
    grams_free(&all);
    ig_contam_result_free(&res);
items:
    ig_fields_free(ig_contam_fields, &o);
    ig_index_close(&idx);
out:
    oracle_docs_free(docs, nd, src);
}

/* A decontaminated build against a brute-force selection: which documents the rule
 * catches, which the index keeps (their bytes, in order), the counts and the listed ids. */
static uint64_t seen_caught;

static void decontam_case(test_rng *r, const char *tmp, int c)
{
    size_t nd = 1 + rng_below(r, 12);
    ig_buf *docs = calloc(nd, sizeof *docs);
    ig_source *src = calloc(nd, sizeof *src);
    for (size_t d = 0; d < nd; d++) {
        random_text(r, &docs[d], 30);
        src[d] = oracle_inline_source(&docs[d], "sea");
    }
    /* the eval set: copies of documents (newlines made spaces: one item per line) and fresh text */
    size_t ni = 1 + rng_below(r, 6);
    ig_buf *items = calloc(ni, sizeof *items);
    char *evp = igi_aprintf("%s/eval%d.txt", tmp, c);
    FILE *f = fopen(evp, "w");
    for (size_t i = 0; i < ni; i++) {
        if (rng_below(r, 2)) {
            const ig_buf *d = &docs[rng_below(r, nd)];
            size_t a = rng_below(r, 3) ? 0 : rng_below(r, d->len);
            while (a < d->len && (d->data[a] & 0xC0) == 0x80) /* the eval file is UTF-8: whole characters */
                a++;
            ig_buf_append(&items[i], d->data + a, d->len - a);
        } else {
            random_text(r, &items[i], 20);
        }
        for (size_t k = 0; k < items[i].len; k++)
            if (items[i].data[k] == '\n')
                items[i].data[k] = ' ';
        ig_buf_append(&items[i], "x", 1); /* never an empty line */
        fwrite(items[i].data, 1, items[i].len, f);
        fputc('\n', f);
    }
    fclose(f);
    ig_decontam_options dc;
    ig_decontam_options_default(&dc);
    dc.eval_path = evp;
    dc.bytes = rng_below(r, 4) == 0;
    dc.n = dc.bytes ? 1 + rng_below(r, 16) : 1 + rng_below(r, 6);
    dc.threshold = (double)rng_below(r, 11) / 10;
    dc.lowercase = rng_below(r, 3) == 0;
    dc.flag_only = rng_below(r, 3) == 0;
    /* brute force: the eval n-grams, then each document's share */
    gram_list *eg = calloc(ni, sizeof *eg);
    for (size_t i = 0; i < ni; i++) {
        ig_buf low = {0};
        if (dc.lowercase)
            lower(items[i].data, items[i].len, &low);
        grams(dc.lowercase ? low.data : items[i].data, dc.lowercase ? low.len : items[i].len, dc.n, dc.bytes, &eg[i]);
        ig_buf_free(&low);
    }
    int *caught = calloc(nd, sizeof *caught);
    size_t ncaught = 0;
    for (size_t d = 0; d < nd; d++) {
        ig_buf low = {0};
        if (dc.lowercase)
            lower(docs[d].data, docs[d].len, &low);
        gram_list g;
        grams(dc.lowercase ? low.data : docs[d].data, dc.lowercase ? low.len : docs[d].len, dc.n, dc.bytes, &g);
        uint64_t m = 0;
        for (size_t k = 0; k < g.n; k++) {
            int in = 0;
            for (size_t i = 0; i < ni && !in; i++)
                for (size_t j = 0; j < eg[i].n && !in; j++)
                    in = eg[i].v[j].len == g.v[k].len && !memcmp(eg[i].v[j].data, g.v[k].data, g.v[k].len);
            m += in;
        }
        caught[d] = g.n && ov_of(m, g.n) >= dc.threshold;
        ncaught += caught[d];
        grams_free(&g);
        ig_buf_free(&low);
    }
    seen_caught += ncaught;
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.normalize = 0;
    in.decontam = &dc;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.shard_size = rng_below(r, 2) ? 48 + rng_below(r, 100) : 1u << 30;
    ig_build_result res;
    ig_error e;
    char *dir = igi_aprintf("%s/d%d", tmp, c);
    int rc = ig_build_index(dir, src, nd, &in, &bo, NULL, NULL, NULL, &res, &e);
    if (!dc.flag_only && ncaught == nd) {
        CHECK(rc == IG_EINVAL && strstr(e.msg, "decontamination"), "every document dropped: %s", e.msg);
        goto done;
    }
    CHECK(rc == 0, "decontaminated build: %s", e.msg);
    if (rc)
        goto done;
    CHECK(res.decontam && res.decontam->caught == ncaught && res.decontam->documents == nd &&
              res.decontam->eval_items == ni && res.decontam->ndocs == ncaught,
          "report: caught %llu of %llu, brute force %zu of %zu", res.decontam ? (unsigned long long)res.decontam->caught : 0,
          res.decontam ? (unsigned long long)res.decontam->documents : 0, ncaught, nd);
    ig_index *idx = NULL;
    CHECK(ig_index_open(&idx, dir, &e) == 0, "open: %s", e.msg);
    ig_index_info info;
    if (idx) {
        ig_index_get_info(idx, &info);
        size_t want = dc.flag_only ? nd : nd - ncaught, k = 0, listed = 0;
        CHECK(info.documents == want, "documents %llu, want %zu", (unsigned long long)info.documents, want);
        for (size_t d = 0; d < nd && k < info.documents; d++) {
            if (caught[d] && !dc.flag_only)
                continue;
            ig_doc doc;
            if (ig_doc_get(idx, k, &doc, &e) == 0) {
                size_t len = (size_t)doc.length;
                const uint8_t *t = ig_text(idx, doc.shard, doc.start, &len);
                CHECK(doc.length == docs[d].len && !memcmp(t, docs[d].data, docs[d].len), "doc %zu is source %zu", k, d);
            }
            if (caught[d] && res.decontam && listed < res.decontam->ndocs)
                CHECK(res.decontam->docs[listed++].doc == k, "flagged doc %zu listed with its id", k);
            k++;
        }
        ig_index_close(&idx);
    }
    ig_build_result_free(&res);
done:
    for (size_t i = 0; i < ni; i++) {
        ig_buf_free(&items[i]);
        grams_free(&eg[i]);
    }
    free(items);
    free(eg);
    free(caught);
    free(dir);
    free(evp);
    oracle_docs_free(docs, nd, src);
}

/* Cancelled before the first n-gram: no item reported, marked cancelled. */
static void cancel_case(const char *dir)
{
    ig_source s = {.kind = IG_SOURCE_INLINE, .text = "the king the sea", .text_len = 16};
    ig_index *idx = NULL;
    if (oracle_build(dir, &s, 1, 1u << 30, 0, 0, &idx))
        return;
    ig_contam_opts o;
    ig_contam_defaults(&o);
    ig_bytes item = {(uint8_t *)"the king", 8};
    o.items = (ig_texts){&item, 1};
    volatile int stop = 1;
    ig_op_ctx ctx = {idx, "t", &stop};
    ig_contam_result res;
    ig_error e;
    CHECK(ig_contam_run(&ctx, &o, &res, &e) == 0 && res.cancelled && res.nitems == 0, "cancelled at once");
    ig_contam_result_free(&res);
    o.items.n = 0;
    CHECK(ig_contam_run(&ctx, &o, &res, &e) == IG_EUSAGE, "an empty eval set is refused");
    ig_index_close(&idx);
}

static void eval_set_cases(const char *tmp)
{
    char *p = igi_aprintf("%s/ev.txt", tmp), *q = igi_aprintf("%s/ev.jsonl", tmp), *z = igi_aprintf("%s/empty", tmp);
    FILE *f = fopen(p, "w");
    fputs("first item\n\nthird line item\n", f);
    fclose(f);
    f = fopen(q, "w");
    fputs("{\"q\": \"one\"}\n{\"q\": \"\"}\n{\"q\": \"three\", \"a\": 1}\n", f);
    fclose(f);
    f = fopen(z, "w");
    fclose(f);
    ig_texts it;
    uint64_t *lines;
    ig_error e;
    CHECK(ig_eval_set_load(p, NULL, 1, &it, &lines, &e) == 0 && it.n == 2 && lines[1] == 3 && it.v[1].n == 15,
          "lines eval set");
    ig_eval_set_free(&it, lines);
    CHECK(ig_eval_set_load(q, "q", 1, &it, &lines, &e) == 0 && it.n == 2 && lines[1] == 3 && !memcmp(it.v[1].p, "three", 5),
          "jsonl eval set");
    ig_eval_set_free(&it, lines);
    CHECK(ig_eval_set_load(q, "nope", 1, &it, &lines, &e) == IG_EINVAL && strstr(e.msg, "nope"), "missing field: %s",
          e.msg);
    CHECK(ig_eval_set_load(z, NULL, 1, &it, &lines, &e) == IG_EUSAGE && strstr(e.msg, "empty"), "empty: %s", e.msg);
    char *missing = igi_aprintf("%s/no-such-eval-set", tmp);
    CHECK(ig_eval_set_load(missing, NULL, 1, &it, &lines, &e) == IG_ENOTFOUND, "missing file: %s", e.msg);
    free(missing);
    free(p);
    free(q);
    free(z);
}

static void bloom_cases(void)
{
    /* against the formula evaluated directly where a double holds it */
    double m = 1e6, k = 7, n = 1e5;
    double want = pow(1 - exp(-k * n / m), k);
    CHECK(fabs(pow(10, ig_bloom_fpr_log10(m, k, n)) / want - 1) < 1e-9, "fpr %g", want);
    CHECK(ig_bloom_bff_k(IG_BFF_FILTER_BYTES * 8, IG_BFF_EXPECTED_NGRAMS) == 1525, "BFF's k");
    CHECK(isinf(ig_bloom_fpr_log10(m, k, 0)), "empty filter");
}

int main(void)
{
    char tmpl[] = "/tmp/ig-contam-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp)
        return check_done("contam");
    bloom_cases();
    eval_set_cases(tmp);
    char *dir = igi_aprintf("%s/cancel", tmp);
    cancel_case(dir);
    free(dir);
    test_rng r = {20261125};
    int n = scaled(300);
    for (int c = 0; c < n; c++) {
        dir = igi_aprintf("%s/c%d", tmp, c);
        contam_case(&r, dir);
        free(dir);
    }
    for (int c = 0; c < scaled(200); c++)
        decontam_case(&r, tmp, c);
    /* the cases must reach what they test; fewer cases (IG_ORACLE_SCALE) reach less of it */
    CHECK(seen_caught > (uint64_t)scaled(50) / 2, "coverage: %llu documents caught by decontamination",
          (unsigned long long)seen_caught);
    CHECK(seen_matched > (uint64_t)scaled(50) / 2 && seen_contaminated > (uint64_t)scaled(20) / 2 &&
              seen_multishard > (uint64_t)scaled(20) / 2,
          "coverage: %llu items with matches, %llu at 80%%, %llu multi-shard corpora", (unsigned long long)seen_matched,
          (unsigned long long)seen_contaminated, (unsigned long long)seen_multishard);
    printf("coverage: %llu items with matches, %llu at 80%%, %llu multi-shard corpora\n",
           (unsigned long long)seen_matched, (unsigned long long)seen_contaminated, (unsigned long long)seen_multishard);
    ig_error e;
    igi_remove_tree(tmp, &e);
    return check_done("contam");
}
