/*
 * Error codes and messages: the single place that maps codes to the contract's names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "infinigram/error.h"

const char *ig_error_code_name(int code)
{
    switch (code) {
    case IG_OK: return "ok";
    case IG_EUSAGE: return "usage";
    case IG_ENOTFOUND: return "not_found";
    case IG_EEXISTS: return "exists";
    case IG_EINVAL: return "invalid_input";
    case IG_EIO: return "io";
    case IG_ECORRUPT: return "corrupt";
    case IG_EBUSY: return "busy";
    case IG_ECANCELLED: return "cancelled";
    case IG_ENOMEM: return "out_of_memory";
    default: return "internal";
    }
}

int ig_error_set(ig_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void ig_error_clear(ig_error *err)
{
    if (err) {
        err->code = IG_OK;
        err->msg[0] = '\0';
    }
}
