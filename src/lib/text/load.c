/*
 * Reading one text file whole, with the same rules as a source named directly
 * (byte range, UTF-8 validation with offsets, NFC): used for held-out text.
 */
#include "infinigram/text.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>

#include "ingest.h"

static int capture(void *ctx, const char *name, uint64_t source_line, const uint8_t *text, size_t len,
                   ig_error *err)
{
    (void)name;
    (void)source_line;
    if (igi_buf_append(ctx, text, len))
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
    struct stat st;
    if (stat(path, &st) != 0)
        return igi_error_errno(err, errno, path, "cannot read");
    if (S_ISDIR(st.st_mode))
        return ig_error_set(err, IG_EUSAGE, "%s: is a directory, not a text file", path);
    ig_ingest_file f = {.path = (char *)path, .size = (uint64_t)st.st_size, .in_walk = 0};
    ig_ingest_stats stats = {0};
    ig_buf b = {0};
    rc = igi_ingest_file_read(&f, &o, capture, &b, &stats, NULL, err);
    igi_ingest_stats_free(&stats);
    if (!rc && igi_buf_append(&b, "", 1))
        rc = ig_error_set(err, IG_ENOMEM, "out of memory");
    if (rc) {
        igi_buf_free(&b);
        return rc;
    }
    *out = b.data;
    *len = b.len - 1;
    return 0;
}
