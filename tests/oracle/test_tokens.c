/*
 * Oracle for token indexes in the infini-gram layout: random token corpora (small
 * vocabularies, ids above 255 so that little-endian byte order differs from numeric order)
 * are written in the layout (u8, u16, u32 ids; pointer widths 1 to 5; v4 and v6; one or
 * several shards), attached, and every answer checked against brute force over the id
 * sequences: counts, positions (document, token offset) in corpus order, ∞-gram and n-gram
 * next-token distributions, documents and metadata. Then hostile directories: truncated,
 * mismatched, misaligned, unordered and v5 indexes give errors naming the file, and no file
 * of an attached directory is ever modified.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "oracle.h"
#include "infinigram/tokens.h"
#include "infinigram/explain.h"
#include "official_writer.h"
#include "index/index_impl.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct corpus {
    uint32_t **doc; ///< token ids per document
    size_t *len;
    size_t ndocs;
    uint32_t tw;
} corpus;

static void corpus_free(corpus *c)
{
    for (size_t d = 0; d < c->ndocs; d++)
        free(c->doc[d]);
    free(c->doc);
    free(c->len);
}

/* ---------------------------------------------------------------- the layout, written */

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    if (n)
        CHECK(fwrite(p, 1, n, f) == n, "short write %s", path);
    fclose(f);
}

/* The corpus as an index in the official layout (official_writer.h), into a fresh dir; pw 0:
 * the indexer's own pointer width. */
static void write_index(const corpus *c, const char *dir, int v6, uint32_t nshards, uint32_t pw, int meta)
{
    igi_remove_tree(dir, NULL);
    official_doc *docs = calloc(c->ndocs, sizeof *docs);
    for (size_t d = 0; docs && d < c->ndocs; d++)
        docs[d] = (official_doc){c->doc[d], c->len[d]};
    official_opts o = {.token_width = (int)c->tw, .ptr_width = (int)pw, .layout = v6 ? OFFICIAL_V6 : OFFICIAL_V4,
                       .shards = nshards < c->ndocs ? nshards : c->ndocs, .metadata = meta != 0};
    ig_error e;
    CHECK(docs && official_write(dir, docs, c->ndocs, &o, &e) == 0, "writing %s: %s", dir, e.msg);
    free(docs);
}

/* ---------------------------------------------------------------- brute force */

static uint32_t end_id(uint32_t tw) { return ig_token_end(tw); }

/* Occurrences of p (np ids; a last id of end_id means "then the document ends"). */
static uint64_t brute_count(const corpus *c, const uint32_t *p, size_t np)
{
    if (!np) {
        uint64_t all = 0;
        for (size_t d = 0; d < c->ndocs; d++)
            all += c->len[d] + 1;
        return all;
    }
    int ends = p[np - 1] == end_id(c->tw);
    size_t m = ends ? np - 1 : np;
    uint64_t k = 0;
    for (size_t d = 0; d < c->ndocs; d++) {
        if (ends) {
            /* the pattern then the separator: at the document's end (the separator that
             * precedes every document counts as the end of the one before; a lone end
             * pattern counts every separator) */
            if (!m)
                k++;
            else if (c->len[d] >= m && !memcmp(c->doc[d] + c->len[d] - m, p, m * sizeof *p))
                k++;
            continue;
        }
        for (size_t i = 0; i + m <= c->len[d]; i++)
            if (!memcmp(c->doc[d] + i, p, m * sizeof *p))
                k++;
    }
    return k;
}

/* Next-token counts after p (no end id inside): into cnt (ids < V, or V for <end>). The
 * empty context counts every token, each document's separator as an <end>. */
static void brute_next(const corpus *c, const uint32_t *p, size_t m, uint64_t *cnt, uint32_t V)
{
    memset(cnt, 0, (V + 1) * sizeof *cnt);
    for (size_t d = 0; d < c->ndocs; d++)
        for (size_t i = 0; i + m <= c->len[d]; i++)
            if (!m || !memcmp(c->doc[d] + i, p, m * sizeof *p))
                cnt[i + m < c->len[d] ? c->doc[d][i + m] : V]++;
}

/* ---------------------------------------------------------------- checks */

static void pattern_bytes(const corpus *c, const uint32_t *p, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < c->tw; k++)
            out[i * c->tw + k] = (uint8_t)(p[i] >> (8 * k));
}

static char *ids_text(const uint32_t *p, size_t n)
{
    ig_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        char x[16];
        int l = snprintf(x, sizeof x, "%s%u", i ? "," : "", p[i]);
        ig_buf_append(&b, x, (size_t)l);
    }
    ig_buf_append(&b, "", 1);
    return (char *)b.data;
}

static void check_counts(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    uint32_t p[8];
    uint8_t pb[32];
    for (int q = 0; q < 60; q++) {
        size_t np = 1 + rng_below(r, 4);
        size_t d = rng_below(r, c->ndocs);
        if (rng_below(r, 3) && c->len[d] >= np) { /* a substring of a document */
            size_t i = rng_below(r, c->len[d] - np + 1);
            memcpy(p, c->doc[d] + i, np * sizeof *p);
        } else
            for (size_t i = 0; i < np; i++)
                p[i] = (uint32_t)rng_below(r, V);
        if (rng_below(r, 5) == 0) /* then the document ends */
            p[np++] = end_id(c->tw);
        pattern_bytes(c, p, np, pb);
        uint64_t want = brute_count(c, p, np), got = ig_count(idx, pb, np * c->tw);
        CHECK(got == want, "%s: count of %zu ids: %" PRIu64 " != %" PRIu64, what, np, got, want);
        /* positions in corpus order: documents in order, offsets in order */
        ig_pos pos[64];
        uint64_t total = 0;
        size_t k = ig_positions(idx, pb, np * c->tw, pos, 64, &total);
        CHECK(total == want, "%s: positions total %" PRIu64 " != %" PRIu64, what, total, want);
        if (p[np - 1] == end_id(c->tw)) { /* document ends: each listed at its document and length */
            ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
            ig_count_opts o;
            ig_count_defaults(&o);
            char *ids = ids_text(p, np);
            o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
            o.positions = 64;
            ig_count_result res;
            ig_error e;
            int rc = ig_op_count.run(&ctx, &o, &res, &e);
            CHECK(rc == 0 && res.count == want, "%s: count op of an end pattern: %s", what, rc ? e.msg : "");
            size_t j = 0, m = np - 1;
            for (size_t dd = 0; !rc && dd < c->ndocs && j < res.nocc; dd++)
                if (c->len[dd] >= m && !memcmp(c->doc[dd] + c->len[dd] - m, p, m * sizeof *p)) {
                    CHECK(res.occ[j].loc.doc == dd && res.occ[j].loc.offset == c->len[dd] - m,
                          "%s: end pattern position %zu: doc %" PRIu64 " token %" PRIu64 ", expected doc %zu token %zu",
                          what, j, res.occ[j].loc.doc, res.occ[j].loc.offset, dd, c->len[dd] - m);
                    j++;
                }
            CHECK(rc || j == res.nocc, "%s: end pattern: %zu positions listed, %zu expected", what, res.nocc, j);
            if (!rc)
                ig_count_result_free(&res);
            free(ids);
            continue;
        }
        size_t j = 0;
        for (size_t dd = 0; dd < c->ndocs && j < k; dd++)
            for (size_t i = 0; i + np <= c->len[dd] && j < k; i++)
                if (!memcmp(c->doc[dd] + i, p, np * sizeof *p)) {
                    uint64_t doc;
                    ig_doc info;
                    CHECK(!ig_locate_doc(idx, pos[j], &doc) && doc == dd, "%s: position %zu: doc %" PRIu64 " != %zu",
                          what, j, doc, dd);
                    CHECK(!ig_doc_get(idx, dd, &info, NULL) && (pos[j].offset - info.start) / c->tw == i,
                          "%s: position %zu: token offset", what, j);
                    j++;
                }
        CHECK(j == k, "%s: %zu positions listed, %zu expected", what, k, j);
    }
    CHECK(ig_count(idx, NULL, 0) == brute_count(c, NULL, 0), "%s: count of the empty pattern", what);
}

/* The weighted mixture and the selective interpolation by brute force, from their formulas:
 * P over ids 0..V−1 and V for <end>, into prob (V + 1 entries). 0 when undefined. */
static int brute_mixture(const corpus *c, const uint32_t *p, size_t np, size_t star, const ig_model *m, uint32_t V,
                         double *prob)
{
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
    memset(prob, 0, (V + 1) * sizeof *prob);
    double wsum = 0;
    int levels = 0;
    if (m->kind == IG_MODEL_WEIGHTED) {
        size_t top = star, bottom = m->min_len ? m->min_len : 1;
        if (m->max_len && m->max_len < top)
            top = m->max_len;
        for (size_t ell = bottom; ell <= top; ell++) { /* every length, no grouping */
            double x = (double)ell, w = m->weight == IG_WEIGHT_LINEAR      ? x
                                    : m->weight == IG_WEIGHT_QUADRATIC   ? x * x
                                    : m->weight == IG_WEIGHT_EXPONENTIAL ? pow(m->beta, x - (double)top)
                                                                         : 1 / (1 + exp(-m->sig_slope * (x - m->sig_mid)));
            brute_next(c, p + np - ell, ell, cnt, V);
            uint64_t total = 0;
            for (uint32_t t = 0; t <= V; t++)
                total += cnt[t];
            for (uint32_t t = 0; t <= V; t++)
                prob[t] += w * (double)cnt[t] / (double)total;
            wsum += w;
            levels++;
        }
        for (uint32_t t = 0; t <= V && wsum > 0; t++)
            prob[t] /= wsum;
    } else {
        uint64_t last = 0;
        double w = 1;
        for (size_t ell = star; ell >= 1; ell--) {
            brute_next(c, p + np - ell, ell, cnt, V);
            if (m->sbi)
                cnt[V] = 0;
            uint64_t total = 0;
            for (uint32_t t = 0; t <= V; t++)
                total += cnt[t];
            if (total <= last)
                continue;
            for (uint32_t t = 0; t <= V; t++)
                prob[t] += w * (double)cnt[t];
            wsum += w * (double)total;
            w *= 0.1;
            last = total;
            if (m->interp_k > 0 && ++levels == m->interp_k)
                break;
            levels += m->interp_k <= 0;
        }
        for (uint32_t t = 0; t <= V && wsum > 0; t++)
            prob[t] /= wsum;
    }
    free(cnt);
    return wsum > 0;
}

