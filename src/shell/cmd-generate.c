/*
 * generate and explain. Generation streams characters as they are produced (holding
 * back only what could still turn out to be a stop string), keeps every step's evidence
 * for `explain --step`, and ends with a summary of how much of the output was copied
 * verbatim from the corpus. Explanations show the n-gram profile behind a prediction
 * and, for each candidate, where in the corpus the matched suffix was followed by it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "shell.h"

void sh_lastgen_clear(sh_lastgen *l)
{
    free(l->dataset);
    free(l->prompt);
    free(l->text);
    free(l->steps);
    memset(l, 0, sizeof *l);
}

static int has_model_opt(sh_args *a)
{
    static const char *names[] = {"infgram", "n", "weighted", "interp"};
    for (int i = 0; i < a->nopts; i++)
        for (size_t k = 0; k < 4; k++)
            if (!strcmp(a->opts[i].name, names[k]))
                return 1;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Prints bytes as they are (the shell shows generated text raw). */
static void put_text(shell *sh, const uint8_t *p, size_t n) { sh_write(sh, p, n); }

int cmd_generate(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    ig_gen_options o;
    ig_gen_options_default(&o);
    int explicit_model = has_model_opt(a);
    if (sh_model_opts(sh, a, &o.model, -1))
        return SH_ERR;
    if (!explicit_model) {
        o.model.kind = IG_MODEL_INTERP;
        o.model.interp_k = 2;
    }
    long long topk = 0, max = 200;
    if (sh_opt_double(sh, a, "temperature", 0, 1e6, &o.temperature) || sh_opt_double(sh, a, "top-p", 1e-9, 1, &o.top_p) ||
        sh_opt_int(sh, a, "top-k", 0, 256, &topk) || sh_opt_int(sh, a, "max", 0, 100000000, &max))
        return SH_ERR;
    o.top_k = (uint32_t)topk;
    o.max_chars = (uint64_t)max;
    o.stop_at_end = !sh_opt_has(a, "no-stop-at-end");
    sh_optval *sv = sh_opt_get(a, "seed");
    if (sv) {
        char *end;
        o.seed = strtoull(sv->value.text, &end, 10);
        if (!sv->value.len || *end || sv->value.text[0] == '-')
            return sh_fail_at(sh, a, sv->value.col, "usage", "--seed: not a non-negative integer: \"%s\"", sv->value.text);
    } else if (getrandom(&o.seed, sizeof o.seed, 0) != sizeof o.seed) {
        o.seed = (uint64_t)time(NULL) ^ (uint64_t)clock();
    }
    /* every --stop counts */
    const char **stops = calloc((size_t)a->nopts + 1, sizeof *stops);
    size_t nstop = 0;
    for (int i = 0; i < a->nopts; i++)
        if (!strcmp(a->opts[i].name, "stop")) {
            a->opts[i].used = 1;
            if (!a->opts[i].value.len) {
                free(stops);
                return sh_fail_at(sh, a, a->opts[i].value.col, "usage", "--stop: empty string");
            }
            stops[nstop++] = a->opts[i].value.text;
        }
    o.stop = stops;
    o.nstop = nstop;
    size_t plen = 0;
    uint8_t *prompt = sh_query_text(sh, a, 0, &plen);
    ig_error e;
    if (!prompt) {
        free(stops);
        return SH_ERR;
    }
    ig_gen *g = NULL;
    if (SH_TIMED(sh, ig_gen_start(&g, sh->idx, &o, prompt, plen, &e))) {
        free(prompt);
        free(stops);
        return sh_fail_ig(sh, a, &e);
    }
    sh_lastgen_clear(&sh->last);
    size_t cap = 64;
    ig_gen_step *steps = malloc(cap * sizeof *steps);
    size_t nsteps = 0, shown = 0; /* bytes of generated text already printed */
    if (!sh->json)
        put_text(sh, prompt, plen);
    fflush(sh->out);
    int reason;
    double t0 = sh_clock();
    for (;;) {
        if (sh_interrupted) {
            reason = IG_STOP_CANCELLED;
            break;
        }
        ig_gen_step st;
        reason = ig_gen_next(g, &st, &e);
        if (reason < 0)
            break;
        if (reason != IG_STOP_NONE)
            break;
        if (nsteps == cap) {
            cap *= 2;
            steps = realloc(steps, cap * sizeof *steps);
        }
        steps[nsteps++] = st;
        if (!sh->json) {
            /* hold back a tail that may still become a stop string */
            size_t tl;
            const uint8_t *t = ig_gen_text(g, &tl);
            size_t hold = ig_gen_held(g);
            if (tl - hold > shown) {
                put_text(sh, t + shown, tl - hold - shown);
                shown = tl - hold;
                fflush(sh->out);
            }
        }
    }
    sh->elapsed += sh_clock() - t0;
    if (reason < 0) {
        ig_gen_free(&g);
        free(steps);
        free(prompt);
        free(stops);
        return sh_fail_ig(sh, a, &e);
    }
    size_t tl;
    const uint8_t *text = ig_gen_text(g, &tl);
    if (!sh->json && tl > shown)
        put_text(sh, text + shown, tl - shown);
    /* the stop string (if any) was withdrawn: steps beyond the text are dropped */
    size_t keep = 0, bytes = 0;
    while (keep < nsteps && bytes + steps[keep].len <= tl)
        bytes += steps[keep++].len;
    nsteps = keep;
    /* summary: median effective n, longest verbatim span, share inside long spans */
    uint64_t *ens = malloc((nsteps ? nsteps : 1) * sizeof *ens);
    for (size_t i = 0; i < nsteps; i++)
        ens[i] = steps[i].effective_n;
    qsort(ens, nsteps, sizeof *ens, cmp_u64);
    uint64_t median = nsteps ? ens[nsteps / 2] : 0;
    free(ens);
    ig_span_options so = {.min_len = 1};
    ig_span *sp = NULL;
    size_t nsp = 0;
    uint64_t *ms = NULL, longest = 0, at = 0;
    double inside = 0;
    if (tl && !SH_TIMED(sh, ig_spans(sh->idx, text, tl, &so, &sp, &nsp, &ms, NULL, &e))) {
        for (size_t i = 0; i < tl; i++)
            if (ms[i] > longest) {
                longest = ms[i];
                at = i;
            }
        inside = 1 - ig_novelty(ms, tl, 20);
    }
    ig_location src = {0};
    int have_src = 0;
    if (longest) {
        ig_pos p;
        uint64_t tot;
        if (ig_positions(sh->idx, text + at, (size_t)longest, &p, 1, &tot) == 1 && !ig_locate(sh->idx, p, NULL, &src, &e))
            have_src = 1;
    }
    double ms_el = sh->fake_clock ? 0 : sh->elapsed * 1e3;
    if (sh->json) {
        cJSON *j = sh_json_new(sh, a);
        cJSON_AddStringToObject(j, "dataset", sh->current);
        if (ig_utf8_valid(text, tl, NULL) && !memchr(text, 0, tl)) {
            char *s = malloc(tl + 1);
            memcpy(s, text, tl);
            s[tl] = '\0';
            cJSON_AddStringToObject(j, "text", s);
            free(s);
        }
        sh_json_u64(j, "chars", ig_gen_chars(g));
        sh_json_u64(j, "seed", o.seed);
        cJSON_AddStringToObject(j, "stop_reason", ig_stop_reason_name(reason));
        sh_json_u64(j, "median_effective_n", median);
        sh_json_u64(j, "longest_span", longest);
        if (have_src) {
            cJSON *arr = cJSON_CreateArray();
            sh_json_position(arr, &src);
            cJSON_AddItemToObject(j, "longest_span_source", cJSON_DetachItemFromArray(arr, 0));
            cJSON_Delete(arr);
        }
        cJSON_AddNumberToObject(j, "inside_spans_20", inside);
        sh_json_emit(sh, j);
    } else {
        char where[256] = "";
        if (have_src) {
            char nm[64];
            sh_short_name(src.name, 30, nm, sizeof nm);
            snprintf(where, sizeof where, " (doc %" PRIu64 ", %s line %" PRIu64 ")", src.doc, nm, src.line);
        }
        sh_printf(sh, "\n%s[%" PRIu64 " chars in %.1f ms · seed %" PRIu64 " · stop: %s · median effective n %" PRIu64
                      " · longest verbatim span %" PRIu64 " bytes%s · %.0f%% of output inside corpus spans ≥ 20 bytes]%s\n",
                  sh_c(sh, SH_DIM), ig_gen_chars(g), ms_el, o.seed, ig_stop_reason_name(reason), median, longest, where,
                  100 * inside, sh_c(sh, SH_RESET));
    }
    free(sp);
    free(ms);
    /* keep it for explain --step / --last and spans --last */
    sh->last.dataset = strdup(sh->current);
    sh->last.model = o.model;
    sh->last.prompt = prompt;
    sh->last.plen = plen;
    sh->last.text = malloc(tl + 1);
    memcpy(sh->last.text, text, tl);
    sh->last.tlen = tl;
    sh->last.steps = steps;
    sh->last.nsteps = nsteps;
    ig_gen_free(&g);
    free(stops);
    return SH_OK;
}

