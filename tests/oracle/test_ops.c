/*
 * The typed operations driven through their C API on random small corpora, against
 * brute force: count and its occurrences (doc, offset, snippet), doc slicing (whole
 * characters only), spans' counts and sources, search over one-term and two-clause
 * queries, explain's profile; and against the library calls they wrap: predict, prob,
 * backoff, mix, generate; generate's summary (median effective n, longest verbatim span and its
 * source, coverage by spans of 20 bytes) against brute force for seeds 1..100 per corpus. Then
 * the field setters' bounds and the CNF parser's caps.
 */
#include <math.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/* Occurrences of p in the documents, in corpus order: (doc, offset) pairs. */
static size_t brute(ig_buf *docs, size_t nd, const uint8_t *p, size_t n, uint64_t *doc, uint64_t *off, size_t max)
{
    size_t k = 0;
    for (size_t d = 0; d < nd; d++)
        for (size_t i = 0; n && i + n <= docs[d].len; i++)
            if (!memcmp(docs[d].data + i, p, n)) {
                if (k < max) {
                    doc[k] = d;
                    off[k] = i;
                }
                k++;
            }
    return k;
}

static ig_bytes bytes_of(const uint8_t *p, size_t n)
{
    ig_bytes b = {malloc(n + 1), n};
    memcpy(b.p, p, n);
    b.p[n] = 0;
    return b;
}

/* generate's summary against brute force, seeds 1..100 on one corpus, the options varying with
 * the seed (model, context cap, temperature, stop strings, the end of documents): the median
 * effective n of the steps, the longest verbatim span (the longest prefix of text[i..] found in
 * a document, over every i), its first occurrence in corpus order, and the share of the text
 * inside such spans of 20 bytes or more. */
