/*
 * In-memory view of an open index: one ig_shard per shard directory, pointing into
 * read-only mappings. Shared by the open code and the query code.
 */
#ifndef IG_INDEX_IMPL_H
#define IG_INDEX_IMPL_H

#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "infinigram/index.h"
#include "infinigram/tokens.h"
#include "format.h"
#include "util/pool.h"
#include "util/util.h"

typedef struct ig_map {
    void *addr;
    size_t len;
    struct timespec mtime; ///< the file's modification time when mapped
} ig_map;

/** The first corruption a query met (state 0: none, 1: being recorded, 2: recorded):
 *  "shard-0000/sa: what". Shared by every shard of an index and written once. */
typedef struct ig_health {
    _Atomic int state;
    char what[224];
} ig_health;

/* Bits of ig_shard.checked: one per two-byte prefix key, one per one-byte group, then one
 * per sampled key; set once the entry has been checked against the suffix array and text. */
#define IG_CHECK_GROUP_BIT(b) ((uint64_t)IG_PREFIX_KEYS + 1 + (b))
#define IG_CHECK_KEY_BIT(i) ((uint64_t)IG_PREFIX_KEYS + 1 + 256 + (uint64_t)(i))
/* then one per window of the lcp file (nkeys: the shard's sampled keys), then one per block of
 * its key lcps (w = nkeys + block) */
#define IG_CHECK_LCP_BIT(nkeys, w) (IG_CHECK_KEY_BIT(nkeys) + (uint64_t)(w))
/** Suffix-array rows the load spot-checks, evenly spread (on sampled rows when there are
 *  keys): enough that a wholesale corruption (a zeroed or filled file, a wrong file) cannot
 *  pass, few enough that a cold load stays well under a second. */
#define IG_CHECK_ROWS 1024

