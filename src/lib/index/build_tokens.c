/*
 * Builds token datasets of our own (ig_token_options in build.h): ids read from flat arrays or
 * JSONL, or text tokenised by a SentencePiece model in parallel, written in the infini-gram
 * v4 layout that attach.c reads (tokens.h) with a manifest, tokens.json, holding every file's
 * size and checksum. Every id of the dataset is held in memory as 4 bytes while reading (text
 * is tokenised a batch at a time as it is read, and dropped); each
 * shard is then laid out in its own width, suffix-sorted over its bytes with libdivsufsort and
 * only the rows at token starts kept (the official indexer's order: plain byte order of the
 * suffixes), shards sorted and written by up to `jobs` threads.
 */
#include "infinigram/build.h"
#include "infinigram/tokens.h"
#include "index_impl.h"
#include "build_tokens.h"
#include "sort.h"
#include "spm.h"
#include "../text/ingest.h"
#include "../util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A document's ids are ids[start, end); it came from source `name` (an index into names) and
 * `line` (0-based: the line, record or document number in its file; NO_LINE for a whole file,
 * whose metadata then has no "linenum", so that it is not shown as line 1 of its source). */
#define NO_LINE UINT64_MAX
typedef struct tdoc {
    uint64_t start, end;
    uint32_t name;
    uint64_t line;
} tdoc;

typedef struct tb {
    const ig_token_options *to;
    const char *dir;
    uint32_t *ids;
    size_t nids, cap;
    tdoc *docs;
    size_t ndocs, dcap;
    char **names;
    size_t nnames, ncap;
    uint64_t vocab; ///< ids must be below this (0: no limit but the widest width's separator)
    uint32_t maxid;
    /* text to tokenise: the bytes of documents [tdone, ndocs) in one buffer, tokenised and
     * dropped whenever it holds `batch` bytes, so that the text is never all in memory */
    ig_buf text;
    uint64_t *toff;  ///< per document, its text's start in `text` (documents tdone and on)
    size_t tcap, tdone;
    uint64_t batch;
    const struct igi_spm *m;
    int jobs;
    const volatile sig_atomic_t *cancel;
} tb;

static int tokenise(tb *b, ig_error *err);

void ig_token_options_default(ig_token_options *o) { memset(o, 0, sizeof *o); }

static int oom(ig_error *err) { return ig_error_set(err, IG_ENOMEM, "out of memory"); }

static int add_name(tb *b, const char *name, ig_error *err)
{
    if (b->nnames && !strcmp(b->names[b->nnames - 1], name))
        return 0;
    char *s = igi_strdup(name);
    if (!s || igi_grow(&b->names, b->nnames, &b->ncap, sizeof *b->names, 8)) {
        free(s);
        return oom(err);
    }
    b->names[b->nnames++] = s;
    return 0;
}

static int add_doc(tb *b, uint64_t start, uint64_t line, ig_error *err)
{
    if (igi_grow(&b->docs, b->ndocs, &b->dcap, sizeof *b->docs, 1024))
        return oom(err);
    b->docs[b->ndocs++] = (tdoc){start, b->nids, (uint32_t)(b->nnames - 1), line};
    return 0;
}

/* Appends one id read at `where` (a byte offset or line of `path`), checked against the
 * vocabulary. */
static int push_id(tb *b, uint64_t id, const char *path, const char *unit, uint64_t where, ig_error *err)
{
    if (b->vocab && id >= b->vocab)
        return ig_error_set(err, IG_EINVAL, "%s: %s %" PRIu64 ": id %" PRIu64 " is beyond the vocabulary (%" PRIu64 " ids)",
                            path, unit, where, id, b->vocab);
    if (id >= UINT32_MAX)
        return ig_error_set(err, IG_EINVAL, "%s: %s %" PRIu64 ": id %" PRIu64 " does not fit 4 bytes with a separator left free",
                            path, unit, where, id);
    if (b->nids == b->cap && igi_grow(&b->ids, b->nids, &b->cap, sizeof *b->ids, 1 << 16))
        return oom(err);
    b->ids[b->nids++] = (uint32_t)id;
    if (id > b->maxid)
        b->maxid = (uint32_t)id;
    return 0;
}

