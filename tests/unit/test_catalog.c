/*
 * Catalog tests: registration and its checks, round-trips of every recorded field,
 * rename/remove, settings, schema-version and non-database refusal, several handles
 * and processes writing at once, staleness checks and cleanup's respect for locks held
 * by other processes. Builds themselves are tested with the index code; here a "built"
 * dataset is simulated by writing the catalog row directly (fake_build), which is what
 * a build's commit does.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "infinigram/catalog.h"
#include "infinigram/version.h"
#include "text/ingest.h"
#include "util/util.h"
#include "check.h"

static char *tmp_root;

static char *path2(const char *a, const char *b) { return igi_path_join(a, b); }

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

/* Explicit mtimes: file systems with coarse timestamps would otherwise hide edits. */
static void set_mtime(const char *path, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    if (utimensat(AT_FDCWD, path, ts, 0) != 0)
        perror(path);
}

static char *new_home(const char *tag)
{
    char *h = igi_aprintf("%s/home-%s", tmp_root, tag);
    return h;
}

static ig_source file_src(const char *path)
{
    ig_source s = {.kind = IG_SOURCE_FILE, .path = path};
    return s;
}

static ig_source inline_src(const char *text, size_t len)
{
    ig_source s = {.kind = IG_SOURCE_INLINE, .text = text, .text_len = len};
    return s;
}

static int raw_exec(const char *home, const char *sql)
{
    char *db = path2(home, "catalog.db");
    sqlite3 *h = NULL;
    int rc = sqlite3_open(db, &h);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(h, 10000);
        rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    }
    sqlite3_close(h);
    free(db);
    return rc;
}

/* Does what a build's commit does: points the dataset at `index_dir` and records the
 * deep fingerprints of its sources. */
static void fake_build(ig_catalog *c, const char *name, const char *index_dir)
{
    ig_error err;
    ig_dataset d;
    if (ig_catalog_get(c, name, &d, &err)) {
        fprintf(stderr, "fake_build: %s\n", err.msg);
        exit(2);
    }
    igi_mkdir_p(index_dir, &err);
    sqlite3 *h;
    char *db = path2(ig_catalog_home(c), "catalog.db");
    sqlite3_open(db, &h);
    sqlite3_busy_timeout(h, 10000);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "UPDATE datasets SET status='built', index_path=?, built=1 WHERE id=?",
                       -1, &st, NULL);
    sqlite3_bind_text(st, 1, index_dir, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, d.id);
    CHECK(sqlite3_step(st) == SQLITE_DONE, "fake_build update");
    sqlite3_finalize(st);
    for (size_t i = 0; i < d.nsources; i++) {
        if (d.sources[i].kind == IG_DSRC_INLINE)
            continue;
        ig_fingerprint fp;
        CHECK(igi_source_fingerprint(d.sources[i].path, 1, &fp, &err) == 0, "%s", err.msg);
        sqlite3_prepare_v2(h, "UPDATE sources SET size=?, mtime_ns=?, tree_hash=?"
                              " WHERE dataset_id=? AND ord=?", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)fp.size);
        sqlite3_bind_int64(st, 2, fp.mtime_ns);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)fp.tree_hash);
        sqlite3_bind_int64(st, 4, d.id);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)i);
        CHECK(sqlite3_step(st) == SQLITE_DONE, "fake_build sources");
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    free(db);
    ig_dataset_free(&d);
}

/* ------------------------------------------------------------------------ */

static void test_names(void)
{
    ig_error err;
    const char *good[] = {"a", "A", "0", "shakespeare", "A.b-c_1", "x-", "9.9"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK(ig_dataset_name_check(good[i], &err) == 0, "good name %s: %s", good[i], err.msg);
    char long64[65], long65[66];
    memset(long64, 'a', 64);
    long64[64] = 0;
    memset(long65, 'b', 65);
    long65[65] = 0;
    CHECK(ig_dataset_name_check(long64, &err) == 0, "64 chars ok");
    const char *bad[] = {"", "-x", ".x", "_x", "a b", "a/b", "a\"b", "é", "a:b", long65};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = ig_dataset_name_check(bad[i], &err);
        CHECK(rc == IG_EUSAGE && err.code == IG_EUSAGE, "bad name '%s' accepted", bad[i]);
    }
    CHECK(ig_dataset_name_check(NULL, &err) == IG_EUSAGE, "NULL name");
    CHECK(!strcmp(ig_dataset_source_kind_name(IG_DSRC_FILE), "file") &&
          !strcmp(ig_dataset_source_kind_name(IG_DSRC_DIR), "dir") &&
          !strcmp(ig_dataset_source_kind_name(IG_DSRC_LINES), "lines") &&
          !strcmp(ig_dataset_source_kind_name(IG_DSRC_JSONL), "jsonl") &&
          !strcmp(ig_dataset_source_kind_name(IG_DSRC_INLINE), "inline"), "kind names");
    ig_dataset_free(NULL);
    ig_dataset_list_free(NULL, 0);
}

