/*
 * eval — scores a model on held-out text: bits per byte, perplexity, how many positions
 * had probability 0 (counted at a stated floor, never dropped), ∞-gram agreement, and
 * the effective-n histogram. The scoring conventions (positions, context, floor) are those
 * of share/doc/models.md, for every model.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* The text: FILE, read by the shell (the operation gets its normalised bytes), or --text / --ids. */
static int prepare(shell *sh, sh_args *a, void *opts, uint64_t given, void *self)
{
    ig_eval_opts *o = opts;
    (void)self;
    int text = (given & (sh_field_bit(&ig_op_eval, "text") | sh_field_bit(&ig_op_eval, "ids"))) != 0, rc = SH_OK;
    uint32_t tw = sh->idx ? ig_index_token_width(sh->idx) : 0;
    sh_optval *range = sh_opt_get(a, "range");
    if (!text && a->nwords != 1)
        rc = sh_fail_usage(sh, a, NULL);
    else if (text && a->nwords)
        rc = sh_fail_at(sh, a, a->words[0].col, "usage", "give either FILE or --text, not both");
    else if (text && range)
        rc = sh_fail_at(sh, a, range->col, "usage", "--range applies to FILE");
    if (rc == SH_OK && !text) {
        /* the shell reads the file; the operation gets its (normalised) bytes */
        ig_index_info info;
        ig_index_get_info(sh->idx, &info);
        if (sh_path_arg(sh, a, &a->words[0]))
            return SH_ERR;
        uint8_t *buf = NULL;
        size_t len = 0;
        ig_error e;
        o->label = a->words[0].text;
        if (SH_TIMED(sh, ig_load_text(o->label, range ? range->value.text : NULL, info.normalized && !info.casefold, &buf, &len, &e)))
            rc = sh_fail_ig(sh, a, &e);
        else if (tw && !ig_index_tokenizes(sh->idx)) { /* a token dataset without a tokenizer: the file holds ids */
            free(o->ids.p);
            o->ids = (ig_bytes){buf, len};
        } else {
            free(o->text.p);
            o->text = (ig_bytes){buf, len};
            o->normalized = !info.casefold; /* NFC as the corpus; a case-folded corpus's own rules (NFC, then folding) are the operation's */
        }
    }
    return rc;
}

static int run(shell *sh, sh_args *a, void *opts, void *result, void *self)
{
    ig_eval_opts *o = opts;
    (void)self;
    return sh_op_run_progress(sh, a, &ig_op_eval, o, result, &o->progress, &o->user);
}

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_eval_opts *o = opts;
    const ig_eval_op_result *res = result;
    const ig_eval_result *r = &res->r;
    const ig_model *m = &res->model;
    uint32_t tw = ig_index_token_width(sh->idx);
    const int given_ids = (given & sh_field_bit(&ig_op_eval, "ids")) != 0; /* the label: --text is tokenised */
    (void)self;
    double share = r->scored ? (double)r->zero_prob / (double)r->scored : 0;
    double agreement = r->scored ? (double)r->agree / (double)r->scored : 0;
    int open_ended = m->max_context < 0 || (uint64_t)m->max_context + 2 > r->hist_len;
    char mname[96], cap[32] = "unlimited";
    const char *unit = tw ? "tokens" : "bytes";
    if (m->max_context >= 0)
        snprintf(cap, sizeof cap, "%" PRId64 " %s", m->max_context, unit);
    sh_printf(sh, "eval %s (%" PRIu64 " %s) · %s · context ≤ %s%s\n", o->label ? o->label : given_ids ? "--ids" : "--text",
              tw ? res->bytes / tw : res->bytes, unit, sh_model_name(m, mname, sizeof mname), cap,
              r->cancelled ? " · CANCELLED: partial result" : "");
    sh_printf(sh, "  scored positions  %" PRIu64 "\n", r->scored);
    sh_printf(sh, "  perplexity        %.2f%s\n", r->perplexity, tw ? " (per token)" : "");
    sh_printf(sh, "  bits per %s    %.4f\n", tw ? "token" : "byte ", r->bits_per_byte);
    if (tw && res->text_bytes) /* the text the scored tokens stand for */
        sh_printf(sh, "  bits per byte     %.4f (of %" PRIu64 " bytes of text)\n",
                  -r->sum_ln / (log(2.0) * (double)res->text_bytes), res->text_bytes);
    sh_printf(sh, "  zero probability  %" PRIu64 " positions (%.2f%%), each counted at the floor P = 1e-10\n",
              r->zero_prob, 100 * share);
    if (r->zero_prob && share > 0.01)
        sh_printf(sh, "                    the floor, not the model, dominates these figures\n");
    if (r->zero_prob && m->kind == IG_MODEL_INFGRAM && m->alpha == 0)
        sh_printf(sh, "                    (pure ∞-gram perplexity is infinite on this text)\n");
    sh_printf(sh, "  ∞-gram agreement  %.1f%% (sparse: %.1f%% of %" PRIu64 ", non-sparse: %.1f%% of %" PRIu64 ")\n",
              100 * agreement, r->sparse ? 100.0 * r->agree_sparse / r->sparse : 0, r->sparse,
              r->dense ? 100.0 * r->agree_dense / r->dense : 0, r->dense);
    sh_puts(sh, "  effective n\n");
    uint64_t maxh = 1, last = 0;
    for (uint64_t i = 0; i < r->hist_len; i++)
        if (r->effective_n_hist[i]) {
            maxh = r->effective_n_hist[i] > maxh ? r->effective_n_hist[i] : maxh;
            last = i;
        }
    for (uint64_t i = 1; i <= last; i++) {
        sh_printf(sh, "  %5" PRIu64 "%s %9" PRIu64 " ", i, i + 1 == r->hist_len && open_ended ? "+" : " ",
                  r->effective_n_hist[i]);
        sh_bar(sh, (double)r->effective_n_hist[i] / (double)maxh, 40);
        sh_puts(sh, "\n");
    }
}

/* The partial result of a cancelled run is this command's output (with "cancelled": true in
 * JSON); the error line goes to stderr only, so JSON keeps one object per command. */
static int finish(shell *sh, sh_args *a, void *result, void *self)
{
    const ig_eval_result *r = &((const ig_eval_op_result *)result)->r;
    (void)self;
    if (!r->cancelled)
        return SH_OK;
    int json = sh->json;
    sh->json = 0;
    sh_fail(sh, a, "cancelled", "evaluation cancelled; the figures cover the %" PRIu64 " positions done", r->scored);
    sh->json = json;
    return SH_ERR;
}

const sh_face sh_eval_face = {prepare, run, render, finish};
