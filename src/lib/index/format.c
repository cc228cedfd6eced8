/*
 * Manifest reading and writing. The manifest is JSON so that a person (or a script)
 * can inspect an index with any tool; it is small, so it is read whole at open.
 */
#include "format.h"

#include <cjson/cJSON.h>
#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include "infinigram/version.h"
#include "fold.h"
#include "../util/util.h"

const char *const igi_shard_file_names[IG_NFILES] = {"text", "sa", "docs", "docmeta", "names", "prefix", "sample", "lines", "fold", "lcp"};

uint64_t igi_shard_file_expected(const ig_manifest *m, const ig_shard_meta *s, int file)
{
    switch (file) {
    case IG_F_TEXT: return s->bytes;
    case IG_F_SA: return s->bytes * m->pointer_width;
    case IG_F_DOCS: return (s->documents + 1) * 8;
    case IG_F_DOCMETA: return s->documents * 16;
    case IG_F_PREFIX: return s->files[IG_F_PREFIX].size ? (uint64_t)(IG_PREFIX_KEYS + 1) * (m->pointer_width == 4 ? 4 : 8) : 0;
    case IG_F_SAMPLE:
        return s->files[IG_F_SAMPLE].size ? ig_sample_bytes(s->bytes, m->sample_stride) : 0;
    case IG_F_LINES: return s->files[IG_F_LINES].size ? ig_lines_bytes(s->bytes) : 0;
    case IG_F_LCP: return s->files[IG_F_LCP].size ? ig_lcp_bytes(s->bytes, m->sample_stride) : 0;
    case IG_F_FOLD: {
        /* the bitmap, then whole exception records: any other size cannot be right */
        uint64_t sz = s->files[IG_F_FOLD].size, bm = ig_fold_bitmap_bytes(s->bytes);
        return !sz ? 0 : sz >= bm && (sz - bm) % IG_FOLD_REC == 0 ? sz : bm;
    }
    default: return s->files[IG_F_NAMES].size;
    }
}

/* JSON numbers are doubles: exact up to 2^53, far above any byte count we can hold. */
static int add_u64(cJSON *o, const char *k, uint64_t v)
{
    return cJSON_AddNumberToObject(o, k, (double)v) ? 0 : -1;
}

int igi_manifest_write(const char *dir, const ig_manifest *m, ig_error *err)
{
    int rc = IG_EINTERNAL;
    char *text = NULL, *path = NULL;
    cJSON *root = cJSON_CreateObject(), *shards = NULL;
    if (!root)
        goto oom;
    if (!cJSON_AddStringToObject(root, "magic", IG_MAGIC) ||
        add_u64(root, "format_version", IG_INDEX_FORMAT_VERSION) ||
        add_u64(root, "bytes", m->bytes) || add_u64(root, "documents", m->documents) ||
        add_u64(root, "pointer_width", m->pointer_width) ||
        !cJSON_AddStringToObject(root, "sa_api", m->wide_api ? "64" : "32") ||
        !cJSON_AddStringToObject(root, "normalization", m->normalized ? "NFC" : "none") ||
        (m->sample_stride && add_u64(root, "sample_stride", m->sample_stride)) ||
        (m->casefold && !cJSON_AddTrueToObject(root, "casefold")))
        goto oom;
    if (m->build_json) {
        cJSON *b = cJSON_Parse(m->build_json);
        if (!b || !cJSON_AddItemToObject(root, "build", b)) {
            cJSON_Delete(b);
            goto oom;
        }
    }
    if (!(shards = cJSON_AddArrayToObject(root, "shards")))
        goto oom;
    for (uint32_t i = 0; i < m->nshards; i++) {
        const ig_shard_meta *s = &m->shards[i];
        cJSON *o = cJSON_CreateObject(), *files;
        if (o && !cJSON_AddItemToArray(shards, o)) {
            cJSON_Delete(o);
            goto oom;
        }
        if (!o || !cJSON_AddStringToObject(o, "dir", s->dir) ||
            add_u64(o, "bytes", s->bytes) || add_u64(o, "documents", s->documents) ||
            add_u64(o, "doc_base", s->doc_base) || !(files = cJSON_AddObjectToObject(o, "files")))
            goto oom;
        for (int f = 0; f < IG_NFILES; f++) {
            if (ig_shard_file_optional(f) && !s->files[f].size)
                continue;
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, s->files[f].checksum);
            cJSON *fo = cJSON_AddObjectToObject(files, igi_shard_file_names[f]);
            if (!fo || add_u64(fo, "size", s->files[f].size) ||
                !cJSON_AddStringToObject(fo, "checksum", hex))
                goto oom;
        }
    }
    /* the manifest's own checksum, last: edits to the fields no file checksum covers
     * (normalization, casefold, sample_stride, …) are refused at open */
    char hex[17];
    char *compact = cJSON_PrintUnformatted(root);
    if (!compact)
        goto oom;
    snprintf(hex, sizeof hex, "%016" PRIx64, igi_hash_bytes(compact, strlen(compact)));
    free(compact);
    if (!cJSON_AddStringToObject(root, IG_MANIFEST_SUM_KEY, hex))
        goto oom;
    if (!(text = cJSON_Print(root)) || !(path = igi_path_join(dir, IG_MANIFEST_NAME)))
        goto oom;
    size_t len = strlen(text);
    text[len] = '\n'; /* replace NUL: the file ends with a newline, no NUL */
    rc = igi_write_file_sync(path, text, len + 1, err);
    goto out;
