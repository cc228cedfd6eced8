/*
 * What the fuzz targets share: a small corpus built once per process into a temporary
 * directory (two shards with prefix tables and sampled keys, several documents, so that
 * every index file and query path is present), and cleanup at exit.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/** A fresh temporary directory for this process (removed at exit). */
const char *fuzz_tmpdir(void);

/** The small corpus's sources: three inline documents. */
extern const char *const fuzz_docs[3];

/** Builds the small corpus into `dir` (which must not exist); aborts the fuzzer on failure. */
void fuzz_build_index(const char *dir);

/** A catalog in this process's temporary directory holding the small corpus as dataset
 *  "fz", built (one job); aborts the fuzzer on failure. The caller's, never closed. */
struct ig_catalog *fuzz_catalog(void);

/** Runs operation `op` with its fields set from the text pairs kv (name, value, …, NULL) and
 *  writes its JSON: an error is an answer, a crash is the bug; aborts on a field it cannot set. */
struct ig_op;
struct ig_op_ctx;
void fuzz_run_op(const struct ig_op *op, const struct ig_op_ctx *ctx, const char *const *kv);

/** Writes n bytes of b to path, replacing it; aborts the fuzzer on failure. */
void fuzz_put(const char *path, const uint8_t *b, size_t n);

/** Removes a directory tree (best effort). */
void fuzz_rmtree(const char *dir);

#endif
