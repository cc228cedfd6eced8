/*
 * Index construction. Documents stream from ingestion into the current shard's buffers;
 * a shard is closed when the next document would push it past the target size (a
 * document never crosses shards; one larger than the target gets a shard of its own).
 * Closing a shard sorts it with libdivsufsort and writes its five files, checksumming
 * the bytes as they are written and fsyncing each file and the directory, so that when
 * ig_build_index returns 0 the whole index is durable. Any failure removes the
 * directory: an index directory either is complete or does not exist for long.
 */
#include "infinigram/build.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "sort.h"
#include "../text/ingest.h"
#include "../util/util.h"

#define GiB (1024ull * 1024 * 1024)
#define PROGRESS_STEP (1u << 20)

void ig_build_options_default(ig_build_options *o)
{
    memset(o, 0, sizeof *o);
    o->shard_size = GiB;
    o->jobs = 1;
}

void ig_build_result_free(ig_build_result *r)
{
    if (!r)
        return;
    ig_skipped_free(r->skipped, r->nskipped);
    memset(r, 0, sizeof *r);
}

typedef struct builder {
    const char *dir;
    const ig_build_options *bo;
    ig_manifest man;
    uint32_t cap_shards;
    /* current shard */
    ig_buf text, docs, docmeta, names;
    uint64_t ndocs;
    const char *last_name;     ///< name of the previous document (to share its entry)
    uint64_t last_name_off;
    /* progress */
    ig_progress_fn progress;
    void *user;
    const volatile sig_atomic_t *cancel;
    ig_progress pr;
    uint64_t reported;
    uint64_t base_done;        ///< source bytes of files already finished
} builder;

static int report(builder *b, ig_build_phase phase, ig_error *err)
{
    b->pr.phase = phase;
    if ((b->cancel && *b->cancel) || (b->progress && b->progress(b->user, &b->pr)))
        return ig_error_set(err, IG_ECANCELLED, "build cancelled");
    return 0;
}

/* Called while a shard sorts: keeps the progress display alive and polls cancel. */
static int sort_tick(void *user)
{
    builder *b = user;
    ig_error e;
    return report(b, IG_PHASE_SORT, &e) != 0;
}

static void le64(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

/* Writes one shard file from memory, checksumming what is written, then fsyncs it. */
static int write_file(const char *sdir, int which, const void *data, size_t n,
                      ig_file_meta *meta, ig_error *err)
{
    char *path = ig_path_join(sdir, ig_shard_file_names[which]);
    if (!path)
        return ig_error_set(err, IG_EINTERNAL, "out of memory");
    int rc = ig_write_file_sync(path, data, n, err);
    if (!rc) {
        meta->size = n;
        meta->checksum = ig_hash_bytes(data, n);
    }
    free(path);
    return rc;
}

/* The suffix array is written through a small buffer when pointers must be repacked
 * (5-byte pointers, or 4-byte pointers from the 64-bit sorter). */
static int write_sa(const char *sdir, const void *sa, int wide, uint32_t pw, uint64_t n,
                    ig_file_meta *meta, ig_error *err)
{
    if (!wide && pw == 4 && htole32(1) == 1)
        return write_file(sdir, IG_F_SA, sa, n * 4, meta, err);
    char *path = ig_path_join(sdir, ig_shard_file_names[IG_F_SA]);
    if (!path)
        return ig_error_set(err, IG_EINTERNAL, "out of memory");
    int rc = 0, fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = ig_error_errno(err, errno, path, "cannot create");
        free(path);
        return rc;
    }
    enum { CHUNK = 1 << 16 };
    uint8_t *buf = malloc((size_t)CHUNK * pw);
    ig_hash h;
    ig_hash_init(&h);
    if (!buf)
        rc = ig_error_set(err, IG_EINTERNAL, "out of memory");
    for (uint64_t i = 0; !rc && i < n; i += CHUNK) {
        uint64_t k = n - i < CHUNK ? n - i : CHUNK;
        uint8_t *q = buf;
        for (uint64_t j = 0; j < k; j++) {
            uint64_t v = wide ? (uint64_t)((const int64_t *)sa)[i + j] : (uint32_t)((const int32_t *)sa)[i + j];
            for (uint32_t b = 0; b < pw; b++)
                *q++ = (uint8_t)(v >> (8 * b));
        }
        ig_hash_update(&h, buf, (size_t)(q - buf));
        rc = ig_write_all(fd, buf, (size_t)(q - buf), path, err);
    }
    if (!rc && fsync(fd) != 0)
        rc = ig_error_errno(err, errno, path, "fsync failed");
    if (close(fd) != 0 && !rc)
        rc = ig_error_errno(err, errno, path, "close failed");
    if (!rc) {
        meta->size = n * pw;
        meta->checksum = ig_hash_final(&h);
    }
    free(buf);
    free(path);
    return rc;
}

