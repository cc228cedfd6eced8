/*
 * dups against brute force on random small corpora: documents over a small alphabet (with
 * a two-byte character) holding copies of earlier pieces (overlapping and nested repeats),
 * and pairs of neighbouring documents that end and start with the two halves of a string
 * found whole elsewhere (a repeat that would cross a document end if it were joined),
 * built in one shard or several. Checked: the set of maximal repeats of at least K bytes
 * with their counts, documents and kinds, under each filter; the duplicated bytes; the
 * removed ranges of every shard; the JSONL output record by record, and that it holds no
 * repeat of K bytes or more; a cancelled or failed write leaves no file; cancel and the
 * memory budget. Then documents holding a long text several times, against a reference
 * from a suffix array of the whole corpus (the repeats and their counts).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oracle.h"

/* ---- the corpus ---- */

static void random_piece(test_rng *r, ig_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rng_below(r, 20);
        if (x < 9)
            ig_buf_append(b, "a", 1);
        else if (x < 16)
            ig_buf_append(b, "b", 1);
        else if (x < 18)
            ig_buf_append(b, "c", 1);
        else if (x < 19)
            ig_buf_append(b, "\n", 1);
        else
            ig_buf_append(b, "\xc3\xa9", 2); /* é */
    }
}

/* Appends a piece copied from the text so far (earlier documents or this one). */
static void copy_piece(test_rng *r, ig_buf *docs, size_t d, ig_buf *b)
{
    const ig_buf *from = rng_below(r, 2) || !d ? b : &docs[rng_below(r, d)];
    if (!from->len)
        return;
    size_t a = (size_t)rng_below(r, from->len), l = 1 + (size_t)rng_below(r, from->len - a);
    if (l > 24)
        l = 24;
    /* whole characters: the text stays valid UTF-8 */
    while (a > 0 && (from->data[a] & 0xC0) == 0x80)
        a--, l++;
    while (a + l < from->len && (from->data[a + l] & 0xC0) == 0x80)
        l++;
    uint8_t tmp[32];
    memcpy(tmp, from->data + a, l); /* b may be `from`: copy first */
    ig_buf_append(b, tmp, l);
}

static size_t make_corpus(test_rng *r, ig_buf *docs)
{
    size_t nd = 1 + (size_t)rng_below(r, 8);
    ig_buf carry = {0};
    for (size_t d = 0; d < nd; d++) {
        ig_buf *b = &docs[d];
        ig_buf_append(b, carry.data, carry.len);
        carry.len = 0;
        size_t pieces = 1 + (size_t)rng_below(r, 5);
        for (size_t p = 0; p < pieces; p++) {
            if (rng_below(r, 2))
                copy_piece(r, docs, d, b);
            else
                random_piece(r, b, 1 + (size_t)rng_below(r, 10));
        }
        /* end with the first half of a string of an earlier document, the next document
         * starting with its second half */
        if (d >= 1 && d + 1 < nd && rng_below(r, 3) == 0 && docs[d - 1].len >= 2) {
            const ig_buf *from = &docs[rng_below(r, d)];
            if (from->len >= 2) {
                size_t a = (size_t)rng_below(r, from->len - 1), l = 2 + (size_t)rng_below(r, from->len - a - 1);
                size_t h = 1 + (size_t)rng_below(r, l - 1);
                while (a > 0 && (from->data[a] & 0xC0) == 0x80)
                    a--, l++, h++;
                while (a + l < from->len && (from->data[a + l] & 0xC0) == 0x80)
                    l++;
                while (h < l && (from->data[a + h] & 0xC0) == 0x80)
                    h++;
                ig_buf_append(b, from->data + a, h);
                ig_buf_append(&carry, from->data + a + h, l - h);
            }
        }
        if (!b->len)
            ig_buf_append(b, "a", 1);
    }
    ig_buf_free(&carry);
    return nd;
}

/* ---- brute force ---- */

typedef struct brep {
    const uint8_t *p;
    size_t len, count, documents;
    int within, across;
} brep;

/* Occurrences of p[0, l) in the corpus; per document counts in per_doc. */
static size_t occurrences(const ig_buf *docs, size_t nd, const uint8_t *p, size_t l, size_t *per_doc)
{
    size_t c = 0;
    for (size_t d = 0; d < nd; d++) {
        per_doc[d] = 0;
        for (size_t j = 0; j + l <= docs[d].len; j++)
            if (!memcmp(docs[d].data + j, p, l))
                per_doc[d]++;
        c += per_doc[d];
    }
    return c;
}

