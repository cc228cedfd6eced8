/*
 * Opening an index: read the manifest, map each shard file read-only and check its size
 * against the manifest, then check each shard's tables (check.c: the small ones in full,
 * the suffix array and sampled keys by spot checks), so that open time stays interactive.
 * Checksums are verified only on demand (ig_index_verify), since that reads every byte.
 */
#include "infinigram/text.h"
#include "infinigram/query.h"
#include "index_impl.h"
#include "lcp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fold.h"
#include "../text/ingest.h"
#include "../util/util.h"

int igi_map_file(const char *path, uint64_t expect, ig_health *h, ig_map *m, ig_error *err)
{
    int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO would block the open */
    struct stat st;
    if (fd < 0)
        return errno == ENOENT ? ig_error_set(err, IG_ECORRUPT, "%s: missing (index corrupt)", path)
                               : igi_error_errno(err, errno, path, "cannot open");
    if (fstat(fd, &st) != 0) {
        rc = igi_error_errno(err, errno, path, "cannot stat");
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = ig_error_set(err, IG_ECORRUPT, "%s: not a regular file", path);
        goto out;
    }
    if (expect != UINT64_MAX && (uint64_t)st.st_size != expect) {
        rc = ig_error_set(err, IG_ECORRUPT, "%s: size %" PRIu64 " bytes, expected %" PRIu64 " (index truncated or corrupt)",
                          path, (uint64_t)st.st_size, expect);
        goto out;
    }
    m->len = (size_t)st.st_size;
    m->mtime = st.st_mtim;
    if (m->len) {
        void *a = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);
        if (a == MAP_FAILED) {
            rc = igi_error_errno(err, errno, path, "cannot map");
            goto out;
        }
        /* Queries bisect: read-ahead would fetch pages that are never used. */
        madvise(a, m->len, MADV_RANDOM);
        m->addr = a;
        igi_bus_watch(m, h, path);
    }
out:
    close(fd);
    return rc;
}

static int map_file(const char *dir, const char *sub, const char *name, uint64_t expect, ig_health *h,
                    ig_map *m, ig_error *err)
{
    char *path = igi_aprintf("%s/%s/%s", dir, sub, name);
    if (!path)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    int rc = igi_map_file(path, expect, h, m, err);
    free(path);
    return rc;
}

void igi_index_make_pool(ig_index *idx)
{
    if (idx->nshards > 1) {
        /* per-shard work of big queries runs on these; created once, at open */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int workers = (int)((uint32_t)cores < idx->nshards ? cores : (long)idx->nshards) - 1;
        idx->pool = igi_pool_create(workers > 0 ? workers : 0);
    }
}

void ig_index_close(ig_index **pidx)
{
    if (!pidx || !*pidx)
        return;
    ig_index *idx = *pidx;
    for (uint32_t i = 0; idx->shards && i < idx->nshards; i++) {
        for (int f = 0; f < IG_NFILES; f++)
            igi_map_release(&idx->shards[i].maps[f]);
        free((void *)idx->shards[i].checked);
        IGI_FREE(idx->shards[i].lcp_top, idx->shards[i].removed, idx->shards[i].docs_owned);
        free((void *)atomic_load(&idx->shards[i].mem_prefix));
        char *_Atomic *names = atomic_load(&idx->shards[i].doc_names);
        for (uint64_t d = 0; names && d < idx->shards[i].ndocs; d++)
            free(atomic_load(&names[d]));
        free((void *)names);
        if (idx->shards[i].lines_owned)
            free((void *)atomic_load(&idx->shards[i].lines));
    }
    for (uint32_t i = 0; idx->members && i < idx->nmembers; i++) {
        ig_index_close(&idx->members[i].idx); /* its shards were moved out: nothing of them is unmapped twice */
        free(idx->members[i].name);
    }
    free(idx->members);
    igi_vocab_free(idx->vocab);
    igi_hcache_free(idx->hcache);
    igi_next_table_free(idx->ntab);
    free(idx->doc_name);
    pthread_mutex_destroy(&idx->lines_mu);
    pthread_mutex_destroy(&idx->bm25_mu);
    igi_bm25_stats_free(atomic_load(&idx->bm25));
    igi_pool_destroy(&idx->pool);
    free(idx->shards);
    free(idx->health);
    igi_manifest_free(&idx->man);
    free(idx->dir);
    free(idx);
    *pidx = NULL;
}

