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
