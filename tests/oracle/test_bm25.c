/*
 * BM25 ranking against brute force: the term splitter on fixed cases; document scores on
 * random corpora (mixed case, punctuation, accents, invalid bytes, several shards) against
 * a string-based BM25 written from the formula; the statistics file beside the index
 * (written, read back, a damaged one ignored and rebuilt); and spans' ranked sources
 * (order, scores, identical documents folded, the number kept) against the same oracle.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utf8proc.h>

#include "oracle.h"

/* ---- an independent term splitter: terms as strings ---- */

typedef struct terms {
    char **t;
    size_t n, cap;
} terms;

static int is_word(int32_t c)
{
    const char *cat = utf8proc_category_string(c);
    return cat[0] == 'L' || cat[0] == 'M' || cat[0] == 'N';
}

static void split(const uint8_t *p, size_t n, terms *out)
{
    ig_buf cur = {0};
    size_t i = 0;
    for (;;) {
        int32_t c = -1;
        size_t k = 1;
        if (i < n) {
            utf8proc_ssize_t r = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &c);
            if (r > 0)
                k = (size_t)r;
            else
                c = -1;
        }
        if (i < n && c >= 0 && is_word(c)) {
            uint8_t u[4];
            utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_tolower(c), u);
            ig_buf_append(&cur, u, (size_t)m);
        } else if (cur.len) {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 16;
                out->t = realloc(out->t, out->cap * sizeof *out->t);
            }
            out->t[out->n++] = igi_strndup((const char *)cur.data, cur.len);
            cur.len = 0;
        }
        if (i >= n)
            break;
        i += k;
    }
    ig_buf_free(&cur);
}

static void terms_free(terms *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->t[i]);
    free(t->t);
    memset(t, 0, sizeof *t);
}

static size_t occurrences(const terms *t, const char *w)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        k += !strcmp(t->t[i], w);
    return k;
}

/* BM25 of every document against q, from the strings. */
static void brute_scores(const ig_buf *docs, size_t nd, const uint8_t *q, size_t qn, double k1, double b, double *out)
{
    terms *dt = calloc(nd, sizeof *dt), qt = {0};
    double total = 0;
    for (size_t d = 0; d < nd; d++) {
        split(docs[d].data, docs[d].len, &dt[d]);
        total += (double)dt[d].n;
    }
    split(q, qn, &qt);
    double N = (double)nd, avgdl = total / N;
    for (size_t d = 0; d < nd; d++) {
        double s = 0;
        for (size_t i = 0; i < qt.n; i++) { /* every occurrence of a query term counts */
            double df = 0;
            for (size_t e = 0; e < nd; e++)
                df += occurrences(&dt[e], qt.t[i]) > 0;
            double idf = log(1 + (N - df + 0.5) / (df + 0.5));
            double tf = (double)occurrences(&dt[d], qt.t[i]);
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * (double)dt[d].n / avgdl));
        }
        out[d] = s;
    }
    for (size_t d = 0; d < nd; d++)
        terms_free(&dt[d]);
    terms_free(&qt);
    free(dt);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1 + fabs(b));
}

/* ---- the splitter on fixed cases ---- */

static void splitter_cases(void)
{
    static const char *cases[][2] = {
        {"Hello, WORLD! 42", "hello|world|42"},
        {"\xc3\x89" "COLE \xc3\xa9" "cole", "\xc3\xa9" "cole|\xc3\xa9" "cole"},
        {"don't snake_case a-b", "don|t|snake|case|a|b"},
        {"e\xcc\x81t\xc3\xa9", "e\xcc\x81t\xc3\xa9"},                /* a combining mark stays in its word */
        {"\xe6\xbc\xa2\xe5\xad\x97\xe3\x80\x82x", "\xe6\xbc\xa2\xe5\xad\x97|x"}, /* CJK letters; the ideographic full stop splits */
        {"a\xff" "b\xc3" "c", "a|b|c"},                               /* invalid bytes split */
        {"\xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91 \xd0\x9c\xd0\x98\xd0\xa0", "\xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1|\xd0\xbc\xd0\xb8\xd1\x80"},
        {"  ...  ", ""},
        {"x\xc2\xb2\xe2\x85\xa3", "x\xc2\xb2\xe2\x85\xb3"},          /* superscript two (No), roman numeral four (Nl) */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *in = cases[c][0], *want = cases[c][1];
        uint64_t got[16], exp[16];
        size_t n = ig_terms((const uint8_t *)in, strlen(in), got, 16), m = 0;
        /* each expected term alone must be exactly one term, with the same hash */
        const char *p = want;
        while (*want && p) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            uint64_t h[2];
            CHECK(ig_terms((const uint8_t *)p, len, h, 2) == 1, "case %zu: \"%.*s\" is one term", c, (int)len, p);
            exp[m++] = h[0];
            p = bar ? bar + 1 : NULL;
        }
        CHECK(n == m, "case %zu: %zu terms, want %zu", c, n, m);
        for (size_t i = 0; i < n && i < m; i++)
            CHECK(got[i] == exp[i], "case %zu: term %zu differs", c, i);
        CHECK(ig_terms((const uint8_t *)in, strlen(in), NULL, 0) == n, "case %zu: counting only", c);
    }
}

