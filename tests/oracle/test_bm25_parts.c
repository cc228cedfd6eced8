/*
 * Oracle test of BM25 over a corpus split into parts (query.h, ig_bm25_part_get,
 * ig_bm25_part_add, ig_bm25_docs_get, ig_bm25_score): random corpora (mixed case, accents,
 * punctuation, repeated documents) are built as one index and as 2 to 4 indexes of contiguous
 * runs of their documents; for random texts, every document's score from the parts' summed
 * statistics and the holding part's term frequencies must equal ig_bm25_scores on the whole
 * index to the bit (for several k1 and b), and identical documents, wherever they lie, must
 * have equal hashes and sizes (what folds them).
 *
 * Fixed seeds: a failure replays identically. IG_ORACLE_SCALE scales the number of cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

static void gen_doc(test_rng *r, ig_buf *b)
{
    static const char *words[] = {"The", "lord", "SAID", "unto", "a", "été", "Été", "日本", "x1", "moses", ",", ".", "Moses!", "x1y"};
    size_t n = 1 + rng_below(r, 12);
    for (size_t i = 0; i < n; i++) {
        const char *w = words[rng_below(r, sizeof words / sizeof *words)];
        ig_buf_append(b, w, strlen(w));
        ig_buf_append(b, " ", 1);
    }
}

int main(void)
{
    char tmpl[] = "/tmp/igbm25partsXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    test_rng rng = {20261130};
    long scored = 0, folded = 0;
    for (int ci = 0; ci < scaled(10); ci++) {
        int np = 2 + (int)rng_below(&rng, 3);
        size_t nd = (size_t)np + rng_below(&rng, 60);
        ig_buf *docs = calloc(nd, sizeof *docs);
        ig_source *src = calloc(nd, sizeof *src);
        for (size_t i = 0; i < nd; i++) {
            if (i && rng_below(&rng, 4) == 0) { /* a copy of an earlier document */
                const ig_buf *o = &docs[rng_below(&rng, i)];
                docs[i].len = 0;
                ig_buf_append(&docs[i], o->data, o->len);
            } else {
                gen_doc(&rng, &docs[i]);
            }
            src[i] = oracle_inline_source(&docs[i], "x");
        }
        size_t cut[5];
        oracle_cut_parts(&rng, nd, np, cut);
        ig_index *whole = NULL, *parts[4] = {0};
        char dir[300];
        snprintf(dir, sizeof dir, "%s/c%d", tmpl, ci);
        int ok = !oracle_build(dir, src, nd, 1 + rng_below(&rng, 2000), 0, 0, &whole);
        for (int k = 0; ok && k < np; k++) {
            snprintf(dir, sizeof dir, "%s/c%d-p%d", tmpl, ci, k);
            ok = !oracle_build(dir, src + cut[k], cut[k + 1] - cut[k], 1 + rng_below(&rng, 2000), 0, 0, &parts[k]);
        }
        uint64_t *ids = malloc(nd * sizeof *ids);
        double *want = malloc(nd * sizeof *want);
        ig_bm25_doc *bd = calloc(nd, sizeof *bd);
        for (int t = 0; ok && t < scaled(6); t++) {
            ig_buf text = {0};
            gen_doc(&rng, &text);
            ig_bm25_part sum = {0};
            ig_error e;
            for (int k = 0; k < np; k++) {
                ig_bm25_part one;
                int rc = ig_bm25_part_get(parts[k], text.data, text.len, NULL, k ? &one : &sum, &e);
                CHECK(rc == 0, "part stats: %s", e.msg);
                if (k && !rc) {
                    CHECK(ig_bm25_part_add(&sum, &one, &e) == 0, "add: %s", e.msg);
                    ig_bm25_part_free(&one);
                }
                /* the documents of this part, numbered as in the whole corpus */
                size_t n = cut[k + 1] - cut[k];
                for (size_t j = 0; j < n; j++)
                    ids[j] = j;
                rc = ig_bm25_docs_get(parts[k], text.data, text.len, ids, n, NULL, bd + cut[k], &e);
                CHECK(rc == 0, "docs: %s", e.msg);
            }
            for (int kb = 0; kb < 3; kb++) {
                double k1 = kb == 0 ? IG_BM25_K1 : 0.1 * (double)rng_below(&rng, 40), b = kb == 0 ? IG_BM25_B : 0.25 * (double)rng_below(&rng, 5);
                for (size_t j = 0; j < nd; j++)
                    ids[j] = j;
                int rc = ig_bm25_scores(whole, text.data, text.len, ids, nd, k1, b, NULL, want, &e);
                CHECK(rc == 0, "scores: %s", e.msg);
                for (size_t j = 0; !rc && j < nd; j++) {
                    double got = ig_bm25_score(&sum, bd[j].dl, bd[j].tf, k1, b);
                    CHECK(!memcmp(&got, &want[j], sizeof got), "c%d text %d doc %zu k1 %g b %g: %.17g, one index %.17g", ci,
                          t, j, k1, b, got, want[j]);
                    scored++;
                }
            }
            for (size_t i = 0; i < nd; i++)
                for (size_t j = i + 1; j < nd; j++) {
                    int same = docs[i].len == docs[j].len && !memcmp(docs[i].data, docs[j].data, docs[i].len);
                    CHECK(!same || (bd[i].hash == bd[j].hash && bd[i].len == bd[j].len), "identical docs %zu and %zu", i, j);
                    folded += same;
                }
            ig_bm25_docs_free(bd, nd);
            ig_bm25_part_free(&sum);
            ig_buf_free(&text);
        }
        free(ids);
        free(want);
        free(bd);
        ig_index_close(&whole);
        for (int k = 0; k < np; k++)
            ig_index_close(&parts[k]);
        oracle_docs_free(docs, nd, src);
    }
    printf("bm25 from parts: %ld scores compared, %ld pairs of identical documents\n", scored, folded);
    ig_error e;
    igi_remove_tree(tmpl, &e);
    return check_done("bm25_parts");
}
