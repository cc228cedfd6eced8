/*
 * Tokenising while building a token dataset (`:dataset add NAME SRC --tokenizer M.model`),
 * against `spm_encode --output_format=id` on the same model and text.
 *
 * The model: a BPE model of 32,000 pieces trained with spm_train on Tiny Shakespeare (here,
 * at the start, unless --model names one). The text: Tiny Shakespeare repeated to --mb MiB
 * (default 4) in one file, one document (the build cuts it into runs of lines for its
 * threads). Measured, median of --reps runs (default 3), the page cache warm:
 * Each round runs spm_encode and then every build, so that drift falls on all alike.
 *   - spm_encode: wall time of `spm_encode --model=M --output_format=id < TEXT > /dev/null`
 *     (one thread: spm_encode encodes its lines one after another);
 *   - build: ig_build_index of the same file with the model, --jobs 1 and each of --jobs
 *     (default 1,2), tokenising time = from the build's start to its first sort report
 *     (reading, tokenising and gathering the ids; sorting and writing follow), and the
 *     whole build's time.
 * Tokenising throughput is MB of text per second; the ratio is ours ÷ spm_encode's.
 *
 * Usage: bench_spm [--model M] [--mb N] [--reps N] [--jobs 1,2,...]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "infinigram/infinigram.h"

typedef struct timing {
    double start, sorted;
} timing;

static int on_progress(void *user, const ig_progress *p)
{
    timing *t = user;
    if (p->phase == IG_PHASE_SORT && t->sorted == 0)
        t->sorted = bench_now();
    return 0;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "bench_spm: failed (%d): %s\n", rc, cmd);
    return rc;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *jobs_list = "1,2";
    size_t mb = 4;
    int reps = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs_list = argv[++i];
        else {
            fprintf(stderr, "usage: bench_spm [--model M] [--mb N] [--reps N] [--jobs 1,2,...]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 50 || mb < 1)
        return 2;
    if (system("command -v spm_encode >/dev/null && command -v spm_train >/dev/null") != 0) {
        fprintf(stderr, "bench_spm: spm_train and spm_encode (Debian package sentencepiece) are needed\n");
        return 77;
    }
    char *tmp = bench_mkdtemp("spm");
    bench_corpus sh;
    if (!tmp || bench_corpus_shakespeare(&sh, NULL))
        return 1;
    char cmd[16384], mpath[4096], text[4096];
    if (!model) {
        snprintf(cmd, sizeof cmd, "spm_train --input=%s --model_prefix=%s/bpe32k --vocab_size=32000 --model_type=bpe "
                 "--minloglevel=2 >/dev/null 2>&1", sh.path, tmp);
        if (run(cmd))
            return 1;
        snprintf(mpath, sizeof mpath, "%s/bpe32k.model", tmp);
        model = mpath;
    }
    snprintf(text, sizeof text, "%s/text.txt", tmp);
    FILE *f = fopen(text, "wb");
    size_t bytes = 0;
    while (f && bytes < mb << 20) {
        fwrite(sh.data, 1, sh.len, f);
        bytes += sh.len;
    }
    if (!f || fclose(f))
        return 1;
    /* Interleaved: each round runs spm_encode, then every --jobs build, so that the machine's
     * drift over the run falls on all of them alike. */
    int jobs[16], nj = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", jobs_list);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && nj < 16; tok = strtok_r(NULL, ",", &save))
        if ((jobs[nj] = atoi(tok)) > 0)
            nj++;
    double *spm = calloc((size_t)reps, sizeof *spm), *tk = calloc((size_t)(reps * nj), sizeof *tk),
           *all = calloc((size_t)(reps * nj), sizeof *all);
    if (!spm || !tk || !all)
        return 1;
    snprintf(cmd, sizeof cmd, "spm_encode --model=%s --output_format=id < %s > /dev/null", model, text);
    run(cmd); /* the page cache, and the model read once */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/idx", tmp);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (run(cmd))
            return 1;
        spm[r] = bench_now() - t0;
        for (int j = 0; j < nj; j++) {
            bench_rmtree(dir);
            ig_token_options to = {.format = IG_TOKENS_TEXT, .tokenizer = model};
            ig_ingest_options in;
            ig_ingest_options_default(&in);
            in.tokens = &to;
            ig_build_options bo;
            ig_build_options_default(&bo);
            bo.jobs = jobs[j];
            ig_source s = {.kind = IG_SOURCE_FILE, .path = text};
            ig_build_result res;
            ig_error e;
            timing t = {.start = bench_now()};
            if (ig_build_index(dir, &s, 1, &in, &bo, on_progress, &t, NULL, &res, &e)) {
                fprintf(stderr, "bench_spm: build: %s\n", e.msg);
                return 1;
            }
            all[j * reps + r] = bench_now() - t.start;
            tk[j * reps + r] = t.sorted - t.start;
            ig_build_result_free(&res);
        }
    }
    double spm_s = bench_median(spm, (size_t)reps);
    double MB = (double)bytes / 1e6;
    printf("text: %.1f MB (Tiny Shakespeare repeated), model: %s\n", MB, model);
    printf("spm_encode --output_format=id: %.3f s, %.2f MB/s\n", spm_s, MB / spm_s);
    double tok_s[16], all_s[16];
    for (int j = 0; j < nj; j++) {
        tok_s[j] = bench_median(tk + j * reps, (size_t)reps);
        all_s[j] = bench_median(all + j * reps, (size_t)reps);
        printf("build --jobs %d: tokenising %.3f s, %.2f MB/s (%.2f× spm_encode); whole build %.3f s\n", jobs[j],
               tok_s[j], MB / tok_s[j], spm_s / tok_s[j], all_s[j]);
    }
    bench_result_begin("bench_spm", argc, argv);
    printf(",\"mb\":%.1f,\"spm_encode_s\":%.4f,\"spm_encode_mb_s\":%.3f", MB, spm_s, MB / spm_s);
    for (int j = 0; j < nj; j++)
        printf(",\"jobs%d_tokenise_s\":%.4f,\"jobs%d_mb_s\":%.3f,\"jobs%d_ratio\":%.3f,\"jobs%d_build_s\":%.4f", jobs[j],
               tok_s[j], jobs[j], MB / tok_s[j], jobs[j], spm_s / tok_s[j], jobs[j], all_s[j]);
    printf("}\n");
    free(tk);
    free(all);
    free(spm);
    bench_corpus_free(&sh);
    bench_rmtree(tmp);
    free(tmp);
    return 0;
}