static void generate_summaries(test_rng *r, const ig_op_ctx *ctx, ig_buf *docs, size_t nd)
{
    ig_error e;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        size_t d = rng_below(r, nd), a0 = rng_below(r, docs[d].len + 1), len = rng_below(r, 12);
        if (a0 + len > docs[d].len)
            len = docs[d].len - a0;
        while (len && (docs[d].data[a0] & 0xC0) == 0x80)
            a0++, len--;
        while (len && a0 + len < docs[d].len && (docs[d].data[a0 + len] & 0xC0) == 0x80)
            len--;
        ig_generate_opts go;
        ig_generate_defaults(&go);
        go.query = bytes_of(docs[d].data + a0, len);
        go.seed = seed;
        go.max = 1 + rng_below(r, 80);
        go.temperature = seed % 3 == 0 ? 0 : seed % 3 == 1 ? 0.8 : 1.5;
        go.no_stop_at_end = seed % 2;
        switch (seed % 6) {
        case 0: go.model.interp = 1; break;
        case 1: go.model.n = 3; break;
        case 2: go.model.max_context = (int64_t)(1 + rng_below(r, 6)); break; /* ℓ* cut by the cap */
        case 3: go.model.infgram = 1; break;
        default: break; /* interpolation over two levels, generation's default */
        }
        if (seed % 5 == 0) {
            go.stop.v = calloc(1, sizeof *go.stop.v);
            go.stop.v[0] = bytes_of((const uint8_t *)(seed % 10 ? "a" : "the"), seed % 10 ? 1 : 3);
            go.stop.n = 1;
        }
        ig_generate_result gr;
        if (ig_generate_run(ctx, &go, &gr, &e) != 0) {
            /* refused only when the model has no estimate after the prompt: predict agrees */
            ig_predict_opts po;
            ig_predict_defaults(&po);
            po.query = go.query;
            po.model = go.model;
            if (po.model.interp == IG_UNSET && !po.model.n && !po.model.infgram && po.model.weighted < 0)
                po.model.interp = 2; /* generation's default model, where predict's is the ∞-gram */
            ig_predict_result pr;
            ig_error pe;
            int prc = ig_predict_run(ctx, &po, &pr, &pe);
            /* no estimate, or (the end of documents not stopping it) only <end> */
            int only_end = prc == 0 && go.no_stop_at_end && pr.dist.defined;
            for (size_t k = 0; only_end && k < pr.nsyms; k++)
                only_end = pr.syms[k].prob == 0 || (pr.syms[k].len == 1 && pr.syms[k].bytes[0] == 0xFF);
            CHECK(e.code == IG_EUSAGE && strstr(e.msg, "nothing to continue") && prc == 0 && (!pr.dist.defined || only_end),
                  "generate seed %llu: %s (predict: %d, defined %d)", (unsigned long long)seed, e.msg, prc,
                  prc ? -1 : pr.dist.defined);
            if (!prc)
                ig_predict_result_free(&pr);
            ig_fields_free(ig_generate_fields, &go);
            continue;
        }
        /* median effective n: the middle of the sorted steps */
        uint64_t *en = calloc(gr.nsteps + 1, sizeof *en);
        for (size_t i = 0; i < gr.nsteps; i++) {
            size_t k = i;
            for (; k > 0 && en[k - 1] > gr.steps[i].effective_n; k--)
                en[k] = en[k - 1];
            en[k] = gr.steps[i].effective_n;
        }
        CHECK(gr.median_effective_n == (gr.nsteps ? en[gr.nsteps / 2] : 0), "seed %llu: median effective n %llu",
              (unsigned long long)seed, (unsigned long long)gr.median_effective_n);
        free(en);
        /* matching statistics by brute force */
        uint64_t longest = 0, reach = 0, uncovered = 0, bd[1], bo[1];
        size_t at = 0;
        for (size_t i = 0; i < gr.len; i++) {
            uint64_t m = 0;
            while (i + m < gr.len && brute(docs, nd, gr.text + i, (size_t)m + 1, bd, bo, 0))
                m++;
            if (m > longest)
                longest = m, at = i;
            if (m >= 20 && i + m > reach)
                reach = i + m;
            uncovered += reach <= i;
        }
        double inside = gr.len ? 1 - (double)uncovered / (double)gr.len : 0;
        CHECK(gr.longest_span == longest, "seed %llu: longest span %llu, brute force %llu", (unsigned long long)seed,
              (unsigned long long)gr.longest_span, (unsigned long long)longest);
        CHECK(gr.inside_spans_20 == inside, "seed %llu: inside spans of 20 bytes %g, brute force %g",
              (unsigned long long)seed, gr.inside_spans_20, inside);
        CHECK(gr.has_source == (longest > 0), "seed %llu: source", (unsigned long long)seed);
        if (longest && gr.has_source) {
            brute(docs, nd, gr.text + at, (size_t)longest, bd, bo, 1);
            CHECK(gr.longest_source.doc == bd[0] && gr.longest_source.offset == bo[0],
                  "seed %llu: longest span's source doc %llu @%llu, brute force doc %llu @%llu", (unsigned long long)seed,
                  (unsigned long long)gr.longest_source.doc, (unsigned long long)gr.longest_source.offset,
                  (unsigned long long)bd[0], (unsigned long long)bo[0]);
        }
        ig_generate_result_free(&gr);
        ig_fields_free(ig_generate_fields, &go);
    }
}

