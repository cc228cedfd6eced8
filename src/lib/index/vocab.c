/*
 * Vocabularies of token indexes: the text each id stands for, decoded once at load.
 *
 * Read: a Hugging Face tokenizer.json (model.vocab as {piece: id} or, for Unigram models, as
 * [[piece, score], …] indexed by id; added_tokens too), a JSON object {"id": "text"} or
 * {"piece": id}, or a JSON array of strings. Pieces are decoded the way their tokenizer
 * family writes them: byte-level BPE (GPT-2, Llama 3: each byte drawn as one printable
 * character, space as Ġ) back to bytes when the tokenizer says ByteLevel or pieces use Ġ;
 * SentencePiece pieces (Llama 2, T5) with ▁ for a space and <0xNN> for a raw byte.
 * A SentencePiece model file (anything that is not JSON) is read through spm.h: its pieces
 * are the vocabulary, and the model stays loaded to tokenise the text of queries.
 */
#include "infinigram/tokens.h"
#include "index_impl.h"
#include "spm.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

/* The most ids a vocabulary may have, and the largest file: far above any real tokenizer
 * (a 256k-piece tokenizer.json is some 20 MB), and they bound memory. */
#define VOCAB_MAX_IDS (1u << 24)
#define VOCAB_MAX_BYTES (256u << 20)

typedef struct ig_vocab {
    char **text;   ///< per id: its decoded bytes (owned), NULL for an id not in the file
    uint32_t *len;
    uint64_t n;    ///< ids 0 .. n−1
    igi_spm *spm;  ///< the SentencePiece model the pieces come from (owned), or NULL
    char *path;    ///< the file it was read from (owned)
    struct stat st; ///< that file as it was before it was read: a later change shows
} ig_vocab;

void igi_vocab_free(ig_vocab *v)
{
    if (!v)
        return;
    for (uint64_t i = 0; i < v->n; i++)
        free(v->text[i]);
    free(v->text);
    free(v->len);
    if (v->spm)
        igi_spm_free(v->spm);
    free(v->path);
    free(v);
}

/* GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves, the other 68
 * bytes (controls, space, 127–160, 173) for code points 256 + their rank. */
static int bytelevel_byte(uint32_t cp)
{
    if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255))
        return (int)cp;
    if (cp < 256 || cp >= 256 + 68)
        return -1;
    uint32_t k = cp - 256;
    for (int b = 0; b < 256; b++)
        if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) && k-- == 0)
            return b;
    return -1;
}

/* One code point of UTF-8 s[0, n) at *i (advanced); -1 when malformed. */
static int32_t next_cp(const uint8_t *s, size_t n, size_t *i)
{
    uint8_t c = s[*i];
    int k = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (k < 0 || *i + (size_t)k >= n)
        return -1;
    int32_t cp = k ? c & (0x3F >> k) : c;
    for (int j = 1; j <= k; j++) {
        if ((s[*i + (size_t)j] & 0xC0) != 0x80)
            return -1;
        cp = cp << 6 | (s[*i + (size_t)j] & 0x3F);
    }
    *i += (size_t)k + 1;
    return cp;
}

enum { DEC_PLAIN, DEC_BYTELEVEL, DEC_SENTENCEPIECE };

/* The bytes a piece stands for (malloc'd into *out, *outlen). */
static int decode_piece(const char *piece, int mode, char **out, uint32_t *outlen)
{
    size_t n = strlen(piece);
    char *b = malloc(n + 1);
    if (!b)
        return -1;
    size_t k = 0;
    const uint8_t *s = (const uint8_t *)piece;
    if (mode == DEC_SENTENCEPIECE && n == 6 && !strncmp(piece, "<0x", 3) && piece[5] == '>') {
        char hex[3] = {piece[3], piece[4], 0}, *end;
        long v = strtol(hex, &end, 16);
        if (!*end) {
            b[0] = (char)v;
            *out = b;
            *outlen = 1;
            return 0;
        }
    }
    for (size_t i = 0; i < n;) {
        size_t at = i;
        int32_t cp = next_cp(s, n, &i);
        if (cp < 0) { /* not UTF-8: kept as it is */
            b[k++] = (char)s[at];
            i = at + 1;
            continue;
        }
        int byte = mode == DEC_BYTELEVEL ? bytelevel_byte((uint32_t)cp) : -1;
        if (byte >= 0)
            b[k++] = (char)byte;
        else if (mode == DEC_SENTENCEPIECE && cp == 0x2581)
            b[k++] = ' ';
        else {
            memcpy(b + k, s + at, i - at);
            k += i - at;
        }
    }
    b[k] = 0;
    *out = b;
    *outlen = (uint32_t)k;
    return 0;
}

