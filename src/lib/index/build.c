/*
 * Index construction. Documents stream from ingestion into the current shard's buffers;
 * a shard is closed when the next document would push it past the target size (a
 * document never crosses shards; one larger than the target gets a shard of its own).
 * Closing a shard starts its sort with libdivsufsort and writes its text and document
 * files; the sorter writes the suffix array and sampled keys itself, and once it is only
 * writing, the next sort may start (if the memory budget has room for both). Every file is
 * checksummed as it is written and fsynced, and so is the directory, so that when
 * ig_build_index returns 0 the whole index is durable. Any failure removes the
 * directory: an index directory either is complete or does not exist for long.
 */
#include "infinigram/build.h"
#include "build_tokens.h"

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
#include "fold.h"
#include "sort.h"
#include "../text/ingest.h"
#include "../text/ngrams.h"
#include "../util/util.h"

#define GiB (1024ull * 1024 * 1024)
#define PROGRESS_STEP (1u << 20)
/* Below this, a budget cannot be honoured: the build holds buffers of about this size
 * whatever the shard size. */
#define IG_BUILD_MIN_MEMORY (1ull << 20)
/* below this, splitting a corpus for parallel sorting costs more than it saves */
#define IG_PARALLEL_MIN_SHARD (16ull << 20)
/* Parallel builds make at least two rounds of shards once each shard stays this large. The
 * first sort can start only when its shard is read and the last shard's suffix array is
 * written after the last sort, so two rounds halve both serial ends; and a core that finishes
 * early takes the next shard, which evens out shards that cost different amounts to sort
 * (the two halves of the Linux kernel differ by 37%). Measured on the kernel with 2 jobs:
 * 4 shards build in 78–82 s, 2 shards in 90–104 s. */
#define IG_TWO_ROUNDS_MIN_SHARD (128ull << 20)

void ig_build_options_default(ig_build_options *o)
{
    memset(o, 0, sizeof *o);
    o->shard_size = GiB;
    o->jobs = 0; /* one per core */
}

void ig_build_result_free(ig_build_result *r)
{
    if (!r)
        return;
    igi_skipped_free(r->skipped, r->nskipped);
    igi_decontam_report_free(r->decontam);
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
    int casefold;              ///< fold the documents (fold.h), recording what changed here
    igi_folder fold;
    /* parallel sorting */
    struct pending {
        ig_sort_job job;
        uint32_t shard;
        char *sdir;
        uint64_t cost;         ///< memory its sorter holds (sort_cost)
    } *pending;
    int npending, jobs;        ///< up to 2·jobs pending: `jobs` sorting, the others writing
    uint64_t memory;           ///< the memory budget (bytes)
    uint64_t largest;          ///< bytes of the largest shard so far
    uint64_t shard_target;     ///< close a shard when it reaches this many bytes...
    uint64_t shard_cap;        ///< ...and never let it grow past this one
    uint32_t nplanned;         ///< shards planned (balanced across jobs), 0 = as they come
    uint64_t source_total;
    /* progress */
    ig_progress_fn progress;
    void *user;
    const volatile sig_atomic_t *cancel;
    igi_decontam *decontam; ///< the eval set documents are tested against, or NULL
    ig_progress pr;
    uint64_t reported;
    uint64_t base_done;        ///< source bytes of files already finished
    /* one part of several (ig_build_options.parts) */
    uint64_t stream_total;     ///< the sources' listed size: the cut points are its multiples
    uint64_t file_base, file_size; ///< the file being read: its offset in the sources, its size
    const ig_ingest_stats *st; ///< where the ingestion says where each document starts in its file
    int part_done;             ///< the stream has passed this part: nothing more is read
} builder;

/* What the sink returns to stop reading once the stream has passed the part being built (the
 * ingestion hands it back unchanged; it is not an error). */
#define PART_DONE 1

static int report(builder *b, ig_build_phase phase, ig_error *err)
{
    b->pr.phase = phase;
    if ((b->cancel && *b->cancel) || (b->progress && b->progress(b->user, &b->pr)))
        return ig_error_set(err, IG_ECANCELLED, "build cancelled");
    return 0;
}