static void test_add_get_list(void)
{
    ig_error err;
    char *home = new_home("basic");
    ig_catalog *c = NULL;
    int rc = ig_catalog_open(&c, home, &err);
    CHECK(rc == 0 && c, "open: %s", err.msg);
    if (!c)
        return;
    CHECK(ig_catalog_home(c)[0] == '/', "home absolute: %s", ig_catalog_home(c));
    char *idx = path2(home, "indexes");
    struct stat st;
    CHECK(stat(idx, &st) == 0 && S_ISDIR(st.st_mode), "indexes dir created");

    char *srcdir = path2(tmp_root, "src-basic");
    igi_mkdir_p(srcdir, &err);
    char *fa = path2(srcdir, "a.txt");
    write_text(fa, "hello world\n");
    char *dir = path2(srcdir, "tree");
    char *sub = path2(dir, "sub");
    igi_mkdir_p(sub, &err);
    char *nested = path2(sub, "n.txt");
    write_text(nested, "nested\n");
    char *lines = path2(srcdir, "l.txt");
    write_text(lines, "one\ntwo\n");

    /* A relative path is stored absolute. */
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    CHECK(chdir(srcdir) == 0, "chdir");
    ig_source s1[] = {file_src("a.txt")};
    rc = ig_catalog_add(c, "zeta", s1, 1, NULL, NULL, &err);
    CHECK(rc == 0, "add file: %s", err.msg);
    CHECK(chdir(cwd) == 0, "chdir back");

    ig_source s2[] = {file_src(dir)};
    CHECK(ig_catalog_add(c, "alpha", s2, 1, NULL, NULL, &err) == 0, "add dir: %s", err.msg);

    static const char inl[] = "in\0line";
    ig_source s3[] = {inline_src(inl, sizeof inl - 1), file_src(fa)};
    CHECK(ig_catalog_add(c, "Mid", s3, 2, NULL, NULL, &err) == 0, "add inline: %s", err.msg);

    ig_ingest_options lo;
    ig_ingest_options_default(&lo);
    lo.format = IG_FORMAT_LINES;
    ig_source s4[] = {file_src(lines)};
    CHECK(ig_catalog_add(c, "lines1", s4, 1, &lo, NULL, &err) == 0, "add lines: %s", err.msg);

    /* Duplicate, bad name, missing source, bad range, no sources. */
    rc = ig_catalog_add(c, "zeta", s2, 1, NULL, NULL, &err);
    CHECK(rc == IG_EEXISTS && strstr(err.msg, "dataset \"zeta\" already exists"),
          "duplicate: %d %s", rc, err.msg);
    rc = ig_catalog_add(c, "bad name", s2, 1, NULL, NULL, &err);
    CHECK(rc == IG_EUSAGE, "bad name: %d", rc);
    char *missing = path2(srcdir, "nope.txt");
    ig_source s5[] = {file_src(fa), file_src(missing)};
    rc = ig_catalog_add(c, "m", s5, 2, NULL, NULL, &err);
    CHECK(rc == IG_ENOTFOUND && strstr(err.msg, missing), "missing source: %d %s", rc, err.msg);
    rc = ig_catalog_add(c, "r", s1, 1, NULL, "abc", &err);
    CHECK(rc != 0, "bad range accepted");
    rc = ig_catalog_add(c, "n", s1, 0, NULL, NULL, &err);
    CHECK(rc == IG_EUSAGE, "no sources: %d", rc);
    if (geteuid() != 0) {
        char *locked = path2(srcdir, "locked.txt");
        write_text(locked, "x");
        chmod(locked, 0);
        ig_source s6[] = {file_src(locked)};
        rc = ig_catalog_add(c, "u", s6, 1, NULL, NULL, &err);
        CHECK(rc == IG_EIO && strstr(err.msg, locked), "unreadable: %d %s", rc, err.msg);
        chmod(locked, 0644);
        free(locked);
    }
    ig_dataset d;
    rc = ig_catalog_get(c, "m", &d, &err);
    CHECK(rc == IG_ENOTFOUND && strstr(err.msg, "unknown dataset \"m\""), "failed add left a row");

    /* Options, range text and sources round-trip. */
    ig_ingest_options jo;
    ig_ingest_options_default(&jo);
    jo.format = IG_FORMAT_JSONL;
    jo.field = "body";
    jo.normalize = 0;
    jo.lossy = 1;
    jo.strict = 1;
    jo.casefold = 1;
    ig_source s7[] = {file_src(lines)};
    CHECK(ig_catalog_add(c, "j", s7, 1, &jo, "10:50%", &err) == 0, "add jsonl: %s", err.msg);
    rc = ig_catalog_get(c, "j", &d, &err);
    CHECK(rc == 0, "get j: %s", err.msg);
    if (!rc) {
        CHECK(!strcmp(d.name, "j") && !strcmp(d.status, "registered"), "name/status");
        CHECK(d.index_path == NULL && d.built == 0 && d.created > 1e9 && d.updated >= d.created,
              "times");
        CHECK(d.ingest.format == IG_FORMAT_JSONL, "format");
        CHECK(d.ingest.field && !strcmp(d.ingest.field, "body") && d.ingest.field == d.field_buf,
              "field");
        CHECK(d.ingest.normalize == 0 && d.ingest.lossy == 1 && d.ingest.strict == 1 && d.ingest.casefold == 1,
              "flags");
        CHECK(d.range_text && !strcmp(d.range_text, "10:50%"), "range_text");
        CHECK(d.ingest.has_range && d.ingest.range.start.kind == 1 &&
              d.ingest.range.start.value == 10 && d.ingest.range.end.kind == 2 &&
              d.ingest.range.end.value == 50, "range parsed");
        CHECK(d.nsources == 1 && d.sources[0].kind == IG_DSRC_JSONL, "jsonl kind");
        CHECK(d.sources[0].size == 8 && d.sources[0].mtime_ns > 0, "size/mtime at add");
        CHECK(d.bytes == 0 && d.documents == 0 && d.shards == 0 && d.build_params == NULL,
              "unbuilt counts");
        ig_dataset_free(&d);
    }
    rc = ig_catalog_get(c, "Mid", &d, &err);
    CHECK(rc == 0 && d.nsources == 2, "get Mid");
    if (!rc) {
        CHECK(d.sources[0].kind == IG_DSRC_INLINE && d.sources[0].path == NULL &&
              d.sources[0].text_len == 7 && !memcmp(d.sources[0].text, inl, 7), "inline text");
        CHECK(d.sources[1].kind == IG_DSRC_FILE && !strcmp(d.sources[1].path, fa), "file path");
        CHECK(d.ingest.format == IG_FORMAT_TEXT && d.ingest.normalize == 1 &&
              !d.ingest.has_range && d.range_text == NULL, "defaults");
        ig_dataset_free(&d);
    }
    rc = ig_catalog_get(c, "zeta", &d, &err);
    CHECK(rc == 0 && d.nsources == 1 && d.sources[0].path[0] == '/' &&
          !strcmp(d.sources[0].path, fa), "relative path stored absolute");
    ig_dataset_free(&d);

    ig_dataset *list = NULL;
    size_t n = 0;
    rc = ig_catalog_list(c, &list, &n, &err);
    const char *want[] = {"Mid", "alpha", "j", "lines1", "zeta"};
    CHECK(rc == 0 && n == 5, "list: %d %zu", rc, n);
    for (size_t i = 0; i < n && i < 5; i++)
        CHECK(!strcmp(list[i].name, want[i]), "list[%zu] = %s", i, list[i].name);
    if (n == 5) {
        CHECK(list[1].nsources == 1 && list[1].sources[0].kind == IG_DSRC_DIR, "dir kind");
        CHECK(list[3].sources[0].kind == IG_DSRC_LINES, "lines kind");
    }
    ig_dataset_list_free(list, n);

    /* Rename. */
    rc = ig_catalog_rename(c, "zeta", "alpha", &err);
    CHECK(rc == IG_EEXISTS && strstr(err.msg, "alpha"), "rename to existing: %d", rc);
    rc = ig_catalog_rename(c, "nothere", "x", &err);
    CHECK(rc == IG_ENOTFOUND && strstr(err.msg, "nothere"), "rename unknown: %d", rc);
    rc = ig_catalog_rename(c, "zeta", "-bad", &err);
    CHECK(rc == IG_EUSAGE, "rename to bad name: %d", rc);
    rc = ig_catalog_rename(c, "zeta", "omega", &err);
    CHECK(rc == 0, "rename: %s", err.msg);
    CHECK(ig_catalog_get(c, "zeta", &d, &err) == IG_ENOTFOUND, "old name gone");
    rc = ig_catalog_get(c, "omega", &d, &err);
    CHECK(rc == 0 && d.nsources == 1 && !strcmp(d.sources[0].path, fa), "new name has sources");
    ig_dataset_free(&d);

    /* Remove: the row, its sources (cascade) and its index directory go. */
    char *fake_idx = igi_aprintf("%s/omega-0011223344556677", idx);
    fake_build(c, "omega", fake_idx);
    char *fake_file = path2(fake_idx, "manifest.json");
    write_text(fake_file, "{}");
    rc = ig_catalog_remove(c, "omega", &err);
    CHECK(rc == 0, "remove: %s", err.msg);
    CHECK(stat(fake_idx, &st) != 0 && errno == ENOENT, "index dir removed");
    CHECK(ig_catalog_get(c, "omega", &d, &err) == IG_ENOTFOUND, "removed");
    rc = ig_catalog_remove(c, "omega", &err);
    CHECK(rc == IG_ENOTFOUND, "remove unknown: %d", rc);
    CHECK(raw_exec(home, "SELECT 1") == SQLITE_OK, "raw db ok");
    char *db = path2(home, "catalog.db");
    sqlite3 *h;
    sqlite3_open(db, &h);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(h, "SELECT count(*) FROM sources WHERE dataset_id NOT IN"
                          " (SELECT id FROM datasets)", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 0, "sources cascaded");
    sqlite3_finalize(q);
    sqlite3_close(h);

    /* Verify refuses a dataset that was never built. */
    rc = ig_catalog_verify(c, "alpha", &err);
    CHECK(rc == IG_EUSAGE && strstr(err.msg, "dataset \"alpha\" is not built"), "verify: %d", rc);
    CHECK(ig_catalog_verify(c, "nothere", &err) == IG_ENOTFOUND, "verify unknown");

    ig_catalog_close(&c);
    CHECK(c == NULL, "close clears handle");
    ig_catalog_close(&c);
    free(db);
    free(fake_file);
    free(fake_idx);
    free(missing);
    free(fa);
    free(nested);
    free(sub);
    free(dir);
    free(lines);
    free(srcdir);
    free(idx);
    free(home);
}