typedef struct piece_ref {
    const char *piece;
    uint64_t id;
} piece_ref;

/* Collects (piece, id) pairs from the JSON shapes a vocabulary comes in. */
static int collect(json_t *vocab, piece_ref **refs, size_t *n, size_t *cap, const char *path, ig_error *err)
{
    if (json_is_object(vocab)) {
        const char *key;
        json_t *val;
        json_object_foreach(vocab, key, val)
        {
            piece_ref r;
            if (json_is_integer(val) && json_integer_value(val) >= 0) { /* {piece: id} */
                r.piece = key;
                r.id = (uint64_t)json_integer_value(val);
            } else if (json_is_string(val)) { /* {"id": text} */
                char *end;
                unsigned long long id = strtoull(key, &end, 10);
                if (*key < '0' || *key > '9' || *end) /* strtoull reads "-1" as 2^64 − 1 */
                    return ig_error_set(err, IG_EINVAL, "%s: key \"%.40s\" is not an id (a map of ids to text needs "
                                        "decimal keys)", path, key);
                r.piece = json_string_value(val);
                r.id = id;
            } else
                return ig_error_set(err, IG_EINVAL, "%s: entry \"%.40s\" is neither an id nor a text", path, key);
            if (igi_grow(refs, *n, cap, sizeof **refs, 1024))
                return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
            (*refs)[(*n)++] = r;
        }
        return 0;
    }
    if (json_is_array(vocab)) { /* [text, …] or Unigram's [[piece, score], …]: index = id */
        size_t i;
        json_t *val;
        json_array_foreach(vocab, i, val)
        {
            json_t *p = json_is_array(val) ? json_array_get(val, 0) : val;
            if (!json_is_string(p))
                return ig_error_set(err, IG_EINVAL, "%s: vocabulary entry %zu is not a text", path, i);
            if (igi_grow(refs, *n, cap, sizeof **refs, 1024))
                return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
            (*refs)[(*n)++] = (piece_ref){json_string_value(p), i};
        }
        return 0;
    }
    return ig_error_set(err, IG_EINVAL, "%s: no vocabulary (expected a tokenizer.json, an object or an array)", path);
}

/* Whether a type name anywhere under j (decoder, pre_tokenizer, their sequences) is `type`. */
static int has_type(json_t *j, const char *type, int depth)
{
    if (!j || depth > 8)
        return 0;
    json_t *t = json_object_get(j, "type");
    if (json_is_string(t) && !strcmp(json_string_value(t), type))
        return 1;
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_object(j)) {
        json_object_foreach(j, k, v) if ((json_is_object(v) || json_is_array(v)) && has_type(v, type, depth + 1)) return 1;
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v) if (has_type(v, type, depth + 1)) return 1;
    }
    return 0;
}

