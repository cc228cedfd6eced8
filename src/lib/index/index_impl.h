/*
 * In-memory view of an open index: one ig_shard per shard directory, pointing into
 * read-only mappings. Shared by the open code and the query code.
 */
#ifndef IG_INDEX_IMPL_H
#define IG_INDEX_IMPL_H

#include <endian.h>
#include <string.h>
#include "infinigram/index.h"
#include "format.h"
#include "util/pool.h"

typedef struct ig_map {
    void *addr;
    size_t len;
} ig_map;

typedef struct ig_shard {
    const uint8_t *text;     ///< n bytes
    uint64_t n;
    const uint8_t *sa;       ///< n pointers of idx->pw bytes
    const uint8_t *docs;     ///< ndocs + 1 LE u64
    const uint8_t *docmeta;  ///< ndocs × (LE u64 name offset, LE u64 source line)
    const char *names;
    uint64_t names_len;
    uint64_t ndocs;
    uint64_t doc_base;
    const uint8_t *prefix;   ///< prefix table or NULL (format.h)
    const uint8_t *sample;   ///< sampled keys or NULL (format.h): ceil(n / stride) big-endian u64
    ig_map maps[IG_NFILES];
} ig_shard;

struct ig_index {
    char *dir;
    ig_manifest man;
    uint32_t nshards;
    uint32_t pw;             ///< pointer width (4 or 5)
    int prefetch;            ///< prefetch bisection steps (ig_index_set_prefetch)
    ig_pool *pool;           ///< workers for per-shard work (multi-shard indexes only)
    ig_shard *shards;
};

static inline uint64_t ig_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

/** SA entry `r` of a shard with pointer width pw. */
static inline uint64_t ig_shard_sa(const ig_shard *s, uint32_t pw, uint64_t r)
{
    if (pw == 4) {
        uint32_t v;
        memcpy(&v, s->sa + r * 4, 4);
        return le32toh(v);
    }
    const uint8_t *p = s->sa + r * 5;
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32;
}

/** Entry k of the prefix table (first SA row of two-byte key k). */
static inline uint64_t ig_shard_prefix(const ig_shard *s, uint32_t pw, uint32_t k)
{
    if (pw == 4) {
        uint32_t v;
        memcpy(&v, s->prefix + (size_t)k * 4, 4);
        return le32toh(v);
    }
    return ig_load_le64(s->prefix + (size_t)k * 8);
}

static inline uint64_t ig_shard_doc_start(const ig_shard *s, uint64_t d)
{
    return ig_load_le64(s->docs + d * 8);
}

/**
 * SA interval of `p` inside rows [lo, hi) of shard `s`, all of whose suffixes are known
 * to share the first `known` bytes of p (0 for a fresh search). The mlr heuristic keeps
 * the common prefix with both bounds; the two bound searches share their first part.
 */
ig_range ig_shard_find(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m,
                       uint64_t lo, uint64_t hi, size_t known);

/** 1 when 0xFF occurs before the last byte of p: such a pattern would span two documents,
 *  which no query may do (so that answers do not depend on how documents are sharded). */
int ig_pattern_crosses_documents(const uint8_t *p, size_t m);

/** Local document index of a shard offset (binary search in docs). */
uint64_t ig_shard_doc_of(const ig_shard *s, uint64_t offset);

#endif