static void le64(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

/* The files one writer (the builder, or a sorter) puts in a shard directory, each
 * checksummed and handed to the disk as it is written, and all fsynced at the end: the
 * first fsync's journal commit then covers the others, which only wait for their own data
 * (one fsync per file cost one commit each: 4-40 ms apiece on a busy disk). */
typedef struct shard_out {
    const char *sdir;
    int precreated;                ///< the files exist already (precreate): opened, not created
    igi_out out[IG_NFILES];
    ig_hash hash[IG_NFILES];
    char *path[IG_NFILES];
    ig_file_meta *meta[IG_NFILES]; ///< where a file's size and checksum go; NULL: not opened
} shard_out;

static int so_open(shard_out *o, int which, ig_file_meta *meta, ig_error *err)
{
    if (!(o->path[which] = igi_path_join(o->sdir, igi_shard_file_names[which])))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    igi_hash_init(&o->hash[which]);
    int rc = o->precreated ? igi_out_reopen(&o->out[which], o->path[which], &o->hash[which], err)
                           : igi_out_open(&o->out[which], o->path[which], &o->hash[which], err);
    if (!rc)
        o->meta[which] = meta;
    return rc;
}

/* A whole file from memory, on its way to the disk when this returns. */
static int so_write(shard_out *o, int which, const void *data, size_t n, ig_file_meta *meta, ig_error *err)
{
    int rc = so_open(o, which, meta, err);
    if (!rc && !(rc = igi_out_put(&o->out[which], data, n, err)))
        igi_out_flush(&o->out[which]);
    return rc;
}

/* fsyncs and closes every file opened (unless rc, an earlier failure, makes that moot) and
 * records their sizes and checksums; rc or the first failure. */
static int so_close(shard_out *o, int rc, ig_error *err)
{
    for (int f = 0; f < IG_NFILES; f++) {
        if (o->meta[f]) {
            rc = igi_out_close(&o->out[f], rc, err);
            if (!rc) {
                o->meta[f]->size = o->out[f].off;
                o->meta[f]->checksum = igi_hash_final(&o->hash[f]);
            }
        }
        free(o->path[f]);
        o->path[f] = NULL;
        o->meta[f] = NULL;
    }
    return rc;
}

/* The suffix array is written through a small buffer when pointers must be repacked
 * (5-byte pointers, or 4-byte pointers from the 64-bit sorter). The sampled keys (if any)
 * go first: their data is on its way to the disk while the array is written. */
static int write_sa(const char *sdir, const void *sa, int wide, uint32_t pw, uint64_t n, const uint8_t *sample,
                    size_t sample_bytes, const uint8_t *lcp, size_t lcp_bytes, ig_sort_out *out)
{
    ig_error *err = &out->err;
    shard_out o = {.sdir = sdir, .precreated = 1};
    enum { CHUNK = 1 << 16 };
    int repack = wide || pw != 4 || htole32(1) != 1;
    uint8_t *buf = repack ? malloc((size_t)CHUNK * pw) : NULL;
    int rc = buf || !repack ? 0 : ig_error_set(err, IG_ENOMEM, "out of memory");
    if (!rc && sample)
        rc = so_write(&o, IG_F_SAMPLE, sample, sample_bytes, &out->sample, err);
    if (!rc && lcp)
        rc = so_write(&o, IG_F_LCP, lcp, lcp_bytes, &out->lcp, err);
    if (!rc && !repack)
        rc = so_write(&o, IG_F_SA, sa, n * 4, &out->sa, err);
    if (!rc && repack)
        rc = so_open(&o, IG_F_SA, &out->sa, err);
    for (uint64_t i = 0; repack && !rc && i < n; i += CHUNK) {
        uint64_t k = n - i < CHUNK ? n - i : CHUNK;
        uint8_t *q = buf;
        for (uint64_t j = 0; j < k; j++) {
            uint64_t v = wide ? (uint64_t)((const int64_t *)sa)[i + j] : (uint32_t)((const int32_t *)sa)[i + j];
            for (uint32_t b = 0; b < pw; b++)
                *q++ = (uint8_t)(v >> (8 * b));
        }
        rc = igi_out_put(&o.out[IG_F_SA], buf, (size_t)(q - buf), err);
    }
    free(buf);
    return so_close(&o, rc, err);
}

/* The prefix table (igi_prefix_fill, format.h), in the pointer width's entries. */
static int write_prefix(shard_out *o, const uint8_t *t, uint64_t n, uint32_t pw, ig_file_meta *meta,
                        ig_error *err)
{
    uint64_t *cnt = calloc(IG_PREFIX_KEYS + 1, sizeof *cnt);
    size_t esz = pw == 4 ? 4 : 8;
    uint8_t *out = malloc((size_t)(IG_PREFIX_KEYS + 1) * esz);
    int rc = 0;
    if (!cnt || !out) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto out;
    }
    igi_prefix_fill(t, n, cnt);
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++)
        for (size_t j = 0; j < esz; j++)
            out[(size_t)k * esz + j] = (uint8_t)(cnt[k] >> (8 * j));
    rc = so_write(o, IG_F_PREFIX, out, (size_t)(IG_PREFIX_KEYS + 1) * esz, meta, err);
out:
    free(cnt);
    free(out);
    return rc;
}

struct sort_ctx {
    const char *sdir;
    uint32_t pw;
};