typedef struct ig_shard {
    const uint8_t *text;     ///< n bytes
    uint64_t n;
    uint64_t rows;           ///< suffix-array rows: n, or in a token index n ÷ token width (one
                             ///< row per token: only suffixes at token starts are indexed)
    const uint8_t *sa;       ///< rows pointers of pw bytes
    uint32_t tmask;          ///< token width − 1 in a token index (every pointer a multiple of the width), else 0
    uint32_t pw;             ///< its pointer width: the index's, except in an attached token index,
                             ///< whose shards each have the width their size needs
    const uint8_t *docs;     ///< ndocs + 1 LE u64 (a token index: made at open, owned in docs_owned)
    uint64_t *docs_owned;
    const uint8_t *docmeta;  ///< ndocs × (LE u64 name offset, LE u64 source line); NULL in a token
                             ///< index, whose documents all take the name `names`
    const uint8_t *metadata; ///< token index: its optional JSON line per document, and the
    const uint8_t *metaoff;  ///< u64 offset of each (NULL without)
    uint64_t metadata_len;
    /** Token index with metadata: each document's name (its "path"), made from its metadata line
     *  on first use (owned; the array itself is made on the first name asked for). */
    char *_Atomic *_Atomic doc_names;
    const char *names;
    uint64_t names_len;
    uint64_t ndocs;
    uint64_t doc_base;
    const uint8_t *prefix;   ///< prefix table or NULL (format.h)
    /** A byte shard without a prefix file: the same table (IG_PREFIX_KEYS + 1 first rows),
     *  counted from the text on its first search (find.c; owned). NULL until then. */
    const uint64_t *_Atomic mem_prefix;
    const uint8_t *sample;   ///< sampled keys or NULL (format.h): ceil(n / stride) big-endian u64
    uint32_t stride;         ///< rows between sampled keys (the manifest's; per shard, as members of
                             ///< a composed index may differ); 0 without samples
    const uint8_t *lcp;      ///< the lcp file's window records (format.h) or NULL: absent, or a window
                             ///< failed the load's check
    const uint8_t *lcp_keys; ///< its key lcps (format.h)
    uint64_t *lcp_top;       ///< its top keys, read at open (owned; NULL without): sampled key
    uint64_t ntop;           ///< t·IG_LCP_TOP_EVERY is lcp_top[t], t < ntop; then the key lcp blocks'
                             ///< checksums
    ig_map maps[IG_NFILES];
    uint32_t id;             ///< its number in the index
    uint32_t local;          ///< its number in its own index directory (shard-NNNN): differs from id
                             ///< in a composed index
    uint32_t member;         ///< composed index: its member (ig_index.members); 0 otherwise
    int neg;                 ///< composed index: a shard of a subtracted set (counts are taken away)
    /** Composed index: local ids of this shard's documents that a subtracted set takes away,
     *  sorted (owned; NULL when none). Their occurrences are never listed and their ids
     *  are skipped when documents are numbered. */
    uint64_t *removed;
    uint64_t nremoved;
    uint64_t lines_sum;      ///< the manifest's checksum of its lines file
    char sa_name[48];        ///< an attached token shard's suffix-array file ("table.3", "3/table"), named
                             ///< in corruption reports; empty: ours ("shard-NNNN/sa")
    ig_health *health;       ///< the index's record of corruption met by queries
    _Atomic uint64_t *checked; ///< owned bitmap (IG_CHECK_*_BIT): table entries already checked
    /** Line index, ready on the first ig_locate in this shard (lines.c): entries 2k and
     *  2k+1 are the numbers of newlines and of characters (UTF-8 lead bytes) in
     *  text[0, k·IG_LINE_BLOCK). The shard's `lines` file once its checksum is checked, or
     *  counted in memory (owned: lines_owned). NULL until ready. */
    const uint64_t *_Atomic lines;
    int lines_owned;
    /** Case-folded indexes (fold.h): the bitmap of lowered ASCII capitals and the exception
     *  records of the shard's fold file; NULL otherwise. */
    const uint8_t *fold_bits;
    const uint8_t *fold_exc;
    uint64_t fold_nexc;
    uint64_t fold_sum;        ///< the fold file's checksum in the manifest
    /** 0 until the fold file has been checked against fold_sum, on its first use (it is an
     *  eighth of the text: too large to hash at open, and a cleared bit would show a capital
     *  as a small letter with nothing else to tell); then 1. */
    _Atomic int fold_summed;
} ig_shard;

/* The way back from a case-folded shard's text to its original (fold.c). Folded offsets
 * inside the folding of one character (the second s of ß → ss) belong to that character. */
/** The start of the character holding folded offset f. */
uint64_t igi_fold_floor(const ig_shard *s, uint64_t f);
/** f, or the end of the folding of the character f lies inside. */
uint64_t igi_fold_ceil(const ig_shard *s, uint64_t f);
/** The original offset of the character holding folded offset f. */
uint64_t igi_fold_orig(const ig_shard *s, uint64_t f);
/** Folded characters minus original characters in folded [a, b) (a and b at character
 *  starts): what a column counted in the folded text overcounts. */
uint64_t igi_fold_char_delta(const ig_shard *s, uint64_t a, uint64_t b);
/** Appends the original bytes of folded [a, b) (a and b at character starts: see
 *  igi_fold_floor) to out. A fold file that disagrees with the text is recorded as
 *  corruption (ig_index_health). IG_ENOMEM when out cannot grow. */
int igi_fold_unfold(const ig_shard *s, uint64_t a, uint64_t b, ig_buf *out);
/** Checks the exception records in full (order, bounds, offsets): 0, or -1 with what. */
int igi_fold_check(const ig_shard *s, char *what, size_t wlen);

/** The shard's line index, ready on first use: its `lines` file, checked against the
 *  manifest's checksum (a bad one is recorded as corruption, and the index counted instead),
 *  or one pass over the text (a mutex of the index serialises builders). NULL when out of
 *  memory. */