/* The prefix table comes from counting two-byte keys in one sequential pass over the
 * text (suffixes are sorted by their first bytes, so the running sums are the first
 * rows of each key) — no random access into the suffix array. */
static int write_prefix(const char *sdir, const uint8_t *t, uint64_t n, uint32_t pw, ig_file_meta *meta,
                        ig_error *err)
{
    uint64_t *cnt = calloc(IG_PREFIX_KEYS + 1, sizeof *cnt);
    size_t esz = pw == 4 ? 4 : 8;
    uint8_t *out = malloc((size_t)(IG_PREFIX_KEYS + 1) * esz);
    int rc = 0;
    if (!cnt || !out) {
        rc = ig_error_set(err, IG_EINTERNAL, "out of memory");
        goto out;
    }
    for (uint64_t i = 0; i + 1 < n; i++)
        cnt[t[i] * 257u + t[i + 1] + 1]++;
    cnt[t[n - 1] * 257u]++; /* the last suffix is one byte long */
    uint64_t sum = 0;
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++) {
        uint64_t v = sum;
        if (k < IG_PREFIX_KEYS)
            sum += cnt[k];
        for (size_t j = 0; j < esz; j++)
            out[(size_t)k * esz + j] = (uint8_t)(v >> (8 * j));
    }
    rc = write_file(sdir, IG_F_PREFIX, out, (size_t)(IG_PREFIX_KEYS + 1) * esz, meta, err);
out:
    free(cnt);
    free(out);
    return rc;
}

static int close_shard(builder *b, ig_error *err)
{
    if (b->ndocs == 0)
        return 0;
    if (b->man.nshards == b->cap_shards) {
        uint32_t cap = b->cap_shards ? b->cap_shards * 2 : 4;
        ig_shard_meta *p = realloc(b->man.shards, cap * sizeof *p);
        if (!p)
            return ig_error_set(err, IG_EINTERNAL, "out of memory");
        b->man.shards = p;
        b->cap_shards = cap;
    }
    ig_shard_meta *s = &b->man.shards[b->man.nshards];
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "shard-%04u", b->man.nshards);
    s->bytes = b->text.len;
    s->documents = b->ndocs;
    s->doc_base = b->man.documents;
    b->pr.shard = b->man.nshards;
    b->pr.path = NULL;

    uint8_t end[8];
    le64(end, b->text.len);
    int rc = ig_buf_append(&b->docs, end, 8);
    if (rc)
        return ig_error_set(err, IG_EINTERNAL, "out of memory");

    char *sdir = ig_path_join(b->dir, s->dir);
    void *sa = NULL;
    size_t sa_bytes = 0;
    if (!sdir)
        return ig_error_set(err, IG_EINTERNAL, "out of memory");
    if (mkdir(sdir, 0755) != 0) {
        rc = ig_error_errno(err, errno, sdir, "cannot create directory");
        goto out;
    }
    if ((rc = report(b, IG_PHASE_SORT, err)))
        goto out;
    /* Per shard: the 32-bit sorter below 2 GiB (half the memory), 64-bit above. */
    int wide = b->bo->force_wide || b->text.len >= INT32_MAX;
    if (wide)
        b->man.wide_api = 1;
    if (b->man.pointer_width == 4 && b->text.len > UINT32_MAX) {
        rc = ig_error_set(err, IG_EINVAL, "shard of %zu bytes needs 5-byte pointers: use a shard size of 4 GiB or more",
                          b->text.len);
        goto out;
    }
    rc = ig_sort_cancellable(b->text.data, b->text.len, wide, sort_tick, b, &sa, &sa_bytes, err);
    if (rc || (rc = report(b, IG_PHASE_WRITE, err)))
        goto out;
    if ((rc = write_file(sdir, IG_F_TEXT, b->text.data, b->text.len, &s->files[IG_F_TEXT], err)) ||
        (rc = write_sa(sdir, sa, wide, b->man.pointer_width, b->text.len, &s->files[IG_F_SA], err)) ||
        (rc = write_file(sdir, IG_F_DOCS, b->docs.data, b->docs.len, &s->files[IG_F_DOCS], err)) ||
        (rc = write_file(sdir, IG_F_DOCMETA, b->docmeta.data, b->docmeta.len, &s->files[IG_F_DOCMETA], err)) ||
        (rc = write_file(sdir, IG_F_NAMES, b->names.data, b->names.len, &s->files[IG_F_NAMES], err)))
        goto out;
    if (b->text.len >= (b->bo->prefix_min ? b->bo->prefix_min : IG_PREFIX_MIN_BYTES) &&
        (rc = write_prefix(sdir, b->text.data, b->text.len, b->man.pointer_width, &s->files[IG_F_PREFIX], err)))
        goto out;
    if ((rc = report(b, IG_PHASE_SYNC, err)) || (rc = ig_fsync_dir(sdir, err)))
        goto out;
    b->man.nshards++;
    b->man.bytes += b->text.len;
    b->man.documents += b->ndocs;
    b->text.len = b->docs.len = b->docmeta.len = b->names.len = 0;
    b->ndocs = 0;
    b->last_name = NULL;