/* Runs in the sorter (a child process or a thread) as soon as its suffix array is complete:
 * the sorter writes and fsyncs the array and the sampled keys itself, so the parent can start
 * the next sort at once and the writing overlaps the other sorts instead of delaying them. */
static int write_sorted(const ig_sort_job *job, void *ctx, ig_sort_out *out)
{
    const struct sort_ctx *c = ctx;
    return write_sa(c->sdir, job->sa, job->wide, c->pw, job->n, job->sample, job->sample_bytes, job->lcp,
                    job->lcp_bytes, out);
}

/* Records a finished shard's files (written and fsynced by its sorter). */
static int finish_shard(builder *b, struct pending *p, ig_error *err)
{
    ig_shard_meta *s = &b->man.shards[p->shard];
    s->files[IG_F_SA] = p->job.out->sa;
    if (p->job.sample_bytes)
        s->files[IG_F_SAMPLE] = p->job.out->sample;
    if (p->job.lcp_bytes)
        s->files[IG_F_LCP] = p->job.out->lcp;
    int rc = report(b, IG_PHASE_SYNC, err); /* its directory entries are durable already (sync_shard_dirs) */
    igi_sort_release(&p->job);
    free(p->sdir);
    p->sdir = NULL;
    return rc;
}

/* Memory a sorter holds for an n-byte shard: its copy of the text, the suffix array (4 or 8
 * bytes per byte), the sampled keys (8 bytes per stride rows) and the lcp file, if any. */
static uint64_t sort_cost(uint64_t n, int wide, uint32_t stride, int lcp)
{
    return n * (wide ? 9 : 5) + ig_sample_bytes(n, stride) + (lcp ? ig_lcp_bytes(n, stride) : 0);
}

/* Whether a sort costing `cost` may start: fewer than `jobs` are sorting (the others only
 * write), and a sorter still writing leaves room in the memory budget for the new one besides
 * the shard being read. */
static int sort_room(const builder *b, uint64_t cost)
{
    int sorting = 0;
    uint64_t held = 0;
    for (int i = 0; i < b->npending; i++) {
        sorting += !igi_sort_sorted(&b->pending[i].job);
        held += b->pending[i].cost;
    }
    if (sorting >= b->jobs || b->npending >= 2 * b->jobs)
        return 0;
    return b->npending < b->jobs || held + cost + b->shard_cap <= b->memory;
}

/* Records every finished sort's shard and waits until another sort costing `cost` may start
 * (all = 0) or until every sort has finished (all = 1); the progress callback keeps running
 * and may cancel. */
static int wait_sorts(builder *b, int all, uint64_t cost, ig_error *err)
{
    for (;;) {
        for (int i = 0; i < b->npending; i++) {
            int r = igi_sort_wait(&b->pending[i].job, 0, err);
            if (r < 0)
                return r;
            if (r == 0)
                continue;
            b->pr.shard = b->pending[i].shard;
            int rc = report(b, IG_PHASE_WRITE, err);
            if (!rc) {
                rc = finish_shard(b, &b->pending[i], err); /* releases the job either way */
            } else { /* cancelled: the job leaves the list, so release it here */
                igi_sort_release(&b->pending[i].job);
                free(b->pending[i].sdir);
            }
            b->pending[i] = b->pending[--b->npending];
            if (rc)
                return rc;
            i--;
        }
        if (all ? b->npending == 0 : sort_room(b, cost))
            return 0;
        /* sleep on the oldest sort's exit: a sorter that is only writing is not waited for */
        int w = 0;
        for (int i = 0; i < b->npending; i++)
            if (!igi_sort_sorted(&b->pending[i].job) || all) {
                w = i;
                break;
            }
        int r = igi_sort_wait(&b->pending[w].job, 20, err);
        if (r < 0)
            return r;
        if (r == 0 && (r = report(b, IG_PHASE_SORT, err)))
            return r;
    }
}

/* Creates (empty) the files a shard's sorter will write, so that their directory entries are
 * made durable with the others' while the sort runs: after it, the sorter's fsyncs are all
 * that stands between the suffix array and the manifest. */
static int precreate(const char *sdir, uint32_t stride, int lcp, ig_error *err)
{
    for (int f = 0; f < IG_NFILES; f++) {
        if (f != IG_F_SA && !(f == IG_F_SAMPLE && stride) && !(f == IG_F_LCP && lcp))
            continue;
        char *path = igi_path_join(sdir, igi_shard_file_names[f]);
        if (!path)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        int rc = fd < 0 ? igi_error_errno(err, errno, path, "cannot create") : 0;
        if (fd >= 0 && close(fd) != 0)
            rc = igi_error_errno(err, errno, path, "close failed");
        free(path);
        if (rc)
            return rc;
    }
    return 0;
}