static void test_settings_and_versions(void)
{
    ig_error err;
    char *home = new_home("settings");
    ig_catalog *c = NULL;
    CHECK(ig_catalog_open(&c, home, &err) == 0, "open: %s", err.msg);
    if (!c)
        return;
    char *v = (char *)1;
    CHECK(ig_catalog_setting_get(c, "format", &v, &err) == 0 && v == NULL, "unset is NULL");
    CHECK(ig_catalog_setting_set(c, "format", "text", &err) == 0, "set: %s", err.msg);
    CHECK(ig_catalog_setting_set(c, "format", "json", &err) == 0, "set again: %s", err.msg);
    CHECK(ig_catalog_setting_set(c, "it's \"quoted\"", "va'l\"ue", &err) == 0, "quoted");
    CHECK(ig_catalog_setting_set(c, "gone", "1", &err) == 0, "set gone");
    CHECK(ig_catalog_setting_set(c, "gone", NULL, &err) == 0, "unset gone");
    ig_catalog_close(&c);

    CHECK(ig_catalog_open(&c, home, &err) == 0, "reopen: %s", err.msg);
    if (!c)
        return;
    CHECK(ig_catalog_setting_get(c, "format", &v, &err) == 0 && v && !strcmp(v, "json"),
          "persisted: %s", v ? v : "(null)");
    free(v);
    CHECK(ig_catalog_setting_get(c, "it's \"quoted\"", &v, &err) == 0 && v &&
          !strcmp(v, "va'l\"ue"), "quoted persisted");
    free(v);
    CHECK(ig_catalog_setting_get(c, "gone", &v, &err) == 0 && v == NULL, "unset persisted");
    ig_catalog_close(&c);

    /* Schema version written; a newer one is refused. */
    char *db = path2(home, "catalog.db");
    sqlite3 *h;
    sqlite3_open(db, &h);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW &&
          sqlite3_column_int(q, 0) == IG_CATALOG_SCHEMA_VERSION, "user_version set");
    sqlite3_finalize(q);
    sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW &&
          !strcmp((const char *)sqlite3_column_text(q, 0), "wal"), "WAL mode");
    sqlite3_finalize(q);
    sqlite3_close(h);
    CHECK(raw_exec(home, "PRAGMA user_version = 99") == SQLITE_OK, "raw set version");
    int rc = ig_catalog_open(&c, home, &err);
    CHECK(rc == IG_ECORRUPT && c == NULL && strstr(err.msg, "schema version 99 is newer") &&
          strstr(err.msg, "catalog.db"), "newer schema: %d %s", rc, err.msg);
    ig_catalog_close(&c);

    /* A file that is not a database. */
    char *home2 = new_home("notadb");
    igi_mkdir_p(home2, &err);
    char *db2 = path2(home2, "catalog.db");
    char junk[8192];
    for (size_t i = 0; i < sizeof junk - 1; i++)
        junk[i] = (char)('a' + i % 26);
    junk[sizeof junk - 1] = 0;
    write_text(db2, junk);
    rc = ig_catalog_open(&c, home2, &err);
    CHECK(rc == IG_ECORRUPT && c == NULL && strstr(err.msg, db2), "not a db: %d %s", rc, err.msg);

    rc = ig_catalog_open(&c, "", &err);
    CHECK(rc == IG_EUSAGE, "empty home");

    free(db2);
    free(home2);
    free(db);
    free(home);
}

