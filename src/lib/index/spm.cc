// The C face of libsentencepiece (spm.h). Every entry point catches what the C++ side may
// throw (allocation failures, mostly) and turns it into an ig_error, as C callers expect.
#include <sentencepiece_processor.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" {
#include "spm.h"
}

/* libsentencepiece trusts a model's normalization rules: its precompiled_charsmap is a
 * darts-clone double-array trie that the normalizer walks without a bounds check, one array
 * unit per input byte, and a crafted trie sends it far outside the blob (a model file can
 * crash every process that tokenises with it). So the rules are walked here first, once, at
 * load: every node reachable from the root by any byte sequence must keep all 256 of its
 * children's slots inside the array, and every rule it ends must name a string inside the
 * blob. A trie from spm_train always passes (darts-clone lays units out in blocks of 256). */
namespace {

struct pb {
    const uint8_t *p, *end;
    bool varint(uint64_t *v)
    {
        *v = 0;
        for (int shift = 0; shift < 64 && p < end; shift += 7) {
            uint8_t b = *p++;
            *v |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80))
                return true;
        }
        return false;
    }
    /* The next field: its number, and for a length-delimited one its bytes. False at the end
     * or on a malformed field (the library parsed the same bytes, so that is not expected). */
    bool field(uint32_t *num, const uint8_t **data, size_t *len)
    {
        uint64_t key, v;
        if (p >= end || !varint(&key))
            return false;
        *num = (uint32_t)(key >> 3);
        *data = nullptr;
        *len = 0;
        switch (key & 7) {
        case 0: return varint(&v);
        case 1: if (end - p < 8) return false; p += 8; return true;
        case 5: if (end - p < 4) return false; p += 4; return true;
        case 2:
            if (!varint(&v) || v > (uint64_t)(end - p))
                return false;
            *data = p;
            *len = (size_t)v;
            p += v;
            return true;
        default: return false;
        }
    }
};

uint32_t unit_at(const uint8_t *t, size_t i)
{
    return (uint32_t)t[4 * i] | (uint32_t)t[4 * i + 1] << 8 | (uint32_t)t[4 * i + 2] << 16 | (uint32_t)t[4 * i + 3] << 24;
}
uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

/* "" when the charsmap blob (uint32 trie size, the trie's units, then the rules' strings) is
 * safe to normalise with; else what is wrong. */
std::string charsmap_fault(const uint8_t *blob, size_t n)
{
    if (!n)
        return "";
    if (n <= 4)
        return "its header is cut short";
    uint32_t tsize = unit_at(blob, 0);
    if ((uint64_t)tsize + 4 > n)
        return "its trie claims " + std::to_string(tsize) + " bytes of " + std::to_string(n - 4);
    size_t units = tsize / 4, nstr = n - 4 - tsize;
    const uint8_t *t = blob + 4;
    if (!units)
        return "its trie is empty";
    std::vector<uint8_t> seen(units);
    std::vector<size_t> todo;
    size_t base = unit_offset(unit_at(t, 0));
    if ((base | 0xff) >= units)
        return "its root points past the trie's " + std::to_string(units) + " units";
    todo.push_back(base);
    while (!todo.empty()) {
        base = todo.back();
        todo.pop_back();
        for (uint32_t c = 0; c < 256; c++) {
            size_t child = base ^ c;
            uint32_t u = unit_at(t, child);
            if ((u & (0x80000000u | 0xffu)) != c || seen[child])
                continue; /* no edge for byte c here (a leaf unit's label never matches) */
            seen[child] = 1;
            size_t next = child ^ unit_offset(u);
            if ((next | 0xff) >= units)
                return "unit " + std::to_string(child) + " points past the trie's " + std::to_string(units) + " units";
            if ((u >> 8) & 1 && (unit_at(t, next) & 0x7fffffffu) >= nstr)
                return "unit " + std::to_string(child) + " names a rule past the blob's " + std::to_string(nstr) +
                       " bytes of rules";
            todo.push_back(next);
        }
    }
    return "";
}

/* The model's normalizer (field 3) and denormalizer (field 5) specs' charsmaps (field 2),
 * read from the serialized ModelProto; "" when both are safe. */
std::string rules_fault(const std::string &proto)
{
    pb m{(const uint8_t *)proto.data(), (const uint8_t *)proto.data() + proto.size()};
    uint32_t num;
    const uint8_t *d;
    size_t len;
    while (m.field(&num, &d, &len)) {
        if ((num != 3 && num != 5) || !d)
            continue;
        pb spec{d, d + len};
        uint32_t sn;
        const uint8_t *sd;
        size_t sl;
        while (spec.field(&sn, &sd, &sl)) {
            if (sn != 2 || !sd)
                continue;
            std::string why = charsmap_fault(sd, sl);
            if (!why.empty())
                return std::string(num == 3 ? "normalization" : "denormalization") +
                       " rules (precompiled_charsmap) are damaged: " + why;
        }
    }
    return "";
}

} // namespace