/* Makes a shard's directory entries durable (its files, its own entry in the index directory
 * and, with the first shard, the index directory's entry in its parent), while the sort runs
 * or while waiting for one: none of these fsyncs is left for after the last sort. */
static int sync_shard_dirs(builder *b, const char *sdir, int first, ig_error *err)
{
    int rc = igi_fsync_dir(sdir, err);
    if (!rc)
        rc = igi_fsync_dir(b->dir, err);
    if (!rc && first)
        rc = igi_fsync_parent(b->dir, err);
    return rc;
}

/* Writes the current shard's files but the suffix array and keys (which its sorter writes). */
static int write_shard_files(builder *b, const char *sdir, ig_shard_meta *s, int tables, ig_error *err)
{
    shard_out o = {.sdir = sdir};
    int rc;
    if ((rc = report(b, IG_PHASE_WRITE, err)) ||
        (rc = so_write(&o, IG_F_TEXT, b->text.data, b->text.len, &s->files[IG_F_TEXT], err)) ||
        (rc = so_write(&o, IG_F_DOCS, b->docs.data, b->docs.len, &s->files[IG_F_DOCS], err)) ||
        (rc = so_write(&o, IG_F_DOCMETA, b->docmeta.data, b->docmeta.len, &s->files[IG_F_DOCMETA], err)) ||
        (rc = so_write(&o, IG_F_NAMES, b->names.data, b->names.len, &s->files[IG_F_NAMES], err)))
        return so_close(&o, rc, err);
    if (b->casefold) { /* the bitmap, padded to its full size, then the exception records */
        uint64_t bm = ig_fold_bitmap_bytes(b->text.len);
        if (igi_buf_reserve(&b->fold.bits, (size_t)(bm - b->fold.bits.len + b->fold.exc.len)))
            return so_close(&o, ig_error_set(err, IG_ENOMEM, "out of memory for the fold file of a %zu-byte shard",
                                             b->text.len), err);
        memset(b->fold.bits.data + b->fold.bits.len, 0, (size_t)(bm - b->fold.bits.len));
        b->fold.bits.len = (size_t)bm;
        ig_buf_append(&b->fold.bits, b->fold.exc.data, b->fold.exc.len);
        if ((rc = so_write(&o, IG_F_FOLD, b->fold.bits.data, b->fold.bits.len, &s->files[IG_F_FOLD], err)))
            return so_close(&o, rc, err);
    }
    /* the line index, so that locations never count through the text (little-endian
     * numbers: a big-endian machine leaves it out and counts in memory) */
    if (!tables ||
        (rc = write_prefix(&o, b->text.data, b->text.len, b->man.pointer_width, &s->files[IG_F_PREFIX], err)) ||
        htole64(1) != 1)
        return so_close(&o, rc, err);
    size_t lb = (size_t)ig_lines_bytes(b->text.len);
    uint64_t *l = malloc(lb);
    if (!l)
        return so_close(&o, ig_error_set(err, IG_ENOMEM, "out of memory for the line index of a %zu-byte shard",
                                         b->text.len), err);
    igi_lines_fill(b->text.data, b->text.len, l);
    rc = so_write(&o, IG_F_LINES, l, lb, &s->files[IG_F_LINES], err);
    free(l);
    return so_close(&o, rc, err);
}

/* Closes the current shard: writes every file but the suffix array now and starts its
 * sort (in a child process when sorting in parallel or when the shard is large), so the
 * next documents can be read while it sorts. */