int ig_index_open(ig_index **out, const char *dir, ig_error *err)
{
    if (!out || !dir)
        return ig_error_set(err, IG_EUSAGE, "no index handle or no directory given");
    return igi_index_open(out, dir, 1, err);
}

/* A build writes the manifest after every file it names, so a file modified later than
 * the manifest was changed behind the index's back (an edit, a restore of one file): its
 * contents may no longer be what the suffix array was sorted from, and answers would be
 * silently wrong. Such a file is checksummed before use. A copy that did not keep times
 * (cp -r) makes this happen on every open; the answers stay right, the open is slower. */
static int check_unchanged(const ig_index *idx, const ig_shard_meta *sm, int f, const ig_map *m,
                           const struct timespec *built, ig_error *err)
{
    if (!igi_time_after(&m->mtime, built) || igi_hash_bytes(m->addr ? m->addr : "", m->len) == sm->files[f].checksum)
        return 0;
    return ig_error_set(err, IG_ECORRUPT, "%s/%s/%s: modified after the index was built (its checksum no longer "
                        "matches): rebuild the dataset", idx->dir, sm->dir, igi_shard_file_names[f]);
}

int igi_index_open(ig_index **out, const char *dir, int pool, ig_error *err)
{
    *out = NULL;
    ig_index *idx = calloc(1, sizeof *idx);
    if (!idx || !(idx->dir = igi_abs_path(dir))) {
        free(idx);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&idx->lines_mu, NULL);
    pthread_mutex_init(&idx->bm25_mu, NULL);
    int rc = igi_manifest_read(idx->dir, &idx->man, err);
    if (rc)
        goto fail;
    idx->nshards = idx->npos = idx->man.nshards;
    idx->pw = idx->man.pointer_width;
    idx->prefetch = 1;
    if (!(idx->shards = calloc(idx->nshards, sizeof *idx->shards)) || !(idx->health = calloc(1, sizeof *idx->health))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    struct stat mst;
    char *mpath = igi_path_join(idx->dir, IG_MANIFEST_NAME);
    if (!mpath) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    if (stat(mpath, &mst) != 0) {
        rc = igi_error_errno(err, errno, mpath, "cannot stat");
        free(mpath);
        goto fail;
    }
    free(mpath);
    for (uint32_t i = 0; i < idx->nshards; i++) {
        const ig_shard_meta *sm = &idx->man.shards[i];
        ig_shard *s = &idx->shards[i];
        for (int f = 0; f < IG_NFILES; f++)
            if ((!ig_shard_file_optional(f) || sm->files[f].size) &&
                ((rc = map_file(idx->dir, sm->dir, igi_shard_file_names[f],
                                igi_shard_file_expected(&idx->man, sm, f), idx->health, &s->maps[f], err)) ||
                 (rc = check_unchanged(idx, sm, f, &s->maps[f], &mst.st_mtim, err))))
                goto fail;
        s->prefix = s->maps[IG_F_PREFIX].addr;
        s->sample = idx->man.sample_stride ? s->maps[IG_F_SAMPLE].addr : NULL;
        s->stride = s->sample ? idx->man.sample_stride : 0;
        s->text = s->maps[IG_F_TEXT].addr;
        s->n = s->rows = sm->bytes;
        s->pw = idx->pw;
        s->sa = s->maps[IG_F_SA].addr;
        s->docs = s->maps[IG_F_DOCS].addr;
        s->docmeta = s->maps[IG_F_DOCMETA].addr;
        s->names = s->maps[IG_F_NAMES].addr;
        s->names_len = s->maps[IG_F_NAMES].len;
        s->ndocs = sm->documents;
        s->doc_base = sm->doc_base;
        s->id = s->local = i;
        s->lines_sum = sm->files[IG_F_LINES].checksum;
        s->health = idx->health;
        if (idx->man.casefold) {
            uint64_t bm = ig_fold_bitmap_bytes(s->n);
            s->fold_bits = s->maps[IG_F_FOLD].addr;
            s->fold_exc = s->fold_bits + bm;
            s->fold_nexc = (s->maps[IG_F_FOLD].len - bm) / IG_FOLD_REC;
            s->fold_sum = sm->files[IG_F_FOLD].checksum;
        }
        uint64_t nkeys = s->sample ? ig_sample_bytes(s->n, idx->man.sample_stride) / 8 : 0;
        s->lcp = NULL;
        if (s->sample && s->maps[IG_F_LCP].addr && (rc = igi_lcp_open(s, err)))
            goto fail;
        uint64_t nbits = IG_CHECK_LCP_BIT(nkeys, s->lcp ? nkeys + ig_lcp_nblocks(s->n, s->stride) : 0);
        if (!(s->checked = calloc((size_t)(nbits + 63) / 64, sizeof *s->checked))) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = igi_index_check_shard(idx, i, err)))
            goto fail;
        if (s->lcp && !igi_lcp_spot_check(s)) { /* optional: searched without it, as an index built before it */
            s->lcp = NULL;
            free(s->lcp_top);
            s->lcp_top = NULL;
        }
    }
    if (pool)
        igi_index_make_pool(idx);
    *out = idx;
    return 0;