const uint64_t *igi_shard_lines(const ig_index *idx, const ig_shard *s);
/** Newlines in text[0, off) of the shard (lines: its line index). */
uint64_t igi_shard_newlines_before(const ig_shard *s, const uint64_t *lines, uint64_t off);
/** The offset after the last newline in text[from, off), or from. */
uint64_t igi_shard_line_start(const ig_shard *s, const uint64_t *lines, uint64_t from, uint64_t off);
/** Characters (UTF-8 lead bytes) in text[0, off) of the shard. */
uint64_t igi_shard_chars_before(const ig_shard *s, const uint64_t *lines, uint64_t off);
/** Characters (UTF-8 lead bytes) in p[0, n). */
uint64_t igi_count_chars(const uint8_t *p, size_t n);

/** A member of a composed index: an index opened on its own, whose shards were moved into
 *  the composed one (it keeps its manifest and its record of corruption). */
typedef struct ig_member {
    ig_index *idx;           ///< owned; its shards are the composed index's
    char *name;              ///< owned
    uint32_t first_shard, nshards;
    uint64_t documents;      ///< after subtraction (0 for a subtracted set)
    int neg;                 ///< a subtracted set
} ig_member;

struct ig_index {
    char *dir;               ///< NULL for a composed index
    ig_member *members;      ///< composed index: its members in order, subtracted sets last (owned)
    uint32_t nmembers;
    uint32_t npos;           ///< shards that add (the others, last, subtract); nshards when plain
    ig_manifest man;
    uint32_t nshards;
    uint32_t pw;             ///< pointer width (4 or 5; 1 to 5 in an attached token index)
    uint32_t tw;             ///< token width in bytes of an attached token index (1, 2 or 4); 0 for
                             ///< an index of bytes. Documents are preceded, not followed, by a
                             ///< separator of tw bytes 0xFF (token id 2^(8·tw) − 1, <end>)
    struct ig_vocab *vocab;  ///< token index: the vocabulary shown (owned; NULL: ids shown)
    char *doc_name;          ///< token index: the name every document has (owned)
    struct ig_hcache *hcache; ///< token index: recent costly next-token histograms (owned; tokens.c)
    uint64_t attach_fp;      ///< token index: the fingerprint of its files when they were mapped
    struct ig_next_table *ntab; ///< token index: its next-token table in use (owned; query/nexttab.c)
    int prefetch;            ///< prefetch bisection steps (ig_index_set_prefetch)
    ig_pool *pool;           ///< workers for per-shard work (multi-shard indexes only)
    ig_shard *shards;
    ig_health *health;       ///< owned; see igi_shard_bad_pointer
    pthread_mutex_t lines_mu; ///< serialises the first builds of the shards' line indexes
    /** BM25 corpus statistics (query/bm25.c), made or read on first use. Owned; NULL until then. */
    struct ig_bm25_stats *_Atomic bm25;
    pthread_mutex_t bm25_mu;  ///< serialises their first making
};

/** IG_EUSAGE naming members a and b when they index text differently (normalisation, case
 *  folding) or with different pointer widths, which one search code cannot run over. */
int igi_index_compatible(const ig_index_info *a, const char *an, const ig_index_info *b, const char *bn,
                         ig_error *err);

/** ig_index_open, with the worker pool only when `pool` (a member of a composed index
 *  needs none: the composed index has its own). */
int igi_index_open(ig_index **out, const char *dir, int pool, ig_error *err);

/** Creates the worker pool of an index of several shards (none for one shard: NULL). */
void igi_index_make_pool(ig_index *idx);

/** Frees BM25 statistics (NULL-safe). */
void igi_bm25_stats_free(struct ig_bm25_stats *st);

static inline uint64_t ig_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

/** Records a suffix-array pointer past the text, or inside a token (the first one wins), and
 *  returns a safe position (the shard's last byte, or its last token's start); queries then
 *  fail with ig_index_health's error. */
