/* parts: see parts.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "infinigram/infinigram.h"
#include "parts.h"
#include "cluster.h"
#include "command.h"

int need_catalog(ig_error *e)
{
    if (g.cat)
        return 0;
    return ig_error_set(e, g.cat_err.code ? g.cat_err.code : IG_EIO, "home %s: %s", g.home, g.cat_err.msg);
}

void do_add(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    uint32_t n = wire_get_u32(q), format = 0;
    ig_source *src = calloc(n ? n : 1, sizeof *src);
    char **paths = calloc(n ? n : 1, sizeof *paths);
    int rc = 0;
    if (!src || !paths || q->bad)
        rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < n; i++) {
        if (!(paths[i] = wire_get_str(q)))
            rc = ig_error_set(&e, IG_ENOMEM, "out of memory");
        src[i].kind = IG_SOURCE_FILE;
        src[i].path = paths[i];
    }
    format = wire_get_u32(q);
    char *field = wire_get_str(q);
    if (!rc && (q->bad || !field))
        rc = ig_error_set(&e, IG_EINTERNAL, "garbled request");
    if (!rc)
        rc = need_catalog(&e);
    if (!rc) {
        ig_ingest_options o;
        ig_ingest_options_default(&o);
        o.format = (ig_format)format;
        if (*field)
            o.field = field;
        rc = ig_catalog_add(g.cat, name, src, n, &o, NULL, &e);
    }
    reply_status(w, rc, &e);
    for (uint32_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(src);
    free(field);
    free(name);
}

void do_load(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    uint64_t sum = 0;
    ig_dataset d;
    memset(&d, 0, sizeof d);
    ig_index_close(&g.idx);
    free(g.dataset);
    g.dataset = NULL;
    int rc = !name ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : need_catalog(&e);
    if (!rc)
        rc = ig_catalog_get(g.cat, name, &d, &e);
    if (!rc)
        rc = ig_catalog_open_index(g.cat, name, &g.idx, NULL, &e);
    if (!rc)
        rc = ig_index_checksum(d.index_path, &sum, &e);
    ig_index_info info = {0};
    if (!rc) {
        ig_index_get_info(g.idx, &info);
        g.dataset = name;
        name = NULL;
    } else {
        ig_index_close(&g.idx);
    }
    reply_status(w, rc, &e);
    wire_str(w, d.index_path);
    wire_u64(w, info.documents);
    wire_u64(w, sum);
    if (d.name)
        ig_dataset_free(&d);
    free(name);
}

static void put_bytes_opt(wire *w, const char *p)
{
    wire_u32(w, p != NULL);
    wire_str(w, p);
}

void put_occ(wire *w, const ig_occurrence *oc)
{
    wire_u64(w, oc->loc.doc);
    wire_str(w, oc->loc.name);
    wire_u64(w, oc->loc.source_line);
    wire_u64(w, oc->loc.offset);
    wire_u64(w, oc->loc.line);
    wire_u64(w, oc->loc.column);
    put_bytes_opt(w, oc->snippet);
    wire_u64(w, oc->hl0);
    wire_u64(w, oc->hl1);
    wire_u64(w, oc->length);
}

void get_occ(wire_rd *rd, uint64_t base, ig_occurrence *oc)
{
    memset(oc, 0, sizeof *oc);
    oc->loc.doc = base + wire_get_u64(rd);
    oc->loc.name = wire_get_str(rd);
    oc->loc.source_line = wire_get_u64(rd);
    oc->loc.offset = wire_get_u64(rd);
    oc->loc.line = wire_get_u64(rd);
    oc->loc.column = wire_get_u64(rd);
    int has = (int)wire_get_u32(rd);
    char *snip = wire_get_str(rd);
    oc->hl0 = (size_t)wire_get_u64(rd);
    oc->hl1 = (size_t)wire_get_u64(rd);
    oc->length = wire_get_u64(rd);
    if (has)
        oc->snippet = snip;
    else
        free(snip);
}

int cmd_add(const words *ws, double t0)
{
    const char *cmd = "dataset add";
    static const ig_option opts[] = {{"format", "text|lines|jsonl", NULL}, {"field", "F", NULL}, {NULL, NULL, NULL}};
    ig_line l;
    if (read_own(cmd, ws, opts, &l, t0)) {
        ig_line_free(&l);
        return -1;
    }
    const char *fmt = own_value(&l, "format"), *field = own_value(&l, "field");
    uint32_t format = 0;
    if (fmt && !strcmp(fmt, "lines"))
        format = IG_FORMAT_LINES;
    else if (fmt && !strcmp(fmt, "jsonl"))
        format = IG_FORMAT_JSONL;
    int rc = fmt && format == 0 && strcmp(fmt, "text") ? fail(cmd, IG_EUSAGE, t0, "--format takes text, lines or jsonl")
             : l.nargs < 3 ? fail(cmd, IG_EUSAGE, t0, "usage: :dataset add NAME SOURCE... [--format text|lines|jsonl] [--field F]")
                           : 0;
    wire q = {0};
    wire_u32(&q, OP_ADD);
    wire_str(&q, rc ? "" : l.args[1].text);
    wire_u32(&q, rc ? 0 : (uint32_t)(l.nargs - 2));
    char resolved[4096];
    for (size_t i = 2; !rc && i < l.nargs; i++) {
        char *path = NULL;
        ig_error e;
        if (ig_word_path(&l.args[i], &path, &e)) {
            rc = fail(cmd, e.code, t0, "%s", e.msg);
            break;
        }
        /* every rank must read the same files: an absolute path, whatever each rank's cwd */
        wire_str(&q, realpath(path, resolved) ? resolved : path);
        free(path);
    }
    if (rc) {
        wire_free(&q);
        ig_line_free(&l);
        return -1;
    }
    wire_u32(&q, format);
    wire_str(&q, field ? field : "");
    ig_line_free(&l);
    REPLIES(rep, nrep);
    rc = ask_all_or_fail(cmd, t0, &q, rep, nrep);
    if (!rc)
        emit(cmd, "\"dataset\":\"\"", t0);
    free_replies(rep);
    return rc;
}