/* Schema 5 adds the casefold column to a catalog of schema 3 (datasets there are not
 * case-folded), and again to one whose version was set back with the column present. */
static void test_casefold_migration(void)
{
    ig_error err;
    char *home = new_home("casefold");
    ig_catalog *c = NULL;
    CHECK(ig_catalog_open(&c, home, &err) == 0, "open: %s", err.msg);
    if (!c)
        return;
    ig_source src = {.kind = IG_SOURCE_INLINE, .text = "Hello", .text_len = 5};
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    o.casefold = 1;
    CHECK(ig_catalog_add(c, "cf", &src, 1, &o, NULL, &err) == 0, "add: %s", err.msg);
    ig_catalog_close(&c);
    CHECK(raw_exec(home, "ALTER TABLE datasets DROP COLUMN casefold; PRAGMA user_version = 3") == SQLITE_OK,
          "back to schema 3");
    for (int round = 0; round < 2; round++) {
        CHECK(ig_catalog_open(&c, home, &err) == 0, "open schema 3: %s", err.msg);
        if (!c)
            break;
        ig_dataset d;
        int rc = ig_catalog_get(c, "cf", &d, &err);
        CHECK(rc == 0 && d.ingest.casefold == 0, "round %d: a dataset of schema 3 is not case-folded: %s", round,
              rc ? err.msg : "");
        if (!rc)
            ig_dataset_free(&d);
        CHECK(ig_catalog_add(c, round ? "cf3" : "cf2", &src, 1, &o, NULL, &err) == 0, "add after: %s", err.msg);
        rc = ig_catalog_get(c, round ? "cf3" : "cf2", &d, &err);
        CHECK(rc == 0 && d.ingest.casefold == 1, "round %d: casefold stored after the migration", round);
        if (!rc)
            ig_dataset_free(&d);
        ig_catalog_close(&c);
        /* the second round: version set back, the column still there */
        CHECK(raw_exec(home, "PRAGMA user_version = 3") == SQLITE_OK, "version set back");
    }
    free(home);
}

