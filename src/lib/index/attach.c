/*
 * Attaching a token index in the infini-gram layout (include/infinigram/tokens.h): finding
 * its shards (v4: suffixed names in one directory; v6: one directory per shard), inferring
 * the token width from the file sizes, mapping and checking the files, and presenting them
 * as the shards of an ig_index, so that the search code runs on them unchanged: a shard's
 * text is the id stream, its suffix array has one row per token, and its document table is
 * made from the separator offsets (a document starts after its separator).
 */
#include "infinigram/tokens.h"
#include "index_impl.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Spot checks per shard: enough that a wrong, zeroed or shuffled file cannot pass, few
 * enough that attaching a large index stays well under a tenth of a second. */
#define ATTACH_CHECK_ROWS 1024
#define ATTACH_CHECK_DOCS 1024
/* Up to these many rows (documents) a shard has every one checked at attach, a few tens of
 * milliseconds: a small index is then never answered from a row or offset no check read. */
#define ATTACH_FULL_ROWS (1u << 20)
#define ATTACH_FULL_DOCS (1u << 20)
#define ATTACH_CHECK_CMP 512

enum { AF_TOK, AF_TABLE, AF_OFFSET, AF_META, AF_METAOFF, AF_N };
static const char *const af_names[AF_N] = {"tokenized", "table", "offset", "metadata", "metaoff"};

typedef struct shard_paths {
    char *p[AF_N]; ///< NULL for an optional file that is absent
} shard_paths;

typedef struct layout {
    shard_paths *s;
    uint32_t n;
} layout;