struct igi_spm {
    sentencepiece::SentencePieceProcessor sp;
};

extern "C" int igi_spm_load(const char *path, igi_spm **out, ig_error *err)
{
    *out = nullptr;
    struct stat st;
    if (stat(path, &st) != 0)
        return ig_error_set(err, errno == ENOENT ? IG_ENOTFOUND : IG_EIO, "%s: cannot read the tokenizer: %s", path,
                            strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ig_error_set(err, IG_EUSAGE, "%s: the tokenizer is not a regular file", path);
    try {
        igi_spm *m = new igi_spm;
        auto s = m->sp.Load(path);
        if (!s.ok()) {
            delete m;
            return ig_error_set(err, IG_ECORRUPT, "%s: not a SentencePiece model: %s", path, s.ToString().c_str());
        }
        std::string why = rules_fault(m->sp.serialized_model_proto());
        if (!why.empty()) {
            delete m;
            return ig_error_set(err, IG_EINVAL, "%s: a SentencePiece model whose %s", path, why.c_str());
        }
        *out = m;
        return 0;
    } catch (const std::bad_alloc &) {
        return ig_error_set(err, IG_ENOMEM, "%s: out of memory loading the tokenizer", path);
    } catch (const std::exception &e) {
        return ig_error_set(err, IG_ECORRUPT, "%s: not a SentencePiece model: %s", path, e.what());
    }
}

extern "C" void igi_spm_free(igi_spm *m) { delete m; }

extern "C" uint32_t igi_spm_size(const igi_spm *m) { return (uint32_t)m->sp.GetPieceSize(); }

extern "C" void igi_spm_piece(const igi_spm *m, uint32_t id, char *buf, size_t size)
{
    if (!size)
        return;
    buf[0] = 0;
    if (id >= (uint32_t)m->sp.GetPieceSize())
        return;
    try {
        const std::string &p = m->sp.IdToPiece((int)id);
        size_t n = p.size() < size - 1 ? p.size() : size - 1;
        memcpy(buf, p.data(), n);
        buf[n] = 0;
    } catch (...) {
        buf[0] = 0;
    }
}

extern "C" int igi_spm_is_control(const igi_spm *m, uint32_t id)
{
    return id < (uint32_t)m->sp.GetPieceSize() && m->sp.IsControl((int)id);
}

extern "C" int igi_spm_encode(const igi_spm *m, const char *text, size_t n, uint32_t **ids, size_t *len,
                              size_t *cap, ig_error *err)
{
    try {
        std::vector<int> v;
        auto s = m->sp.Encode(absl::string_view(text, n), &v);
        if (!s.ok())
            return ig_error_set(err, IG_EINVAL, "the tokenizer cannot encode the text: %s", s.ToString().c_str());
        if (*len + v.size() > *cap) {
            size_t c = *cap ? *cap : 1024;
            while (c < *len + v.size())
                c *= 2;
            uint32_t *p = (uint32_t *)realloc(*ids, c * sizeof *p);
            if (!p)
                return ig_error_set(err, IG_ENOMEM, "out of memory");
            *ids = p;
            *cap = c;
        }
        for (size_t i = 0; i < v.size(); i++)
            (*ids)[*len + i] = (uint32_t)v[i];
        *len += v.size();
        return 0;
    } catch (const std::bad_alloc &) {
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    } catch (const std::exception &e) {
        return ig_error_set(err, IG_EINVAL, "the tokenizer cannot encode the text: %s", e.what());
    }
}

extern "C" int igi_spm_decode(const igi_spm *m, const uint32_t *ids, size_t n, char **out, size_t *outlen,
                              ig_error *err)
{
    *out = nullptr;
    *outlen = 0;
    try {
        std::vector<int> v(ids, ids + n);
        int size = m->sp.GetPieceSize();
        for (int &x : v)
            if (x < 0 || x >= size)
                return ig_error_set(err, IG_EUSAGE, "token id %u is not in the tokenizer's vocabulary of %d pieces",
                                    (unsigned)x, size);
        std::string text;
        auto s = m->sp.Decode(v, &text);
        if (!s.ok())
            return ig_error_set(err, IG_EINVAL, "the tokenizer cannot decode the ids: %s", s.ToString().c_str());
        char *p = (char *)malloc(text.size() + 1);
        if (!p)
            return ig_error_set(err, IG_ENOMEM, "out of memory");
        memcpy(p, text.data(), text.size());
        p[text.size()] = 0;
        *out = p;
        *outlen = text.size();
        return 0;
    } catch (const std::bad_alloc &) {
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    } catch (const std::exception &e) {
        return ig_error_set(err, IG_EINVAL, "the tokenizer cannot decode the ids: %s", e.what());
    }
}