/* ---- random corpora ---- */

/* Random words and separators; invalid bytes only when `raw` (the corpus holds UTF-8 text,
 * a traced text may hold anything). */
static void random_doc(test_rng *r, ig_buf *b, int raw)
{
    static const char *words[] = {"the", "The", "THE", "king", "King", "caf\xc3\xa9", "CAF\xc3\x89", "\xc3\xa9t\xc3\xa9",
                                  "x1", "42", "sea", "seas", "\xe6\xbc\xa2"};
    static const char *seps[] = {" ", " ", " ", ", ", ".\n", "'", "-", "\xe3\x80\x82", "\xff"};
    size_t k = rng_below(r, 40);
    for (size_t j = 0; j < k; j++) {
        const char *w = words[rng_below(r, sizeof words / sizeof *words)];
        ig_buf_append(b, w, strlen(w));
        const char *s = seps[rng_below(r, sizeof seps / sizeof *seps - !raw)];
        ig_buf_append(b, s, strlen(s));
    }
}

static void scores_case(test_rng *r, const char *dir)
{
    size_t nd = 1 + rng_below(r, 12);
    ig_buf *docs = calloc(nd + 1, sizeof *docs);
    ig_source *src = calloc(nd, sizeof *src);
    for (size_t d = 0; d < nd; d++) {
        random_doc(r, &docs[d], 0);
        src[d] = oracle_inline_source(&docs[d], "sea");
    }
    ig_index *idx = NULL;
    if (oracle_build(dir, src, nd, rng_below(r, 2) ? 96 : 1u << 30, 0, 0, &idx))
        goto out;
    ig_buf q = {0};
    random_doc(r, &q, 1);
    double k1 = rng_below(r, 2) ? IG_BM25_K1 : 0.5 + (double)rng_below(r, 20) / 10, b = (double)rng_below(r, 5) / 4;
    double *want = calloc(nd, sizeof *want), *got = calloc(nd, sizeof *got);
    uint64_t *ids = calloc(nd, sizeof *ids);
    for (size_t d = 0; d < nd; d++)
        ids[d] = nd - 1 - d; /* any order */
    brute_scores(docs, nd, q.data, q.len, k1, b, want);
    ig_error e;
    int rc = ig_bm25_scores(idx, q.data, q.len, ids, nd, k1, b, NULL, got, &e);
    CHECK(rc == 0, "scores: %s", e.msg);
    for (size_t d = 0; !rc && d < nd; d++)
        CHECK(close_to(got[d], want[ids[d]]), "doc %llu: %.12g, brute force %.12g", (unsigned long long)ids[d], got[d],
              want[ids[d]]);
    /* the statistics file: written beside the index, read back by a new handle */
    char *file = igi_path_join(dir, "bm25");
    struct stat sb;
    CHECK(stat(file, &sb) == 0, "%s written", file);
    ig_index_close(&idx);
    CHECK(ig_index_open(&idx, dir, &e) == 0, "reopen: %s", e.msg);
    double *again = calloc(nd, sizeof *again);
    CHECK(idx && ig_bm25_scores(idx, q.data, q.len, ids, nd, k1, b, NULL, again, &e) == 0, "scores again: %s", e.msg);
    for (size_t d = 0; idx && d < nd; d++)
        CHECK(again[d] == got[d], "read back: doc %zu", d);
    /* a damaged file is not trusted: the scores stay right and the file is made again */
    ig_index_close(&idx);
    FILE *f = fopen(file, "r+b");
    if (f) {
        fseek(f, (long)rng_below(r, (uint64_t)sb.st_size), SEEK_SET);
        int c = fgetc(f);
        fseek(f, -1, SEEK_CUR);
        fputc(c ^ 0x5a, f);
        fclose(f);
    }
    CHECK(ig_index_open(&idx, dir, &e) == 0, "reopen: %s", e.msg);
    CHECK(idx && ig_bm25_scores(idx, q.data, q.len, ids, nd, k1, b, NULL, again, &e) == 0, "scores: %s", e.msg);
    for (size_t d = 0; idx && d < nd; d++)
        CHECK(close_to(again[d], want[ids[d]]), "damaged file ignored: doc %zu", d);
    uint64_t bad = nd;
    CHECK(ig_bm25_scores(idx, q.data, q.len, &bad, 1, k1, b, NULL, again, &e) == IG_ENOTFOUND, "bad id refused");
    free(file);
    free(again);
    free(want);
    free(got);
    free(ids);
    ig_buf_free(&q);
    ig_index_close(&idx);
out:
    oracle_docs_free(docs, nd, src);
}