static void check_mixtures(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    double *want = malloc((V + 1) * sizeof *want);
    for (int q = 0; q < 12; q++) {
        uint32_t p[8];
        size_t np = 1 + rng_below(r, 6), d = rng_below(r, c->ndocs);
        if (c->len[d] >= np) {
            size_t i = rng_below(r, c->len[d] - np + 1);
            memcpy(p, c->doc[d] + i, np * sizeof *p);
        } else
            for (size_t i = 0; i < np; i++)
                p[i] = (uint32_t)rng_below(r, V);
        ig_predict_opts o;
        ig_predict_defaults(&o);
        char *ids = ids_text(p, np);
        o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
        if (q % 2) {
            o.model.weighted = (int)rng_below(r, 4);
            if (rng_below(r, 3) == 0)
                o.model.min_len = 1 + rng_below(r, 2);
            if (rng_below(r, 3) == 0)
                o.model.max_len = (o.model.min_len ? o.model.min_len : 1) + rng_below(r, 3);
        } else {
            static const int64_t ks[] = {1, 2, 3, -1};
            o.model.interp = ks[rng_below(r, 4)];
            o.model.sbi = rng_below(r, 2);
        }
        ig_predict_result res;
        ig_error e;
        int rc = ig_op_predict.run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "%s: predict (mixture): %s", what, e.msg);
        free(ids);
        if (rc)
            continue;
        size_t star = np;
        while (star > 0 && !brute_count(c, p + np - star, star))
            star--;
        if (res.dist.fallback) { /* no length in range: the ∞-gram, checked elsewhere */
            ig_predict_result_free(&res);
            continue;
        }
        int defined = brute_mixture(c, p, np, star, &res.model, V, want);
        CHECK(defined == res.dist.defined, "%s: mixture defined %d, brute force %d", what, res.dist.defined, defined);
        size_t positive = 0;
        for (uint32_t t = 0; t <= V; t++)
            positive += want[t] > 0;
        CHECK(!defined || res.nsyms == positive, "%s: mixture has %zu tokens, brute force %zu (%s)", what, res.nsyms,
              positive, q % 2 ? "weighted" : "interp");
        for (size_t i = 0; defined && i < res.nsyms; i++) {
            uint32_t id = ig_token_at(res.syms[i].bytes, c->tw), slot = id == end_id(c->tw) ? V : id;
            CHECK(slot <= V && fabs(res.syms[i].prob - want[slot]) < 1e-12, "%s: mixture P(%u) = %.15g, brute force %.15g",
                  what, id, res.syms[i].prob, slot <= V ? want[slot] : -1.0);
        }
        ig_predict_result_free(&res);
    }
    free(want);
}

/* Stupid Backoff by brute force: per token, the longest ℓ ≤ ℓτ it follows, λ^(ℓτ−ℓ)·cnt/cnt */
static void check_backoff(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
    double *want = malloc((V + 1) * sizeof *want);
    for (int q = 0; q < 6; q++) {
        uint32_t p[8];
        size_t np = 1 + rng_below(r, 5), d = rng_below(r, c->ndocs);
        for (size_t i = 0; i < np; i++)
            p[i] = c->len[d] > i ? c->doc[d][i] : (uint32_t)rng_below(r, V);
        uint64_t tau = 1 + rng_below(r, 3);
        ig_backoff_opts o;
        ig_backoff_defaults(&o);
        char *ids = ids_text(p, np);
        o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
        o.threshold = tau;
        ig_backoff_result res;
        ig_error e;
        int rc = ig_op_backoff.run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "%s: backoff: %s", what, e.msg);
        free(ids);
        if (rc)
            continue;
        size_t lt = np;
        while (lt > 0 && brute_count(c, p + np - lt, lt) < tau)
            lt--;
        CHECK(res.ltau == lt, "%s: ℓτ %" PRIu64 " != %zu", what, res.ltau, lt);
        for (uint32_t t = 0; t <= V; t++)
            want[t] = -1;
        for (size_t ell = lt + 1; ell-- > 0;) {
            brute_next(c, p + np - ell, ell, cnt, V);
            uint64_t total = 0;
            for (uint32_t t = 0; t <= V; t++)
                total += cnt[t];
            for (uint32_t t = 0; t <= V; t++)
                if (cnt[t] && want[t] < 0)
                    want[t] = pow(0.4, (double)(lt - ell)) * (double)cnt[t] / (double)total;
        }
        size_t k = 0;
        for (uint32_t t = 0; t <= V; t++)
            k += want[t] >= 0;
        CHECK(res.ncands == k, "%s: backoff: %zu candidates, %zu expected", what, res.ncands, k);
        for (size_t i = 0; i < res.ncands; i++) {
            uint32_t id = ig_token_at(res.cands[i].bytes, c->tw), slot = id == end_id(c->tw) ? V : id;
            CHECK(slot <= V && fabs(res.cands[i].score - want[slot]) < 1e-12, "%s: backoff S(%u) %g, brute force %g", what,
                  id, res.cands[i].score, slot <= V ? want[slot] : -1.0);
        }
        ig_backoff_result_free(&res);
    }
    free(cnt);
    free(want);
}

static void check_models(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    for (int q = 0; q < 30; q++) {
        uint32_t p[8];
        size_t np = rng_below(r, 6);
        size_t d = rng_below(r, c->ndocs);
        if (rng_below(r, 2) && c->len[d] >= np) {
            size_t i = rng_below(r, c->len[d] - np + 1);
            memcpy(p, c->doc[d] + i, np * sizeof *p);
        } else
            for (size_t i = 0; i < np; i++)
                p[i] = (uint32_t)rng_below(r, V);
        int ngram = rng_below(r, 3) == 0;
        ig_predict_opts o;
        ig_predict_defaults(&o);
        char *ids = ids_text(p, np);
        o.ids.p = (uint8_t *)ids;
        o.ids.n = strlen(ids);
        if (ngram)
            o.model.n = 1 + rng_below(r, 4);
        ig_predict_result res;
        ig_error e;
        int rc = ig_op_predict.run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "%s: predict: %s", what, e.msg);
        free(ids);
        if (rc)
            continue;
        /* brute force: the longest suffix that occurs, or n − 1 */
        size_t ell = np;
        while (ell > 0 && !brute_count(c, p + np - ell, ell))
            ell--;
        CHECK(res.dist.longest == ell, "%s: ℓ* %" PRIu64 " != %zu", what, res.dist.longest, ell);
        size_t use = ngram ? (size_t)o.model.n - 1 : ell;
        if (ngram && (use > np || use > ell)) {
            CHECK(!res.dist.defined, "%s: n-gram of an unseen context is undefined", what);
            ig_predict_result_free(&res);
            continue;
        }
        brute_next(c, p + np - use, use, cnt, V);
        uint64_t total = 0;
        size_t distinct = 0;
        for (uint32_t t = 0; t <= V; t++) {
            total += cnt[t];
            distinct += cnt[t] > 0;
        }
        CHECK(res.nsyms == distinct, "%s: %zu next tokens, %zu expected (context %zu ids, suffix %zu)", what,
              res.nsyms, distinct, np, use);
        CHECK(res.dist.suffix_count == total, "%s: suffix count %" PRIu64 " != %" PRIu64, what, res.dist.suffix_count,
              total);
        for (size_t i = 0; i < res.nsyms; i++) {
            uint32_t id = ig_token_at(res.syms[i].bytes, c->tw);
            uint32_t slot = id == end_id(c->tw) ? V : id;
            CHECK(slot <= V && res.syms[i].count == cnt[slot], "%s: next token %u: count %" PRIu64 " != %" PRIu64, what,
                  id, res.syms[i].count, slot <= V ? cnt[slot] : 0);
            CHECK(fabs(res.syms[i].prob - (double)res.syms[i].count / (double)total) < 1e-12, "%s: prob of %u", what, id);
            if (i)
                CHECK(res.syms[i - 1].prob >= res.syms[i].prob, "%s: candidates most probable first", what);
        }
        ig_predict_result_free(&res);
    }
    free(cnt);
}

/* Seeded generation: every token has the probability the ∞-gram gives it after the prompt
 * and the tokens before it, recomputed from scratch by brute force; the same seed gives the
 * same tokens. */
static void check_generation(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    for (int q = 0; q < 4; q++) {
        size_t d = rng_below(r, c->ndocs), np = c->len[d] < 3 ? c->len[d] : 3;
        ig_generate_opts o;
        ig_generate_defaults(&o);
        char *ids = ids_text(c->doc[d], np);
        if (np) {
            o.ids.p = (uint8_t *)ids;
            o.ids.n = strlen(ids);
        }
        o.seed = rng_next(r);
        o.max = 30;
        o.no_stop_at_end = q & 1;
        ig_generate_result g1, g2;
        ig_error e;
        int rc = ig_op_generate.run(&ctx, &o, &g1, &e);
        CHECK(rc == 0, "%s: generate: %s", what, e.msg);
        if (rc) {
            free(ids);
            continue;
        }
        CHECK(ig_op_generate.run(&ctx, &o, &g2, &e) == 0 && g2.len == g1.len && !memcmp(g1.text, g2.text, g1.len),
              "%s: the same seed gives the same tokens", what);
        ig_generate_result_free(&g2);
        size_t n = np + g1.len / c->tw;
        uint32_t *all = malloc((n + 1) * sizeof *all);
        memcpy(all, c->doc[d], np * sizeof *all);
        for (size_t i = 0; i < g1.len / c->tw; i++)
            all[np + i] = ig_token_at(g1.text + i * c->tw, c->tw);
        CHECK(g1.nsteps == g1.len / c->tw, "%s: one step per token", what);
        for (size_t i = 0; i < g1.nsteps; i++) {
            size_t at = np + i, ell = at;
            while (ell > 0 && !brute_count(c, all + at - ell, ell))
                ell--;
            brute_next(c, all + at - ell, ell, cnt, V);
            uint64_t total = 0;
            for (uint32_t t = 0; t <= V; t++)
                total += cnt[t];
            uint64_t k = all[at] < V ? cnt[all[at]] : 0;
            /* the model's probability, as for bytes: before <end> is left out (no_stop_at_end) */
            double want = total ? (double)k / (double)total : 0;
            CHECK(k > 0 && fabs(g1.steps[i].prob - want) < 1e-9 * (want > 1 ? want : 1),
                  "%s: step %zu: token %u has probability %g, brute force %g", what, i, all[at], g1.steps[i].prob, want);
            CHECK(g1.steps[i].effective_n == ell + 1, "%s: step %zu: effective n", what, i);
        }
        /* prob of what was generated: the product of its steps' probabilities */
        if (g1.nsteps) {
            ig_prob_opts po;
            ig_prob_defaults(&po);
            po.ids = (ig_bytes){(uint8_t *)ids, np ? strlen(ids) : 0};
            char *next = ids_text(all + np, g1.nsteps);
            po.next_ids = (ig_bytes){(uint8_t *)next, strlen(next)};
            po.model.infgram = 1;
            ig_prob_result pr;
            double want = 1;
            for (size_t i = 0; i < g1.nsteps; i++)
                want *= g1.steps[i].prob;
            rc = ig_op_prob.run(&ctx, &po, &pr, &e);
            CHECK(rc == 0 && pr.nfactors == g1.nsteps && fabs(pr.prob - want) <= 1e-9 * want,
                  "%s: prob of the generated tokens %g, steps give %g (%s)", what, rc ? 0 : pr.prob, want, rc ? e.msg : "");
            if (!rc)
                ig_prob_result_free(&pr);
            free(next);
        }
        free(all);
        free(ids);
        ig_generate_result_free(&g1);
    }
    free(cnt);
}

