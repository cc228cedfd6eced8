/*
 * Ingestion: expands dataset sources into files, reads each file (or the part a byte
 * range selects), checks it is UTF-8, repairs or rejects it, splits it into documents
 * by format (whole text, non-empty lines, or a string field of each JSONL record),
 * normalises each document to NFC and hands it to a sink. A file found by walking a
 * directory is judged as a whole before any of its documents is emitted, so a bad file
 * in a walk is skipped cleanly instead of half-ingested. Decisions beyond the contract:
 * walks use lstat and skip symbolic links (no cycles, no escaping the tree); line and
 * record numbers count from the range start when a range is given; a whitespace-only
 * JSONL line counts as empty; range errors and empty selections in a walk are per-file
 * problems (skipped unless strict), like invalid UTF-8.
 */
#include "ingest.h"
#include "infinigram/fields.h"

#include <jansson.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BINARY_PROBE 8192u          /* a NUL in this many leading bytes means binary */
#define READ_CHUNK (64u << 20)      /* cancel is polled between chunks of this size */
#define PCT_SCALE 1000000000ull     /* percentages are exact to 1e-9 percent */

/* ---- options and byte ranges ---- */

void ig_ingest_options_default(ig_ingest_options *o)
{
    memset(o, 0, sizeof *o);
    o->format = IG_FORMAT_TEXT;
    o->field = "text";
    o->normalize = 1;
}

/* Parses one side of a range; returns 0 or -1 for bad syntax, -2 for a percentage
 * above 100. Only plain digits (and one '.' in a percentage): no signs, exponents or
 * spaces, so "1e3" or "-5" are rejected rather than guessed at. */
static int parse_range_end(const char *s, size_t len, ig_range_end *e)
{
    e->kind = 0;
    e->value = 0;
    if (len == 0)
        return 0;
    int pct = s[len - 1] == '%';
    if (pct)
        len--;
    if (len == 0 || len > 40)
        return -1;
    char buf[48];
    size_t digits = 0, dots = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && pct)
            dots++;
        else
            return -1;
    }
    if (!digits || dots > 1)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    if (pct) {
        double v = strtod(buf, NULL);
        if (errno || v > 100.0)
            return -2;
        e->kind = 2;
        e->value = v;
    } else {
        unsigned long long v = strtoull(buf, NULL, 10);
        if (errno || v > (1ull << 53))   /* beyond this a double is not exact */
            return -1;
        e->kind = 1;
        e->value = (double)v;
    }
    return 0;
}

int ig_byte_range_parse(const char *s, ig_byte_range *out, ig_error *err)
{
    if (!s || !out)
        return ig_error_set(err, IG_EUSAGE, "missing range");
    const char *colon = strchr(s, ':');
    int rc = -1;
    if (colon && !strchr(colon + 1, ':')) {
        rc = parse_range_end(s, (size_t)(colon - s), &out->start);
        if (!rc)
            rc = parse_range_end(colon + 1, strlen(colon + 1), &out->end);
    }
    if (rc == -2)
        return ig_error_set(err, IG_EUSAGE, "bad range \"%s\": percentage above 100%%", s);
    if (rc)
        return ig_error_set(err, IG_EUSAGE,
                            "bad range \"%s\": expected A:B, each side empty, a byte "
                            "offset or a percentage P%%", s);
    /* when both ends have the same unit the order can be checked now, at add time */
    if (out->start.kind && out->start.kind == out->end.kind && out->start.value > out->end.value)
        return ig_error_set(err, IG_EUSAGE, "bad range \"%s\": start is after end", s);
    return 0;
}

static void format_range_end(const ig_range_end *e, char *buf, size_t n)
{
    if (e->kind == 1)
        snprintf(buf, n, "%.0f", e->value);
    else if (e->kind == 2)
        snprintf(buf, n, "%g%%", e->value);
    else
        buf[0] = '\0';
}

static void format_range(const ig_byte_range *r, char *buf, size_t n)
{
    char a[64], b[64];
    format_range_end(&r->start, a, sizeof a);
    format_range_end(&r->end, b, sizeof b);
    snprintf(buf, n, "%s:%s", a, b);
}

