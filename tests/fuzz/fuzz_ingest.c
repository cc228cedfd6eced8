/* Fuzz target: ingestion of a source file as text, lines or JSON Lines (the first byte
 * picks the format and the flags). The file either becomes documents that are valid
 * UTF-8 without 0xFF, or fails with a message naming it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "infinigram/infinigram.h"
#include "text/ingest.h"

static int sink(void *ctx, const char *name, uint64_t line, const uint8_t *text, size_t len, ig_error *err)
{
    (void)ctx;
    (void)name;
    (void)line;
    (void)err;
    size_t bad;
    if (!ig_utf8_valid(text, len, &bad) || memchr(text, 0xFF, len))
        abort(); /* documents are valid UTF-8 and never hold the separator */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128];
    if (!path[0])
        snprintf(path, sizeof path, "%s/source", fuzz_tmpdir());
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    close(fd);
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    o.format = mode % 3 == 0 ? IG_FORMAT_TEXT : mode % 3 == 1 ? IG_FORMAT_LINES : IG_FORMAT_JSONL;
    o.lossy = (mode >> 2) & 1;
    o.normalize = !((mode >> 3) & 1);
    o.strict = (mode >> 4) & 1;
    ig_ingest_file f = {.path = path, .size = size - 1, .in_walk = (mode >> 5) & 1};
    ig_ingest_stats st = {0};
    ig_error err;
    err.msg[0] = '\0';
    if (igi_ingest_file_read(&f, &o, sink, NULL, &st, NULL, &err) && !strstr(err.msg, path))
        abort(); /* an error names the file */
    igi_ingest_stats_free(&st);
    return 0;
}