/* A flat little-endian array of dtype-byte ids; the separator ends every document. */
static int parse_ids(tb *b, const char *path, const char *data, size_t n, ig_error *err)
{
    int rc = 0;
    const uint32_t w = b->to->dtype;
    if (n % w)
        rc = ig_error_set(err, IG_EINVAL, "%s: %zu bytes, not a whole number of %u-byte ids (%zu bytes left over at byte "
                          "offset %zu)", path, n, w, n % w, n - n % w);
    else if (!n)
        rc = ig_error_set(err, IG_EINVAL, "%s: the file is empty", path);
    if (!rc)
        rc = add_name(b, path, err);
    uint64_t start = b->nids, docno = 0;
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; !rc && i < n; i += w) {
        uint32_t id = w == 2 ? (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 : ig_token_at(p + i, 4);
        if (id == b->to->separator) {
            rc = add_doc(b, start, docno++, err);
            start = b->nids;
        } else
            rc = push_id(b, id, path, "byte offset", i, err);
    }
    if (!rc && start != b->nids)
        rc = ig_error_set(err, IG_EINVAL, "%s: the last document does not end with the separator %" PRIu32
                          " (its ids from byte offset %zu to the end)",
                          path, b->to->separator, (size_t)(n - (b->nids - start) * w));
    return rc;
}

/* JSONL: each non-blank line a record whose `field` is an array of ids, one document. */
static int parse_jsonl_ids(tb *b, const char *path, const char *data, size_t n, ig_error *err)
{
    const char *field = b->to->field ? b->to->field : "ids";
    int rc = add_name(b, path, err);
    uint64_t line = 0;
    for (size_t at = 0; !rc && at < n; line++) {
        const char *nl = memchr(data + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - data) : n, len = end - at;
        const char *s = data + at;
        at = end + 1;
        size_t k = 0;
        while (k < len && strchr(" \t\r", s[k]))
            k++;
        if (k == len)
            continue;
        json_error_t je;
        int why;
        json_t *j = ig_json_parse(s, len, 0, &je, &why);
        if (!j) {
            rc = why == IG_JSON_NOMEM ? oom(err)
                 : why == IG_JSON_HEAVY
                     ? ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": a JSON record that %s", path, line + 1,
                                    je.text)
                     : ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": bad JSON: %s", path, line + 1, je.text);
            break;
        }
        json_t *a = json_is_object(j) ? json_object_get(j, field) : NULL;
        if (!json_is_object(j))
            rc = ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": a record must be a JSON object", path, line + 1);
        else if (!a)
            rc = ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": no field \"%s\"", path, line + 1, field);
        else if (!json_is_array(a))
            rc = ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": field \"%s\" is not an array of ids", path,
                              line + 1, field);
        uint64_t start = b->nids;
        size_t i;
        json_t *v;
        if (!rc)
            json_array_foreach(a, i, v)
            {
                if (!json_is_integer(v) || json_integer_value(v) < 0) {
                    rc = ig_error_set(err, IG_EINVAL, "%s: line %" PRIu64 ": field \"%s\" item %zu is not an id "
                                      "(a non-negative integer)", path, line + 1, field, i);
                    break;
                }
                if ((rc = push_id(b, (uint64_t)json_integer_value(v), path, "line", line + 1, err)))
                    break;
            }
        json_decref(j);
        if (!rc)
            rc = add_doc(b, start, line, err);
    }
    return rc;
}

/* Reads the file of ids at `path` whole and hands it to `parse` (parse_ids, parse_jsonl_ids). */
static int read_id_file(tb *b, const char *path, int (*parse)(tb *, const char *, const char *, size_t, ig_error *),
                        ig_error *err)
{
    char *data;
    size_t n;
    int rc = igi_read_file(path, SIZE_MAX, &data, &n, err);
    if (rc)
        return rc;
    rc = parse(b, path, data, n, err);
    free(data);
    return rc;
}

/* The ingestion sink for text to tokenise: the document's bytes kept for the tokenizer. */
static int text_sink(void *ctx, const char *name, uint64_t source_line, const uint8_t *text, size_t len,
                     ig_error *err)
{
    tb *b = ctx;
    int rc = add_name(b, name, err);
    if (!rc && (igi_grow(&b->toff, b->ndocs + 1, &b->tcap, sizeof *b->toff, 1024) ||
                ig_buf_append(&b->text, text, len)))
        rc = oom(err);
    if (!rc) {
        b->toff[b->ndocs] = b->text.len - len;
        rc = add_doc(b, 0, source_line ? source_line - 1 : NO_LINE, err);
    }
    if (!rc && b->text.len >= b->batch)
        rc = tokenise(b, err);
    return rc;
}