/* floor(size * P / 100) in integers: P is first rounded to 1e-9 percent so that a
 * decimal such as 33.3 (stored as 33.29999...) gives the floor of the exact decimal. */
static uint64_t range_point(const ig_range_end *e, uint64_t size, uint64_t dflt)
{
    if (e->kind == 1)
        return (uint64_t)e->value;
    if (e->kind == 2) {
        unsigned __int128 p = (unsigned __int128)llround(e->value * (double)PCT_SCALE);
        return (uint64_t)((unsigned __int128)size * p / (100 * (unsigned __int128)PCT_SCALE));
    }
    return dflt;
}

/* Resolves r against size; on error writes the message (naming `name`) to msg. */
static int range_resolve(const ig_byte_range *r, uint64_t size, const char *name,
                         uint64_t *a, uint64_t *b, char *msg, size_t msglen)
{
    const ig_range_end *ends[2] = {&r->start, &r->end};
    for (int i = 0; i < 2; i++) /* filled by hand, not parsed: every value checked */
        if (ends[i]->kind < 0 || ends[i]->kind > 2 || (ends[i]->kind && !(ends[i]->value >= 0)) ||
            (ends[i]->kind == 1 && (ends[i]->value != floor(ends[i]->value) || ends[i]->value > 1.8e19)) ||
            (ends[i]->kind == 2 && ends[i]->value > 100)) {
            snprintf(msg, msglen, "range %s: kind %d, value %g is no byte offset or percentage",
                     i ? "end" : "start", ends[i]->kind, ends[i]->value);
            return IG_EUSAGE;
        }
    char text[140];
    format_range(r, text, sizeof text);
    if ((r->start.kind == 1 && r->start.value > (double)size) ||
        (r->end.kind == 1 && r->end.value > (double)size)) {
        snprintf(msg, msglen, "range %s is outside %s (%llu bytes)", text, name,
                 (unsigned long long)size);
        return IG_EUSAGE;
    }
    *a = range_point(&r->start, size, 0);
    *b = range_point(&r->end, size, size);
    if (*a > *b) {
        snprintf(msg, msglen, "range %s of %s starts after it ends (%llu > %llu)", text,
                 name, (unsigned long long)*a, (unsigned long long)*b);
        return IG_EUSAGE;
    }
    return 0;
}

int ig_byte_range_resolve(const ig_byte_range *r, uint64_t size, uint64_t *a,
                          uint64_t *b, ig_error *err)
{
    char msg[IG_ERRMSG_MAX];
    int rc = range_resolve(r, size, "the file", a, b, msg, sizeof msg);
    if (rc)
        return ig_error_set(err, rc, "%s", msg);
    return 0;
}

/* ---- listing sources ---- */

static int errno_code(int e) { return (e == ENOENT || e == ENOTDIR) ? IG_ENOTFOUND : IG_EIO; }

/* Called for every regular file of a walk, in order; rel is relative to the root. */
/* A walk's visitor: a regular file (skip NULL), or an entry the walk does not enter or
 * read, with the reason (a symbolic link, a special file, an unreadable directory). */
typedef int (*walk_fn)(void *ctx, const char *path, const char *rel, const struct stat *st, const char *skip,
                       ig_error *err);

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Reads the visible names of a directory, sorted byte-wise. */
static int read_names(const char *dir, char ***out, size_t *nout, ig_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return igi_error_errno(err, errno, dir, "cannot open directory");
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                rc = igi_error_errno(err, errno, dir, "cannot read directory");
            break;
        }
        if (e->d_name[0] == '.')
            continue;
        if (igi_grow(&names, n, &cap, sizeof *names, 16)) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        if (!(names[n] = igi_strdup(e->d_name))) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc) {
        free_names(names, n);
        return rc;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *nout = n;
    return 0;
}

/* Depth-first walk in sorted order. lstat, so symbolic links (possible cycles, or
 * pointers out of the tree) are not followed; they, special files and subdirectories that
 * cannot be read are handed to the visitor as skips (the build reports them, or fails on
 * them with --strict), like files that cannot be read. Only the root must be readable. */
