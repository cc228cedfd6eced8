/*
 * The model commands: predict, prob and backoff. Model selection options are parsed in
 * one place (sh_model_opts) so that predict, prob, eval (and later generate) agree.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

int sh_opt_double(shell *sh, sh_args *a, const char *name, double min, double max, double *out)
{
    sh_optval *o = sh_opt_get(a, name);
    if (!o)
        return SH_OK;
    char *end = NULL;
    double v = strtod(o->value.text, &end);
    if (!o->value.len || *end || isnan(v))
        return sh_fail_at(sh, a, o->value.col, "usage", "--%s: not a number: \"%s\"", name, o->value.text);
    if (v < min || v > max)
        return sh_fail_at(sh, a, o->value.col, "usage", "--%s: %g is out of range (%g to %g)", name, v, min, max);
    *out = v;
    return SH_OK;
}

int sh_model_opts(shell *sh, sh_args *a, ig_model *m, int64_t default_context)
{
    ig_model_default(m);
    m->max_context = default_context;
    char *mc = sh_setting_value(sh, "max-context");
    if (mc && strcmp(mc, "none") && default_context < 0)
        m->max_context = atoll(mc);
    free(mc);
    int kinds = 0;
    const char *first = NULL;
    long long v;
    if (sh_opt_has(a, "infgram")) {
        kinds++;
        first = "--infgram";
    }
    if (sh_opt_get(a, "n")) {
        v = 0;
        if (sh_opt_int(sh, a, "n", 1, 1000000, &v))
            return SH_ERR;
        m->kind = IG_MODEL_NGRAM;
        m->n = (uint32_t)v;
        kinds++;
        first = first ? first : "--n";
    }
    sh_optval *w = sh_opt_get(a, "weighted");
    if (w) {
        static const char *fns[] = {"linear", "quadratic", "exponential", "sigmoid"};
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(w->value.text, fns[i]))
                found = i;
        if (found < 0)
            return sh_fail_at(sh, a, w->value.col, "usage",
                              "--weighted: expected linear, quadratic, exponential or sigmoid");
        m->kind = IG_MODEL_WEIGHTED;
        m->weight = (ig_weight_fn)found;
        kinds++;
        first = first ? first : "--weighted";
    }
    if (sh_opt_get(a, "interp")) {
        v = 0;
        if (sh_opt_int(sh, a, "interp", -1, 1000000, &v))
            return SH_ERR;
        sh_optval *o = sh_opt_get(a, "interp");
        if (v == 0)
            return sh_fail_at(sh, a, o->value.col, "usage", "--interp: K must be >= 1, or -1 for all levels");
        m->kind = IG_MODEL_INTERP;
        m->interp_k = (int)v;
        kinds++;
        first = first ? first : "--interp";
    }
    if (kinds > 1)
        return sh_fail(sh, a, "usage", "choose one model: %s cannot be combined with another model option", first);
    if (sh_opt_has(a, "sbi")) {
        if (m->kind != IG_MODEL_INTERP)
            return sh_fail_at(sh, a, sh_opt_get(a, "sbi")->col, "usage", "--sbi goes with --interp K");
        m->sbi = 1;
    }
    if (sh_opt_double(sh, a, "alpha", 0, 1e12, &m->alpha))
        return SH_ERR;
    if (m->alpha > 0 && (m->kind == IG_MODEL_WEIGHTED || m->kind == IG_MODEL_INTERP))
        return sh_fail_at(sh, a, sh_opt_get(a, "alpha")->col, "usage", "--alpha applies to the ∞-gram and --n only");
    long long lo = -1;
    if (sh_opt_int(sh, a, "min-len", 1, 1000000000, &lo))
        return SH_ERR;
    if (lo > 0)
        m->min_len = (uint32_t)lo;
    lo = -1;
    if (sh_opt_int(sh, a, "max-len", 1, 1000000000, &lo))
        return SH_ERR;
    if (lo > 0)
        m->max_len = (uint32_t)lo;
    if ((sh_opt_has(a, "min-len") || sh_opt_has(a, "max-len")) && m->kind != IG_MODEL_WEIGHTED)
        return sh_fail(sh, a, "usage", "--min-len and --max-len go with --weighted FN");
    if (sh_opt_double(sh, a, "beta", 1e-9, 1e9, &m->beta))
        return SH_ERR;
    lo = -2;
    if (sh_opt_int(sh, a, "max-context", -1, 1000000000, &lo))
        return SH_ERR;
    if (lo != -2)
        m->max_context = lo;
    ig_error e;
    if (ig_model_check(m, &e))
        return sh_fail(sh, a, "usage", "%s", e.msg);
    return SH_OK;
}

const char *sh_model_name(const ig_model *m, char *buf, size_t n)
{
    static const char *fns[] = {"linear", "quadratic", "exponential", "sigmoid"};
    switch (m->kind) {
    case IG_MODEL_NGRAM: snprintf(buf, n, "%u-gram", m->n); break;
    case IG_MODEL_WEIGHTED: snprintf(buf, n, "weighted (%s)", fns[m->weight]); break;
    case IG_MODEL_INTERP:
        if (m->interp_k < 0)
            snprintf(buf, n, "interpolation, all levels%s", m->sbi ? " (SBI)" : "");
        else
            snprintf(buf, n, "interpolation, %d level%s%s", m->interp_k, m->interp_k == 1 ? "" : "s",
                     m->sbi ? " (SBI)" : "");
        break;
    default: snprintf(buf, n, "∞-gram"); break;
    }
    if (m->alpha > 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, ", Laplace α=%g", m->alpha);
    }
    return buf;
}

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

void sh_symbol_json(cJSON *o, const uint8_t *b, int len)
{
    char hex[16] = "";
    for (int i = 0; i < len; i++)
        sprintf(hex + 2 * i, "%02x", b[i]);
    if (len == 1 && b[0] == 0xFF)
        cJSON_AddStringToObject(o, "symbol", "<end>");
    else if (ig_utf8_valid(b, (size_t)len, NULL) && !memchr(b, 0, (size_t)len)) {
        char s[8];
        memcpy(s, b, (size_t)len);
        s[len] = '\0';
        cJSON_AddStringToObject(o, "symbol", s);
    } else
        cJSON_AddNullToObject(o, "symbol");
    cJSON_AddStringToObject(o, "bytes_hex", hex);
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
 * `matched` bytes — highlighted. */
