/*
 * build and load: turning a registered dataset into an index, and making an index the
 * session's current one. The bundled-dataset bootstrap of the interactive shell uses
 * the same two functions.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* A rebuilt dataset may no longer fit the compositions that name it (a document taken away
 * that is gone, another pointer width): say so now rather than at their next load. */
/* Whether dataset d of the list is made of `name`, directly or through compositions it is made
 * of (depth bounds a catalog edited by hand into a cycle). */
static int made_of(const ig_dataset *list, size_t n, const ig_dataset *d, const char *name, int depth)
{
    for (size_t k = 0; depth < 64 && k < d->nmembers + d->nminus; k++) {
        const char *m = k < d->nmembers ? d->members[k] : d->minus[k - d->nmembers];
        if (!strcmp(m, name))
            return 1;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(list[j].name, m) && made_of(list, n, &list[j], name, depth + 1))
                return 1;
    }
    return 0;
}

static void warn_broken_compositions(shell *sh, const char *name)
{
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (ig_catalog_list(sh->cat, &list, &n, &e))
        return;
    for (size_t i = 0; i < n; i++) {
        int uses = made_of(list, n, &list[i], name, 0);
        ig_index *idx = NULL;
        if (uses && ig_catalog_open_index(sh->cat, list[i].name, &idx, NULL, &e))
            sh_warn(sh, "composition %s, made of %s, no longer loads: %s", list[i].name, name, e.msg);
        ig_index_close(&idx);
    }
    ig_dataset_list_free(list, n);
}