static void layout_free(layout *l)
{
    for (uint32_t i = 0; l->s && i < l->n; i++)
        for (int f = 0; f < AF_N; f++)
            free(l->s[i].p[f]);
    free(l->s);
    memset(l, 0, sizeof *l);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 when something other than a regular file stands at path (a FIFO, a directory, a device). */
static int is_other(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* Fills one shard's paths: `dir`/NAME`suffix` for each file; the three required ones must
 * exist, metadata and metaoff both or neither. */
static int shard_files(const char *dir, const char *suffix, shard_paths *sp, ig_error *err)
{
    for (int f = 0; f < AF_N; f++) {
        if (!(sp->p[f] = igi_aprintf("%s/%s%s", dir, af_names[f], suffix)))
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        if (is_other(sp->p[f])) /* a FIFO would block a reader, a directory is no file */
            return ig_error_set(err, IG_ECORRUPT, "%s: not a regular file", sp->p[f]);
        if (!is_file(sp->p[f])) {
            struct stat ls;
            if (lstat(sp->p[f], &ls) == 0) /* there, but not to be reached: a link in a loop, or dangling */
                return igi_error_errno(err, errno ? errno : ENOENT, sp->p[f], "cannot read");
            if (f < AF_META)
                return ig_error_set(err, IG_ECORRUPT, "%s: missing (the index needs tokenized, table and offset per shard)",
                                    sp->p[f]);
            free(sp->p[f]);
            sp->p[f] = NULL;
        }
    }
    if (!sp->p[AF_META] != !sp->p[AF_METAOFF]) {
        char *gone = igi_aprintf("%s/%s%s", dir, af_names[sp->p[AF_META] ? AF_METAOFF : AF_META], suffix);
        int rc = ig_error_set(err, IG_ECORRUPT, "%s: missing (metadata and metaoff come together)", gone ? gone : dir);
        free(gone);
        return rc;
    }
    return 0;
}

/* 1 when directory `d` holds any of a shard's required files (tokenized, table, offset), 0
 * when none, -1 (err set) when out of memory. */
static int holds_shard(const char *d, ig_error *err)
{
    for (int f = 0; f < AF_META; f++) {
        char *p = igi_aprintf("%s/%s", d, af_names[f]);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory"), -1;
        int there = is_file(p);
        free(p);
        if (there)
            return 1;
    }
    return 0;
}

/* Shard directories in natural order (2 before 10), as the shards were numbered. */
static int cmp_str(const void *a, const void *b) { return strverscmp(*(char *const *)a, *(char *const *)b); }

/* The shards of `dir`: tokenized.0 … (v4: as many as the highest number any shard file
 * carries), or tokenized itself (one v6 shard), or the subdirectories holding any of
 * tokenized, table and offset, in name order (v6). A shard short of a required file is an
 * error naming it, never a shard fewer. */
static int find_layout(const char *dir, layout *l, ig_error *err)
{
    memset(l, 0, sizeof *l);
    DIR *d = opendir(dir);
    if (!d)
        return igi_error_errno(err, errno, dir, "cannot open the index directory");
    uint32_t v4 = 0;
    char **subs = NULL;
    size_t nsubs = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        /* any file of shard k counts it (v4), so that a shard missing its tokenized file is
         * named as such rather than dropped with the shards after it */
        int numbered = 0;
        for (int f = 0; f < AF_N && !numbered; f++) {
            size_t fl = strlen(af_names[f]);
            if (strncmp(nm, af_names[f], fl) || nm[fl] != '.' || !nm[fl + 1])
                continue;
            numbered = 1;
            char *end;
            errno = 0;
            unsigned long k = strtoul(nm + fl + 1, &end, 10);
            if (!*end && !errno && k < 1000000 && nm[fl + 1] >= '0' && nm[fl + 1] <= '9')
                v4 = k + 1 > v4 ? (uint32_t)k + 1 : v4;
        }
        if (numbered || nm[0] == '.')
            continue;
        /* a subdirectory holding any of the three required files is a shard (v6): one
         * without its tokenized file is named, not skipped */
        char *sub = igi_aprintf("%s/%s", dir, nm);
        int shard = sub ? holds_shard(sub, err) : -1;
        if (shard == 1 && igi_grow(&subs, nsubs, &cap, sizeof *subs, 8))
            shard = -1;
        if (shard == 1) {
            subs[nsubs++] = sub;
            continue;
        }
        free(sub);
        if (shard < 0) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    int here = rc || v4 ? 0 : holds_shard(dir, err); /* one v6 shard in dir itself */
    if (here < 0)
        rc = IG_ENOMEM;
    if (!rc) {
        uint32_t n = v4 ? v4 : here ? 1 : (uint32_t)nsubs;
        char *man = n ? NULL : igi_aprintf("%s/manifest.json", dir);
        if (!n && man && is_file(man))
            rc = ig_error_set(err, IG_EUSAGE, "%s: an index of this program's own (it has a manifest.json), not an "
                              "infini-gram one: datasets of ours are added with :dataset add and built", dir);
        else if (!n)
            rc = ig_error_set(err, IG_ENOTFOUND,
                              "%s: no infini-gram index here (expected tokenized.0, table.0 and offset.0, or tokenized, "
                              "table and offset in it or in one directory per shard)",
                              dir);
        else if (!(l->s = calloc(n, sizeof *l->s)))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        else {
            l->n = n;
            if (nsubs)
                qsort(subs, nsubs, sizeof *subs, cmp_str);
            for (uint32_t i = 0; !rc && i < n; i++) {
                char suffix[16] = "";
                if (v4)
                    snprintf(suffix, sizeof suffix, ".%u", i);
                rc = shard_files(v4 || here ? dir : subs[i], suffix, &l->s[i], err);
            }
        }
        free(man);
    }
    for (size_t i = 0; i < nsubs; i++)
        free(subs[i]);
    free(subs);
    if (rc)
        layout_free(l);
    return rc;
}

uint32_t igi_pointer_width(uint64_t n)
{
    uint32_t pw = 1;
    while (pw < 5 && n > (1ull << (8 * pw)))
        pw++;
    return pw;
}

/* Token widths the sizes of one shard allow: its text a whole number of tokens starting with a
 * separator, its table a whole number of 1-to-5-byte pointers per token able to address the
 * text. Bit w set for each; *official gets those whose pointer width is the indexer's own. */
static unsigned widths_of(uint64_t ds, uint64_t table, const uint8_t *text, unsigned *official)
{
    unsigned ok = 0;
    *official = 0;
    for (uint32_t w = 1; w <= 4; w *= 2) {
        if (!ds || ds % w || table % (ds / w))
            continue;
        uint64_t pw = table / (ds / w);
        if (pw < 1 || pw > 5 || (pw < 8 && ds > (1ull << (8 * pw))))
            continue;
        uint32_t k = 0;
        while (k < w && text[k] == 0xFF)
            k++;
        if (k < w)
            continue;
        ok |= 1u << w;
        if (pw == igi_pointer_width(ds))
            *official |= 1u << w;
    }
    return ok;
}

/* Strict order of the suffixes at x and y over at most ATTACH_CHECK_CMP bytes: -1, 1, or 0
 * when they agree that far. */
static int suffix_order(const ig_shard *s, uint64_t x, uint64_t y)
{
    if (x == y)
        return 0;
    uint64_t lx = s->n - x, ly = s->n - y, l = lx < ly ? lx : ly;
    int capped = l > ATTACH_CHECK_CMP;
    int c = memcmp(s->text + x, s->text + y, (size_t)(capped ? ATTACH_CHECK_CMP : l));
    if (c)
        return c < 0 ? -1 : 1;
    return capped ? 0 : lx < ly ? -1 : 1;
}

/* Checks a mapped shard and makes its document table: offsets (read whole) start at 0,
 * increase, are token-aligned and inside the text; they hold a separator, and suffix-array
 * rows hold token-aligned pointers inside the text in increasing order — every one in a
 * small shard, about a thousand spread over a large one (:dataset verify reads them all);
 * the metadata offsets increase inside the metadata. */
static int check_shard(ig_index *idx, ig_shard *s, const shard_paths *sp, ig_error *err)
{
    const uint32_t tw = idx->tw, pw = s->pw;
    const ig_map *od = &s->maps[IG_F_DOCS];
    if (od->len % 8 || !od->len)
        return ig_error_set(err, IG_ECORRUPT, "%s: size %zu is not a positive multiple of 8 (one u64 per document)",
                            sp->p[AF_OFFSET], od->len);
    s->ndocs = od->len / 8;
    if (s->ndocs > s->n / tw) /* every document holds its separator: a sparse or foreign file, before any memory */
        return ig_error_set(err, IG_ECORRUPT, "%s: %" PRIu64 " documents, more than the %" PRIu64 " tokens of %s",
                            sp->p[AF_OFFSET], s->ndocs, s->n / tw, sp->p[AF_TOK]);
    if (!(s->docs_owned = malloc((s->ndocs + 1) * sizeof *s->docs_owned)))
        return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", sp->p[AF_OFFSET]);
    const uint8_t *o = od->addr;
    uint64_t prev = 0;
    for (uint64_t d = 0; d < s->ndocs; d++) {
        uint64_t v = ig_load_le64(o + d * 8);
        if ((d == 0 && v != 0) || (d && v <= prev) || v % tw || v + tw > s->n)
            return ig_error_set(err, IG_ECORRUPT,
                                "%s: document %" PRIu64 " (byte %" PRIu64 "): separator offset %" PRIu64
                                " is %s",
                                sp->p[AF_OFFSET], d, d * 8, v,
                                d == 0 && v != 0 ? "not 0 (the text starts with a separator)"
                                : d && v <= prev ? "not after the previous one"
                                : v % tw         ? "not at a token start"
                                                 : "past the end of the text");
        s->docs_owned[d] = htole64(v + tw);
        prev = v;
    }
    s->docs_owned[s->ndocs] = htole64(s->n + tw);
    s->docs = (const uint8_t *)s->docs_owned;
    uint64_t step = s->ndocs <= ATTACH_FULL_DOCS ? 1 : s->ndocs / ATTACH_CHECK_DOCS + 1;
    for (uint64_t d = 0; d < s->ndocs; d += step) {
        uint64_t v = ig_load_le64(o + d * 8);
        for (uint32_t k = 0; k < tw; k++)
            if (s->text[v + k] != 0xFF)
                return ig_error_set(err, IG_ECORRUPT, "%s: byte %" PRIu64 ": no separator where %s says document %" PRIu64
                                    " starts",
                                    sp->p[AF_TOK], v, sp->p[AF_OFFSET], d);
    }
    step = s->rows <= ATTACH_FULL_ROWS ? 1 : s->rows / ATTACH_CHECK_ROWS + 1;
    for (uint64_t r = 0; r < s->rows; r += step) {
        uint64_t x = 0;
        for (uint64_t k = r; k < r + 2 && k < s->rows; k++) { /* the row and the next, in order */
            uint64_t y = ig_shard_sa_raw(s, pw, k);
            if (y >= s->n || y % tw)
                return ig_error_set(err, IG_ECORRUPT, "%s: row %" PRIu64 " (byte %" PRIu64 "): pointer %" PRIu64 " is %s",
                                    sp->p[AF_TABLE], k, k * pw, y, y >= s->n ? "past the end of the text" : "not at a token start");
            if (k > r && (suffix_order(s, x, y) > 0 || x == y))
                return ig_error_set(err, IG_ECORRUPT, "%s: rows %" PRIu64 " and %" PRIu64 " are out of order", sp->p[AF_TABLE],
                                    r, k);
            x = y;
        }
    }
    if (s->metadata || s->metaoff) {
        const ig_map *mo = &s->maps[IG_F_DOCMETA];
        if (mo->len != s->ndocs * 8)
            return ig_error_set(err, IG_ECORRUPT, "%s: size %zu, expected %" PRIu64 " (8 bytes for each of the %" PRIu64
                                " documents of %s)",
                                sp->p[AF_METAOFF], mo->len, s->ndocs * 8, s->ndocs, sp->p[AF_OFFSET]);
        prev = 0;
        for (uint64_t d = 0; d < s->ndocs; d++) {
            uint64_t v = ig_load_le64(s->metaoff + d * 8);
            if (v < prev || v > s->metadata_len)
                return ig_error_set(err, IG_ECORRUPT, "%s: document %" PRIu64 ": offset %" PRIu64 " is %s", sp->p[AF_METAOFF],
                                    d, v, v < prev ? "before the previous one" : "past the end of the metadata");
            prev = v;
        }
    }
    return 0;
}

static int refuse_v5(const char *dir, const ig_attach_options *o, ig_error *err)
{
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    if ((o && o->version == 5) || !strncmp(base, "v5_", 3) || !strncmp(base, "v5-", 3))
        return ig_error_set(err, IG_EUSAGE,
                            "%s: an infini-gram v5 index stores every document reversed, which this engine does not "
                            "read: attach a v4 or v6 index of the same data",
                            dir);
    if (o && o->version && o->version != 4 && o->version != 6)
        return ig_error_set(err, IG_EUSAGE, "version %u: the infini-gram layouts read are 4 and 6", o->version);
    if (o && o->token_width && o->token_width != 1 && o->token_width != 2 && o->token_width != 4)
        return ig_error_set(err, IG_EUSAGE, "token width %u: ids are 1, 2 or 4 bytes (u8, u16, u32)", o->token_width);
    return 0;
}

static int attach_width(ig_index **out, const char *dir, const ig_attach_options *o, ig_error *err);

int ig_index_attach(ig_index **out, const char *dir, const ig_attach_options *o, ig_error *err)
{
    ig_error local;
    if (!err)
        err = &local;
    int rc = attach_width(out, dir, o, err);
    if (rc != IG_ECORRUPT || (o && o->token_width))
        return rc;
    /* The sizes may fit more than one width (a pointer wider than the indexer's own makes that
     * possible): when the one inferred fails its checks, another that passes them is the
     * index's; if none does, the first failure is the one reported. */
    ig_error first = *err;
    for (uint32_t w = 1; w <= 4; w *= 2) {
        ig_attach_options ow = {0};
        if (o)
            ow = *o;
        ow.token_width = w;
        ig_error e;
        if (!attach_width(out, dir, &ow, &e))
            return 0;
    }
    *err = first;
    return rc;
}

static int attach_width(ig_index **out, const char *dir, const ig_attach_options *o, ig_error *err)
{
    *out = NULL;
    int rc = refuse_v5(dir, o, err);
    if (rc)
        return rc;
    layout l;
    if ((rc = find_layout(dir, &l, err)))
        return rc;
    ig_index *idx = calloc(1, sizeof *idx);
    if (!idx || !(idx->dir = igi_abs_path(dir))) {
        free(idx);
        layout_free(&l);
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&idx->lines_mu, NULL);
    pthread_mutex_init(&idx->bm25_mu, NULL);
    idx->nshards = idx->npos = idx->man.nshards = l.n;
    idx->prefetch = 1;
    const char *base = strrchr(idx->dir, '/');
    if (!(idx->shards = calloc(l.n, sizeof *idx->shards)) || !(idx->health = calloc(1, sizeof *idx->health)) ||
        !(idx->man.shards = calloc(l.n, sizeof *idx->man.shards)) ||
        !(idx->doc_name = igi_strdup(base && base[1] ? base + 1 : idx->dir))) {
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
        goto fail;
    }
    static const int fmap[AF_N] = {IG_F_TEXT, IG_F_SA, IG_F_DOCS, IG_F_NAMES, IG_F_DOCMETA};
    for (uint32_t i = 0; i < l.n; i++) {
        ig_shard *s = &idx->shards[i];
        for (int f = 0; f < AF_N; f++)
            if (l.s[i].p[f] && (rc = igi_map_file(l.s[i].p[f], UINT64_MAX, idx->health, &s->maps[fmap[f]], err)))
                goto fail;
        s->text = s->maps[IG_F_TEXT].addr;
        s->n = s->maps[IG_F_TEXT].len;
        s->sa = s->maps[IG_F_SA].addr;
        uint64_t table = s->maps[IG_F_SA].len;
        if (!s->n) {
            rc = ig_error_set(err, IG_ECORRUPT, "%s: empty (a shard holds at least one document)", l.s[i].p[AF_TOK]);
            goto fail;
        }
        unsigned official, ok = widths_of(s->n, table, s->text, &official);
        uint32_t tw = idx->tw ? idx->tw : o && o->token_width ? o->token_width : 0;
        if (!tw) { /* the sizes decide, or else the indexer's own pointer width does */
            unsigned pick = (ok & (ok - 1)) ? official : ok;
            if (!pick || (pick & (pick - 1))) {
                if (ok)
                    rc = ig_error_set(err, IG_EUSAGE,
                                      "%s and %s: the token width is ambiguous from the sizes: give it (u8, u16 or u32)",
                                      l.s[i].p[AF_TOK], l.s[i].p[AF_TABLE]);
                else
                    rc = ig_error_set(err, IG_ECORRUPT,
                                      "%s (%" PRIu64 " bytes) and %s (%" PRIu64 " bytes) fit no token width of 1, 2 or 4 "
                                      "bytes with a pointer width of 1 to 5 bytes and a separator first",
                                      l.s[i].p[AF_TOK], s->n, l.s[i].p[AF_TABLE], table);
                goto fail;
            }
            tw = (uint32_t)__builtin_ctz(pick);
        } else if (!(ok & (1u << tw))) {
            rc = ig_error_set(err, IG_ECORRUPT,
                              "%s (%" PRIu64 " bytes) and %s (%" PRIu64 " bytes) do not fit a token width of %u bytes "
                              "(a whole number of tokens, a separator first, 1 to 5 pointer bytes per token)",
                              l.s[i].p[AF_TOK], s->n, l.s[i].p[AF_TABLE], table, tw);
            goto fail;
        }
        idx->tw = tw;
        s->rows = s->n / tw;
        s->pw = (uint32_t)(table / s->rows);
        s->tmask = tw - 1;
        if (s->pw > idx->pw) /* what info reports: the widest */
            idx->pw = s->pw;
        if (s->maps[IG_F_NAMES].addr || l.s[i].p[AF_META]) {
            s->metadata = s->maps[IG_F_NAMES].addr;
            s->metadata_len = s->maps[IG_F_NAMES].len;
            s->metaoff = s->maps[IG_F_DOCMETA].addr;
        }
        const char *tp = l.s[i].p[AF_TABLE] + strlen(idx->dir);
        snprintf(s->sa_name, sizeof s->sa_name, "%s", *tp == '/' ? tp + 1 : tp);
        s->names = idx->doc_name;
        s->names_len = strlen(idx->doc_name) + 1;
        s->id = s->local = i;
        s->health = idx->health;
        s->doc_base = idx->man.documents;
        snprintf(idx->man.shards[i].dir, sizeof idx->man.shards[i].dir, "shard %u", i);
        if (!(s->checked = calloc((size_t)(IG_CHECK_KEY_BIT(0) + 63) / 64, sizeof *s->checked))) {
            rc = ig_error_set(err, IG_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = check_shard(idx, s, &l.s[i], err)))
            goto fail;
        idx->man.shards[i].bytes = s->n;
        idx->man.shards[i].documents = s->ndocs;
        idx->man.shards[i].doc_base = s->doc_base;
        idx->man.bytes += s->n;
        idx->man.documents += s->ndocs;
    }
    idx->man.pointer_width = idx->pw;
    if (o && o->vocab && (rc = igi_vocab_load(o->vocab, &idx->vocab, err)))
        goto fail;
    idx->hcache = igi_hcache_new();
    if ((rc = ig_attach_fingerprint(idx->dir, &idx->attach_fp, &(uint64_t){0}, err)))
        goto fail;
    igi_index_make_pool(idx);
    layout_free(&l);
    *out = idx;
    return 0;
fail:
    layout_free(&l);
    ig_index_close(&idx);
    return rc;
}

void ig_attach_options_default(ig_attach_options *o) { memset(o, 0, sizeof *o); }

int ig_attach_fingerprint(const char *dir, uint64_t *fingerprint, uint64_t *bytes, ig_error *err)
{
    ig_hash h;
    igi_hash_init(&h);
    *bytes = 0;
    layout l;
    int rc = find_layout(dir, &l, err);
    if (rc)
        return rc;
    for (uint32_t i = 0; !rc && i < l.n; i++)
        for (int f = 0; f < AF_N; f++) {
            struct stat st;
            if (!l.s[i].p[f])
                continue;
            if (stat(l.s[i].p[f], &st) != 0) {
                rc = igi_error_errno(err, errno, l.s[i].p[f], "cannot stat");
                break;
            }
            /* Size and modification time alone miss a file replaced by one of the same size with
             * its time carried over (cp -p, rsync -a, touch -r, a restore); the inode and the
             * status-change time, which no user call can set back, catch those too. */
            uint64_t v[6] = {(uint64_t)st.st_size,       (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
                             (uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec, (uint64_t)st.st_ino};
            igi_hash_update(&h, l.s[i].p[f], strlen(l.s[i].p[f]) + 1);
            igi_hash_update(&h, v, sizeof v);
            *bytes += (uint64_t)st.st_size;
        }
    layout_free(&l);
    *fingerprint = igi_hash_final(&h);
    return rc;
}

/* Document d's record of shard s's metadata file: from its offset to the next document's
 * (a record may span lines), its line breaks at the end left out. The last record runs to
 * the file's end, unless that is past IG_DOC_METADATA_MAX bytes (a file grown under the
 * index): then it ends at its first newline. No more than the cap is ever read. 0,
 * IG_ENOTFOUND (no metadata, or offsets outside the file: checked at attach, a file changed
 * since is not followed) or IG_ECORRUPT (a record longer than the cap). */
static int meta_record(const ig_shard *s, uint64_t d, const char **p, size_t *n)
{
    if (!s->metaoff || d >= s->ndocs)
        return IG_ENOTFOUND;
    uint64_t a = ig_load_le64(s->metaoff + d * 8);
    uint64_t z = d + 1 < s->ndocs ? ig_load_le64(s->metaoff + (d + 1) * 8) : s->metadata_len;
    if (z < a || z > s->metadata_len)
        return IG_ENOTFOUND;
    if (z - a > IG_DOC_METADATA_MAX) {
        const uint8_t *nl = d + 1 == s->ndocs ? memchr(s->metadata + a, '\n', IG_DOC_METADATA_MAX + 1) : NULL;
        if (!nl)
            return IG_ECORRUPT;
        z = (uint64_t)(nl - s->metadata);
    }
    while (z > a && (s->metadata[z - 1] == '\n' || s->metadata[z - 1] == '\r'))
        z--;
    *p = (const char *)s->metadata + a;
    *n = (size_t)(z - a);
    return 0;
}

int ig_doc_metadata(const ig_index *idx, uint64_t id, const char **p, size_t *n)
{
    ig_doc d;
    if (!idx || !idx->tw || ig_doc_get(idx, id, &d, NULL))
        return IG_ENOTFOUND;
    const ig_shard *s = &idx->shards[d.shard];
    return meta_record(s, id - s->doc_base, p, n);
}

const char *igi_token_doc_name(const ig_shard *s, uint64_t d, uint64_t *source_line)
{
    *source_line = 0;
    if (!s->metaoff || d >= s->ndocs)
        return s->names;
    ig_shard *w = (ig_shard *)s; /* the names are made on demand: a cache, not a change */
    char *_Atomic *names = atomic_load(&w->doc_names);
    if (!names) { /* made once; a thread that loses the race frees its own */
        char *_Atomic *fresh = calloc(s->ndocs, sizeof *fresh), *_Atomic *none = NULL;
        if (!fresh)
            return s->names;
        if (atomic_compare_exchange_strong(&w->doc_names, &none, fresh))
            names = fresh;
        else {
            free((void *)fresh);
            names = none;
        }
    }
    const char *rec;
    size_t rlen;
    json_t *j = NULL;
    if (!meta_record(s, d, &rec, &rlen)) {
        json_error_t je;
        int why;
        j = ig_json_parse(rec, rlen, 0, &je, &why);
    }
    json_t *ln = j ? json_object_get(j, "linenum") : NULL;
    if (json_is_integer(ln) && json_integer_value(ln) >= 0)
        *source_line = (uint64_t)json_integer_value(ln) + 1;
    char *name = atomic_load(&names[d]);
    if (!name) {
        json_t *path = j ? json_object_get(j, "path") : NULL;
        char *fresh = json_is_string(path) ? igi_strdup(json_string_value(path)) : NULL, *none = NULL;
        if (fresh && !atomic_compare_exchange_strong(&names[d], &none, fresh)) {
            free(fresh);
            fresh = none;
        }
        name = fresh;
    }
    json_decref(j);
    return name ? name : s->names;
}

int ig_index_attach_verify(const ig_index *idx, const volatile int *cancel, ig_error *err)
{
    if (!idx || !idx->tw)
        return ig_error_set(err, IG_EUSAGE, "not an attached token index");
    const uint32_t tw = idx->tw;
    for (uint32_t i = 0; i < idx->nshards; i++) {
        const ig_shard *s = &idx->shards[i];
        for (uint64_t d = 0; d < s->ndocs; d++) { /* every separator where the offsets say */
            uint64_t at = ig_shard_doc_start(s, d) - tw;
            for (uint32_t k = 0; k < tw; k++)
                if (s->text[at + k] != 0xFF) {
                    /* the shard's other files are named as its table is: table.N or N/table */
                    const char *t = strstr(s->sa_name, "table");
                    int pre = t ? (int)(t - s->sa_name) : 0;
                    const char *post = t ? t + 5 : "";
                    return ig_error_set(err, IG_ECORRUPT,
                                        "%s/%.*stokenized%s: byte %" PRIu64 ": no separator where %.*soffset%s says "
                                        "document %" PRIu64 " starts",
                                        idx->dir, pre, s->sa_name, post, at, pre, s->sa_name, post, d);
                }
        }
        uint64_t prev = 0;
        for (uint64_t r = 0; r < s->rows; r++) { /* every row: in the text, at a token, in order */
            if ((r & 0xFFFF) == 0 && cancel && *cancel)
                return ig_error_set(err, IG_ECANCELLED, "verification cancelled");
            uint64_t x = ig_shard_sa_raw(s, s->pw, r);
            if (x >= s->n || x % tw)
                return ig_error_set(err, IG_ECORRUPT, "%s/%s: row %" PRIu64 ": pointer %" PRIu64 " is %s", idx->dir,
                                    s->sa_name, r, x, x >= s->n ? "past the end of the text" : "not at a token start");
            if (r && (suffix_order(s, prev, x) > 0 || prev == x))
                return ig_error_set(err, IG_ECORRUPT, "%s/%s: rows %" PRIu64 " and %" PRIu64 " are out of order",
                                    idx->dir, s->sa_name, r - 1, r);
            prev = x;
        }
    }
    return 0;
}