static void corpus_case(test_rng *r, const char *dir)
{
    static const char *pieces[] = {"a", "b", "ab", "é", "ba", "\xe2\x82\xac", " ", "\n", "the ", "cat"};
    size_t nd = 1 + rng_below(r, 6);
    ig_buf *docs = calloc(nd, sizeof *docs);
    ig_source *src = calloc(nd, sizeof *src);
    for (size_t i = 0; i < nd; i++) {
        size_t k = 3 + rng_below(r, 120);
        for (size_t j = 0; j < k; j++) {
            const char *p = pieces[rng_below(r, 10)];
            ig_buf_append(&docs[i], p, strlen(p));
        }
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)docs[i].data, .text_len = docs[i].len};
    }
    ig_index *idx = NULL;
    if (oracle_build(dir, src, nd, rng_below(r, 2) ? 64 : 1u << 30, 0, 0, &idx)) {
        free(src);
        free(docs);
        return;
    }
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_error e;
    for (int q = 0; q < 30; q++) {
        /* a query: a random slice of a document (usually present) */
        size_t d = rng_below(r, nd), a0 = rng_below(r, docs[d].len + 1), len = 1 + rng_below(r, 6);
        if (a0 + len > docs[d].len)
            len = docs[d].len - a0;
        /* a third are raw byte slices, which may start or end inside a character */
        int raw = rng_below(r, 3) == 0;
        while (!raw && len && (docs[d].data[a0] & 0xC0) == 0x80)
            a0++, len--;
        while (!raw && len && a0 + len < docs[d].len && (docs[d].data[a0 + len] & 0xC0) == 0x80)
            len--;
        if (!len)
            continue;
        const uint8_t *p = docs[d].data + a0;
        /* count and positions */
        ig_count_opts co;
        ig_count_defaults(&co);
        co.query = bytes_of(p, len);
        co.positions = rng_below(r, 5);
        co.width = rng_below(r, 10);
        ig_count_result cr;
        uint64_t bd[8], bo[8];
        size_t total = brute(docs, nd, p, len, bd, bo, 8);
        CHECK(ig_count_run(&ctx, &co, &cr, &e) == 0, "count: %s", e.msg);
        CHECK(cr.count == total, "count %llu, brute force %zu", (unsigned long long)cr.count, total);
        CHECK(cr.nocc == (total < co.positions ? total : co.positions), "listed %zu", cr.nocc);
        for (size_t i = 0; i < cr.nocc && i < 8; i++) {
            CHECK(cr.occ[i].loc.doc == bd[i] && cr.occ[i].loc.offset == bo[i], "occurrence %zu: doc %llu @%llu, want %llu @%llu",
                  i, (unsigned long long)cr.occ[i].loc.doc, (unsigned long long)cr.occ[i].loc.offset,
                  (unsigned long long)bd[i], (unsigned long long)bo[i]);
            const char *s = cr.occ[i].snippet;
            CHECK(s && cr.occ[i].hl0 <= cr.occ[i].hl1 && cr.occ[i].hl1 <= strlen(s) &&
                      ig_utf8_valid((const uint8_t *)s, strlen(s), NULL),
                  "snippet %zu", i);
            /* the highlight shows the match, widened to whole characters */
            int shown = 1;
            for (size_t k = 0; k < len; k++)
                shown &= p[k] >= 0x20;
            CHECK(!s || !shown || cr.occ[i].hl1 > strlen(s) ||
                      memmem(s + cr.occ[i].hl0, cr.occ[i].hl1 - cr.occ[i].hl0, p, len) != NULL,
                  "snippet %zu: the highlight \"%.*s\" does not hold the match", i,
                  (int)(cr.occ[i].hl1 - cr.occ[i].hl0), s + cr.occ[i].hl0);
        }
        char *js = ig_count_json(&ctx, &co, &cr);
        CHECK(js && strstr(js, "\"count\":"), "count json");
        free(js);
        ig_count_result_free(&cr);
        ig_fields_free(ig_count_fields, &co);
        /* spans: each span's count is its brute-force count, its sources its first occurrences */
        ig_spans_opts so;
        ig_spans_defaults(&so);
        so.query = bytes_of(docs[d].data, docs[d].len);
        so.min_len = 1 + rng_below(r, 4);
        ig_spans_result sr;
        CHECK(ig_spans_run(&ctx, &so, &sr, &e) == 0, "spans: %s", e.msg);
        for (size_t i = 0; i < sr.nspans; i++) {
            size_t t = brute(docs, nd, sr.text + sr.spans[i].start, sr.spans[i].length, bd, bo, 8);
            CHECK(sr.spans[i].count == t && sr.totals[i] == t, "span %zu count %llu, brute %zu", i,
                  (unsigned long long)sr.spans[i].count, t);
            for (size_t k = 0; k < sr.nsources[i] && k < 8; k++)
                CHECK(sr.sources[i][k].loc.doc == bd[k] && sr.sources[i][k].loc.offset == bo[k], "span source");
        }
        ig_spans_result_free(&sr);
        ig_fields_free(ig_spans_fields, &so);
        /* search for the query as one term: documents containing it */
        size_t ndocs = 0;
        for (size_t k = 0; k < nd; k++)
            ndocs += brute(&docs[k], 1, p, len, bd, bo, 0) > 0;
        ig_buf qt = {0};
        ig_buf_append(&qt, "\"", 1);
        for (size_t k = 0; k < len; k++) {
            char esc[8];
            int m = p[k] == '"' || p[k] == '\\' ? snprintf(esc, sizeof esc, "\\%c", p[k])
                    : p[k] < 0x20             ? snprintf(esc, sizeof esc, "\\x%02x", p[k])
                                              : snprintf(esc, sizeof esc, "%c", p[k]);
            ig_buf_append(&qt, esc, (size_t)m);
        }
        ig_buf_append(&qt, "\"", 1);
        ig_search_opts xo;
        ig_search_defaults(&xo);
        xo.query = bytes_of(qt.data, qt.len);
        xo.limit = 100;
        ig_search_op_result xr;
        CHECK(ig_search_run(&ctx, &xo, &xr, &e) == 0, "search %.*s: %s", (int)qt.len, qt.data, e.msg);
        CHECK(xr.documents_total == ndocs && xr.ndocs == ndocs, "search: %llu documents, brute force %zu",
              (unsigned long long)xr.documents_total, ndocs);
        ig_search_op_result_free(&xr);
        if (ndocs) { /* a raised cancel flag stops the search while it reads the term's rows */
            volatile int stop = 1;
            ig_op_ctx cc = ctx;
            cc.cancel = &stop;
            CHECK(ig_search_run(&cc, &xo, &xr, &e) == IG_ECANCELLED && xr.ndocs == 0, "search ignored its cancel flag");
            ig_search_op_result_free(&xr);
        }
        ig_fields_free(ig_search_fields, &xo);
        ig_buf_free(&qt);
        /* doc --range: whole characters, the largest such slice inside A:B */
        ig_doc_opts dop;
        ig_doc_defaults(&dop);
        char id[24], range[48];
        snprintf(id, sizeof id, "%zu", d);
        size_t x = rng_below(r, docs[d].len + 1), y = x + rng_below(r, docs[d].len + 1 - x);
        snprintf(range, sizeof range, "%zu:%zu", x, y);
        dop.query = bytes_of((const uint8_t *)id, strlen(id));
        dop.range = bytes_of((const uint8_t *)range, strlen(range));
        ig_doc_result dr;
        CHECK(ig_doc_run(&ctx, &dop, &dr, &e) == 0, "doc: %s", e.msg);
        size_t wx = x, wy = y;
        while (wx < wy && (docs[d].data[wx] & 0xC0) == 0x80)
            wx++;
        while (wy > wx && wy < docs[d].len && (docs[d].data[wy] & 0xC0) == 0x80)
            wy--;
        while (wx == wy && wx < docs[d].len && (docs[d].data[wx] & 0xC0) == 0x80)
            wy = ++wx; /* an empty slice sits at a character's edge too */
        CHECK(dr.offset == wx && dr.len == wy - wx && !memcmp(dr.text, docs[d].data + wx, wy - wx) &&
                  ig_utf8_valid(dr.text, dr.len, NULL),
              "doc %s range %s: got @%llu+%zu, want @%zu+%zu", id, range, (unsigned long long)dr.offset, dr.len, wx,
              wy - wx);
        ig_fields_free(ig_doc_fields, &dop);
        /* predict, prob, backoff: the operations give what the library calls give */
        ig_predict_opts po;
        ig_predict_defaults(&po);
        po.query = bytes_of(docs[d].data, a0 + len);
        if (rng_below(r, 2))
            po.model.interp = 2;
        ig_predict_result pr;
        ig_model m;
        CHECK(ig_predict_run(&ctx, &po, &pr, &e) == 0, "predict: %s", e.msg);
        CHECK(ig_model_resolve(&po.model, &m, &e) == 0, "resolve");
        ig_dist dd;
        CHECK(ig_predict(idx, &m, po.query.p, po.query.n, &dd, &e) == 0, "predict direct");
        CHECK(!memcmp(dd.prob, pr.dist.prob, sizeof dd.prob) && dd.length == pr.dist.length, "predict op = direct");
        int nz = 0;
        for (size_t k = 0; k < pr.nsyms; k++)
            nz += pr.syms[k].prob > 0;
        CHECK(pr.sparse == (pr.dist.defined && nz == 1 && pr.unseen == 0), "sparse");
        ig_dist_free(&dd);
        /* explain's profile: cnt(suffix) by brute force */
        ig_explain_opts eo;
        ig_explain_defaults(&eo);
        eo.query = bytes_of(po.query.p, po.query.n);
        eo.model = po.model;
        ig_explain_result er;
        CHECK(ig_explain_run(&ctx, &eo, &er, &e) == 0, "explain: %s", e.msg);
        for (size_t k = 0; k < er.nprofile; k++) {
            size_t l = (size_t)er.profile[k].length;
            size_t t = brute(docs, nd, po.query.p + po.query.n - l, l, bd, bo, 0);
            CHECK(er.profile[k].count == t, "profile ℓ=%zu: %llu, brute %zu", l, (unsigned long long)er.profile[k].count, t);
        }
        ig_explain_result_free(&er);
        ig_fields_free(ig_explain_fields, &eo);
        ig_predict_result_free(&pr);
        ig_fields_free(ig_predict_fields, &po);
        ig_prob_opts bo2;
        ig_prob_defaults(&bo2);
        bo2.query = bytes_of(docs[d].data, a0);
        bo2.continuation = bytes_of(p, len);
        ig_prob_result prr;
        CHECK(ig_prob_run(&ctx, &bo2, &prr, &e) == 0, "prob: %s", e.msg);
        ig_factor *f = NULL;
        size_t nf = 0;
        double pp = 0, lp = 0;
        ig_model_default(&m);
        CHECK(ig_prob(idx, &m, bo2.query.p, bo2.query.n, p, len, 1, &f, &nf, &pp, &lp, &e) == 0, "prob direct");
        CHECK(pp == prr.prob && nf == prr.nfactors, "prob op = direct");
        free(f);
        ig_prob_result_free(&prr);
        { /* a raised cancel flag stops the chain (the op's and the function's) */
            volatile int stop = 1;
            ig_op_ctx cc = ctx;
            cc.cancel = &stop;
            CHECK(ig_prob_run(&cc, &bo2, &prr, &e) == IG_ECANCELLED && prr.nfactors == 0, "prob ignored cancel");
            f = NULL;
            m.cancel = &stop;
            CHECK(ig_prob(idx, &m, bo2.query.p, bo2.query.n, p, len, 1, &f, &nf, &pp, &lp, &e) == IG_ECANCELLED &&
                      !f,
                  "ig_prob ignored cancel");
            m.cancel = NULL;
            ig_prob_result_free(&prr);
        }
        ig_fields_free(ig_prob_fields, &bo2);
        /* generate: the same seed, the same text as the generator itself */
        ig_generate_opts go;
        ig_generate_defaults(&go);
        go.query = bytes_of(p, len);
        go.seed = rng_next(r) >> 1;
        go.max = 1 + rng_below(r, 30);
        ig_generate_result gr;
        CHECK(ig_generate_run(&ctx, &go, &gr, &e) == 0, "generate: %s", e.msg);
        ig_gen_options gopt;
        ig_gen_options_default(&gopt);
        gopt.model.kind = IG_MODEL_INTERP;
        gopt.model.interp_k = 2;
        gopt.seed = go.seed;
        gopt.max_chars = go.max;
        ig_gen *g = NULL;
        ig_gen_step st;
        CHECK(ig_gen_start(&g, idx, &gopt, p, len, &e) == 0, "gen start");
        while (g && ig_gen_next(g, &st, &e) == IG_STOP_NONE)
            ;
        size_t tl = 0;
        const uint8_t *t = g ? ig_gen_text(g, &tl) : NULL;
        CHECK(t && tl == gr.len && !memcmp(t, gr.text, tl) && gr.nsteps == ig_gen_chars(g), "generate op = direct");
        ig_gen_free(&g);
        ig_generate_result_free(&gr);
        ig_fields_free(ig_generate_fields, &go);
    }
    generate_summaries(r, &ctx, docs, nd);
    /* mix: the operation parses the candidates and gives ig_mix's numbers */
    ig_mix_opts mo;
    ig_mix_defaults(&mo);
    const char *llm = "[{\"token\":\"a\",\"logprob\":-0.5},{\"bytes_hex\":\"e282ac\",\"prob\":0.2},{\"bytes\":[98],\"logprob\":-2}]";
    mo.query = bytes_of(docs[0].data, docs[0].len / 2);
    mo.llm = bytes_of((const uint8_t *)llm, strlen(llm));
    mo.lambda = 0.3;
    ig_mix_result mr;
    CHECK(ig_mix_run(&ctx, &mo, &mr, &e) == 0, "mix: %s", e.msg);
    ig_mix_token toks[3] = {{(const uint8_t *)"a", 1, -0.5}, {(const uint8_t *)"\xe2\x82\xac", 3, log(0.2)},
                            {(const uint8_t *)"b", 1, -2}};
    ig_mix_out out[3];
    ig_mix_options mopt;
    ig_mix_options_default(&mopt);
    mopt.lambda = 0.3;
    double lam;
    CHECK(ig_mix(idx, &mopt, mo.query.p, mo.query.n, toks, 3, out, &lam, NULL, NULL, &e) == 0, "mix direct");
    for (int k = 0; k < 3 && mr.ntokens == 3; k++)
        CHECK(out[k].mixed_prob == mr.out[k].mixed_prob && out[k].rank_after == mr.out[k].rank_after, "mix op = direct");
    ig_mix_result_free(&mr);
    ig_fields_free(ig_mix_fields, &mo);
    ig_index_close(&idx);
    for (size_t i = 0; i < nd; i++)
        ig_buf_free(&docs[i]);
    free(docs);
    free(src);
}