/* ------------------------------------------------------------ parallel tokenising */

/* A run of whole lines of one document, tokenised by one thread into its own ids. */
typedef struct unit {
    size_t doc;
    uint64_t a, b; ///< bytes of tb.text
    uint32_t *ids;
    size_t len, cap;
} unit;

typedef struct tokpool {
    tb *b;
    const igi_spm *m;
    unit *u;
    size_t n, next;
    const volatile sig_atomic_t *cancel;
    int rc;
    ig_error err;
    pthread_mutex_t mu;
} tokpool;

static void *tok_worker(void *arg)
{
    tokpool *p = arg;
    ig_error e;
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n || __atomic_load_n(&p->rc, __ATOMIC_RELAXED) || (p->cancel && *p->cancel))
            break;
        unit *u = &p->u[i];
        const char *t = (const char *)p->b->text.data;
        int rc = 0;
        for (uint64_t at = u->a; !rc && at < u->b;) { /* line by line, as spm_encode reads */
            const char *nl = memchr(t + at, '\n', u->b - at);
            uint64_t end = nl ? (uint64_t)(nl - t) : u->b;
            if (end > at)
                rc = igi_spm_encode(p->m, t + at, end - at, &u->ids, &u->len, &u->cap, &e);
            at = end + 1;
        }
        if (rc) {
            pthread_mutex_lock(&p->mu);
            if (!p->rc) {
                p->err = e;
                __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED); /* the other threads stop at their next unit */
            }
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

/* Bytes of text a unit holds at most: large enough that a thread's start-up and the merge
 * are noise, small enough that one long document still spreads over every thread. */
#define UNIT_BYTES (256u << 10)

/* Tokenises the documents read since the last call (tdone on), appends their ids and drops
 * their text. */
static int tokenise(tb *b, ig_error *err)
{
    int jobs = b->jobs;
    const volatile sig_atomic_t *cancel = b->cancel;
    tokpool p = {.b = b, .m = b->m, .cancel = cancel};
    size_t cap = 0;
    int rc = 0;
    const char *t = (const char *)b->text.data;
    for (size_t d = b->tdone; !rc && d < b->ndocs; d++) {
        uint64_t a = b->toff[d], end = d + 1 < b->ndocs ? b->toff[d + 1] : b->text.len;
        do { /* cut at a line break past UNIT_BYTES, so that no line is split */
            uint64_t cut = end - a > UNIT_BYTES ? a + UNIT_BYTES : end;
            const char *nl = cut < end ? memchr(t + cut, '\n', end - cut) : NULL;
            cut = nl ? (uint64_t)(nl - t) + 1 : end;
            if (igi_grow(&p.u, p.n, &cap, sizeof *p.u, 64)) {
                rc = oom(err);
                break;
            }
            p.u[p.n++] = (unit){.doc = d, .a = a, .b = cut};
            a = cut;
        } while (a < end);
    }
    pthread_t th[64];
    int started = 0;
    if (!rc) {
        pthread_mutex_init(&p.mu, NULL);
        if (jobs > 64)
            jobs = 64;
        for (int i = 1; i < jobs && (size_t)i < p.n; i++)
            if (igi_thread_start(&th[started], tok_worker, &p) == 0)
                started++;
        tok_worker(&p); /* this thread works too: with jobs = 1, alone */
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        pthread_mutex_destroy(&p.mu);
        if (p.rc)
            rc = ig_error_set(err, p.rc, "%s", p.err.msg);
        else if (cancel && *cancel)
            rc = ig_error_set(err, IG_ECANCELLED, "build cancelled");
    }
    for (size_t i = 0, d = SIZE_MAX; !rc && i < p.n; i++) { /* the units' ids in order */
        unit *u = &p.u[i];
        if (u->doc != d) {
            if (d != SIZE_MAX)
                b->docs[d].end = b->nids;
            d = u->doc;
            b->docs[d].start = b->nids;
        }
        for (size_t k = 0; !rc && k < u->len; k++)
            rc = push_id(b, u->ids[k], b->names[b->docs[d].name], "line",
                         b->docs[d].line == NO_LINE ? 1 : b->docs[d].line + 1, err);
        if (i + 1 == p.n)
            b->docs[d].end = b->nids;
    }
    for (size_t i = 0; i < p.n; i++)
        free(p.u[i].ids);
    free(p.u);
    b->text.len = 0;
    b->tdone = b->ndocs;
    return rc;
}

