/*
 * Reading one text file whole, with the same rules as a source named directly
 * (byte range, UTF-8 validation with offsets, NFC): used for held-out text.
 */
#include "infinigram/text.h"
#include <stdlib.h>
#include <string.h>

#include "ingest.h"

static int capture(void *ctx, const char *name, uint64_t source_line, const uint8_t *text, size_t len,
                   ig_error *err)
{
    (void)name;
    (void)source_line;
    if (ig_buf_append(ctx, text, len))
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    return 0;
}

int ig_load_text(const char *path, const char *range_text, int normalize, uint8_t **out, size_t *len,
                 ig_error *err)
{
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    o.normalize = normalize;
    int rc;
    if (range_text) {
        if ((rc = ig_byte_range_parse(range_text, &o.range, err)))
            return rc;
        o.has_range = 1;
    }
    ig_buf b = {0};
    rc = igi_ingest_path(path, "a text file", "cannot read", 0, &o, capture, &b, err);
    if (!rc && ig_buf_append(&b, "", 1))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    if (rc) {
        ig_buf_free(&b);
        return rc;
    }
    *out = b.data;
    *len = b.len - 1;
    return 0;
}
