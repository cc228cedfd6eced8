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
    int explicit_width = sh_opt_has(a, "width");
    if (sh_opt_int(sh, a, "positions", 0, 1000000, &k) || sh_opt_int(sh, a, "width", 0, 10000, &width))
        return SH_ERR;
    size_t qlen;
    uint8_t *q = sh_query_text(sh, a, 0, &qlen);
    ig_error e;
    if (!q)
        return SH_ERR;
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
    int stopped = 0;
    for (size_t i = 0; i < npos; i++) {
        if (sh_interrupted) {
            stopped = 1;
            break;
        }
        /* positions are sorted, so each lookup continues from the previous one */
        if (SH_TIMED(sh, ig_locate(sh->idx, pos[i], i ? &prev : NULL, &loc, &e)))
            break;
        prev = loc;
        char prefix[512], where[64], name[128];
        if (loc.source_line)
            snprintf(where, sizeof where, "#%" PRIu64, loc.source_line);
        else
            where[0] = '\0';
        sh_short_name(loc.name, 28, name, sizeof name);
        snprintf(prefix, sizeof prefix, "  %s%s:%" PRIu64 ":%" PRIu64 " @%" PRIu64 "  ", name, where, loc.line,
                 loc.column, loc.offset);
        /* on the default width, fit the line to the terminal */
        size_t w = (size_t)width;
        if (!explicit_width && !o) {
            long room = (long)sh->columns - (long)sh_display_width(prefix) - 2 - (long)qlen;
            size_t fit = room > 16 ? (size_t)room / 2 : 8;
            if (fit < w)
                w = fit;
        }
        size_t h0 = 0, h1 = 0;
        char *snip = sh_snippet_text(sh->idx, pos[i], qlen, w, &h0, &h1);
        if (o) {
            sh_json_position(arr, &loc);
            if (snip)
                cJSON_AddStringToObject(cJSON_GetArrayItem(arr, cJSON_GetArraySize(arr) - 1), "snippet", snip);
        } else {
            sh_printf(sh, "%s%s%s", sh_c(sh, SH_CYAN), prefix, sh_c(sh, SH_RESET));
            if (snip)
                sh_print_snippet(sh, snip, h0, h1);
            sh_puts(sh, "\n");
        }
        free(snip);
    }
    free(pos);
    free(q);
    if (stopped) {
        if (o)
            cJSON_Delete(o);
        return sh_fail(sh, a, "cancelled", "listing cancelled");
    }
    if (!o && npos < total && k)
        sh_printf(sh, "  (%" PRIu64 " more)\n", total - npos);
    if (o)
        sh_json_emit(sh, o);
    return SH_OK;
}

void sh_json_position(cJSON *arr, const ig_location *loc)
{
    cJSON *p = cJSON_CreateObject();
    sh_json_u64(p, "doc", loc->doc);
    cJSON_AddStringToObject(p, "name", loc->name);
    sh_json_u64(p, "offset", loc->offset);
    sh_json_u64(p, "line", loc->line);
    sh_json_u64(p, "column", loc->column);
    if (loc->source_line)
        sh_json_u64(p, "source_line", loc->source_line);
    cJSON_AddItemToArray(arr, p);
}