out:
    if (sa)
        munmap(sa, sa_bytes);
    free(sdir);
    return rc;
}

static int sink(void *ctx, const char *name, uint64_t source_line, const uint8_t *text,
                size_t len, ig_error *err)
{
    builder *b = ctx;
    if (b->ndocs && b->text.len + len + 1 > b->bo->shard_size) {
        int rc = close_shard(b, err);
        if (rc)
            return rc;
    }
    uint8_t rec[16];
    if (!b->last_name || strcmp(b->last_name, name)) {
        b->last_name_off = b->names.len;
        if (ig_buf_append(&b->names, name, strlen(name) + 1))
            return ig_error_set(err, IG_EINTERNAL, "out of memory");
        b->last_name = (const char *)b->names.data + b->last_name_off;
    }
    le64(rec, b->text.len);
    if (ig_buf_append(&b->docs, rec, 8))
        return ig_error_set(err, IG_EINTERNAL, "out of memory");
    le64(rec, b->last_name_off);
    le64(rec + 8, source_line);
    static const uint8_t sep = 0xFF;
    if (ig_buf_append(&b->docmeta, rec, 16) || ig_buf_append(&b->text, text, len) ||
        ig_buf_append(&b->text, &sep, 1))
        return ig_error_set(err, IG_EINTERNAL, "out of memory: document of %zu bytes", len);
    /* names may have moved with realloc: recompute the cached pointer */
    b->last_name = (const char *)b->names.data + b->last_name_off;
    b->ndocs++;
    b->pr.done = b->base_done + len;
    if (b->pr.done >= b->reported + PROGRESS_STEP) {
        b->reported = b->pr.done;
        return report(b, IG_PHASE_READ, err);
    }
    if (b->cancel && *b->cancel)
        return ig_error_set(err, IG_ECANCELLED, "build cancelled");
    return 0;
}

static int append_skips(ig_build_result *res, ig_ingest_stats *st)
{
    if (!st->nskipped)
        return 0;
    ig_skipped *p = realloc(res->skipped, (res->nskipped + st->nskipped) * sizeof *p);
    if (!p)
        return IG_EINTERNAL;
    memcpy(p + res->nskipped, st->skipped, st->nskipped * sizeof *p);
    res->skipped = p;
    res->nskipped += st->nskipped;
    free(st->skipped);
    st->skipped = NULL;
    st->nskipped = 0;
    return 0;
}

static char *build_params_json(const ig_ingest_options *in, const ig_build_options *bo, uint32_t pw)
{
    static const char *fmts[] = {"text", "lines", "jsonl"};
    return ig_aprintf("{\"shard_size\":%" PRIu64 ",\"force_wide\":%s,\"pointer_width\":%u,"
                      "\"format\":\"%s\",\"normalize\":%s,\"lossy\":%s,\"strict\":%s}",
                      bo->shard_size, bo->force_wide ? "true" : "false", pw,
                      fmts[in->format <= IG_FORMAT_JSONL ? in->format : 0],
                      in->normalize ? "true" : "false", in->lossy ? "true" : "false",
                      in->strict ? "true" : "false");
}