void sh_print_context(shell *sh, const uint8_t *ctx, size_t len, uint64_t matched)
{
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

static int need_text(shell *sh, sh_args *a, const char *usage)
{
    if (a->nwords == 0)
        return sh_fail(sh, a, "usage", "missing TEXT; usage: %s", usage);
    return SH_OK;
}

uint8_t *sh_query_text(shell *sh, sh_args *a, int from, size_t *n)
{
    size_t rawlen;
    char *raw = sh_text_arg(a, from, &rawlen);
    uint8_t *q = NULL;
    ig_error e;
    if (SH_TIMED(sh, ig_query_normalize(sh->idx, (const uint8_t *)raw, rawlen, &q, n, &e))) {
        sh_fail_ig(sh, a, &e);
        q = NULL;
    }
    free(raw);
    return q;
}

int sh_predict_symbols(shell *sh, sh_args *a, const ig_model *m, const uint8_t *ctx, size_t n, int chars,
                       sh_prediction *p)
{
    ig_error e;
    memset(p, 0, sizeof *p);
    if (SH_TIMED(sh, ig_predict(sh->idx, m, ctx, n, &p->d, &e)) ||
        SH_TIMED(sh, ig_dist_symbols(sh->idx, &p->d, ctx, n, chars, &p->syms, &p->ns, &p->unseen, &e))) {
        ig_dist_free(&p->d);
        return sh_fail_ig(sh, a, &e);
    }
    int nonzero = 0;
    for (size_t i = 0; i < p->ns; i++)
        nonzero += p->syms[i].prob > 0;
    p->sparse = p->d.defined && nonzero == 1 && p->unseen == 0;
    return SH_OK;
}

void sh_prediction_free(sh_prediction *p)
{
    ig_dist_free(&p->d);
    free(p->syms);
    p->syms = NULL;
}

size_t sh_find_locations(shell *sh, const uint8_t *p, size_t len, size_t k, ig_pos **pos, ig_location **loc,
                         uint64_t *total)
{
    *pos = k ? calloc(k, sizeof **pos) : NULL;
    *loc = k ? calloc(k, sizeof **loc) : NULL;
    *total = 0;
    size_t n = k ? SH_TIMED(sh, ig_positions(sh->idx, p, len, *pos, k, total)) : SH_TIMED(sh, (size_t)0);
    if (!k)
        *total = SH_TIMED(sh, ig_count(sh->idx, p, len));
    ig_error e;
    for (size_t i = 0; i < n; i++) /* sorted positions: each lookup continues from the last */
        if (SH_TIMED(sh, ig_locate(sh->idx, (*pos)[i], i ? &(*loc)[i - 1] : NULL, &(*loc)[i], &e)))
            return i;
    return n;
}

int cmd_predict(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a) || need_text(sh, a, "predict [MODEL OPTIONS] [--top K] [--bytes] TEXT"))
        return SH_ERR;
    ig_model m;
    long long top = 10;
    if (sh_model_opts(sh, a, &m, -1) || sh_opt_int(sh, a, "top", 1, 1000000, &top))
        return SH_ERR;
    int chars = !sh_opt_has(a, "bytes");
    size_t n;
    uint8_t *ctx = sh_query_text(sh, a, 0, &n);
    if (!ctx)
        return SH_ERR;
    sh_prediction pr;
    if (sh_predict_symbols(sh, a, &m, ctx, n, chars, &pr)) {
        free(ctx);
        return SH_ERR;
    }
    ig_dist d = pr.d;
    ig_symbol *syms = pr.syms;
    size_t ns = pr.ns;
    double unseen = pr.unseen;
    int sparse = pr.sparse;
    uint64_t en = d.length + 1;
    char mname[96];
    sh_model_name(&m, mname, sizeof mname);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *arr;
        cJSON_AddStringToObject(o, "dataset", sh->current);
        cJSON_AddStringToObject(o, "model", mname);
        sh_json_u64(o, "effective_n", en);
        sh_json_u64(o, "longest_match", d.longest);
        sh_json_u64(o, "suffix_count", d.suffix_count);
        cJSON_AddBoolToObject(o, "sparse", sparse);
        cJSON_AddBoolToObject(o, "defined", d.defined);
        if (m.kind == IG_MODEL_WEIGHTED)
            cJSON_AddBoolToObject(o, "fallback", d.fallback);
        if (d.nlevels > 1 || m.kind == IG_MODEL_INTERP) {
            cJSON *lv = cJSON_AddArrayToObject(o, "levels");
            for (size_t j = 0; j < d.nlevels; j++) {
                cJSON *x = cJSON_CreateObject();
                sh_json_u64(x, "length", d.levels[j].length);
                sh_json_u64(x, "total", d.levels[j].total);
                cJSON_AddNumberToObject(x, "weight", d.levels[j].coef * (double)d.levels[j].total);
                cJSON_AddItemToArray(lv, x);
            }
        }
        if (unseen > 0)
            cJSON_AddNumberToObject(o, "unseen_prob", unseen);
        arr = cJSON_AddArrayToObject(o, "candidates");
        for (size_t i = 0; i < ns && i < (size_t)top; i++) {
            cJSON *c = cJSON_CreateObject();
            sh_symbol_json(c, syms[i].bytes, syms[i].len);
            sh_json_u64(c, "count", syms[i].count);
            cJSON_AddNumberToObject(c, "prob", syms[i].prob);
            cJSON_AddItemToArray(arr, c);
        }
        sh_json_emit(sh, o);
    } else {
        sh_print_context(sh, ctx, n, d.longest);
        sh_printf(sh, "model: %s   effective n: %" PRIu64 "   suffix count: %" PRIu64 "   sparse: %s\n", mname, en,
                  d.suffix_count, sparse ? "yes" : "no");
        if (!d.defined) {
            if (m.kind == IG_MODEL_NGRAM)
                sh_printf(sh, "no estimate: the %u-byte context never occurs (or the text is shorter)\n", m.n - 1);
            else
                sh_printf(sh, "no estimate: no suffix of the context occurs, and this model never backs off to "
                              "the unigram\n");
        } else {
            if (d.fallback)
                sh_printf(sh, "(no suffix length in [min-len, max-len]: showing the ∞-gram)\n");
            if (d.nlevels > 1) {
                sh_puts(sh, "levels:");
                for (size_t j = 0; j < d.nlevels && j < 8; j++)
                    sh_printf(sh, " ℓ=%" PRIu64 " (%" PRIu64 ")", d.levels[j].length, d.levels[j].total);
                sh_puts(sh, d.nlevels > 8 ? " …\n" : "\n");
            }
            sh_printf(sh, "  %-8s %10s %8s\n", "next", "count", "prob");
            double maxp = ns ? syms[0].prob : 1;
            for (size_t i = 0; i < ns && i < (size_t)top; i++) {
                char sym[64];
                sh_symbol_text(syms[i].bytes, syms[i].len, sym, sizeof sym);
                char pr[32];
                snprintf(pr, sizeof pr, syms[i].prob >= 0.001 || syms[i].prob == 0 ? "%.3f" : "%.1e", syms[i].prob);
                sh_printf(sh, "  %-*s %10" PRIu64 " %8s  ", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                          syms[i].count, pr);
                sh_bar(sh, maxp > 0 ? syms[i].prob / maxp : 0, 20);
                sh_puts(sh, "\n");
            }
            if (ns > (size_t)top)
                sh_printf(sh, "  (%zu more)\n", ns - (size_t)top);
            if (unseen > 0)
                sh_printf(sh, "  unseen symbols (smoothing): %.3f\n", unseen);
        }
    }
    sh_prediction_free(&pr);
    free(ctx);
    return SH_OK;
}

