/* 64-bit libdivsufsort: needed for shards of 2 GiB and more; 8 bytes per text byte. */
#include "sort.h"

#include <divsufsort64.h>

int igi_sort64_into(const uint8_t *t, uint64_t n, int64_t *sa, ig_error *err)
{
    int rc = divsufsort64(t, sa, (saidx64_t)n);
    if (rc == -2) /* its only allocation failed */
        return ig_error_set(err, IG_ENOMEM, "out of memory sorting a %llu-byte shard", (unsigned long long)n);
    if (rc != 0)
        return ig_error_set(err, IG_EINTERNAL, "libdivsufsort64 failed on a %llu-byte shard",
                            (unsigned long long)n);
    return 0;
}
