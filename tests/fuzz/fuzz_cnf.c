/* Fuzz target: the CNF query parser of `search` (ig_cnf_parse). Any input either parses
 * within the documented caps or fails with a message and an offset inside the input. */
#include <stdlib.h>
#include <string.h>

#include "infinigram/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ig_cnf *q = NULL;
    size_t at = 0;
    ig_error err;
    if (ig_cnf_parse(data, size, &q, &at, &err) == 0) {
        if (!q)
            abort();
        ig_cnf_free(&q);
    } else if (at > size || !err.msg[0]) {
        abort(); /* an error must say what and point inside the query */
    }
    return 0;
}
