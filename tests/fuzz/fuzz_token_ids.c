/* Fuzz target: token datasets built from ids (the first byte picks a flat u16 or u32 array or
 * JSONL id lists, with or without a vocabulary of 300 ids, and the separator). A build either
 * fails with a message naming the file, or gives an index that opens and answers a count and a
 * next-token histogram of the ids it was given. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "infinigram/infinigram.h"
#include "index/build_tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char src[160], dir[160], vocab[160];
    if (!src[0]) {
        snprintf(src, sizeof src, "%s/ids", fuzz_tmpdir());
        snprintf(dir, sizeof dir, "%s/idx", fuzz_tmpdir());
        snprintf(vocab, sizeof vocab, "%s/vocab.json", fuzz_tmpdir());
        FILE *f = fopen(vocab, "w");
        if (!f)
            abort();
        fputc('[', f);
        for (int i = 0; i < 300; i++)
            fprintf(f, "%s\"p%d\"", i ? "," : "", i);
        fputc(']', f);
        fclose(f);
    }
    if (size < 1 || size > 1 << 16)
        return 0;
    uint8_t mode = data[0];
    int fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    close(fd);
    ig_token_options to;
    ig_token_options_default(&to);
    to.format = mode % 3 == 2 ? IG_TOKENS_JSONL_IDS : IG_TOKENS_IDS;
    to.dtype = mode % 3 == 0 ? 2 : 4;
    to.separator = (mode >> 2) & 1 ? 0 : to.dtype == 2 ? 65535 : UINT32_MAX;
    to.vocab = (mode >> 3) & 1 ? vocab : NULL;
    ig_ingest_options in;
    ig_ingest_options_default(&in);
    in.tokens = &to;
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1 + ((mode >> 4) & 1);
    bo.shard_size = (mode >> 5) & 1 ? 64 : 0;
    ig_source s = {.kind = IG_SOURCE_FILE, .path = src};
    ig_build_result res;
    ig_error err;
    err.msg[0] = '\0';
    fuzz_rmtree(dir);
    if (ig_build_index(dir, &s, 1, &in, &bo, NULL, NULL, NULL, &res, &err)) {
        if (!strstr(err.msg, src) && !strstr(err.msg, "nothing to build"))
            abort(); /* an error names the file */
        if (access(dir, F_OK) == 0)
            abort(); /* and leaves nothing behind */
        return 0;
    }
    ig_build_result_free(&res);
    if (igi_tokens_verify_files(dir, 0, &err))
        abort();
    ig_index *idx = NULL;
    ig_attach_options ao = {.vocab = to.vocab};
    if (ig_index_attach(&idx, dir, &ao, &err))
        abort(); /* what the build wrote opens */
    uint32_t tw = ig_index_token_width(idx);
    uint8_t pat[8] = {0};
    for (uint32_t i = 0; i < tw; i++) /* the first id of the file, if any, as a pattern */
        pat[i] = size > 1 + i ? data[1 + i] : 0;
    ig_index_info info;
    ig_index_get_info(idx, &info);
    ig_range *r = calloc(info.shards ? info.shards : 1, sizeof *r);
    if (!r)
        abort();
    uint64_t count = ig_find(idx, pat, tw, r);
    ig_token_count *next = NULL;
    size_t n = 0;
    if (!ig_token_next(idx, r, tw, &next, &n, &err)) {
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += next[i].count;
        if (sum != count)
            abort(); /* every occurrence has a next token (the end of a document counts) */
    }
    free(next);
    free(r);
    ig_index_close(&idx);
    return 0;
}