static int walk_dir(const char *dir, const char *rel, walk_fn fn, void *ctx,
                    size_t *nfound, ig_error *err)
{
    char **names = NULL;
    size_t n = 0;
    int rc = read_names(dir, &names, &n, err);
    if (rc && rel && (errno == EACCES || errno == EPERM)) {
        struct stat st;
        memset(&st, 0, sizeof st);
        char why[300];
        snprintf(why, sizeof why, "cannot open directory: %s", strerror(errno));
        return fn(ctx, dir, rel, &st, why, err);
    }
    if (rc)
        return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        char *path = igi_path_join(dir, names[i]);
        char *sub = rel ? igi_path_join(rel, names[i]) : igi_strdup(names[i]);
        struct stat st;
        if (!path || !sub) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        } else if (lstat(path, &st) != 0) {
            if (errno != ENOENT)   /* deleted since readdir: nothing to read */
                rc = igi_error_errno(err, errno, path, "cannot stat");
        } else if (S_ISDIR(st.st_mode)) {
            rc = igi_is_home(path) ? fn(ctx, path, sub, &st, "an infinigram home (its catalog and indexes are not read)", err)
                               : walk_dir(path, sub, fn, ctx, nfound, err);
        } else if (S_ISREG(st.st_mode)) {
            rc = fn(ctx, path, sub, &st, NULL, err);
            (*nfound)++;
        } else {
            rc = fn(ctx, path, sub, &st, S_ISLNK(st.st_mode) ? "symbolic link (not followed)" : "not a regular file",
                    err);
        }
        free(path);
        free(sub);
    }
    free_names(names, n);
    return rc;
}

typedef struct file_list {
    ig_ingest_file *v;
    size_t n, cap;
} file_list;

static int list_push(file_list *l, const char *path, uint64_t size, int in_walk, const char *skip,
                     ig_error *err)
{
    if (igi_grow(&l->v, l->n, &l->cap, sizeof *l->v, 16))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    char *copy = igi_strdup(path), *why = skip ? igi_strdup(skip) : NULL;
    if (!copy || (skip && !why)) {
        free(copy);
        free(why);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    l->v[l->n++] = (ig_ingest_file){.path = copy, .size = size, .in_walk = in_walk, .skip = why};
    return 0;
}

static int list_visit(void *ctx, const char *path, const char *rel, const struct stat *st, const char *skip,
                      ig_error *err)
{
    (void)rel;
    return list_push(ctx, path, skip ? 0 : (uint64_t)st->st_size, 1, skip, err);
}

int igi_ingest_list(const ig_source *sources, size_t n, ig_ingest_file **files,
                   size_t *nfiles, ig_error *err)
{
    file_list l = {0};
    int rc = 0;
    *files = NULL;
    *nfiles = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (sources[i].kind == IG_SOURCE_INLINE)
            continue;
        const char *path = sources[i].path;
        struct stat st;
        if (!path || !*path) {
            rc = ig_error_set(err, IG_EUSAGE, "source %zu has no path", i + 1);
        } else if (stat(path, &st) != 0) {
            rc = igi_error_errno(err, errno, path, "cannot access");
        } else if (S_ISDIR(st.st_mode)) {
            size_t found = 0;
            rc = walk_dir(path, NULL, list_visit, &l, &found, err);
            if (!rc && !found)
                rc = ig_error_set(err, IG_EINVAL, "%s: directory has no files", path);
        } else {
            /* Readable now, so `:dataset add` fails early; O_NONBLOCK so a FIFO does not
             * wait for a writer. */
            int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
            if (fd < 0) {
                rc = igi_error_errno(err, errno, path, "cannot open");
            } else {
                close(fd);
                rc = S_ISREG(st.st_mode)
                         ? list_push(&l, path, (uint64_t)st.st_size, 0, NULL, err)
                         : ig_error_set(err, IG_EUSAGE, "%s: not a regular file (a device, FIFO or socket): save a stream to a file "
                                                        "first", path);
            }
        }
    }
    if (rc) {
        igi_ingest_files_free(l.v, l.n);
        return rc;
    }
    *files = l.v;
    *nfiles = l.n;
    return 0;
}

void igi_ingest_files_free(ig_ingest_file *files, size_t n)
{
    if (!files)
        return;
    for (size_t i = 0; i < n; i++) {
        free(files[i].path);
        free(files[i].skip);
    }
    free(files);
}