/* ------------------------------------------------------------ writing shards */

typedef struct shardjob {
    const tb *b;
    const char *dir;
    uint32_t tw, id;
    size_t d0, d1;       ///< documents [d0, d1)
    uint64_t bytes;      ///< size of tokenized
    uint32_t pw;
    /* what was written: per file, name, size and checksum */
    char names[5][32];
    uint64_t sizes[5], hashes[5];
    int rc;
    ig_error err;
} shardjob;

static void put_le(uint8_t *p, uint64_t v, uint32_t w)
{
    for (uint32_t i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int write_one(shardjob *j, int f, const char *stem, const void *p, size_t n, ig_error *err)
{
    snprintf(j->names[f], sizeof j->names[f], "%s.%u", stem, j->id);
    char *path = igi_path_join(j->dir, j->names[f]);
    if (!path)
        return oom(err);
    ig_hash h;
    igi_hash_init(&h);
    igi_out o;
    int rc = igi_out_open(&o, path, &h, err);
    if (!rc) {
        rc = igi_out_put(&o, p, n, err);
        rc = igi_out_close(&o, rc, err);
    }
    free(path);
    j->sizes[f] = n;
    j->hashes[f] = igi_hash_final(&h);
    return rc;
}

static int shard_write(shardjob *j, ig_error *err)
{
    const tb *b = j->b;
    const uint32_t tw = j->tw, sep = ig_token_end(tw);
    uint64_t ntok = 0;
    for (size_t d = j->d0; d < j->d1; d++)
        ntok += 1 + b->docs[d].end - b->docs[d].start;
    uint64_t n = ntok * tw;
    j->bytes = n;
    j->pw = igi_pointer_width(n);
    uint8_t *t = malloc(n ? n : 1), *offs = malloc((j->d1 - j->d0) * 8 + 1);
    ig_buf meta = {0}, metaoff = {0};
    int rc = 0;
    if (!t || !offs) {
        rc = oom(err);
        goto out;
    }
    uint64_t at = 0;
    for (size_t d = j->d0; d < j->d1 && !rc; d++) {
        put_le(offs + (d - j->d0) * 8, at, 8);
        put_le(t + at, sep, tw);
        at += tw;
        for (uint64_t k = b->docs[d].start; k < b->docs[d].end; k++, at += tw)
            put_le(t + at, b->ids[k], tw);
        uint8_t mo[8];
        put_le(mo, meta.len, 8);
        json_t *line = b->docs[d].line == NO_LINE
                           ? json_pack("{s:s}", "path", b->names[b->docs[d].name])
                           : json_pack("{s:s, s:I}", "path", b->names[b->docs[d].name], "linenum",
                                       (json_int_t)b->docs[d].line);
        char *s = line ? json_dumps(line, JSON_COMPACT) : NULL;
        if (!s || ig_buf_append(&metaoff, mo, 8) || ig_buf_append(&meta, s, strlen(s)) || ig_buf_append(&meta, "\n", 1))
            rc = oom(err);
        free(s);
        json_decref(line);
    }
    if (rc)
        goto out;
    /* The byte suffix array, then the rows at token starts written in pw bytes each. */
    uint8_t *table = malloc(ntok * j->pw + 1);
    if (!table) {
        rc = oom(err);
        goto out;
    }
    uint64_t row = 0;
    int wide = n >= (1ull << 31); /* divsufsort's 32-bit entry point takes fewer than 2^31 bytes */
    void *sa = malloc(n * (wide ? sizeof(int64_t) : sizeof(int32_t)) + 1);
    if (!sa)
        rc = oom(err);
    else if (!(rc = wide ? igi_sort64_into(t, n, sa, err) : igi_sort32_into(t, n, sa, err)))
        for (uint64_t i = 0; i < n; i++) {
            uint64_t pos = wide ? (uint64_t)((const int64_t *)sa)[i] : (uint64_t)((const int32_t *)sa)[i];
            if (pos % tw == 0)
                put_le(table + row++ * j->pw, pos, j->pw);
        }
    free(sa);
    if (!rc && row != ntok)
        rc = ig_error_set(err, IG_EINTERNAL, "shard %u: %" PRIu64 " token starts sorted, %" PRIu64 " expected", j->id, row,
                          ntok);
    if (!rc)
        rc = write_one(j, 0, "tokenized", t, n, err);
    if (!rc)
        rc = write_one(j, 1, "table", table, ntok * j->pw, err);
    if (!rc)
        rc = write_one(j, 2, "offset", offs, (j->d1 - j->d0) * 8, err);
    if (!rc)
        rc = write_one(j, 3, "metadata", meta.data ? meta.data : (uint8_t *)"", meta.len, err);
    if (!rc)
        rc = write_one(j, 4, "metaoff", metaoff.data ? metaoff.data : (uint8_t *)"", metaoff.len, err);
    free(table);
out:
    free(t);
    free(offs);
    ig_buf_free(&meta);
    ig_buf_free(&metaoff);
    return rc;
}

typedef struct shardpool {
    shardjob *j;
    size_t n, next;
    const volatile sig_atomic_t *cancel;
} shardpool;

static void *shard_worker(void *arg)
{
    shardpool *p = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n)
            break;
        if (p->cancel && *p->cancel)
            p->j[i].rc = ig_error_set(&p->j[i].err, IG_ECANCELLED, "build cancelled");
        else
            p->j[i].rc = shard_write(&p->j[i], &p->j[i].err);
    }
    return NULL;
}

