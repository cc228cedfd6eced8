/* 32-bit libdivsufsort: 4 bytes of working memory per text byte. */
#include "sort.h"

#include <divsufsort.h>
#include <stdlib.h>

int ig_sort32(const uint8_t *t, uint64_t n, int32_t **sa, ig_error *err)
{
    if (n >= INT32_MAX)
        return ig_error_set(err, IG_EINTERNAL, "shard of %llu bytes is too large for the 32-bit sorter",
                            (unsigned long long)n);
    int32_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return ig_error_set(err, IG_EINTERNAL, "out of memory allocating a %llu-entry suffix array",
                            (unsigned long long)n);
    if (divsufsort(t, a, (saidx_t)n) != 0) {
        free(a);
        return ig_error_set(err, IG_EINTERNAL, "libdivsufsort failed on a %llu-byte shard",
                            (unsigned long long)n);
    }
    *sa = a;
    return 0;
}