void igi_skipped_free(ig_skipped *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++) {
        free(list[i].path);
        free(list[i].reason);
    }
    free(list);
}

void igi_ingest_stats_free(ig_ingest_stats *s)
{
    if (!s)
        return;
    igi_skipped_free(s->skipped, s->nskipped);
    memset(s, 0, sizeof *s);
}

/* ---- reading documents ---- */

/* State of one file (or inline text) being turned into documents. */
typedef struct ingest_run {
    const ig_ingest_options *o;
    const char *name;                   ///< document name and error prefix
    uint64_t base;                      ///< raw file offset of the data (range start)
    int skip_ok;                        ///< problems are skips: in a walk, not strict
    int stopped;                        ///< the file was recorded as skipped
    ig_doc_sink sink;
    void *ctx;
    ig_ingest_stats *stats;
    const volatile sig_atomic_t *cancel;
    ig_buf norm;                        ///< NFC output, reused across documents
    ig_error *err;
} ingest_run;

static int cancelled(const ingest_run *r)
{
    return r->cancel && *r->cancel;
}

static int push_skip(ig_ingest_stats *s, const char *path, const char *reason,
                     ig_error *err)
{
    if (igi_grow(&s->skipped, s->nskipped, &s->skipped_cap, sizeof *s->skipped, 16))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    char *p = igi_strdup(path), *q = igi_strdup(reason);
    if (!p || !q) {
        free(p);
        free(q);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    s->skipped[s->nskipped++] = (ig_skipped){.path = p, .reason = q};
    return 0;
}

/* A problem with the file as a whole. In a non-strict walk it is recorded as a skip
 * and 0 is returned; otherwise it becomes an error "NAME[:LINE]: reason". Either way
 * the caller stops processing the file. */
static int IG_PRINTF(4, 5) problem(ingest_run *r, int code, uint64_t line, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (r->skip_ok) {
        r->stopped = 1;
        return push_skip(r->stats, r->name, why, r->err);
    }
    if (line)
        return ig_error_set(r->err, code, "%s:%llu: %s", r->name, (unsigned long long)line,
                            why);
    return ig_error_set(r->err, code, "%s: %s", r->name, why);
}

/* 1-based line number of offset `off` in data. Only used on error paths. */
static uint64_t line_of(const uint8_t *p, size_t off)
{
    uint64_t line = 1;
    const uint8_t *q = p, *end = p + off;
    while (q < end && (q = memchr(q, '\n', (size_t)(end - q)))) {
        line++;
        q++;
    }
    return line;
}

static int emit(ingest_run *r, uint64_t line, size_t off, const uint8_t *p, size_t n)
{
    r->stats->doc_offset = off;
    if (cancelled(r))
        return ig_error_set(r->err, IG_ECANCELLED, "cancelled");
    if (r->o->normalize) { /* text already in NFC (ASCII, say) is passed on as it is */
        r->norm.len = 0;
        int same, rc = igi_utf8_nfc(p, n, &r->norm, &same, r->err);
        if (rc) {
            char msg[IG_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s", r->err ? r->err->msg : "");
            return ig_error_set(r->err, rc, "%s: %s", r->name, msg);
        }
        if (!same) {
            p = r->norm.data;
            n = r->norm.len;
        }
    }
    int rc = r->sink(r->ctx, r->name, line, p, n, r->err);
    if (rc)
        return rc;
    r->stats->documents++;
    return 0;
}

/* Calls fn(start, end, line) for each line of p (end excludes '\n' and a trailing
 * '\r'), stopping at the first non-zero return. */
typedef int (*line_fn)(ingest_run *r, void *ctx, const uint8_t *p, size_t n, size_t off,
                       uint64_t line);

static int for_each_line(ingest_run *r, const uint8_t *p, size_t n, line_fn fn, void *ctx)
{
    uint64_t line = 0;
    size_t i = 0;
    while (i < n) {
        line++;
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - p) : n, e = end;
        if (e > i && p[e - 1] == '\r')
            e--;
        if (e > i) {
            int rc = fn(r, ctx, p + i, e - i, i, line);
            if (rc || r->stopped)
                return rc;
        }
        i = end + 1;
    }
    return 0;
}

static int line_doc(ingest_run *r, void *ctx, const uint8_t *p, size_t n, size_t off,
                    uint64_t line)
{
    (void)ctx;
    return emit(r, line, off, p, n);
}

/* JSONL is parsed completely before anything is emitted, so that a bad record in a
 * walked file skips the whole file. The extracted strings are kept in one buffer. */
typedef struct jsonl_docs {
    ig_buf text;
    struct jdoc { size_t off, len, src; uint64_t line; } *v; ///< src: the record's offset in the file
    size_t n, cap;
} jsonl_docs;

static int is_json_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int jsonl_record(ingest_run *r, void *ctx, const uint8_t *p, size_t n, size_t off,
                        uint64_t line)
{
    jsonl_docs *d = ctx;
    const char *field = r->o->field ? r->o->field : "text";
    size_t k = 0;
    while (k < n && is_json_space(p[k]))
        k++;
    if (k == n)
        return 0;
    const uint8_t *nul = memchr(p, 0, n);
    if (nul) {
        return problem(r, IG_EINVAL, line, "invalid JSON at byte offset %llu (NUL byte)",
                       (unsigned long long)(r->base + off + (size_t)(nul - p)));
    }
    /* jansson, strictly: strings are counted bytes ("\u0000" is a NUL byte of the text:
     * NUL is text in our corpora), invalid escapes, lone surrogates, duplicate keys and
     * nesting past its depth limit are errors that say what is wrong */
    json_error_t je;
    int why;
    json_t *root = ig_json_parse((const char *)p, n, 0, &je, &why);
    if (why == IG_JSON_DEEP)
        return problem(r, IG_EINVAL, line, "invalid JSON at byte offset %llu: nested more than %d deep",
                       (unsigned long long)(r->base + off + (size_t)je.position), IG_JSON_MAX_DEPTH);
    if (why == IG_JSON_NOMEM)
        return ig_error_set(r->err, IG_ENOMEM, "%s:%llu: out of memory parsing JSON", r->name,
                            (unsigned long long)line);
    if (why == IG_JSON_HEAVY) /* valid JSON, too costly to read */
        return problem(r, IG_EINVAL, line, "a JSON record that %s", je.text);
    if (!root) {
        /* jansson's position counts the offending byte as read */
        size_t pos = je.position > 0 ? (size_t)je.position - 1 : 0;
        return problem(r, IG_EINVAL, line, "invalid JSON at byte offset %llu: %s",
                       (unsigned long long)(r->base + off + (pos < n ? pos : n)), je.text);
    }
    json_t *it = json_is_object(root) ? json_object_get(root, field) : NULL;
    if (!json_is_string(it)) {
        json_decref(root);
        return problem(r, IG_EINVAL, line, "field \"%s\" missing or not a string", field);
    }
    const char *val = json_string_value(it);
    size_t len = json_string_length(it), bad;
    int rc = 0;
    if (len && !igi_utf8_check((const uint8_t *)val, len, &bad)) {
        /* jansson refuses invalid UTF-8 and lone surrogates, so this is a defence only */
        rc = problem(r, IG_EINVAL, line, "field \"%s\" is not valid UTF-8", field);
    } else if (len) {
        if (igi_grow(&d->v, d->n, &d->cap, sizeof *d->v, 64))
            rc = ig_error_set(r->err, IG_ENOMEM, "out of memory");
        if (!rc) {
            d->v[d->n] = (struct jdoc){.off = d->text.len, .len = len, .src = off, .line = line};
            if (ig_buf_append(&d->text, val, len))
                rc = ig_error_set(r->err, IG_ENOMEM, "out of memory");
            else
                d->n++;
        }
    }
    json_decref(root);
    return rc;
}

static int read_jsonl(ingest_run *r, const uint8_t *p, size_t n)
{
    jsonl_docs d = {0};
    int rc = for_each_line(r, p, n, jsonl_record, &d);
    if (!rc && !r->stopped)
        for (size_t i = 0; i < d.n && !rc; i++)
            rc = emit(r, d.v[i].line, d.v[i].src, d.text.data + d.v[i].off, d.v[i].len);
    ig_buf_free(&d.text);
    free(d.v);
    return rc;
}

/* Validates (or repairs) the whole selection, then splits it into documents. */
static int process(ingest_run *r, const uint8_t *data, size_t len)
{
    ig_buf fixed = {0};
    size_t bad;
    int rc = 0;
    if (!igi_utf8_check(data, len, &bad)) {
        if (!r->o->lossy) {
            uint64_t line = r->o->format == IG_FORMAT_TEXT ? 0 : line_of(data, bad);
            unsigned long long at = (unsigned long long)(r->base + bad);
            if (data[bad] == 0xFF)
                return problem(r, IG_EINVAL, line, "0xFF byte at byte offset %llu", at);
            return problem(r, IG_EINVAL, line, "invalid UTF-8 at byte offset %llu", at);
        }
        if (igi_utf8_lossy(data, len, &fixed, &r->stats->replaced)) {
            ig_buf_free(&fixed);
            return ig_error_set(r->err, IG_ENOMEM, "out of memory");
        }
        data = fixed.data;
        len = fixed.len;
    }
    switch (r->o->format) {
    case IG_FORMAT_TEXT:
        rc = emit(r, 0, 0, data, len);
        break;
    case IG_FORMAT_LINES:
        rc = for_each_line(r, data, len, line_doc, NULL);
        break;
    case IG_FORMAT_JSONL:
        rc = read_jsonl(r, data, len);
        break;
    default:
        rc = ig_error_set(r->err, IG_EUSAGE, "unknown format %d", (int)r->o->format);
    }
    ig_buf_free(&fixed);
    return rc;
}

/* One pread of at most n bytes at off, after a cancel check, retried on EINTR: 0 with *k the
 * bytes read (0 at the end, or when a problem was only noted), or the error. */
static int read_once(ingest_run *r, int fd, uint8_t *buf, size_t n, uint64_t off, size_t *k)
{
    *k = 0;
    for (;;) {
        if (cancelled(r))
            return ig_error_set(r->err, IG_ECANCELLED, "cancelled");
        ssize_t got = pread(fd, buf, n, (off_t)off);
        if (got >= 0) {
            *k = (size_t)got;
            return 0;
        }
        if (errno != EINTR) {
            int e = errno;
            return problem(r, IG_EIO, 0, "read failed: %s", strerror(e));
        }
    }
}

/* Reads len bytes at off, polling cancel between chunks. *got < len means the file
 * shrank. */
static int read_at(ingest_run *r, int fd, uint8_t *buf, size_t len, uint64_t off,
                   size_t *got)
{
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done < READ_CHUNK ? len - done : READ_CHUNK, k;
        int rc = read_once(r, fd, buf + done, chunk, off + done, &k);
        if (rc)
            return rc;
        if (k == 0)
            break;
        done += k;
    }
    *got = done;
    return 0;
}

