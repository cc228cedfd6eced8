/*
 * :dataset — the catalog commands: add, compose, list, info, remove, rename, verify, check.
 * Everything here is a thin layer over catalog.h; the rendering of a dataset (table
 * and JSON) lives in one place so list and info agree.
 */
#include <errno.h>
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "shell.h"

static void fmt_time(shell *sh, double t, char *buf, size_t n)
{
    if (t <= 0) {
        snprintf(buf, n, "-");
        return;
    }
    if (sh->fake_clock) {
        snprintf(buf, n, "(time)");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
}

static cJSON *next_table_json(const ig_next_table_info *t)
{
    cJSON *o = cJSON_CreateObject();
    sh_json_u64(o, "min_count", t->min_count);
    sh_json_u64(o, "contexts", t->contexts);
    sh_json_u64(o, "entries", t->entries);
    sh_json_u64(o, "bytes", t->bytes);
    return o;
}

static cJSON *dataset_json(const ig_dataset *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "status", d->status);
    if (d->index_path)
        cJSON_AddStringToObject(o, "index_path", d->index_path);
    else
        cJSON_AddNullToObject(o, "index_path");
    sh_json_u64(o, "bytes", d->bytes);
    sh_json_u64(o, "documents", d->documents);
    sh_json_u64(o, "shards", d->shards);
    sh_json_u64(o, "skipped_files", d->skipped_files);
    static const char *fmts[] = {"text", "lines", "jsonl"};
    cJSON_AddStringToObject(o, "format", fmts[d->ingest.format]);
    cJSON_AddBoolToObject(o, "normalize", d->ingest.normalize);
    cJSON_AddBoolToObject(o, "casefold", d->ingest.casefold);
    if (d->decontam) {
        cJSON *dc = cJSON_AddObjectToObject(o, "decontaminate");
        cJSON_AddStringToObject(dc, "eval_set", d->decontam->eval_path);
        if (d->decontam->field)
            cJSON_AddStringToObject(dc, "field", d->decontam->field);
        sh_json_u64(dc, "n", d->decontam->n);
        cJSON_AddNumberToObject(dc, "threshold", d->decontam->threshold);
        cJSON_AddBoolToObject(dc, "lowercase", d->decontam->lowercase);
        cJSON_AddBoolToObject(dc, "flag_only", d->decontam->flag_only);
        cJSON *rep = d->decontam_report ? cJSON_Parse(d->decontam_report) : NULL;
        if (rep)
            cJSON_AddItemToObject(dc, "last_build", rep);
        else
            cJSON_AddNullToObject(dc, "last_build");
    }
    if (d->nmembers) {
        cJSON *m = cJSON_AddArrayToObject(o, "members"), *x = cJSON_AddArrayToObject(o, "minus");
        for (size_t i = 0; i < d->nmembers; i++)
            cJSON_AddItemToArray(m, cJSON_CreateString(d->members[i]));
        for (size_t i = 0; i < d->nminus; i++)
            cJSON_AddItemToArray(x, cJSON_CreateString(d->minus[i]));
    }
    if (d->attach_dir) {
        cJSON *at = cJSON_AddObjectToObject(o, "attached");
        cJSON_AddStringToObject(at, "dir", d->attach_dir);
        cJSON_AddStringToObject(at, "format", d->attach_format ? d->attach_format : "");
        sh_json_u64(at, "token_width", d->token_width);
        if (d->vocab)
            cJSON_AddStringToObject(at, "vocab", d->vocab);
        else
            cJSON_AddNullToObject(at, "vocab");
        if (d->next_table)
            cJSON_AddItemToObject(at, "next_table", next_table_json(&d->next_info));
        else
            cJSON_AddNullToObject(at, "next_table");
    }
    if (d->tokens.format) {
        static const char *const tf[] = {"", "ids", "jsonl-ids", "text"};
        cJSON *t = cJSON_AddObjectToObject(o, "tokens");
        cJSON_AddStringToObject(t, "format", tf[d->tokens.format]);
        if (d->tokens.format == IG_TOKENS_IDS) {
            cJSON_AddStringToObject(t, "dtype", d->tokens.dtype == 2 ? "u16" : "u32");
            sh_json_u64(t, "separator", d->tokens.separator);
        }
        if (d->tokens.format == IG_TOKENS_JSONL_IDS)
            cJSON_AddStringToObject(t, "field", d->tokens.field ? d->tokens.field : "ids");
        if (d->tokenizer) {
            cJSON_AddStringToObject(t, "tokenizer", d->tokenizer);
            cJSON_AddStringToObject(t, "tokenizer_checksum", d->tokenizer_hash ? d->tokenizer_hash : "");
        }
        if (d->vocab)
            cJSON_AddStringToObject(t, "vocab", d->vocab);
        if (d->token_width)
            sh_json_u64(t, "token_width", d->token_width);
    }
    cJSON *srcs = cJSON_AddArrayToObject(o, "sources");
    for (size_t i = 0; i < d->nsources; i++) {
        const ig_dataset_source *s = &d->sources[i];
        cJSON *so = cJSON_CreateObject();
        cJSON_AddStringToObject(so, "kind", ig_dataset_source_kind_name(s->kind));
        if (s->path)
            cJSON_AddStringToObject(so, "path", s->path);
        sh_json_u64(so, "size", s->kind == IG_DSRC_INLINE ? s->text_len : s->size);
        cJSON_AddItemToArray(srcs, so);
    }
    return o;
}

