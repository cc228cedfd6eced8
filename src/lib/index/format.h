/*
 * Index format v1 (one directory per built dataset):
 *
 *   manifest.json        magic "infinigram-index", format_version 1, total bytes and
 *                        documents, pointer_width (4 or 5), sa_api ("32" or "64"),
 *                        normalization ("NFC" or "none"), casefold (true for a
 *                        case-folded index; absent: false), build parameters, and the
 *                        shard list; each shard names its directory, byte/document
 *                        counts, first global document id, and for every file its size
 *                        and a 64-bit checksum (hex; checked by `:dataset verify`, and at
 *                        open for a file modified later than the manifest); last,
 *                        manifest_checksum: igi_hash_bytes of the manifest's compact form
 *                        (cJSON_PrintUnformatted) without that member, checked at every open
 *                        (absent in manifests written before it: not checked).
 *   shard-NNNN/text      the documents' bytes, each followed by 0xFF.
 *   shard-NNNN/sa        suffix array of `text`: one little-endian pointer of
 *                        pointer_width bytes per text byte, in suffix order
 *                        (libdivsufsort, plain unsigned byte order).
 *   shard-NNNN/docs      (documents + 1) little-endian u64: start offset of each
 *                        document in `text`, then the text length.
 *   shard-NNNN/docmeta   per document two little-endian u64: offset of its name in
 *                        `names`, and its 1-based source line/record (0 for whole files).
 *   shard-NNNN/names     NUL-terminated names (source paths), each stored once per run.
 *   shard-NNNN/prefix    optional (shards of 8 MiB and more): IG_PREFIX_KEYS + 1
 *                        little-endian entries (u32 when pointer_width is 4, else u64): the first SA row of each two-byte prefix, so that a
 *                        search starts inside its prefix's interval instead of bisecting
 *                        the whole array. A size of 0 in the manifest means absent.
 *   shard-NNNN/sample    optional (with the prefix table): ceil(bytes / sample_stride)
 *                        big-endian u64, entry i the first 8 bytes of the suffix at SA row
 *                        i * sample_stride (zero-padded past the end of the text). A search
 *                        bisects these dense keys first and only the last few levels in the
 *                        suffix array and text: half the dependent cache misses of a count.
 *                        The stride is the manifest's "sample_stride" (absent: no samples).
 *   shard-NNNN/lines     optional (with the prefix table): the line index, (bytes / 4096 + 2)
 *                        pairs of little-endian u64; pair k holds the numbers of newlines and
 *                        of characters (UTF-8 lead bytes) in text[0, k·4096). Locations read
 *                        it instead of counting through the text (which they do in memory,
 *                        once per shard, when the file is absent). Checked against its
 *                        checksum on first use.
 *   shard-NNNN/fold      in case-folded indexes only (and there in every shard): what
 *                        folding changed, so that the original text can be shown (fold.h):
 *                        a bitmap of ceil(bytes / 64) little-endian u64 words, bit i set
 *                        where `text` byte i is an ASCII capital lowered, then 24-byte
 *                        exception records sorted by folded offset, for every other
 *                        character folding changed (LE u64 folded offset, LE u64 original
 *                        offset, u8 folded length, u8 original length, u8 folded
 *                        characters, u8 0, the original character's 1 to 4 bytes
 *                        zero-padded). In a case-folded index `text` holds the folded text,
 *                        and the suffix array, `docs`, prefix table, sampled keys and line
 *                        index are all of it; original offsets are derived from the records.
 *   shard-NNNN/lcp       optional (`build --lcp`, shards with sampled keys): what lets a search
 *                        place a pattern among the stride rows between two sampled keys
 *                        without reading their text. First the top keys: sampled key
 *                        t·IG_LCP_TOP_EVERY for every t (the first key of each page of the
 *                        `sample` file, as stored there), zero-padded to whole pages; read
 *                        whole at open (8 bytes per 32,768 rows at stride 64: 0.0002 bytes per
 *                        byte), they take the key search to its page of keys with no fault
 *                        (a search checks a top key it relies on against `sample`, on the page
 *                        it reads anyway, or on the next in about one search in 512); then
 *                        the checksum (LE u64) of each block of key lcps: igi_hash of (block
 *                        number as LE u64, its 4096 bytes). Then the key lcps: for each sampled
 *                        key's row, its common prefix with the previous key's row (capped at
 *                        IG_LCP_CAP; 0 for key 0) and its byte at that depth, two bytes a key in
 *                        blocks of IG_LCP_BLOCK_KEYS keys (zero-padded): the same blind search
 *                        as in a window places a pattern among the windows when its first 8
 *                        bytes are those of many keys (indentation, `#define `), where the key
 *                        search cannot. Then one record per sampled key (window w:
 *                        rows w·stride to w·stride + stride − 1): stride bytes lcp (row r's
 *                        common prefix with row r − 1, capped at IG_LCP_CAP; 0 for row 0 and
 *                        past the last row), stride bytes branching byte (row r's byte at
 *                        that depth; 0 when capped or past the last row), then the window's
 *                        checksum, little-endian u64: igi_hash of (w as LE u64, sampled key w
 *                        as stored, the 2·stride bytes). 2 + 8 / stride bytes per text byte
 *                        (2.125 at stride 64), and the top keys. A search descends the window blind (branching
 *                        bytes only), compares the one row it lands on with the text, and
 *                        reads both bounds off the lcps (query/find.c): one page of this file,
 *                        one of the suffix array and one of text instead of log2(stride) text
 *                        pages. Each window's checksum is checked on its first use; a window
 *                        that fails it, or disagrees with the text, is searched without it.
 *
 * Documents never cross shards; counts add across shards; global document ids are the
 * shard's doc_base plus the local index. Open maps every file read-only and checks sizes
 * against the manifest; nothing is read whole but the lcp file's top keys.
 */