int sh_build_dataset(shell *sh, sh_args *a, const char *name, const ig_build_options *bo, cJSON *json)
{
    ig_build_result res;
    ig_error e;
    double t0 = sh_clock();
    int rc = ig_catalog_build(sh->cat, name, bo, sh_progress_cb, sh, &sh_interrupted, &res, &e);
    sh->elapsed += sh_clock() - t0; /* the whole build, as the contract says */
    sh_progress_clear(sh);
    if (rc) {
        if (rc == IG_ECANCELLED)
            return sh_fail(sh, a, "cancelled", "build of %s cancelled; the previous index (if any) is still in force", name);
        return sh_fail_ig(sh, a, &e);
    }
    double secs = sh->fake_clock ? 0 : sh->elapsed;
    double mbps = secs > 0 ? res.source_bytes / 1e6 / secs : 0;
    for (size_t i = 0; i < res.nskipped && !sh->json; i++) {
        if (i == 10) {
            sh_warn(sh, "... and %zu more skipped files (see :dataset info %s)", res.nskipped - 10, name);
            break;
        }
        sh_warn(sh, "skipped %s: %s", res.skipped[i].path, res.skipped[i].reason);
    }
    if (res.replaced)
        sh_warn(sh, "%" PRIu64 " invalid UTF-8 byte%s replaced by U+FFFD", res.replaced, res.replaced == 1 ? "" : "s");
    if (json) {
        cJSON_AddStringToObject(json, "dataset", name);
        sh_json_u64(json, "bytes", res.bytes);
        sh_json_u64(json, "documents", res.documents);
        sh_json_u64(json, "shards", res.shards);
        sh_json_u64(json, "skipped_files", res.nskipped);
        sh_json_u64(json, "replaced", res.replaced);
        if (res.decontam) {
            const ig_decontam_report *r = res.decontam;
            cJSON *dc = cJSON_AddObjectToObject(json, "decontam");
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, r->eval_hash);
            cJSON_AddStringToObject(dc, "eval_hash", hex);
            sh_json_u64(dc, "eval_items", r->eval_items);
            sh_json_u64(dc, "eval_ngrams", r->eval_ngrams);
            sh_json_u64(dc, "documents", r->documents);
            sh_json_u64(dc, r->flag_only ? "flagged" : "dropped", r->caught);
            cJSON *arr = cJSON_AddArrayToObject(dc, "sources");
            for (size_t i = 0; i < r->nsources; i++) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "name", r->sources[i].name);
                sh_json_u64(x, "documents", r->sources[i].documents);
                sh_json_u64(x, r->flag_only ? "flagged" : "dropped", r->sources[i].caught);
                cJSON_AddItemToArray(arr, x);
            }
        }
        sh_json_u64(json, "jobs", (uint64_t)res.jobs);
        sh_json_u64(json, "shard_size", res.shard_size);
        cJSON_AddBoolToObject(json, "memory_limited", res.memory_limited);
        sh_json_u64(json, "largest_shard", res.largest_shard);
        cJSON_AddNumberToObject(json, "mb_per_s", mbps);
    } else {
        char b[32];
        sh_fmt_bytes(res.bytes, b, sizeof b);
        sh_printf(sh, "built %s: %s, %" PRIu64 " doc%s, %u shard%s in %.2f s (%.1f MB/s)", name, b, res.documents,
                  res.documents == 1 ? "" : "s", res.shards, res.shards == 1 ? "" : "s", secs, mbps);
        if (res.nskipped)
            sh_printf(sh, ", %zu file%s skipped", res.nskipped, res.nskipped == 1 ? "" : "s");
        sh_puts(sh, "\n");
        if (res.decontam) {
            const ig_decontam_report *r = res.decontam;
            sh_printf(sh, "decontaminated against %" PRIu64 " eval items (%" PRIu64 " distinct n-grams, hash %016" PRIx64
                          "): %" PRIu64 " of %" PRIu64 " documents %s\n",
                      r->eval_items, r->eval_ngrams, r->eval_hash, r->caught, r->documents,
                      r->flag_only ? "flagged (kept; listed in :dataset info)" : "dropped");
            for (size_t i = 0; i < r->nsources && r->nsources > 1; i++) {
                char nm[64];
                sh_short_name(r->sources[i].name, 48, nm, sizeof nm);
                sh_printf(sh, "  %-48s %" PRIu64 " of %" PRIu64 "\n", nm, r->sources[i].caught, r->sources[i].documents);
            }
        }
        if (res.memory_limited) {
            char cap[32];
            sh_fmt_bytes(res.shard_size, cap, sizeof cap);
            sh_printf(sh, "(shards of at most %s so that %d parallel sort%s fit the memory budget", cap, res.jobs,
                      res.jobs == 1 ? "" : "s");
            if (res.largest_shard > res.shard_size) { /* documents never cross shards */
                char big[32];
                sh_fmt_bytes(res.largest_shard, big, sizeof big);
                sh_printf(sh, "; one shard holds a document larger than that: %s", big);
            }
            sh_puts(sh, ")\n");
        }
    }
    ig_build_result_free(&res);
    warn_broken_compositions(sh, name);
    /* a rebuilt current dataset is reopened so queries see the new index */
    if (sh->current && !strcmp(sh->current, name))
        return sh_load_dataset(sh, a, name, NULL);
    return SH_OK;
}

int cmd_build(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 1, "build [NAME] [--shard-size SIZE]"))
        return SH_ERR;
    const char *name = a->nwords ? a->words[0].text : sh->current;
    if (!name)
        return sh_fail(sh, a, "usage", "no dataset named and none loaded; usage: build NAME");
    ig_build_options bo;
    ig_build_options_default(&bo);
    char *def = sh_setting_value(sh, "shard-size");
    if (def && sh_parse_size(def, &bo.shard_size))
        bo.shard_size = 1ull << 30;
    free(def);
    if (sh_opt_size(sh, a, "shard-size", &bo.shard_size))
        return SH_ERR;
    long long pw = 4, jobs = 0;
    if (sh_opt_int(sh, a, "pointer-width", 4, 5, &pw) || sh_opt_int(sh, a, "jobs", 1, 64, &jobs) ||
        sh_opt_size(sh, a, "memory", &bo.memory))
        return SH_ERR;
    bo.jobs = (int)jobs;
    bo.force_wide = pw == 5;
    bo.lcp = sh_opt_has(a, "lcp");
    sh_optval *so = sh_opt_get(a, "sorter");
    if (so && strcmp(so->value.text, "processes") && strcmp(so->value.text, "in-process"))
        return sh_fail_at(sh, a, so->value.col, "usage", "--sorter: expected processes or in-process, not \"%s\"",
                          so->value.text);
    bo.sorter = so && !strcmp(so->value.text, "in-process") ? IG_SORT_IN_PROCESS : IG_SORT_PROCESSES;
    char *nm = strdup(name); /* sh->current may be replaced by the reload */
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL;
    int rc = sh_build_dataset(sh, a, nm, &bo, o);
    if (o) {
        if (rc == SH_OK)
            sh_json_emit(sh, o);
        else
            cJSON_Delete(o);
    }
    free(nm);
    return rc;
}

