/* 64-bit libdivsufsort: needed for shards of 2 GiB and more; 8 bytes per text byte. */
#include "sort.h"

#include <divsufsort64.h>

int igi_sort64_into(const uint8_t *t, uint64_t n, int64_t *sa, ig_error *err)
{
    return igi_sort_result(divsufsort64(t, sa, (saidx64_t)n), "libdivsufsort64", n, err);
}