/* What a dataset is decontaminated against, and what its last build caught. */
static void decontam_info(shell *sh, const ig_dataset *d)
{
    const ig_decontam_options *o = d->decontam;
    sh_printf(sh, "decontam    %s%s%s: %" PRIu64 "-word n-grams, %s at ≥ %g%%%s\n", o->eval_path,
              o->field ? " field " : "", o->field ? o->field : "", o->n, o->flag_only ? "flag" : "drop",
              100 * o->threshold, o->lowercase ? ", lowercased" : "");
    cJSON *r = d->decontam_report ? cJSON_Parse(d->decontam_report) : NULL;
    if (!r) {
        sh_puts(sh, "            (not built yet)\n");
        return;
    }
    const cJSON *h = cJSON_GetObjectItem(r, "eval_hash"), *docs = cJSON_GetObjectItem(r, "docs");
    sh_printf(sh, "            eval set hash %s (%.0f items, %.0f distinct n-grams); %.0f of %.0f documents %s\n",
              cJSON_IsString(h) ? h->valuestring : "?", cJSON_GetNumberValue(cJSON_GetObjectItem(r, "eval_items")),
              cJSON_GetNumberValue(cJSON_GetObjectItem(r, "eval_ngrams")),
              cJSON_GetNumberValue(cJSON_GetObjectItem(r, "caught")),
              cJSON_GetNumberValue(cJSON_GetObjectItem(r, "documents")), o->flag_only ? "flagged" : "dropped");
    const cJSON *x;
    int k = 0;
    cJSON_ArrayForEach(x, docs)
    {
        if (k++ == 20) {
            sh_printf(sh, "            … (%d listed in JSON)\n", cJSON_GetArraySize(docs));
            break;
        }
        const cJSON *nm = cJSON_GetObjectItem(x, "name");
        char shortnm[64];
        sh_short_name(cJSON_IsString(nm) ? nm->valuestring : "", 40, shortnm, sizeof shortnm);
        double line = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "source_line"));
        char id[48] = "dropped:"; /* a dropped document has no id in the index */
        if (o->flag_only)
            snprintf(id, sizeof id, "doc %.0f", cJSON_GetNumberValue(cJSON_GetObjectItem(x, "doc")));
        char where[32] = "";
        if (line > 0)
            snprintf(where, sizeof where, ":%.0f", line);
        sh_printf(sh, "            %s %s%s: %.0f of %.0f n-grams\n", id, shortnm, where,
                  cJSON_GetNumberValue(cJSON_GetObjectItem(x, "matched")),
                  cJSON_GetNumberValue(cJSON_GetObjectItem(x, "ngrams")));
    }
    cJSON_Delete(r);
}

static void source_label(const ig_dataset_source *s, char *buf, size_t n)
{
    if (s->kind == IG_DSRC_INLINE)
        snprintf(buf, n, "<inline, %zu bytes>", s->text_len);
    else
        snprintf(buf, n, "%s", s->path);
    sh_controls_hidden(buf); /* a file name's bytes are its maker's: never the terminal's controls */
}

/* Bytes of a token id named u8, u16 or u32; 0 for anything else. */
static uint32_t dtype_bytes(const char *s)
{
    return !strcmp(s, "u8") ? 1 : !strcmp(s, "u16") ? 2 : !strcmp(s, "u32") ? 4 : 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* A source that is empty when added is allowed (it may be filled before the build), but the
 * build will refuse it as it is: say so now rather than at the build. */
static void warn_if_empty(shell *sh, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        sh_warn(sh, "%s is empty: build needs text in it", path);
    } else if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        int any = 0;
        while (d && !any && (de = readdir(d)))
            any = de->d_name[0] != '.'; /* hidden entries are never indexed */
        if (d)
            closedir(d);
        if (d && !any)
            sh_warn(sh, "%s holds no files yet: build needs some", path);
    }
}