/* Several processes open the same new home at once and all write. */
static void test_concurrency(void)
{
    ig_error err;
    char *home = new_home("conc");
    char *src = path2(tmp_root, "conc.txt");
    write_text(src, "text\n");
    enum { KIDS = 3, ADDS = 25 };
    pid_t kids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            ig_catalog *cc = NULL;
            ig_error e;
            if (ig_catalog_open(&cc, home, &e)) {
                fprintf(stderr, "child open: %s\n", e.msg);
                _exit(1);
            }
            for (int i = 0; i < ADDS; i++) {
                char name[32];
                snprintf(name, sizeof name, "kid%d-%02d", k, i);
                ig_source s[] = {file_src(src)};
                if (ig_catalog_add(cc, name, s, 1, NULL, NULL, &e)) {
                    fprintf(stderr, "child add: %s\n", e.msg);
                    _exit(1);
                }
                char val[16];
                snprintf(val, sizeof val, "%d", i);
                if (ig_catalog_setting_set(cc, "shared", val, &e)) {
                    fprintf(stderr, "child set: %s\n", e.msg);
                    _exit(1);
                }
            }
            ig_catalog_close(&cc);
            _exit(0);
        }
    }
    /* Two handles in this process, interleaved, while the children write. */
    ig_catalog *c1 = NULL, *c2 = NULL;
    CHECK(ig_catalog_open(&c1, home, &err) == 0, "open c1: %s", err.msg);
    CHECK(ig_catalog_open(&c2, home, &err) == 0, "open c2: %s", err.msg);
    if (c1 && c2) {
        for (int i = 0; i < ADDS; i++) {
            char name[32];
            ig_source s[] = {file_src(src)};
            snprintf(name, sizeof name, "one-%02d", i);
            CHECK(ig_catalog_add(c1, name, s, 1, NULL, NULL, &err) == 0, "c1 add: %s", err.msg);
            snprintf(name, sizeof name, "two-%02d", i);
            CHECK(ig_catalog_add(c2, name, s, 1, NULL, NULL, &err) == 0, "c2 add: %s", err.msg);
        }
        ig_dataset d;
        CHECK(ig_catalog_get(c2, "one-00", &d, &err) == 0, "c2 sees c1's add");
        ig_dataset_free(&d);
        int64_t v0 = ig_catalog_data_version(c1);
        CHECK(v0 >= 0, "data_version");
        CHECK(ig_catalog_setting_set(c2, "poke", "1", &err) == 0, "poke");
        CHECK(ig_catalog_data_version(c1) != v0, "data_version moves on another's commit");
        ig_source s[] = {file_src(src)};
        CHECK(ig_catalog_add(c2, "one-00", s, 1, NULL, NULL, &err) == IG_EEXISTS,
              "duplicate across handles");
    }
    for (int k = 0; k < KIDS; k++) {
        int status = 0;
        waitpid(kids[k], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed", k);
    }
    if (c1) {
        ig_dataset *list;
        size_t n = 0;
        CHECK(ig_catalog_list(c1, &list, &n, &err) == 0 && n == (size_t)(KIDS + 2) * ADDS,
              "all adds present: %zu", n);
        ig_dataset_list_free(list, n);
    }
    ig_catalog_close(&c1);
    ig_catalog_close(&c2);
    free(src);
    free(home);
}

