/*
 * dups — repeated passages of the loaded corpus: how much of it is duplicated (within
 * documents and across them), the top repeats by length × count with their sources, and
 * with --write FILE the corpus with every later copy removed, as JSONL.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "infinigram/text.h"
#include "shell.h"

static void group3(uint64_t v, char *buf, size_t len)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRIu64, v);
    size_t n = strlen(raw), o = 0;
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
}

/* What --write FILE wrote, for the summary line. */
typedef struct written {
    uint64_t records, kept;
} written;

static int prepare(shell *sh, sh_args *a, void *opts, uint64_t given, void *self)
{
    (void)opts, (void)given, (void)self; /* a word dups takes none of is the codec's "unexpected argument" */
    sh_optval *w = sh_opt_get(a, "write");
    return w ? sh_path_arg(sh, a, &w->value) : SH_OK;
}

/* The run, with a progress bar; then --write FILE, from the complete result only (the
 * file appears only when complete). A failed write fails the command: nothing is shown. */
static int run(shell *sh, sh_args *a, void *opts, void *result, void *self)
{
    ig_dups_opts *o = opts;
    written *w = self;
    if (sh_op_run_progress(sh, a, &ig_op_dups, o, result, &o->progress, &o->user))
        return SH_ERR;
    ig_error e;
    if (o->write.p && ig_dups_write(sh->idx, result, (const char *)o->write.p, (const volatile int *)&sh_interrupted,
                                    &w->records, &w->kept, &e)) {
        ig_dups_result_free(result);
        return sh_fail_ig(sh, a, &e);
    }
    return SH_OK;
}

static void render(shell *sh, const void *opts, const void *result, uint64_t given, void *self)
{
    const ig_dups_opts *o = opts;
    const ig_dups_result *r = result;
    const written *wr = self;
    (void)given;
    char b[32], d[32], w[32], x[32];
    group3(r->bytes, b, sizeof b);
    group3(r->duplicated, d, sizeof d);
    group3(r->duplicated_within, w, sizeof w);
    group3(r->duplicated_across, x, sizeof x);
    const char *filter = o->within_doc ? " (within documents)" : o->across_docs ? " (across documents)" : "";
    sh_printf(sh, "repeats of %" PRIu64 " bytes or more in %s%s: %s of %s bytes duplicated (%.2f%%)\n", o->min_len,
              sh->current ? sh->current : "the corpus", filter, d, b,
              r->bytes ? 100.0 * (double)r->duplicated / (double)r->bytes : 0.0);
    sh_printf(sh, "  an earlier copy in the same document: %s bytes; in an earlier document: %s bytes\n", w, x);
    sh_printf(sh, "  %" PRIu64 " distinct maximal repeat%s (%" PRIu64 " with two copies in one document, %" PRIu64
                  " in several documents)",
              r->repeats, r->repeats == 1 ? "" : "s", r->repeats_within, r->repeats_across);
    if (r->repeats)
        sh_printf(sh, "; longest %" PRIu64 " bytes", r->longest);
    sh_puts(sh, "\n");
    if (r->ntop)
        sh_printf(sh, "  %8s %8s %6s  %s\n", "length", "count", "docs", "text / sources");
    for (size_t i = 0; i < r->ntop; i++) {
        const ig_dups_repeat *p = &r->top[i];
        size_t len = (size_t)p->length;
        const uint8_t *t = ig_text(sh->idx, p->first.shard, p->first.offset, &len);
        size_t show = ig_utf8_prefix(t, len, 60);
        char *q = sh_quote((const char *)t, show);
        sh_printf(sh, "  %8" PRIu64 " %8" PRIu64 " %6" PRIu64 "  %s%s\n", p->length, p->count, p->documents, q ? q : "",
                  show < p->length ? "…" : "");
        free(q);
        for (size_t k = 0; k < p->nsources; k++) {
            const ig_location *loc = &p->sources[k].loc;
            char nm[160];
            sh_doc_label(sh, loc->doc, loc->name, loc->source_line, 40, nm, sizeof nm);
            sh_printf(sh, "  %25s doc %" PRIu64 " %s line %" PRIu64 "\n", "", loc->doc, nm, loc->line);
        }
        if (p->count > p->nsources && o->positions)
            sh_printf(sh, "  %25s (%" PRIu64 " more)\n", "", p->count - p->nsources);
    }
    if (o->write.p) {
        char k[32];
        group3(wr->kept, k, sizeof k);
        sh_printf(sh, "wrote %s: %" PRIu64 " record%s, %s bytes kept\n", (const char *)o->write.p, wr->records,
                  wr->records == 1 ? "" : "s", k);
    }
}

int cmd_dups(shell *sh, sh_args *a)
{
    written w = {0, 0};
    static const sh_face face = {prepare, run, render, NULL};
    return sh_face_run(sh, a, &face, &w);
}
