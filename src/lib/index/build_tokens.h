/*
 * The build of a token dataset of our own (build_tokens.c), reached through ig_build_index
 * when the ingest options carry token options (build.h states the layout written).
 */
#ifndef IG_BUILD_TOKENS_H
#define IG_BUILD_TOKENS_H

#include "infinigram/build.h"

/** ig_build_index for in->tokens, with `jobs` threads tokenising and sorting shards; writes
 *  `dir` (which must not exist) and removes it on failure. */
int igi_build_tokens(const char *dir, const ig_source *sources, size_t nsources, const ig_ingest_options *in,
                     const ig_build_options *bo, int jobs, ig_progress_fn progress, void *user,
                     const volatile sig_atomic_t *cancel, ig_build_result *res, ig_error *err);

/** Checks every file a token dataset's manifest (tokens.json in dir) lists against its size
 *  and checksum: IG_ECORRUPT naming the first file that differs, or the manifest. With
 *  changed_only, only the files modified later than the manifest (the build writes it last),
 *  as an open does: an edited file is refused, an untouched one is not read. */
int igi_tokens_verify_files(const char *dir, int changed_only, ig_error *err);

/** The token width (1, 2 or 4) a built token dataset's manifest (tokens.json in dir) states,
 *  or 0 when it cannot be read. */
uint32_t igi_tokens_width(const char *dir);

#endif