int ig_build_index(const char *dir, const ig_source *sources, size_t nsources,
                   const ig_ingest_options *in, const ig_build_options *bo_in,
                   ig_progress_fn progress, void *user, const volatile sig_atomic_t *cancel,
                   ig_build_result *res, ig_error *err)
{
    double t0 = ig_now_mono();
    ig_build_options bo_def;
    ig_ingest_options in_def;
    if (!bo_in) {
        ig_build_options_default(&bo_def);
        bo_in = &bo_def;
    }
    if (!in) {
        ig_ingest_options_default(&in_def);
        in = &in_def;
    }
    memset(res, 0, sizeof *res);
    if (!dir || (!sources && nsources))
        return ig_error_set(err, IG_EUSAGE, "ig_build_index: missing directory or sources");
    if (nsources == 0)
        return ig_error_set(err, IG_EINVAL, "nothing to build: the dataset has no sources");
    ig_build_options bo = *bo_in;
    if (bo.shard_size == 0)
        bo.shard_size = GiB;

    builder b = {.dir = dir, .bo = &bo, .progress = progress, .user = user, .cancel = cancel};
    b.man.format_version = 1;
    b.man.normalized = in->normalize;
    /* Shards under 4 GiB fit 4-byte pointers; a larger target (or force_wide, which
     * lets the tests exercise the wide path on small data) switches the whole index. */
    b.man.pointer_width = (bo.force_wide || bo.shard_size >= 4 * GiB) ? 5 : 4;

    ig_ingest_stats st = {0};
    ig_ingest_file *files = NULL;
    size_t nfiles = 0;
    int rc;
    if (mkdir(dir, 0755) != 0)
        return ig_error_errno(err, errno, dir, "cannot create index directory");

    /* List everything first so progress has a total. */
    b.pr.phase = IG_PHASE_SCAN;
    if ((rc = report(&b, IG_PHASE_SCAN, err)))
        goto fail;
    for (size_t i = 0; i < nsources; i++) {
        if (sources[i].kind == IG_SOURCE_INLINE) {
            b.pr.total += sources[i].text_len;
            continue;
        }
        ig_ingest_file *f = NULL;
        size_t nf = 0;
        if ((rc = ig_ingest_list(&sources[i], 1, &f, &nf, err)))
            goto fail;
        for (size_t j = 0; j < nf; j++)
            b.pr.total += f[j].size;
        ig_ingest_files_free(f, nf);
    }
    for (size_t i = 0; i < nsources; i++) {
        if (sources[i].kind == IG_SOURCE_INLINE) {
            b.pr.path = "<inline>";
            if ((rc = ig_ingest_inline(sources[i].text, sources[i].text_len, in, sink, &b, &st, err)))
                goto fail;
            b.base_done += sources[i].text_len;
            continue;
        }
        if ((rc = ig_ingest_list(&sources[i], 1, &files, &nfiles, err)))
            goto fail;
        for (size_t j = 0; j < nfiles; j++) {
            b.pr.path = files[j].path;
            if ((rc = report(&b, IG_PHASE_READ, err)) ||
                (rc = ig_ingest_file_read(&files[j], in, sink, &b, &st, cancel, err)))
                goto fail;
            b.base_done += files[j].size;
            b.pr.done = b.base_done;
        }
        ig_ingest_files_free(files, nfiles);
        files = NULL;
        nfiles = 0;
        if (append_skips(res, &st)) {
            rc = ig_error_set(err, IG_EINTERNAL, "out of memory");
            goto fail;
        }
    }
    if (b.ndocs == 0 && b.man.nshards == 0) {
        if (res->nskipped)
            rc = ig_error_set(err, IG_EINVAL, "no text to index: %zu file%s skipped, e.g. %s: %s", res->nskipped,
                              res->nskipped == 1 ? "" : "s", res->skipped[0].path, res->skipped[0].reason);
        else
            rc = ig_error_set(err, IG_EINVAL, "no text to index: every source is empty");
        goto fail;
    }
    if ((rc = close_shard(&b, err)))
        goto fail;
    if (!(b.man.build_json = build_params_json(in, &bo, b.man.pointer_width))) {
        rc = ig_error_set(err, IG_EINTERNAL, "out of memory");
        goto fail;
    }
    if ((rc = ig_manifest_write(dir, &b.man, err)) || (rc = ig_fsync_dir(dir, err)))
        goto fail;
    res->bytes = b.man.bytes;
    res->documents = b.man.documents;
    res->shards = b.man.nshards;
    res->source_bytes = st.source_bytes;
    res->replaced = st.replaced;
    res->seconds = ig_now_mono() - t0;
    b.pr.done = b.pr.total;
    rc = report(&b, IG_PHASE_DONE, err);
    if (rc)
        goto fail;
    goto out;
fail:
    {
        ig_error keep = {0};
        ig_remove_tree(dir, &keep); /* best effort: the original error matters more */
    }
    ig_build_result_free(res);
out:
    ig_ingest_files_free(files, nfiles);
    ig_ingest_stats_free(&st);
    ig_buf_free(&b.text);
    ig_buf_free(&b.docs);
    ig_buf_free(&b.docmeta);
    ig_buf_free(&b.names);
    ig_manifest_free(&b.man);
    return rc;
}