/* tokens.json: what the build wrote, every file's size and checksum (igi_hash, hex). */
static int write_manifest(const char *dir, uint32_t tw, const shardjob *j, size_t n, const tb *b, ig_error *err)
{
    json_t *root = json_pack("{s:s, s:i, s:s, s:i, s:I, s:I, s:I, s:[]}", "format", "infinigram-tokens", "version", 1,
                             "layout", "infini-gram-v4", "token_width", (int)tw, "documents", (json_int_t)b->ndocs,
                             "tokens", (json_int_t)b->nids, "vocab_size", (json_int_t)b->vocab, "shards");
    json_t *shards = root ? json_object_get(root, "shards") : NULL;
    int bad = !shards;
    for (size_t i = 0; !bad && i < n; i++) {
        json_t *files = json_array();
        bad = !files || json_array_append_new(shards, json_pack("{s:i, s:I, s:o}", "pointer_width", (int)j[i].pw, "bytes",
                                                                (json_int_t)j[i].bytes, "files", files));
        for (int f = 0; !bad && f < 5; f++) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, j[i].hashes[f]);
            bad = json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "name", j[i].names[f], "bytes",
                                                         (json_int_t)j[i].sizes[f], "checksum", hex));
        }
    }
    char *s = bad ? NULL : json_dumps(root, JSON_INDENT(1));
    json_decref(root);
    if (!s)
        return oom(err);
    char *path = igi_path_join(dir, "tokens.json");
    int rc = path ? igi_write_file_sync(path, s, strlen(s), err) : oom(err);
    free(path);
    free(s);
    return rc;
}

static void tb_free(tb *b)
{
    free(b->ids);
    free(b->docs);
    for (size_t i = 0; i < b->nnames; i++)
        free(b->names[i]);
    free(b->names);
    ig_buf_free(&b->text);
    free(b->toff);
}