/* A write lock held past the busy timeout is reported as busy, naming the file. */
static void test_busy(void)
{
    ig_error err;
    char *home = new_home("busy");
    ig_catalog *c = NULL;
    CHECK(ig_catalog_open(&c, home, &err) == 0, "open: %s", err.msg);
    if (!c)
        return;
    char *db = path2(home, "catalog.db");
    sqlite3 *h;
    sqlite3_open(db, &h);
    CHECK(sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK, "hold lock");
    int rc = ig_catalog_setting_set(c, "k", "v", &err);
    CHECK(rc == IG_EBUSY && strstr(err.msg, db) && strstr(err.msg, "locked"),
          "busy: %d %s", rc, err.msg);
    char *v = NULL;
    CHECK(ig_catalog_setting_get(c, "k", &v, &err) == 0 && v == NULL, "reads go on in WAL");
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(ig_catalog_setting_set(c, "k", "v", &err) == 0, "writes after release");
    ig_catalog_close(&c);
    free(db);
    free(home);
}

static void test_check(void)
{
    ig_error err;
    char *home = new_home("check");
    ig_catalog *c = NULL;
    CHECK(ig_catalog_open(&c, home, &err) == 0, "open: %s", err.msg);
    if (!c)
        return;
    char *srcdir = path2(tmp_root, "src-check");
    igi_mkdir_p(srcdir, &err);
    char *fa = path2(srcdir, "a.txt");
    write_text(fa, "0123456789");
    set_mtime(fa, 1000000000);
    char *tree = path2(srcdir, "tree");
    char *sub = path2(tree, "sub");
    igi_mkdir_p(sub, &err);
    char *nested = path2(sub, "n.txt");
    write_text(nested, "nested\n");
    set_mtime(nested, 1000000000);
    char *idx = path2(home, "indexes");

    ig_source s1[] = {file_src(fa), inline_src("x", 1)};
    CHECK(ig_catalog_add(c, "f", s1, 2, NULL, NULL, &err) == 0, "add f: %s", err.msg);
    ig_source s2[] = {file_src(tree)};
    CHECK(ig_catalog_add(c, "t", s2, 1, NULL, NULL, &err) == 0, "add t: %s", err.msg);

    /* Registered datasets are never stale. */
    int stale = -1;
    char *why = (char *)1;
    write_text(fa, "0123456789ab");
    CHECK(ig_catalog_check(c, "f", 1, &stale, &why, &err) == 0 && stale == 0 && why == NULL,
          "registered not stale");
    CHECK(ig_catalog_check(c, "nope", 0, &stale, &why, &err) == IG_ENOTFOUND, "check unknown");

    char *fidx = igi_aprintf("%s/f-00000000000000aa", idx);
    char *tidx = igi_aprintf("%s/t-00000000000000bb", idx);
    write_text(fa, "0123456789");
    set_mtime(fa, 1000000000);
    fake_build(c, "f", fidx);
    fake_build(c, "t", tidx);
    CHECK(ig_catalog_check(c, "f", 0, &stale, &why, &err) == 0 && stale == 0 && !why,
          "fresh after build");

    /* Touch: size and mtime change. */
    write_text(fa, "0123456789ab");
    set_mtime(fa, 1000000100);
    CHECK(ig_catalog_check(c, "f", 0, &stale, &why, &err) == 0 && stale == 1, "touched stale");
    char *want = igi_aprintf("%s changed (size 10 → 12)", fa);
    CHECK(why && !strcmp(why, want), "why: %s", why ? why : "(null)");
    free(why);
    free(want);
    ig_dataset d;
    CHECK(ig_catalog_get(c, "f", &d, &err) == 0 && !strcmp(d.status, "stale"), "status stale");
    ig_dataset_free(&d);
    /* mtime alone. */
    write_text(fa, "0123456789");
    set_mtime(fa, 1000000200);
    CHECK(ig_catalog_check(c, "f", 0, &stale, NULL, &err) == 0 && stale == 1, "mtime stale");
    /* Restored: built again. */
    set_mtime(fa, 1000000000);
    CHECK(ig_catalog_check(c, "f", 0, &stale, &why, &err) == 0 && stale == 0 && !why,
          "restored fresh");
    CHECK(ig_catalog_get(c, "f", &d, &err) == 0 && !strcmp(d.status, "built"), "status built");
    ig_dataset_free(&d);
    /* Missing source. */
    char *moved = path2(srcdir, "moved.txt");
    CHECK(rename(fa, moved) == 0, "rename source");
    CHECK(ig_catalog_check(c, "f", 0, &stale, &why, &err) == 0 && stale == 1, "missing stale");
    want = igi_aprintf("%s: missing", fa);
    CHECK(why && !strcmp(why, want), "why missing: %s", why ? why : "(null)");
    free(why);
    free(want);
    CHECK(rename(moved, fa) == 0, "rename back");

    /* A nested edit is invisible to the shallow check and seen by the deep one. */
    struct stat before, after;
    stat(tree, &before);
    write_text(nested, "nested, longer\n");
    set_mtime(nested, 1000000300);
    stat(tree, &after);
    CHECK(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
          before.st_mtim.tv_nsec == after.st_mtim.tv_nsec, "dir mtime unchanged");
    CHECK(ig_catalog_check(c, "t", IG_CHECK_SHALLOW, &stale, &why, &err) == 0 && stale == 0, "shallow misses");
    /* the check a load makes walks a tree this small */
    CHECK(ig_catalog_check(c, "t", IG_CHECK_BOUNDED, &stale, &why, &err) == 0 && stale == 1 && why &&
          strstr(why, "changed"), "bounded sees: %s", why ? why : "(null)");
    free(why);
    CHECK(ig_catalog_check(c, "t", IG_CHECK_DEEP, &stale, &why, &err) == 0 && stale == 1, "deep sees");
    CHECK(why && strstr(why, tree) && strstr(why, "changed"), "deep why: %s",
          why ? why : "(null)");
    free(why);
    /* A shallow check is not proof of freshness for a directory. */
    CHECK(ig_catalog_check(c, "t", 0, &stale, NULL, &err) == 0 && stale == 0, "shallow again");
    CHECK(ig_catalog_get(c, "t", &d, &err) == 0 && !strcmp(d.status, "stale"), "still stale");
    ig_dataset_free(&d);
    /* Same size, new mtime: the tree hash still catches it. */
    write_text(nested, "nested\n");
    set_mtime(nested, 1000000400);
    CHECK(ig_catalog_check(c, "t", 1, &stale, &why, &err) == 0 && stale == 1 && why &&
          strstr(why, "files below"), "deep same size: %s", why ? why : "(null)");
    free(why);
    set_mtime(nested, 1000000000);
    CHECK(ig_catalog_check(c, "t", IG_CHECK_BOUNDED, &stale, &why, &err) == 0 && stale == 0, "bounded fresh");
    CHECK(ig_catalog_get(c, "t", &d, &err) == 0 && !strcmp(d.status, "built"), "built again");
    ig_dataset_free(&d);
    /* sources as built, but the "index" is a fake_build's folder: the whole check opens the
     * index as load would, and says it does not load */
    CHECK(ig_catalog_check(c, "t", IG_CHECK_DEEP, &stale, &why, &err) != 0 && strstr(err.msg, "t no longer loads") &&
              strstr(err.msg, "run: build t"), "deep, the index not an index: %s", err.msg);
    /* A new file in the directory moves its mtime: the shallow check sees that. */
    char *extra = path2(tree, "extra.txt");
    write_text(extra, "x");
    struct timespec later[2] = {{0, UTIME_OMIT}, {before.st_mtim.tv_sec + 5, 0}};
    utimensat(AT_FDCWD, tree, later, 0);
    CHECK(ig_catalog_check(c, "t", 0, &stale, &why, &err) == 0 && stale == 1 && why,
          "new file shallow");
    free(why);

    /* A tree of more entries than a load walks: the bounded check looks only at the
     * directory's own time (and so cannot clear a stale mark); the deep one walks it all. */
    char *big = path2(srcdir, "big");
    igi_mkdir_p(big, &err);
    char name[64];
    for (int i = 0; i <= IG_CHECK_BOUNDED_ENTRIES; i++) {
        snprintf(name, sizeof name, "%s/f%05d.txt", big, i);
        write_text(name, "b");
    }
    ig_source s3[] = {file_src(big)};
    CHECK(ig_catalog_add(c, "big", s3, 1, NULL, NULL, &err) == 0, "add big: %s", err.msg);
    char *bigidx = igi_aprintf("%s/big-00000000000000cc", idx);
    fake_build(c, "big", bigidx);
    free(bigidx);
    stat(big, &before);
    snprintf(name, sizeof name, "%s/f%05d.txt", big, 77);
    write_text(name, "bb");
    utimensat(AT_FDCWD, big, (struct timespec[2]){{0, UTIME_OMIT}, before.st_mtim}, 0);
    CHECK(ig_catalog_check(c, "big", IG_CHECK_BOUNDED, &stale, NULL, &err) == 0 && stale == 0,
          "bounded: too many to walk");
    CHECK(ig_catalog_check(c, "big", IG_CHECK_DEEP, &stale, NULL, &err) == 0 && stale == 1, "deep walks big");
    write_text(name, "b");
    CHECK(ig_catalog_check(c, "big", IG_CHECK_BOUNDED, &stale, NULL, &err) == 0 && stale == 0, "bounded again");
    CHECK(ig_catalog_get(c, "big", &d, &err) == 0 && !strcmp(d.status, "stale"), "bounded keeps the mark");
    ig_dataset_free(&d);
    free(big);

    ig_catalog_close(&c);
    free(extra);
    free(moved);
    free(fidx);
    free(tidx);
    free(idx);
    free(nested);
    free(sub);
    free(tree);
    free(fa);
    free(srcdir);
    free(home);
}

