/*
 * eval — scores a model on held-out text: bits per byte, perplexity, how many positions
 * had probability 0 (counted at a stated floor, never dropped), ∞-gram agreement, and
 * the effective-n histogram. Follows the SBI-SPEC conventions for every model.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"


static int eval_progress(void *user, uint64_t done, uint64_t total)
{
    shell *sh = user;
    if (sh_interrupted)
        return 1;
    sh_progress_draw(sh, "eval", done, total);
    return 0;
}

int cmd_eval(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    sh_optval *text = sh_opt_get(a, "text"), *range = sh_opt_get(a, "range");
    if (!text && a->nwords != 1)
        return sh_fail(sh, a, "usage", "usage: eval [MODEL OPTIONS] FILE [--range A:B] | eval --text \"TEXT\"");
    if (text && a->nwords)
        return sh_fail_at(sh, a, a->words[0].col, "usage", "give either FILE or --text, not both");
    if (text && range)
        return sh_fail_at(sh, a, range->col, "usage", "--range applies to FILE");
    ig_model m;
    long long threads = 0;
    if (sh_model_opts(sh, a, &m, 100) || sh_opt_int(sh, a, "threads", 0, 256, &threads))
        return SH_ERR;
    ig_index_info info;
    ig_index_get_info(sh->idx, &info);
    uint8_t *buf = NULL;
    size_t len = 0;
    ig_error e;
    const char *label;
    if (text) {
        if (SH_TIMED(sh, ig_query_normalize(sh->idx, (const uint8_t *)text->value.text, text->value.len, &buf, &len, &e)))
            return sh_fail_ig(sh, a, &e);
        label = "--text";
    } else {
        sh_expand_tilde(&a->words[0]);
        label = a->words[0].text;
        if (SH_TIMED(sh, ig_load_text(label, range ? range->value.text : NULL, info.normalized, &buf, &len, &e)))
            return sh_fail_ig(sh, a, &e);
    }
    ig_eval_result r;
    double t0 = sh_clock();
    int rc = ig_eval(sh->idx, &m, buf, len, (int)threads, sh->progress ? eval_progress : NULL, sh, &sh_interrupted,
                     &r, &e);
    sh->elapsed += sh_clock() - t0; /* the whole evaluation */
    sh_progress_clear(sh);
    free(buf);
    if (rc)
        return sh_fail_ig(sh, a, &e);
    if (sh_interrupted)
        r.cancelled = 1;
    double share = r.scored ? (double)r.zero_prob / (double)r.scored : 0;
    /* the last histogram bucket collects longer matches only when the context is not capped below it */
    int open_ended = m.max_context < 0 || (uint64_t)m.max_context + 2 > r.hist_len;
    double agreement = r.scored ? (double)r.agree / (double)r.scored : 0;
    char mname[96];
    sh_model_name(&m, mname, sizeof mname);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "dataset", sh->current);
        cJSON_AddStringToObject(o, "model", mname);
        cJSON_AddStringToObject(o, "source", label);
        sh_json_u64(o, "bytes", len);
        if (m.max_context >= 0)
            sh_json_u64(o, "max_context", (uint64_t)m.max_context);
        cJSON_AddNumberToObject(o, "perplexity", r.perplexity);
        cJSON_AddNumberToObject(o, "bits_per_byte", r.bits_per_byte);
        sh_json_u64(o, "scored", r.scored);
        sh_json_u64(o, "zero_prob", r.zero_prob);
        cJSON_AddNumberToObject(o, "zero_prob_share", share);
        cJSON_AddNumberToObject(o, "floor_prob", 1e-10);
        cJSON_AddNumberToObject(o, "agreement", agreement);
        cJSON_AddNumberToObject(o, "agreement_sparse", r.sparse ? (double)r.agree_sparse / (double)r.sparse : 0);
        cJSON_AddNumberToObject(o, "agreement_dense", r.dense ? (double)r.agree_dense / (double)r.dense : 0);
        sh_json_u64(o, "sparse_positions", r.sparse);
        cJSON *h = cJSON_AddObjectToObject(o, "effective_n_hist");
        for (uint64_t i = 0; i < r.hist_len; i++)
            if (r.effective_n_hist[i]) {
                char k[32];
                snprintf(k, sizeof k, "%" PRIu64 "%s", i, i + 1 == r.hist_len && open_ended ? "+" : "");
                sh_json_u64(h, k, r.effective_n_hist[i]);
            }
        cJSON_AddBoolToObject(o, "cancelled", r.cancelled);
        sh_json_emit(sh, o);
    } else {
        char cap[32] = "unlimited";
        if (m.max_context >= 0)
            snprintf(cap, sizeof cap, "%" PRId64 " bytes", m.max_context);
        sh_printf(sh, "eval %s (%zu bytes) · %s · context ≤ %s%s\n", label, len, mname, cap,
                  r.cancelled ? " · CANCELLED: partial result" : "");
        sh_printf(sh, "  scored positions  %" PRIu64 "\n", r.scored);
        sh_printf(sh, "  perplexity        %.2f\n", r.perplexity);
        sh_printf(sh, "  bits per byte     %.4f\n", r.bits_per_byte);
        sh_printf(sh, "  zero probability  %" PRIu64 " positions (%.2f%%), each counted at the floor P = 1e-10\n",
                  r.zero_prob, 100 * share);
        if (r.zero_prob && share > 0.01)
            sh_printf(sh, "                    the floor, not the model, dominates these figures\n");
        if (r.zero_prob && m.kind == IG_MODEL_INFGRAM && m.alpha == 0)
            sh_printf(sh, "                    (pure ∞-gram perplexity is infinite on this text)\n");
        sh_printf(sh, "  ∞-gram agreement  %.1f%% (sparse: %.1f%% of %" PRIu64 ", non-sparse: %.1f%% of %" PRIu64 ")\n",
                  100 * agreement, r.sparse ? 100.0 * r.agree_sparse / r.sparse : 0, r.sparse,
                  r.dense ? 100.0 * r.agree_dense / r.dense : 0, r.dense);
        sh_puts(sh, "  effective n\n");
        uint64_t maxh = 1, last = 0;
        for (uint64_t i = 0; i < r.hist_len; i++)
            if (r.effective_n_hist[i]) {
                maxh = r.effective_n_hist[i] > maxh ? r.effective_n_hist[i] : maxh;
                last = i;
            }
        for (uint64_t i = 1; i <= last; i++) {
            sh_printf(sh, "  %5" PRIu64 "%s %9" PRIu64 " ", i, i + 1 == r.hist_len && open_ended ? "+" : " ",
                      r.effective_n_hist[i]);
            sh_bar(sh, (double)r.effective_n_hist[i] / (double)maxh, 40);
            sh_puts(sh, "\n");
        }
    }
    ig_eval_result_free(&r);
    if (r.cancelled) {
        /* the partial result is this command's output (with "cancelled": true in JSON);
         * the error line goes to stderr only, so JSON keeps one object per command */
        int json = sh->json;
        sh->json = 0;
        sh_fail(sh, a, "cancelled", "evaluation cancelled; the figures cover the %" PRIu64 " positions done", r.scored);
        sh->json = json;
        return SH_ERR;
    }
    return SH_OK;
}