/* Whether every occurrence of p[0, l) has the same byte at `side` (-1: before, +1: after),
 * a document edge counting as a byte no other occurrence has. */
static int extendable(const ig_buf *docs, size_t nd, const uint8_t *p, size_t l, int side)
{
    int seen = -1;
    for (size_t d = 0; d < nd; d++)
        for (size_t j = 0; j + l <= docs[d].len; j++) {
            if (memcmp(docs[d].data + j, p, l))
                continue;
            int c;
            if (side < 0)
                c = j ? docs[d].data[j - 1] : -1;
            else
                c = j + l < docs[d].len ? docs[d].data[j + l] : -1;
            if (c < 0)
                return 0;
            if (seen < 0)
                seen = c;
            else if (seen != c)
                return 0;
        }
    return 1;
}

/* Whether p[0, l) occurs in docs[d] before offset `before` (or anywhere in docs[e < d]). */
static int occurs_earlier_in(const ig_buf *b, const uint8_t *p, size_t l, size_t before)
{
    for (size_t j = 0; j < before && j + l <= b->len; j++)
        if (!memcmp(b->data + j, p, l))
            return 1;
    return 0;
}

static size_t brute_repeats(const ig_buf *docs, size_t nd, size_t k, brep **out)
{
    size_t n = 0, cap = 16;
    brep *v = malloc(cap * sizeof *v);
    size_t per[16];
    for (size_t d = 0; d < nd; d++)
        for (size_t i = 0; i < docs[d].len; i++)
            for (size_t l = k; i + l <= docs[d].len; l++) {
                const uint8_t *p = docs[d].data + i;
                /* each string once: at its first occurrence */
                int earlier = occurs_earlier_in(&docs[d], p, l, i);
                for (size_t e = 0; !earlier && e < d; e++)
                    earlier = occurs_earlier_in(&docs[e], p, l, docs[e].len);
                if (earlier)
                    continue;
                size_t c = occurrences(docs, nd, p, l, per);
                if (c < 2)
                    break; /* longer strings from here occur once too */
                if (extendable(docs, nd, p, l, -1) || extendable(docs, nd, p, l, +1))
                    continue;
                size_t nds = 0;
                int within = 0;
                for (size_t e = 0; e < nd; e++) {
                    nds += per[e] > 0;
                    within |= per[e] > 1;
                }
                if (n == cap)
                    v = realloc(v, (cap *= 2) * sizeof *v);
                v[n++] = (brep){p, l, c, nds, within, nds > 1};
            }
    *out = v;
    return n;
}

/* removed[d][i]: byte i of document d lies in a later window of the kind asked (0 any,
 * 1 an earlier copy in the same document, 2 a copy in an earlier document). */
static void brute_removed(const ig_buf *docs, size_t nd, size_t k, int kind, uint8_t **removed)
{
    for (size_t d = 0; d < nd; d++) {
        memset(removed[d], 0, docs[d].len + 1);
        for (size_t i = 0; i + k <= docs[d].len; i++) {
            const uint8_t *p = docs[d].data + i;
            int same = occurs_earlier_in(&docs[d], p, k, i), other = 0;
            for (size_t e = 0; !other && e < d; e++)
                other = occurs_earlier_in(&docs[e], p, k, docs[e].len);
            int later = kind == 1 ? same : kind == 2 ? other : same || other;
            if (later)
                memset(removed[d] + i, 1, k);
        }
    }
}

static int cmp_brep(const void *a, const void *b)
{
    const brep *x = a, *y = b;
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, m);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* ---- one case ---- */

