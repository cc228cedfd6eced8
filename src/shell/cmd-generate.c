/*
 * generate — parse, run the generate operation (its text streamed to the terminal as it
 * becomes final), render the summary, and keep the generation for explain --step/--last
 * and spans --last.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static void stream_text(void *user, const uint8_t *p, size_t n)
{
    shell *sh = user;
    sh_write_text(sh, p, n);
    fflush(sh->out);
}

/* In text mode the prompt, then the text as it comes. */
static int prepare(shell *sh, sh_args *a, void *opts, uint64_t given, void *self)
{
    ig_generate_opts *o = opts;
    (void)a, (void)given, (void)self;
    if (!sh->json) {
        o->on_text = stream_text;
        o->user = sh;
    }
    return SH_OK;
}

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_generate_result *r = result;
    (void)opts, (void)given, (void)self;
    char where[256] = "";
    int tokens = ig_index_token_width(sh->idx) != 0;
    const char *unit = tokens ? "tokens" : "bytes";
    if (r->has_source) {
        char nm[160];
        sh_doc_label(sh, r->longest_source.doc, r->longest_source.name, r->longest_source.source_line, 30, nm, sizeof nm);
        snprintf(where, sizeof where, " (doc %" PRIu64 ", %s %s %" PRIu64 ")", r->longest_source.doc, nm,
                 tokens ? "token" : "line", tokens ? r->longest_source.offset : r->longest_source.line);
    }
    char mname[96];
    sh_printf(sh, "\n%s[%" PRIu64 " %s in %.1f ms · %s · seed %" PRIu64 " · stop: %s · median effective n %" PRIu64
                  " · longest verbatim span %" PRIu64 " %s%s · %.0f%% of output inside corpus spans ≥ 20 %s]%s\n",
              sh_c(sh, SH_DIM), r->chars, tokens ? "tokens" : "chars", sh->fake_clock ? 0 : sh->elapsed * 1e3,
              sh_model_name(&r->model, mname, sizeof mname), r->seed,
              ig_stop_reason_name(r->stop_reason), r->median_effective_n, r->longest_span, unit, where,
              100 * r->inside_spans_20, unit, sh_c(sh, SH_RESET));
}

/* Kept for explain --step / --last and spans --last: the result's buffers move. */
static int finish(shell *sh, sh_args *a, void *result, void *self)
{
    (void)a, (void)self;
    ig_error e; /* out of memory: explain --step then says there was no generation */
    ig_generation_keep(&sh->last, sh->current, result, &e);
    return SH_OK;
}

const sh_face sh_generate_face = {prepare, NULL, render, finish};
