/* Unit tests of the internal helpers: buffers, paths, streaming checksum. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/util.h"

int main(void)
{
    test_rng r = {42};
    /* streaming hash equals one-shot hash for every split */
    for (int t = 0; t < 2000; t++) {
        size_t n = rng_below(&r, 300);
        uint8_t buf[300];
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rng_next(&r);
        uint64_t whole = igi_hash_bytes(buf, n);
        ig_hash h;
        igi_hash_init(&h);
        size_t i = 0;
        while (i < n) {
            size_t k = 1 + rng_below(&r, 40);
            if (k > n - i)
                k = n - i;
            igi_hash_update(&h, buf + i, k);
            i += k;
        }
        CHECK(igi_hash_final(&h) == whole, "split hash differs (n=%zu)", n);
        if (n) {
            buf[rng_below(&r, n)] ^= (uint8_t)(1 + rng_below(&r, 255));
            CHECK(igi_hash_bytes(buf, n) != whole, "hash did not change after a byte flip (n=%zu)", n);
        }
    }
    CHECK(igi_hash_bytes("a", 1) != igi_hash_bytes("a\0", 2), "length must matter");

    ig_buf b = {0};
    for (int i = 0; i < 10000; i++)
        CHECK(ig_buf_append(&b, &i, sizeof i) == 0, "append");
    CHECK(b.len == 10000 * sizeof(int), "len %zu", b.len);
    int ok = 1;
    for (int i = 0; i < 10000; i++)
        ok &= ((int *)b.data)[i] == i;
    CHECK(ok, "buffer contents");
    ig_buf_free(&b);

    char *j = igi_path_join("/a/", "b");
    CHECK(!strcmp(j, "/a/b"), "%s", j);
    free(j);
    j = igi_path_join("/a", "b");
    CHECK(!strcmp(j, "/a/b"), "%s", j);
    free(j);

    char tmpl[] = "/tmp/igutilXXXXXX";
    CHECK(mkdtemp(tmpl) != NULL, "mkdtemp");
    char *deep = igi_aprintf("%s/x/y/z", tmpl);
    ig_error e;
    CHECK(igi_mkdir_p(deep, &e) == 0, "mkdir_p: %s", e.msg);
    char *f = igi_aprintf("%s/file", deep);
    CHECK(igi_write_file_sync(f, "hello", 5, &e) == 0, "write: %s", e.msg);
    CHECK(igi_write_file_sync(f, "again", 5, &e) == IG_EIO, "O_EXCL must refuse an existing file");
    char *txt = NULL;
    size_t len = 0;
    CHECK(igi_read_file(f, 5, &txt, &len, &e) == 0 && len == 5 && !strcmp(txt, "hello"), "read back");
    free(txt);
    CHECK(igi_read_file("/nonexistent/file", 100, &txt, &len, &e) == IG_ENOTFOUND, "missing file code");
    CHECK(strstr(e.msg, "/nonexistent/file") != NULL, "message names the path: %s", e.msg);
    /* a file over its cap, a device that never ends and a FIFO with no writer: refused at once */
    txt = NULL;
    CHECK(igi_read_file(f, 4, &txt, &len, &e) == IG_EUSAGE && strstr(e.msg, "larger than the 4 bytes") && !txt,
          "a file over its cap: %s", e.msg);
    CHECK(igi_read_file("/dev/zero", 1 << 20, &txt, &len, &e) == IG_EUSAGE && strstr(e.msg, "not a regular file"),
          "a device: %s", e.msg);
    char *fifo = igi_aprintf("%s/fifo", deep);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    CHECK(igi_read_file(fifo, 1 << 20, &txt, &len, &e) == IG_EUSAGE && strstr(e.msg, "not a regular file") &&
              strstr(e.msg, fifo),
          "a FIFO: %s", e.msg);
    free(fifo);
    CHECK(igi_remove_tree(tmpl, &e) == 0, "remove_tree: %s", e.msg);
    struct stat st;
    CHECK(stat(tmpl, &st) != 0, "tree removed");
    CHECK(igi_remove_tree(tmpl, &e) == 0, "removing a missing tree is fine");
    free(deep);
    free(f);
    return check_done("util");
}