#ifndef IG_FORMAT_H
#define IG_FORMAT_H

#include <stdint.h>
#include "infinigram/error.h"

#define IG_MANIFEST_NAME "manifest.json"
#define IG_MANIFEST_SUM_KEY "manifest_checksum"
#define IG_MAGIC "infinigram-index"

enum { IG_F_TEXT, IG_F_SA, IG_F_DOCS, IG_F_DOCMETA, IG_F_NAMES, IG_F_PREFIX, IG_F_SAMPLE, IG_F_LINES, IG_F_FOLD, IG_F_LCP,
       IG_NFILES };

/** Files a shard may lack (a size of 0 in the manifest). */
static inline int ig_shard_file_optional(int f)
{
    return f == IG_F_PREFIX || f == IG_F_SAMPLE || f == IG_F_LINES || f == IG_F_FOLD || f == IG_F_LCP;
}

/** Longest common prefix the lcp file stores (larger ones are stored as this): a search inside
 *  a window without the text works for patterns of at most this many bytes. */
#define IG_LCP_CAP 255
/** Bytes of one window's record in the lcp file: stride lcp bytes, stride branching bytes and
 *  an 8-byte checksum. */
static inline uint64_t ig_lcp_record(uint32_t stride) { return 2 * (uint64_t)stride + 8; }
/** Sampled keys per top key of the lcp file: one page of keys (4096 bytes). */
#define IG_LCP_TOP_EVERY 512
/** Sampled keys per block of key lcps (2 bytes a key: one 4096-byte page), each block with
 *  its checksum among the top keys. */
#define IG_LCP_BLOCK_KEYS 2048
static inline uint64_t ig_lcp_nkeys(uint64_t n, uint32_t stride) { return (n + stride - 1) / stride; }
/** Top keys (one per IG_LCP_TOP_EVERY sampled keys) of an n-byte shard. */
static inline uint64_t ig_lcp_ntop(uint64_t n, uint32_t stride)
{
    return (ig_lcp_nkeys(n, stride) + IG_LCP_TOP_EVERY - 1) / IG_LCP_TOP_EVERY;
}
/** Blocks of key lcps of an n-byte shard. */
static inline uint64_t ig_lcp_nblocks(uint64_t n, uint32_t stride)
{
    return (ig_lcp_nkeys(n, stride) + IG_LCP_BLOCK_KEYS - 1) / IG_LCP_BLOCK_KEYS;
}
/** Bytes of the lcp file's first part, read at open: the top keys, then the key lcp blocks'
 *  checksums, padded to whole 4096-byte pages (so that what follows keeps its place in a page). */
static inline uint64_t ig_lcp_top_bytes(uint64_t n, uint32_t stride)
{
    return ((ig_lcp_ntop(n, stride) + ig_lcp_nblocks(n, stride)) * 8 + 4095) / 4096 * 4096;
}
/** Bytes of the key lcps: whole blocks. */
static inline uint64_t ig_lcp_keylcp_bytes(uint64_t n, uint32_t stride) { return ig_lcp_nblocks(n, stride) * 4096; }
/** Size of the lcp file of an n-byte shard: the top keys and block checksums, the key lcps,
 *  then one record per sampled key (0 without keys). */
static inline uint64_t ig_lcp_bytes(uint64_t n, uint32_t stride)
{
    return stride ? ig_lcp_top_bytes(n, stride) + ig_lcp_keylcp_bytes(n, stride) +
                        ig_lcp_nkeys(n, stride) * ig_lcp_record(stride)
                  : 0;
}