int parts_whole(const char *name, uint64_t *bytes, uint64_t *documents, uint64_t *shards, uint64_t *parts)
{
    char key[128], *text = NULL;
    ig_error e;
    if (!g.cat || snprintf(key, sizeof key, "cluster.%s", name) >= (int)sizeof key ||
        ig_catalog_setting_get(g.cat, key, &text, &e) || !text)
        return 0;
    cJSON *rec = cJSON_Parse(text);
    free(text);
    cJSON *np = cJSON_GetObjectItemCaseSensitive(rec, "parts"), *ranks = cJSON_GetObjectItemCaseSensitive(rec, "ranks");
    int ok = cJSON_IsNumber(np) && cJSON_IsArray(ranks) && cJSON_GetArraySize(ranks) == (int)np->valuedouble;
    uint64_t sum[3] = {0};
    static const char *const field[3] = {"bytes", "documents", "shards"};
    for (int r = 0; ok && r < cJSON_GetArraySize(ranks); r++)
        for (int k = 0; ok && k < 3; k++) {
            cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ranks, r), field[k]);
            if (!(ok = cJSON_IsNumber(v) && v->valuedouble >= 0))
                break;
            sum[k] += (uint64_t)v->valuedouble;
        }
    if (ok) {
        *bytes = sum[0];
        *documents = sum[1];
        *shards = sum[2];
        *parts = (uint64_t)np->valuedouble;
    }
    cJSON_Delete(rec);
    return ok;
}