static void one_case(test_rng *r, const char *dir, int ci)
{
    ig_buf docs[16] = {{0}};
    size_t nd = make_corpus(r, docs);
    ig_source src[16];
    for (size_t d = 0; d < nd; d++)
        src[d] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)docs[d].data, .text_len = docs[d].len};
    static const uint64_t shard_sizes[] = {16, 48, 120, 1u << 30};
    ig_index *idx = NULL;
    if (oracle_build(dir, src, nd, shard_sizes[rng_below(r, 4)], rng_below(r, 4) == 0, 0, &idx))
        goto out;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    CHECK(info.documents == nd, "case %d: %zu documents indexed as %llu", ci, nd, (unsigned long long)info.documents);
    if (info.documents != nd)
        goto out;
    size_t k = 1 + (size_t)rng_below(r, 6);
    brep *want;
    size_t nw = brute_repeats(docs, nd, k, &want);
    qsort(want, nw, sizeof *want, cmp_brep);
    size_t want_within = 0, want_across = 0;
    for (size_t i = 0; i < nw; i++) {
        want_within += want[i].within;
        want_across += want[i].across;
    }
    uint8_t *removed[16];
    for (size_t d = 0; d < nd; d++)
        removed[d] = malloc(docs[d].len + 1);
    ig_op_ctx ctx = {idx, "t", NULL};
    for (int kind = 0; kind < 3; kind++) {
        ig_dups_opts o;
        ig_dups_defaults(&o);
        o.min_len = k;
        o.top = 1000000;
        o.positions = rng_below(r, 3);
        o.threads = 1 + rng_below(r, 4);
        o.within_doc = kind == 1;
        o.across_docs = kind == 2;
        ig_dups_result res;
        ig_error e;
        int rc = ig_dups_run(&ctx, &o, &res, &e);
        CHECK(rc == 0, "case %d: dups: %s", ci, e.msg);
        if (rc)
            continue;
        /* the repeats */
        size_t nk = 0;
        brep *got = calloc(res.ntop + 1, sizeof *got);
        for (size_t i = 0; i < res.ntop; i++) {
            const ig_dups_repeat *p = &res.top[i];
            size_t len = (size_t)p->length;
            const uint8_t *t = ig_text(idx, p->first.shard, p->first.offset, &len);
            CHECK(len == p->length, "case %d: repeat text clipped", ci);
            got[i] = (brep){t, (size_t)p->length, (size_t)p->count, (size_t)p->documents, p->within_doc, p->across_docs};
            CHECK(p->nsources == (p->count < o.positions ? p->count : o.positions), "case %d: %zu sources", ci,
                  p->nsources);
            for (size_t s = 1; s < p->nsources; s++)
                CHECK(p->sources[s - 1].loc.doc <= p->sources[s].loc.doc, "case %d: sources in corpus order", ci);
            if (i)
                CHECK(p->length * p->count <= res.top[i - 1].length * res.top[i - 1].count, "case %d: top order", ci);
        }
        qsort(got, res.ntop, sizeof *got, cmp_brep);
        for (size_t i = 0; i < nw; i++) {
            const brep *w = &want[i];
            if ((kind == 1 && !w->within) || (kind == 2 && !w->across))
                continue;
            int ok = nk < res.ntop && !cmp_brep(w, &got[nk]);
            CHECK(ok, "case %d (K=%zu, filter %d): repeat \"%.*s\" (x%zu) %s", ci, k, kind, (int)w->len,
                  (const char *)w->p, w->count, nk < res.ntop ? "differs from the engine's" : "missing");
            if (!ok)
                break;
            CHECK(got[nk].count == w->count && got[nk].documents == w->documents && got[nk].within == w->within &&
                      got[nk].across == w->across,
                  "case %d: repeat \"%.*s\": count %zu/%zu docs %zu/%zu", ci, (int)w->len, (const char *)w->p,
                  got[nk].count, w->count, got[nk].documents, w->documents);
            nk++;
        }
        CHECK(nk == res.ntop, "case %d (K=%zu, filter %d): the engine lists %zu repeats, brute force %zu", ci, k, kind,
              res.ntop, nk);
        CHECK(res.repeats == res.ntop && res.repeats_all == nw && res.repeats_within == want_within &&
                  res.repeats_across == want_across,
              "case %d: repeat counts", ci);
        free(got);
        /* the duplicated bytes and the removed ranges */
        uint64_t dup[3] = {0};
        for (int kk = 0; kk < 3; kk++) {
            brute_removed(docs, nd, k, kk, removed);
            for (size_t d = 0; d < nd; d++)
                for (size_t i = 0; i < docs[d].len; i++)
                    dup[kk] += removed[d][i];
        }
        CHECK(res.duplicated_any == dup[0] && res.duplicated_within == dup[1] && res.duplicated_across == dup[2],
              "case %d (K=%zu): duplicated %llu/%llu/%llu, brute %llu/%llu/%llu", ci, k,
              (unsigned long long)res.duplicated_any, (unsigned long long)res.duplicated_within,
              (unsigned long long)res.duplicated_across, (unsigned long long)dup[0], (unsigned long long)dup[1],
              (unsigned long long)dup[2]);
        CHECK(res.duplicated == dup[kind] && res.bytes == info.bytes - nd, "case %d: duplicated under filter", ci);
        brute_removed(docs, nd, k, kind, removed);
        for (uint32_t s = 0; s < info.shards; s++) {
            ig_range *rg;
            size_t nr;
            rc = ig_dups_ranges(idx, &res, s, &rg, &nr, &e);
            CHECK(rc == 0, "ranges: %s", e.msg);
            if (rc)
                continue;
            for (size_t d = 0; d < nd; d++) {
                ig_doc doc;
                ig_doc_get(idx, d, &doc, &e);
                if (doc.shard != s)
                    continue;
                /* the ranges inside this document, as a byte mask, and merged */
                uint8_t *mask = calloc(docs[d].len + 1, 1);
                for (size_t x = 0; x < nr; x++) {
                    if (x)
                        CHECK(rg[x - 1].hi < rg[x].lo, "case %d: ranges merged and in order", ci);
                    if (rg[x].lo >= doc.start && rg[x].lo < doc.start + doc.length) {
                        CHECK(rg[x].hi <= doc.start + doc.length, "case %d: a range crosses a document end", ci);
                        for (uint64_t y = rg[x].lo; y < rg[x].hi && y < doc.start + doc.length; y++)
                            mask[y - doc.start] = 1;
                    }
                }
                CHECK(!memcmp(mask, removed[d], docs[d].len), "case %d (K=%zu, filter %d): removed bytes of doc %zu",
                      ci, k, kind, d);
                free(mask);
            }
            free(rg);
        }
        /* the output: the kept pieces of each document (removed ranges widened to whole
         * characters), in order, and no repeat of K bytes or more among them */
        char *path = igi_aprintf("%s.out%d.jsonl", dir, kind);
        uint64_t records, kept;
        rc = ig_dups_write(idx, &res, path, NULL, &records, &kept, &e);
        CHECK(rc == 0, "write: %s", e.msg);
        FILE *f = rc ? NULL : fopen(path, "r");
        char line[8192];
        size_t nrec = 0;
        ig_buf all = {0};
        size_t *piece_at = calloc(4096, sizeof *piece_at), npieces = 0;
        for (size_t d = 0; f && d < nd; d++) {
            ig_doc doc;
            ig_doc_get(idx, d, &doc, &e);
            uint8_t *rm = removed[d];
            size_t L = docs[d].len;
            /* a character with a removed byte is removed whole */
            for (size_t i = 0; i < L;) {
                size_t j = i + 1;
                while (j < L && (docs[d].data[j] & 0xC0) == 0x80)
                    j++;
                int any = 0;
                for (size_t x = i; x < j; x++)
                    any |= rm[x];
                if (any)
                    memset(rm + i, 1, j - i);
                i = j;
            }
            for (size_t i = 0; i < L;) {
                if (rm[i]) {
                    i++;
                    continue;
                }
                size_t j = i;
                while (j < L && !rm[j])
                    j++;
                CHECK(fgets(line, sizeof line, f) != NULL, "case %d: record missing", ci);
                json_error_t je;
                json_t *rec = json_loads(line, 0, &je);
                CHECK(rec != NULL, "case %d: bad JSON line %s", ci, line);
                if (rec) {
                    json_t *t = json_object_get(rec, "text"), *nm = json_object_get(rec, "name");
                    CHECK(t && json_string_length(t) == j - i && !memcmp(json_string_value(t), docs[d].data + i, j - i),
                          "case %d: record text of doc %zu at %zu", ci, d, i);
                    CHECK(nm && !strcmp(json_string_value(nm), doc.name), "case %d: record name", ci);
                    CHECK(json_integer_value(json_object_get(rec, "source_line")) == (json_int_t)doc.source_line,
                          "case %d: source_line", ci);
                    json_decref(rec);
                }
                if (npieces < 4096)
                    piece_at[npieces++] = all.len;
                ig_buf_append(&all, docs[d].data + i, j - i);
                nrec++;
                i = j;
            }
        }
        if (f) {
            CHECK(fgets(line, sizeof line, f) == NULL, "case %d: extra records", ci);
            fclose(f);
            CHECK(records == nrec, "case %d: %llu records reported, %zu expected", ci, (unsigned long long)records,
                  nrec);
            CHECK(kept == all.len, "case %d: kept bytes", ci);
        }
        /* no K-window of the output occurs twice (pieces are separate records); a filter
         * removes only the copies of its kind */
        for (size_t pa = 0; kind == 0 && pa < npieces; pa++) {
            size_t ea = pa + 1 < npieces ? piece_at[pa + 1] : all.len;
            for (size_t i = piece_at[pa]; i + k <= ea; i++)
                for (size_t pb = 0; pb < npieces; pb++) {
                    size_t eb = pb + 1 < npieces ? piece_at[pb + 1] : all.len;
                    for (size_t j = piece_at[pb]; j + k <= eb; j++)
                        if (j != i)
                            CHECK(memcmp(all.data + i, all.data + j, k), "case %d: the output repeats %zu bytes", ci,
                                  k);
                }
        }
        free(piece_at);
        ig_buf_free(&all);
        unlink(path);
        free(path);
        ig_dups_result_free(&res);
    }
    for (size_t d = 0; d < nd; d++)
        free(removed[d]);
    free(want);