/* Everything that follows open(): returns <0 error, 0 done or skipped. *mem receives
 * the buffer to free. */
static int read_file(ingest_run *r, int fd, int in_walk, uint8_t **mem)
{
    const ig_ingest_options *o = r->o;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        return problem(r, errno_code(e), 0, "cannot stat: %s", strerror(e));
    }
    /* a source swapped for a FIFO or a device since it was added: a FIFO may never start,
     * /dev/zero never end */
    if (!S_ISREG(st.st_mode))
        return problem(r, IG_EUSAGE, 0, "not a regular file (a directory, device, FIFO or socket)");
    uint64_t size = (uint64_t)st.st_size;
    if (size == 0)
        return problem(r, IG_EINVAL, 0, "empty file");

    if (in_walk) {
        uint8_t probe[BINARY_PROBE];
        const uint8_t *pp = probe;
        size_t np = size < BINARY_PROBE ? (size_t)size : BINARY_PROBE;
        size_t got;
        int rc = read_at(r, fd, probe, np, 0, &got);
        if (rc || r->stopped)
            return rc;
        np = got;
        const uint8_t *z = memchr(pp, 0, np);
        if (z)
            return problem(r, IG_EINVAL, 0, "binary file (NUL byte at offset %zu)",
                           (size_t)(z - pp));
    }

    uint64_t a = 0, b = size;
    if (o->has_range) {
        char msg[512];
        int rc = range_resolve(&o->range, size, r->skip_ok ? "the file" : r->name, &a, &b,
                               msg, sizeof msg);
        if (rc) {
            if (r->skip_ok) {
                r->stopped = 1;
                return push_skip(r->stats, r->name, msg, r->err);
            }
            return ig_error_set(r->err, rc, "%s", msg);
        }
    }
    if (b - a > SIZE_MAX - 2)
        return ig_error_set(r->err, IG_EINTERNAL, "%s: file too large", r->name);
    /* the bytes after the range: one to see whether it ends inside a character, up to three
     * more for a percentage end to reach the next character's start */
    size_t len = (size_t)(b - a), with_next = len + (size_t)(size - b < 4 ? size - b : 4);
    *mem = malloc(with_next ? with_next : 1);
    if (!*mem)
        return ig_error_set(r->err, IG_ENOMEM, "%s: out of memory", r->name);
    igi_advise_huge(*mem, with_next);
    size_t got;
    int rc = read_at(r, fd, *mem, with_next, a, &got);
    if (rc || r->stopped)
        return rc;
    if (got < with_next)
        return problem(r, IG_EIO, 0, "file shrank while reading (%llu bytes expected)", (unsigned long long)size);
    const uint8_t *data = *mem;
    /* A boundary given in bytes inside a character would cut it in two: refuse rather than
     * guess. A percentage names no byte exactly: each end moves on to the next character's
     * start, the same way for both, so that 0:P% and P%:100% still split a file whole. */
    if (o->has_range && o->range.end.kind == 2)
        while (b < size && len < with_next && (data[len] & 0xC0) == 0x80) {
            len++;
            b++;
        }
    if (o->has_range && o->range.start.kind == 2)
        while (len > 0 && (data[0] & 0xC0) == 0x80) {
            data++;
            len--;
            a++;
        }
    if (o->has_range && a < size && (data[0] & 0xC0) == 0x80)
        return problem(r, IG_EINVAL, 0, "range start %llu falls inside a UTF-8 character",
                       (unsigned long long)a);
    if (o->has_range && b < size && len < with_next && (data[len] & 0xC0) == 0x80)
        return problem(r, IG_EINVAL, 0, "range end %llu falls inside a UTF-8 character",
                       (unsigned long long)b);
    if (len == 0) {
        char text[140];
        format_range(&o->range, text, sizeof text);
        return problem(r, IG_EINVAL, 0, "range %s selects no bytes", text);
    }
    r->base = a;
    r->stats->source_bytes += len;
    return process(r, data, len);
}