/* The vocabulary of a SentencePiece model: its pieces decoded as SentencePiece writes them. */
static int vocab_load_spm(const char *path, ig_vocab **out, ig_error *err)
{
    igi_spm *m;
    int rc = igi_spm_load(path, &m, err);
    if (rc) {
        if (rc == IG_ECORRUPT) { /* keep what the model reader said: the file may be a damaged model */
            const char *why = strstr(err->msg, ": not a SentencePiece model: ");
            char reason[200];
            /* a file that is no protobuf at all gets the reader's source line: nothing to add */
            snprintf(reason, sizeof reason, "%s", why && !strstr(why, "ParseFrom") ? why + 29 : "");
            rc = ig_error_set(err, IG_EINVAL, "%s: neither a JSON vocabulary nor a SentencePiece model%s%s%s", path,
                              *reason ? " (as a model: " : "", reason, *reason ? ")" : "");
        }
        return rc;
    }
    uint32_t n = igi_spm_size(m);
    ig_vocab *v = calloc(1, sizeof *v);
    if (!v || !(v->text = calloc(n ? n : 1, sizeof *v->text)) || !(v->len = calloc(n ? n : 1, sizeof *v->len))) {
        if (v) {
            free(v->text);
            free(v);
        }
        igi_spm_free(m);
        return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
    }
    v->spm = m;
    v->n = n;
    char piece[1024];
    for (uint32_t id = 0; id < n; id++) {
        igi_spm_piece(m, id, piece, sizeof piece);
        if (decode_piece(piece, DEC_SENTENCEPIECE, &v->text[id], &v->len[id])) {
            igi_vocab_free(v);
            return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
        }
    }
    *out = v;
    return 0;
}

int igi_vocab_encode(const ig_index *idx, const char *text, size_t n, uint8_t **out, size_t *len, ig_error *err)
{
    *out = NULL;
    *len = 0;
    if (!idx->tw || !idx->vocab || !idx->vocab->spm)
        return ig_error_set(err, IG_EUSAGE, "this token dataset has no tokenizer: give token ids");
    uint32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    int rc = 0;
    for (size_t at = 0; !rc && at < n;) { /* line by line, as documents were tokenised at build */
        const char *nl = memchr(text + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - text) : n;
        if (end > at)
            rc = igi_spm_encode(idx->vocab->spm, text + at, end - at, &ids, &nids, &cap, err);
        at = end + 1;
    }
    /* Text the tokenizer drops whole (white space, mostly) is not the empty pattern, which
     * every position matches: the answer would look like one about the text. */
    if (!rc && n && !nids)
        rc = ig_error_set(err, IG_EUSAGE, "the text gives no token (the tokenizer drops all of it)");
    uint32_t end = ig_token_end(idx->tw);
    for (size_t i = 0; !rc && i < nids; i++)
        if (ids[i] >= end)
            rc = ig_error_set(err, IG_EUSAGE, "the tokenizer gives id %" PRIu32 ", more than %u-byte tokens hold",
                              ids[i], idx->tw);
    uint8_t *b = NULL;
    if (!rc && !(b = malloc(nids * idx->tw + 1)))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nids; i++)
        for (uint32_t k = 0; k < idx->tw; k++)
            b[i * idx->tw + k] = (uint8_t)(ids[i] >> (8 * k));
    free(ids);
    if (rc)
        return rc;
    *out = b;
    *len = nids * idx->tw;
    return 0;
}

int igi_vocab_has_tokenizer(const ig_index *idx) { return idx && idx->vocab && idx->vocab->spm; }

int ig_index_tokenizes(const ig_index *idx) { return igi_vocab_has_tokenizer(idx); }

int igi_vocab_read(const char *path, char **data, size_t *len, ig_error *err)
{
    *data = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return igi_error_errno(err, errno, path, "cannot open");
    if (!S_ISREG(st.st_mode)) /* a FIFO would block, a device never end */
        return ig_error_set(err, IG_EUSAGE, "%s: not a regular file (a vocabulary is a JSON file or a SentencePiece model)", path);
    if ((uint64_t)st.st_size > VOCAB_MAX_BYTES)
        return ig_error_set(err, IG_EUSAGE, "%s: %" PRIu64 " bytes, more than a vocabulary file may be (%u MiB)", path,
                            (uint64_t)st.st_size, VOCAB_MAX_BYTES >> 20);
    return igi_read_file(path, VOCAB_MAX_BYTES, data, len, err);
}