static int close_shard(builder *b, ig_error *err)
{
    if (b->ndocs == 0)
        return 0;
    if (b->man.nshards == b->cap_shards) {
        uint32_t cap = b->cap_shards ? b->cap_shards * 2 : 4;
        ig_shard_meta *p = realloc(b->man.shards, cap * sizeof *p);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        b->man.shards = p;
        b->cap_shards = cap;
    }
    uint32_t si = b->man.nshards;
    if (b->text.len > b->largest)
        b->largest = b->text.len;
    ig_shard_meta *s = &b->man.shards[si];
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "shard-%04u", si);
    s->bytes = b->text.len;
    s->documents = b->ndocs;
    s->doc_base = b->man.documents;
    b->pr.shard = si;
    b->pr.path = NULL;

    uint8_t end[8];
    le64(end, b->text.len);
    int rc = ig_buf_append(&b->docs, end, 8);
    if (rc)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    /* Per shard: the 32-bit sorter below 2 GiB (half the memory), 64-bit above. */
    int wide = b->bo->force_wide || b->text.len >= INT32_MAX;
    if (wide)
        b->man.wide_api = 1;
    if (b->man.pointer_width == 4 && b->text.len > UINT32_MAX)
        return ig_error_set(err, IG_EINVAL, "shard of %zu bytes needs 5-byte pointers: use a shard size of 4 GiB or more",
                            b->text.len);
    char *sdir = igi_path_join(b->dir, s->dir);
    if (!sdir)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    if (mkdir(sdir, 0755) != 0) {
        rc = igi_error_errno(err, errno, sdir, "cannot create directory");
        free(sdir);
        return rc;
    }
    /* small shards get neither: their whole arrays stay in cache anyway */
    int tables = b->text.len >= (b->bo->prefix_min ? b->bo->prefix_min : IG_PREFIX_MIN_BYTES);
    /* With a sorter free, the sort starts first and the files are written while it runs (the
     * first sort of a build starts a second sooner); with all busy, they are written while
     * waiting for one. */
    uint32_t stride = tables ? b->man.sample_stride : 0;
    int lcp = stride && b->bo->lcp;
    uint64_t cost = sort_cost(b->text.len, wide, stride, lcp);
    int free_slot = sort_room(b, cost);
    if ((rc = precreate(sdir, stride, lcp, err)) ||
        (!free_slot && (rc = write_shard_files(b, sdir, s, tables, err))) ||
        (!free_slot && (rc = sync_shard_dirs(b, sdir, si == 0, err))) ||
        (!free_slot && (rc = wait_sorts(b, 0, cost, err))) || (rc = report(b, IG_PHASE_SORT, err))) {
        free(sdir);
        return rc;
    }
    struct pending *p = &b->pending[b->npending];
    ig_sorter where = b->bo->sorter == IG_SORT_IN_PROCESS    ? IG_SORTER_HERE
                      : b->text.len >= IG_SORT_FORK_MIN ? IG_SORTER_CHILD
                                                        : IG_SORTER_THREAD;
    struct sort_ctx sc = {sdir, b->man.pointer_width};
    if ((rc = igi_sort_start(b->text.data, b->text.len, wide, where, stride, lcp, write_sorted, &sc, sizeof sc, b->bo->cache,
                             &p->job, err))) {
        free(sdir);
        return rc;
    }
    p->shard = si;
    p->sdir = sdir;
    p->cost = cost;
    b->npending++;
    b->man.nshards++;
    if (free_slot &&
        ((rc = write_shard_files(b, sdir, s, tables, err)) || (rc = sync_shard_dirs(b, sdir, si == 0, err))))
        return rc; /* the pending sort is released by the caller's cleanup */
    b->man.bytes += b->text.len;
    b->man.documents += b->ndocs;
    /* the sorter has its own copy of the text: the buffers can be reused at once */
    b->text.len = b->docs.len = b->docmeta.len = b->names.len = 0;
    b->ndocs = 0;
    b->last_name = NULL;
    igi_folder_reset(&b->fold);
    if (where == IG_SORTER_HERE)
        rc = wait_sorts(b, 1, 0, err);
    return rc;
}

/* The part of the document starting at offset `at` of the sources: floor(at · parts / T),
 * T their listed size, capped at parts − 1. */
static uint64_t part_of(const builder *b, uint64_t at)
{
    uint64_t total = b->stream_total ? b->stream_total : 1;
    unsigned __int128 q = (unsigned __int128)at * b->bo->parts / total;
    return q >= b->bo->parts ? b->bo->parts - 1 : (uint64_t)q;
}