/* spans --rank bm25: the kept sources are the best-scoring documents among the span's
 * first `candidates` occurrences, one per distinct text, with the others counted. */
static void spans_case(test_rng *r, const char *dir)
{
    size_t nd = 2 + rng_below(r, 10);
    ig_buf *docs = calloc(nd, sizeof *docs);
    ig_source *src = calloc(nd, sizeof *src);
    for (size_t d = 0; d < nd; d++) {
        {
            if (d && rng_below(r, 3) == 0) { /* a copy of an earlier document */
                const ig_buf *o = &docs[rng_below(r, d)];
                ig_buf_append(&docs[d], o->data, o->len);
            } else {
                random_doc(r, &docs[d], 0);
            }
        }
        src[d] = oracle_inline_source(&docs[d], "the sea");
    }
    ig_index *idx = NULL;
    if (oracle_build(dir, src, nd, rng_below(r, 2) ? 128 : 1u << 30, 0, 0, &idx))
        goto out;
    /* the text: a piece of one document and some words */
    const ig_buf *from = &docs[rng_below(r, nd)];
    size_t a = (size_t)rng_below(r, from->len), l = 1 + (size_t)rng_below(r, from->len - a);
    ig_buf text = {0};
    random_doc(r, &text, 1);
    ig_buf_append(&text, from->data + a, l);
    double *want = calloc(nd, sizeof *want);
    brute_scores(docs, nd, text.data, text.len, IG_BM25_K1, IG_BM25_B, want);
    ig_spans_opts o;
    ig_spans_defaults(&o);
    o.query = (ig_bytes){malloc(text.len + 1), text.len};
    memcpy(o.query.p, text.data, text.len);
    o.min_len = 3;
    o.rank = IG_RANK_BM25;
    o.positions = 1 + rng_below(r, 4);
    o.candidates = 1 + rng_below(r, 6);
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_spans_result res;
    ig_error e;
    int rc = ig_spans_run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "spans: %s", e.msg);
    for (size_t i = 0; !rc && i < res.nspans; i++) {
        const ig_span *s = &res.spans[i];
        /* the candidates: the span's first occurrences in corpus order, their documents */
        size_t cand[64], nc = 0, seen = 0;
        /* a span may end with the document's end (0xFF, the byte that ends each document) */
        size_t sl = (size_t)s->length, end = res.text[s->start + sl - 1] == 0xFF;
        for (size_t d = 0; d < nd && seen < o.candidates; d++)
            for (size_t j = 0; j + sl - end <= docs[d].len && seen < o.candidates; j++)
                if (!memcmp(docs[d].data + j, res.text + s->start, sl - end) && (!end || j + sl - 1 == docs[d].len)) {
                    if (!nc || cand[nc - 1] != d)
                        cand[nc++] = d;
                    seen++;
                }
        /* groups of identical text among them, represented by their first document */
        size_t groups = 0;
        for (size_t x = 0; x < nc; x++) {
            size_t y = 0;
            while (y < x && !(docs[cand[y]].len == docs[cand[x]].len &&
                              !memcmp(docs[cand[y]].data, docs[cand[x]].data, docs[cand[x]].len)))
                y++;
            groups += y == x;
        }
        size_t keep = groups < o.positions ? groups : (size_t)o.positions;
        CHECK(res.nsources[i] == keep, "span %zu: %zu sources, want %zu (\"%.*s\" x%llu)", i, res.nsources[i], keep,
              (int)s->length, res.text + s->start, (unsigned long long)s->count);
        for (size_t k = 0; k < res.nsources[i]; k++) {
            const ig_occurrence *oc = &res.sources[i][k];
            uint64_t d = oc->loc.doc;
            CHECK(close_to(oc->score, want[d]), "span %zu source %zu: score %.12g, brute force %.12g", i, k, oc->score,
                  want[d]);
            if (k)
                CHECK(oc->score < res.sources[i][k - 1].score ||
                          (oc->score == res.sources[i][k - 1].score && d > res.sources[i][k - 1].loc.doc),
                      "span %zu: sources in order", i);
            size_t dups = 0, first = 1;
            for (size_t x = 0; x < nc; x++) {
                if (cand[x] == d || docs[cand[x]].len != docs[d].len || memcmp(docs[cand[x]].data, docs[d].data, docs[d].len))
                    continue;
                dups++;
                if (cand[x] < d)
                    first = 0;
            }
            CHECK(oc->duplicates == dups, "span %zu source %zu: %llu duplicates, want %zu", i, k,
                  (unsigned long long)oc->duplicates, dups);
            CHECK(first, "span %zu: a folded group is shown by its first document", i);
        }
        /* nothing better left out */
        if (res.nsources[i] == keep && keep)
            for (size_t x = 0; x < nc; x++) {
                int kept = 0;
                for (size_t k = 0; k < res.nsources[i]; k++)
                    kept |= docs[cand[x]].len == docs[res.sources[i][k].loc.doc].len &&
                            !memcmp(docs[cand[x]].data, docs[res.sources[i][k].loc.doc].data, docs[cand[x]].len);
                if (!kept)
                    CHECK(want[cand[x]] <= res.sources[i][keep - 1].score + 1e-9, "span %zu: doc %zu left out", i,
                          cand[x]);
            }
    }
    char *js = rc ? NULL : ig_spans_json(&ctx, &o, &res);
    CHECK(rc || (js && (res.nspans == 0 || strstr(js, "\"score\":"))), "JSON carries scores");
    free(js);
    if (!rc)
        ig_spans_result_free(&res);
    ig_fields_free(ig_spans_fields, &o);
    free(want);
    ig_buf_free(&text);
    ig_index_close(&idx);