struct seen_log {
    char names[64];
    int value; /* the first name's */
};

static void msg_seen(void *ctx, const char *name, size_t len, int value)
{
    struct seen_log *l = ctx;
    size_t n = strlen(l->names);
    snprintf(l->names + n, sizeof l->names - n, "%.*s,", (int)len, name);
    if (l->value < 0)
        l->value = value;
}

static void fields_and_caps(void)
{
    ig_error e;
    ig_count_opts co;
    ig_count_defaults(&co);
    const ig_field *pos = ig_field_find(ig_count_fields, "positions", 9);
    CHECK(ig_field_set_number(pos, &co, 3, &e) == 0 && co.positions == 3, "positions 3");
    CHECK(ig_field_set_number(pos, &co, -1, &e) == IG_EUSAGE && co.positions == 3, "positions -1");
    CHECK(ig_field_set_number(pos, &co, 1e300, &e) == IG_EUSAGE, "positions 1e300");
    CHECK(ig_field_set_number(pos, &co, 2.5, &e) == IG_EUSAGE, "positions 2.5");
    CHECK(ig_field_set_number(pos, &co, NAN, &e) == IG_EUSAGE, "positions NaN");
    CHECK(ig_field_set_text(pos, &co, (const uint8_t *)"12", 2, &e) == 0 && co.positions == 12, "positions \"12\"");
    CHECK(ig_field_set_text(pos, &co, (const uint8_t *)"1x", 2, &e) == IG_EUSAGE, "positions \"1x\"");
    CHECK(ig_field_set_bool(pos, &co, 1, &e) == IG_EUSAGE, "positions true");
    const ig_field *q = ig_field_find(ig_count_fields, "query", 5);
    CHECK(ig_field_set_text(q, &co, (const uint8_t *)"a\0b", 3, &e) == 0 && co.query.n == 3 && co.query.p[1] == 0,
          "NUL kept in a text field");
    ig_fields_free(ig_count_fields, &co);
    ig_generate_opts go;
    ig_generate_defaults(&go);
    const ig_field *seed = ig_field_find(ig_generate_fields, "seed", 4);
    CHECK(ig_field_set_text(seed, &go, (const uint8_t *)"99999999999999999999999", 23, &e) == IG_EUSAGE,
          "a seed past 2^64 is an error, not clamped");
    CHECK(ig_field_set_number(seed, &go, 9007199254740994.0, &e) == IG_EUSAGE, "JSON seeds stay exact");
    ig_fields_free(ig_generate_fields, &go);
    char msg[128];
    ig_field_msg_render("{sbi} goes with {interp} K", "--", '-', "", msg, sizeof msg);
    CHECK(!strcmp(msg, "--sbi goes with --interp K"), "render: %s", msg);
    ig_field_msg_render("{max_context}: bad", "\"", '_', "\"", msg, sizeof msg);
    CHECK(!strcmp(msg, "\"max_context\": bad"), "render: %s", msg);
    /* the shell's spelling: a positional field by its placeholder, left out with its ": "
     * when it opens the message; each {name} reported once, in order */
    struct seen_log log = {"", -1};
    ig_field_msg_shell(ig_count_fields, "{query}: {top_k} must go with {positions} or {query}", msg, sizeof msg,
                       msg_seen, &log);
    CHECK(!strcmp(msg, "--top-k must go with --positions or TEXT"), "shell render: %s", msg);
    CHECK(!strcmp(log.names, "query,top_k,positions,query,") && log.value == 1, "seen: %s %d", log.names, log.value);
    ig_field_msg_shell(NULL, "{query} x {}{a b}", msg, sizeof msg, NULL, NULL);
    CHECK(!strcmp(msg, "--query x {}{a b}"), "shell render without fields: %s", msg);
    ig_field_msg_shell(ig_count_fields, "{max_context} is long", msg, 8, NULL, NULL);
    CHECK(!strcmp(msg, "--max-c"), "shell render cut at the buffer: %s", msg);
    /* CNF caps: 256 clauses, 1024 terms */
    ig_buf b = {0};
    for (int i = 0; i < 257; i++)
        ig_buf_append(&b, "w ", 2);
    ig_cnf *cnf = NULL;
    size_t at = 0;
    CHECK(ig_cnf_parse(b.data, b.len - 2, &cnf, &at, &e) == 0 && cnf->nclauses == 256 - 0 + 0, "256 clauses parse");
    ig_cnf_free(&cnf);
    CHECK(ig_cnf_parse(b.data, b.len, &cnf, &at, &e) == IG_EUSAGE && strstr(e.msg, "256"), "257 clauses: %s", e.msg);
    ig_buf_free(&b);
    ig_buf_append(&b, "(", 1);
    for (int i = 0; i < 1025; i++)
        ig_buf_append(&b, i ? " OR x" : "x", i ? 5 : 1);
    ig_buf_append(&b, ")", 1);
    CHECK(ig_cnf_parse(b.data, b.len, &cnf, &at, &e) == IG_EUSAGE && strstr(e.msg, "1024"), "1025 terms: %s", e.msg);
    ig_buf_free(&b);
    CHECK(ig_cnf_parse((const uint8_t *)"\"a\" AND (\"b\" OR c) d", 20, &cnf, &at, &e) == 0 && cnf->nclauses == 3 &&
              cnf->nterms[1] == 2 && cnf->lens[1][1] == 1 && cnf->terms[1][1][0] == 'c',
          "CNF shape");
    ig_cnf_free(&cnf);
    CHECK(ig_cnf_parse((const uint8_t *)"(\"a\" OR", 7, &cnf, &at, &e) == IG_EUSAGE && at == 0, "unbalanced at 0");
    ig_mix_token *t = NULL;
    size_t nt = 0;
    uint8_t *arena = NULL;
    static const char *bad[] = {"/etc/passwd", "[{\"token\":\"a\\uZZZZ\",\"logprob\":-1}]",
                                "[{\"token\":\"\\ud800\",\"logprob\":-1}]", "[{\"token\":\"a\",\"logprob\":\"NaN\"}]",
                                "[{\"token\":\"a\",\"logprob\":1}]", "[]", "{\"a\":-1,\"a\":-2}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(ig_mix_candidates_parse((const uint8_t *)bad[i], strlen(bad[i]), &t, &nt, &arena, &e) != 0 && !t && !arena,
              "bad candidates %zu accepted", i);
    const char *nul = "[{\"token\":\"a\\u0000b\",\"logprob\":-1}]";
    CHECK(ig_mix_candidates_parse((const uint8_t *)nul, strlen(nul), &t, &nt, &arena, &e) == 0 && nt == 1 &&
              t[0].len == 3 && t[0].bytes[1] == 0,
          "a NUL inside a token is a byte of it");
    free(t);
    free(arena);
}

