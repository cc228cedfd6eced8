/*
 * The JSON codec: request bodies are parsed strictly (jansson: strings are counted
 * bytes, so "\u0000" is a NUL byte of the query; invalid escapes, lone surrogates,
 * invalid UTF-8, duplicate keys and nesting past jansson's depth limit are rejected) and
 * each member is set through the operation's field table, the same table the shell's
 * argument codec reads. Every error names the key as the client wrote it.
 *
 * Numbers are decoded as doubles (JSON numbers are doubles to most clients); an integer
 * field takes an integral value of magnitude at most 2^53, which it then holds exactly.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* The key whose value holds byte `pos` of the body: the last "key": before it. Used to
 * name the field when the body itself does not parse. */
static int key_before(const char *p, size_t n, size_t pos, char *out, size_t outlen)
{
    if (pos > n)
        pos = n;
    for (size_t i = pos; i-- > 0;) {
        if (p[i] != ':')
            continue;
        size_t j = i;
        while (j > 0 && isspace((unsigned char)p[j - 1]))
            j--;
        if (j == 0 || p[j - 1] != '"')
            continue;
        size_t end = --j;
        while (j > 0 && !(p[j - 1] == '"' && (j < 2 || p[j - 2] != '\\')))
            j--;
        if (j == 0 || end - j >= outlen || end - j > 64)
            continue;
        memcpy(out, p + j, end - j);
        out[end - j] = '\0';
        size_t bad;
        return ig_utf8_valid((const uint8_t *)out, end - j, &bad) && !strchr(out, '\\');
    }
    return 0;
}

/* Whether byte pos of a JSON text falls in an object's key, inside it or after it before its
 * ':' (where jansson reports a key it refuses): the key before pos is then another member's. */
static int in_key(const char *p, size_t n, size_t pos)
{
    unsigned char stack[IG_JSON_MAX_DEPTH + 1];
    size_t depth = 0;
    int expect_key = 0, in_str = 0, str_key = 0, after_key = 0;
    for (size_t i = 0; i < pos && i < n; i++) {
        char c = p[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0, after_key = str_key;
            continue;
        }
        int obj = depth && stack[depth - 1] == '{';
        switch (c) {
        case '"': in_str = 1, str_key = obj && expect_key, expect_key = 0; break;
        case '{':
        case '[':
            if (depth <= IG_JSON_MAX_DEPTH)
                stack[depth++] = (unsigned char)c;
            expect_key = c == '{', after_key = 0;
            break;
        case '}':
        case ']': depth -= depth > 0; break;
        case ',': expect_key = obj, after_key = 0; break;
        case ':': after_key = 0; break;
        }
    }
    return (in_str && str_key) || after_key;
}

/* The key jansson's "duplicate object key near '\"KEY\"'" names, when it can be quoted as it
 * is (at most 64 bytes of UTF-8, no escapes). */
static int repeated_key(const char *text, char *out, size_t outlen)
{
    const char *near = strstr(text, "near '\""), *end = near ? strstr(near + 7, "\"'") : NULL;
    if (!end)
        return 0;
    near += 7;
    size_t len = (size_t)(end - near);
    if (len >= outlen || len > 64 || memchr(near, '\\', len) || !ig_utf8_valid((const uint8_t *)near, len, NULL))
        return 0;
    memcpy(out, near, len);
    out[len] = '\0';
    return 1;
}

json_t *srv_parse_body(const char *p, size_t n, ig_error *err)
{
    json_error_t je;
    int why;
    /* integers stay exact (a seed past 2^53 means what it says); one past 2^63 cannot be held
     * as one, so the body is read again with every number a double, for the field's range
     * check to refuse it by name */
    json_t *v = ig_json_parse(p, n, 0, &je, &why);
    if (!v && why == IG_JSON_BAD && json_error_code(&je) == json_error_numeric_overflow)
        v = ig_json_parse(p, n, JSON_DECODE_INT_AS_REAL, &je, &why);
    if (v)
        return v;
    if (why == IG_JSON_DEEP) {
        ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: nested more than %d deep (byte %d)",
                     IG_JSON_MAX_DEPTH, je.position);
        return NULL;
    }
    if (why == IG_JSON_NOMEM) {
        ig_error_set(err, IG_ENOMEM, "out of memory parsing the request body");
        return NULL;
    }
    char key[80];
    if (json_error_code(&je) == json_error_duplicate_key) {
        /* jansson names the repeated key itself; the key before the position is another */
        if (repeated_key(je.text, key, sizeof key))
            ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: \"%s\": given twice (byte %d)", key,
                         je.position);
        else
            ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: %s (byte %d)", je.text, je.position);
    } else if (in_key(p, n, (size_t)je.position)) {
        ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: in a key: %s (byte %d)", je.text, je.position);
    } else if (key_before(p, n, (size_t)je.position, key, sizeof key))
        ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: \"%s\": %s (byte %d)", key, je.text,
                     je.position);
    else
        ig_error_set(err, IG_EINVAL, "the request body is not valid JSON: %s (byte %d)", je.text, je.position);
    return NULL;
}

static int wrong_type(const char *key, const ig_field *f, json_t *v, ig_error *err)
{
    static const char *const names[] = {"an object", "an array", "a string", "an integer", "a number",
                                        "true", "false", "null"};
    int t = json_typeof(v);
    return ig_error_set(err, IG_EUSAGE, "\"%s\": expected %s, not %s", key, ig_field_type_name(f),
                        t >= 0 && t < 8 ? names[t] : "this value");
}