out:
    ig_index_close(&idx);
    for (size_t d = 0; d < nd; d++)
        ig_buf_free(&docs[d]);
}

/* Files in dir whose name starts with prefix. */
static int files_like(const char *dir, const char *prefix)
{
    DIR *dd = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd)))
        n += !strncmp(de->d_name, prefix, strlen(prefix));
    if (dd)
        closedir(dd);
    return n;
}

/* Cancel, the memory budget, bad options and failed writes. */
static void edge_cases(const char *tmp)
{
    char *dir = igi_aprintf("%s/edge", tmp);
    const char *text = "the cat sat on the mat; the cat sat on the mat";
    ig_source src[2] = {{.kind = IG_SOURCE_INLINE, .text = text, .text_len = strlen(text)},
                        {.kind = IG_SOURCE_INLINE, .text = text, .text_len = strlen(text)}};
    ig_index *idx = NULL;
    if (oracle_build(dir, src, 2, 1u << 30, 0, 0, &idx)) {
        free(dir);
        return;
    }
    volatile int cancel = 1;
    ig_op_ctx ctx = {idx, "t", &cancel};
    ig_dups_opts o;
    ig_dups_defaults(&o);
    o.min_len = 8;
    ig_dups_result res;
    ig_error e;
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_ECANCELLED, "a raised cancel flag stops dups");
    cancel = 0;
    o.memory = 8;
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_ENOMEM && strstr(e.msg, "{memory}"), "budget: %s", e.msg);
    o.memory = 64 + 80; /* the marks fit, a run of more than one occurrence does not */
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_ENOMEM, "budget for the occurrences: %s", e.msg);
    ig_dups_defaults(&o);
    o.min_len = 8;
    o.within_doc = o.across_docs = 1;
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_EUSAGE, "both filters refused");
    o.across_docs = 0;
    /* {write} is exact bytes (no NUL after them when a caller fills it): read by its length */
    char *w = malloc(3);
    memcpy(w, "a\0b", 3);
    o.write = (ig_bytes){(uint8_t *)w, 3};
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_EUSAGE && strstr(e.msg, "{write}") && strstr(e.msg, "NUL"),
          "a NUL in write: %s", e.msg);
    o.write = (ig_bytes){(uint8_t *)w, 1}; /* "a", unterminated: a target in the working folder */
    int rc0 = ig_dups_run(&ctx, &o, &res, &e);
    CHECK(rc0 == 0, "an unterminated write target: %s", e.msg);
    if (!rc0)
        ig_dups_result_free(&res);
    free(w);
    o.write = (ig_bytes){0};
    int rc = ig_dups_run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "dups: %s", e.msg);
    if (!rc) {
        /* the top repeat: the sentence and its copy in each document */
        CHECK(res.ntop && res.top[0].count == 4 && res.top[0].length == 22, "top repeat %llu x %llu",
              res.ntop ? (unsigned long long)res.top[0].length : 0ULL,
              res.ntop ? (unsigned long long)res.top[0].count : 0ULL);
        char *out = igi_aprintf("%s/out.jsonl", tmp);
        cancel = 1;
        CHECK(ig_dups_write(idx, &res, out, &cancel, NULL, NULL, &e) == IG_ECANCELLED, "write cancelled");
        struct stat st;
        CHECK(stat(out, &st) != 0 && files_like(tmp, "out.jsonl") == 0, "a cancelled write leaves no file");
        char *bad = igi_aprintf("%s/no/such/dir/out.jsonl", tmp);
        CHECK(ig_dups_write(idx, &res, bad, NULL, NULL, NULL, &e) != 0 && strstr(e.msg, bad), "unwritable: %s", e.msg);
        free(bad);
        free(out);
        ig_dups_result_free(&res);
    }
    ctx.idx = NULL;
    CHECK(ig_dups_run(&ctx, &o, &res, &e) == IG_EUSAGE, "no index");
    ig_index_close(&idx);
    free(dir);
}