oom:
    rc = ig_error_set(err, IG_ENOMEM, "%s: out of memory writing manifest", dir);
out:
    cJSON_Delete(root);
    free(text);
    free(path);
    return rc;
}

static int get_u64(const cJSON *o, const char *k, uint64_t *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 9007199254740992.0 ||
        it->valuedouble != (double)(uint64_t)it->valuedouble)
        return -1;
    *v = (uint64_t)it->valuedouble;
    return 0;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* A manifest written since it carries its own checksum (the hash of its compact form without
 * that member) must still match it; one without the member (older builds) is taken as it is. */
static int manifest_sum_check(cJSON *root, const char *path, ig_error *err)
{
    cJSON *sum = cJSON_DetachItemFromObjectCaseSensitive(root, IG_MANIFEST_SUM_KEY);
    if (!sum)
        return 0;
    int rc = 0;
    char *compact = cJSON_PrintUnformatted(root), *end = NULL;
    const char *hex = cJSON_IsString(sum) ? sum->valuestring : NULL;
    uint64_t want = hex && strlen(hex) == 16 ? strtoull(hex, &end, 16) : 0;
    if (!compact)
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    else if (!hex || strlen(hex) != 16 || *end)
        rc = ig_error_set(err, IG_ECORRUPT, "%s: invalid %s (index corrupt)", path, IG_MANIFEST_SUM_KEY);
    else if (igi_hash_bytes(compact, strlen(compact)) != want)
        rc = ig_error_set(err, IG_ECORRUPT,
                          "%s: edited after the index was built (its fields no longer match its %s); rebuild the "
                          "dataset",
                          path, IG_MANIFEST_SUM_KEY);
    free(compact);
    cJSON_Delete(sum);
    return rc;
}

