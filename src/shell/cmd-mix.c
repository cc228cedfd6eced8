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

typedef struct llm_list {
    ig_mix_token *t;
    uint8_t **owned;
    size_t n;
} llm_list;

static void llm_free(llm_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->owned[i]);
    free(l->owned);
    free(l->t);
    memset(l, 0, sizeof *l);
}

static int add_token(llm_list *l, uint8_t *bytes, size_t len, double logprob)
{
    l->t = realloc(l->t, (l->n + 1) * sizeof *l->t);
    l->owned = realloc(l->owned, (l->n + 1) * sizeof *l->owned);
    if (!l->t || !l->owned)
        abort();
    l->owned[l->n] = bytes;
    l->t[l->n++] = (ig_mix_token){bytes, len, logprob};
    return 0;
}

/* Reads one entry object; on error writes why. */
static int entry(const cJSON *e, llm_list *l, char *why, size_t wl)
{
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(e, "token"),
                *hex = cJSON_GetObjectItemCaseSensitive(e, "bytes_hex"),
                *arr = cJSON_GetObjectItemCaseSensitive(e, "bytes"),
                *lp = cJSON_GetObjectItemCaseSensitive(e, "logprob"), *pr = cJSON_GetObjectItemCaseSensitive(e, "prob");
    uint8_t *b = NULL;
    size_t n = 0;
    if (cJSON_IsArray(arr)) { /* exact bytes win over the (possibly lossy) token text */
        n = (size_t)cJSON_GetArraySize(arr);
        b = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(arr, (int)i);
            if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 255) {
                free(b);
                snprintf(why, wl, "\"bytes\" must hold numbers 0..255");
                return -1;
            }
            b[i] = (uint8_t)x->valuedouble;
        }
    } else if (cJSON_IsString(hex)) {
        size_t h = strlen(hex->valuestring);
        if (h % 2) {
            snprintf(why, wl, "\"bytes_hex\" has an odd number of digits");
            return -1;
        }
        n = h / 2;
        b = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            char two[3] = {hex->valuestring[2 * i], hex->valuestring[2 * i + 1], 0};
            char *end;
            b[i] = (uint8_t)strtol(two, &end, 16);
            if (*end || !isxdigit((unsigned char)two[0])) {
                free(b);
                snprintf(why, wl, "\"bytes_hex\" is not hexadecimal");
                return -1;
            }
        }
    } else if (cJSON_IsString(tok)) {
        n = strlen(tok->valuestring);
        b = (uint8_t *)strdup(tok->valuestring);
    } else {
        snprintf(why, wl, "an entry needs \"token\", \"bytes_hex\" or \"bytes\"");
        return -1;
    }
    double logprob;
    if (cJSON_IsNumber(lp) && lp->valuedouble <= 0)
        logprob = lp->valuedouble;
    else if (cJSON_IsNumber(pr) && pr->valuedouble >= 0 && pr->valuedouble <= 1)
        logprob = log(pr->valuedouble);
    else {
        free(b);
        snprintf(why, wl, "an entry needs \"logprob\" (<= 0) or \"prob\" (0..1)");
        return -1;
    }
    if (!n) {
        free(b);
        snprintf(why, wl, "empty token");
        return -1;
    }
    return add_token(l, b, n, logprob);
}