int cmd_prob(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    if (a->nwords != 2 || !a->words[0].quoted || !a->words[1].quoted)
        return sh_fail(sh, a, "usage", "prob needs two quoted texts; usage: prob [MODEL OPTIONS] \"TEXT\" \"CONTINUATION\"");
    ig_model m;
    if (sh_model_opts(sh, a, &m, -1))
        return SH_ERR;
    int chars = !sh_opt_has(a, "bytes");
    ig_error e;
    uint8_t *ctx = NULL, *cont = NULL;
    size_t n = 0, cn = 0;
    if (SH_TIMED(sh, ig_query_normalize(sh->idx, (const uint8_t *)a->words[0].text, a->words[0].len, &ctx, &n, &e)) ||
        SH_TIMED(sh, ig_query_normalize(sh->idx, (const uint8_t *)a->words[1].text, a->words[1].len, &cont, &cn, &e))) {
        free(ctx);
        return sh_fail_ig(sh, a, &e);
    }
    if (cn == 0) {
        free(ctx);
        free(cont);
        return sh_fail_at(sh, a, a->words[1].col, "usage", "empty continuation");
    }
    ig_factor *f = NULL;
    size_t nf = 0;
    double p = 0, lp = 0;
    if (SH_TIMED(sh, ig_prob(sh->idx, &m, ctx, n, cont, cn, chars, &f, &nf, &p, &lp, &e))) {
        free(ctx);
        free(cont);
        return sh_fail_ig(sh, a, &e);
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *arr;
        cJSON_AddStringToObject(o, "dataset", sh->current);
        cJSON_AddNumberToObject(o, "prob", p);
        if (isinf(lp))
            cJSON_AddNullToObject(o, "log2_prob");
        else
            cJSON_AddNumberToObject(o, "log2_prob", lp);
        arr = cJSON_AddArrayToObject(o, "factors");
        for (size_t i = 0; i < nf; i++) {
            cJSON *c = cJSON_CreateObject();
            sh_symbol_json(c, f[i].bytes, f[i].len);
            cJSON_AddNumberToObject(c, "prob", f[i].prob);
            sh_json_u64(c, "effective_n", f[i].effective_n);
            cJSON_AddItemToArray(arr, c);
        }
        sh_json_emit(sh, o);
    } else {
        char mname[96];
        sh_printf(sh, "model: %s\n  %-8s %10s %12s\n", sh_model_name(&m, mname, sizeof mname), "symbol", "prob",
                  "effective n");
        for (size_t i = 0; i < nf; i++) {
            char sym[64];
            sh_symbol_text(f[i].bytes, f[i].len, sym, sizeof sym);
            sh_printf(sh, "  %-*s %10.6f %12" PRIu64 "\n", 8 + (int)(strlen(sym) - sh_display_width(sym)), sym,
                      f[i].prob, f[i].effective_n);
        }
        if (isinf(lp))
            sh_printf(sh, "P = 0   (log2 P = -inf: a factor is 0)\n");
        else
            sh_printf(sh, "P = %.6g   log2 P = %.4f\n", p, lp);
    }
    free(f);
    free(ctx);
    free(cont);
    return SH_OK;
}