/* ---------------------------------------------------------------- explain */

static void profile_row(shell *sh, uint64_t l0, uint64_t l1, uint64_t cnt, uint64_t cont, uint64_t maxc)
{
    char lab[48];
    if (l0 == l1)
        snprintf(lab, sizeof lab, "%" PRIu64, l0);
    else
        snprintf(lab, sizeof lab, "%" PRIu64 "-%" PRIu64, l0, l1);
    sh_printf(sh, "  %9s %10" PRIu64 " %10" PRIu64 "  ", lab, cnt, cont);
    /* bars on a log scale: counts span many orders of magnitude */
    sh_bar(sh, maxc > 1 ? log((double)cnt + 1) / log((double)maxc + 1) : 1, 24);
    sh_puts(sh, "\n");
}

int cmd_explain(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    long long step = 0, npos = 3, top = 5, width = 24;
    if (sh_opt_int(sh, a, "step", 1, INT64_MAX, &step) || sh_opt_int(sh, a, "positions", 0, 1000, &npos) ||
        sh_opt_int(sh, a, "top", 1, 256, &top) || sh_opt_int(sh, a, "width", 0, 10000, &width))
        return SH_ERR;
    int last = sh_opt_has(a, "last");
    ig_model m;
    uint8_t *ctx = NULL;
    size_t n = 0;
    const ig_gen_step *chosen = NULL;
    if (step || last) {
        if (a->nwords)
            return sh_fail_at(sh, a, a->words[0].col, "usage", "give TEXT, or --step N / --last, not both");
        if (!sh->last.dataset)
            return sh_fail(sh, a, "usage", "no previous generation (run generate first)");
        if (strcmp(sh->last.dataset, sh->current))
            return sh_fail(sh, a, "usage", "the last generation came from %s; load it first", sh->last.dataset);
        if (step && (uint64_t)step > sh->last.nsteps)
            return sh_fail_at(sh, a, sh_opt_get(a, "step")->value.col, "usage",
                              "--step %lld is out of range: the last generation has %zu characters", step,
                              sh->last.nsteps);
        if (sh_model_opts(sh, a, &m, -1))
            return SH_ERR;
        m = sh->last.model; /* the generation's own model */
        size_t upto = sh->last.tlen;
        if (step) {
            upto = 0;
            for (long long i = 0; i < step - 1; i++)
                upto += sh->last.steps[i].len;
            chosen = &sh->last.steps[step - 1];
        }
        n = sh->last.plen + upto;
        ctx = malloc(n + 1);
        memcpy(ctx, sh->last.prompt, sh->last.plen);
        memcpy(ctx + sh->last.plen, sh->last.text, upto);
    } else {
        if (!a->nwords)
            return sh_fail(sh, a, "usage", "usage: explain [MODEL OPTIONS] TEXT | explain --step N | explain --last");
        if (sh_model_opts(sh, a, &m, -1))
            return SH_ERR;
        if (!(ctx = sh_query_text(sh, a, 0, &n)))
            return SH_ERR;
    }
    int chars = !sh_opt_has(a, "bytes");
    sh_prediction pr;
    if (sh_predict_symbols(sh, a, &m, ctx, n, chars, &pr)) {
        free(ctx);
        return SH_ERR;
    }
    ig_dist d = pr.d;
    ig_symbol *syms = pr.syms;
    size_t ns = pr.ns;
    int sparse = pr.sparse;
    /* the profile uses the symbol the explanation is about: the chosen one, else the top */
    const uint8_t *focus = chosen ? chosen->bytes : ns ? syms[0].bytes : NULL;
    int flen = chosen ? chosen->len : ns ? syms[0].len : 0;
    uint64_t L = d.longest;
    const uint8_t *end = ctx + n;
    uint8_t *pat = malloc(L + 8);
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL, *prof = NULL;
    char mname[96];
    sh_model_name(&m, mname, sizeof mname);
    if (o) {
        cJSON_AddStringToObject(o, "dataset", sh->current);
        cJSON_AddStringToObject(o, "model", mname);
        sh_json_u64(o, "effective_n", d.length + 1);
        sh_json_u64(o, "suffix_count", d.suffix_count);
        cJSON_AddBoolToObject(o, "sparse", sparse);
        if (chosen) {
            cJSON *c = cJSON_AddObjectToObject(o, "chosen");
            sh_symbol_json(c, chosen->bytes, chosen->len);
            cJSON_AddNumberToObject(c, "prob", chosen->prob);
        }
        prof = cJSON_AddArrayToObject(o, "profile");
    } else {
        sh_print_context(sh, ctx, n, L);
        sh_printf(sh, "model: %s   effective n: %" PRIu64 "   suffix count: %" PRIu64 "   sparse: %s\n", mname,
                  d.length + 1, d.suffix_count, sparse ? "yes" : "no");
        if (chosen) {
            char sym[64];
            sh_symbol_text(chosen->bytes, chosen->len, sym, sizeof sym);
            sh_printf(sh, "step %lld chose %s with probability %.4f\n", step, sym, chosen->prob);
        }
        if (focus) {
            char sym[64];
            sh_symbol_text(focus, flen, sym, sizeof sym);
            sh_printf(sh, "n-gram profile (suffix length ℓ: occurrences, and how many continue with %s)\n", sym);
            sh_printf(sh, "  %9s %10s %10s\n", "ℓ", "count", "→ next");
        }
    }
    /* profile: ℓ = 1..ℓ*; runs with the same counts are one row in the table */
    uint64_t maxc = L ? ig_count(sh->idx, end - 1, 1) : 0;
    uint64_t run0 = 0, rc_cnt = 0, rc_cont = 0;
    for (uint64_t ell = 1; focus && ell <= L; ell++) {
        uint64_t cnt = SH_TIMED(sh, ig_count(sh->idx, end - ell, ell));
        memcpy(pat, end - ell, ell);
        memcpy(pat + ell, focus, (size_t)flen);
        uint64_t cont = SH_TIMED(sh, ig_count(sh->idx, pat, ell + (size_t)flen));
        if (o) {
            cJSON *x = cJSON_CreateObject();
            sh_json_u64(x, "length", ell);
            sh_json_u64(x, "count", cnt);
            sh_json_u64(x, "continue_count", cont);
            cJSON_AddItemToArray(prof, x);
            continue;
        }
        if (run0 && (cnt != rc_cnt || cont != rc_cont)) {
            profile_row(sh, run0, ell - 1, rc_cnt, rc_cont, maxc);
            run0 = 0;
        }
        if (!run0) {
            run0 = ell;
            rc_cnt = cnt;
            rc_cont = cont;
        }
    }
    if (!o && run0)
        profile_row(sh, run0, L, rc_cnt, rc_cont, maxc);
    /* candidates, their level contributions and corpus positions */
    cJSON *cands = o ? cJSON_AddArrayToObject(o, "candidates") : NULL;
    if (!o) {
        if (!d.defined)
            sh_puts(sh, "no estimate for this context\n");
        else
            sh_printf(sh, "candidates:\n");
    }
    uint8_t *cp = malloc(L + 8);
    for (size_t i = 0; i < ns && i < (size_t)top; i++) {
        const ig_symbol *s = &syms[i];
        char sym[64];
        sh_symbol_text(s->bytes, s->len, sym, sizeof sym);
        cJSON *cj = NULL, *lv = NULL, *pj = NULL;
        if (o) {
            cj = cJSON_CreateObject();
            sh_symbol_json(cj, s->bytes, s->len);
            sh_json_u64(cj, "count", s->count);
            cJSON_AddNumberToObject(cj, "prob", s->prob);
            cJSON_AddItemToArray(cands, cj);
        } else {
            sh_printf(sh, "  %-*s count %-8" PRIu64 " prob %.4f", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                      s->count, s->prob);
        }
        /* each level's share of this candidate's probability */
        if (d.nlevels > 1) {
            if (o)
                lv = cJSON_AddArrayToObject(cj, "levels");
            else
                sh_puts(sh, "   from:");
            for (size_t j = 0; j < d.nlevels; j++) {
                uint64_t lj = d.levels[j].length, c;
                memcpy(cp, end - lj, lj);
                memcpy(cp + lj, s->bytes, s->len);
                c = (d.end_excluded && s->len == 1 && s->bytes[0] == 0xFF) ? 0 : ig_count(sh->idx, cp, lj + s->len);
                double share = d.levels[j].coef * (double)c;
                if (o) {
                    cJSON *x = cJSON_CreateObject();
                    sh_json_u64(x, "length", lj);
                    cJSON_AddNumberToObject(x, "prob", share);
                    cJSON_AddItemToArray(lv, x);
                } else if (share > 0 && j < 6) {
                    sh_printf(sh, " ℓ=%" PRIu64 " %.4f", lj, share);
                }
            }
        }
        if (!o)
            sh_puts(sh, "\n");
        /* where the matched suffix was followed by this candidate: at ℓ*, or for a
         * candidate only shorter levels know, at the longest suffix followed by it */
        uint64_t PL = L;
        for (;;) {
            memcpy(cp, end - PL, PL);
            memcpy(cp + PL, s->bytes, s->len);
            if (PL == 0 || ig_count(sh->idx, cp, PL + s->len))
                break;
            PL--;
        }
        if (!o && PL < L)
            sh_printf(sh, "      (after the last %" PRIu64 " bytes of the context)\n", PL);
        ig_pos *pos;
        ig_location *locs;
        uint64_t tot = 0;
        size_t k = sh_find_locations(sh, cp, PL + s->len, (size_t)npos, &pos, &locs, &tot);
        if (o)
            pj = cJSON_AddArrayToObject(cj, "positions");
        for (size_t q = 0; q < k; q++) {
            ig_location loc = locs[q];
            if (o) {
                sh_json_position(pj, &loc);
                continue;
            }
            size_t hl[3];
            char *snip = sh_snippet_text2(sh->idx, pos[q], PL, s->len, (size_t)width, hl);
            char nm[64];
            sh_short_name(loc.name, 24, nm, sizeof nm);
            sh_printf(sh, "      %s:%" PRIu64 ":%" PRIu64 " @%" PRIu64 "  ", nm, loc.line, loc.column, loc.offset);
            if (snip)
                sh_print_snippet2(sh, snip, hl);
            sh_puts(sh, "\n");
            free(snip);
        }
        if (!o && tot > k)
            sh_printf(sh, "      (%" PRIu64 " more)\n", tot - k);
        free(pos);
        free(locs);
    }
    if (o)
        sh_json_emit(sh, o);
    free(cp);
    free(pat);
    sh_prediction_free(&pr);
    free(ctx);
    return SH_OK;
}