fail:
    ig_index_close(&idx);
    return rc;
}

/* What the manifest says of an index (all of ig_index_info comes from it). */
static void info_of_manifest(const ig_manifest *m, ig_index_info *info)
{
    *info = (ig_index_info){.bytes = m->bytes, .documents = m->documents, .shards = m->nshards,
                            .pointer_width = m->pointer_width, .wide_api = m->wide_api,
                            .normalized = m->normalized, .format_version = m->format_version, .casefold = m->casefold};
    for (uint32_t i = 0; i < m->nshards; i++) {
        info->line_index_missing += m->shards[i].files[IG_F_PREFIX].size && !m->shards[i].files[IG_F_LINES].size;
        info->lcp_missing += m->shards[i].files[IG_F_SAMPLE].size && !m->shards[i].files[IG_F_LCP].size;
    }
}

void ig_index_get_info(const ig_index *idx, ig_index_info *info)
{
    if (!info)
        return;
    if (!idx) /* no index: nothing in it */
        memset(info, 0, sizeof *info);
    else
        info_of_manifest(&idx->man, info);
}

int ig_index_read_info(const char *dir, ig_index_info *info, ig_error *err)
{
    ig_manifest m;
    memset(&m, 0, sizeof m);
    int rc = igi_manifest_read(dir, &m, err);
    if (!rc)
        info_of_manifest(&m, info);
    igi_manifest_free(&m);
    return rc;
}

const char *ig_index_dir(const ig_index *idx) { return idx->dir; }

void ig_index_set_prefetch(ig_index *idx, int on) { idx->prefetch = on != 0; }

uint64_t ig_sa_at(const ig_index *idx, uint32_t shard, uint64_t row)
{
    return ig_shard_sa(&idx->shards[shard], idx->shards[shard].pw, row);
}

uint32_t ig_index_token_width(const ig_index *idx) { return idx ? idx->tw : 0; }

/* Built indexes are replaced whole by a rebuild, which the catalog sees; an attached one's
 * files belong to its user, so only they are checked here. */
int ig_index_changed(const ig_index *idx, ig_error *err)
{
    if (!idx || !idx->tw)
        return 0;
    uint64_t fp, bytes;
    ig_error e;
    if (ig_attach_fingerprint(idx->dir, &fp, &bytes, &e))
        return ig_error_set(err, IG_ECORRUPT, "%s", e.msg);
    if (fp != idx->attach_fp)
        return ig_error_set(err, IG_ECORRUPT, "%s changed since it was attached (a file was modified or replaced): "
                            ":dataset remove it, then attach it again", idx->dir);
    return igi_vocab_changed(idx->vocab, err);
}

const uint8_t *ig_text(const ig_index *idx, uint32_t shard, uint64_t offset, size_t *len)
{
    if (shard >= idx->nshards) {
        *len = 0;
        return NULL;
    }
    const ig_shard *s = &idx->shards[shard];
    if (offset > s->n)
        offset = s->n;
    if (*len > s->n - offset)
        *len = (size_t)(s->n - offset);
    return s->text + offset;
}