static int sink(void *ctx, const char *name, uint64_t source_line, const uint8_t *text,
                size_t len, ig_error *err)
{
    builder *b = ctx;
    if (b->bo->parts > 1) { /* the part this document falls in, by where it starts in the sources */
        uint64_t off = b->st->doc_offset, last = b->file_size ? b->file_size - 1 : 0;
        uint64_t part = part_of(b, b->file_base + (off < last ? off : last)); /* a repair may lengthen a file */
        if (part > b->bo->part) { /* parts only grow along the stream: this one is complete */
            b->part_done = 1;
            return PART_DONE;
        }
        if (part != b->bo->part)
            return b->cancel && *b->cancel ? ig_error_set(err, IG_ECANCELLED, "build cancelled") : 0;
    }
    if (b->decontam) { /* a document caught by decontamination is not indexed (unless only flagged) */
        int keep, rc = igi_decontam_doc(b->decontam, name, source_line, text, len, b->man.documents + b->ndocs, &keep,
                                        err);
        if (rc || !keep)
            return rc;
    }
    /* Balanced shards end at the first document boundary past their share of the
     * sources; no shard grows past the cap (shard size, or what --memory allows). */
    uint64_t boundary = b->nplanned && b->man.nshards + 1 < b->nplanned
                            ? b->source_total * (b->man.nshards + 1) / b->nplanned : UINT64_MAX;
    uint64_t indexed = b->man.bytes + b->text.len; /* tracks the source bytes closely */
    /* folding may lengthen a document a little (ß → ss); the cap counts its source bytes */
    if (b->ndocs && (b->text.len + len + 1 > b->shard_cap || indexed >= boundary)) {
        int rc = close_shard(b, err);
        if (rc)
            return rc;
    }
    uint8_t rec[16];
    if (!b->last_name || strcmp(b->last_name, name)) {
        b->last_name_off = b->names.len;
        if (ig_buf_append(&b->names, name, strlen(name) + 1))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        b->last_name = (const char *)b->names.data + b->last_name_off;
    }
    le64(rec, b->text.len);
    if (ig_buf_append(&b->docs, rec, 8))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    le64(rec, b->last_name_off);
    le64(rec + 8, source_line);
    static const uint8_t sep = 0xFF;
    if (ig_buf_append(&b->docmeta, rec, 16))
        return ig_error_set(err, IG_ENOMEM, "out of memory: document of %zu bytes", len);
    if (b->casefold) {
        int rc = igi_fold_append(&b->text, text, len, &b->fold, err);
        if (rc)
            return rc;
        b->fold.orig++; /* the separator */
    } else if (ig_buf_append(&b->text, text, len)) {
        return ig_error_set(err, IG_ENOMEM, "out of memory: document of %zu bytes", len);
    }
    if (ig_buf_append(&b->text, &sep, 1))
        return ig_error_set(err, IG_ENOMEM, "out of memory: document of %zu bytes", len);
    /* names may have moved with realloc: recompute the cached pointer */
    b->last_name = (const char *)b->names.data + b->last_name_off;
    b->ndocs++;
    uint64_t so_far = b->man.bytes + b->text.len;
    b->pr.done = so_far > b->base_done ? so_far : b->base_done;
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
        return IG_ENOMEM;
    memcpy(p + res->nskipped, st->skipped, st->nskipped * sizeof *p);
    res->skipped = p;
    res->nskipped += st->nskipped;
    free(st->skipped);
    st->skipped = NULL;
    st->nskipped = st->skipped_cap = 0;
    return 0;
}

static char *build_params_json(const ig_ingest_options *in, const ig_build_options *bo, uint32_t pw)
{
    static const char *fmts[] = {"text", "lines", "jsonl"};
    return igi_aprintf("{\"shard_size\":%" PRIu64 ",\"force_wide\":%s,\"pointer_width\":%u,"
                      "\"format\":\"%s\",\"normalize\":%s,\"lossy\":%s,\"strict\":%s%s}",
                      bo->shard_size, bo->force_wide ? "true" : "false", pw,
                      fmts[in->format <= IG_FORMAT_JSONL ? in->format : 0],
                      in->normalize ? "true" : "false", in->lossy ? "true" : "false",
                      in->strict ? "true" : "false", in->casefold ? ",\"casefold\":true" : "");
}