int cmd_load(const char *name, int quiet, double t0)
{
    const char *cmd = "load";
    char key[128], *text = NULL;
    ig_error e;
    snprintf(key, sizeof key, "cluster.%s", name);
    if (!g.cat)
        return fail(cmd, g.cat_err.code, t0, "rank 0 (host %s): home %s: %s", host_of(0), g.home, g.cat_err.msg);
    if (ig_catalog_setting_get(g.cat, key, &text, &e))
        return fail_error(cmd, &e, t0);
    if (!text)
        return fail(cmd, IG_ENOTFOUND, t0,
                    "%s is not a dataset of this cluster: build it with infinigram-mpi (build %s)", name, name);
    cJSON *rec = cJSON_Parse(text);
    free(text);
    cJSON *parts = cJSON_GetObjectItemCaseSensitive(rec, "parts"), *ranks = cJSON_GetObjectItemCaseSensitive(rec, "ranks");
    if (!cJSON_IsNumber(parts) || !cJSON_IsArray(ranks) || cJSON_GetArraySize(ranks) != (int)parts->valuedouble) {
        cJSON_Delete(rec);
        return fail(cmd, IG_ECORRUPT, t0, "rank 0's record of %s's parts is unreadable: rebuild %s", name, name);
    }
    if ((int)parts->valuedouble != g.size) {
        int n = (int)parts->valuedouble;
        cJSON_Delete(rec);
        return fail(cmd, IG_EUSAGE, t0, "%s was built over %d ranks and this job has %d: run it with -np %d (or rebuild)",
                    name, n, g.size, n);
    }
    /* refused above, the loaded dataset stays loaded (as in the shell); from here the ranks
     * replace their parts, and a failure leaves none loaded */
    g.loaded = 0;
    wire q = {0};
    wire_u32(&q, OP_LOAD);
    wire_str(&q, name);
    REPLIES(rep, nrep);
    round_trip(&q, 0, g.size, g.timeout, rep, nrep);
    wire_free(&q);
    int rc = 0;
    uint64_t *docs = calloc((size_t)g.size, sizeof *docs);
    if (!docs)
        rc = fail(cmd, IG_ENOMEM, t0, "out of memory");
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = {rep[r], nrep[r], 0, 0};
        int st;
        char *msg;
        reply_ok(&rd, &st, &msg);
        char *path = wire_get_str(&rd);
        docs[r] = wire_get_u64(&rd);
        uint64_t sum = wire_get_u64(&rd);
        cJSON *o = cJSON_GetArrayItem(ranks, r);
        cJSON *want = cJSON_GetObjectItemCaseSensitive(o, "checksum"), *ip = cJSON_GetObjectItemCaseSensitive(o, "index");
        const char *recorded = cJSON_IsString(ip) ? ip->valuestring : "?";
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, sum);
        if (st)
            rc = fail(cmd, st, t0, "rank %d (host %s), part %s: %s", r, host_of(r), recorded, msg ? msg : "garbled reply");
        else if (!path || strcmp(path, recorded) || !cJSON_IsString(want) || strcmp(want->valuestring, hex))
            rc = fail(cmd, IG_ECORRUPT, t0,
                      "rank %d (host %s): its part %s is not the one recorded at the cluster build (%s): rebuild %s with "
                      "infinigram-mpi",
                      r, host_of(r), path ? path : "?", recorded, name);
        free(msg);
        free(path);
    }
    cJSON_Delete(rec);
    free_replies(rep);
    if (rc) {
        free(docs);
        return rc;
    }
    free(g.docs);
    g.docs = docs;
    g.loaded = 1;
    char *cur = strdup(name);
    if (cur) {
        free(g.current);
        g.current = cur;
    }
    if (quiet)
        return 0;
    uint64_t total = 0;
    for (int r = 0; r < g.size; r++)
        total += docs[r];
    char members[256];
    snprintf(members, sizeof members, "\"dataset\":\"%s\",\"parts\":%d,\"documents\":%" PRIu64, name, g.size, total);
    emit(cmd, members, t0);
    return 0;
}