static int ds_add(shell *sh, sh_args *a)
{
    const char *name = a->words[1].text;
    ig_error e;
    if (ig_dataset_name_check(name, &e))
        return sh_fail_at(sh, a, a->words[1].col, ig_error_code_name(e.code), "%s", e.msg);
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    sh_optval *v;
    ig_token_options to = {0};
    if ((v = sh_opt_get(a, "format"))) {
        if (!strcmp(v->value.text, "text"))
            o.format = IG_FORMAT_TEXT;
        else if (!strcmp(v->value.text, "lines"))
            o.format = IG_FORMAT_LINES;
        else if (!strcmp(v->value.text, "jsonl"))
            o.format = IG_FORMAT_JSONL;
        else if (!strcmp(v->value.text, "ids"))
            to.format = IG_TOKENS_IDS;
        else if (!strcmp(v->value.text, "jsonl-ids"))
            to.format = IG_TOKENS_JSONL_IDS;
        else
            return sh_fail_at(sh, a, v->value.col, "usage", "--format: expected text, lines, jsonl, ids or jsonl-ids");
    }
    if ((v = sh_opt_get(a, "field"))) {
        if (o.format != IG_FORMAT_JSONL && to.format != IG_TOKENS_JSONL_IDS)
            return sh_fail_at(sh, a, v->col, "usage", "--field applies to --format jsonl or jsonl-ids only");
        if (!v->value.len)
            return sh_fail_at(sh, a, v->value.col, "usage", "--field: empty key");
        if (to.format)
            to.field = v->value.text;
        else
            o.field = v->value.text;
    }
    if ((v = sh_opt_get(a, "tokenizer"))) {
        if (to.format)
            return sh_fail_at(sh, a, v->col, "usage", "--tokenizer tokenises text: --format %s gives ids already "
                              "(--vocab shows them)", to.format == IG_TOKENS_IDS ? "ids" : "jsonl-ids");
        sh_expand_tilde(&v->value);
        to.format = IG_TOKENS_TEXT;
        to.tokenizer = v->value.text;
    }
    if ((v = sh_opt_get(a, "vocab"))) {
        if (!to.format || to.format == IG_TOKENS_TEXT)
            return sh_fail_at(sh, a, v->col, "usage", "--vocab applies to :dataset add with --format ids or jsonl-ids "
                              "(a --tokenizer is its own vocabulary)");
        sh_expand_tilde(&v->value);
        to.vocab = v->value.text;
    }
    if ((v = sh_opt_get(a, "dtype"))) {
        if (to.format != IG_TOKENS_IDS)
            return sh_fail_at(sh, a, v->col, "usage", "--dtype applies to --format ids (and :dataset attach)");
        if ((to.dtype = dtype_bytes(v->value.text)) < 2)
            return sh_fail_at(sh, a, v->value.col, "usage", "--dtype: ids files are u16 or u32");
    }
    if ((v = sh_opt_get(a, "separator"))) {
        if (to.format != IG_TOKENS_IDS)
            return sh_fail_at(sh, a, v->col, "usage", "--separator applies to --format ids");
        char *end;
        errno = 0;
        unsigned long long sep = strtoull(v->value.text, &end, 10);
        if (end == v->value.text || *end || errno || sep > UINT32_MAX || v->value.text[0] == '-')
            return sh_fail_at(sh, a, v->value.col, "usage", "--separator: expected an id from 0 to 4294967295");
        to.separator = (uint32_t)sep;
    }
    if (to.format == IG_TOKENS_IDS && (!to.dtype || !sh_opt_has(a, "separator")))
        return sh_fail(sh, a, "usage", "--format ids needs --dtype u16|u32 and --separator ID");
    if (to.format)
        o.tokens = &to;
    const char *range = NULL;
    if ((v = sh_opt_get(a, "range"))) {
        if (ig_byte_range_parse(v->value.text, &o.range, &e))
            return sh_fail_at(sh, a, v->value.col, "usage", "%s", e.msg);
        o.has_range = 1;
        range = v->value.text;
    }
    o.normalize = !sh_opt_has(a, "no-normalize");
    o.lossy = sh_opt_has(a, "lossy");
    o.strict = sh_opt_has(a, "strict");
    o.casefold = sh_opt_has(a, "casefold");
    ig_decontam_options dc;
    ig_decontam_options_default(&dc);
    if ((v = sh_opt_get(a, "decontaminate"))) {
        sh_expand_tilde(&v->value);
        dc.eval_path = v->value.text;
        o.decontam = &dc;
    }
    static const char *const dc_opts[] = {"decontaminate-field", "n", "threshold", "lowercase", "flag-only", NULL};
    for (int i = 0; !o.decontam && dc_opts[i]; i++)
        if ((v = sh_opt_get(a, dc_opts[i])))
            return sh_fail_at(sh, a, v->col, "usage", "--%s applies with --decontaminate FILE", dc_opts[i]);
    if ((v = sh_opt_get(a, "decontaminate-field"))) {
        if (!v->value.len)
            return sh_fail_at(sh, a, v->value.col, "usage", "--decontaminate-field: empty key");
        dc.field = v->value.text;
    }
    long long nn = IG_CONTAM_N;
    if (sh_opt_int(sh, a, "n", 1, 1000000, &nn))
        return SH_ERR;
    dc.n = (uint64_t)nn;
    if ((v = sh_opt_get(a, "threshold"))) {
        char *end;
        dc.threshold = strtod(v->value.text, &end);
        if (end == v->value.text || *end || !(dc.threshold >= 0 && dc.threshold <= 1))
            return sh_fail_at(sh, a, v->value.col, "usage", "--threshold: expected a number from 0 to 1");
    }
    dc.lowercase = sh_opt_has(a, "lowercase");
    dc.flag_only = sh_opt_has(a, "flag-only");
    /* sources in the order written: positional paths and --text values by column */
    int n = 0;
    ig_source *src = calloc((size_t)(a->nwords + a->nopts), sizeof *src);
    size_t *cols = calloc((size_t)(a->nwords + a->nopts), sizeof *cols);
    if (!src || !cols) {
        free(src);
        free(cols);
        return sh_fail(sh, a, "out_of_memory", "out of memory");
    }
    for (int i = 2; i < a->nwords; i++) {
        sh_expand_tilde(&a->words[i]);
        src[n] = (ig_source){.kind = IG_SOURCE_FILE, .path = a->words[i].text};
        cols[n++] = a->words[i].col;
    }
    for (int i = 0; i < a->nopts; i++)
        if (!strcmp(a->opts[i].name, "text")) {
            a->opts[i].used = 1;
            src[n] = (ig_source){.kind = IG_SOURCE_INLINE, .text = a->opts[i].value.text,
                                 .text_len = a->opts[i].value.len};
            cols[n++] = a->opts[i].col;
        }
    for (int i = 1; i < n; i++) /* insertion sort by column; n is tiny */
        for (int j = i; j > 0 && cols[j - 1] > cols[j]; j--) {
            ig_source t = src[j];
            src[j] = src[j - 1];
            src[j - 1] = t;
            size_t c = cols[j];
            cols[j] = cols[j - 1];
            cols[j - 1] = c;
        }
    int rc = SH_OK, empty_text = 0;
    for (int i = 0; i < n; i++)
        empty_text |= src[i].kind == IG_SOURCE_INLINE && !src[i].text_len; /* unlike a file, never filled later */
    if (empty_text)
        rc = sh_fail(sh, a, "usage", "--text: empty text (a build would refuse it)");
    else if (n == 0)
        rc = sh_fail(sh, a, "usage", "no sources; usage: :dataset add NAME SOURCE... [--text TEXT]");
    else if (SH_TIMED(sh, ig_catalog_add(sh->cat, name, src, (size_t)n, &o, range, &e)))
        rc = sh_fail_ig(sh, a, &e);
    else if (sh->json) {
        cJSON *j = sh_json_new(sh, a);
        cJSON_AddStringToObject(j, "name", name);
        cJSON_AddStringToObject(j, "status", "registered");
        sh_json_u64(j, "sources", (uint64_t)n);
        sh_json_emit(sh, j);
    } else {
        sh_printf(sh, "added %s: %d source%s (run: build %s)\n", name, n, n == 1 ? "" : "s", name);
    }
    for (int i = 0; rc == SH_OK && i < n; i++) {
        if (src[i].kind == IG_SOURCE_FILE)
            warn_if_empty(sh, src[i].path);
        for (int j = 0; src[i].kind == IG_SOURCE_FILE && j < i; j++)
            if (src[j].kind == IG_SOURCE_FILE && same_file(src[i].path, src[j].path)) {
                sh_warn(sh, "%s is given twice: its documents are indexed twice", src[i].path);
                break;
            }
    }
    free(src);
    free(cols);
    return rc;
}