uint64_t igi_shard_doc_of(const ig_shard *s, uint64_t offset)
{
    uint64_t lo = 0, hi = s->ndocs; /* invariant: start(lo) <= offset < start(hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ig_shard_doc_start(s, mid) <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t igi_shard_doc_id(const ig_shard *s, uint64_t d)
{
    if (s->neg)
        return UINT64_MAX;
    if (!s->nremoved)
        return s->doc_base + d;
    uint64_t lo = igi_lower_bound(s->removed, s->nremoved, d); /* removed ids below d: [0, lo) */
    return lo < s->nremoved && s->removed[lo] == d ? UINT64_MAX : s->doc_base + d - lo;
}

/* Local document of the k-th document of shard s that is shown (those taken away skipped):
 * the removed ids r_j satisfy r_j − j ≤ k for exactly the j that come before it. */
static uint64_t shard_doc_local(const ig_shard *s, uint64_t k)
{
    uint64_t lo = 0, hi = s->nremoved;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->removed[mid] - mid <= k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return k + lo;
}

static const char *doc_name(const ig_shard *s, uint64_t d, uint64_t *source_line)
{
    if (!s->docmeta) /* a token index */
        return igi_token_doc_name(s, d, source_line);
    uint64_t off = ig_load_le64(s->docmeta + d * 16);
    *source_line = ig_load_le64(s->docmeta + d * 16 + 8);
    return off < s->names_len ? s->names + off : "?";
}

int ig_locate_doc(const ig_index *idx, ig_pos pos, uint64_t *doc)
{
    if (pos.shard >= idx->nshards || pos.offset >= idx->shards[pos.shard].n)
        return IG_EUSAGE;
    const ig_shard *s = &idx->shards[pos.shard];
    *doc = igi_shard_doc_id(s, igi_shard_doc_of(s, pos.offset));
    return *doc == UINT64_MAX ? IG_ENOTFOUND : 0;
}

const char *ig_doc_ids(uint64_t d, char *buf, size_t n)
{
    if (d <= 1)
        snprintf(buf, n, d ? "the only id is 0" : "the index has no documents");
    else
        snprintf(buf, n, "ids are 0 to %" PRIu64, d - 1);
    return buf;
}

int ig_doc_get(const ig_index *idx, uint64_t id, ig_doc *out, ig_error *err)
{
    if (id >= idx->man.documents) {
        char ids[64];
        return ig_error_set(err, IG_ENOTFOUND, "no document %" PRIu64 " (%s)", id, ig_doc_ids(idx->man.documents, ids, sizeof ids));
    }
    uint32_t lo = 0, hi = idx->npos;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (idx->shards[mid].doc_base <= id)
            lo = mid;
        else
            hi = mid;
    }
    const ig_shard *s = &idx->shards[lo];
    uint64_t d = shard_doc_local(s, id - s->doc_base);
    out->id = id;
    out->shard = lo;
    out->start = ig_shard_doc_start(s, d);
    out->length = ig_shard_doc_start(s, d + 1) - out->start - (idx->tw ? idx->tw : 1);
    out->name = doc_name(s, d, &out->source_line);
    return 0;
}

/* ig_locate in a case-folded shard: the offset is the original one of the character holding
 * the position; lines are the same (folding keeps newlines), columns count the original
 * characters. */
/* b - a, or 0 when a stored count lies (b < a): a location is then wrong, never a wrapped
 * number (the counts are checked on first use, which cannot see every lie) */
static uint64_t gap(uint64_t b, uint64_t a) { return b > a ? b - a : 0; }

/* The start of the UTF-8 character holding byte `pos` of shard text (no earlier than `lo`): a
 * position found by a byte-level match may fall inside a character, and its column is that
 * character's, where a listing's highlight starts. */
static uint64_t char_floor(const ig_shard *s, uint64_t pos, uint64_t lo)
{
    /* back over continuation bytes to the lead, never onto an ASCII byte (a newline): a
     * stray continuation byte stands for itself */
    for (int i = 0; i < 3 && pos > lo && (s->text[pos] & 0xC0) == 0x80 && (s->text[pos - 1] & 0x80); i++)
        pos--;
    return pos;
}