/* spans: maximal runs of a text's tokens that occur, by brute force over the text's starts */
static void check_spans(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    for (int q = 0; q < 4; q++) {
        uint32_t t[40];
        size_t n = 5 + rng_below(r, 30);
        for (size_t i = 0; i < n;) { /* pieces of documents and noise */
            size_t d = rng_below(r, c->ndocs);
            if (rng_below(r, 3) && c->len[d]) {
                size_t a = rng_below(r, c->len[d]), k = 1 + rng_below(r, 8);
                for (; k && a < c->len[d] && i < n; k--)
                    t[i++] = c->doc[d][a++];
            } else
                t[i++] = (uint32_t)rng_below(r, V);
        }
        uint64_t min_len = 1 + rng_below(r, 3), ms[40];
        for (size_t i = 0; i < n; i++) {
            ms[i] = 0;
            while (i + ms[i] < n && brute_count(c, t + i, ms[i] + 1))
                ms[i]++;
        }
        ig_spans_opts o;
        ig_spans_defaults(&o);
        char *ids = ids_text(t, n);
        o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
        o.min_len = min_len;
        o.positions = 2;
        ig_spans_result res;
        ig_error e;
        int rc = ig_op_spans.run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "%s: spans: %s", what, e.msg);
        free(ids);
        if (rc)
            continue;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (ms[i] < min_len || (i && ms[i - 1] > ms[i]))
                continue;
            CHECK(k < res.nspans && res.spans[k].start == i && res.spans[k].length == ms[i] &&
                      res.spans[k].count == brute_count(c, t + i, ms[i]),
                  "%s: span %zu at token %zu of length %" PRIu64, what, k, i, ms[i]);
            k++;
        }
        CHECK(k == res.nspans, "%s: %zu spans, %zu expected", what, res.nspans, k);
        ig_spans_result_free(&res);
    }
}

/* eval: every position's probability by brute force, summed as logs with the floor */
static void check_eval(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    uint32_t t[40];
    size_t n = 2 + rng_below(r, 30);
    size_t d = rng_below(r, c->ndocs);
    for (size_t i = 0; i < n; i++) /* mostly a document's run, sometimes noise */
        t[i] = c->len[d] > i && rng_below(r, 5) ? c->doc[d][i] : (uint32_t)rng_below(r, V);
    int ngram = rng_below(r, 2);
    int64_t L = rng_below(r, 3) ? 100 : 2;
    ig_eval_opts o;
    ig_eval_defaults(&o);
    char *ids = ids_text(t, n);
    o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
    o.model.max_context = L;
    if (ngram)
        o.model.n = 1 + rng_below(r, 3);
    ig_eval_op_result res;
    ig_error e;
    int rc = ig_op_eval.run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "%s: eval: %s", what, e.msg);
    free(ids);
    if (rc)
        return;
    double sum = 0;
    uint64_t zeros = 0;
    for (size_t i = 1; i < n; i++) {
        size_t from = (int64_t)i > L ? i - (size_t)L : 0, ell = i - from;
        while (ell > 0 && !brute_count(c, t + i - ell, ell))
            ell--;
        size_t k = ngram ? (size_t)o.model.n - 1 : ell;
        double p = 0;
        if (k <= ell) {
            uint64_t ck = brute_count(c, t + i - k, k), ct = brute_count(c, t + i - k, k + 1);
            p = ck ? (double)ct / (double)ck : 0;
        }
        zeros += p == 0;
        sum += p > 0 ? log(p) : log(1e-10);
    }
    CHECK(res.r.scored == n - 1 && res.r.zero_prob == zeros && fabs(res.r.sum_ln - sum) < 1e-9 * (1 + fabs(sum)),
          "%s: eval of %zu ids: Σ ln P %g (%" PRIu64 " zeros), brute force %g (%" PRIu64 ")", what, n, res.r.sum_ln,
          res.r.zero_prob, sum, zeros);
    ig_eval_op_result_free(&res);
}

/* search: a document matches when every clause has a term in it; hits are the occurrences of
 * every clause's terms in it (brute force over the documents, no sampling) */
static size_t occ_in(const uint32_t *doc, size_t len, const uint32_t *p, size_t m)
{
    size_t k = 0;
    for (size_t i = 0; i + m <= len; i++)
        k += !memcmp(doc + i, p, m * sizeof *p);
    return k;
}

static void check_search(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    for (int q = 0; q < 4; q++) {
        uint32_t terms[3][2][2]; /* clauses × terms × ids */
        size_t nc = 1 + rng_below(r, 3), nt[3], tl[3][2];
        char query[512];
        size_t at = 0;
        for (size_t cl = 0; cl < nc; cl++) {
            nt[cl] = 1 + rng_below(r, 2);
            at += (size_t)snprintf(query + at, sizeof query - at, "%s%s", cl ? " AND " : "", nt[cl] > 1 ? "(" : "");
            for (size_t t = 0; t < nt[cl]; t++) {
                tl[cl][t] = 1 + rng_below(r, 2);
                size_t d = rng_below(r, c->ndocs);
                for (size_t i = 0; i < tl[cl][t]; i++)
                    terms[cl][t][i] = c->len[d] > i + 1 ? c->doc[d][i + 1] : (uint32_t)rng_below(r, V);
                at += (size_t)snprintf(query + at, sizeof query - at, "%s\"%u%s", t ? " OR " : "", terms[cl][t][0],
                                       tl[cl][t] > 1 ? "," : "");
                if (tl[cl][t] > 1)
                    at += (size_t)snprintf(query + at, sizeof query - at, "%u", terms[cl][t][1]);
                at += (size_t)snprintf(query + at, sizeof query - at, "\"");
            }
            if (nt[cl] > 1)
                at += (size_t)snprintf(query + at, sizeof query - at, ")");
        }
        ig_search_opts o;
        ig_search_defaults(&o);
        o.query = (ig_bytes){(uint8_t *)query, strlen(query)};
        o.limit = 1000;
        ig_search_op_result res;
        ig_error e;
        int rc = ig_op_search.run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "%s: search %s: %s", what, query, e.msg);
        if (rc)
            continue;
        size_t matched = 0, listed = 0;
        for (size_t d = 0; d < c->ndocs; d++) {
            uint64_t hits = 0;
            int all = 1;
            for (size_t cl = 0; cl < nc; cl++) {
                uint64_t h = 0;
                for (size_t t = 0; t < nt[cl]; t++) {
                    int again = 0; /* a term written twice in a clause is searched once */
                    for (size_t u = 0; u < t; u++)
                        again |= tl[cl][u] == tl[cl][t] && !memcmp(terms[cl][u], terms[cl][t], tl[cl][t] * sizeof(uint32_t));
                    if (!again)
                        h += occ_in(c->doc[d], c->len[d], terms[cl][t], tl[cl][t]);
                }
                all &= h > 0;
                hits += h;
            }
            if (!all)
                continue;
            matched++;
            CHECK(listed < res.ndocs && res.docs[listed].loc.doc == d && res.docs[listed].hit.hits == hits,
                  "%s: search %s: document %zu (%" PRIu64 " hits)", what, query, d, hits);
            listed++;
        }
        CHECK(res.documents_total == matched && !res.approximate, "%s: search %s: %" PRIu64 " documents, %zu expected",
              what, query, res.documents_total, matched);
        ig_search_op_result_free(&res);
    }
}

/* explain: the n-gram profile (every suffix length, its count and how often the focus follows)
 * and each candidate's total, by brute force */
static void check_explain(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    (void)V;
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    size_t d = rng_below(r, c->ndocs), np = c->len[d] < 5 ? c->len[d] : 5;
    if (!np)
        return;
    uint32_t p[6];
    memcpy(p, c->doc[d], np * sizeof *p);
    ig_explain_opts o;
    ig_explain_defaults(&o);
    char *ids = ids_text(p, np);
    o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
    ig_explain_result res;
    ig_error e;
    int rc = ig_op_explain.run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "%s: explain: %s", what, e.msg);
    free(ids);
    if (rc)
        return;
    uint32_t q[8];
    for (size_t i = 0; i < res.nprofile; i++) {
        size_t ell = (size_t)res.profile[i].length;
        memcpy(q, p + np - ell, ell * sizeof *q);
        q[ell] = ig_token_at(res.focus, c->tw);
        CHECK(res.profile[i].count == brute_count(c, q, ell) && res.profile[i].continue_count == brute_count(c, q, ell + 1),
              "%s: explain profile at ℓ = %zu", what, ell);
    }
    for (size_t i = 0; i < res.ncands; i++) {
        size_t ell = (size_t)res.cands[i].matched;
        memcpy(q, p + np - ell, ell * sizeof *q);
        q[ell] = ig_token_at(res.cands[i].sym.bytes, c->tw);
        CHECK(res.cands[i].total == brute_count(c, q, ell + 1), "%s: explain candidate %zu total", what, i);
    }
    ig_explain_result_free(&res);
}

/* mix: each candidate's corpus probability is the ∞-gram's next-token probability (brute
 * force), mixed with the LLM's as λ·P_corpus + (1−λ)·P_llm, renormalised */
static void check_mix(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    size_t d = rng_below(r, c->ndocs), np = 1 + rng_below(r, 3); /* short: a next-token table's contexts too */
    if (np > c->len[d])
        np = c->len[d];
    uint32_t p[4];
    memcpy(p, c->doc[d], np * sizeof *p);
    uint32_t cand[4];
    double lp[4] = {-0.5, -1, -2, -3}, raw[4], sum = 0;
    char llm[512];
    size_t at = (size_t)snprintf(llm, sizeof llm, "[");
    for (int k = 0; k < 4; k++) {
        cand[k] = (uint32_t)rng_below(r, V);
        at += (size_t)snprintf(llm + at, sizeof llm - at, "%s{\"token_id\":%u,\"logprob\":%g}", k ? "," : "", cand[k], lp[k]);
    }
    snprintf(llm + at, sizeof llm - at, "]");
    ig_mix_opts o;
    ig_mix_defaults(&o);
    char *ids = ids_text(p, np);
    o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
    o.llm = (ig_bytes){(uint8_t *)llm, strlen(llm)};
    o.lambda = 0.3;
    ig_mix_result res;
    ig_error e;
    int rc = ig_op_mix.run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "%s: mix: %s", what, e.msg);
    free(ids);
    if (rc)
        return;
    size_t ell = np;
    while (ell > 0 && !brute_count(c, p + np - ell, ell))
        ell--;
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt), total = 0;
    brute_next(c, p + np - ell, ell, cnt, V);
    for (uint32_t t = 0; t <= V; t++)
        total += cnt[t];
    for (int k = 0; k < 4; k++) {
        double pc = total ? (double)cnt[cand[k]] / (double)total : 0;
        raw[k] = 0.3 * pc + 0.7 * exp(lp[k]);
        sum += raw[k];
        CHECK(fabs(res.out[k].corpus_prob - pc) < 1e-12, "%s: mix corpus P(%u) %g, brute force %g", what, cand[k],
              res.out[k].corpus_prob, pc);
    }
    for (int k = 0; k < 4; k++)
        CHECK(fabs(res.out[k].mixed_prob - raw[k] / sum) < 1e-9, "%s: mixed P of candidate %d", what, k);
    free(cnt);
    ig_mix_result_free(&res);
}