static int ds_list(shell *sh, sh_args *a)
{
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_list(sh->cat, &list, &n, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *arr = cJSON_AddArrayToObject(o, "datasets");
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(arr, dataset_json(&list[i]));
        sh_json_emit(sh, o);
    } else if (n == 0) {
        sh_puts(sh, "no datasets (add one with :dataset add NAME PATH)\n");
    } else {
        /* the name column is as wide as the longest name (names are up to 64 bytes, ASCII) */
        int w = 14;
        for (size_t i = 0; i < n; i++)
            if ((int)strlen(list[i].name) > w)
                w = (int)strlen(list[i].name);
        sh_printf(sh, "  %-*s %-10s %9s %9s %6s  %s\n", w, "name", "status", "bytes", "documents", "shards", "sources");
        for (size_t i = 0; i < n; i++) {
            const ig_dataset *d = &list[i];
            char b[32], src[256] = "";
            sh_fmt_bytes(d->bytes, b, sizeof b);
            if (d->nsources)
                source_label(&d->sources[0], src, sizeof src);
            else if (d->attach_dir)
                snprintf(src, sizeof src, "attached: %s", d->attach_dir);
            else if (d->nmembers)
                snprintf(src, sizeof src, "composed: %s%s%s", d->members[0], d->nmembers + d->nminus > 1 ? " …" : "",
                         d->nminus ? " minus …" : "");
            int cur = sh->current && !strcmp(sh->current, d->name);
            char shortsrc[128];
            sh_short_name(src, sh->columns > 56 + w ? (size_t)sh->columns - 42 - (size_t)w : 14, shortsrc, sizeof shortsrc);
            sh_printf(sh, "%s %-*s %-10s %9s %9" PRIu64 " %6u  %s%s\n", cur ? "*" : " ", w, d->name, d->status,
                      d->status[0] == 'r' ? "-" : b, d->documents, d->shards, shortsrc,
                      d->nsources > 1 ? " …" : "");
        }
    }
    ig_dataset_list_free(list, n);
    return SH_OK;
}

