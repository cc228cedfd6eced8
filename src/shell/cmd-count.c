/*
 * count — occurrences of a byte string, optionally with the first K positions in
 * corpus order, each resolved to document, line:column and a highlighted snippet.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* Adds a possibly-invalid byte string: as a JSON string when valid UTF-8, else hex. */
static void json_bytes(cJSON *o, const char *key, const uint8_t *p, size_t n)
{
    if (ig_utf8_valid(p, n, NULL) && !memchr(p, 0, n)) {
        cJSON_AddStringToObject(o, key, (const char *)p);
        return;
    }
    char *hex = malloc(2 * n + 1), k[64];
    for (size_t i = 0; i < n; i++)
        sprintf(hex + 2 * i, "%02x", p[i]);
    hex[2 * n] = '\0';
    snprintf(k, sizeof k, "%s_hex", key);
    cJSON_AddStringToObject(o, k, hex);
    free(hex);
}

int cmd_count(shell *sh, sh_args *a)
{
    if (sh_need_index(sh, a))
        return SH_ERR;
    if (a->nwords == 0)
        return sh_fail(sh, a, "usage", "missing TEXT; usage: count [--positions K] [--width W] TEXT");
    long long k = 0, width = 30;
    char *wdef = sh_setting_value(sh, "width");
    if (wdef)
        width = atoll(wdef);
    free(wdef);
    if (sh_opt_int(sh, a, "positions", 0, 1000000, &k) || sh_opt_int(sh, a, "width", 0, 10000, &width))
        return SH_ERR;
    size_t rawlen, qlen;
    char *raw = sh_text_arg(a, 0, &rawlen);
    uint8_t *q = NULL;
    ig_error e;
    if (SH_TIMED(sh, ig_query_normalize(sh->idx, (const uint8_t *)raw, rawlen, &q, &qlen, &e))) {
        free(raw);
        return sh_fail_ig(sh, a, &e);
    }
    free(raw);
    ig_pos *pos = k ? malloc((size_t)k * sizeof *pos) : NULL;
    uint64_t total = 0;
    size_t npos = 0;
    if (k)
        npos = SH_TIMED(sh, ig_positions(sh->idx, q, qlen, pos, (size_t)k, &total));
    else
        total = SH_TIMED(sh, ig_count(sh->idx, q, qlen));
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL, *arr = NULL;
    if (o) {
        cJSON_AddStringToObject(o, "dataset", sh->current);
        json_bytes(o, "query", q, qlen);
        sh_json_u64(o, "count", total);
        if (k)
            arr = cJSON_AddArrayToObject(o, "positions");
    } else {
        sh_printf(sh, "%" PRIu64 "\n", total);
    }
    ig_location prev = {0}, loc;
    for (size_t i = 0; i < npos; i++) {
        /* positions are sorted, so each lookup continues from the previous one */
        if (SH_TIMED(sh, ig_locate(sh->idx, pos[i], i ? &prev : NULL, &loc, &e)))
            break;
        prev = loc;
        size_t h0 = 0, h1 = 0;
        char *snip = sh_snippet_text(sh->idx, pos[i], qlen, (size_t)width, &h0, &h1);
        if (o) {
            cJSON *p = cJSON_CreateObject();
            sh_json_u64(p, "doc", loc.doc);
            cJSON_AddStringToObject(p, "name", loc.name);
            sh_json_u64(p, "offset", loc.offset);
            sh_json_u64(p, "line", loc.line);
            sh_json_u64(p, "column", loc.column);
            if (loc.source_line)
                sh_json_u64(p, "source_line", loc.source_line);
            if (snip)
                cJSON_AddStringToObject(p, "snippet", snip);
            cJSON_AddItemToArray(arr, p);
        } else {
            char where[64];
            if (loc.source_line)
                snprintf(where, sizeof where, "#%" PRIu64, loc.source_line);
            else
                where[0] = '\0';
            sh_printf(sh, "  %sdoc %" PRIu64 "%s %s%s:%" PRIu64 ":%" PRIu64 " @%" PRIu64 "  ", sh_c(sh, SH_CYAN), loc.doc,
                      sh_c(sh, SH_RESET), loc.name, where, loc.line, loc.column, loc.offset);
            if (snip)
                sh_print_snippet(sh, snip, h0, h1);
            sh_puts(sh, "\n");
        }
        free(snip);
    }
    if (!o && npos < total && k)
        sh_printf(sh, "  (%" PRIu64 " more)\n", total - npos);
    if (o)
        sh_json_emit(sh, o);
    free(pos);
    free(q);
    return SH_OK;
}