int sh_load_dataset(shell *sh, sh_args *a, const char *name, cJSON *json)
{
    ig_dataset d;
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_get(sh->cat, name, &d, &e)))
        return sh_fail_ig(sh, a, &e);
    int rc = SH_OK;
    if (!d.index_path && !d.nmembers && !d.attach_dir) {
        rc = sh_fail(sh, a, "usage", "dataset %s is not built (run: build %s)", name, name);
        goto out;
    }
    int stale = 0;
    char *why = NULL;
    if (SH_TIMED(sh, ig_catalog_check(sh->cat, name, IG_CHECK_BOUNDED, &stale, &why, &e))) {
        rc = sh_fail_ig(sh, a, &e);
        goto out;
    }
    ig_index *idx = NULL;
    if (SH_TIMED(sh, ig_catalog_open_index(sh->cat, name, &idx, NULL, &e))) {
        free(why);
        rc = !strncmp(e.msg, "index corrupt (", 15) ? sh_fail(sh, a, "corrupt", "cannot load %s: %s: run :dataset verify %s, then rebuild",
                                             name, e.msg, name)
                                   : sh_fail(sh, a, ig_error_code_name(e.code), "cannot load %s: %s", name, e.msg);
        goto out;
    }
    ig_index_close(&sh->idx);
    sh->idx = idx;
    sh->idx_tokens = ig_index_token_width(idx) != 0;
    if (!sh->current || strcmp(sh->current, name)) {
        free(sh->current);
        sh->current = strdup(name);
    }
    ig_catalog_setting_set(sh->cat, "current", name, &e);
    if (stale)
        sh_warn(sh, d.nmembers ? "dataset %s is stale: %s (rebuild that member)" : "dataset %s is stale: %s (run: build %s)",
                name, why ? why : "sources changed", name);
    if (json) {
        ig_index_info info;
        ig_index_get_info(idx, &info);
        cJSON_AddStringToObject(json, "dataset", name);
        sh_json_u64(json, "bytes", info.bytes);
        sh_json_u64(json, "documents", info.documents);
        sh_json_u64(json, "shards", info.shards);
        cJSON_AddBoolToObject(json, "stale", stale);
    }
    free(why);
out:
    ig_dataset_free(&d);
    return rc;
}

int cmd_load(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 1, 1, "load NAME"))
        return SH_ERR;
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL;
    int rc = sh_load_dataset(sh, a, a->words[0].text, o);
    if (o) {
        if (rc == SH_OK)
            sh_json_emit(sh, o);
        else
            cJSON_Delete(o);
    } else if (rc == SH_OK) {
        ig_index_info info;
        ig_index_get_info(sh->idx, &info);
        char b[32];
        sh_fmt_bytes(info.bytes, b, sizeof b);
        sh_printf(sh, "loaded %s: %s, %" PRIu64 " doc%s, %u shard%s\n", sh->current, b, info.documents,
                  info.documents == 1 ? "" : "s", info.shards, info.shards == 1 ? "" : "s");
    }
    return rc;
}