static void test_cleanup(void)
{
    ig_error err;
    char *home = new_home("cleanup");
    ig_catalog *c = NULL;
    CHECK(ig_catalog_open(&c, home, &err) == 0, "open: %s", err.msg);
    if (!c)
        return;
    char *idx = path2(home, "indexes");
    char *src = path2(tmp_root, "cleanup.txt");
    write_text(src, "abc");
    ig_source s[] = {file_src(src)};
    CHECK(ig_catalog_add(c, "used", s, 1, NULL, NULL, &err) == 0, "add: %s", err.msg);

    char *used = igi_aprintf("%s/used-1111111111111111", idx);
    fake_build(c, "used", used);
    char *orphan = igi_aprintf("%s/used-2222222222222222", idx);
    char *orphan_sub = path2(orphan, "shard-0000");
    igi_mkdir_p(orphan_sub, &err);
    char *orphan_file = path2(orphan_sub, "text");
    write_text(orphan_file, "data");
    char *held = igi_aprintf("%s/used-3333333333333333", idx);
    igi_mkdir_p(held, &err);
    char *held_lock = igi_aprintf("%s.lock", held);
    char *ghost_lock = igi_aprintf("%s/gone-4444444444444444.lock", idx);
    write_text(ghost_lock, "");
    char *stray = path2(idx, "README");
    write_text(stray, "not an index");

    /* The child holds the lock the way a running build does (flock is per open file
     * description, so it must be another process's open). */
    int ready[2], go[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipes");
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(held_lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || flock(fd, LOCK_EX) != 0)
            _exit(1);
        char b = 'r';
        if (write(ready[1], &b, 1) != 1)
            _exit(1);
        if (read(go[0], &b, 1) < 0)
            _exit(1);
        _exit(0);
    }
    char b;
    CHECK(read(ready[0], &b, 1) == 1, "child ready");

    size_t removed = 99;
    int rc = ig_catalog_cleanup(c, &removed, &err);
    CHECK(rc == 0 && removed == 1, "cleanup: %d %zu %s", rc, removed, err.msg);
    struct stat st;
    CHECK(stat(orphan, &st) != 0, "orphan removed");
    CHECK(stat(used, &st) == 0, "index in force kept");
    CHECK(stat(held, &st) == 0 && stat(held_lock, &st) == 0, "locked build kept");
    CHECK(stat(ghost_lock, &st) != 0, "stale lock removed");
    CHECK(stat(stray, &st) == 0, "plain file left alone");
    char *used_lock = igi_aprintf("%s.lock", used);
    CHECK(stat(used_lock, &st) != 0, "no lock left beside the index in force");

    b = 'g';
    CHECK(write(go[1], &b, 1) == 1, "release child");
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "lock child ok");
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);

    rc = ig_catalog_cleanup(c, &removed, &err);
    CHECK(rc == 0 && removed == 1, "second cleanup: %d %zu", rc, removed);
    CHECK(stat(held, &st) != 0 && stat(held_lock, &st) != 0, "released build removed");
    CHECK(stat(used, &st) == 0, "index in force still kept");
    CHECK(ig_catalog_cleanup(c, NULL, &err) == 0, "cleanup with NULL count");

    ig_catalog_close(&c);
    free(used_lock);
    free(stray);
    free(ghost_lock);
    free(held_lock);
    free(held);
    free(orphan_file);
    free(orphan_sub);
    free(orphan);
    free(used);
    free(src);
    free(idx);
    free(home);
}

int main(void)
{
    char tmpl[] = "/tmp/ig-test-catalog-XXXXXX";
    tmp_root = mkdtemp(tmpl);
    if (!tmp_root) {
        perror("mkdtemp");
        return 2;
    }
    test_names();
    test_add_get_list();
    test_settings_and_versions();
    test_casefold_migration();
    test_concurrency();
    test_check();
    test_cleanup();
    test_busy();
    ig_error err;
    if (!check_fail)
        igi_remove_tree(tmp_root, &err);
    else
        fprintf(stderr, "kept %s\n", tmp_root);
    return check_done("test_catalog");
}
