/*
 * Helpers shared by the oracle tests: the IG_ORACLE_SCALE case count, random code points and
 * their UTF-8 encoding, and building
 * and opening an index of inline documents (bytes kept as they are: no NFC), with
 * failures recorded as checks.
 */
#ifndef IG_TEST_ORACLE_H
#define IG_TEST_ORACLE_H

#include "../unit/check.h"
#include "infinigram/infinigram.h"
#include "util/util.h"

/* IG_ORACLE_SCALE (default 1.0; sanitizer runs use less) scales the number of cases. */
static inline double oracle_scale(void)
{
    static double s;
    if (!s) {
        const char *e = getenv("IG_ORACLE_SCALE");
        s = e ? atof(e) : 1.0;
        if (!(s > 0))
            s = 1.0;
    }
    return s;
}

/* n cases scaled down by IG_ORACLE_SCALE, at least one. */
static inline int scaled(int n)
{
    int k = (int)(n * oracle_scale());
    return k < 1 ? 1 : k;
}

/* A random code point for the text shapes: a quarter each of printable ASCII, two-, three-
 * (no surrogates) and four-byte characters, one in ten replaced by a newline. */
static inline uint32_t random_cp(test_rng *r)
{
    uint32_t cp;
    switch (rng_below(r, 4)) {
    case 0: cp = 0x20 + (uint32_t)rng_below(r, 0x5f); break;
    case 1: cp = 0x80 + (uint32_t)rng_below(r, 0x780); break;
    case 2: do cp = 0x800 + (uint32_t)rng_below(r, 0xF800); while (cp >= 0xD800 && cp < 0xE000); break;
    default: cp = 0x10000 + (uint32_t)rng_below(r, 0x100000); break;
    }
    if (rng_below(r, 10) == 0)
        cp = '\n';
    return cp;
}

/* Appends the UTF-8 encoding of cp. */
static inline void put_cp(ig_buf *b, uint32_t cp)
{
    uint8_t u[4];
    size_t k;
    if (cp < 0x80) { u[0] = (uint8_t)cp; k = 1; }
    else if (cp < 0x800) { u[0] = 0xC0 | (cp >> 6); u[1] = 0x80 | (cp & 63); k = 2; }
    else if (cp < 0x10000) { u[0] = 0xE0 | (cp >> 12); u[1] = 0x80 | ((cp >> 6) & 63); u[2] = 0x80 | (cp & 63); k = 3; }
    else { u[0] = 0xF0 | (cp >> 18); u[1] = 0x80 | ((cp >> 12) & 63); u[2] = 0x80 | ((cp >> 6) & 63); u[3] = 0x80 | (cp & 63); k = 4; }
    ig_buf_append(b, u, k);
}

/* Documents [0, nd) cut into np contiguous parts, none empty (np ≤ nd, np ≤ 4): part k is
 * [cut[k], cut[k + 1]), cut[np] = nd. */
static inline void oracle_cut_parts(test_rng *rng, size_t nd, int np, size_t cut[5])
{
    cut[0] = 0;
    cut[np] = nd;
    for (int k = 1; k < np; k++)
        cut[k] = cut[k - 1] + 1 + rng_below(rng, nd - cut[k - 1] - (size_t)(np - k));
}

/* An inline source over doc's bytes (doc outlives it); an empty document gets `filler`, as
 * a document has bytes. */
static inline ig_source oracle_inline_source(ig_buf *doc, const char *filler)
{
    if (!doc->len)
        ig_buf_append(doc, filler, strlen(filler));
    return (ig_source){.kind = IG_SOURCE_INLINE, .text = (const char *)doc->data, .text_len = doc->len};
}

/* Frees n random documents and their array (and the sources over them, which may be NULL). */
static inline void oracle_docs_free(ig_buf *docs, size_t n, ig_source *src)
{
    for (size_t d = 0; docs && d < n; d++)
        ig_buf_free(&docs[d]);
    free(docs);
    free(src);
}

/* Builds an index of n sources into dir and opens it; 0 on success. */
/* Builds and opens an index: shards of shard_size, wide pointers, tables from prefix_min bytes
 * (0: the default), `stride` rows between sampled keys (0: 4 when prefix_min is set, so that the
 * key search runs on tiny shards; else the default), an lcp file when lcp. */
static inline int oracle_build_opts(const char *dir, const ig_source *src, size_t n, uint64_t shard_size, int wide,
                                    uint64_t prefix_min, uint32_t stride, int lcp, ig_index **out)
{
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.normalize = 0;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.shard_size = shard_size;
    bo.force_wide = wide;
    bo.prefix_min = prefix_min;
    bo.sample_stride = stride ? stride : prefix_min ? 4 : 0;
    bo.lcp = (uint8_t)lcp;
    ig_build_result res;
    ig_error e;
    int rc = ig_build_index(dir, src, n, &in, &bo, NULL, NULL, NULL, &res, &e);
    CHECK(rc == 0, "build %s: %s", dir, e.msg);
    if (rc)
        return rc;
    ig_build_result_free(&res);
    rc = ig_index_open(out, dir, &e);
    CHECK(rc == 0, "open %s: %s", dir, e.msg);
    return rc;
}

static inline int oracle_build(const char *dir, const ig_source *src, size_t n, uint64_t shard_size, int wide,
                               uint64_t prefix_min, ig_index **out)
{
    return oracle_build_opts(dir, src, n, shard_size, wide, prefix_min, 0, 0, out);
}

#endif
