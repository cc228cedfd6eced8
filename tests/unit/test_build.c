/*
 * Builds that stop half-way give back everything they took: a build cancelled by its
 * progress callback while shards are sorting (in child processes, with their suffix arrays
 * in shared memory) leaves no mapping and no directory behind, however often it happens, and
 * a build into an existing directory fails without touching it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "infinigram/build.h"

static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Cancels at the third WRITE report: the first two come as each shard's text is written,
 * the third when a finished sort's shard is about to be recorded. */
static int cancel_cb(void *user, const ig_progress *p)
{
    int *writes = user;
    return p->phase == IG_PHASE_WRITE && ++*writes == 3;
}

int main(void)
{
    char tmpl[] = "/tmp/ig-test-build-XXXXXX";
    const char *root = mkdtemp(tmpl);
    CHECK(root != NULL, "mkdtemp");
    if (!root)
        return check_done("build");
    /* 2 MiB of varied text in two shards, sorted by two child processes */
    size_t n = 2u << 20;
    char *text = malloc(n);
    test_rng r = {7};
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + rng_below(&r, 20));
    /* eight documents (a document never crosses shards) */
    ig_source src[8];
    for (int i = 0; i < 8; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = text + i * (n / 8), .text_len = n / 8};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 2;
    bo.shard_size = n / 2 + 64; /* four documents per shard: two shards */
    int before = -1;
    for (int round = 0; round < 3; round++) {
        char dir[128];
        snprintf(dir, sizeof dir, "%s/idx%d", root, round);
        int writes = 0;
        ig_build_result res;
        ig_error err = {0};
        int rc = ig_build_index(dir, src, 8, NULL, &bo, cancel_cb, &writes, NULL, &res, &err);
        CHECK(rc == IG_ECANCELLED, "round %d: cancelled build returned %d (%s)", round, rc, err.msg);
        struct stat st;
        CHECK(stat(dir, &st) != 0, "round %d: the cancelled build's directory is gone", round);
        int now = count_maps();
        if (round == 0)
            before = now;
        else /* the first round may leave allocator arenas; later rounds must add nothing */
            CHECK(now <= before, "round %d: %d mappings after a cancelled build, %d after the first", round, now,
                  before);
        ig_build_result_free(&res);
    }
    /* a build into an existing directory fails and leaves it alone */
    char dir[128];
    snprintf(dir, sizeof dir, "%s/exists", root);
    CHECK(mkdir(dir, 0755) == 0, "mkdir");
    ig_build_result res;
    ig_error err = {0};
    int rc = ig_build_index(dir, src, 8, NULL, &bo, NULL, NULL, NULL, &res, &err);
    struct stat st;
    CHECK(rc != 0 && strstr(err.msg, "cannot create index directory") && stat(dir, &st) == 0,
          "existing directory: %d %s", rc, err.msg);
    ig_build_result_free(&res);
    rmdir(dir);
    rmdir(root);
    free(text);
    return check_done("build");
}