int igi_build_tokens(const char *dir, const ig_source *sources, size_t nsources, const ig_ingest_options *in,
                     const ig_build_options *bo, int jobs, ig_progress_fn progress, void *user,
                     const volatile sig_atomic_t *cancel, ig_build_result *res, ig_error *err)
{
    double t0 = igi_now_mono();
    const ig_token_options *to = in->tokens;
    tb b = {.to = to, .dir = dir, .jobs = jobs, .cancel = cancel};
    if (to->format == IG_TOKENS_IDS && to->dtype != 2 && to->dtype != 4)
        return ig_error_set(err, IG_EUSAGE, "dtype %u: ids are u16 or u32 (2 or 4 bytes)", to->dtype);
    if (to->format == IG_TOKENS_IDS && to->dtype == 2 && to->separator > 65535)
        return ig_error_set(err, IG_EUSAGE, "--separator %" PRIu32 " does not fit a u16 id", to->separator);
    if (to->format == IG_TOKENS_TEXT && !to->tokenizer)
        return ig_error_set(err, IG_EUSAGE, "text becomes tokens through a tokenizer: give --tokenizer");
    if (bo->parts > 1)
        return ig_error_set(err, IG_EUSAGE, "a token dataset is built on one machine (no parts)");
    if (in->has_range && to->format != IG_TOKENS_TEXT)
        return ig_error_set(err, IG_EUSAGE, "a byte range cuts text files: files of ids are read whole");
    if (in->casefold || in->decontam)
        return ig_error_set(err, IG_EUSAGE, "%s applies to text datasets, not to token datasets",
                            in->casefold ? "case folding" : "decontamination");
    /* The tokenizer reads the text as it is, as spm_encode reads a file: its own normaliser is
     * the one its ids are made with. */
    ig_ingest_options raw = *in;
    raw.normalize = 0;
    in = &raw;
    igi_spm *m = NULL;
    struct ig_vocab *v = NULL;
    int rc = 0;
    if (to->tokenizer && (rc = igi_spm_load(to->tokenizer, &m, err)))
        return rc;
    b.m = m;
    /* Text tokenised a batch at a time: an eighth of the memory budget (64 MiB by default),
     * at least 1 MiB, so that the budget holds the ids rather than the text they come from. */
    b.batch = bo->memory ? bo->memory / 8 : (64u << 20);
    if (b.batch < (1u << 20))
        b.batch = 1u << 20;
    if (m)
        b.vocab = igi_spm_size(m);
    else if (to->vocab) {
        if ((rc = igi_vocab_load(to->vocab, &v, err)))
            return rc;
        b.vocab = igi_vocab_count(v);
        igi_vocab_free(v);
    }
    ig_ingest_file *files = NULL;
    size_t nfiles = 0;
    ig_ingest_stats st = {0};
    shardjob *jobsv = NULL;
    size_t nshards = 0;
    if (mkdir(dir, 0755) != 0) {
        rc = igi_error_errno(err, errno, dir, "cannot create index directory");
        igi_spm_free(m);
        return rc;
    }
    if ((rc = igi_ingest_list(sources, nsources, &files, &nfiles, err)))
        goto fail;
    ig_progress pr = {.phase = IG_PHASE_READ};
    for (size_t i = 0; i < nfiles; i++)
        pr.total += files[i].size;
    for (size_t i = 0; !rc && i < nsources; i++)
        if (sources[i].kind == IG_SOURCE_INLINE) {
            if (to->format != IG_TOKENS_TEXT)
                rc = ig_error_set(err, IG_EUSAGE, "ids come from files: inline text needs --tokenizer");
            else
                rc = igi_ingest_inline(sources[i].text, sources[i].text_len, in, text_sink, &b, &st, err);
        }
    for (size_t i = 0; !rc && i < nfiles; i++) {
        if (cancel && *cancel) {
            rc = ig_error_set(err, IG_ECANCELLED, "build cancelled");
            break;
        }
        pr.path = files[i].path;
        if (progress && progress(user, &pr)) {
            rc = ig_error_set(err, IG_ECANCELLED, "build cancelled");
            break;
        }
        if (files[i].skip)
            continue;
        if (to->format == IG_TOKENS_IDS || to->format == IG_TOKENS_JSONL_IDS)
            rc = read_id_file(&b, files[i].path, to->format == IG_TOKENS_IDS ? parse_ids : parse_jsonl_ids, err);
        else
            rc = igi_ingest_file_read(&files[i], in, text_sink, &b, &st, cancel, err);
        pr.done += files[i].size;
    }
    if (!rc && to->format == IG_TOKENS_TEXT)
        rc = tokenise(&b, err);
    ig_buf_free(&b.text); /* the ids are all that is sorted and written */
    if (!rc && !b.ndocs)
        rc = ig_error_set(err, IG_EINVAL, "nothing to build: the sources hold no document");
    if (rc)
        goto fail;
    /* The narrowest width whose separator is above every id of the vocabulary. */
    uint64_t span = b.vocab ? b.vocab : (uint64_t)b.maxid + 1;
    uint32_t tw = span <= 255 ? 1 : span <= 65535 ? 2 : 4;
    /* Shards: whole documents, each at most shard_size bytes of tokens unless one document is
     * more, and small enough that `jobs` shards sort at once within the memory budget (half the
     * RAM by default) beside the ids held: a shard of n bytes takes n for its tokens, 4n (8n
     * from 2 GiB) for the byte suffix array and up to 5n/T for its table, 10n at most. */
    uint64_t cap = bo->shard_size ? bo->shard_size : (1ull << 30), mem = bo->memory;
    if (!mem)
        mem = igi_phys_memory(8ull << 30) / 2;
    uint64_t held = (uint64_t)b.nids * 4 + b.ndocs * sizeof *b.docs;
    uint64_t fit = mem > held ? (mem - held) / (10 * (uint64_t)jobs) : 0;
    if (fit < (1u << 20)) /* below this the budget cannot be kept: 1 MiB shards, and say so */
        fit = 1u << 20;
    if (fit < cap) {
        cap = fit;
        res->memory_limited = (uint64_t)(b.nids + b.ndocs) * tw > cap;
    }
    size_t jcap = 0;
    for (size_t d = 0; d < b.ndocs;) {
        size_t d1 = d;
        uint64_t bytes = 0;
        while (d1 < b.ndocs && (d1 == d || bytes + (1 + b.docs[d1].end - b.docs[d1].start) * tw <= cap))
            bytes += (1 + b.docs[d1].end - b.docs[d1].start) * tw, d1++;
        if (igi_grow(&jobsv, nshards, &jcap, sizeof *jobsv, 8)) {
            rc = oom(err);
            goto fail;
        }
        jobsv[nshards] = (shardjob){.b = &b, .dir = dir, .tw = tw, .id = (uint32_t)nshards, .d0 = d, .d1 = d1};
        nshards++;
        d = d1;
    }
    pr.phase = IG_PHASE_SORT;
    pr.path = NULL;
    if (progress && progress(user, &pr)) {
        rc = ig_error_set(err, IG_ECANCELLED, "build cancelled");
        goto fail;
    }
    shardpool sp = {.j = jobsv, .n = nshards, .cancel = cancel};
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < jobs && i < 64 && (size_t)i < nshards; i++)
        if (igi_thread_start(&th[started], shard_worker, &sp) == 0)
            started++;
    shard_worker(&sp);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (size_t i = 0; !rc && i < nshards; i++)
        if (jobsv[i].rc) {
            rc = jobsv[i].rc;
            *err = jobsv[i].err;
        }
    if (!rc)
        rc = write_manifest(dir, tw, jobsv, nshards, &b, err);
    pr.phase = IG_PHASE_SYNC;
    if (!rc && progress)
        (void)progress(user, &pr);
    if (!rc)
        rc = igi_fsync_dir(dir, err);
    if (!rc) /* its entry too: ig_build_index's promise (build.h) */
        rc = igi_fsync_parent(dir, err);
    if (rc)
        goto fail;
    res->bytes = 0;
    for (size_t i = 0; i < nshards; i++) {
        res->bytes += jobsv[i].bytes;
        if (jobsv[i].bytes > res->largest_shard)
            res->largest_shard = jobsv[i].bytes;
    }
    res->documents = b.ndocs;
    res->shards = (uint32_t)nshards;
    res->source_bytes = pr.total;
    res->replaced = st.replaced;
    res->nskipped = st.nskipped;
    res->skipped = st.skipped;
    st.skipped = NULL;
    st.nskipped = st.skipped_cap = 0;
    res->jobs = jobs;
    res->shard_size = cap;
    res->seconds = igi_now_mono() - t0;
    igi_ingest_stats_free(&st);
    igi_ingest_files_free(files, nfiles);
    free(jobsv);
    tb_free(&b);
    igi_spm_free(m);
    return 0;