static int ds_info(shell *sh, sh_args *a)
{
    ig_dataset d;
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_get(sh->cat, a->words[1].text, &d, &e)))
        return sh_fail_ig(sh, a, &e);
    /* what only the index's manifest can say: whether its line index is stored */
    ig_index_info info = {0};
    ig_error oe;
    if (d.index_path && ig_index_read_info(d.index_path, &info, &oe))
        memset(&info, 0, sizeof info);
    /* a composition is described by opening it, as load would: what its members index, and
     * whether they still fit together (a member rebuilt since may not) */
    int comp_ok = 0;
    char comp_err[sizeof oe.msg] = "";
    if (d.nmembers && d.index_key) {
        ig_index *idx = NULL;
        if (!(comp_ok = !ig_catalog_open_index(sh->cat, d.name, &idx, NULL, &oe)))
            snprintf(comp_err, sizeof comp_err, "%s", oe.msg);
        else
            ig_index_get_info(idx, &info);
        ig_index_close(&idx);
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *dj = dataset_json(&d), *it;
        if (d.index_path) {
            sh_json_u64(dj, "line_index_missing", info.line_index_missing);
            sh_json_u64(dj, "lcp_missing", info.lcp_missing);
        }
        /* the times the text shows, in UTC (ISO 8601), null when there is none */
        for (int k = 0; k < 2; k++) {
            double t = k ? d.built : d.created;
            char when[40];
            struct tm tm;
            time_t tt = (time_t)t;
            if (t <= 0 || !gmtime_r(&tt, &tm))
                cJSON_AddNullToObject(dj, k ? "built_at" : "created_at");
            else {
                if (sh->fake_clock)
                    snprintf(when, sizeof when, "(time)");
                else
                    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
                cJSON_AddStringToObject(dj, k ? "built_at" : "created_at", when);
            }
        }
        if (d.nmembers && d.index_key) {
            cJSON_AddBoolToObject(dj, "loads", comp_ok);
            if (!comp_ok)
                cJSON_AddStringToObject(dj, "load_error", comp_err);
        }
        /* flatten the dataset's keys into the command object */
        while ((it = dj->child)) {
            cJSON_DetachItemViaPointer(dj, it);
            cJSON_AddItemToObject(o, it->string, it);
        }
        cJSON_Delete(dj);
        sh_json_emit(sh, o);
    } else {
        char b[32], t1[32], t2[32];
        sh_fmt_bytes(d.bytes, b, sizeof b);
        static const char *fmts[] = {"text", "lines", "jsonl"};
        sh_printf(sh, "name        %s\nstatus      %s\n", d.name, d.status);
        if (d.attach_dir) {
            fmt_time(sh, d.created, t1, sizeof t1);
            sh_printf(sh, "attached    %s (%s, read-only)\ntokens      u%u ids (%" PRIu64 " tokens)\nbytes       %s (%" PRIu64
                          " bytes)\ndocuments   %" PRIu64 "\nshards      %u\nvocabulary  %s\ncreated     %s\n",
                      d.attach_dir, d.attach_format, d.token_width * 8, d.token_width ? d.bytes / d.token_width : 0, b,
                      d.bytes, d.documents, d.shards, d.vocab ? d.vocab : "- (ids shown as numbers)", t1);
            if (d.next_table) {
                sh_fmt_bytes(d.next_info.bytes, t2, sizeof t2);
                sh_printf(sh, "next tokens %" PRIu64 " context%s seen %" PRIu64 "+ times, %" PRIu64 " entries, %s\n",
                          d.next_info.contexts, d.next_info.contexts == 1 ? "" : "s", d.next_info.min_count,
                          d.next_info.entries, t2);
            } else
                sh_printf(sh, "next tokens - (no table: :dataset prepare %s makes one)\n", d.name);
            ig_dataset_free(&d);
            return SH_OK;
        }
        if (d.nmembers) {
            sh_printf(sh, "members    ");
            for (size_t i = 0; i < d.nmembers; i++)
                sh_printf(sh, " %s", d.members[i]);
            sh_printf(sh, "\n");
            if (d.nminus) {
                sh_printf(sh, "minus      ");
                for (size_t i = 0; i < d.nminus; i++)
                    sh_printf(sh, " %s", d.minus[i]);
                sh_printf(sh, "\n");
            }
            char t2[32];
            fmt_time(sh, d.built, t2, sizeof t2);
            if (d.index_key)
                sh_printf(sh, "bytes       %s (%" PRIu64 " bytes)\ndocuments   %" PRIu64 "\nshards      %u\n", b, d.bytes,
                          d.documents, d.shards);
            sh_printf(sh, "built       %s (its latest member)\n", d.index_key ? t2 : "- (a member is not built)");
            if (d.index_key && comp_ok)
                sh_printf(sh, "text        %s%s, %u-byte pointers\n", info.normalized ? "NFC" : "not normalised",
                          info.casefold ? ", case-folded" : "", info.pointer_width);
            else if (d.index_key)
                sh_printf(sh, "loads       no: %s\n", comp_err);
            ig_dataset_free(&d);
            return SH_OK;
        }
        sh_printf(sh, "index       %s\n", d.index_path ? d.index_path : "- (not built)");
        if (d.index_path)
            sh_printf(sh, "bytes       %s (%" PRIu64 " bytes)\ndocuments   %" PRIu64 "\nshards      %u\n", b, d.bytes,
                      d.documents, d.shards);
        sh_printf(sh, "skipped     %" PRIu64 " file%s\n", d.skipped_files, d.skipped_files == 1 ? "" : "s");
        sh_printf(sh, "format      %s%s%s%s%s%s%s\n", fmts[d.ingest.format], d.ingest.normalize ? ", NFC" : ", not normalised",
                  d.range_text ? ", range " : "", d.range_text ? d.range_text : "", d.ingest.lossy ? ", lossy" : "",
                  d.ingest.strict ? ", strict" : "", d.ingest.casefold ? ", case-folded" : "");
        if (d.tokens.format == IG_TOKENS_TEXT)
            sh_printf(sh, "tokens      tokenised by %s (SentencePiece, checksum %s)\n", d.tokenizer,
                      d.tokenizer_hash ? d.tokenizer_hash : "-");
        else if (d.tokens.format == IG_TOKENS_IDS)
            sh_printf(sh, "tokens      ids, u%u in the files, separator %" PRIu32 ", vocabulary %s\n", d.tokens.dtype * 8,
                      d.tokens.separator, d.vocab ? d.vocab : "- (ids shown as numbers)");
        else if (d.tokens.format == IG_TOKENS_JSONL_IDS)
            sh_printf(sh, "tokens      ids in JSONL field \"%s\", vocabulary %s\n", d.tokens.field ? d.tokens.field : "ids",
                      d.vocab ? d.vocab : "- (ids shown as numbers)");
        if (d.token_width) /* built: the width the vocabulary allowed */
            sh_printf(sh, "stored      u%u ids (%" PRIu64 " tokens, separators included)\n", d.token_width * 8,
                      d.bytes / d.token_width);
        fmt_time(sh, d.created, t1, sizeof t1);
        fmt_time(sh, d.built, t2, sizeof t2);
        sh_printf(sh, "created     %s\nbuilt       %s\n", t1, t2);
        for (size_t i = 0; i < d.nsources; i++) {
            char lab[512], sz[32];
            source_label(&d.sources[i], lab, sizeof lab);
            sh_fmt_bytes(d.sources[i].size, sz, sizeof sz);
            sh_printf(sh, "%s %s (%s)\n", i ? "           " : "sources    ", lab,
                      ig_dataset_source_kind_name(d.sources[i].kind));
        }
        if (d.decontam)
            decontam_info(sh, &d);
        if (info.line_index_missing)
            sh_printf(sh, "note        %u of %u shards store no line index (built by an older version): their "
                          "first location reads the whole shard; rebuild to store one\n",
                      info.line_index_missing, info.shards);
        if (info.lcp_missing)
            sh_printf(sh, "note        %u of %u shards have no lcp file: answers are the same, but a count on a cold "
                          "page cache reads about twice the pages; `build --lcp` stores one (2.16 bytes per byte)\n",
                      info.lcp_missing, info.shards);
    }
    ig_dataset_free(&d);
    return SH_OK;
}