static void check_docs(const corpus *c, ig_index *idx, const char *what)
{
    for (size_t d = 0; d < c->ndocs; d++) {
        ig_doc info;
        int rc = ig_doc_get(idx, d, &info, NULL);
        CHECK(rc == 0 && info.length == c->len[d] * c->tw, "%s: doc %zu length", what, d);
        if (rc)
            continue;
        char nm[32];
        snprintf(nm, sizeof nm, "doc-%zu", d);
        CHECK(!strcmp(info.name, nm) && info.source_line == d + 1, "%s: doc %zu is named %s (line %" PRIu64 ")", what, d,
              info.name, info.source_line);
        size_t n = (size_t)info.length;
        const uint8_t *t = ig_text(idx, info.shard, info.start, &n);
        int same = n == c->len[d] * c->tw;
        for (size_t i = 0; same && i < c->len[d]; i++)
            same = ig_token_at(t + i * c->tw, c->tw) == c->doc[d][i];
        CHECK(same, "%s: doc %zu tokens", what, d);
        const char *meta;
        size_t mlen;
        char want[96];
        snprintf(want, sizeof want, "{\"path\": \"doc-%zu\", \"linenum\": %zu, \"metadata\": {}}", d, d);
        CHECK(!ig_doc_metadata(idx, d, &meta, &mlen) && mlen == strlen(want) && !memcmp(meta, want, mlen),
              "%s: doc %zu metadata", what, d);
    }
}