static int locate_folded(const ig_index *idx, const ig_shard *s, uint64_t pos, uint64_t start, ig_location *out)
{
    /* the line and column are the holding character's; the offset the byte's own where
     * folding left its character alone, else its character's */
    uint64_t at = igi_fold_floor(s, char_floor(s, pos, start));
    pos = igi_fold_floor(s, pos);
    out->offset = igi_fold_orig(s, pos) - igi_fold_orig(s, start);
    const uint64_t *lines = igi_shard_lines(idx, s);
    uint64_t ls = start;
    if (lines) {
        out->line = 1 + gap(igi_shard_newlines_before(s, lines, at), igi_shard_newlines_before(s, lines, start));
        ls = igi_shard_line_start(s, lines, start, at);
    } else { /* out of memory for the line index: count from the document's start */
        out->line = 1;
        for (const uint8_t *p = s->text + start, *nl; (nl = memchr(p, '\n', (size_t)(s->text + at - p)));
             p = nl + 1) {
            out->line++;
            ls = (uint64_t)(nl + 1 - s->text);
        }
    }
    out->column = 1 + igi_count_chars(s->text + ls, at - ls) - igi_fold_char_delta(s, ls, at);
    return 0;
}

uint64_t ig_text_char_edge(const ig_index *idx, uint32_t shard, uint64_t offset, int up)
{
    if (shard >= idx->nshards || !idx->shards[shard].fold_bits)
        return offset;
    const ig_shard *s = &idx->shards[shard];
    return up ? igi_fold_ceil(s, offset) : igi_fold_floor(s, offset);
}

int ig_text_original(const ig_index *idx, uint32_t shard, uint64_t offset, uint64_t len, uint8_t **out,
                     size_t *outlen, uint64_t *orig, ig_error *err)
{
    const ig_shard *s = &idx->shards[shard < idx->nshards ? shard : 0];
    if (shard >= idx->nshards)
        return ig_error_set(err, IG_EUSAGE, "no shard %u (the index has %u)", shard, idx->nshards);
    if (offset > s->n)
        offset = s->n;
    if (len > s->n - offset)
        len = s->n - offset;
    ig_buf b = {.data = *out, .len = *outlen, .cap = *outlen};
    int rc;
    if (s->fold_bits) {
        uint64_t a = igi_fold_floor(s, offset), z = igi_fold_ceil(s, offset + len);
        if (orig)
            *orig = igi_fold_orig(s, a);
        rc = igi_fold_unfold(s, a, z, &b);
    } else {
        if (orig)
            *orig = offset;
        rc = ig_buf_append(&b, s->text + offset, (size_t)len);
    }
    *out = b.data;
    *outlen = b.len;
    return rc ? ig_error_set(err, IG_ENOMEM, "out of memory reading %" PRIu64 " bytes of text", len) : 0;
}