int igi_ingest_file_read(const ig_ingest_file *f, const ig_ingest_options *opts,
                        ig_doc_sink sink, void *ctx, ig_ingest_stats *stats,
                        const volatile sig_atomic_t *cancel, ig_error *err)
{
    ig_ingest_options dflt;
    ig_ingest_stats scratch = {0};
    if (!f || !f->path || !sink)
        return ig_error_set(err, IG_EUSAGE, "igi_ingest_file_read: missing file or sink");
    if (!opts) {
        ig_ingest_options_default(&dflt);
        opts = &dflt;
    }
    ingest_run r = {
        .o = opts, .name = f->path, .skip_ok = f->in_walk && !opts->strict,
        .sink = sink, .ctx = ctx, .stats = stats ? stats : &scratch, .cancel = cancel,
        .err = err,
    };
    uint8_t *mem = NULL;
    int rc;
    if (cancelled(&r)) {
        rc = ig_error_set(err, IG_ECANCELLED, "cancelled");
    } else if (f->skip) {
        rc = problem(&r, IG_EINVAL, 0, "%s", f->skip);
    } else {
        int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not wait for a writer */
        if (fd < 0) {
            int e = errno;
            rc = problem(&r, errno_code(e), 0, "cannot open: %s", strerror(e));
        } else {
            rc = read_file(&r, fd, f->in_walk, &mem);
            close(fd);
        }
    }
    free(mem);
    ig_buf_free(&r.norm);
    igi_ingest_stats_free(&scratch);
    return rc;
}

