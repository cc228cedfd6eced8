/* Shared pieces of the operations' JSON writers (see opjson.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "infinigram/index.h"
#include "opjson.h"
#include "infinigram/tokens.h"

/* cJSON reports a failed allocation only by leaving the member out. Its allocations go
 * through jw_malloc, which notes the failure for the writer running on this thread, so that
 * igi_jw_members can refuse a document with a member missing. The hooks are installed before
 * main (a program that installs hooks of its own replaces them, and loses this check). */
static _Thread_local int jw_nomem;

static void *jw_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        jw_nomem = 1;
    return p;
}

__attribute__((constructor)) static void jw_hooks(void)
{
    cJSON_Hooks h = {jw_malloc, free};
    cJSON_InitHooks(&h);
}

cJSON *igi_jw_object(void)
{
    jw_nomem = 0;
    return cJSON_CreateObject();
}

void igi_jw_bytes(cJSON *o, const char *key, const uint8_t *p, size_t n)
{
    if (ig_utf8_valid(p, n, NULL) && !memchr(p, 0, n)) {
        /* cJSON copies up to the NUL: p[n] may be any byte, so copy first */
        char *s = jw_malloc(n + 1);
        if (!s)
            return;
        memcpy(s, p, n);
        s[n] = '\0';
        cJSON_AddStringToObject(o, key, s);
        free(s);
        return;
    }
    char *hex = jw_malloc(2 * n + 1), k[64];
    if (!hex)
        return;
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[i] >> 4];
        hex[2 * i + 1] = digits[p[i] & 15];
    }
    hex[2 * n] = '\0';
    snprintf(k, sizeof k, "%s_hex", key);
    cJSON_AddStringToObject(o, k, hex);
    free(hex);
}

void igi_jw_u64(cJSON *o, const char *key, uint64_t v)
{
    /* cJSON keeps numbers as doubles and prints those of 16 digits or more with an exponent
     * (7.09469633746664e+15), rounded past 2^53; such a value (a seed, say) is written as its
     * exact digits instead, so that giving it back reproduces the answer (JSON sets integers no
     * bound; a reader keeping 64-bit signed ones, as the server does, refuses one past 2^63 − 1
     * by name rather than take another) */
    if (v < 1000000000000000u) {
        cJSON_AddNumberToObject(o, key, (double)v);
        return;
    }
    char digits[24];
    snprintf(digits, sizeof digits, "%" PRIu64, v);
    (void)igi_jw_put(o, key, cJSON_CreateRaw(digits));
}

void igi_jw_u64_list(cJSON *o, const igi_jw_u64_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++)
        igi_jw_u64(o, kv[i].key, kv[i].v);
}

void igi_jw_num_list(cJSON *o, const igi_jw_num_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_AddNumberToObject(o, kv[i].key, kv[i].v);
}

int igi_jw_put(cJSON *o, const char *key, cJSON *item)
{
    if (item && o && (key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item)))
        return 0;
    cJSON_Delete(item); /* a member that cannot be added is not left behind either */
    jw_nomem = 1;
    return -1;
}

cJSON *igi_jw_item(cJSON *arr)
{
    cJSON *x = cJSON_CreateObject();
    return igi_jw_put(arr, NULL, x) ? NULL : x;
}

cJSON *igi_jw_location(cJSON *arr, const ig_index *idx, const ig_location *loc)
{
    cJSON *p = igi_jw_location_object(idx, loc);
    return igi_jw_put(arr, NULL, p) ? NULL : p;
}

cJSON *igi_jw_location_object(const ig_index *idx, const ig_location *loc)
{
    cJSON *p = cJSON_CreateObject();
    if (!p) {
        jw_nomem = 1;
        return NULL;
    }
    igi_jw_doc(p, idx, loc->doc, loc->name);
    if (ig_index_token_width(idx)) { /* tokens have no lines: the token offset places them */
        igi_jw_u64(p, "token_offset", loc->offset);
        return p;
    }
    igi_jw_u64(p, "offset", loc->offset);
    igi_jw_u64(p, "line", loc->line);
    igi_jw_u64(p, "column", loc->column);
    if (loc->source_line)
        igi_jw_u64(p, "source_line", loc->source_line);
    return p;
}

void igi_jw_doc(cJSON *o, const ig_index *idx, uint64_t doc, const char *name)
{
    const char *member = ig_index_member(idx, doc);
    if (member)
        cJSON_AddStringToObject(o, "member", member);
    igi_jw_u64(o, "doc", doc);
    cJSON_AddStringToObject(o, "name", name ? name : "");
}

cJSON *igi_jw_result(const ig_op_ctx *ctx)
{
    cJSON *j = igi_jw_object();
    cJSON_AddStringToObject(j, "dataset", ctx && ctx->dataset ? ctx->dataset : "");
    return j;
}

char *igi_jw_members(cJSON *o)
{
    char *s = o && !jw_nomem ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s || jw_nomem) { /* a member was lost: no document rather than a wrong one */
        cJSON_free(s);
        return NULL;
    }
    /* cJSON writes a string's bytes as they are, and document names are any bytes */
    if (!(s = ig_utf8_repair(s)))
        return NULL;
    size_t n = strlen(s);
    /* "{...}" → "..." */
    if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
        memmove(s, s + 1, n - 2);
        s[n - 2] = '\0';
    }
    return s;
}

void igi_jw_symbol(cJSON *o, const uint8_t *b, int len)
{
    char hex[16] = "";
    for (int i = 0; i < len && i < 4; i++)
        snprintf(hex + 2 * i, sizeof hex - 2 * (size_t)i, "%02x", b[i]);
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

void igi_jw_pattern(cJSON *o, const ig_index *idx, const char *key, const uint8_t *p, size_t n)
{
    uint32_t tw = ig_index_token_width(idx);
    if (!tw) {
        igi_jw_bytes(o, key, p, n);
        return;
    }
    cJSON *ids = cJSON_CreateArray();
    for (size_t i = 0; ids && i + tw <= n; i += tw)
        igi_jw_put(ids, NULL, cJSON_CreateNumber((double)ig_token_at(p + i, tw)));
    char kid[64];
    snprintf(kid, sizeof kid, "%s_ids", key);
    igi_jw_put(o, kid, ids);
    char *text = NULL;
    size_t len = 0;
    if (ig_tokens_text(idx, p, n, "<end>", &text, &len, NULL))
        jw_nomem = 1;
    else
        igi_jw_bytes(o, key, (const uint8_t *)text, len);
    free(text);
}

void igi_jw_token(cJSON *o, const ig_index *idx, const uint8_t *b, int len)
{
    uint32_t id = ig_token_at(b, (uint32_t)len);
    char text[256];
    igi_jw_u64(o, "token_id", id);
    ig_token_text(idx, id, text, sizeof text);
    if (ig_utf8_valid((const uint8_t *)text, strlen(text), NULL))
        cJSON_AddStringToObject(o, "token", text);
    else
        cJSON_AddNullToObject(o, "token");
}

void igi_jw_unit(cJSON *o, const ig_index *idx, const uint8_t *b, int len)
{
    if (ig_index_token_width(idx))
        igi_jw_token(o, idx, b, len);
    else
        igi_jw_symbol(o, b, len);
}

void igi_jw_candidate(cJSON *o, const ig_index *idx, const ig_symbol *s)
{
    igi_jw_unit(o, idx, s->bytes, s->len);
    igi_jw_u64(o, "count", s->count);
    cJSON_AddNumberToObject(o, "prob", s->prob);
}
