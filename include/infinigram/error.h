/*
 * Errors: every library call that can fail returns 0 or a negative IG_E* code and fills an
 * ig_error with a one-line message carrying context (path, byte offset, errno text); the few
 * that take no ig_error (lookups such as ig_locate_doc, ig_doc_metadata) say in their
 * comment what they return instead. The library never prints; callers decide how to show
 * the message. The code names match the `error.code` strings of the JSON contract
 * (ig_error_code_name).
 */
#ifndef IG_ERROR_H
#define IG_ERROR_H

#include <stddef.h>

#if defined(__GNUC__)
#define IG_API __attribute__((visibility("default")))
#define IG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define IG_API
#define IG_PRINTF(a, b)
#endif

/* C linkage for C++ callers: every header's declarations sit between these two. */
#ifdef __cplusplus
#define IG_BEGIN_DECLS extern "C" {
#define IG_END_DECLS }
#else
#define IG_BEGIN_DECLS
#define IG_END_DECLS
#endif

IG_BEGIN_DECLS

enum {
    IG_OK = 0,
    IG_EUSAGE = -1,      ///< bad argument to a call (contract code "usage")
    IG_ENOTFOUND = -2,   ///< missing file, dataset, document ("not_found")
    IG_EEXISTS = -3,     ///< name already taken ("exists")
    IG_EINVAL = -4,      ///< bad input data: invalid UTF-8, bad JSON, empty source ("invalid_input")
    IG_EIO = -5,         ///< read/write/fsync failure, disk full ("io")
    IG_ECORRUPT = -6,    ///< index files truncated, wrong magic/version/checksum ("corrupt")
    IG_EBUSY = -7,       ///< catalog or index locked by another process ("busy")
    IG_ECANCELLED = -8,  ///< cancelled through the cancel flag ("cancelled")
    IG_EINTERNAL = -9,   ///< a bug ("internal")
    IG_ENOMEM = -10,     ///< an allocation failed ("out_of_memory"); nothing is left half-done
};

#define IG_ERRMSG_MAX 1024

/** Error detail filled by a failing call. A call that succeeds leaves it as it was (like
 *  errno): read it after a non-zero return only; ig_error_clear resets it. */
typedef struct ig_error {
    int code;                  ///< IG_OK or a negative IG_E* code
    char msg[IG_ERRMSG_MAX];   ///< human-readable, one line, with context
} ig_error;

/** Contract name of a code: "usage", "not_found", ... ("internal" for unknown codes); a static string. */
IG_API const char *ig_error_code_name(int code);

/** Sets err (if non-NULL) and returns code; printf-style message. */
IG_API int ig_error_set(ig_error *err, int code, const char *fmt, ...) IG_PRINTF(3, 4);

/** Clears err to IG_OK with an empty message. */
IG_API void ig_error_clear(ig_error *err);

IG_END_DECLS

#endif