static int ds_remove(shell *sh, sh_args *a)
{
    const char *name = a->words[1].text;
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_remove(sh->cat, name, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->current && !strcmp(sh->current, name)) {
        ig_index_close(&sh->idx);
        free(sh->current);
        sh->current = NULL;
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddBoolToObject(o, "removed", 1);
        sh_json_emit(sh, o);
    } else {
        sh_printf(sh, "removed %s\n", name);
    }
    return SH_OK;
}

static int ds_rename(shell *sh, sh_args *a)
{
    const char *from = a->words[1].text, *to = a->words[2].text;
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_rename(sh->cat, from, to, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->current && !strcmp(sh->current, from)) {
        free(sh->current);
        sh->current = strdup(to);
        ig_catalog_setting_set(sh->cat, "current", to, &e);
    }
    if (sh->json)
        sh_json_strings(sh, a, "name", to, "old_name", from, NULL);
    else
        sh_printf(sh, "renamed %s to %s\n", from, to);
    return SH_OK;
}

static int ds_compose(shell *sh, sh_args *a)
{
    const char *name = a->words[1].text;
    size_t n = (size_t)a->nwords - 2, nminus = 0;
    const char **members = calloc(n, sizeof *members), **minus = NULL;
    char *mcopy = NULL;
    int rc = SH_OK;
    if (!members) {
        rc = sh_fail(sh, a, "out_of_memory", "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        members[i] = a->words[i + 2].text;
    /* every --minus (it may be given more than once), each a comma-separated list */
    size_t total = 0;
    for (int j = 0; j < a->nopts; j++)
        if (!strcmp(a->opts[j].name, "minus"))
            total += (a->opts[j].value.text ? strlen(a->opts[j].value.text) : 0) + 1;
    if (total && (!(mcopy = malloc(total)) || !(minus = calloc(total, sizeof *minus)))) {
        rc = sh_fail(sh, a, "out_of_memory", "out of memory");
        goto out;
    }
    for (int j = 0, at = 0; j < a->nopts; j++) {
        sh_optval *mv = &a->opts[j];
        if (strcmp(mv->name, "minus"))
            continue;
        mv->used = 1;
        const char *v = mv->value.text ? mv->value.text : "";
        char *t = strcpy(mcopy + at, v);
        at += (int)strlen(v) + 1;
        for (;;) { /* names between commas: none may be empty */
            char *comma = strchr(t, ',');
            if (comma)
                *comma = '\0';
            if (!*t) {
                rc = sh_fail_at(sh, a, mv->col, "usage", "--minus: an empty dataset name in \"%s\" (give T or T1,T2)", v);
                goto out;
            }
            minus[nminus++] = t;
            if (!comma)
                break;
            t = comma + 1;
        }
    }
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_compose(sh->cat, name, members, n, minus, nminus, &e))) {
        rc = sh_fail_ig(sh, a, &e);
        goto out;
    }
    ig_dataset d;
    if (SH_TIMED(sh, ig_catalog_get(sh->cat, name, &d, &e))) {
        rc = sh_fail_ig(sh, a, &e);
        goto out;
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *dj = dataset_json(&d);
        cJSON_AddItemToObject(o, "dataset", dj);
        sh_json_emit(sh, o);
    } else {
        char b[32];
        sh_fmt_bytes(d.bytes, b, sizeof b);
        sh_printf(sh, "composed %s of %zu dataset%s%s: %s, %" PRIu64 " doc%s (load %s to query it)\n", name, n,
                  n == 1 ? "" : "s", nminus ? ", less what the subtracted ones hold" : "", b, d.documents,
                  d.documents == 1 ? "" : "s", name);
    }
    ig_dataset_free(&d);
out:
    free(members);
    free(minus);
    free(mcopy);
    return rc;
}

