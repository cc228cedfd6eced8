/* 32-bit libdivsufsort: 4 bytes of working memory per text byte. */
#include "sort.h"

#include <divsufsort.h>

int igi_sort32_into(const uint8_t *t, uint64_t n, int32_t *sa, ig_error *err)
{
    if (n >= INT32_MAX)
        return ig_error_set(err, IG_EINTERNAL, "shard of %llu bytes is too large for the 32-bit sorter",
                            (unsigned long long)n);
    return igi_sort_result(divsufsort(t, sa, (saidx_t)n), "libdivsufsort", n, err);
}