out:
    oracle_docs_free(docs, nd, src);
}

/* The statistics file is trusted only when it is a regular file of this very index: one from
 * another index of the same size, a FIFO (which would block a read) and a symlink to a device
 * are passed over, and the scores stay those of the index. */
static void foreign_files(const char *tmp)
{
    static const char *a_docs[] = {"the cat sat on a mat", "a dog ran", "the end"};
    static const char *b_docs[] = {"our fox hid in a box", "a cow ate", "the sea"};
    ig_buf docs[2][3] = {{{0}}};
    ig_source src[2][3];
    ig_index *idx[2] = {NULL, NULL};
    char *dir[2] = {igi_aprintf("%s/fa", tmp), igi_aprintf("%s/fb", tmp)};
    for (int k = 0; k < 2; k++) {
        for (int d = 0; d < 3; d++) {
            const char *t = k ? b_docs[d] : a_docs[d];
            ig_buf_append(&docs[k][d], t, strlen(t));
            src[k][d] = oracle_inline_source(&docs[k][d], "x");
        }
        CHECK(strlen(a_docs[0]) == strlen(b_docs[0]), "same sizes");
        if (oracle_build(dir[k], src[k], 3, 1u << 30, 0, 0, &idx[k]))
            return;
    }
    const uint8_t q[] = "the cat and the fox";
    uint64_t ids[3] = {0, 1, 2};
    double want[3], got[3];
    ig_error e;
    brute_scores(docs[1], 3, q, sizeof q - 1, IG_BM25_K1, IG_BM25_B, want);
    CHECK(ig_bm25_scores(idx[0], q, sizeof q - 1, ids, 3, IG_BM25_K1, IG_BM25_B, NULL, got, &e) == 0, "a: %s", e.msg);
    char *fa = igi_path_join(dir[0], "bm25"), *fb = igi_path_join(dir[1], "bm25");
    const char *kinds[] = {"another index's file", "a FIFO", "a symlink to /dev/zero"};
    for (int kind = 0; kind < 3; kind++) {
        ig_index_close(&idx[1]);
        unlink(fb);
        if (kind == 0) {
            char *cmd = igi_aprintf("cp '%s' '%s'", fa, fb);
            CHECK(cmd && system(cmd) == 0, "copy");
            free(cmd);
        } else if (kind == 1) {
            CHECK(mkfifo(fb, 0644) == 0, "mkfifo");
        } else {
            CHECK(symlink("/dev/zero", fb) == 0, "symlink");
        }
        CHECK(ig_index_open(&idx[1], dir[1], &e) == 0, "open b: %s", e.msg);
        int rc = idx[1] ? ig_bm25_scores(idx[1], q, sizeof q - 1, ids, 3, IG_BM25_K1, IG_BM25_B, NULL, got, &e) : -1;
        CHECK(rc == 0, "%s: %s", kinds[kind], e.msg);
        for (int d = 0; !rc && d < 3; d++)
            CHECK(close_to(got[d], want[d]), "%s: doc %d scores %.12g, brute force %.12g", kinds[kind], d, got[d],
                  want[d]);
    }
    free(fa);
    free(fb);
    for (int k = 0; k < 2; k++) {
        ig_index_close(&idx[k]);
        for (int d = 0; d < 3; d++)
            ig_buf_free(&docs[k][d]);
        free(dir[k]);
    }
}

