/*
 * SentencePiece models (Llama 2, T5 and the models trained with spm_train), seen from C: a thin
 * wrapper over libsentencepiece's C++ processor (spm.cc, the only C++ of the library). A
 * model is loaded once and is then read-only: encoding and decoding from several threads at
 * once is safe, as the processor's const methods are. No C++ exception leaves the wrapper.
 */
#ifndef IG_SPM_H
#define IG_SPM_H

#include <stddef.h>
#include <stdint.h>
#include "infinigram/error.h"

typedef struct igi_spm igi_spm;

/** Loads the model file `path` into *out (free with igi_spm_free). IG_ENOTFOUND for a missing
 *  file, IG_ECORRUPT for a file that is not a SentencePiece model, IG_EINVAL for a model whose
 *  normalization rules would send the tokenizer outside them (checked here, as libsentencepiece
 *  does not); the message names the path and the reason. */
int igi_spm_load(const char *path, igi_spm **out, ig_error *err);
void igi_spm_free(igi_spm *m);

/** Number of pieces (ids 0 .. size−1). */
uint32_t igi_spm_size(const igi_spm *m);

/** The piece of id `id` as the model spells it ("▁the", "<0x0A>", "<unk>"), NUL-terminated
 *  into buf (the caller's; cut if too long); "" for an id out of range. */
void igi_spm_piece(const igi_spm *m, uint32_t id, char *buf, size_t size);

/** Whether id is a control token (<s>, </s>, padding): it stands for no text. */
int igi_spm_is_control(const igi_spm *m, uint32_t id);

/** Appends the ids of text[0, n) to *ids (malloc'd, grown; *len entries, *cap capacity; all
 *  three zero at first), exactly as `spm_encode --output_format=id` gives them for that text
 *  as one line. IG_ENOMEM or IG_EINVAL (the model's own message). */
int igi_spm_encode(const igi_spm *m, const char *text, size_t n, uint32_t **ids, size_t *len, size_t *cap,
                   ig_error *err);

/** The text of ids[0, n) (*out malloc'd, *outlen bytes, NUL-terminated), as spm_decode gives it. */
int igi_spm_decode(const igi_spm *m, const uint32_t *ids, size_t n, char **out, size_t *outlen, ig_error *err);

#endif