uint64_t igi_shard_bad_pointer(const ig_shard *s, uint64_t row, uint64_t value);

/** SA entry `r` as stored, unchecked (for the load checks, which report it themselves). */
static inline uint64_t ig_shard_sa_raw(const ig_shard *s, uint32_t pw, uint64_t r)
{
    if (pw == 4) {
        uint32_t w;
        memcpy(&w, s->sa + r * 4, 4);
        return le32toh(w);
    }
    const uint8_t *p = s->sa + r * pw;
    if (pw == 5)
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32;
    uint64_t v = 0; /* attached token indexes: as narrow as their text needs */
    for (uint32_t i = pw; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/** Maps `path` read-only (MADV_RANDOM) into *m after checking its size is `expect` (any size
 *  when expect is UINT64_MAX), watched for being cut short with health record h (may be NULL;
 *  see igi_bus_watch); release it with igi_map_release. IG_ECORRUPT naming the path when
 *  missing, not a regular file or of another size. */
int igi_map_file(const char *path, uint64_t expect, ig_health *h, ig_map *m, ig_error *err);

/** SA entry `r` of a shard with pointer width pw. Every pointer is range-checked (and in a
 *  token index, checked to be at a token start): file content, however crafted, never makes
 *  a query read outside the text's mapping, nor compare a suffix from inside a token. */
static inline uint64_t ig_shard_sa(const ig_shard *s, uint32_t pw, uint64_t r)
{
    uint64_t v = ig_shard_sa_raw(s, pw, r);
    return __builtin_expect(v < s->n && !(v & s->tmask), 1) ? v : igi_shard_bad_pointer(s, r, v);
}

/** Checks shard i of a freshly mapped index (check.c: what is read in full, what is
 *  spot-checked). IG_ECORRUPT naming the file and what is wrong. */
int igi_index_check_shard(const ig_index *idx, uint32_t i, ig_error *err);

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

/** Records a corruption met by a query (the first one wins): `file` of shard s, then what. */
void igi_shard_corrupt(const ig_shard *s, const char *file, const char *fmt, ...) IG_PRINTF(3, 4);
/** Slow path of ig_shard_prefix_range: check an entry against the suffix array and text,
 *  record a disagreement, set its bit. */
void igi_shard_check_prefix(const ig_shard *s, uint32_t pw, uint32_t klo, uint32_t khi, uint64_t bit);
/** 1 when sampled key i agrees with the text at its row (checked the first time, then
 *  remembered); else the corruption is recorded and 0 returned. */
int igi_shard_key_trusted(const ig_shard *s, uint32_t pw, uint32_t stride, uint64_t i);

static inline int ig_shard_checked(const ig_shard *s, uint64_t bit)
{
    return (atomic_load_explicit(&s->checked[bit / 64], memory_order_relaxed) >> (bit % 64)) & 1;
}

/** The check bit of the prefix keys [klo, khi) (one key, or the 257 keys of one first byte). */
static inline uint64_t ig_shard_prefix_bit(uint32_t klo, uint32_t khi)
{
    return khi - klo == 1 ? klo : IG_CHECK_GROUP_BIT(klo / 257);
}

/** Rows of the prefix keys [klo, khi) by the prefix table. Each entry is checked against the
 *  suffix array the first time it is used: the table is read whole at open only to check its
 *  order, so a stale or crafted entry that keeps the order would otherwise give wrong rows.
 *  (A search for a longer pattern need not trust the entry: query/find.c checks instead the
 *  rows its answer rests on.) */
static inline ig_range ig_shard_prefix_range(const ig_shard *s, uint32_t pw, uint32_t klo, uint32_t khi)
{
    uint64_t bit = ig_shard_prefix_bit(klo, khi);
    if (__builtin_expect(!ig_shard_checked(s, bit), 0))
        igi_shard_check_prefix(s, pw, klo, khi, bit);
    return (ig_range){ig_shard_prefix(s, pw, klo), ig_shard_prefix(s, pw, khi)};
}

/** Sampled key i as stored. A search does not check each key it bisects (on a cold cache
 *  that would cost two page faults a key): it checks, with igi_shard_key_trusted, a key it
 *  bracketed the suffix-array search with only when a bound of its answer lies on that key's
 *  row, i.e. when the answer rests on the key rather than on compared text (query/find.c). */
static inline uint64_t ig_shard_key(const ig_shard *s, uint64_t i)
{
    uint64_t v;
    memcpy(&v, s->sample + i * 8, 8);
    return be64toh(v);
}

/**
 * SA interval of `p` inside rows [lo, hi) of shard `s`, all of whose suffixes are known
 * to share the first `known` bytes of p (0 for a fresh search). The mlr heuristic keeps
 * the common prefix with both bounds; the two bound searches share their first part.
 */
ig_range igi_shard_find(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m,
                       uint64_t lo, uint64_t hi, size_t known);

/** 1 when the separator occurs before the last byte (the last token, in a token index) of
 *  p: such a pattern would span two documents, which no query may do (so that answers do
 *  not depend on how documents are sharded). */
int igi_pattern_crosses_documents(const ig_index *idx, const uint8_t *p, size_t m);

/** A token index stores no separator after a shard's last document, so a pattern that ends
 *  with the separator ("… then the document ends") cannot find that document's end in the
 *  suffix array. 1, with *off the occurrence's offset, when p (m bytes, ending with the
 *  separator, at least one token before it) matches there; 0 otherwise and for byte indexes. */
int igi_token_tail_match(const ig_index *idx, const ig_shard *s, const uint8_t *p, size_t m, uint64_t *off);

/** The smallest pointer width (1 to 5 bytes) that addresses every byte of a token shard of n
 *  bytes: the infini-gram indexer's rule, n <= 2^(8 * width), which attaching checks and our
 *  own token builds follow. */
uint32_t igi_pointer_width(uint64_t n);

/** Name and source line of local document d of a token shard: the "path" of its metadata line
 *  (and its "linenum" + 1), else the index's name for all documents. Owned by the shard. */
const char *igi_token_doc_name(const ig_shard *s, uint64_t d, uint64_t *source_line);

/** ig_token_next, in id order or (by_count) most frequent first, ties by id. */
int igi_token_hist(const ig_index *idx, const ig_range *r, size_t len, int by_count, ig_token_count **out,
                   size_t *n, ig_error *err);

/** qsort order of ig_token_count: most frequent first, ties by id. */
int igi_token_count_cmp(const void *a, const void *b);

/** The histogram by its bisections alone (no cache, no table), in id order. */
int igi_token_hist_exact(const ig_index *idx, const ig_range *r, size_t len, ig_token_count **out, size_t *n,
                         ig_error *err);

/** The histogram of a context of one to three tokens from the index's next-token table
 *  (query/nexttab.c), copied into *out (malloc'd, the caller's): *served 0 when the table does
 *  not hold it (or there is none); an error when the table's entries are cut short, damaged or
 *  do not match the index (named, never a wrong histogram). */
int igi_next_table_hist(const ig_index *idx, const ig_range *r, size_t len, int by_count, ig_token_count **out,
                        size_t *n, int *served, ig_error *err);
/** The same context's ∞-gram symbols (most probable first, ties by id; prob = count ÷ the
 *  context's occurrences), borrowed: *syms points into the table mapped by idx, read-only, valid
 *  until idx is closed (a table replaced by ig_next_table_use stays mapped until then). *served
 *  0 when the table does not hold the context or the machine cannot borrow (big-endian): then
 *  igi_next_table_hist answers. Errors as igi_next_table_hist's. */
struct ig_symbol;
int igi_next_table_syms(const ig_index *idx, const ig_range *r, size_t len, const struct ig_symbol **syms, size_t *n,
                        int *served, ig_error *err);
/** A search for a context the next-token table holds (one to three tokens, no separator):
 *  1 with its rows in each shard (ranges may be NULL) and *count, without touching the index;
 *  0 when the table does not hold it (or there is none). */
int igi_next_table_find(const ig_index *idx, const uint8_t *p, size_t len, ig_range *ranges, uint64_t *count);
struct ig_next_table;
void igi_next_table_free(struct ig_next_table *t);

/** ig_tokens_parse; with docs, separator ids may stand anywhere (a sequence of documents, as
 *  held-out text to evaluate is), not only last. */
int igi_tokens_parse(const ig_index *idx, const char *text, size_t n, int docs, uint8_t **out, size_t *len,
                     ig_error *err);

/** The cache of next-token histograms of a token index (query/tokens.c): made at attach, NULL
 *  when out of memory (then every histogram is computed). */
struct ig_hcache *igi_hcache_new(void);
void igi_hcache_free(struct ig_hcache *c);

/** Vocabulary of a token index (vocab.c): display text of each id. */
struct ig_vocab;
/** Loads `path`: a Hugging Face tokenizer.json, a JSON object {"id": "text"} or a JSON array
 *  of strings (index = id). IG_EUSAGE / IG_EIO naming the file and what is wrong. */
int igi_vocab_load(const char *path, struct ig_vocab **out, ig_error *err);
/** The bytes of a vocabulary or tokenizer file (*data malloc'd, NUL-terminated), refused
 *  unless it is a regular file of at most 256 MiB: a FIFO would block the reader, a device
 *  never end. IG_EUSAGE / IG_EIO naming the file. */
int igi_vocab_read(const char *path, char **data, size_t *len, ig_error *err);
void igi_vocab_free(struct ig_vocab *v);
/** IG_ECORRUPT (or the errno of stat) naming the file when the file v was loaded from is gone or
 *  differs in size, inode or modification time from when it was read; 0 otherwise. */
int igi_vocab_changed(const struct ig_vocab *v, ig_error *err);
/** Text tokenised by the index's SentencePiece model (a vocabulary given as a .model file) into
 *  the little-endian bytes of its ids (*out malloc'd, *len bytes); IG_EUSAGE without one. */
int igi_vocab_encode(const ig_index *idx, const char *text, size_t n, uint8_t **out, size_t *len, ig_error *err);
/** Ids a vocabulary has (0 .. n−1). */
uint64_t igi_vocab_count(const struct ig_vocab *v);
/** Whether the index's vocabulary can tokenise text (it is a SentencePiece model). */
int igi_vocab_has_tokenizer(const ig_index *idx);

/** Local document index of a shard offset (binary search in docs). */
uint64_t igi_shard_doc_of(const ig_shard *s, uint64_t offset);

/** Global id of local document d of shard s, or UINT64_MAX when a subtracted set takes it
 *  away (or s itself subtracts): such a document is never shown. */
uint64_t igi_shard_doc_id(const ig_shard *s, uint64_t d);

/** Signed contribution of a shard's rows to a count: subtracting shards take theirs away.
 *  Sums wrap modulo 2^64, which is exact because what is taken away is always present. */
static inline uint64_t igi_shard_signed(const ig_shard *s, uint64_t rows) { return s->neg ? (uint64_t)0 - rows : rows; }

/** Registers mapping m (of the index file at path) so that a read past the end of the file,
 *  should another program cut it short, reads zeros and records the corruption in h instead of
 *  raising SIGBUS (bus.c). h may be NULL (the zeros are read, nothing is recorded). */
void igi_bus_watch(const ig_map *m, ig_health *h, const char *path);
/** Unregisters and unmaps m (nothing when m->addr is NULL); m is left empty. */
void igi_map_release(ig_map *m);

#endif