static int vocab_load_file(const char *path, ig_vocab **out, ig_error *err);

int igi_vocab_load(const char *path, ig_vocab **out, ig_error *err)
{
    /* the file's state is taken before it is read: a change while reading shows as a change */
    struct stat st;
    if (stat(path, &st) != 0)
        return igi_error_errno(err, errno, path, "cannot open");
    int rc = vocab_load_file(path, out, err);
    if (!rc && !((*out)->path = igi_strdup(path))) {
        igi_vocab_free(*out);
        *out = NULL;
        return ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
    }
    if (!rc)
        (*out)->st = st;
    return rc;
}

int igi_vocab_changed(const ig_vocab *v, ig_error *err)
{
    struct stat now;
    if (!v || !v->path)
        return 0;
    if (stat(v->path, &now) != 0)
        return igi_error_errno(err, errno, v->path, "the vocabulary in use is gone");
    if (now.st_size != v->st.st_size || now.st_ino != v->st.st_ino || now.st_dev != v->st.st_dev ||
        now.st_mtim.tv_sec != v->st.st_mtim.tv_sec || now.st_mtim.tv_nsec != v->st.st_mtim.tv_nsec)
        return ig_error_set(err, IG_ECORRUPT,
                            "%s changed since the dataset was loaded (its size or time differs)%s: load it again",
                            v->path, v->spm ? "; a changed tokenizer makes the dataset it built stale" : "");
    return 0;
}