static int prefixed(const char *key, int rc, ig_error *err)
{
    if (!rc || !err)
        return rc;
    char msg[IG_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    ig_error_set(err, rc, "\"%s\": %s", key, msg);
    return rc;
}

int srv_set_field(const ig_field *f, void *opts, const char *key, json_t *v, ig_error *err)
{
    switch (f->type) {
    case IG_FIELD_BOOL:
        if (!json_is_boolean(v))
            return wrong_type(key, f, v, err);
        return prefixed(key, ig_field_set_bool(f, opts, json_is_true(v), err), err);
    case IG_FIELD_INT:
    case IG_FIELD_UINT:
    case IG_FIELD_DOUBLE:
    case IG_FIELD_SIZE:
        if (f->type == IG_FIELD_SIZE && json_is_string(v)) /* "4G", as the shell and the help spell sizes */
            return prefixed(key, ig_field_set_text(f, opts, (const uint8_t *)json_string_value(v), json_string_length(v), err),
                            err);
        if (!json_is_number(v))
            return wrong_type(key, f, v, err);
        if (json_is_integer(v) && f->type != IG_FIELD_DOUBLE) /* exact to 2^63, where a double stops at 2^53 */
            return prefixed(key, ig_field_set_int(f, opts, (long long)json_integer_value(v), err), err);
        return prefixed(key, ig_field_set_number(f, opts, json_number_value(v), err), err);
    case IG_FIELD_ENUM:
    case IG_FIELD_TEXT:
        if ((f->flags & IG_FIELD_JSON) && (json_is_array(v) || json_is_object(v))) {
            /* JSON given as JSON: the operation parses its text (strings keep their NULs) */
            char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (!t)
                return ig_error_set(err, IG_EINTERNAL, "\"%s\": out of memory", key);
            int rc = ig_field_set_text(f, opts, (const uint8_t *)t, strlen(t), err);
            free(t);
            return prefixed(key, rc, err);
        }
        if ((f->flags & IG_FIELD_NUMBER_AS_TEXT) && json_is_number(v)) {
            double d = json_number_value(v);
            char num[32];
            if (!(d >= 0 && d <= 9007199254740992.0 && d == (double)(uint64_t)d))
                return ig_error_set(err, IG_EUSAGE, "\"%s\": %.17g is not a valid id", key, d);
            snprintf(num, sizeof num, "%llu", (unsigned long long)d);
            return prefixed(key, ig_field_set_text(f, opts, (const uint8_t *)num, strlen(num), err), err);
        }
        if (!json_is_string(v))
            return wrong_type(key, f, v, err);
        return prefixed(key, ig_field_set_text(f, opts, (const uint8_t *)json_string_value(v), json_string_length(v), err),
                        err);
    case IG_FIELD_TEXTS:
        if (json_is_string(v))
            return prefixed(
                key, ig_field_set_text(f, opts, (const uint8_t *)json_string_value(v), json_string_length(v), err), err);
        if (json_is_array(v)) {
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) {
                char k[96];
                snprintf(k, sizeof k, "%s[%zu]", key, i);
                if (!json_is_string(x))
                    return wrong_type(k, f, x, err);
                int rc = ig_field_set_text(f, opts, (const uint8_t *)json_string_value(x), json_string_length(x), err);
                if (rc)
                    return prefixed(k, rc, err);
            }
            return 0;
        }
        return wrong_type(key, f, v, err);
    }
    return ig_error_set(err, IG_EINTERNAL, "\"%s\": field of unknown type", key);
}

static int listed(const char *const *list, const char *key)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], key))
            return 1;
    return 0;
}

int srv_fill_opts(const ig_field *fields, void *opts, json_t *req, const char *const *skip, const char *const *alias,
                  ig_error *err)
{
    if (!json_is_object(req))
        return ig_error_set(err, IG_EUSAGE, "a query must be a JSON object");
    const char *key;
    json_t *v;
    uint64_t given = 0;
    json_object_foreach(req, key, v) {
        if (listed(skip, key))
            continue;
        const char *name = key;
        for (size_t i = 0; alias && alias[i]; i += 2)
            if (!strcmp(alias[i], key))
                name = alias[i + 1];
        const ig_field *f = ig_field_find(fields, name, strlen(name));
        if (!f || strcmp(f->name, name) || (f->flags & IG_FIELD_SHELL))
            return ig_error_set(err, IG_EUSAGE, "unknown field \"%s\"", key);
        if (json_is_null(v))
            continue; /* null: the default, as OpenAI clients send for unset options */
        uint64_t bit = (uint64_t)1 << (f - fields);
        if (given & bit)
            return ig_error_set(err, IG_EUSAGE, "\"%s\": given twice (as \"%s\" and an alias)", key, f->name);
        given |= bit;
        int rc = srv_set_field(f, opts, key, v, err);
        if (rc)
            return rc;
    }
    for (const ig_field *f = fields; f->name; f++)
        if (!(f->flags & IG_FIELD_SHELL) && ig_field_missing(fields, f, given))
            return ig_error_set(err, IG_EUSAGE, "\"%s\" is required", f->name);
    return 0;
}

void srv_apply_settings(const srv_config *cfg, const ig_field *fields, void *opts)
{
    ig_error e;
    for (const char *const *kv = cfg->settings; kv && kv[0]; kv += 2) {
        const ig_field *f = ig_field_find(fields, kv[0], strlen(kv[0]));
        if (f && strcmp(kv[1], "none") && !(f->flags & IG_FIELD_POSITIONAL))
            (void)ig_field_set_text(f, opts, (const uint8_t *)kv[1], strlen(kv[1]), &e); /* checked by :set */
    }
}