/* The statistics made in one thread while another evaluates on the same handle, as a server
 * does: a query copied the whole index (the statistics' pointer with it) while the other
 * thread set it, a data race ThreadSanitizer reported (this suite runs under it in CI). */
typedef struct {
    ig_index *idx;
    double bits;
    int rc;
} eval_job;

static void *eval_thread(void *arg)
{
    eval_job *j = arg;
    ig_model m;
    ig_model_default(&m);
    const char *t = "the sea is the sea and the ship is on the sea";
    for (int i = 0; i < 20 && !j->rc; i++) {
        ig_eval_result res;
        memset(&res, 0, sizeof res);
        ig_error e;
        j->rc = ig_eval(j->idx, &m, (const uint8_t *)t, strlen(t), 1, NULL, NULL, NULL, &res, &e);
        j->bits = res.bits_per_byte;
        ig_eval_result_free(&res);
    }
    return NULL;
}

static void threads_case(test_rng *r, const char *dir)
{
    ig_buf docs[6] = {{0}};
    ig_source src[6];
    for (size_t d = 0; d < 6; d++) {
        random_doc(r, &docs[d], 0);
        src[d] = oracle_inline_source(&docs[d], "sea");
    }
    ig_index *idx = NULL;
    if (!oracle_build(dir, src, 6, 96, 0, 0, &idx)) { /* several shards */
        eval_job alone = {idx, 0, 0};
        eval_thread(&alone);
        eval_job with = {idx, 0, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, eval_thread, &with) == 0, "thread");
        ig_error e;
        CHECK(ig_bm25_prepare(idx, NULL, &e) == 0, "bm25 prepare beside an eval: %s", e.msg);
        pthread_join(t, NULL);
        CHECK(alone.rc == 0 && with.rc == 0 && alone.bits == with.bits, "eval beside the statistics: %g, alone %g",
              with.bits, alone.bits);
        ig_index_close(&idx);
    }
    for (size_t d = 0; d < 6; d++)
        ig_buf_free(&docs[d]);
}

int main(void)
{
    splitter_cases();
    char tmpl[] = "/tmp/ig-bm25-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp)
        return check_done("bm25");
    test_rng r = {20261125};
    int n = scaled(150);
    for (int c = 0; c < n; c++) {
        char *dir = igi_aprintf("%s/s%d", tmp, c);
        scores_case(&r, dir);
        free(dir);
        dir = igi_aprintf("%s/p%d", tmp, c);
        spans_case(&r, dir);
        free(dir);
    }
    foreign_files(tmp);
    char *tdir = igi_aprintf("%s/threads", tmp);
    threads_case(&r, tdir);
    free(tdir);
    ig_error e;
    igi_remove_tree(tmp, &e);
    return check_done("bm25");
}