static int vocab_load_file(const char *path, ig_vocab **out, ig_error *err)
{
    *out = NULL;
    char *data;
    size_t len;
    int rc = igi_vocab_read(path, &data, &len, err);
    if (rc)
        return rc;
    size_t lead = 0;
    while (lead < len && (data[lead] == ' ' || data[lead] == '\t' || data[lead] == '\r' || data[lead] == '\n'))
        lead++;
    int json_like = lead < len && (data[lead] == '{' || data[lead] == '['), first_nl = len && data[0] == '\n';
    json_error_t je;
    int why = IG_JSON_BAD;
    json_t *root = json_like ? ig_json_parse(data, len, 0, &je, &why) : NULL;
    free(data);
    /* Not JSON: a SentencePiece model (a protobuf, whose first byte 0x0A is a newline, so
     * what follows it decides nothing for sure: a JSON-looking file that does not parse is
     * tried as a model too, and the JSON error given when it is not one either). */
    if (!root && why != IG_JSON_NOMEM && (!json_like || first_nl)) {
        ig_error e2;
        rc = vocab_load_spm(path, out, json_like ? &e2 : err);
        if (!rc || !json_like)
            return rc;
    }
    if (!root)
        return why == IG_JSON_NOMEM ? ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path)
               : why == IG_JSON_HEAVY ? ig_error_set(err, IG_EINVAL, "%s: the JSON %s", path, je.text)
                                      : ig_error_set(err, IG_EINVAL, "%s: line %d: %s", path, je.line, je.text);
    json_t *model = json_object_get(root, "model");
    json_t *vocab = json_is_object(model) ? json_object_get(model, "vocab") : root;
    piece_ref *refs = NULL;
    size_t n = 0, cap = 0;
    rc = collect(vocab, &refs, &n, &cap, path, err);
    json_t *added = json_object_get(root, "added_tokens");
    size_t i;
    json_t *a;
    if (!rc && json_is_array(added))
        json_array_foreach(added, i, a)
        {
            json_t *id = json_object_get(a, "id"), *content = json_object_get(a, "content");
            if (!json_is_integer(id) || json_integer_value(id) < 0 || !json_is_string(content))
                continue;
            if (igi_grow(&refs, n, &cap, sizeof *refs, 1024)) {
                rc = ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
                break;
            }
            refs[n++] = (piece_ref){json_string_value(content), (uint64_t)json_integer_value(id)};
        }
    int mode = DEC_PLAIN;
    if (has_type(root, "ByteLevel", 0))
        mode = DEC_BYTELEVEL;
    else if (has_type(root, "ByteFallback", 0) || has_type(root, "Metaspace", 0))
        mode = DEC_SENTENCEPIECE;
    else
        for (size_t k = 0; k < n && mode == DEC_PLAIN; k++) /* a bare map: the pieces tell */
            mode = strstr(refs[k].piece, "\xc4\xa0") ? DEC_BYTELEVEL
                 : strstr(refs[k].piece, "\xe2\x96\x81") ? DEC_SENTENCEPIECE
                                                            : DEC_PLAIN;
    ig_vocab *v = NULL;
    uint64_t ids = 0;
    for (size_t k = 0; !rc && k < n; k++) {
        if (refs[k].id >= VOCAB_MAX_IDS)
            rc = ig_error_set(err, IG_EINVAL, "%s: id %" PRIu64 " of \"%.40s\" is too large (at most %u ids)", path,
                              refs[k].id, refs[k].piece, VOCAB_MAX_IDS);
        else if (refs[k].id + 1 > ids)
            ids = refs[k].id + 1;
    }
    if (!rc && !n)
        rc = ig_error_set(err, IG_EINVAL, "%s: the vocabulary is empty", path);
    if (!rc && (!(v = calloc(1, sizeof *v)) || !(v->text = calloc(ids, sizeof *v->text)) ||
                !(v->len = calloc(ids, sizeof *v->len))))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
    if (v)
        v->n = v->text && v->len ? ids : 0;
    for (size_t k = 0; !rc && k < n; k++) {
        uint64_t id = refs[k].id;
        free(v->text[id]); /* an added token overrides the model's piece */
        v->text[id] = NULL;
        if (decode_piece(refs[k].piece, mode, &v->text[id], &v->len[id]))
            rc = ig_error_set(err, IG_ENOMEM, "out of memory reading %s", path);
    }
    free(refs);
    json_decref(root);
    if (rc) {
        igi_vocab_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

uint64_t igi_vocab_count(const struct ig_vocab *v) { return v ? v->n : 0; }

uint64_t ig_vocab_size(const ig_index *idx) { return idx && idx->vocab ? idx->vocab->n : 0; }

static int append_token(const ig_index *idx, uint32_t id, const char *sep, ig_buf *b)
{
    if (id == ig_token_end(idx->tw))
        return ig_buf_append(b, sep, strlen(sep));
    if (idx->vocab && id < idx->vocab->n && idx->vocab->text[id])
        return ig_buf_append(b, idx->vocab->text[id], idx->vocab->len[id]);
    char num[16];
    int k = snprintf(num, sizeof num, "[%" PRIu32 "]", id);
    return ig_buf_append(b, num, (size_t)k);
}

int ig_tokens_text(const ig_index *idx, const uint8_t *ids, size_t n, const char *sep, char **out, size_t *outlen,
                   ig_error *err)
{
    ig_buf b = {.data = (uint8_t *)*out, .len = *outlen, .cap = *outlen};
    uint32_t tw = idx->tw ? idx->tw : 1;
    for (size_t i = 0; i + tw <= n; i += tw)
        append_token(idx, ig_token_at(ids + i, tw), sep, &b);
    int rc = ig_buf_append(&b, "", 1); /* NUL-terminated for display, not counted */
    if (!rc)
        b.len--;
    *out = (char *)b.data;
    *outlen = b.len;
    return rc ? ig_error_set(err, IG_ENOMEM, "out of memory showing %zu tokens", n / tw) : 0;
}

const char *ig_token_text(const ig_index *idx, uint32_t id, char *buf, size_t size)
{
    ig_buf b = {0};
    if (!size)
        return buf;
    if (append_token(idx, id, "<end>", &b) || b.failed)
        snprintf(buf, size, "[%" PRIu32 "]", id);
    else {
        size_t k = b.len < size - 1 ? b.len : size - 1;
        memcpy(buf, b.data, k);
        buf[k] = 0;
    }
    ig_buf_free(&b);
    return buf;
}