int cmd_backoff(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a) || need_text(sh, a, "backoff [--factor F] [--threshold T] [--top K] TEXT"))
        return SH_ERR;
    ig_model m;
    long long top = 10, tau = 1;
    ig_model_default(&m);
    if (sh_opt_double(sh, a, "factor", 1e-9, 1, &m.factor) || sh_opt_int(sh, a, "threshold", 1, INT64_MAX, &tau) ||
        sh_opt_int(sh, a, "top", 1, 1000000, &top))
        return SH_ERR;
    m.threshold = (uint64_t)tau;
    long long mc = -2;
    if (sh_opt_int(sh, a, "max-context", -1, 1000000000, &mc))
        return SH_ERR;
    if (mc != -2)
        m.max_context = mc;
    int chars = !sh_opt_has(a, "bytes");
    size_t n;
    uint8_t *ctx = sh_query_text(sh, a, 0, &n);
    if (!ctx)
        return SH_ERR;
    ig_backoff_cand *c = NULL;
    size_t nc = 0;
    uint64_t ltau = 0;
    ig_error e;
    if (SH_TIMED(sh, ig_backoff(sh->idx, &m, ctx, n, chars, &c, &nc, &ltau, &e))) {
        free(ctx);
        return sh_fail_ig(sh, a, &e);
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *arr;
        cJSON_AddStringToObject(o, "dataset", sh->current);
        sh_json_u64(o, "longest", ltau);
        cJSON_AddNumberToObject(o, "factor", m.factor);
        sh_json_u64(o, "threshold", m.threshold);
        arr = cJSON_AddArrayToObject(o, "candidates");
        for (size_t i = 0; i < nc && i < (size_t)top; i++) {
            cJSON *x = cJSON_CreateObject();
            sh_symbol_json(x, c[i].bytes, c[i].len);
            cJSON_AddNumberToObject(x, "score", c[i].score);
            sh_json_u64(x, "length", c[i].length);
            sh_json_u64(x, "count", c[i].count);
            cJSON_AddNumberToObject(x, "normalized", c[i].normalized);
            cJSON_AddItemToArray(arr, x);
        }
        sh_json_emit(sh, o);
    } else {
        sh_print_context(sh, ctx, n, ltau);
        sh_printf(sh, "Stupid Backoff: λ = %g, τ = %" PRIu64 ", ℓτ = %" PRIu64 " (scores are not probabilities)\n",
                  m.factor, m.threshold, ltau);
        sh_printf(sh, "  %-8s %12s %7s %10s %10s\n", "next", "score", "from ℓ", "count", "normalized");
        for (size_t i = 0; i < nc && i < (size_t)top; i++) {
            char sym[64];
            sh_symbol_text(c[i].bytes, c[i].len, sym, sizeof sym);
            sh_printf(sh, "  %-*s %12.6g %7" PRIu64 " %10" PRIu64 " %10.4f\n",
                      8 + (int)(strlen(sym) - sh_display_width(sym)), sym, c[i].score, c[i].length, c[i].count,
                      c[i].normalized);
        }
        if (nc > (size_t)top)
            sh_printf(sh, "  (%zu more)\n", nc - (size_t)top);
    }
    free(c);
    free(ctx);
    return SH_OK;
}