/* A hash of every file under dir (names, sizes, bytes): the directory is never written. */
static uint64_t tree_hash(const char *dir)
{
    ig_hash h;
    igi_hash_init(&h);
    DIR *d = opendir(dir);
    struct dirent *e;
    char *names[64];
    int n = 0;
    while (d && (e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[i], names[j]) > 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    for (int i = 0; i < n; i++) {
        char *p = igi_aprintf("%s/%s", dir, names[i]);
        struct stat st;
        if (p && !stat(p, &st) && S_ISDIR(st.st_mode)) {
            uint64_t sub = tree_hash(p);
            igi_hash_update(&h, &sub, sizeof sub);
        } else if (p) {
            char *data = NULL;
            size_t len = 0;
            if (!igi_read_file(p, SIZE_MAX, &data, &len, NULL))
                igi_hash_update(&h, data, len);
            free(data);
        }
        igi_hash_update(&h, names[i], strlen(names[i]));
        free(p);
        free(names[i]);
    }
    return igi_hash_final(&h);
}

/* Every query against brute force (the documents aside: how they are named depends on who wrote the index). */
static void check_queries(const corpus *c, ig_index *idx, test_rng *r, uint32_t V, const char *what)
{
    check_counts(c, idx, r, V, what);
    check_models(c, idx, r, V, what);
    check_mixtures(c, idx, r, V, what);
    check_backoff(c, idx, r, V, what);
    check_search(c, idx, r, V, what);
    check_explain(c, idx, r, V, what);
    check_mix(c, idx, r, V, what);
    check_generation(c, idx, r, V, what);
    check_spans(c, idx, r, V, what);
    check_eval(c, idx, r, V, what);
}

static void random_corpus(corpus *c, test_rng *r, uint32_t tw, uint32_t V, size_t ndocs)
{
    c->tw = tw;
    c->ndocs = ndocs;
    c->doc = calloc(ndocs, sizeof *c->doc);
    c->len = calloc(ndocs, sizeof *c->len);
    for (size_t d = 0; d < ndocs; d++) {
        c->len[d] = rng_below(r, 4) == 0 ? rng_below(r, 3) : 1 + rng_below(r, 60);
        c->doc[d] = malloc((c->len[d] + 1) * sizeof *c->doc[d]);
        for (size_t i = 0; i < c->len[d]; i++) /* skewed: repeats make long matches */
            c->doc[d][i] = (uint32_t)(rng_below(r, 2) ? rng_below(r, V < 4 ? V : 4) : rng_below(r, V));
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The predict operation after the m ids p (alpha: Laplace's, 0 for none), as a face runs it. */
static int predict_ids(ig_index *idx, const uint32_t *p, size_t m, double alpha, ig_predict_result *res, ig_error *e)
{
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    ig_predict_opts o;
    ig_predict_defaults(&o);
    char *ids = ids_text(p, m);
    if (!ids)
        return ig_error_set(e, IG_ENOMEM, "out of memory");
    o.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
    if (alpha > 0)
        o.model.alpha = alpha;
    int rc = ig_op_predict.run(&ctx, &o, res, e);
    free(ids);
    return rc;
}

/* syms[0, n) must be the ∞-gram's answer after a context whose next tokens brute force counts
 * in cnt[0, V] (slot V: the separator), exactly: every next token once, its count, its
 * probability count ÷ Σ as the model computes it (to the bit), most probable first, ties by id,
 * its bytes the id's little-endian bytes. */
static void check_exact_syms(const corpus *c, const ig_symbol *syms, size_t n, const uint64_t *cnt, uint32_t V,
                             const char *what, const char *how)
{
    uint64_t total = 0;
    size_t distinct = 0;
    for (uint32_t x = 0; x <= V; x++) {
        total += cnt[x];
        distinct += cnt[x] > 0;
    }
    int ok = n == distinct;
    for (size_t i = 0; ok && i < n; i++) {
        uint32_t id = ig_token_at(syms[i].bytes, c->tw), slot = id == end_id(c->tw) ? V : id;
        uint8_t want[4] = {0};
        for (uint32_t k = 0; k < c->tw; k++)
            want[k] = (uint8_t)(id >> (8 * k));
        ok = slot <= V && syms[i].count == cnt[slot] && syms[i].len == c->tw && !memcmp(syms[i].bytes, want, 4) &&
             syms[i].prob == (double)syms[i].count / (double)total;
        if (ok && i) {
            uint32_t prev = ig_token_at(syms[i - 1].bytes, c->tw);
            ok = syms[i - 1].prob > syms[i].prob || (syms[i - 1].prob == syms[i].prob && prev < id);
        }
    }
    CHECK(ok, "%s: %s: %zu symbols, not brute force's %zu exactly (count, probability, order, bytes)", what, how, n,
          distinct);
}

/* The histogram after context p (m tokens), in both orders, against brute force; with a
 * next-token table in use (min_count > 0) it must come from the table exactly when the context
 * is one, two or three tokens (no separator) seen min_count times or more. */
static void check_hist(const corpus *c, ig_index *idx, uint32_t V, const uint32_t *p, size_t m, uint64_t min_count,
                       const char *what)
{
    uint32_t tw = c->tw;
    uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
    ig_range *rr = calloc(idx->nshards, sizeof *rr);
    uint8_t pb[16];
    pattern_bytes(c, p, m, pb);
    uint64_t rows = ig_find(idx, pb, m * tw, rr);
    brute_next(c, p, m, cnt, V);
    size_t distinct = 0;
    uint64_t occurrences = 0;
    for (uint32_t x = 0; x <= V; x++) {
        distinct += cnt[x] > 0;
        occurrences += cnt[x];
    }
    CHECK(rows == occurrences && ig_count(idx, pb, m * tw) == occurrences, "%s: count of a context of %zu tokens "
          "(%u…, table from %" PRIu64 "): %" PRIu64 ", brute force %" PRIu64, what, m, p[0], min_count, rows,
          occurrences);
    for (int by_count = 0; by_count < 2; by_count++) {
        ig_token_count *v = NULL;
        size_t n = 0;
        ig_error e;
        int served = 0, rc = igi_next_table_hist(idx, rr, m * tw, by_count, &v, &n, &served, &e);
        CHECK(rc == 0, "%s: table histogram after %zu tokens (%u…): %s", what, m, p[0], e.msg);
        CHECK(served == (m <= 3 && min_count && rows && rows >= min_count), "%s: context of %zu tokens (%u…, seen %" PRIu64
              " times, table from %" PRIu64 ") served %d", what, m, p[0], rows, min_count, served);
        free(v);
        rc = igi_token_hist(idx, rr, m * tw, by_count, &v, &n, &e);
        int ok = rc == 0 && n == distinct;
        for (size_t i = 0; ok && i < n; i++) {
            uint32_t slot = v[i].id == end_id(tw) ? V : v[i].id;
            ok = slot <= V && v[i].count == cnt[slot];
            if (ok && i)
                ok = by_count ? v[i - 1].count > v[i].count || (v[i - 1].count == v[i].count && v[i - 1].id < v[i].id)
                              : v[i - 1].id < v[i].id;
        }
        CHECK(ok, "%s: histogram after %zu tokens (%u…; by count %d, table from %" PRIu64 "): %s", what, m, p[0],
              by_count, min_count, rc ? e.msg : "differs from brute force");
        if (!rc)
            free(v);
    }
    /* the ∞-gram's symbols the table lends, and the predict operation's answer (borrowed when
     * the table holds the context), against brute force */
    const ig_symbol *held = NULL;
    size_t nheld = 0;
    ig_error e;
    int served = 0, rc = igi_next_table_syms(idx, rr, m * tw, &held, &nheld, &served, &e);
    int little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    CHECK(rc == 0 && served == (little && m <= 3 && min_count && rows && rows >= min_count), "%s: symbols of a context of %zu "
          "tokens (%u…, seen %" PRIu64 " times, table from %" PRIu64 ") served %d: %s", what, m, p[0], rows, min_count,
          served, rc ? e.msg : "");
    if (!rc && served)
        check_exact_syms(c, held, nheld, cnt, V, what, "the table's symbols");
    if (rows) {
        ig_predict_result res;
        rc = predict_ids(idx, p, m, 0, &res, &e);
        CHECK(rc == 0, "%s: predict after %zu tokens (%u…): %s", what, m, p[0], e.msg);
        if (!rc) {
            CHECK(res.syms_borrowed == served && (!served || res.syms == held), "%s: predict after %zu tokens (%u…) "
                  "borrowed %d, the table served %d", what, m, p[0], res.syms_borrowed, served);
            check_exact_syms(c, res.syms, res.nsyms, cnt, V, what, "predict");
            ig_predict_result_free(&res);
        }
    }
    free(rr);
    free(cnt);
}

/* Every one-token context, and every context of two, three and four tokens that occurs (plus
 * one of each that does not); a table holds up to three. */
static void check_hists(const corpus *c, ig_index *idx, uint32_t V, uint64_t min_count, const char *what)
{
    for (uint32_t t = 0; t < V; t++)
        check_hist(c, idx, V, &t, 1, min_count, what);
    size_t np = 0;
    for (size_t d = 0; d < c->ndocs; d++)
        np += c->len[d];
    uint64_t *grams = malloc((np + 1) * sizeof *grams); /* m ids of under 16 bits each, packed */
    for (size_t m = 2; m <= 4; m++) {
        size_t ng = 0;
        for (size_t d = 0; d < c->ndocs; d++)
            for (size_t i = 0; i + m <= c->len[d]; i++) {
                uint64_t g = 0;
                for (size_t k = 0; k < m; k++)
                    g = g << 16 | c->doc[d][i + k];
                grams[ng++] = g;
            }
        uint64_t unseen = 0; /* perhaps never seen */
        for (size_t k = 0; k < m; k++)
            unseen = unseen << 16 | (V - 1);
        grams[ng++] = unseen;
        qsort(grams, ng, sizeof *grams, cmp_u64);
        for (size_t i = 0; i < ng; i++)
            if (!i || grams[i] != grams[i - 1]) {
                uint32_t p[4];
                for (size_t k = 0; k < m; k++)
                    p[k] = (uint32_t)(grams[i] >> (16 * (m - 1 - k))) & 0xFFFF;
                check_hist(c, idx, V, p, m, min_count, what);
            }
    }
    free(grams);
}

/* A next-token table made for idx (min_count 0: the default), written to path and put to use. */
static uint64_t use_table(ig_index *idx, const char *path, uint64_t min_count, const char *what)
{
    ig_next_table_info w, u;
    ig_error e;
    int rc = ig_next_table_write(idx, path, min_count, NULL, &w, &e);
    CHECK(rc == 0, "%s: writing the next-token table: %s", what, e.msg);
    if (rc)
        return 0;
    rc = ig_next_table_use(idx, path, &u, &e);
    CHECK(rc == 0, "%s: using the next-token table: %s", what, e.msg);
    CHECK(!rc && w.contexts == u.contexts && w.entries == u.entries && w.bytes == u.bytes && w.min_count == u.min_count,
          "%s: the table read is not the table written", what);
    CHECK(min_count || w.min_count == ig_next_table_min_count(idx), "%s: default min_count", what);
    return rc ? 0 : w.min_count;
}

static void oracle_cases(const char *dir)
{
    test_rng r = {20261126};
    static const uint32_t widths[] = {1, 2, 4};
    int cases = scaled(40);
    for (int k = 0; k < cases; k++) {
        uint32_t tw = widths[k % 3];
        uint32_t V = tw == 1 ? 1 + (uint32_t)rng_below(&r, 254) : 2 + (uint32_t)rng_below(&r, 700);
        corpus c;
        random_corpus(&c, &r, tw, V, 1 + rng_below(&r, 12));
        int v6 = rng_below(&r, 2);
        uint32_t nshards = 1 + (uint32_t)rng_below(&r, 3);
        size_t bytes = 0;
        for (size_t d = 0; d < c.ndocs; d++)
            bytes += (c.len[d] + 1) * tw;
        uint32_t minpw = 1;
        while (minpw < 5 && bytes > (1ull << (8 * minpw)))
            minpw++;
        uint32_t pw = rng_below(&r, 2) ? 0 : minpw + (uint32_t)rng_below(&r, 6 - minpw);
        write_index(&c, dir, v6, nshards, pw, 1);
        uint64_t before = tree_hash(dir);
        char what[128];
        snprintf(what, sizeof what, "case %d (u%u, pw %u, %s, %u shards, %zu docs)", k, tw * 8, pw, v6 ? "v6" : "v4",
                 nshards, c.ndocs);
        ig_attach_options o = {.token_width = pw ? tw : 0}; /* forced widths may be ambiguous: say it */
        ig_index *idx = NULL;
        ig_error e;
        int rc = ig_index_attach(&idx, dir, &o, &e);
        CHECK(rc == 0, "%s: attach: %s", what, e.msg);
        if (!rc) {
            CHECK(ig_index_token_width(idx) == tw, "%s: token width", what);
            check_queries(&c, idx, &r, V, what);
            check_docs(&c, idx, what);
            check_hists(&c, idx, V, 0, what);
            /* the same answers again with a next-token table: from every context seen once up */
            char tab[512];
            snprintf(tab, sizeof tab, "%s.next", dir);
            uint64_t mc = use_table(idx, tab, k % 4 == 3 ? 0 : 1 + rng_below(&r, 4), what);
            if (mc) {
                check_hists(&c, idx, V, mc, what);
                check_queries(&c, idx, &r, V, what);
            }
            unlink(tab);
        }
        ig_index_close(&idx);
        CHECK(tree_hash(dir) == before, "%s: the attached directory was modified", what);
        corpus_free(&c);
    }
}

/* A file of a good index rewritten by `edit`; then attach must fail naming `file`. */
static void expect_error(const char *dir, const char *file, const char *needle, const char *what)
{
    ig_index *idx = NULL;
    ig_error e = {0};
    int rc = ig_index_attach(&idx, dir, NULL, &e);
    CHECK(rc != 0, "%s: attach succeeded", what);
    CHECK(rc == 0 || (strstr(e.msg, file) && (!needle || strstr(e.msg, needle))), "%s: message \"%s\" names %s%s%s",
          what, e.msg, file, needle ? " and " : "", needle ? needle : "");
    ig_index_close(&idx);
}

/* A file's byte at `off` xored with `mask`. */
static void poke(const char *path, long off, uint8_t mask)
{
    FILE *f = fopen(path, "r+b");
    int ch = f && fseek(f, off, SEEK_SET) == 0 ? fgetc(f) : EOF;
    CHECK(ch != EOF, "poke %s at %ld", path, off);
    if (ch != EOF && fseek(f, off, SEEK_SET) == 0)
        fputc(ch ^ mask, f);
    if (f)
        fclose(f);
}

static void hostile_cases(const char *dir)
{
    test_rng r = {7};
    corpus c;
    random_corpus(&c, &r, 2, 600, 6);
    char path[512];
    /* truncated table: the sizes fit no width */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/table.0", dir);
    CHECK(truncate(path, 7) == 0, "truncate");
    expect_error(dir, "table.0", NULL, "truncated table");
    /* an offset that is not after the previous one */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/offset.0", dir);
    FILE *f = fopen(path, "r+b");
    uint8_t z[8] = {0};
    fseek(f, 8, SEEK_SET);
    fwrite(z, 1, 8, f);
    fclose(f);
    expect_error(dir, "offset.0", "document 1", "offsets out of order");
    /* a table row swapped with another: out of order */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/table.0", dir);
    char *data;
    size_t len;
    igi_read_file(path, SIZE_MAX, &data, &len, NULL);
    size_t rows = len / 2; /* pointer width 2 for this corpus */
    for (size_t i = 0; i < rows; i++) { /* reverse the array: every adjacent pair out of order */
        size_t j = rows - 1 - i;
        if (j <= i)
            break;
        char t0 = data[2 * i], t1 = data[2 * i + 1];
        data[2 * i] = data[2 * j];
        data[2 * i + 1] = data[2 * j + 1];
        data[2 * j] = t0;
        data[2 * j + 1] = t1;
    }
    write_file(path, data, len);
    free(data);
    expect_error(dir, "table.0", "out of order", "reversed table");
    /* a row out of order where the spot checks do not look: attach passes, verify finds it */
    {
        corpus big;
        test_rng r2 = {99};
        random_corpus(&big, &r2, 2, 600, 1);
        free(big.doc[0]);
        big.len[0] = 5000;
        big.doc[0] = malloc(5000 * sizeof *big.doc[0]);
        for (size_t i = 0; i < 5000; i++)
            big.doc[0][i] = (uint32_t)rng_below(&r2, 600);
        write_index(&big, dir, 0, 1, 2, 0);
        char tp[600];
        snprintf(tp, sizeof tp, "%s/table.0", dir);
        char *tb;
        size_t tl;
        igi_read_file(tp, SIZE_MAX, &tb, &tl, NULL);
        size_t row = 2501; /* the spot checks read every 5th row here (5001 rows, 1,024 checks): swap two others */
        char t0 = tb[2 * row], t1 = tb[2 * row + 1];
        tb[2 * row] = tb[2 * (row + 1)];
        tb[2 * row + 1] = tb[2 * (row + 1) + 1];
        tb[2 * (row + 1)] = t0;
        tb[2 * (row + 1) + 1] = t1;
        write_file(tp, tb, tl);
        free(tb);
        ig_index *vi = NULL;
        ig_error ve;
        ig_attach_options vo = {.token_width = 2};
        int arc = ig_index_attach(&vi, dir, &vo, &ve);
        if (!arc)
            CHECK(ig_index_attach_verify(vi, NULL, &ve) == IG_ECORRUPT && strstr(ve.msg, "table.0") &&
                      strstr(ve.msg, "out of order"),
                  "verify finds the swapped rows: %s", ve.msg);
        else
            CHECK(strstr(ve.msg, "table.0") != NULL, "attach names the table: %s", ve.msg);
        ig_index_close(&vi);
        corpus_free(&big);
    }
    /* a misaligned pointer */
    write_index(&c, dir, 0, 1, 0, 1);
    igi_read_file(path, SIZE_MAX, &data, &len, NULL);
    data[0] = 1;
    data[1] = 0;
    write_file(path, data, len);
    free(data);
    expect_error(dir, "table.0", NULL, "misaligned pointer");
    /* metaoff of the wrong size */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/metaoff.0", dir);
    CHECK(truncate(path, 8) == 0, "truncate");
    expect_error(dir, "metaoff.0", NULL, "short metaoff");
    /* a missing offset file */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/offset.0", dir);
    unlink(path);
    expect_error(dir, "offset.0", "missing", "missing offset");
    /* the last metadata record grown to gigabytes (a sparse tail after its newline), then with
     * no newline for over IG_DOC_METADATA_MAX bytes: the first is read to its newline, the second
     * not at all (it took 22 s and 3 GB to name the document, and doc ran out of memory) */
    write_index(&c, dir, 0, 1, 0, 1);
    snprintf(path, sizeof path, "%s/metadata.0", dir);
    struct stat mst;
    CHECK(stat(path, &mst) == 0 && truncate(path, (off_t)3 << 30) == 0, "grow metadata");
    {
        ig_index *idx = NULL;
        ig_error e = {0};
        const char *meta = NULL;
        size_t mlen = 0;
        CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "grown metadata: attach: %s", e.msg);
        int mr = idx ? ig_doc_metadata(idx, c.ndocs - 1, &meta, &mlen) : -1;
        CHECK(mr == 0 && mlen > 0 && mlen < 200 && meta[0] == '{' && meta[mlen - 1] == '}',
              "grown metadata: the last record read to its newline (rc %d, %zu bytes)", mr, mlen);
        ig_index_close(&idx);
        CHECK(truncate(path, mst.st_size - 1) == 0, "cut the newline");
        FILE *g = fopen(path, "ab");
        for (int k = 0; g && k < 2048; k++)
            fputs("                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "                                                                                                 "
                  "            ",
                  g);
        CHECK(g && fclose(g) == 0, "append to metadata");
        CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "long record: attach: %s", e.msg);
        mr = idx ? ig_doc_metadata(idx, c.ndocs - 1, &meta, &mlen) : -1;
        CHECK(mr == IG_ECORRUPT, "a record of over IG_DOC_METADATA_MAX bytes is not read: rc %d", mr);
        ig_index_close(&idx);
        /* records written over several lines (pretty-printed JSON): each runs to the next
         * document's offset, whole, and still names its document */
        FILE *m = fopen(path, "wb");
        char mo[512];
        snprintf(mo, sizeof mo, "%s/metaoff.0", dir);
        FILE *mf = fopen(mo, "wb");
        uint64_t at = 0;
        for (size_t d = 0; m && mf && d < c.ndocs; d++) {
            char rec[128];
            int len = snprintf(rec, sizeof rec, "{\n \"path\": \"pretty-%zu\",\n \"linenum\": %zu\n}\n", d, d);
            uint64_t le = htole64(at);
            fwrite(&le, 8, 1, mf);
            fwrite(rec, 1, (size_t)len, m);
            at += (uint64_t)len;
        }
        CHECK(m && mf && fclose(m) == 0 && fclose(mf) == 0, "write multi-line metadata");
        CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "multi-line records: attach: %s", e.msg);
        mr = idx ? ig_doc_metadata(idx, 1, &meta, &mlen) : -1;
        CHECK(mr == 0 && mlen == strlen("{\n \"path\": \"pretty-1\",\n \"linenum\": 1\n}") && meta[mlen - 1] == '}',
              "a record over several lines is read whole (rc %d, %zu bytes)", mr, mlen);
        ig_doc dd;
        const char *nm = idx && !ig_doc_get(idx, 1, &dd, NULL) ? dd.name : NULL;
        CHECK(nm && !strcmp(nm, "pretty-1"), "a record over several lines names its document: %s", nm ? nm : "(none)");
        ig_index_close(&idx);
    }
    /* two adjacent rows swapped where a sample of a thousand rows would not look (it did not:
     * counts were one off): a shard this small has every row checked at attach */
    {
        test_rng r2 = {29};
        corpus big;
        random_corpus(&big, &r2, 2, 600, 200);
        write_index(&big, dir, 0, 1, 0, 0);
        snprintf(path, sizeof path, "%s/table.0", dir);
        char *t = NULL;
        size_t tl = 0, rows = big.ndocs; /* a separator before each document, then its ids */
        for (size_t d = 0; d < big.ndocs; d++)
            rows += big.len[d];
        CHECK(!igi_read_file(path, SIZE_MAX, &t, &tl, NULL) && rows > 2048, "read %s (%zu rows)", path, rows);
        size_t pw = tl / rows;
        char tmp[8];
        memcpy(tmp, t + 2 * pw, pw);
        memcpy(t + 2 * pw, t + 3 * pw, pw);
        memcpy(t + 3 * pw, tmp, pw);
        FILE *g = fopen(path, "wb");
        CHECK(g && fwrite(t, 1, tl, g) == tl && fclose(g) == 0, "write %s", path);
        free(t);
        expect_error(dir, "table.0", "rows 2 and 3 are out of order", "two rows swapped between samples");
        corpus_free(&big);
    }
    /* a separator overwritten after attach: verify names the text file and the offsets file
     * (it named the table) */
    write_index(&c, dir, 0, 1, 0, 1);
    {
        ig_index *idx = NULL;
        ig_error e = {0};
        CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "separator: attach: %s", e.msg);
        snprintf(path, sizeof path, "%s/tokenized.0", dir);
        poke(path, (long)((1 + c.len[0]) * c.tw), 0x01); /* the first byte of document 1's separator */
        int rc = idx ? ig_index_attach_verify(idx, NULL, &e) : 0;
        CHECK(rc == IG_ECORRUPT && strstr(e.msg, "/tokenized.0: byte ") && strstr(e.msg, "offset.0 says document 1 "),
              "verify of a separator overwritten: %s", rc ? e.msg : "passed");
        ig_index_close(&idx);
    }
    /* files damaged in place, each named with what is wrong:
     * - an offset file claiming more documents than there are tokens (a 64 GiB sparse file ran
     *   out of memory before anything was checked);
     * - a table behind a link in a loop (said to be missing);
     * - a shard's tokenized file missing, its other files there: the last v4 shard and any v6
     *   directory were dropped, and every count came from the rest. */
    static const struct {
        int v6, shards;
        const char *file;
        char how; /* g: grown to 64 GiB, l: a link to itself, u: removed */
        const char *needle, *what;
    } damaged[] = {
        {0, 1, "offset.0", 'g', "documents, more than the", "a sparse 64 GiB offset file"},
        {0, 1, "table.0", 'l', "symbolic links", "a table behind a link loop"},
        {0, 2, "tokenized.1", 'u', "missing", "v4: the last shard's tokenized file missing"},
        {1, 2, "1/tokenized", 'u', "missing", "v6: a shard directory's tokenized file missing"},
        {1, 1, "0/tokenized", 'u', "missing", "v6: the only shard directory's tokenized file missing"},
    };
    for (size_t k = 0; k < sizeof damaged / sizeof damaged[0]; k++) {
        write_index(&c, dir, damaged[k].v6, (uint32_t)damaged[k].shards, 0, 1);
        snprintf(path, sizeof path, "%s/%s", dir, damaged[k].file);
        int ok = damaged[k].how == 'g' ? truncate(path, (off_t)64 << 30) == 0
                 : damaged[k].how == 'l' ? unlink(path) == 0 && symlink(path, path) == 0
                                         : unlink(path) == 0;
        CHECK(ok, "%s: damage %s", damaged[k].what, path);
        expect_error(dir, damaged[k].file, damaged[k].needle, damaged[k].what);
    }
    /* nothing of the layout */
    igi_remove_tree(dir, NULL);
    mkdir(dir, 0755);
    expect_error(dir, dir, "no infini-gram index", "empty directory");
    /* v5 (reversed documents) is refused by its name, and by the version given */
    char v5[600];
    snprintf(v5, sizeof v5, "%s/v5_pileval", dir);
    mkdir(v5, 0755);
    write_index(&c, v5, 0, 1, 0, 1);
    expect_error(v5, "v5", "reversed", "v5 directory");
    write_index(&c, dir, 0, 1, 0, 1);
    ig_attach_options o = {.version = 5};
    ig_index *idx = NULL;
    ig_error e;
    CHECK(ig_index_attach(&idx, dir, &o, &e) == IG_EUSAGE && strstr(e.msg, "reversed"), "version 5 refused: %s", e.msg);
    ig_index_close(&idx);
    /* a token width the sizes rule out */
    o = (ig_attach_options){.token_width = 4};
    CHECK(ig_index_attach(&idx, dir, &o, &e) == IG_ECORRUPT && strstr(e.msg, "tokenized.0"), "u32 of a u16 index: %s",
          e.msg);
    ig_index_close(&idx);
    /* ids: separators only last, no ids past the width */
    o = (ig_attach_options){0};
    CHECK(ig_index_attach(&idx, dir, &o, &e) == 0, "attach: %s", e.msg);
    uint8_t *p;
    size_t n;
    CHECK(ig_tokens_parse(idx, "1,65535,2", 9, &p, &n, &e) == IG_EUSAGE && strstr(e.msg, "item 2"), "separator inside");
    CHECK(ig_tokens_parse(idx, "65536", 5, &p, &n, &e) == IG_EUSAGE, "id too large");
    CHECK(ig_tokens_parse(idx, "1,,2", 4, &p, &n, &e) == IG_EUSAGE, "empty item");
    CHECK(ig_tokens_parse(idx, "1,2,", 4, &p, &n, &e) == IG_EUSAGE, "trailing comma");
    CHECK(ig_tokens_parse(idx, " 3 , 4 ", 7, &p, &n, &e) == 0 && n == 4 && p[0] == 3 && p[2] == 4, "spaces: %s", e.msg);
    free(p);
    ig_index_close(&idx);
    corpus_free(&c);
}