/** Text bytes per line-index entry: a location scans at most this much text around it. */
#define IG_LINE_BLOCK 4096
/** Size of the line index of an n-byte shard: n / IG_LINE_BLOCK + 2 pairs of u64. */
static inline uint64_t ig_lines_bytes(uint64_t n) { return (n / IG_LINE_BLOCK + 2) * 16; }
/** Fills the line index of text[0, n) (lines.c): ig_lines_bytes(n) / 8 entries, the layout
 *  of the lines file in this machine's byte order. */
void igi_lines_fill(const uint8_t *text, uint64_t n, uint64_t *l);

/** Shards at least this large get a prefix table (it would dominate smaller ones). */
#define IG_PREFIX_MIN_BYTES (8ull << 20)
/** Prefix-table keys: b0 * 257 + (b1 + 1), b1 = −1 for a one-byte suffix. */
#define IG_PREFIX_KEYS (256 * 257)
/** The prefix keys [*klo, *khi) of the suffixes starting with p[0, m), m ≥ 1: one key for two
 *  bytes or more, the 257 keys of its first byte for one. */
static inline void ig_prefix_keys(const uint8_t *p, size_t m, uint32_t *klo, uint32_t *khi)
{
    uint32_t x = (uint32_t)p[0] * 257u;
    *klo = m == 1 ? x : x + p[1] + 1u;
    *khi = m == 1 ? x + 257u : *klo + 1u;
}
/** Fills starts (IG_PREFIX_KEYS + 1 entries) with the first suffix-array row of each prefix
 *  key of text t[0, n), and starts[IG_PREFIX_KEYS] with n: one sequential pass over the text,
 *  no access to the suffix array (suffixes sort by their first bytes, so the running sums of
 *  the keys' counts are their first rows). The build writes it as the prefix file of large
 *  shards; a search makes it in memory for a small shard (find.c). */
static inline void igi_prefix_fill(const uint8_t *t, uint64_t n, uint64_t *starts)
{
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++)
        starts[k] = 0;
    for (uint64_t i = 0; i + 1 < n; i++)
        starts[t[i] * 257u + t[i + 1] + 1]++;
    if (n)
        starts[t[n - 1] * 257u]++; /* the last suffix is one byte long */
    uint64_t sum = 0;
    for (uint32_t k = 0; k <= IG_PREFIX_KEYS; k++) {
        uint64_t v = starts[k];
        starts[k] = sum;
        sum += k < IG_PREFIX_KEYS ? v : 0;
    }
}
/** Default rows between two sampled keys: 8 bytes per 64 text bytes, 0.125 bytes per byte (the
 *  index stays under 5.2 bytes per byte down to the smallest shard with tables). Counts on the
 *  Linux kernel take 16–19% less time than with 128 (one bisection level fewer in the suffix
 *  array and text, where a count spends four fifths of its time). */
#define IG_SAMPLE_STRIDE 64
/** Size of the sampled keys of an n-byte shard (one 8-byte key per stride rows; 0 without). */
static inline uint64_t ig_sample_bytes(uint64_t n, uint32_t stride) { return stride ? (n + stride - 1) / stride * 8 : 0; }
extern const char *const igi_shard_file_names[IG_NFILES];

typedef struct ig_file_meta {
    uint64_t size;
    uint64_t checksum;
} ig_file_meta;

typedef struct ig_shard_meta {
    char dir[32];           ///< "shard-0000"
    uint64_t bytes;         ///< text length
    uint64_t documents;
    uint64_t doc_base;      ///< global id of the first document
    ig_file_meta files[IG_NFILES];
} ig_shard_meta;

typedef struct ig_manifest {
    uint32_t format_version;
    uint64_t bytes, documents;
    uint32_t pointer_width;
    uint32_t sample_stride; ///< rows between sampled keys (0: no shard has samples)
    int wide_api;
    int normalized;
    int casefold;           ///< the text is case-folded; every shard has a fold file
    uint32_t nshards;
    ig_shard_meta *shards;  ///< owned
    char *build_json;       ///< owned JSON text of build parameters (may be NULL)
} ig_manifest;

/** Writes dir/manifest.json (fsynced). */
int igi_manifest_write(const char *dir, const ig_manifest *m, ig_error *err);
/** Reads and validates dir/manifest.json (magic, version, field types). */
int igi_manifest_read(const char *dir, ig_manifest *m, ig_error *err);
void igi_manifest_free(ig_manifest *m);

/** Expected size of a shard file from the counts (names: from the manifest). */
uint64_t igi_shard_file_expected(const ig_manifest *m, const ig_shard_meta *s, int file);

#endif