int igi_manifest_read(const char *dir, ig_manifest *m, ig_error *err)
{
    memset(m, 0, sizeof *m);
    char *path = igi_path_join(dir, IG_MANIFEST_NAME), *text = NULL;
    cJSON *root = NULL;
    int rc;
    if (!path)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    if ((rc = igi_read_file(path, IGI_DESCRIPTOR_MAX, &text, NULL, err))) {
        struct stat st;
        if (rc == IG_ENOTFOUND && stat(dir, &st) != 0) /* no directory at all: nothing to call corrupt */
            rc = igi_error_errno(err, errno, dir, "no index directory");
        else if (rc == IG_ENOTFOUND)
            rc = ig_error_set(err, IG_ECORRUPT, "%s: missing: not an index directory", path);
        goto out;
    }
    root = cJSON_Parse(text);
    rc = IG_ECORRUPT;
    if (!root) {
        /* cJSON says NULL for bad text and for a failed allocation alike: a strict parse of
         * the same text tells them apart */
        json_error_t je;
        json_t *j = json_loads(text, 0, &je);
        int oom = j || json_error_code(&je) == json_error_out_of_memory;
        json_decref(j);
        if (oom) {
            rc = ig_error_set(err, IG_ENOMEM, "%s: out of memory reading the manifest", path);
            goto out;
        }
    }
    if (!root || !cJSON_IsObject(root)) {
        ig_error_set(err, rc, "%s: not valid JSON (index corrupt)", path);
        goto out;
    }
    const char *magic = get_str(root, "magic");
    if (!magic || strcmp(magic, IG_MAGIC)) {
        ig_error_set(err, rc, "%s: bad magic (not an infinigram index)", path);
        goto out;
    }
    uint64_t v, pw;
    if (get_u64(root, "format_version", &v)) {
        ig_error_set(err, rc, "%s: format_version missing", path);
        goto out;
    }
    if (v != IG_INDEX_FORMAT_VERSION) {
        ig_error_set(err, rc, "%s: index format version %" PRIu64 " is not supported (this program reads %d); rebuild the dataset",
                     path, v, IG_INDEX_FORMAT_VERSION);
        goto out;
    }
    m->format_version = (uint32_t)v;
    if ((rc = manifest_sum_check(root, path, err)))
        goto out;
    rc = IG_ECORRUPT;
    const char *api = get_str(root, "sa_api"), *norm = get_str(root, "normalization");
    const cJSON *shards = cJSON_GetObjectItemCaseSensitive(root, "shards");
    /* the first field that is missing or out of its range, named */
    const char *bad = get_u64(root, "bytes", &m->bytes)                        ? "bytes (a whole number up to 2^53)"
                      : get_u64(root, "documents", &m->documents)              ? "documents (a whole number up to 2^53)"
                      : get_u64(root, "pointer_width", &pw) || (pw != 4 && pw != 5) ? "pointer_width (4 or 5)"
                      : !api || (strcmp(api, "32") && strcmp(api, "64"))         ? "sa_api (\"32\" or \"64\")"
                      : !norm || (strcmp(norm, "NFC") && strcmp(norm, "none"))   ? "normalization (\"NFC\" or \"none\")"
                      : !cJSON_IsArray(shards) || cJSON_GetArraySize(shards) < 1 ? "shards (a list of at least one)"
                                                                                 : NULL;
    if (bad) {
        ig_error_set(err, rc, "%s: field %s missing or invalid (index corrupt)", path, bad);
        goto out;
    }
    m->pointer_width = (uint32_t)pw;
    uint64_t stride = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "sample_stride") &&
        (get_u64(root, "sample_stride", &stride) || stride == 0 || stride > (1u << 30))) {
        ig_error_set(err, rc, "%s: invalid sample_stride (index corrupt)", path);
        goto out;
    }
    m->sample_stride = (uint32_t)stride;
    m->wide_api = !strcmp(api, "64");
    m->normalized = !strcmp(norm, "NFC");
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(root, "casefold");
    if (cf && !cJSON_IsBool(cf)) {
        ig_error_set(err, rc, "%s: invalid casefold (index corrupt)", path);
        goto out;
    }
    m->casefold = cJSON_IsTrue(cf);
    const cJSON *build = cJSON_GetObjectItemCaseSensitive(root, "build");
    if (build && !(m->build_json = cJSON_PrintUnformatted(build))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    m->nshards = (uint32_t)cJSON_GetArraySize(shards);
    if (!(m->shards = calloc(m->nshards, sizeof *m->shards))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    uint64_t bytes = 0, docs = 0;
    for (uint32_t i = 0; i < m->nshards; i++) {
        const cJSON *o = cJSON_GetArrayItem(shards, (int)i);
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
        ig_shard_meta *s = &m->shards[i];
        const char *d = get_str(o, "dir");
        const char *sbad =
            !d || strlen(d) >= sizeof s->dir || strchr(d, '/') || d[0] == '.' ? "dir (a folder name inside the index)"
            : get_u64(o, "bytes", &s->bytes)                                  ? "bytes (a whole number)"
            : get_u64(o, "documents", &s->documents) || s->documents == 0     ? "documents (a whole number, at least 1)"
            : s->bytes < s->documents                                        ? "bytes (fewer than its documents)"
            : get_u64(o, "doc_base", &s->doc_base) || s->doc_base != docs     ? "doc_base (the documents of the shards before)"
            : !cJSON_IsObject(files)                                         ? "files (an object)"
                                                                             : NULL;
        if (sbad) {
            ig_error_set(err, rc, "%s: shard %u: field %s missing or invalid (index corrupt)", path, i, sbad);
            goto out;
        }
        strcpy(s->dir, d);
        for (int f = 0; f < IG_NFILES; f++) {
            const cJSON *fo = cJSON_GetObjectItemCaseSensitive(files, igi_shard_file_names[f]);
            if (ig_shard_file_optional(f) && !fo)
                continue;
            const char *hex = get_str(fo, "checksum");
            char *end = NULL;
            if (get_u64(fo, "size", &s->files[f].size) || !hex || strlen(hex) != 16 ||
                (s->files[f].checksum = strtoull(hex, &end, 16), *end)) {
                ig_error_set(err, rc, "%s: shard %u file %s: invalid entry (index corrupt)", path, i,
                             igi_shard_file_names[f]);
                goto out;
            }
        }
        if (!s->files[IG_F_FOLD].size != !m->casefold) {
            ig_error_set(err, rc, "%s: shard %u: %s (index corrupt)", path, i,
                         m->casefold ? "no fold file in a case-folded index" : "a fold file in an index that is not case-folded");
            goto out;
        }
        bytes += s->bytes;
        docs += s->documents;
    }
    if (bytes != m->bytes || docs != m->documents) {
        ig_error_set(err, rc, "%s: shard totals do not add up (index corrupt)", path);
        goto out;
    }
    rc = 0;
out:
    if (rc)
        igi_manifest_free(m);
    cJSON_Delete(root);
    free(text);
    free(path);
    return rc;
}

void igi_manifest_free(ig_manifest *m)
{
    free(m->shards);
    free(m->build_json);
    memset(m, 0, sizeof *m);
}