/* ---- long copies: a reference from a suffix array of the whole corpus ---- */

/* Documents holding slices of one long random text (hundreds of bytes, several times, some
 * twice in one document, shifted): the pairs of suffixes a run compares share hundreds of
 * bytes, as in a corpus that holds a passage many times, where the engine answers the
 * shifted pairs from the spans it measured. The brute force above is too slow for these;
 * the reference here sorts every suffix of the documents joined by 0xFF and reads the
 * maximal repeats from the LCP intervals (a left-diverse interval of lcp h ≥ K is one). */
static const uint8_t *ref_text;
static size_t ref_n;

static size_t ref_lcp(size_t i, size_t j)
{
    size_t l = 0;
    while (i + l < ref_n && j + l < ref_n && ref_text[i + l] == ref_text[j + l] && ref_text[i + l] != 0xFF)
        l++;
    return l;
}

static int ref_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b, l = ref_lcp(i, j);
    int x = i + l < ref_n ? ref_text[i + l] : -1, y = j + l < ref_n ? ref_text[j + l] : -1;
    if (x == y) /* both at a document end: equal as far as a repeat goes */
        return i < j ? -1 : i > j;
    return x < y ? -1 : 1;
}

static size_t ref_repeats(const ig_buf *docs, size_t nd, size_t k, brep **out)
{
    ig_buf all = {0};
    size_t start[17];
    for (size_t d = 0; d < nd; d++) {
        start[d] = all.len;
        ig_buf_append(&all, docs[d].data, docs[d].len);
        ig_buf_append(&all, "\xff", 1);
    }
    start[nd] = all.len;
    ref_text = all.data;
    ref_n = all.len;
    size_t n = all.len, *sa = malloc(n * sizeof *sa), *lcp = calloc(n + 1, sizeof *lcp);
    for (size_t i = 0; i < n; i++)
        sa[i] = i;
    qsort(sa, n, sizeof *sa, ref_cmp);
    for (size_t i = 1; i < n; i++)
        lcp[i] = ref_lcp(sa[i - 1], sa[i]);
    struct { size_t h, lb; } *st = malloc((n + 1) * sizeof *st);
    size_t sp = 0, nr = 0, cap = 16;
    brep *v = malloc(cap * sizeof *v);
    st[0].h = 0, st[0].lb = 0;
    for (size_t i = 1; i <= n; i++) {
        size_t l = i < n ? lcp[i] : 0, lb = i - 1;
        while (st[sp].h > l) {
            size_t h = st[sp].h, a = st[sp].lb, b = i - 1; /* rows [a, b] share h bytes */
            lb = a;
            sp--;
            if (h < k)
                continue;
            int left = -2, diverse = 0;
            size_t per[16] = {0}, first = SIZE_MAX;
            for (size_t x = a; x <= b; x++) {
                size_t q = sa[x], d = 0;
                while (start[d + 1] <= q)
                    d++;
                per[d]++;
                first = q < first ? q : first;
                int c = q == start[d] ? -1 : ref_text[q - 1];
                diverse |= c == -1 || (left != -2 && c != left);
                left = c;
            }
            if (!diverse)
                continue;
            size_t fd = 0, nds = 0;
            int within = 0;
            while (start[fd + 1] <= first)
                fd++;
            for (size_t d = 0; d < nd; d++) {
                nds += per[d] > 0;
                within |= per[d] > 1;
            }
            if (nr == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            v[nr++] = (brep){docs[fd].data + (first - start[fd]), h, b - a + 1, nds, within, nds > 1};
        }
        if (st[sp].h < l) {
            sp++;
            st[sp].h = l;
            st[sp].lb = lb;
        }
    }
    free(st);
    free(lcp);
    free(sa);
    ig_buf_free(&all);
    *out = v;
    return nr;
}

static void long_case(test_rng *r, const char *dir, int ci)
{
    ig_buf base = {0}, docs[16] = {{0}};
    random_piece(r, &base, 400 + (size_t)rng_below(r, 600));
    size_t nd = 2 + (size_t)rng_below(r, 5);
    for (size_t d = 0; d < nd; d++) {
        size_t copies = 1 + (size_t)rng_below(r, 2);
        for (size_t c = 0; c < copies; c++) {
            random_piece(r, &docs[d], (size_t)rng_below(r, 12));
            size_t a = (size_t)rng_below(r, 40), l = 300 + (size_t)rng_below(r, base.len - a - 300);
            while (a > 0 && (base.data[a] & 0xC0) == 0x80) /* whole characters */
                a--, l++;
            while (a + l < base.len && (base.data[a + l] & 0xC0) == 0x80)
                l++;
            ig_buf_append(&docs[d], base.data + a, l);
        }
        random_piece(r, &docs[d], (size_t)rng_below(r, 6));
    }
    ig_source src[16];
    for (size_t d = 0; d < nd; d++)
        src[d] = (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)docs[d].data, .text_len = docs[d].len};
    static const uint64_t shard_sizes[] = {700, 2500, 1u << 30};
    ig_index *idx = NULL;
    size_t k = 1 + (size_t)rng_below(r, 12);
    brep *want = NULL;
    size_t nw = 0;
    if (oracle_build(dir, src, nd, shard_sizes[rng_below(r, 3)], 0, 0, &idx))
        goto out;
    nw = ref_repeats(docs, nd, k, &want);
    qsort(want, nw, sizeof *want, cmp_brep);
    ig_op_ctx ctx = {idx, "t", NULL};
    ig_dups_opts o;
    ig_dups_defaults(&o);
    o.min_len = k;
    o.top = 1000000;
    o.threads = 1 + rng_below(r, 3);
    ig_dups_result res;
    ig_error e;
    int rc = ig_dups_run(&ctx, &o, &res, &e);
    CHECK(rc == 0, "long case %d: dups: %s", ci, e.msg);
    if (rc)
        goto out;
    brep *got = calloc(res.ntop + 1, sizeof *got);
    for (size_t i = 0; i < res.ntop; i++) {
        const ig_dups_repeat *p = &res.top[i];
        size_t len = (size_t)p->length;
        const uint8_t *t = ig_text(idx, p->first.shard, p->first.offset, &len);
        got[i] = (brep){t, (size_t)p->length, (size_t)p->count, (size_t)p->documents, p->within_doc, p->across_docs};
    }
    qsort(got, res.ntop, sizeof *got, cmp_brep);
    CHECK(res.ntop == nw && res.repeats_all == nw, "long case %d (K=%zu): the engine lists %zu repeats, the reference %zu",
          ci, k, res.ntop, nw);
    for (size_t i = 0; i < nw && i < res.ntop; i++) {
        int same = !cmp_brep(&want[i], &got[i]) && got[i].count == want[i].count &&
                   got[i].documents == want[i].documents && got[i].within == want[i].within;
        CHECK(same, "long case %d (K=%zu): repeat %zu: %zu bytes x%zu in %zu docs, the reference %zu bytes x%zu in %zu",
              ci, k, i, got[i].len, got[i].count, got[i].documents, want[i].len, want[i].count, want[i].documents);
        if (!same)
            break;
    }
    free(got);
    ig_dups_result_free(&res);
out:
    free(want);
    ig_index_close(&idx);
    for (size_t d = 0; d < nd; d++)
        ig_buf_free(&docs[d]);
    ig_buf_free(&base);
}

int main(void)
{
    char tmpl[] = "/tmp/ig-dups-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "mkdtemp");
    if (!tmp)
        return check_done("dups");
    edge_cases(tmp);
    test_rng r = {20261125};
    int n = scaled(300);
    for (int c = 0; c < n; c++) {
        char *dir = igi_aprintf("%s/c%d", tmp, c);
        one_case(&r, dir, c);
        free(dir);
    }
    for (int c = 0; c < scaled(40); c++) {
        char *dir = igi_aprintf("%s/l%d", tmp, c);
        long_case(&r, dir, c);
        free(dir);
    }
    ig_error e;
    igi_remove_tree(tmp, &e);
    return check_done("dups");
}
