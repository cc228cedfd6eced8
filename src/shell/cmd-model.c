/*
 * The model commands: predict, prob and backoff. Model selection options are parsed in
 * one place (the model fields of the library's operations) so that every model command agrees.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "shell.h"


const char *sh_model_name(const ig_model *m, char *buf, size_t n) { return ig_model_name(m, buf, n); }

/* Display form of a symbol: 'a', '\n' shown as \n, <end>, raw bytes as \xHH. */
void sh_symbol_text(const uint8_t *b, int len, char *out, size_t n)
{
    if (len == 1 && b[0] == 0xFF) {
        snprintf(out, n, "<end>");
        return;
    }
    if (len == 1 && (b[0] < 0x20 || b[0] == 0x7f)) {
        if (b[0] == '\n')
            snprintf(out, n, "\\n");
        else if (b[0] == '\t')
            snprintf(out, n, "\\t");
        else
            snprintf(out, n, "\\x%02x", b[0]);
        return;
    }
    if (ig_utf8_valid(b, (size_t)len, NULL)) {
        snprintf(out, n, "'%.*s'", len, (const char *)b);
        return;
    }
    size_t o = 0;
    for (int i = 0; i < len && o + 5 < n; i++)
        o += (size_t)snprintf(out + o, n - o, "\\x%02x", b[i]);
}


