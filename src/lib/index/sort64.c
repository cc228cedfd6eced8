/* 64-bit libdivsufsort: needed for shards of 2 GiB and more; 8 bytes per text byte. */
#include "sort.h"

#include <divsufsort64.h>
#include <stdlib.h>

int ig_sort64(const uint8_t *t, uint64_t n, int64_t **sa, ig_error *err)
{
    int64_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return ig_error_set(err, IG_EINTERNAL, "out of memory allocating a %llu-entry suffix array",
                            (unsigned long long)n);
    if (divsufsort64(t, a, (saidx64_t)n) != 0) {
        free(a);
        return ig_error_set(err, IG_EINTERNAL, "libdivsufsort64 failed on a %llu-byte shard",
                            (unsigned long long)n);
    }
    *sa = a;
    return 0;
}