static int ds_attach(shell *sh, sh_args *a)
{
    const char *name = a->words[1].text;
    ig_error e;
    if (ig_dataset_name_check(name, &e))
        return sh_fail_at(sh, a, a->words[1].col, ig_error_code_name(e.code), "%s", e.msg);
    ig_attach_options o = {0};
    sh_optval *v = sh_opt_get(a, "format");
    if (!v)
        return sh_fail(sh, a, "usage", "attach needs --format infini-gram (the layout of the index directory)");
    if (strcmp(v->value.text, "infini-gram"))
        return sh_fail_at(sh, a, v->value.col, "usage", "--format: attach reads infini-gram indexes");
    if ((v = sh_opt_get(a, "dtype"))) {
        if (!(o.token_width = dtype_bytes(v->value.text)))
            return sh_fail_at(sh, a, v->value.col, "usage", "--dtype: expected u8, u16 or u32");
    }
    if ((v = sh_opt_get(a, "version"))) {
        if (strcmp(v->value.text, "4") && strcmp(v->value.text, "5") && strcmp(v->value.text, "6"))
            return sh_fail_at(sh, a, v->value.col, "usage", "--version: expected 4 or 6");
        o.version = (uint32_t)atoi(v->value.text);
    }
    if ((v = sh_opt_get(a, "vocab"))) {
        sh_expand_tilde(&v->value);
        o.vocab = v->value.text;
    }
    sh_expand_tilde(&a->words[2]);
    if (SH_TIMED(sh, ig_catalog_attach(sh->cat, name, a->words[2].text, "infini-gram", &o, &e)))
        return sh_fail_ig(sh, a, &e);
    ig_dataset d;
    if (SH_TIMED(sh, ig_catalog_get(sh->cat, name, &d, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->json) {
        cJSON *oj = sh_json_new(sh, a);
        cJSON_AddItemToObject(oj, "dataset", dataset_json(&d));
        sh_json_emit(sh, oj);
    } else {
        char b[32];
        sh_fmt_bytes(d.bytes, b, sizeof b);
        sh_printf(sh, "attached %s: %s of u%u token ids, %" PRIu64 " doc%s, %u shard%s%s (load %s to query it)\n", name, b,
                  d.token_width * 8, d.documents, d.documents == 1 ? "" : "s", d.shards, d.shards == 1 ? "" : "s",
                  d.vocab ? ", with a vocabulary" : "", name);
    }
    ig_dataset_free(&d);
    return SH_OK;
}

static int ds_prepare(shell *sh, sh_args *a)
{
    const char *name = a->words[1].text;
    uint64_t min_count = 0;
    sh_optval *v = sh_opt_get(a, "min-count");
    if (v) {
        char *end;
        errno = 0;
        min_count = strtoull(v->value.text, &end, 10);
        if (!isdigit((unsigned char)v->value.text[0]) || *end || errno || min_count < 1)
            return sh_fail_at(sh, a, v->value.col, "usage", "--min-count: expected a whole number from 1 to 18446744073709551615");
    }
    ig_next_table_info info;
    ig_error e;
    int rc = SH_TIMED(sh, ig_catalog_prepare(sh->cat, name, min_count, (const volatile int *)&sh_interrupted, &info, &e));
    if (rc == IG_ECANCELLED)
        return sh_fail(sh, a, "cancelled", "prepare of %s cancelled; the table before (if any) is still in force", name);
    if (rc)
        return sh_fail_ig(sh, a, &e);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddItemToObject(o, "next_table", next_table_json(&info));
        sh_json_emit(sh, o);
    } else {
        char b[32];
        sh_fmt_bytes(info.bytes, b, sizeof b);
        sh_printf(sh, "prepared %s: next tokens of %" PRIu64 " context%s seen %" PRIu64 "+ times, %" PRIu64
                      " entries, %s (used from the next load)\n",
                  name, info.contexts, info.contexts == 1 ? "" : "s", info.min_count, info.entries, b);
    }
    return SH_OK;
}

static int ds_verify(shell *sh, sh_args *a)
{
    ig_error e;
    if (SH_TIMED(sh, ig_catalog_verify(sh->cat, a->words[1].text, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "name", a->words[1].text);
        cJSON_AddBoolToObject(o, "ok", 1);
        sh_json_emit(sh, o);
    } else {
        ig_dataset d;
        int attached = 0;
        if (!ig_catalog_get(sh->cat, a->words[1].text, &d, &e)) {
            attached = d.attach_dir != NULL;
            ig_dataset_free(&d);
        }
        if (attached) /* no checksums: every row and separator was checked instead */
            sh_printf(sh, "%s: attached index verified: every suffix-array row and separator is sound\n",
                      a->words[1].text);
        else
            sh_printf(sh, "%s: index verified, all checksums match\n", a->words[1].text);
    }
    return SH_OK;
}

static int ds_check(shell *sh, sh_args *a)
{
    ig_error e;
    int stale = 0;
    char *why = NULL;
    ig_dataset d;
    if (SH_TIMED(sh, ig_catalog_get(sh->cat, a->words[1].text, &d, &e)))
        return sh_fail_ig(sh, a, &e);
    /* a composition is stale through a member: that is what to rebuild; an attached index, or
     * a tokenizer that changed: the reason says what to do (a build would not help) */
    int unbuilt = !d.index_path && !d.nmembers && !d.attach_dir, composed = d.nmembers > 0,
        attached = d.attach_dir != NULL, tokenizer = d.tokenizer != NULL;
    ig_dataset_free(&d);
    if (unbuilt) /* nothing to be stale against */
        return sh_fail(sh, a, "usage", "dataset %s is not built (run: build %s)", a->words[1].text, a->words[1].text);
    if (SH_TIMED(sh, ig_catalog_check(sh->cat, a->words[1].text, IG_CHECK_DEEP, &stale, &why, &e)))
        return sh_fail_ig(sh, a, &e);
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "name", a->words[1].text);
        cJSON_AddBoolToObject(o, "stale", stale);
        if (why)
            cJSON_AddStringToObject(o, "reason", why);
        sh_json_emit(sh, o);
    } else if (stale) {
        if (attached || (tokenizer && why && !strncmp(why, "its tokenizer", 13)))
            sh_printf(sh, "%s is stale: %s\n", a->words[1].text, why ? why : "its files changed");
        else if (composed)
            sh_printf(sh, "%s is stale: %s (rebuild that member)\n", a->words[1].text, why ? why : "a member changed");
        else
            sh_printf(sh, "%s is stale: %s (run: build %s)\n", a->words[1].text, why ? why : "sources changed",
                      a->words[1].text);
    } else {
        sh_printf(sh, "%s is up to date\n", a->words[1].text);
    }
    free(why);
    return SH_OK;
}

