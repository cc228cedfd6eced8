/*
 * doc: a document of the index by id or unique name, whole or sliced by lines or by a
 * byte range that never cuts a character.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/query.h"
#include "infinigram/tokens.h"
#include "util/util.h"
#include "op_impl.h"
#include "opjson.h"

const ig_field ig_doc_fields[] = {
    {"query", IG_FIELD_TEXT, offsetof(ig_doc_opts, query), 0, 0, "ID|NAME", NULL,
     "the document: its id, or its name (or the name's last component) when unique", NULL,
     IG_FIELD_POSITIONAL | IG_FIELD_REQUIRED | IG_FIELD_NUMBER_AS_TEXT},
    {"lines", IG_FIELD_TEXT, offsetof(ig_doc_opts, lines), 0, 0, "A:B", NULL, "only lines A to B-1 (1-based)", NULL, 0},
    {"range", IG_FIELD_TEXT, offsetof(ig_doc_opts, range), 0, 0, "A:B", NULL,
     "only bytes A to B-1 of the document's indexed text (whole characters: a boundary inside one moves to its edge)",
     NULL, 0},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0},
};

void ig_doc_defaults(ig_doc_opts *o) { memset(o, 0, sizeof *o); }

/* "A:B", either side empty; *y is UINT64_MAX when B is (or is past it: an end is clipped to
 * the document's anyway). */
static int parse_span(const ig_bytes *b, const char *field, uint64_t *x, uint64_t *y, ig_error *err)
{
    char v[64];
    if (b->n >= sizeof v || memchr(b->p, 0, b->n))
        return ig_error_set(err, IG_EUSAGE, "{%s}: expected A:B (start inclusive, end exclusive)", field);
    memcpy(v, b->p, b->n);
    v[b->n] = '\0';
    const char *colon = strchr(v, ':');
    char *e1 = NULL, *e2 = NULL;
    int ok = colon != NULL;
    *x = 0;
    *y = UINT64_MAX;
    if (ok && colon > v) {
        errno = 0;
        *x = strtoull(v, &e1, 10);
        ok = e1 == colon && v[0] >= '0' && v[0] <= '9';
        if (ok && errno == ERANGE) /* not clamped to 2^64 - 1, which would be quoted back */
            return ig_error_set(err, IG_EUSAGE, "{%s}: the start %.*s is past the end of any document", field,
                                (int)(colon - v), v);
    }
    if (ok && colon[1]) {
        *y = strtoull(colon + 1, &e2, 10);
        ok = !*e2 && colon[1] >= '0' && colon[1] <= '9';
    }
    if (!ok)
        return ig_error_set(err, IG_EUSAGE, "{%s}: expected A:B (start inclusive, end exclusive)", field);
    if (*x > *y)
        return ig_error_set(err, IG_EUSAGE, "{%s}: the start %" PRIu64 " is after the end %" PRIu64, field, *x, *y);
    return 0;
}

int ig_doc_find_name(const ig_index *idx, const uint8_t *name, size_t n, uint64_t *first, uint64_t *count,
                     ig_error *err)
{
    ig_index_info info;
    ig_index_get_info(idx, &info);
    *first = UINT64_MAX;
    *count = 0;
    if (memchr(name, 0, n))
        return ig_error_set(err, IG_ENOTFOUND, "{query}: no document named so (the name has a NUL byte)");
    for (uint64_t i = 0; i < info.documents; i++) {
        ig_doc d;
        int rc = ig_doc_get(idx, i, &d, err);
        if (rc)
            return rc;
        const char *base = strrchr(d.name, '/');
        size_t dn = strlen(d.name), bn = base ? strlen(base + 1) : 0;
        if ((dn == n && !memcmp(d.name, name, n)) || (base && bn == n && !memcmp(base + 1, name, n))) {
            if (!*count)
                *first = i;
            (*count)++;
        }
    }
    return 0;
}