void sh_bar(shell *sh, double frac, int width)
{
    if (frac < 0)
        frac = 0;
    int eighths = (int)lround(frac * width * 8);
    static const char *parts[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    for (int i = 0; i < eighths / 8; i++)
        sh_puts(sh, "█");
    sh_puts(sh, parts[eighths % 8]);
}

/* Prints the context (its last 60 bytes at most) with the matched suffix — its last
 * `matched` bytes — highlighted; on a token dataset as sh_print_token_context does. */
void sh_print_context(shell *sh, const uint8_t *ctx, size_t len, uint64_t matched)
{
    if (sh->idx && ig_index_token_width(sh->idx)) {
        sh_print_token_context(sh, ctx, len, matched);
        return;
    }
    size_t start = len > 60 ? len - 60 : 0;
    while (start < len && (ctx[start] & 0xC0) == 0x80)
        start++;
    size_t split = len - (matched > len ? len : matched);
    if (split < start)
        split = start;
    char *pre = sh_quote((const char *)ctx + start, split - start);
    char *post = sh_quote((const char *)ctx + split, len - split);
    pre[strlen(pre) - 1] = '\0';  /* drop the closing quote */
    post[strlen(post) - 1] = '\0';
    sh_printf(sh, "context: %s%s%s%s%s\"\n", start ? "…" : "", pre, sh_c(sh, SH_HL), post + 1, sh_c(sh, SH_RESET));
    free(pre);
    free(post);
}

void sh_print_dist_head(shell *sh, const uint8_t *ctx, size_t len, const ig_dist *d, const ig_model *m, int sparse)
{
    char mname[96];
    sh_print_context(sh, ctx, len, d->longest);
    sh_printf(sh, "model: %s   effective n: %" PRIu64 "   suffix count: %" PRIu64 "   sparse: %s\n",
              ig_model_name(m, mname, sizeof mname), d->length + 1, d->suffix_count, sparse ? "yes" : "no");
}

static void render_predict(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_predict_opts *o = opts;
    const ig_predict_result *r = result;
    (void)given, (void)self;
    const ig_dist *d = &r->dist;
    const ig_symbol *syms = r->syms;
    size_t ns = r->nsyms, top = (size_t)o->top;
    uint32_t tw = ig_index_token_width(sh->idx);
    sh_print_dist_head(sh, r->context, r->clen, d, &r->model, r->sparse);
    if (!d->defined) {
        if (r->model.kind == IG_MODEL_NGRAM)
            sh_printf(sh, "no estimate: the %u-%s context never occurs (or the text is shorter)\n", r->model.n - 1,
                      tw ? "token" : "byte");
        else
            sh_printf(sh, "no estimate: no suffix of the context but the empty one occurs, and this model has "
                          "no level below length 1 (it never backs off to the unigram; --infgram does)\n");
    } else {
        if (d->fallback)
            sh_printf(sh, "(no suffix length in [min-len, max-len]: showing the ∞-gram)\n");
        if (d->nlevels > 1) {
            sh_puts(sh, "levels:");
            for (size_t j = 0; j < d->nlevels && j < 8; j++)
                sh_printf(sh, " ℓ=%" PRIu64 " (%" PRIu64 ")", d->levels[j].length, d->levels[j].total);
            sh_puts(sh, d->nlevels > 8 ? " …\n" : "\n");
        }
        if (tw)
            sh_printf(sh, "  %10s  %-14s %10s %8s\n", "id", "token", "count", "prob");
        else
            sh_printf(sh, "  %-8s %10s %8s\n", "next", "count", "prob");
        double maxp = ns ? syms[0].prob : 1;
        for (size_t i = 0; i < ns && i < top; i++) {
            char sym[64], pr[32];
            if (tw) { /* id, then the token's text quoted */
                char text[128];
                uint32_t id = ig_token_at(syms[i].bytes, tw);
                ig_token_text(sh->idx, id, text, sizeof text);
                char *q = sh_quote(text, strlen(text));
                snprintf(pr, sizeof pr, syms[i].prob >= 0.001 || syms[i].prob == 0 ? "%.3f" : "%.1e", syms[i].prob);
                sh_printf(sh, "  %10" PRIu32 "  %-*s %10" PRIu64 " %8s  ", id,
                          14 + (int)(strlen(q) - sh_display_width(q)), q ? q : "", syms[i].count, pr);
                free(q);
                sh_bar(sh, maxp > 0 ? syms[i].prob / maxp : 0, 20);
                sh_puts(sh, "\n");
                continue;
            }
            sh_symbol_text(syms[i].bytes, syms[i].len, sym, sizeof sym);
            snprintf(pr, sizeof pr, syms[i].prob >= 0.001 || syms[i].prob == 0 ? "%.3f" : "%.1e", syms[i].prob);
            sh_printf(sh, "  %-*s %10" PRIu64 " %8s  ", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                      syms[i].count, pr);
            sh_bar(sh, maxp > 0 ? syms[i].prob / maxp : 0, 20);
            sh_puts(sh, "\n");
        }
        if (ns > top)
            sh_printf(sh, "  (%zu more)\n", ns - top);
        if (r->unseen > 0)
            sh_printf(sh, "  unseen symbols (smoothing): %.3f\n", r->unseen);
    }
}

const sh_face sh_predict_face = {NULL, NULL, render_predict, NULL};

static void render_prob(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_prob_result *r = result;
    (void)opts, (void)given, (void)self;
    char mname[96];
    uint32_t tw = ig_index_token_width(sh->idx);
    sh_printf(sh, "model: %s\n  %-8s %10s %12s\n", ig_model_name(&r->model, mname, sizeof mname), tw ? "token" : "symbol",
              "prob", "effective n");
    for (size_t i = 0; i < r->nfactors; i++) {
        char sym[160];
        if (tw) /* id and text */
            sh_token_label(sh, r->factors[i].bytes, tw, sym, sizeof sym);
        else
            sh_symbol_text(r->factors[i].bytes, r->factors[i].len, sym, sizeof sym);
        sh_printf(sh, "  %-*s %10.6f %12" PRIu64 "\n", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                  r->factors[i].prob, r->factors[i].effective_n);
    }
    if (isinf(r->log2p))
        sh_printf(sh, "P = 0   (log2 P = -inf: a factor is 0)\n");
    else
        sh_printf(sh, "P = %.6g   log2 P = %.4f\n", r->prob, r->log2p);
}

int cmd_prob(shell *sh, sh_args *a)
{
    /* shell syntax: unquoted words would join into one text, so both must be quoted; said
     * before any option's error, as the usage of the whole command */
    if (sh->idx && !ig_index_token_width(sh->idx) && !sh_opt_has(a, "ids") &&
        (a->nwords != 2 || !a->words[0].quoted || !a->words[1].quoted))
        return sh_fail(sh, a, "usage", "prob needs two quoted texts; usage: prob [MODEL OPTIONS] \"TEXT\" \"CONTINUATION\"");
    static const sh_face face = {NULL, NULL, render_prob, NULL};
    return sh_face_run(sh, a, &face, NULL);
}

static void render_backoff(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_backoff_opts *o = opts;
    const ig_backoff_result *r = result;
    (void)given, (void)self;
    uint32_t tw = ig_index_token_width(sh->idx);
    sh_print_context(sh, r->context, r->clen, r->ltau);
    sh_printf(sh, "Stupid Backoff: λ = %g, τ = %" PRIu64 ", ℓτ = %" PRIu64 " (scores are not probabilities)\n", o->factor,
              o->threshold, r->ltau);
    int w = tw ? 18 : 8; /* "ID \"text\"" is wider than a character */
    sh_printf(sh, "  %-*s %12s %7s %10s %10s\n", w, "next", "score", "from ℓ", "count", "normalized");
    for (size_t i = 0; i < r->ncands && i < o->top; i++) {
        const ig_backoff_cand *c = &r->cands[i];
        char sym[160];
        if (tw)
            sh_token_label(sh, c->bytes, tw, sym, sizeof sym);
        else
            sh_symbol_text(c->bytes, c->len, sym, sizeof sym);
        sh_printf(sh, "  %-*s %12.6g %7" PRIu64 " %10" PRIu64 " %10.4f\n", w + (int)(strlen(sym) - sh_display_width(sym)),
                  sym, c->score, c->length, c->count, c->normalized);
    }
    if (r->ncands > o->top)
        sh_printf(sh, "  (%zu more)\n", r->ncands - (size_t)o->top);
}

const sh_face sh_backoff_face = {NULL, NULL, render_backoff, NULL};