int ig_build_index(const char *dir, const ig_source *sources, size_t nsources,
                   const ig_ingest_options *in, const ig_build_options *bo_in,
                   ig_progress_fn progress, void *user, const volatile sig_atomic_t *cancel,
                   ig_build_result *res, ig_error *err)
{
    double t0 = igi_now_mono();
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
    /* options a C caller wrote by hand: the open refuses an index made with a stride past
     * 2^30, and a sorter or a source kind the build does not know would be taken for another */
    if (bo_in->sample_stride > (1u << 30))
        return ig_error_set(err, IG_EUSAGE, "sample_stride %u is over 2^30 rows", bo_in->sample_stride);
    if (bo_in->sorter != IG_SORT_PROCESSES && bo_in->sorter != IG_SORT_IN_PROCESS)
        return ig_error_set(err, IG_EUSAGE, "sorter %d is neither IG_SORT_PROCESSES nor IG_SORT_IN_PROCESS",
                            (int)bo_in->sorter);
    if (bo_in->jobs < 0)
        return ig_error_set(err, IG_EUSAGE, "jobs %d is negative (0: one per core)", bo_in->jobs);
    for (size_t i = 0; i < nsources; i++)
        if (sources[i].kind != IG_SOURCE_FILE && sources[i].kind != IG_SOURCE_INLINE)
            return ig_error_set(err, IG_EUSAGE, "source %zu: kind %d is neither IG_SOURCE_FILE nor IG_SOURCE_INLINE",
                                i + 1, (int)sources[i].kind);
    if (bo_in->parts > 1 && bo_in->part >= bo_in->parts)
        return ig_error_set(err, IG_EUSAGE, "part %u of %u does not exist (parts are numbered from 0)",
                            bo_in->part, bo_in->parts);
    if (bo_in->parts > 1 && in->decontam)
        return ig_error_set(err, IG_EUSAGE, "decontamination cannot run on one part of a dataset: it numbers the "
                            "documents it reports over the whole dataset");
    ig_build_options bo = *bo_in;
    if (bo.shard_size == 0)
        bo.shard_size = GiB;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = bo.jobs > 0 ? bo.jobs : (ncpu > 0 ? (int)ncpu : 1);
    if (jobs > 64)
        jobs = 64;
    if (in->tokens)
        return igi_build_tokens(dir, sources, nsources, in, &bo, jobs, progress, user, cancel, res, err);

    builder b = {.dir = dir, .bo = &bo, .progress = progress, .user = user, .cancel = cancel, .jobs = jobs};
    if (!(b.pending = calloc(2 * (size_t)jobs, sizeof *b.pending)))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    b.man.format_version = 1;
    b.man.normalized = in->normalize;
    b.man.casefold = b.casefold = in->casefold != 0;
    /* Shards under 4 GiB fit 4-byte pointers; a larger target (or force_wide, which
     * lets the tests exercise the wide path on small data) switches the whole index. */
    b.man.pointer_width = (bo.force_wide || bo.shard_size >= 4 * GiB) ? 5 : 4;
    b.man.sample_stride = bo.sample_stride ? bo.sample_stride : IG_SAMPLE_STRIDE;

    ig_ingest_stats st = {0};
    b.st = &st;
    ig_ingest_file *files = NULL;
    size_t nfiles = 0;
    int rc;
    if (mkdir(dir, 0755) != 0) {
        rc = errno == EEXIST ? ig_error_set(err, IG_EEXISTS, "%s: cannot create index directory: it exists", dir)
                             : igi_error_errno(err, errno, dir, "cannot create index directory");
        free(b.pending);
        return rc;
    }

    /* List everything first so progress has a total. */
    b.pr.phase = IG_PHASE_SCAN;
    if ((rc = report(&b, IG_PHASE_SCAN, err)))
        goto fail;
    if (in->decontam && (rc = igi_decontam_open(in->decontam, in->normalize, &b.decontam, err)))
        goto fail;
    for (size_t i = 0; i < nsources; i++) {
        if (sources[i].kind == IG_SOURCE_INLINE) {
            b.pr.total += sources[i].text_len;
            continue;
        }
        ig_ingest_file *f = NULL;
        size_t nf = 0;
        if ((rc = igi_ingest_list(&sources[i], 1, &f, &nf, err)))
            goto fail;
        for (size_t j = 0; j < nf; j++)
            b.pr.total += f[j].size;
        igi_ingest_files_free(f, nf);
    }
    /* Shard plan. Peak memory is about sort_cost (5 or 9 bytes per byte for the text and
     * suffix array, plus the keys and the lcp file) for each shard being sorted, plus the shard being read: the
     * cap keeps that under the memory budget. With several jobs, a corpus large enough is cut into a multiple
     * of `jobs` shards of near-equal size so that the sorts finish together. */
    {
        uint64_t mem = bo.memory;
        if (mem && mem < IG_BUILD_MIN_MEMORY) {
            rc = ig_error_set(err, IG_EUSAGE, "memory budget of %llu bytes is below the minimum of 1 MiB a build needs",
                              (unsigned long long)mem);
            goto fail;
        }
        if (!mem)
            mem = igi_phys_memory(8 * GiB) / 2;
        /* jobs · sort_cost(cap) + cap ≤ mem, in units of 1/stride byte; shards of 2 GiB or
         * more sort with 64-bit pointers */
        uint64_t st = b.man.sample_stride, cap = 0, lcp = bo.lcp ? ig_lcp_record(b.man.sample_stride) : 0;
        for (int per = bo.force_wide ? 9 : 5; per <= 9; per += 4) {
            cap = mem / ((uint64_t)jobs * ((uint64_t)per * st + 8 + lcp) + st) * st;
            if (per == 9 || (bo.shard_size < cap ? bo.shard_size : cap) < INT32_MAX)
                break;
        }
        b.memory = mem;
        b.shard_cap = bo.shard_size < cap ? bo.shard_size : cap;
        if (b.shard_cap < 1)
            b.shard_cap = 1;
        res->shard_size = b.shard_cap;
        res->memory_limited = cap < bo.shard_size && b.pr.total > cap;
        res->jobs = jobs;
        b.source_total = b.pr.total;
        b.stream_total = b.pr.total;
        if (bo.parts > 1) /* the shard plan is for this part's share */
            b.source_total = b.pr.total / bo.parts + 1;
        if (jobs > 1 && b.source_total >= (uint64_t)jobs * IG_PARALLEL_MIN_SHARD) {
            uint64_t per_round = (uint64_t)jobs * b.shard_cap;
            uint64_t rounds = (b.source_total + per_round - 1) / per_round;
            if (rounds < 2 && b.source_total >= 2 * (uint64_t)jobs * IG_TWO_ROUNDS_MIN_SHARD)
                rounds = 2;
            b.nplanned = (uint32_t)(rounds * (uint64_t)jobs);
        } else if (b.source_total > b.shard_cap) {
            b.nplanned = (uint32_t)((b.source_total + b.shard_cap - 1) / b.shard_cap);
        }
    }
    for (size_t i = 0; i < nsources && !b.part_done; i++) {
        if (sources[i].kind == IG_SOURCE_INLINE) {
            b.pr.path = "<inline>";
            b.file_base = b.base_done;
            b.file_size = sources[i].text_len;
            if ((rc = igi_ingest_inline(sources[i].text, sources[i].text_len, in, sink, &b, &st, err)) &&
                !(rc == PART_DONE && b.part_done))
                goto fail;
            b.base_done += sources[i].text_len;
            continue;
        }
        if ((rc = igi_ingest_list(&sources[i], 1, &files, &nfiles, err)))
            goto fail;
        for (size_t j = 0; j < nfiles && !b.part_done; j++) {
            b.file_base = b.base_done;
            b.file_size = files[j].size;
            if (bo.parts > 1 && part_of(&b, b.base_done + (files[j].size ? files[j].size - 1 : 0)) < bo.part) {
                b.base_done += files[j].size; /* every document here is an earlier part's: not read */
                continue;
            }
            if (bo.parts > 1 && part_of(&b, b.base_done) > bo.part) { /* and here a later part's */
                b.part_done = 1;
                break;
            }
            b.pr.path = files[j].path;
            if ((rc = report(&b, IG_PHASE_READ, err)) ||
                ((rc = igi_ingest_file_read(&files[j], in, sink, &b, &st, cancel, err)) &&
                 !(rc == PART_DONE && b.part_done)))
                goto fail;
            b.base_done += files[j].size;
            b.pr.done = b.base_done;
        }
        igi_ingest_files_free(files, nfiles);
        files = NULL;
        nfiles = 0;
        if (append_skips(res, &st)) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            goto fail;
        }
    }
    if (b.ndocs == 0 && b.man.nshards == 0) {
        ig_decontam_report *dr = b.decontam ? igi_decontam_take(b.decontam) : NULL;
        if (dr && dr->caught)
            rc = ig_error_set(err, IG_EINVAL, "no text to index: decontamination dropped every document (%llu)",
                              (unsigned long long)dr->caught);
        else if (bo.parts > 1)
            rc = ig_error_set(err, IG_EINVAL, "part %u of %u holds no document: the sources are too few or too "
                              "small to split %u ways", bo.part, bo.parts, bo.parts);
        else if (res->nskipped)
            rc = ig_error_set(err, IG_EINVAL, "no text to index: %zu file%s skipped, e.g. %s: %s", res->nskipped,
                              res->nskipped == 1 ? "" : "s", res->skipped[0].path, res->skipped[0].reason);
        else
            rc = ig_error_set(err, IG_EINVAL, "no text to index: every source is empty");
        igi_decontam_report_free(dr);
        goto fail;
    }
    if ((rc = close_shard(&b, err)) || (rc = wait_sorts(&b, 1, 0, err)))
        goto fail;
    if (!(b.man.build_json = build_params_json(in, &bo, b.man.pointer_width))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = igi_manifest_write(dir, &b.man, err)) || (rc = igi_fsync_dir(dir, err)))
        goto fail;
    res->bytes = b.man.bytes;
    res->documents = b.man.documents;
    res->jobs = jobs;
    res->shard_size = b.shard_cap;
    res->memory_limited = b.shard_cap < bo.shard_size && b.source_total > b.shard_cap;
    res->shards = b.man.nshards;
    res->largest_shard = b.largest;
    res->source_bytes = st.source_bytes;
    res->replaced = st.replaced;
    res->decontam = b.decontam ? igi_decontam_take(b.decontam) : NULL;
    res->seconds = igi_now_mono() - t0;
    b.pr.done = b.pr.total;
    rc = report(&b, IG_PHASE_DONE, err);
    if (rc)
        goto fail;
    goto out;
fail:
    for (int i = 0; i < b.npending; i++) {
        igi_sort_release(&b.pending[i].job);
        free(b.pending[i].sdir);
    }
    b.npending = 0;
    {
        ig_error keep = {0};
        igi_remove_tree(dir, &keep); /* best effort: the original error matters more */
    }
    ig_build_result_free(res);
out:
    igi_ingest_files_free(files, nfiles);
    igi_ingest_stats_free(&st);
    ig_buf_free(&b.text);
    ig_buf_free(&b.docs);
    ig_buf_free(&b.docmeta);
    ig_buf_free(&b.names);
    igi_folder_free(&b.fold);
    igi_manifest_free(&b.man);
    igi_decontam_free(b.decontam);
    free(b.pending);
    return rc;
}
