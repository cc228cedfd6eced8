/*
 * explain: why a model predicts what it predicts after a context. The n-gram profile
 * (for every suffix length ℓ up to ℓ*, how often the suffix occurs and how often the
 * symbol in focus follows it), each interpolation level's share of every candidate, and
 * the corpus positions where the matched suffix was followed by the candidate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/explain.h"
#include "infinigram/tokens.h"
#include "../model/model_impl.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_explain_fields[] = {
    IGI_TEXT_IDS_MODEL_FIELDS(ig_explain_opts, "the context (exact bytes)",
                              "token datasets: the context as token ids, comma-separated (lengths then count tokens)",
                              "the ∞-gram (default): the longest suffix of the context that occurs", NULL),
    {"step", IG_FIELD_UINT, offsetof(ig_explain_opts, step), 1, 9223372036854775807.0, "N", NULL,
     "explain the N-th character of the last generation (with the generation's own model)", NULL, IG_FIELD_SHELL},
    {"last", IG_FIELD_BOOL, offsetof(ig_explain_opts, last), 0, 0, NULL, NULL,
     "explain the prediction after the last generation (with the generation's own model)", NULL, IG_FIELD_SHELL},
    {"positions", IG_FIELD_UINT, offsetof(ig_explain_opts, positions), 0, 1000, "K", "3",
     "corpus occurrences per candidate", NULL, 0},
    {"top", IG_FIELD_UINT, offsetof(ig_explain_opts, top), 1, 256, "K", "5", "candidates explained", NULL, 0},
    {"width", IG_FIELD_UINT, offsetof(ig_explain_opts, width), 0, 10000, "W", "24", "snippet bytes on each side", NULL,
     0},
    {"bytes", IG_FIELD_BOOL, offsetof(ig_explain_opts, bytes), 0, 0, NULL, NULL, "next bytes instead of characters",
     NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

int ig_generation_keep(ig_generation *g, const char *dataset, ig_generate_result *r, ig_error *err)
{
    ig_generation_clear(g);
    char *name = igi_strdup(dataset ? dataset : "");
    if (!name)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    *g = (ig_generation){.dataset = name,
                         .model = r->model,
                         .prompt = r->prompt,
                         .plen = r->plen,
                         .text = r->text,
                         .tlen = r->len,
                         .steps = r->steps,
                         .nsteps = r->nsteps};
    r->prompt = r->text = NULL;
    r->steps = NULL;
    return 0;
}

void ig_generation_clear(ig_generation *g)
{
    IGI_CLEAR(g, g->dataset, g->prompt, g->text, g->steps);
}

int ig_explain_follow(ig_explain_opts *o, const ig_generation *g, ig_error *err)
{
    if (o->step > g->nsteps)
        return ig_error_set(err, IG_EUSAGE, "{step} %" PRIu64 " is out of range: the last generation has %zu characters",
                            o->step, g->nsteps);
    size_t upto = g->tlen;
    if (o->step) {
        upto = 0;
        for (uint64_t i = 0; i + 1 < o->step; i++)
            upto += g->steps[i].len;
        o->chosen = &g->steps[o->step - 1];
    }
    uint8_t *ctx = malloc(g->plen + upto + 1);
    if (!ctx)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    memcpy(ctx, g->prompt, g->plen);
    memcpy(ctx + g->plen, g->text, upto);
    int rc = ig_field_set_text(ig_field_find(ig_explain_fields, "query", 5), o, ctx, g->plen + upto, err);
    free(ctx);
    if (!rc)
        o->use_model = &g->model;
    return rc;
}

void ig_explain_defaults(ig_explain_opts *o)
{
    igi_op_model_defaults(o, sizeof *o, &o->model, -1, ig_explain_fields);
}

static int cancelled(const ig_op_ctx *ctx, ig_error *err)
{
    return ig_cancelled(ctx->cancel) ? ig_error_set(err, IG_ECANCELLED, "cancelled") : 0;
}

int ig_explain_profile_part(const ig_op_ctx *ctx, const uint8_t *context, size_t clen, uint64_t L, const uint8_t *focus,
                            size_t flen, ig_explain_row *rows, ig_error *err)
{
    const uint32_t tw = ig_index_token_width(ctx->idx), u = tw ? tw : 1;
    const uint8_t *end = context + clen;
    if (L * u > clen || flen > 4)
        return ig_error_set(err, IG_EUSAGE, "the profile's length is past the context");
    uint8_t *cp = malloc(L * u + 8);
    if (!cp)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = 0;
    for (uint64_t ell = 1; ell <= L && !rc; ell++) {
        if ((rc = cancelled(ctx, err)))
            break;
        memcpy(cp, end - ell * u, ell * u);
        memcpy(cp + ell * u, focus, flen);
        rows[ell - 1] = (ig_explain_row){ell, ig_count(ctx->idx, end - ell * u, ell * u),
                                         ig_count(ctx->idx, cp, ell * u + flen)};
    }
    free(cp);
    return rc;
}

int ig_explain_cand_part(const ig_op_ctx *ctx, const uint8_t *context, size_t clen, uint64_t L, const uint64_t *lens,
                         size_t nlevels, int end_excluded, const ig_symbol *s, uint64_t positions,
                         ig_explain_part_cand *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    const uint32_t tw = ig_index_token_width(ctx->idx), u = tw ? tw : 1;
    const uint8_t *end = context + clen;
    int is_end = tw ? ig_token_at(s->bytes, tw) == ig_token_end(tw) : s->len == 1 && s->bytes[0] == 0xFF;
    uint64_t longest = L;
    for (size_t j = 0; j < nlevels; j++)
        longest = lens[j] > longest ? lens[j] : longest;
    if (longest * u > clen || s->len < 1 || s->len > sizeof s->bytes)
        return ig_error_set(err, IG_EUSAGE, "a suffix's length is past the context");
    uint8_t *cp = malloc(longest * u + 8);
    if (!cp || (nlevels > 1 && !(out->level_counts = calloc(nlevels, sizeof *out->level_counts)))) {
        free(cp);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t j = 0; nlevels > 1 && j < nlevels; j++) {
        uint64_t lj = lens[j] * u;
        memcpy(cp, end - lj, lj);
        memcpy(cp + lj, s->bytes, s->len);
        out->level_counts[j] = (end_excluded && is_end) ? 0 : ig_count(ctx->idx, cp, lj + s->len);
    }
    /* at ℓ*, or for a candidate only shorter levels know, the longest suffix followed by it */
    uint64_t PL = L;
    for (;;) {
        memcpy(cp, end - PL * u, PL * u);
        memcpy(cp + PL * u, s->bytes, s->len);
        if (PL == 0 || ig_count(ctx->idx, cp, PL * u + s->len))
            break;
        PL--;
    }
    out->matched = PL;
    int rc = igi_op_occurrences(ctx, cp, PL * u + s->len, (size_t)positions, -1, &out->occ, &out->nocc, &out->total,
                                err);
    free(cp);
    if (rc)
        ig_explain_part_cand_free(out);
    return rc;
}