/* Vocabularies: each format read, each tokenizer family's pieces decoded, bad files named. */
static void vocab_cases(const char *dir)
{
    test_rng r = {3};
    corpus c;
    random_corpus(&c, &r, 2, 300, 3);
    write_index(&c, dir, 0, 1, 0, 0);
    char vpath[600];
    snprintf(vpath, sizeof vpath, "%s/vocab.json", dir);
    static const struct {
        const char *json;
        uint32_t id;
        const char *want;
    } cases[] = {
        /* a Hugging Face byte-level BPE tokenizer (GPT-2): Ġ is a space, Ċ a newline */
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\\u0120the\":5,\"cat\":6,\"\\u010a\":7}},"
         "\"decoder\":{\"type\":\"ByteLevel\"},\"added_tokens\":[{\"id\":9,\"content\":\"<|eos|>\"}]}",
         5, " the"},
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\\u0120the\":5,\"\\u010a\":7}},\"decoder\":{\"type\":\"ByteLevel\"}}",
         7, "\n"},
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":1}},\"added_tokens\":[{\"id\":9,\"content\":\"<|eos|>\"}]}", 9,
         "<|eos|>"},
        /* SentencePiece pieces (Llama 2): ▁ is a space, <0x0A> a raw byte */
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\\u2581the\":3,\"<0x0A>\":13},\"byte_fallback\":true},"
         "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"ByteFallback\"}]}}",
         3, " the"},
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\\u2581the\":3,\"<0x0A>\":13}},"
         "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"ByteFallback\"}]}}",
         13, "\n"},
        /* a Unigram model: [[piece, score], …], id = index */
        {"{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"<unk>\",0],[\"\\u2581a\",-1.5]]}}", 1, " a"},
        /* an id-to-text map, a text-to-id map, an array */
        {"{\"0\":\"zero\",\"12\":\"twelve\"}", 12, "twelve"},
        {"{\"hello\":4,\"world\":5}", 5, "world"},
        {"[\"x\",\"y\",\"z\"]", 2, "z"},
        /* an id the vocabulary does not have, and the separator */
        {"[\"x\"]", 200, "[200]"},
        {"[\"x\"]", 65535, "<end>"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        write_file(vpath, cases[k].json, strlen(cases[k].json));
        ig_attach_options o = {.vocab = vpath};
        ig_index *idx = NULL;
        ig_error e;
        int rc = ig_index_attach(&idx, dir, &o, &e);
        CHECK(rc == 0, "vocabulary %zu: %s", k, e.msg);
        if (!rc) {
            char buf[64];
            ig_token_text(idx, cases[k].id, buf, sizeof buf);
            CHECK(!strcmp(buf, cases[k].want), "vocabulary %zu: id %u shows as \"%s\", not \"%s\"", k, cases[k].id, buf,
                  cases[k].want);
        }
        ig_index_close(&idx);
    }
    static const char *const bad[] = {"{\"model\":", "{\"a\":[1]}", "{\"x1\":\"one\"}", "[1,2]", "{}", "{\"a\":99999999}"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_file(vpath, bad[k], strlen(bad[k]));
        ig_attach_options o = {.vocab = vpath};
        ig_index *idx = NULL;
        ig_error e;
        int rc = ig_index_attach(&idx, dir, &o, &e);
        CHECK(rc != 0 && strstr(e.msg, "vocab.json"), "bad vocabulary %zu (%s): %s", k, bad[k], rc ? e.msg : "accepted");
        ig_index_close(&idx);
    }
    /* messages that say what is wrong: a negative key was named as id 2^64 − 1, a nesting
     * too deep said "line 0: " and nothing */
    static const struct {
        const char *json, *want;
    } said[] = {{"{\"-1\":\"minus\"}", "key \"-1\" is not an id"}, {NULL, "nested more than"}};
    for (size_t k = 0; k < sizeof said / sizeof said[0]; k++) {
        char deep[1100];
        if (!said[k].json) {
            memset(deep, '[', 1000);
            deep[1000] = 0;
        }
        const char *json = said[k].json ? said[k].json : deep;
        write_file(vpath, json, strlen(json));
        ig_attach_options o = {.vocab = vpath};
        ig_index *idx = NULL;
        ig_error e;
        int rc = ig_index_attach(&idx, dir, &o, &e);
        CHECK(rc != 0 && strstr(e.msg, said[k].want), "vocabulary message %zu: %s", k, rc ? e.msg : "accepted");
        ig_index_close(&idx);
    }
    ig_attach_options o = {.vocab = "/nonexistent/vocab.json"};
    ig_index *idx = NULL;
    ig_error e;
    CHECK(ig_index_attach(&idx, dir, &o, &e) != 0 && strstr(e.msg, "/nonexistent/vocab.json"), "missing vocabulary: %s",
          e.msg);
    o.vocab = "/dev/zero"; /* a device never ends, a FIFO blocks: only regular files are read */
    CHECK(ig_index_attach(&idx, dir, &o, &e) == IG_EUSAGE && strstr(e.msg, "not a regular file"), "device vocabulary: %s",
          e.msg);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/vocab.fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    o.vocab = fifo;
    CHECK(ig_index_attach(&idx, dir, &o, &e) == IG_EUSAGE && strstr(e.msg, "not a regular file"), "FIFO vocabulary: %s",
          e.msg);
    unlink(fifo);
    corpus_free(&c);
}