int ig_doc_name_pick(const uint8_t *name, size_t n, uint64_t first, uint64_t count, uint64_t *id, ig_error *err)
{
    if (!count)
        return ig_error_set(err, IG_ENOTFOUND, "{query}: no document named \"%.*s\"", (int)n, (const char *)name);
    if (count > 1)
        return ig_error_set(err, IG_EUSAGE,
                            "{query}: %" PRIu64 " documents are named \"%.*s\" (the first is doc %" PRIu64 "): give an id",
                            count, (int)n, (const char *)name, first);
    *id = first;
    return 0;
}

/* By name: the whole name or its last component, which must be unique. */
static int find_by_name(const ig_index *idx, const ig_bytes *q, uint64_t *id, ig_error *err)
{
    uint64_t first, count;
    const uint8_t *name = q->p ? q->p : (const uint8_t *)"";
    int rc = ig_doc_find_name(idx, name, q->n, &first, &count, err);
    return rc ? rc : ig_doc_name_pick(name, q->n, first, count, id, err);
}

int ig_doc_query_id(const ig_bytes *q, int *numeric, uint64_t *id, ig_error *err)
{
    const char *w = q->p ? (const char *)q->p : "";
    *numeric = q->n > 0 && q->n <= 20;
    for (size_t i = 0; *numeric && i < q->n; i++)
        *numeric = w[i] >= '0' && w[i] <= '9';
    if (!*numeric)
        return 0;
    char digits[24], *end;
    memcpy(digits, w, q->n);
    digits[q->n] = '\0';
    errno = 0;
    *id = strtoull(digits, &end, 10);
    if (errno == ERANGE) /* not clamped: no index has that many documents */
        return ig_error_set(err, IG_ENOTFOUND, "{query}: no document %s", digits);
    return 0;
}