static int parse_llm(const char *text, llm_list *l, char *why, size_t wl)
{
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        snprintf(why, wl, "not valid JSON (near byte %ld)", (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
        return -1;
    }
    const cJSON *v = root;
    if (cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "top_logprobs"))
        v = cJSON_GetObjectItemCaseSensitive(root, "top_logprobs");
    int rc = 0;
    if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            if (!cJSON_IsObject(e)) {
                snprintf(why, wl, "the list must hold objects");
                rc = -1;
                break;
            }
            if ((rc = entry(e, l, why, wl)))
                break;
        }
    } else if (cJSON_IsObject(v)) { /* legacy completions: {token: logprob} */
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            if (!cJSON_IsNumber(e) || e->valuedouble > 0) {
                snprintf(why, wl, "in a {token: logprob} map, \"%s\" needs a number <= 0", e->string);
                rc = -1;
                break;
            }
            add_token(l, (uint8_t *)strdup(e->string), strlen(e->string), e->valuedouble);
        }
    } else {
        snprintf(why, wl, "expected a list of tokens or a {token: logprob} map");
        rc = -1;
    }
    if (!rc && l->n == 0) {
        snprintf(why, wl, "no tokens");
        rc = -1;
    }
    cJSON_Delete(root);
    return rc;
}

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
        return sh_fail(sh, a, "usage", "usage: mix CONTEXT --llm FILE [--lambda L | --lambda-sparse A --lambda-dense B | --adaptive]");
    if (!a->nwords)
        return sh_fail(sh, a, "usage", "missing CONTEXT; usage: mix CONTEXT --llm FILE");
    ig_mix_options o;
    ig_mix_options_default(&o);
    int modes = sh_opt_has(a, "lambda") + (sh_opt_has(a, "lambda-sparse") || sh_opt_has(a, "lambda-dense")) +
                sh_opt_has(a, "adaptive");
    if (modes > 1)
        return sh_fail(sh, a, "usage", "choose one of --lambda, --lambda-sparse/--lambda-dense, --adaptive");
    if (sh_opt_double(sh, a, "lambda", 0, 1, &o.lambda) || sh_opt_double(sh, a, "lambda-sparse", 0, 1, &o.lambda_sparse) ||
        sh_opt_double(sh, a, "lambda-dense", 0, 1, &o.lambda_dense) || sh_opt_double(sh, a, "alpha", 0, 1e12, &o.model.alpha))
        return SH_ERR;
    if (sh_opt_has(a, "lambda-sparse") || sh_opt_has(a, "lambda-dense"))
        o.mode = IG_LAMBDA_SPARSE_DENSE;
    if (sh_opt_has(a, "adaptive"))
        o.mode = IG_LAMBDA_ADAPTIVE;
    long long top = 20;
    if (sh_opt_int(sh, a, "top", 1, 100000, &top))
        return SH_ERR;
    char *text = NULL;
    if (f->value.text[0] == '[' || f->value.text[0] == '{') {
        text = strdup(f->value.text); /* inline JSON (what the HTTP API passes) */
    } else {
        sh_expand_tilde(&f->value);
        FILE *fp = fopen(f->value.text, "r");
        if (!fp)
            return sh_fail_at(sh, a, f->value.col, "not_found", "%s: cannot open: %s", f->value.text, strerror(errno));
        size_t cap = 0;
        ssize_t got = getdelim(&text, &cap, '\0', fp);
        fclose(fp);
        if (got < 0) {
            free(text);
            return sh_fail_at(sh, a, f->value.col, "io", "%s: cannot read", f->value.text);
        }
    }
    llm_list l = {0};
    char why[256];
    if (parse_llm(text, &l, why, sizeof why)) {
        free(text);
        llm_free(&l);
        return sh_fail_at(sh, a, f->value.col, "invalid_input", "%s: %s",
                          f->value.text[0] == '[' || f->value.text[0] == '{' ? "--llm" : f->value.text, why);
    }
    free(text);
    size_t n;
    uint8_t *ctx = sh_query_text(sh, a, 0, &n);
    if (!ctx) {
        llm_free(&l);
        return SH_ERR;
    }
    ig_error e;
    ig_mix_out *out = calloc(l.n, sizeof *out);
    double lambda = 0;
    uint64_t en = 0;
    int sparse = 0;
    if (SH_TIMED(sh, ig_mix(sh->idx, &o, ctx, n, l.t, l.n, out, &lambda, &en, &sparse, &e))) {
        free(ctx);
        free(out);
        llm_free(&l);
        return sh_fail_ig(sh, a, &e);
    }
    /* rows in mixed order */
    size_t *ord = malloc(l.n * sizeof *ord);
    for (size_t i = 0; i < l.n; i++)
        ord[out[i].rank_after - 1] = i;
    if (sh->json) {
        cJSON *j = sh_json_new(sh, a), *arr;
        cJSON_AddStringToObject(j, "dataset", sh->current);
        sh_json_u64(j, "effective_n", en);
        cJSON_AddBoolToObject(j, "sparse", sparse);
        cJSON_AddNumberToObject(j, "lambda", lambda);
        cJSON_AddStringToObject(j, "lambda_mode", o.mode == IG_LAMBDA_ADAPTIVE ? "adaptive"
                                                 : o.mode == IG_LAMBDA_SPARSE_DENSE ? "sparse_dense" : "fixed");
        arr = cJSON_AddArrayToObject(j, "tokens");
        for (size_t k = 0; k < l.n; k++) {
            size_t i = ord[k];
            cJSON *t = cJSON_CreateObject();
            char hex[2 * 64 + 1] = "";
            for (size_t b = 0; b < l.t[i].len && b < 64; b++)
                sprintf(hex + 2 * b, "%02x", l.t[i].bytes[b]);
            if (ig_utf8_valid(l.t[i].bytes, l.t[i].len, NULL) && !memchr(l.t[i].bytes, 0, l.t[i].len)) {
                char *s = strndup((const char *)l.t[i].bytes, l.t[i].len);
                cJSON_AddStringToObject(t, "token", s);
                free(s);
            } else {
                cJSON_AddNullToObject(t, "token");
            }
            cJSON_AddStringToObject(t, "bytes_hex", hex);
            cJSON_AddNumberToObject(t, "llm_prob", out[i].llm_prob);
            cJSON_AddNumberToObject(t, "corpus_prob", out[i].corpus_prob);
            cJSON_AddNumberToObject(t, "mixed_prob", out[i].mixed_prob);
            cJSON_AddNumberToObject(t, "mixed_unnormalized", out[i].mixed_raw);
            sh_json_u64(t, "rank_before", out[i].rank_before);
            sh_json_u64(t, "rank_after", out[i].rank_after);
            sh_json_u64(t, "effective_n", out[i].effective_n);
            cJSON_AddItemToArray(arr, t);
        }
        sh_json_emit(sh, j);
    } else {
        sh_print_context(sh, ctx, n, en ? en - 1 : 0);
        sh_printf(sh, "λ (corpus weight) = %.3f (%s)   effective n: %" PRIu64 "   sparse: %s\n", lambda,
                  o.mode == IG_LAMBDA_ADAPTIVE ? "adaptive" : o.mode == IG_LAMBDA_SPARSE_DENSE ? "sparse/dense" : "fixed",
                  en, sparse ? "yes" : "no");
        sh_printf(sh, "  %-14s %9s %9s %9s  %s\n", "token", "llm p", "corpus p", "mixed p", "rank");
        for (size_t k = 0; k < l.n && k < (size_t)top; k++) {
            size_t i = ord[k];
            char tt[96];
            token_text(&l.t[i], tt, sizeof tt);
            sh_printf(sh, "  %-*s %9.4f %9.4f %9.4f  %u→%u\n", 14 + (int)(strlen(tt) - sh_display_width(tt)), tt,
                      out[i].llm_prob, out[i].corpus_prob, out[i].mixed_prob, out[i].rank_before, out[i].rank_after);
        }
        if (l.n > (size_t)top)
            sh_printf(sh, "  (%zu more)\n", l.n - (size_t)top);
    }
    free(ord);
    free(out);
    free(ctx);
    llm_free(&l);
    return SH_OK;
}
