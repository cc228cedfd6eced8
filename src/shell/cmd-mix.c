/*
 * mix — corpus probabilities mixed into an LLM's next-token distribution. The LLM's
 * candidates come from a JSON file in any of the shapes LLM APIs produce: a list of
 * {"token" | "bytes_hex" | "bytes": [...], "logprob" | "prob"}, OpenAI chat
 * `top_logprobs` entries (token, logprob, bytes), or a legacy completions map
 * {token: logprob}, either alone or under a "top_logprobs" key.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static void token_text(const ig_mix_token *t, char *out, size_t n)
{
    if (ig_utf8_valid(t->bytes, t->len, NULL) && !memchr(t->bytes, 0, t->len)) {
        char *q = sh_quote((const char *)t->bytes, t->len);
        snprintf(out, n, "%s", q);
        free(q);
    } else {
        size_t o = 0;
        for (size_t i = 0; i < t->len && o + 5 < n; i++)
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", t->bytes[i]);
    }
}

int cmd_mix(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    sh_optval *f = sh_opt_get(a, "llm");
    if (!f)
        return sh_fail_usage(sh, a, NULL);
    if (!a->nwords && !sh_opt_get(a, "ids"))
        return sh_fail_usage(sh, a, "missing CONTEXT");
    ig_mix_opts o;
    ig_mix_result r;
    if (sh_op_begin(sh, a, &ig_op_mix, &o, NULL))
        return SH_ERR;
    /* the shell's own convenience: --llm names a file unless it is the JSON itself */
    int from_file = f->value.text[0] != '[' && f->value.text[0] != '{';
    if (from_file) {
        if (sh_path_arg(sh, a, &f->value)) {
            ig_fields_free(ig_mix_fields, &o);
            return SH_ERR;
        }
        FILE *fp = fopen(f->value.text, "r");
        char *text = NULL;
        size_t cap = 0;
        ssize_t got = fp ? getdelim(&text, &cap, '\0', fp) : -1;
        int eno = errno;
        if (fp)
            fclose(fp);
        ig_error e;
        if (got < 0 || ig_field_set_text(ig_field_find(ig_mix_fields, "llm", 3), &o, (const uint8_t *)text, (size_t)got, &e)) {
            free(text);
            ig_fields_free(ig_mix_fields, &o);
            if (!fp)
                return sh_fail_at(sh, a, f->value.col, "not_found", "%s: cannot open: %s", f->value.text, strerror(eno));
            return sh_fail_at(sh, a, f->value.col, "io", "%s: cannot read", f->value.text);
        }
        free(text);
    }
    ig_op_ctx ctx = {sh->idx, sh->current, (const volatile int *)&sh_interrupted};
    ig_error e;
    if (SH_TIMED(sh, ig_op_mix.run(&ctx, &o, &r, &e))) {
        ig_fields_free(ig_mix_fields, &o);
        if (from_file && !strncmp(e.msg, "{llm}", 5)) { /* name the file the candidates came from */
            char msg[IG_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s", e.msg + 5 + (e.msg[5] == ':' ? 2 : 0));
            return sh_fail_at(sh, a, f->value.col, ig_error_code_name(e.code), "%s: %s", f->value.text, msg);
        }
        return sh_fail_field(sh, a, &e);
    }
    if (sh->json) {
        sh_op_json(sh, a, &ig_op_mix, &o, &r);
    } else {
        uint32_t tw = ig_index_token_width(sh->idx);
        sh_print_context(sh, r.context, r.clen, r.effective_n ? r.effective_n - 1 : 0);
        sh_printf(sh, "λ (corpus weight) = %.3f (%s)   effective n: %" PRIu64 "   sparse: %s\n", r.lambda,
                  r.mode == IG_LAMBDA_ADAPTIVE ? "adaptive" : r.mode == IG_LAMBDA_SPARSE_DENSE ? "sparse/dense" : "fixed",
                  r.effective_n, r.sparse ? "yes" : "no");
        sh_printf(sh, "  %-14s %9s %9s %9s  %s\n", "token", "llm p", "corpus p", "mixed p", "rank");
        for (size_t k = 0; k < r.ntokens && k < o.top; k++) {
            size_t i = r.order[k];
            const ig_mix_out *x = &r.out[i];
            char tt[160];
            if (tw)
                sh_token_label(sh, r.tokens[i].bytes, tw, tt, sizeof tt);
            else
                token_text(&r.tokens[i], tt, sizeof tt);
            sh_printf(sh, "  %-*s %9.4f %9.4f %9.4f  %u→%u\n", 14 + (int)(strlen(tt) - sh_display_width(tt)), tt,
                      x->llm_prob, x->corpus_prob, x->mixed_prob, x->rank_before, x->rank_after);
        }
        if (r.ntokens > o.top)
            sh_printf(sh, "  (%zu more)\n", r.ntokens - (size_t)o.top);
    }
    ig_mix_result_free(&r);
    ig_fields_free(ig_mix_fields, &o);
    return SH_OK;
}