/* Histograms of contexts with many occurrences are cached: asked again, and in both orders,
 * they must be the same as computed, and as brute force. */
static void cache_cases(const char *dir)
{
    test_rng r = {11};
    corpus c = {.tw = 2, .ndocs = 40};
    c.doc = calloc(c.ndocs, sizeof *c.doc);
    c.len = calloc(c.ndocs, sizeof *c.len);
    for (size_t d = 0; d < c.ndocs; d++) { /* 160,000 tokens, mostly 0 and 1: their contexts are frequent */
        c.len[d] = 4000;
        c.doc[d] = malloc(c.len[d] * sizeof *c.doc[d]);
        for (size_t i = 0; i < c.len[d]; i++)
            c.doc[d][i] = rng_below(&r, 50) ? (uint32_t)rng_below(&r, 2) : 2 + (uint32_t)rng_below(&r, 300);
    }
    write_index(&c, dir, 0, 2, 0, 0);
    ig_index *idx = NULL;
    ig_error e;
    CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "attach: %s", e.msg);
    if (idx) {
        uint32_t V = 302;
        for (int round = 0; round < 3; round++)
            for (int k = 0; k < 3; k++) { /* contexts "", "0", "1" */
                uint32_t p = (uint32_t)(k - 1);
                uint8_t pb[2] = {(uint8_t)p, 0};
                size_t m = k ? 1 : 0;
                ig_range rr[2];
                ig_find(idx, pb, m * 2, rr);
                uint64_t *cnt = malloc((V + 1) * sizeof *cnt);
                brute_next(&c, &p, m, cnt, V);
                for (int by_count = 0; by_count < 2; by_count++) {
                    ig_token_count *v;
                    size_t n;
                    int rc = igi_token_hist(idx, rr, m * 2, by_count, &v, &n, &e);
                    CHECK(rc == 0, "histogram: %s", e.msg);
                    size_t distinct = 0, ok = 1;
                    for (uint32_t t = 0; t <= V; t++)
                        distinct += cnt[t] > 0;
                    for (size_t i = 0; !rc && i < n; i++) {
                        uint32_t slot = v[i].id == 65535 ? V : v[i].id;
                        ok &= slot <= V && v[i].count == cnt[slot];
                        if (i)
                            ok &= by_count ? v[i - 1].count > v[i].count ||
                                                 (v[i - 1].count == v[i].count && v[i - 1].id < v[i].id)
                                           : v[i - 1].id < v[i].id;
                    }
                    CHECK(!rc && ok && n == distinct, "cached histogram of context %d (round %d, by count %d)", k - 1,
                          round, by_count);
                    if (!rc)
                        free(v);
                }
                free(cnt);
            }
    }
    ig_index_close(&idx);
    corpus_free(&c);
}

#ifndef TEST_TOKENS_NO_MAIN /* test_token_build.c reuses the brute force above */
/* ig_next_table_use of `path` on idx must fail naming it and saying `needle`. */
static void expect_table_error(ig_index *idx, const char *path, const char *needle, const char *what)
{
    ig_error e = {0};
    int rc = ig_next_table_use(idx, path, NULL, &e);
    CHECK(rc != 0 && strstr(e.msg, path) && strstr(e.msg, needle), "%s: \"%s\" names %s and says %s", what,
          rc ? e.msg : "(accepted)", path, needle);
}

/* Next-token tables that are damaged, cut short, made for other files or never written: clear
 * errors naming the file, never a wrong histogram; a cancelled write leaves nothing. */
static void table_cases(const char *dir)
{
    test_rng r = {17};
    corpus c, other;
    uint32_t V = 40;
    random_corpus(&c, &r, 2, V, 6);
    random_corpus(&other, &r, 2, V, 6);
    char tab[512], copy[512], cmd[1200];
    snprintf(tab, sizeof tab, "%s.next", dir);
    snprintf(copy, sizeof copy, "%s.good", dir);
    char odir[512];
    snprintf(odir, sizeof odir, "%s-other", dir);
    write_index(&other, odir, 0, 1, 0, 0);
    write_index(&c, dir, 0, 1, 0, 0);
    ig_index *idx = NULL, *oidx = NULL;
    ig_error e;
    CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0 && ig_index_attach(&oidx, odir, NULL, &e) == 0, "attach: %s",
          e.msg);
    if (!idx || !oidx) {
        ig_index_close(&idx);
        ig_index_close(&oidx);
        return;
    }
    volatile int cancel = 1;
    CHECK(ig_next_table_write(idx, tab, 1, &cancel, NULL, &e) == IG_ECANCELLED && access(tab, F_OK) != 0,
          "a cancelled table write leaves no file");
    snprintf(cmd, sizeof cmd, "%s/none/next.tab", dir);
    CHECK(ig_next_table_write(idx, cmd, 1, NULL, NULL, &e) != 0 && strstr(e.msg, cmd),
          "a table in a missing directory: \"%s\" names it", e.msg);
    expect_table_error(idx, cmd, "cannot open", "a missing table");
    expect_table_error(idx, dir, "not a regular file", "a directory as a table");
    uint64_t mc = use_table(idx, tab, 1, "table_cases");
    CHECK(mc == 1, "table written");
    snprintf(cmd, sizeof cmd, "cp %s %s", tab, copy);
    CHECK(system(cmd) == 0, "copy the table");
    snprintf(cmd, sizeof cmd, "cp %s %s", copy, tab); /* from now on: restore it */
    expect_table_error(oidx, tab, "other files", "a table of another index");
    struct stat st;
    stat(tab, &st);
    CHECK(truncate(tab, st.st_size - 1) == 0, "truncate");
    expect_table_error(idx, tab, "cut short", "a table one byte short");
    CHECK(truncate(tab, 10) == 0, "truncate");
    expect_table_error(idx, tab, "cut short", "a table shorter than its header");
    CHECK(system(cmd) == 0, "restore the table");
    poke(tab, 0, 0x20);
    expect_table_error(idx, tab, "magic", "a table with a bad magic");
    CHECK(system(cmd) == 0, "restore the table");
    poke(tab, 8, 0x03); /* layout 1: entries only, no symbols */
    expect_table_error(idx, tab, "where this program reads layout", "a table of an older layout");
    CHECK(system(cmd) == 0, "restore the table");
    poke(tab, 64 + 5, 0x01); /* inside the directory */
    expect_table_error(idx, tab, "checksum", "a table with a damaged directory");
    /* a damaged entry: the table loads, the damaged context is an error, the others are sound */
    CHECK(system(cmd) == 0, "restore the table");
    uint64_t *uni = malloc((V + 1) * sizeof *uni);
    brute_next(&c, NULL, 0, uni, V);
    /* the table's first two contexts are its first two tokens: the first's first symbol (a byte of
     * its probability) and the second's first id-order entry (a high byte of its count) damaged */
    uint32_t tok[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tok[k] = k ? tok[0] + 1 : 0;
        while (tok[k] < V && !uni[tok[k]])
            tok[k]++;
    }
    uint8_t hd[64 + 2 * 72] = {0}; /* the header and two directory records (one shard) */
    FILE *f = fopen(tab, "rb");
    CHECK(f && fread(hd, 1, sizeof hd, f) == sizeof hd, "read the table's header");
    if (f)
        fclose(f);
    uint64_t contexts = ig_load_le64(hd + 32), entries = ig_load_le64(hd + 40), syms_at = 64 + contexts * 72;
    CHECK(ig_load_le64(hd + 64 + 72 + 24) == ig_load_le64(hd + 64 + 32), "the second context's entries follow the first's");
    poke(tab, (long)(syms_at + 16 + 6), 0x01);
    poke(tab, (long)(syms_at + entries * 24 + ig_load_le64(hd + 64 + 72 + 24) * 12 + 4 + 5), 0x40);
    for (int k = 0; k < 2 && tok[1] < V; k++) { /* the first refused; the second's symbols are sound */
        ig_predict_result pr;
        int rc = predict_ids(idx, &tok[k], 1, 0, &pr, &e);
        if (!k)
            CHECK(rc == IG_ECORRUPT && strstr(e.msg, tab) && strstr(e.msg, "checksum"),
                  "predict after a context whose symbols are damaged: \"%s\"", rc ? e.msg : "(answered)");
        else
            CHECK(rc == 0 && pr.syms_borrowed == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__),
                  "predict after a sound context of a damaged table: %s", rc ? e.msg : "not borrowed");
        if (!rc)
            ig_predict_result_free(&pr);
    }
    int errors = 0, sound = 0;
    for (uint32_t t = 0; t < V * (V + 1); t++) /* every token, then every pair */
        for (int by_count = 0; by_count < 2; by_count++) {
            uint32_t a = t < V ? t : t / V - 1, b = t % V;
            uint8_t pb[4] = {(uint8_t)a, (uint8_t)(a >> 8), (uint8_t)b, (uint8_t)(b >> 8)};
            size_t len = t < V ? 2 : 4;
            ig_range rr;
            if (!ig_find(idx, pb, len, &rr))
                continue;
            ig_token_count *v = NULL;
            size_t n;
            int rc = igi_token_hist(idx, &rr, len, by_count, &v, &n, &e);
            if (rc) {
                errors++;
                CHECK(rc == IG_ECORRUPT && strstr(e.msg, tab) && (strstr(e.msg, "checksum") || strstr(e.msg, "order")),
                      "damaged entry: \"%s\"", e.msg);
            } else {
                sound++;
                free(v);
            }
        }
    CHECK(errors == 2 && sound > 0, "a damaged context's order gives an error, twice (%d), the others answer (%d)",
          errors, sound);
    /* cut short after it was put to use: an error, not a fault */
    CHECK(truncate(tab, 64) == 0, "truncate");
    errors = 0;
    for (uint32_t t = 0; t < V; t++) {
        uint8_t pb[2] = {(uint8_t)t, (uint8_t)(t >> 8)};
        ig_range rr;
        ig_token_count *v = NULL;
        size_t n;
        if (!ig_find(idx, pb, 2, &rr))
            continue;
        int rc = igi_token_hist(idx, &rr, 2, 1, &v, &n, &e);
        errors += rc == IG_ECORRUPT && strstr(e.msg, "cut short") != NULL;
        if (!rc)
            free(v);
    }
    CHECK(errors > 0, "a table cut short under its reader gives errors");
    {
        ig_predict_result pr;
        int rc = predict_ids(idx, &tok[1], 1, 0, &pr, &e);
        CHECK(rc == IG_ECORRUPT && strstr(e.msg, "cut short"), "predict from a table cut short under its reader: %s",
              rc ? e.msg : "answered");
        if (!rc)
            ig_predict_result_free(&pr);
    }
    free(uni);
    ig_index_close(&idx);
    ig_index_close(&oidx);
    unlink(tab);
    unlink(copy);
    igi_remove_tree(odir, NULL);
    corpus_free(&c);
    corpus_free(&other);
}