int cmd_dataset(shell *sh, sh_args *a)
{
    /* each with its words' count (max -1: no bound) and usage, checked before it runs */
    static const struct {
        const char *name;
        sh_handler fn;
        int min, max;
        const char *usage;
    } subs[] = {
        {"add", ds_add, 2, -1, ":dataset add NAME SOURCE... [--text TEXT]"},
        {"compose", ds_compose, 3, -1, ":dataset compose NAME A B... [--minus T,...]"},
        {"attach", ds_attach, 3, 3, ":dataset attach NAME DIR --format infini-gram [--dtype u8|u16|u32] [--vocab FILE]"},
        {"prepare", ds_prepare, 2, 2, ":dataset prepare NAME [--min-count N]"},
        {"list", ds_list, 1, 1, ":dataset list"},
        {"info", ds_info, 2, 2, ":dataset info NAME"},
        {"remove", ds_remove, 2, 2, ":dataset remove NAME"},
        {"rename", ds_rename, 3, 3, ":dataset rename OLD NEW"},
        {"verify", ds_verify, 2, 2, ":dataset verify NAME"},
        {"check", ds_check, 2, 2, ":dataset check NAME"},
    };
    if (a->nwords < 1)
        return sh_fail(sh, a, "usage",
                       "missing sub-command: add, compose, attach, prepare, list, info, remove, rename, verify or check");
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(a->words[0].text, subs[i].name)) {
            int is_add = !strcmp(subs[i].name, "add"), is_compose = !strcmp(subs[i].name, "compose");
            static const char *const attach_opts[] = {"format", "dtype", "vocab", "version", NULL};
            int is_attach = !strcmp(subs[i].name, "attach"), is_prepare = !strcmp(subs[i].name, "prepare");
            for (int j = 0; j < a->nopts; j++) {
                if (is_prepare != !strcmp(a->opts[j].name, "min-count"))
                    return sh_fail_at(sh, a, a->opts[j].col, "usage", is_prepare ? "option --%s does not apply to "
                                      ":dataset prepare" : "option --%s applies to :dataset prepare only",
                                      a->opts[j].name);
                if (is_prepare)
                    continue;
                int attach_opt = 0;
                for (int k = 0; attach_opts[k]; k++)
                    attach_opt |= !strcmp(a->opts[j].name, attach_opts[k]);
                if (is_attach) {
                    if (!attach_opt)
                        return sh_fail_at(sh, a, a->opts[j].col, "usage", "option --%s does not apply to :dataset attach",
                                          a->opts[j].name);
                    continue;
                }
                if (attach_opt && strcmp(a->opts[j].name, "format") &&
                    !(is_add && (!strcmp(a->opts[j].name, "dtype") || !strcmp(a->opts[j].name, "vocab"))))
                    return sh_fail_at(sh, a, a->opts[j].col, "usage", "option --%s applies to :dataset attach only",
                                      a->opts[j].name);
                if (a->opts[j].used)
                    continue;
                else if (!is_add && !(is_compose && !strcmp(a->opts[j].name, "minus")))
                    return sh_fail_at(sh, a, a->opts[j].col, "usage", "option --%s applies to :dataset %s only",
                                      a->opts[j].name, strcmp(a->opts[j].name, "minus") ? "add" : "compose");
                else if (is_add && !strcmp(a->opts[j].name, "minus"))
                    return sh_fail_at(sh, a, a->opts[j].col, "usage", "option --minus applies to :dataset compose only");
            }
            if (sh_need_words(sh, a, subs[i].min, subs[i].max, subs[i].usage))
                return SH_ERR;
            return subs[i].fn(sh, a);
        }
    sh_near near;
    sh_near_init(&near, a->words[0].text, strlen(a->words[0].text));
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        sh_near_add(&near, subs[i].name);
    if (near.best)
        return sh_fail_at(sh, a, a->words[0].col, "usage", "unknown sub-command \"%s\" (did you mean %s?)",
                          a->words[0].text, near.best);
    return sh_fail_at(sh, a, a->words[0].col, "usage",
                      "unknown sub-command \"%s\" (add, compose, attach, prepare, list, info, remove, rename, verify, check)",
                      a->words[0].text);
}