/* The snippets of sources[0, n) (the array stays the caller's). */
static void snippets_free(ig_explain_source *sources, size_t n)
{
    for (size_t q = 0; sources && q < n; q++)
        free(sources[q].snippet);
}

void ig_explain_part_cand_free(ig_explain_part_cand *p)
{
    if (!p)
        return;
    snippets_free(p->sources, p->nocc);
    free(p->sources);
    free(p->level_counts);
    igi_op_occurrences_free(p->occ, p->nocc);
    memset(p, 0, sizeof *p);
}

static int too_many_sources(uint64_t width, ig_error *err)
{
    return ig_error_set(err, IG_EUSAGE,
                        "{positions}: the sources of the candidates with {width} %" PRIu64 " would make an answer of "
                        "over %d MiB (each costs its match, twice the width and %d bytes): list fewer, explain fewer "
                        "candidates ({top}), or narrow {width}",
                        width, (int)(IGI_SNIPPETS_MAX >> 20), IGI_LISTED_COST);
}

/* What a source costs against the bound: its match, twice the width and a record's bytes, or its
 * snippet's bytes and a record's when more (u: 1, or a token dataset's token width). */
static uint64_t source_cost(uint64_t width, uint32_t u, uint64_t matched, const ig_symbol *s, const char *snippet)
{
    uint64_t each = 2 * width * u + matched * u + s->len + IGI_LISTED_COST;
    uint64_t made = snippet ? strlen(snippet) + IGI_LISTED_COST : 0;
    return made > each ? made : each;
}