int ig_locate(const ig_index *idx, ig_pos pos, const ig_location *hint, ig_location *out,
              ig_error *err)
{
    if (pos.shard >= idx->nshards || pos.offset >= idx->shards[pos.shard].n)
        return ig_error_set(err, IG_EUSAGE, "position %u:%" PRIu64 " is outside the index", pos.shard,
                            pos.offset);
    const ig_shard *s = &idx->shards[pos.shard];
    uint64_t d = igi_shard_doc_of(s, pos.offset), start = ig_shard_doc_start(s, d);
    uint64_t from = start, line = 1, col = 0; /* col: characters of the line before `from` */
    if ((out->doc = igi_shard_doc_id(s, d)) == UINT64_MAX)
        return ig_error_set(err, IG_ENOTFOUND, "position %u:%" PRIu64 " is in a document taken away from the index",
                            pos.shard, pos.offset);
    out->name = doc_name(s, d, &out->source_line);
    out->offset = pos.offset - start;
    const uint64_t *lines = NULL;
    if (s->fold_bits)
        return locate_folded(idx, s, pos.offset, start, out);
    /* lines and columns are counted to the character holding the position (token text has
     * no characters); the offset stays the byte given */
    uint64_t at = idx->tw ? pos.offset : char_floor(s, pos.offset, start);
    if (hint && hint->doc == out->doc && hint->offset <= at - start && at - start - hint->offset < IG_LINE_BLOCK) {
        /* close behind the previous location (positions listed in order): continue from the
         * character holding it, whose column it gives */
        from = idx->tw ? start + hint->offset : char_floor(s, start + hint->offset, start);
        line = hint->line;
        col = hint->column - 1;
    } else if ((lines = igi_shard_lines(idx, s))) {
        /* the line index: two prefix counts and scans of less than a block; the column counts
         * the characters of the line up to the position */
        out->line = 1 + gap(igi_shard_newlines_before(s, lines, at), igi_shard_newlines_before(s, lines, start));
        uint64_t ls = igi_shard_line_start(s, lines, start, at);
        out->column = 1 + gap(igi_shard_chars_before(s, lines, at), igi_shard_chars_before(s, lines, ls));
        return 0;
    } /* else out of memory for the index: count from the document's start, as slowly as correctly */
    /* Newlines between `from` and the position decide the line; the column counts
     * characters after the last of them. memchr keeps this fast on long documents. */
    const uint8_t *p = s->text + from, *end = s->text + at, *last_nl = NULL;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        line++;
        last_nl = nl;
        p = nl + 1;
    }
    if (last_nl)
        col = 1 + igi_count_chars(last_nl + 1, (uint64_t)(end - last_nl - 1));
    else
        col += 1 + igi_count_chars(s->text + from, at - from);
    out->line = line;
    out->column = col;
    return 0;
}

int ig_index_verify(const char *dir, ig_error *err)
{
    ig_manifest m;
    int rc = igi_manifest_read(dir, &m, err);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < m.nshards && !rc; i++) {
        for (int f = 0; f < IG_NFILES && !rc; f++) {
            ig_map map = {0};
            const ig_shard_meta *s = &m.shards[i];
            if (ig_shard_file_optional(f) && !s->files[f].size)
                continue;
            ig_health cut = {0}; /* a file cut short while it is read: its end reads as zeros */
            if ((rc = map_file(dir, s->dir, igi_shard_file_names[f], igi_shard_file_expected(&m, s, f), &cut, &map, err)))
                break;
            if (map.addr)
                madvise(map.addr, map.len, MADV_SEQUENTIAL);
            uint64_t h = igi_hash_bytes(map.addr ? map.addr : "", map.len);
            igi_map_release(&map);
            if (atomic_load(&cut.state))
                rc = ig_error_set(err, IG_ECORRUPT, "%s/%s/%s: cut short while it was read (index corrupt; rebuild the dataset)",
                                  dir, s->dir, igi_shard_file_names[f]);
            else if (h != s->files[f].checksum)
                rc = ig_error_set(err, IG_ECORRUPT, "%s/%s/%s: checksum mismatch (index corrupt; rebuild the dataset)",
                                  dir, s->dir, igi_shard_file_names[f]);
        }
    }
    igi_manifest_free(&m);
    return rc;
}

int ig_index_checksum(const char *dir, uint64_t *out, ig_error *err)
{
    ig_manifest m;
    int rc = igi_manifest_read(dir, &m, err);
    if (rc)
        return rc;
    /* the files' recorded checksums and sizes stand for their contents: nothing is read */
    ig_hash h;
    igi_hash_init(&h);
    igi_hash_update(&h, &m.nshards, sizeof m.nshards);
    for (uint32_t i = 0; i < m.nshards; i++)
        for (int f = 0; f < IG_NFILES; f++) {
            if (f == IG_F_LCP && !m.shards[i].files[f].size)
                continue; /* an index without it keeps the checksum it had before the file existed */
            uint64_t v[2] = {m.shards[i].files[f].checksum, m.shards[i].files[f].size};
            igi_hash_update(&h, v, sizeof v);
        }
    *out = igi_hash_final(&h);
    igi_manifest_free(&m);
    return 0;
}

int ig_utf8_valid(const uint8_t *p, size_t n, size_t *bad)
{
    size_t b = 0;
    int ok = igi_utf8_check(p, n, &b);
    if (bad)
        *bad = ok ? n : b;
    return ok;
}