fail:
    {
        ig_error scratch;
        igi_remove_tree(dir, &scratch);
    }
    igi_ingest_stats_free(&st);
    igi_ingest_files_free(files, nfiles);
    free(jobsv);
    tb_free(&b);
    igi_spm_free(m);
    return rc;
}

/* a later modification time than the manifest's: a file changed after the build */
static int changed_after(const char *file, const struct stat *man)
{
    struct stat st;
    if (stat(file, &st) != 0)
        return 1; /* let the read say what is wrong */
    return igi_time_after(&st.st_mtim, &man->st_mtim);
}

/* The checksum of file fp, which the manifest says holds `bytes` bytes: its size is checked
 * first (a sparse terabyte is refused without a read), then it is read a few MiB at a time,
 * so that checking an index never holds more than that of it in memory. */
static int file_sum(const char *fp, long long bytes, uint64_t *sum, ig_error *err)
{
    int fd = open(fp, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not wait for a writer */
    if (fd < 0)
        return igi_error_errno(err, errno, fp, "cannot open");
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = igi_error_errno(err, errno, fp, "cannot stat");
    else if (!S_ISREG(st.st_mode))
        rc = ig_error_set(err, IG_ECORRUPT, "%s: not a regular file", fp);
    else if ((long long)st.st_size != bytes)
        rc = ig_error_set(err, IG_ECORRUPT, "%s: %lld bytes, the manifest says %lld", fp, (long long)st.st_size, bytes);
    enum { CHUNK = 4 << 20 };
    uint8_t *buf = rc ? NULL : malloc(CHUNK);
    if (!rc && !buf)
        rc = oom(err);
    ig_hash h;
    igi_hash_init(&h);
    for (uint64_t off = 0; !rc && off < (uint64_t)bytes;) {
        size_t want = (uint64_t)bytes - off < CHUNK ? (size_t)((uint64_t)bytes - off) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = igi_error_errno(err, errno, fp, "cannot read");
        else if (got == 0)
            rc = ig_error_set(err, IG_ECORRUPT, "%s: cut short while it was read", fp);
        else {
            igi_hash_update(&h, buf, (size_t)got);
            off += (uint64_t)got;
        }
    }
    free(buf);
    close(fd);
    if (!rc)
        *sum = igi_hash_final(&h);
    return rc;
}

int igi_tokens_verify_files(const char *dir, int changed_only, ig_error *err)
{
    char *path = igi_path_join(dir, "tokens.json"), *data = NULL;
    size_t n;
    struct stat man;
    if (!path)
        return oom(err);
    int rc = igi_read_file(path, IGI_DESCRIPTOR_MAX, &data, &n, err);
    if (!rc && stat(path, &man) != 0)
        rc = igi_error_errno(err, errno, path, "cannot stat");
    json_error_t je;
    int why;
    json_t *root = rc ? NULL : ig_json_parse(data, n, 0, &je, &why);
    free(data);
    json_t *shards = root ? json_object_get(root, "shards") : NULL;
    if (!rc && !json_is_array(shards))
        rc = ig_error_set(err, IG_ECORRUPT, "%s: not a token dataset's manifest (no list of shards)", path);
    size_t i, k;
    json_t *sh, *f;
    if (!rc)
        json_array_foreach(shards, i, sh)
        {
            json_t *files = json_object_get(sh, "files");
            json_array_foreach(files, k, f)
            {
                const char *name = json_string_value(json_object_get(f, "name"));
                const char *sum = json_string_value(json_object_get(f, "checksum"));
                json_int_t bytes = json_integer_value(json_object_get(f, "bytes"));
                char *fp = name && sum && !strchr(name, '/') ? igi_path_join(dir, name) : NULL;
                uint64_t got = 0;
                if (!name || !sum || strchr(name, '/'))
                    rc = ig_error_set(err, IG_ECORRUPT, "%s: shard %zu, file %zu: no name or checksum", path, i, k);
                else if (!fp)
                    rc = oom(err);
                else if (changed_only && !changed_after(fp, &man))
                    ;
                else if (!(rc = file_sum(fp, (long long)bytes, &got, err))) {
                    char hex[17];
                    snprintf(hex, sizeof hex, "%016" PRIx64, got);
                    if (strcmp(hex, sum))
                        rc = ig_error_set(err, IG_ECORRUPT, "%s: checksum %s, the manifest says %s: the file is corrupt%s",
                                          fp, hex, sum, changed_only ? " (modified after the build: rebuild the dataset)" : "");
                }
                free(fp);
                if (rc)
                    break;
            }
            if (rc)
                break;
        }
    json_decref(root);
    free(path);
    return rc;
}

uint32_t igi_tokens_width(const char *dir)
{
    char *path = igi_path_join(dir, "tokens.json"), *data = NULL;
    size_t n;
    ig_error e;
    uint32_t tw = 0;
    if (path && !igi_read_file(path, IGI_DESCRIPTOR_MAX, &data, &n, &e)) {
        json_error_t je;
        int why;
        json_t *root = ig_json_parse(data, n, 0, &je, &why);
        json_int_t w = json_integer_value(json_object_get(root, "token_width"));
        tw = w == 1 || w == 2 || w == 4 ? (uint32_t)w : 0;
        json_decref(root);
    }
    free(data);
    free(path);
    return tw;
}