/* ig_utf8_prefix against brute force: the longest prefix of at most max bytes that is a
 * character boundary (the text's end, or a byte that is not a continuation byte). */
static void utf8_prefixes(test_rng *r)
{
    static const char *const chars[] = {"a", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (int c = 0; c < 500; c++) {
        uint8_t t[64];
        size_t n = 0, want_cap = rng_below(r, 70);
        while (n < 48) {
            const char *ch = chars[rng_below(r, 5)];
            size_t l = strlen(ch);
            memcpy(t + n, ch, l);
            n += l;
            if (rng_below(r, 8) == 0)
                break;
        }
        size_t want = n <= want_cap ? n : want_cap;
        while (want < n && want > 0 && (t[want] & 0xC0) == 0x80)
            want--;
        size_t got = ig_utf8_prefix(t, n, want_cap);
        CHECK(got == want && ig_utf8_valid(t, got, NULL), "utf8 prefix of %zu bytes at most %zu: %zu, want %zu", n,
              want_cap, got, want);
    }
}

/* A suffix array rewritten in place under an open index: the typed operation itself (not
 * only the registry) reports the corruption its search met, instead of a wrong count. */
static void sa_rewritten(const char *tmp)
{
    char dir[300], sa[340];
    snprintf(dir, sizeof dir, "%s/rewritten", tmp);
    static const char text[] = "the cat sat on the mat and the dog sat on the log";
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = sizeof text - 1};
    ig_index *idx = NULL;
    if (oracle_build(dir, &src, 1, 1u << 30, 0, 0, &idx))
        return;
    snprintf(sa, sizeof sa, "%s/shard-0000/sa", dir);
    FILE *f = fopen(sa, "r+b");
    CHECK(f != NULL, "open %s", sa);
    if (f) {
        for (size_t i = 0; i < 4 * sizeof text; i++)
            fputc(0xEE, f);
        fclose(f);
    }
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_count_opts co;
    ig_count_defaults(&co);
    co.query = bytes_of((const uint8_t *)"the", 3);
    co.positions = 2;
    ig_count_result cr;
    ig_error e;
    CHECK(ig_count_run(&ctx, &co, &cr, &e) == IG_ECORRUPT && cr.nocc == 0, "a rewritten suffix array: %s", e.msg);
    ig_fields_free(ig_count_fields, &co);
    ig_index_close(&idx);
}

