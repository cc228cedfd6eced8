/*
 * contam — which items of an eval set occur in the loaded corpus: per item its n-grams
 * (BFF's 13 words by default), how many occur (exact counts from the index), the overlap,
 * the longest match and its first source; then how many items are contaminated at the
 * threshold, how many partly, and what a Bloom filter of BFF's size would have got wrong.
 * The shell reads the eval file; the operation gets its items.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* Items listed: the `list` with the highest overlap, shown in item order. */
static int cmp_overlap(const void *a, const void *b, void *arg)
{
    const ig_contam_item *it = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (it[x].overlap != it[y].overlap)
        return it[x].overlap > it[y].overlap ? -1 : 1;
    if (it[x].longest != it[y].longest)
        return it[x].longest > it[y].longest ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int cmd_contam(shell *sh, sh_args *a)
{
    ig_contam_opts o;
    ig_contam_result r;
    uint64_t *lines = NULL;
    if (sh_op_begin(sh, a, &ig_op_contam, &o, NULL))
        return SH_ERR;
    int rc = SH_OK;
    ig_index *eidx = NULL;
    if (o.eval_dataset.p) {
        /* the documents of another dataset are the items: the shell opens it from the catalog */
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)o.eval_dataset.n, (const char *)o.eval_dataset.p);
        ig_error e;
        if (a->nwords)
            rc = sh_fail_at(sh, a, a->words[0].col, "usage", "give FILE or --eval-dataset, not both");
        else if (o.field.p)
            rc = sh_fail(sh, a, "usage", "--field applies to a JSONL FILE, not to --eval-dataset");
        else if (SH_TIMED(sh, ig_catalog_open_index(sh->cat, name, &eidx, NULL, &e)))
            rc = e.code == IG_EUSAGE || e.code == IG_ENOTFOUND ? sh_fail_ig(sh, a, &e)
                 : sh_fail(sh, a, ig_error_code_name(e.code), "cannot load %s: %s", name, e.msg);
        o.eval_index = eidx;
    } else if (a->nwords != 1) {
        rc = sh_fail_usage(sh, a, NULL);
    }
    if (rc == SH_OK && !eidx && sh_path_arg(sh, a, &a->words[0]))
        rc = SH_ERR;
    if (rc == SH_OK && !eidx) {
        /* the shell reads the eval set, normalised as the corpus was */
        ig_index_info info;
        ig_index_get_info(sh->idx, &info);
        char *field = o.field.p ? strndup((const char *)o.field.p, o.field.n) : NULL;
        ig_error e;
        o.label = a->words[0].text;
        if (o.field.p && !field)
            rc = sh_fail(sh, a, "internal", "out of memory");
        else if (SH_TIMED(sh, ig_eval_set_load(o.label, field, info.normalized && !info.casefold, &o.items, &lines, &e)))
            rc = sh_fail_ig(sh, a, &e);
        free(field);
        o.lines = lines;
        o.normalized = !info.casefold; /* NFC as the corpus; a case-folded corpus's own rules (NFC, then folding) are the operation's */
    }
    char elabel[160];
    if (eidx) {
        snprintf(elabel, sizeof elabel, "dataset %.*s", (int)o.eval_dataset.n, (const char *)o.eval_dataset.p);
        o.label = elabel;
    }
    if (rc == SH_OK)
        rc = sh_op_run(sh, a, &ig_op_contam, &o, &r);
    if (rc != SH_OK) {
        free(lines); /* the items are a field: freed with the others */
        ig_fields_free(ig_contam_fields, &o);
        ig_index_close(&eidx);
        return SH_ERR;
    }
    if (sh->json) {
        sh_op_json(sh, a, &ig_op_contam, &o, &r);
    } else {
        const char *unit = o.bytes ? "bytes" : "words";
        sh_printf(sh, "contam %s: %zu item%s, %" PRIu64 "-grams of %s%s%s\n", o.label, r.total, r.total == 1 ? "" : "s",
                  o.n, unit, o.lowercase ? ", lowercased" : "", r.cancelled ? " · CANCELLED: partial result" : "");
        size_t k = r.nitems < o.list ? r.nitems : (size_t)o.list, *ord = malloc((r.nitems ? r.nitems : 1) * sizeof *ord);
        for (size_t i = 0; ord && i < r.nitems; i++)
            ord[i] = i;
        if (ord) {
            qsort_r(ord, r.nitems, sizeof *ord, cmp_overlap, r.items);
            qsort(ord, k, sizeof *ord, cmp_index);
        }
        if (k && ord)
            sh_printf(sh, "  %6s %6s %8s %10s %8s %14s  %s\n", eidx ? "doc" : "item", "line", "n-grams", "in corpus", "overlap",
                      "longest match", "first source");
        for (size_t j = 0; ord && j < k; j++) {
            const ig_contam_item *it = &r.items[ord[j]];
            char line[24] = "-";
            if (it->line)
                snprintf(line, sizeof line, "%" PRIu64, it->line);
            sh_printf(sh, "  %6zu %6s %8" PRIu64 " %10" PRIu64 " %7.1f%% %8" PRIu64 " bytes", ord[j] + !eidx, line, it->ngrams,
                      it->matched, 100 * it->overlap, it->longest);
            if (it->longest) {
                char nm[160];
                sh_doc_label(sh, it->source.doc, it->source.name, it->source.source_line, 40, nm, sizeof nm);
                sh_printf(sh, "  doc %" PRIu64 " %s line %" PRIu64, it->source.doc, nm, it->source.line);
            }
            sh_puts(sh, "\n");
        }
        if (r.nitems > k)
            sh_printf(sh, "  (%zu more item%s, lower overlap: --list K shows more, JSON all)\n", r.nitems - k,
                      r.nitems - k == 1 ? "" : "s");
        free(ord);
        sh_printf(sh, "%" PRIu64 " of %zu items contaminated (≥ %g%%), %" PRIu64 " partly (≥ %g%%)\n", r.contaminated,
                  r.nitems, 100 * o.threshold, r.partly, 100 * o.partial);
        sh_printf(sh, "%" PRIu64 " n-grams, %" PRIu64 " distinct, each counted exactly", r.ngrams, r.distinct);
        if (isfinite(r.bloom_fpr_log10))
            sh_printf(sh, "; BFF's 256 GiB Bloom filter (k = %.0f) on them: false-positive rate 10^%.1f\n", r.bloom_k,
                      r.bloom_fpr_log10);
        else
            sh_puts(sh, "\n");
        if (o.lowercase)
            sh_puts(sh, "note: the index is not case-folded: lowercased n-grams match lowercase corpus text only\n");
    }
    int cancelled = r.cancelled;
    size_t done = r.nitems;
    ig_contam_result_free(&r);
    free(lines); /* the items are a field: freed with the others */
    ig_fields_free(ig_contam_fields, &o);
    ig_index_close(&eidx);
    if (cancelled) {
        int json = sh->json;
        sh->json = 0;
        sh_fail(sh, a, "cancelled", "contam cancelled; the figures cover the first %zu items", done);
        sh->json = json;
        return SH_ERR;
    }
    return SH_OK;
}