static int doc_compute(const ig_op_ctx *ctx, const ig_doc_opts *o, ig_doc_result *r, ig_error *err)
{
    if (igi_op_need_index(ctx, err))
        return IG_EUSAGE;
    if (o->lines.p && o->range.p)
        return ig_error_set(err, IG_EUSAGE, "{range}: give {lines} or {range}, not both");
    uint64_t id = 0;
    int numeric, rc = ig_doc_query_id(&o->query, &numeric, &id, err);
    if (rc) {
        ig_index_info info;
        ig_index_get_info(ctx->idx, &info);
        char msg[IG_ERRMSG_MAX], ids[64];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return ig_error_set(err, rc, "%s (%s)", msg, ig_doc_ids(info.documents, ids, sizeof ids));
    }
    if (!numeric && (rc = find_by_name(ctx->idx, &o->query, &id, err)))
        return rc;
    if ((rc = ig_doc_get(ctx->idx, id, &r->doc, err))) {
        char msg[IG_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return ig_error_set(err, IG_ENOTFOUND, "{query}: %s", msg);
    }
    uint64_t a0 = 0, a1, first_line = 1, x, y;
    size_t len = (size_t)r->doc.length;
    const uint8_t *t = ig_text(ctx->idx, r->doc.shard, r->doc.start, &len);
    if (!t)
        return ig_error_set(err, IG_ECORRUPT, "document %" PRIu64 " is outside its shard's text", id);
    ig_index_info info;
    ig_index_get_info(ctx->idx, &info);
    uint32_t tw = ig_index_token_width(ctx->idx);
    if (tw) { /* the tokens shown through the vocabulary; a {range} counts tokens */
        uint64_t ntok = len / tw, t0 = 0, t1 = ntok;
        if (o->range.p) {
            if ((rc = parse_span(&o->range, "range", &x, &y, err)))
                return rc;
            if (x > ntok)
                return ig_error_set(err, IG_EUSAGE, "{range}: %" PRIu64 " is past the end of the document (%" PRIu64
                                    " tokens)", x, ntok);
            t0 = x;
            t1 = y < ntok ? y : ntok;
        }
        size_t olen = 0;
        char *shown = NULL;
        if ((rc = ig_tokens_text(ctx->idx, t + t0 * tw, (size_t)(t1 - t0) * tw, "<end>", &shown, &olen, err)))
            return rc;
        r->owned = (uint8_t *)shown;
        r->tokens = ntok;
        if (o->range.p) {
            r->text = r->owned;
            r->len = olen;
            r->offset = t0;
            r->first_line = 1;
            return 0;
        }
        t = r->owned;
        len = olen;
    } else if (info.casefold) { /* the original document, whose offsets and lines the options mean */
        size_t olen = 0;
        if ((rc = ig_text_original(ctx->idx, r->doc.shard, r->doc.start, len, &r->owned, &olen, NULL, err)))
            return rc;
        t = r->owned;
        len = olen;
        r->doc.length = olen;
    }
    a1 = len;
    if (o->range.p) {
        if ((rc = parse_span(&o->range, "range", &x, &y, err)))
            return rc;
        if (x > len)
            return ig_error_set(err, IG_EUSAGE, "{range}: %" PRIu64 " is past the end of the document (%zu bytes)", x,
                                len);
        a0 = x;
        a1 = y < len ? y : len;
        while (a0 < a1 && (t[a0] & 0xC0) == 0x80)
            a0++; /* never start inside a character */
        while (a1 > a0 && a1 < len && (t[a1] & 0xC0) == 0x80)
            a1--; /* nor end inside one */
        while (a0 == a1 && a0 < len && (t[a0] & 0xC0) == 0x80)
            a1 = ++a0; /* a range inside one character: nothing, at the next character's edge */
        for (uint64_t i = 0; i < a0; i++) {
            if (ig_cancelled(ctx->cancel))
                return ig_error_set(err, IG_ECANCELLED, "cancelled");
            first_line += t[i] == '\n';
        }
    } else if (o->lines.p) {
        if ((rc = parse_span(&o->lines, "lines", &x, &y, err)))
            return rc;
        if (x == 0 && o->lines.p[0] != ':')
            return ig_error_set(err, IG_EUSAGE, "{lines}: lines are numbered from 1");
        if (x == 0) /* ":B": from the first line, as "A:" runs to the last */
            x = 1;
        uint64_t line = 1, i = 0;
        while (i < len && line < x)
            line += t[i++] == '\n';
        /* the empty "line" after a final newline is no line: a file of 5 lines ending "\n" has 5 */
        uint64_t have = i == len && len > 0 && t[len - 1] == '\n' ? line - 1 : line;
        if (line < x || (len > 0 && x > have))
            return ig_error_set(err, IG_EUSAGE, "{lines}: the document has only %" PRIu64 " line%s", have,
                                have == 1 ? "" : "s");
        a0 = i;
        first_line = x;
        while (i < len && line < y)
            line += t[i++] == '\n';
        a1 = i;
    }
    r->text = t + a0;
    r->offset = a0;
    r->len = (size_t)(a1 - a0);
    r->first_line = first_line;
    return 0;
}

/* The result's memory; ig_doc_result_free (IG_DEFINE_OP) is this, NULL-safe, and zeroes it after. */
static void doc_release(ig_doc_result *r)
{
    free(r->owned);
}

char *ig_doc_json(const ig_op_ctx *ctx, const ig_doc_opts *o, const ig_doc_result *r)
{
    (void)o;
    cJSON *j = igi_jw_object();
    igi_jw_doc(j, ctx->idx, r->doc.id, r->doc.name);
    if (r->doc.source_line) /* line or record N of its source */
        igi_jw_u64(j, "source_line", r->doc.source_line);
    if (ig_index_token_width(ctx->idx)) {
        igi_jw_u64(j, "tokens", r->tokens);
        const char *meta;
        size_t mlen;
        int mr = ig_doc_metadata(ctx->idx, r->doc.id, &meta, &mlen);
        if (!mr)
            igi_jw_bytes(j, "metadata", (const uint8_t *)meta, mlen);
        else if (mr == IG_ECORRUPT) /* a record too long to read: there, but not shown */
            cJSON_AddNullToObject(j, "metadata");
    } else
        igi_jw_u64(j, "bytes", r->doc.length);
    igi_jw_u64(j, "first_line", r->first_line);
    igi_jw_u64(j, "offset", r->offset);
    igi_jw_bytes(j, "text", r->text, r->len);
    return igi_jw_members(j);
}

IG_DEFINE_OP(doc, ig_doc_opts, ig_doc_result);