/* A listing's memory is bounded at width 0 too, and each snippet holds its text, not a page. */
static void listing_bounds(const char *tmp)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/many", tmp);
    size_t n = 600000;
    char *text = malloc(n);
    if (!text)
        return;
    memset(text, 'a', n);
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = n};
    ig_index *idx = NULL;
    if (oracle_build(dir, &src, 1, 1u << 30, 0, 0, &idx)) {
        free(text);
        return;
    }
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_count_opts co;
    ig_count_defaults(&co);
    co.query = bytes_of((const uint8_t *)"a", 1);
    co.width = 0;
    co.positions = 600000;
    ig_count_result cr;
    ig_error e;
    CHECK(ig_count_run(&ctx, &co, &cr, &e) == IG_EUSAGE && strstr(e.msg, "{positions}"),
          "600,000 occurrences at width 0 are listed (no bound): %s", e.msg);
    co.positions = 100000;
    CHECK(ig_count_run(&ctx, &co, &cr, &e) == 0 && cr.nocc == 100000, "100,000 occurrences: %s", e.msg);
    size_t most = 0;
    for (size_t i = 0; i < cr.nocc; i++)
        if (cr.occ[i].snippet && malloc_usable_size(cr.occ[i].snippet) > most)
            most = malloc_usable_size(cr.occ[i].snippet);
    CHECK(most < 64, "a snippet of a few bytes holds %zu", most);
    ig_count_result_free(&cr);
    ig_fields_free(ig_count_fields, &co);
    /* a search reads at most IG_SEARCH_MAX_ROWS rows in all, whatever its clauses */
    ig_buf many = {0};
    for (int c = 0; c < 60; c++) /* 60 clauses of 600,000 rows: 36 M rows */
        ig_buf_append(&many, c ? " AND \"a\"" : "\"a\"", c ? 8 : 3);
    ig_search_opts so;
    ig_search_defaults(&so);
    so.query = bytes_of(many.data, many.len);
    ig_search_op_result sr;
    CHECK(ig_search_run(&ctx, &so, &sr, &e) == IG_EUSAGE && strstr(e.msg, "{budget}"),
          "a search of 36 M rows ran: %s", e.msg);
    so.budget = 100000; /* sampled: 60 × 100,000 rows */
    CHECK(ig_search_run(&ctx, &so, &sr, &e) == 0 && sr.approximate, "the same search sampled: %s", e.msg);
    ig_search_op_result_free(&sr);
    ig_fields_free(ig_search_fields, &so);
    ig_buf_free(&many);
    ig_index_close(&idx);
    free(text);
}

int main(void)
{
    test_rng r = {4242};
    char tmpl[] = "/tmp/igopsXXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    int n = scaled(24);
    for (int i = 0; i < n; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/c%d", tmpl, i);
        corpus_case(&r, dir);
    }
    fields_and_caps();
    utf8_prefixes(&r);
    sa_rewritten(tmpl);
    listing_bounds(tmpl);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpl);
    return check_done("ops");
}