/* A predict answer borrowed from a table outlives the table's replacement (another table put to
 * use, the file renamed over) unchanged, until the index is closed; smoothed answers and those
 * of generate and explain are the caller's own, equal to the table's. */
static void borrow_cases(const char *dir)
{
    test_rng r = {1726};
    corpus c;
    uint32_t V = 30;
    random_corpus(&c, &r, 2, V, 8);
    write_index(&c, dir, 1, 2, 0, 0);
    char tab[512], tab2[512];
    snprintf(tab, sizeof tab, "%s.next", dir);
    snprintf(tab2, sizeof tab2, "%s.next2", dir);
    ig_index *idx = NULL;
    ig_error e;
    CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "attach: %s", e.msg);
    if (!idx) {
        corpus_free(&c);
        return;
    }
    uint64_t *uni = malloc((V + 1) * sizeof *uni), *cnt = malloc((V + 1) * sizeof *cnt);
    brute_next(&c, NULL, 0, uni, V);
    uint32_t top = 0;
    for (uint32_t t = 1; t < V; t++)
        if (uni[t] > uni[top])
            top = t;
    brute_next(&c, &top, 1, cnt, V);
    use_table(idx, tab, 1, "borrow_cases");
    ig_predict_result a, b, smooth;
    int borrows = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    int rc = predict_ids(idx, &top, 1, 0, &a, &e);
    CHECK(rc == 0 && a.syms_borrowed == borrows, "predict after the most frequent token: %s", rc ? e.msg : "borrowed?");
    if (rc) {
        free(uni);
        free(cnt);
        ig_index_close(&idx);
        corpus_free(&c);
        return;
    }
    size_t bytes = a.nsyms * sizeof *a.syms;
    ig_symbol *copy = malloc(bytes + 1);
    memcpy(copy, a.syms, bytes);
    check_exact_syms(&c, a.syms, a.nsyms, cnt, V, "borrow_cases", "borrowed");
    use_table(idx, tab2, 2, "borrow_cases: another table"); /* replaces the first */
    CHECK(!memcmp(a.syms, copy, bytes), "a borrowed answer is unchanged when another table is put to use");
    rc = predict_ids(idx, &top, 1, 0, &b, &e);
    CHECK(rc == 0 && b.syms_borrowed == borrows && (!borrows || b.syms != a.syms) && b.nsyms == a.nsyms &&
          !memcmp(b.syms, copy, bytes), "predict from the new table: %s", rc ? e.msg : "differs");
    if (!rc)
        ig_predict_result_free(&b);
    ig_next_table_info w;
    CHECK(ig_next_table_write(idx, tab, 3, NULL, &w, &e) == 0, "a table written over the first: %s", e.msg);
    CHECK(!memcmp(a.syms, copy, bytes), "a borrowed answer is unchanged when its file is replaced");
    ig_predict_result_free(&a);
    /* smoothed: the caller's own symbols, from the same counts */
    rc = predict_ids(idx, &top, 1, 0.5, &smooth, &e);
    CHECK(rc == 0 && !smooth.syms_borrowed && smooth.nsyms == bytes / sizeof *copy, "smoothed predict: %s",
          rc ? e.msg : "borrowed or other symbols");
    for (size_t i = 0; !rc && i < smooth.nsyms; i++)
        CHECK(!memcmp(smooth.syms[i].bytes, copy[i].bytes, 4) && smooth.syms[i].count == copy[i].count,
              "smoothed symbol %zu: other token or count than the unsmoothed", i);
    if (!rc) {
        volatile ig_symbol *own = smooth.syms; /* its own memory: writable (a borrowed one is not) */
        own[0].prob = own[0].prob;
        ig_predict_result_free(&smooth);
    }
    /* explain's answer is its own too (a write would fault on a borrowed one) */
    ig_op_ctx ctx = {.idx = idx, .dataset = "t"};
    char ids[16];
    snprintf(ids, sizeof ids, "%u", top);
    ig_explain_opts x;
    ig_explain_defaults(&x);
    x.ids = (ig_bytes){(uint8_t *)ids, strlen(ids)};
    ig_explain_result xr;
    rc = ig_op_explain.run(&ctx, &x, &xr, &e);
    CHECK(rc == 0 && xr.nsyms == bytes / sizeof *copy && !memcmp(xr.syms, copy, bytes), "explain after the most "
          "frequent token: %s", rc ? e.msg : "other symbols than predict");
    if (!rc) {
        volatile ig_symbol *own = xr.syms;
        own[0].count = own[0].count;
        ig_explain_result_free(&xr);
    }
    free(copy);
    free(uni);
    free(cnt);
    ig_index_close(&idx);
    unlink(tab);
    unlink(tab2);
    igi_remove_tree(dir, NULL);
    corpus_free(&c);
}

/* A shard of over a million rows is spot-checked at attach (a smaller one has every row
 * checked, hostile_cases): a row the spot check passes over that points inside a token is
 * met by the query that reads it, which fails as corrupt instead of comparing a suffix from
 * the middle of a token (predict listed ids the corpus never held). */
static void unsampled_cases(const char *dir)
{
    test_rng r = {23};
    corpus c;
    random_corpus(&c, &r, 2, 600, 48000);
    write_index(&c, dir, 0, 1, 0, 0);
    char tab[512], tok[512];
    snprintf(tab, sizeof tab, "%s/table.0", dir);
    snprintf(tok, sizeof tok, "%s/tokenized.0", dir);
    char *table = NULL, *text = NULL;
    size_t tlen = 0, xlen = 0;
    CHECK(!igi_read_file(tab, SIZE_MAX, &table, &tlen, NULL) && !igi_read_file(tok, SIZE_MAX, &text, &xlen, NULL),
          "read the index");
    uint64_t rows = xlen / 2, pw = rows ? tlen / rows : 0;
    CHECK(rows > (1u << 20) && pw >= 3, "a shard of %" PRIu64 " rows, pointers of %" PRIu64 " bytes", rows, pw);
    uint64_t row = (rows / 1024 + 1) / 2, ptr = 0; /* between two sampled pairs */
    for (uint64_t b = pw; table && b-- > 0;)
        ptr = ptr << 8 | (uint8_t)table[row * pw + b];
    uint8_t id[2] = {(uint8_t)text[ptr], (uint8_t)text[ptr + 1]};
    poke(tab, (long)(row * pw), 0x01); /* the pointer moved by one byte: inside its token */
    ig_index *idx = NULL;
    ig_error e = {0};
    CHECK(ig_index_attach(&idx, dir, NULL, &e) == 0, "a large shard with one bad row: attach (spot check): %s", e.msg);
    if (idx) {
        uint64_t total = 0;
        ig_positions(idx, id, 2, NULL, 0, &total);
        ig_pos *pos = total ? malloc(total * sizeof *pos) : NULL;
        if (pos)
            ig_positions(idx, id, 2, pos, total, &total); /* every row of the id's interval */
        free(pos);
        int bad = ig_index_health(idx, "t", &e);
        CHECK(bad && strstr(e.msg, "inside a token") && strstr(e.msg, "table.0"),
              "the row inside a token is found by the query that reads it: %s", bad ? e.msg : "no error");
        ig_index_close(&idx);
    }
    free(table);
    free(text);
    corpus_free(&c);
}

int main(void)
{
    char dir[] = "/tmp/ig-tokens-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char sub[64];
    snprintf(sub, sizeof sub, "%s/idx", dir);
    oracle_cases(sub);
    hostile_cases(sub);
    vocab_cases(sub);
    cache_cases(sub);
    table_cases(sub);
    borrow_cases(sub);
    unsampled_cases(sub);
    igi_remove_tree(dir, NULL);
    return check_done("tokens");
}
#endif