int igi_ingest_path(const char *path, const char *what, const char *cannot, int empty_ok,
                    const ig_ingest_options *opts, ig_doc_sink sink, void *ctx, ig_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return igi_error_errno(err, errno, path, cannot);
    if (S_ISDIR(st.st_mode))
        return ig_error_set(err, IG_EUSAGE, "%s: is a directory, not %s", path, what);
    if (!S_ISREG(st.st_mode)) /* a device may never end (/dev/zero), a FIFO never start */
        return ig_error_set(err, IG_EUSAGE, "%s: not a regular file (%s is read from a file: save a stream to one first)",
                            path, what);
    if (!st.st_size && empty_ok)
        return 0;
    ig_ingest_file f = {.path = (char *)path, .size = (uint64_t)st.st_size, .in_walk = 0};
    ig_ingest_stats stats = {0};
    int rc = igi_ingest_file_read(&f, opts, sink, ctx, &stats, NULL, err);
    igi_ingest_stats_free(&stats);
    return rc;
}

int igi_ingest_inline(const char *text, size_t len, const ig_ingest_options *opts,
                     ig_doc_sink sink, void *ctx, ig_ingest_stats *stats, ig_error *err)
{
    ig_ingest_options dflt;
    ig_ingest_stats scratch = {0};
    if (!sink || (!text && len))
        return ig_error_set(err, IG_EUSAGE, "igi_ingest_inline: missing text or sink");
    if (!opts) {
        ig_ingest_options_default(&dflt);
        opts = &dflt;
    }
    ingest_run r = {
        .o = opts, .name = "<inline>", .sink = sink, .ctx = ctx,
        .stats = stats ? stats : &scratch, .err = err,
    };
    int rc;
    if (len == 0) {
        rc = ig_error_set(err, IG_EINVAL, "<inline>: empty text");
    } else {
        r.stats->source_bytes += len;
        rc = process(&r, (const uint8_t *)text, len);
    }
    ig_buf_free(&r.norm);
    igi_ingest_stats_free(&scratch);
    return rc;
}

