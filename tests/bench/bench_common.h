/*
 * Shared helpers of the benchmark programs (bench_build, bench_count): the clock,
 * order statistics, temporary directories, on-disk size of an index, and the two
 * corpora. Both corpora are real text available offline on a clean Debian machine:
 *
 *   tinyshakespeare  the bundled datasets/tinyshakespeare.txt (1.1 MB), used as is;
 *   usr-include      every regular *.h file under /usr/include (symlinks not followed),
 *                    in strcmp order of their paths, each appended whole while the total
 *                    stays <= the byte budget (16 MiB by default; the walk stops at the
 *                    first file that would overflow it). Files that are not valid UTF-8,
 *                    or hold a 0xFF or NUL byte, are skipped. Written to one temp file,
 *                    so it is one document; its FNV-1a hash is printed so runs on
 *                    different machines can tell whether they indexed the same bytes.
 */
#ifndef IG_BENCH_COMMON_H
#define IG_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifndef IG_BENCH_DATASET
#define IG_BENCH_DATASET "datasets/tinyshakespeare.txt"
#endif

#define BENCH_MiB (1024.0 * 1024.0)

typedef struct bench_corpus {
    char name[32];         ///< "tinyshakespeare" or "usr-include"
    char path[4096];       ///< file holding the corpus bytes
    uint8_t *data;         ///< its bytes (malloc'd)
    size_t len;
    size_t nfiles;         ///< files concatenated (1 for tinyshakespeare)
    size_t nskipped;       ///< files skipped (not UTF-8, 0xFF or NUL)
    uint64_t hash;         ///< FNV-1a 64 of the bytes
    int is_temp;           ///< path is ours to delete
} bench_corpus;

/** Monotonic clock, seconds. */
double bench_now(void);
/** Monotonic clock, nanoseconds. */
uint64_t bench_now_ns(void);

/** Sorts v in place and returns the q-quantile (0..1, nearest rank). */
double bench_quantile(double *v, size_t n, double q);
double bench_median(double *v, size_t n);
/** xorshift64*: the next number of the sequence in *state (fixed seeds: the same queries on
 *  every run and machine). */
uint64_t bench_rnd(uint64_t *state);

uint64_t bench_fnv1a(const uint8_t *p, size_t n);

/** Creates a fresh directory under $IG_BENCH_TMP, $TMPDIR or /tmp; returns malloc'd path. */
char *bench_mkdtemp(const char *tag);
/** rm -rf; returns 0 or -1. */
int bench_rmtree(const char *path);

/** Sum of regular file sizes below dir (apparent) and of allocated blocks (du). */
int bench_dir_size(const char *dir, uint64_t *apparent, uint64_t *allocated, size_t *nfiles);

/** Loads the bundled dataset (path given at compile time, or `path` if non-NULL). */
int bench_corpus_shakespeare(bench_corpus *c, const char *path);
/** Builds the usr-include corpus into a file in `tmpdir`; fails below `min_bytes`. */
int bench_corpus_usr_include(bench_corpus *c, const char *tmpdir, size_t max_bytes,
                             size_t min_bytes);
/** The same from every *.h file under `root` (a source tree, say), named after the tree's last
 *  component ("linux-source-6.1-h"): for sizes that /usr/include is too small to give. */
int bench_corpus_headers(bench_corpus *c, const char *root, const char *tmpdir, size_t max_bytes,
                         size_t min_bytes);
void bench_corpus_free(bench_corpus *c);

/** One line describing the machine (CPU model, cores, RAM). */
void bench_machine(char *buf, size_t n);

/** meson build type the benchmark was compiled with (IG_BENCH_BUILDTYPE). */
const char *bench_build_type(void);

/** Starts the program's last line, `RESULT name {"buildtype":..,"machine":..,"date":..,
 *  "load_average":..,"command":..` (date in UTC to the minute; the one-minute load average
 *  at the end of the run; command: the program's base name and its arguments). The caller prints its own members, each after a comma, then "}\n".
 *  tests/bench/front_page.py --update turns these lines into the tables of BENCHMARKS.md. */
void bench_result_begin(const char *name, int argc, char **argv);

#endif