int ig_explain_sources_check(const ig_explain_result *r, uint64_t width, ig_error *err)
{
    uint64_t spent = 0;
    for (size_t i = 0; r && i < r->ncands; i++)
        for (size_t q = 0; q < r->cands[i].nsources; q++)
            spent += source_cost(width, 1, r->cands[i].matched, &r->cands[i].sym, r->cands[i].sources[q].snippet);
    return spent > IGI_SNIPPETS_MAX ? too_many_sources(width, err) : 0;
}

/* Lengths are in units of u bytes: 1, or a token dataset's token width. */
int ig_explain_part_sources(const ig_op_ctx *ctx, ig_explain_part_cand *p, const ig_symbol *s, uint64_t width,
                            uint64_t *spent, ig_error *err)
{
    const uint32_t tw = ig_index_token_width(ctx->idx), u = tw ? tw : 1;
    uint64_t PL = p->matched;
    /* the snippets of every candidate together are bounded as count's listing is (the widest of
     * 1,000 sources for each of 256 candidates would be gigabytes): each costs the match, twice
     * the width and a record's 512 bytes, refused before any is made, or what it came to when
     * that is more (a newline shown as ↵ takes 3 bytes, a token its text) */
    uint64_t each = source_cost(width, u, PL, s, NULL);
    if (*spent + p->nocc * each > IGI_SNIPPETS_MAX)
        return too_many_sources(width, err);
    if (p->nocc && !(p->sources = calloc(p->nocc, sizeof *p->sources)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t q = 0; q < p->nocc; q++) {
        ig_explain_source *src = &p->sources[q];
        src->loc = p->occ[q].loc;
        if (tw) { /* the suffix then the candidate, through the vocabulary */
            char text[256];
            size_t a = 0, b = 0;
            src->snippet = igi_op_token_snippet(ctx->idx, p->occ[q].pos, PL * u + s->len, (long)width, &a, &b);
            ig_token_text(ctx->idx, ig_token_at(s->bytes, tw), text, sizeof text);
            size_t tl = strlen(text) < b - a ? strlen(text) : b - a;
            src->hl[0] = a;
            src->hl[1] = b - tl;
            src->hl[2] = b;
        } else
            src->snippet = ig_snippet(ctx->idx, p->occ[q].pos, (size_t)PL, s->len, (size_t)width, src->hl);
        if (!src->snippet) { /* a source listed without its snippet would be a wrong answer; a bad read says so */
            if (ig_index_health(ctx->idx, ctx->dataset, err))
                return IG_ECORRUPT;
            return ig_error_set(err, IG_ENOMEM, "out of memory making a snippet");
        }
        if ((*spent += source_cost(width, u, PL, s, src->snippet)) > IGI_SNIPPETS_MAX)
            return too_many_sources(width, err);
    }
    return 0;
}

int ig_explain_cand_add(ig_explain_cand *c, uint64_t *counts, size_t nlevels, const ig_explain_part_cand *p, int first,
                        uint64_t doc_base, uint64_t positions, ig_error *err)
{
    for (size_t j = 0; nlevels > 1 && p->level_counts && j < nlevels; j++)
        counts[j] += p->level_counts[j];
    if (first || p->matched > c->matched) { /* a longer suffix: what shorter ones gave does not count */
        snippets_free(c->sources, c->nsources);
        c->nsources = 0;
        c->total = 0;
        c->matched = p->matched;
    }
    if (p->matched != c->matched) /* it follows only a shorter suffix here, so never the corpus's */
        return 0;
    c->total += p->total;
    for (size_t q = 0; q < p->nocc && c->nsources < positions; q++) {
        ig_explain_source *grown = realloc(c->sources, (c->nsources + 1) * sizeof *grown);
        if (!grown)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        c->sources = grown;
        ig_explain_source *src = &c->sources[c->nsources];
        memset(src, 0, sizeof *src);
        if (p->sources) {
            memcpy(src->hl, p->sources[q].hl, sizeof src->hl);
            if (p->sources[q].snippet && !(src->snippet = strdup(p->sources[q].snippet)))
                return ig_error_set(err, IG_ENOMEM, "out of memory");
        }
        src->loc = p->occ[q].loc;
        src->loc.doc += doc_base;
        c->nsources++;
    }
    return 0;
}

int ig_explain_level_probs(ig_explain_result *r, const uint64_t *counts, ig_error *err)
{
    size_t nl = r->dist.nlevels;
    for (size_t i = 0; nl > 1 && i < r->ncands; i++) {
        free(r->cands[i].level_prob);
        if (!(r->cands[i].level_prob = calloc(nl, sizeof *r->cands[i].level_prob)))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        for (size_t j = 0; j < nl; j++)
            r->cands[i].level_prob[j] = r->dist.levels[j].coef * (double)counts[i * nl + j];
    }
    return 0;
}

/* One candidate: its level shares and where the (longest possible) suffix precedes it, with
 * snippets. */
static int candidate(const ig_op_ctx *ctx, const ig_explain_opts *o, ig_explain_result *r, const ig_symbol *s,
                     const uint64_t *lens, ig_explain_cand *c, uint64_t *spent, ig_error *err)
{
    const ig_dist *d = &r->dist;
    c->sym = *s;
    ig_explain_part_cand p;
    int rc = ig_explain_cand_part(ctx, r->context, r->clen, d->longest, lens, d->nlevels, d->end_excluded, s,
                                  o->positions, &p, err);
    if (rc)
        return rc;
    if (d->nlevels > 1 && !(c->level_prob = calloc(d->nlevels, sizeof *c->level_prob)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t j = 0; !rc && d->nlevels > 1 && j < d->nlevels; j++)
        c->level_prob[j] = d->levels[j].coef * (double)p.level_counts[j];
    c->matched = p.matched;
    c->total = p.total;
    if (!rc && !(rc = ig_explain_part_sources(ctx, &p, s, o->width, spent, err))) {
        c->sources = p.sources; /* taken: the part keeps its occurrences only */
        c->nsources = p.nocc;
        p.sources = NULL;
    }
    ig_explain_part_cand_free(&p);
    return rc;
}

static int explain_compute(const ig_op_ctx *ctx, const ig_explain_opts *o, ig_explain_result *r, ig_error *err)
{
    if (igi_op_start(ctx, r, sizeof *r, NULL, err))
        return IG_EUSAGE;
    int rc = 0;
    const uint32_t tw = ig_index_token_width(ctx->idx);
    if (o->use_model)
        r->model = *o->use_model;
    else
        rc = ig_model_resolve(&o->model, &r->model, err);
    r->model.cancel = ctx->cancel; /* this run's flag, whoever made the model */
    if (!rc && o->use_model) {
        /* a generation's own context: its bytes are already those of the index */
        if (!(r->context = malloc(o->query.n + 1)))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        else {
            memcpy(r->context, o->query.p ? o->query.p : (const uint8_t *)"", o->query.n);
            r->clen = o->query.n;
        }
    } else if (!rc && tw && !o->ids.p && !o->query.p) { /* the empty context */
        rc = (r->context = calloc(1, 1)) ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    } else if (!rc) {
        rc = igi_op_pattern(ctx, &o->query, &o->ids, "ids", &r->context, &r->clen, err);
    }
    if (!rc && tw) {
        if (!(rc = igi_token_predict(ctx->idx, &r->model, r->context, r->clen, &r->dist, &r->syms, &r->nsyms, NULL,
                                     &r->unseen, err)))
            r->sparse = ig_dist_sparse(&r->dist, r->syms, r->nsyms, r->unseen);
    } else if (!rc)
        rc = igi_op_distribution(ctx->idx, &r->model, r->context, r->clen, o->bytes, &r->dist, &r->syms, &r->nsyms,
                             &r->unseen, &r->sparse, err);
    if (rc) {
        ig_explain_result_free(r);
        return rc;
    }
    if (o->chosen) {
        r->has_chosen = 1;
        r->chosen = *o->chosen;
    }
    const ig_symbol *top = r->nsyms ? &r->syms[0] : NULL;
    r->flen = o->chosen ? o->chosen->len : top ? top->len : 0;
    if (r->flen)
        memcpy(r->focus, o->chosen ? o->chosen->bytes : top->bytes, (size_t)r->flen);
    uint64_t L = r->dist.longest;
    uint64_t *lens = malloc((r->dist.nlevels ? r->dist.nlevels : 1) * sizeof *lens);
    if (!lens || (r->flen && L && !(r->profile = calloc(L, sizeof *r->profile)))) {
        free(lens);
        ig_explain_result_free(r);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < r->dist.nlevels; j++)
        lens[j] = r->dist.levels[j].length;
    if (r->flen && L && !(rc = ig_explain_profile_part(ctx, r->context, r->clen, L, r->focus, (size_t)r->flen,
                                                        r->profile, err)))
        r->nprofile = L;
    size_t ncand = r->nsyms < o->top ? r->nsyms : (size_t)o->top;
    if (!rc && ncand && !(r->cands = calloc(ncand, sizeof *r->cands)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    uint64_t spent = 0; /* snippet bytes, as candidate() counts them */
    for (size_t i = 0; !rc && i < ncand; i++) {
        if (!(rc = cancelled(ctx, err)))
            rc = candidate(ctx, o, r, &r->syms[i], lens, &r->cands[i], &spent, err);
        r->ncands = i + 1;
    }
    free(lens);
    if (rc)
        ig_explain_result_free(r);
    return rc;
}


/* The result's memory; ig_explain_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void explain_release(ig_explain_result *r)
{
    for (size_t i = 0; r->cands && i < r->ncands; i++) {
        snippets_free(r->cands[i].sources, r->cands[i].nsources);
        free(r->cands[i].sources);
        free(r->cands[i].level_prob);
    }
    IGI_FREE(r->cands, r->profile);
    ig_dist_free(&r->dist);
    IGI_FREE(r->syms, r->context);
}

char *ig_explain_json(const ig_op_ctx *ctx, const ig_explain_opts *o, const ig_explain_result *r)
{
    (void)o;
    const ig_dist *d = &r->dist;
    char mname[96];
    cJSON *j = igi_jw_result(ctx);
    cJSON_AddStringToObject(j, "model", ig_model_name(&r->model, mname, sizeof mname));
    igi_jw_u64(j, "effective_n", d->length + 1);
    igi_jw_u64(j, "suffix_count", d->suffix_count);
    cJSON_AddBoolToObject(j, "sparse", r->sparse);
    if (r->has_chosen) {
        cJSON *c = cJSON_AddObjectToObject(j, "chosen");
        igi_jw_unit(c, ctx->idx, r->chosen.bytes, r->chosen.len);
        cJSON_AddNumberToObject(c, "prob", r->chosen.prob);
    }
    cJSON *prof = cJSON_AddArrayToObject(j, "profile");
    for (size_t i = 0; i < r->nprofile; i++) {
        cJSON *x = igi_jw_item(prof);
        igi_jw_u64(x, "length", r->profile[i].length);
        igi_jw_u64(x, "count", r->profile[i].count);
        igi_jw_u64(x, "continue_count", r->profile[i].continue_count);
    }
    cJSON *cands = cJSON_AddArrayToObject(j, "candidates");
    for (size_t i = 0; i < r->ncands; i++) {
        const ig_explain_cand *c = &r->cands[i];
        cJSON *cj = igi_jw_item(cands);
        igi_jw_candidate(cj, ctx->idx, &c->sym);
        if (c->level_prob) {
            cJSON *lv = cJSON_AddArrayToObject(cj, "levels");
            for (size_t k = 0; k < d->nlevels; k++) {
                cJSON *x = igi_jw_item(lv);
                igi_jw_u64(x, "length", d->levels[k].length);
                cJSON_AddNumberToObject(x, "prob", c->level_prob[k]);
            }
        }
        cJSON *pj = cJSON_AddArrayToObject(cj, "positions");
        for (size_t q = 0; q < c->nsources; q++) {
            const ig_explain_source *src = &c->sources[q];
            cJSON *x = igi_jw_location(pj, ctx->idx, &src->loc);
            if (src->snippet) { /* the suffix matched is snippet[hl0, hl1), the candidate [hl1, hl2) */
                cJSON_AddStringToObject(x, "snippet", src->snippet);
                IGI_JW_U64S(x, {"hl0", src->hl[0]}, {"hl1", src->hl[1]}, {"hl2", src->hl[2]});
            }
        }
    }
    return igi_jw_members(j);
}

IG_DEFINE_OP(explain, ig_explain_opts, ig_explain_result);