/* ---- fingerprints ---- */

typedef struct fp_walk {
    ig_hash h;
    uint64_t total, seen, limit;
} fp_walk;

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static int64_t mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

static int fp_visit(void *ctx, const char *path, const char *rel, const struct stat *st, const char *skip,
                    ig_error *err)
{
    (void)path;
    fp_walk *w = ctx;
    if (++w->seen > w->limit) /* not an error: igi_source_fingerprint says the tree was not walked */
        return ig_error_set(err, IG_ECANCELLED, "more than %" PRIu64 " entries", w->limit);
    if (skip) { /* its name and why it is skipped: becoming readable makes the dataset stale */
        igi_hash_update(&w->h, rel, strlen(rel) + 1);
        igi_hash_update(&w->h, skip, strlen(skip) + 1);
        return 0;
    }
    uint8_t rec[16];
    /* The NUL ends the name unambiguously before the fixed-size fields. */
    igi_hash_update(&w->h, rel, strlen(rel) + 1);
    put_u64(rec, (uint64_t)st->st_size);
    put_u64(rec + 8, (uint64_t)mtime_ns(st));
    igi_hash_update(&w->h, rec, sizeof rec);
    w->total += (uint64_t)st->st_size;
    return 0;
}

int igi_source_fingerprint(const char *path, uint64_t limit, ig_fingerprint *out, ig_error *err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return ig_error_set(err, IG_EUSAGE, "missing path");
    if (stat(path, &st) != 0)
        return igi_error_errno(err, errno, path, "cannot access");
    out->mtime_ns = mtime_ns(&st);
    if (!S_ISDIR(st.st_mode)) {
        out->size = (uint64_t)st.st_size;
        return 0;
    }
    out->is_dir = 1;
    if (!limit)
        return 0;
    fp_walk w = {.limit = limit};
    size_t found = 0;
    ig_error e;
    ig_error_clear(&e);
    igi_hash_init(&w.h);
    int rc = walk_dir(path, NULL, fp_visit, &w, &found, &e);
    if (rc == IG_ECANCELLED && w.seen > limit)
        return 0; /* too many to walk: the directory's own fingerprint stands */
    if (rc)
        return ig_error_set(err, rc, "%s", e.msg);
    out->walked = 1;
    out->size = w.total;
    out->tree_hash = igi_hash_final(&w.h);
    return 0;
}
