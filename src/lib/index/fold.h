/*
 * Case-folded indexes. A dataset added with --casefold indexes the Unicode case folding
 * (utf8proc, code point by code point, after NFC) of its documents, so that counts ignore
 * case; the folded text is the shard's `text` and every suffix-array position is a folded
 * offset. What folding changed is kept in the shard's `fold` file, small beside the text,
 * so that locations, snippets and documents show the original bytes:
 *
 *   - a bitmap, one bit per folded byte (little-endian bit order within a byte), set where
 *     an ASCII capital was lowered (the original byte is the folded one minus 32); and
 *   - the exceptions: every other character whose folding changed it (non-ASCII letters,
 *     and the ones whose folding has another length, ß → ss, İ → i̇), sorted by folded
 *     offset, each with its original offset, so that mapping a folded offset back is one
 *     binary search.
 *
 * Folding is per code point and never joins or splits characters across a boundary, so
 * a folded offset either starts a character of the original or lies inside the folding of
 * one exception; such an offset maps to the start of that exception's character.
 */
#ifndef IG_FOLD_H
#define IG_FOLD_H

#include <stdint.h>
#include <stddef.h>
#include "../util/util.h"

/* One exception record of the fold file: LE u64 folded offset, LE u64 original offset,
 * u8 folded length, u8 original length, u8 folded characters, u8 zero, then the original
 * character's bytes (1 to 4, zero-padded). */
#define IG_FOLD_REC 24
/** Longest folding of one code point, in bytes (Unicode's longest is three code points). */
#define IG_FOLD_MAX 16

/** Bytes of the bitmap part of the fold file of an n-byte shard: one bit per byte, padded
 *  to whole 8-byte words so that the records after it are aligned. */
static inline uint64_t ig_fold_bitmap_bytes(uint64_t n) { return (n + 63) / 64 * 8; }

/** What a build accumulates for the shard being read. */
typedef struct igi_folder {
    ig_buf bits;      ///< the bitmap so far (whole bytes; trailing zero bytes may be missing)
    ig_buf exc;       ///< exception records so far
    uint64_t orig;    ///< original bytes of the shard so far
} igi_folder;

/** Appends the folding of p[0, n) to `text`; with f, records what changed (offsets relative
 *  to the start of `text`, original offsets continuing f->orig). Valid UTF-8 is folded; any
 *  other byte is kept. IG_ENOMEM on allocation failure (err set). */
int igi_fold_append(ig_buf *text, const uint8_t *p, size_t n, igi_folder *f, ig_error *err);
/** Empties f for the next shard (keeps its buffers' memory). */
void igi_folder_reset(igi_folder *f);
void igi_folder_free(igi_folder *f);

#endif
