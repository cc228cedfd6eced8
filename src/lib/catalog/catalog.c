/*
 * The catalog (catalog.h) on SQLite. WAL mode lets readers run beside one writer, and
 * every write is a short BEGIN IMMEDIATE transaction so writers queue on the busy
 * timeout instead of failing with a snapshot conflict on lock upgrade. Builds never hold
 * a transaction while they read and sort: they take fingerprints and an flock on
 * `<dir>.lock`, write the index, and only then switch the dataset to it in one
 * transaction, which is the commit point. The lock-file protocol (lock, then check that
 * the path still names the locked inode; unlink while holding) is shared with cleanup so
 * neither side can delete what the other is still using. Nothing here prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "infinigram/catalog.h"
#include "infinigram/index.h"
#include "infinigram/version.h"
#include <cjson/cJSON.h>
#include "index/index_impl.h"
#include "index/spm.h"
#include "index/build_tokens.h"
#include "text/ingest.h"
#include "text/ngrams.h"
#include "util/util.h"

struct ig_catalog {
    sqlite3 *db;
    char *home;      ///< absolute
    char *indexes;   ///< home/indexes
    char *dbpath;    ///< home/catalog.db
    char *readonly;  ///< why the catalog was opened read-only, or NULL
    int no_casefold; ///< a read-only catalog older than schema 5: no casefold column to read
    pthread_t reaper; ///< removes the index the last build replaced (when `reaping`)
    int reaping;
    ig_build_cache *build_cache; ///< sort arrays kept from one build to the next (made on the first)
};

/* PRAGMA application_id of our catalogs ("IGCT"): a SQLite file without it (and without
 * our tables) is someone else's and is never touched. */
#define IG_CATALOG_APP_ID 0x49474354

#define BUSY_TIMEOUT_MS 10000

/* ---------------------------------------------------------------- SQLite helpers */

static int db_fail(ig_catalog *c, int rc, const char *what, ig_error *err)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return ig_error_set(err, IG_EBUSY, "catalog %s is locked by another process",
                            c->dbpath);
    case SQLITE_NOTADB:
        return ig_error_set(err, IG_ECORRUPT, "%s: not a catalog (not an SQLite database)",
                            c->dbpath);
    case SQLITE_CORRUPT:
        return ig_error_set(err, IG_ECORRUPT, "%s: %s: %s", c->dbpath, what,
                            sqlite3_errmsg(c->db));
    case SQLITE_NOMEM:
        return ig_error_set(err, IG_ENOMEM, "%s: %s: out of memory", c->dbpath, what);
    case SQLITE_FULL:
        return ig_error_set(err, IG_EIO, "%s: %s: disk full (%s)", c->dbpath, what, strerror(ENOSPC));
    case SQLITE_READONLY:
        return ig_error_set(err, IG_EUSAGE, "%s: %s: the catalog is read-only%s%s", c->dbpath, what,
                            c->readonly ? ": " : "", c->readonly ? c->readonly : "");
    case SQLITE_ERROR:
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
        /* SQL errors are bugs here or a catalog altered by hand. */
        return ig_error_set(err, IG_EINTERNAL, "%s: %s: %s", c->dbpath, what,
                            sqlite3_errmsg(c->db));
    default: {
        /* the system's reason (ENOSPC, EROFS, EACCES…) says more than "disk I/O error" */
        int eno = c->db ? sqlite3_system_errno(c->db) : 0;
        if (!eno && c->db) /* the errno is kept by the file too, when the system one was overwritten */
            sqlite3_file_control(c->db, "main", SQLITE_FCNTL_LAST_ERRNO, &eno);
        sqlite3_file *wal = NULL; /* … or by the write-ahead log, where most writes go */
        if (!eno && c->db && sqlite3_file_control(c->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK &&
            wal && wal->pMethods && wal->pMethods->xFileControl)
            wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &eno);
        if (eno)
            return ig_error_set(err, IG_EIO, "%s: %s: %s (%s)", c->dbpath, what, sqlite3_errmsg(c->db),
                                strerror(eno));
        return ig_error_set(err, IG_EIO, "%s: %s: %s", c->dbpath, what, c->db ? sqlite3_errmsg(c->db) : "error");
    }
    }
}

static int oom(ig_error *err)
{
    return ig_error_set(err, IG_ENOMEM, "out of memory");
}

static int prep(ig_catalog *c, const char *sql, sqlite3_stmt **st, ig_error *err)
{
    int rc = sqlite3_prepare_v2(c->db, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return db_fail(c, rc, "cannot prepare statement", err);
    }
    return 0;
}

/* Steps a statement that returns no rows, and finalizes it. */
static int run(ig_catalog *c, sqlite3_stmt *st, const char *what, ig_error *err)
{
    int rc = sqlite3_step(st);
    int out = 0;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        out = db_fail(c, rc, what, err);
    sqlite3_finalize(st);
    return out;
}

static int exec(ig_catalog *c, const char *sql, const char *what, ig_error *err)
{
    int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : db_fail(c, rc, what, err);
}

/* Commands that must write fail at once, and say why, on a read-only catalog. */
static int writable(ig_catalog *c, ig_error *err)
{
    if (!c->readonly)
        return 0;
    return ig_error_set(err, IG_EUSAGE, "the catalog in %s is read-only (%s): only queries are possible", c->home,
                        c->readonly);
}

static int tx_begin_write(ig_catalog *c, ig_error *err)
{
    int rc = writable(c, err);
    if (rc)
        return rc;
    return exec(c, "BEGIN IMMEDIATE", "cannot start a transaction", err);
}

static int tx_begin_read(ig_catalog *c, ig_error *err)
{
    return exec(c, "BEGIN", "cannot start a transaction", err);
}

static int tx_commit(ig_catalog *c, ig_error *err)
{
    return exec(c, "COMMIT", "cannot commit", err);
}

static void tx_rollback(ig_catalog *c)
{
    /* SQLite may already have rolled back after an I/O error; nothing to report then. */
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Ends a write transaction that has come to rc: commits it when rc is 0, rolls it back when
 * rc or the commit failed. Returns what it came to. */
static int tx_end_write(ig_catalog *c, int rc, ig_error *err)
{
    if (!rc)
        rc = tx_commit(c, err);
    if (rc)
        tx_rollback(c);
    return rc;
}

/* A read transaction only ends; failure to end it cannot lose data. */
static void tx_end_read(ig_catalog *c)
{
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL);
}

/* Copies a text column; *out is NULL for SQL NULL. Returns -1 on out of memory. */
static int col_str(sqlite3_stmt *st, int i, char **out)
{
    *out = NULL;
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return 0;
    const unsigned char *s = sqlite3_column_text(st, i);
    if (!s)
        return -1;
    *out = igi_strndup((const char *)s, (size_t)sqlite3_column_bytes(st, i));
    return *out ? 0 : -1;
}

/*
 * Prepares `sql`, binds the n integers ids to its first parameters and then text, when not
 * NULL, to the next one (kept by the caller until the statement is finalized), and steps it
 * to its first row. Returns 1 with *st on that row, for the caller to read and then finalize;
 * 0 when there is no row; or the error, saying `what` failed. Unless it returns 1, *st is
 * finalized already.
 */
static int first_row(ig_catalog *c, const char *sql, const int64_t *ids, int n, const char *text,
                     sqlite3_stmt **st, const char *what, ig_error *err)
{
    int rc = prep(c, sql, st, err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(*st, i + 1, ids[i]);
    if (text)
        sqlite3_bind_text(*st, n + 1, text, -1, SQLITE_STATIC);
    int s = sqlite3_step(*st);
    if (s == SQLITE_ROW)
        return 1;
    rc = s == SQLITE_DONE ? 0 : db_fail(c, s, what, err);
    sqlite3_finalize(*st);
    *st = NULL;
    return rc;
}

/*
 * Reads column 0 of the first row of `sql`, a query of at most one parameter, the text arg
 * (none when NULL): into *num when num is not NULL, and as a copy (NULL for SQL NULL) into
 * *text when text is not NULL. *found says whether there was a row; when found is NULL the
 * query must give one (as counts and pragmas always do), and none is an error.
 */
static int lookup(ig_catalog *c, const char *sql, const char *arg, int *found, int64_t *num, char **text,
                  const char *what, ig_error *err)
{
    sqlite3_stmt *st;
    int rc = first_row(c, sql, NULL, 0, arg, &st, what, err);
    if (rc < 0)
        return rc;
    if (found)
        *found = rc;
    if (!rc)
        return found ? 0 : db_fail(c, SQLITE_DONE, what, err);
    rc = 0;
    if (num)
        *num = sqlite3_column_int64(st, 0);
    if (text && col_str(st, 0, text))
        rc = oom(err);
    sqlite3_finalize(st);
    return rc;
}

static int pragma_int(ig_catalog *c, const char *sql, int64_t *out, ig_error *err)
{
    return lookup(c, sql, NULL, NULL, out, NULL, "cannot read a pragma", err);
}

static int pragma_set(ig_catalog *c, const char *name, int value, const char *what, ig_error *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s = %d", name, value);
    return exec(c, sql, what, err);
}

/* Whether the catalog holds table `name` (one opened read-only may be of an older schema). */
static int has_table(ig_catalog *c, const char *name, int *has, ig_error *err)
{
    *has = 0;
    int64_t n = 0;
    int rc = lookup(c, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name, NULL, &n, NULL,
                    "cannot read the catalog's tables", err);
    if (!rc)
        *has = n > 0;
    return rc;
}

/* Reads the columns of a dataset's record (st on its row) into d: 0 or the error. */
typedef int (*record_reader)(ig_catalog *c, ig_dataset *d, sqlite3_stmt *st, ig_error *err);

/* first_row for a query of the record of one dataset in `table`, which a read-only catalog
 * of an older schema may lack: without it there is no row. On a row, read() takes its
 * columns; no row leaves d as it was. 0 or the error. */
static int record_read(ig_catalog *c, ig_dataset *d, const char *table, const char *sql, const int64_t *ids, int n,
                       const char *what, record_reader read, ig_error *err)
{
    sqlite3_stmt *st;
    int has = 0, rc = has_table(c, table, &has, err);
    if (rc || !has || (rc = first_row(c, sql, ids, n, NULL, &st, what, err)) != 1)
        return rc;
    rc = read(c, d, st, err);
    sqlite3_finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- schema */

/* The last component of a path. */
static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}


static const char *const schema_v1 =
    /* AUTOINCREMENT: ids are never reused, so a build can tell its dataset from one
     * removed and re-added under the same name while it ran. */
    "CREATE TABLE datasets("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT UNIQUE NOT NULL,"
    " status TEXT NOT NULL CHECK(status IN ('registered','built','stale')),"
    " index_path TEXT,"
    " bytes INTEGER NOT NULL DEFAULT 0,"
    " documents INTEGER NOT NULL DEFAULT 0,"
    " shards INTEGER NOT NULL DEFAULT 0,"
    " skipped_files INTEGER NOT NULL DEFAULT 0,"
    " created REAL NOT NULL,"
    " updated REAL NOT NULL,"
    " built REAL,"
    " format TEXT NOT NULL CHECK(format IN ('text','lines','jsonl')),"
    " field TEXT,"
    " range_text TEXT,"
    " normalize INTEGER NOT NULL DEFAULT 1,"
    " lossy INTEGER NOT NULL DEFAULT 0,"
    " strict INTEGER NOT NULL DEFAULT 0,"
    " build_params TEXT);"
    "CREATE TABLE sources("
    " id INTEGER PRIMARY KEY,"
    " dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,"
    " ord INTEGER NOT NULL,"
    " kind TEXT NOT NULL CHECK(kind IN ('file','dir','lines','jsonl','inline')),"
    " path TEXT,"
    " text BLOB,"
    " size INTEGER NOT NULL DEFAULT 0,"
    " mtime_ns INTEGER NOT NULL DEFAULT 0,"
    " tree_hash INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE(dataset_id, ord));"
    "CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT);";

/* Schema 3: a dataset's decontamination (its options, and the last build's report as JSON). */
static const char *const schema_v3 =
    "CREATE TABLE IF NOT EXISTS decontam("
    " dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,"
    " eval_path TEXT NOT NULL,"
    " field TEXT,"
    " n INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL DEFAULT 0,"
    " threshold REAL NOT NULL,"
    " lowercase INTEGER NOT NULL DEFAULT 0,"
    " flag_only INTEGER NOT NULL DEFAULT 0,"
    " report TEXT);";

/* Schema 4: the members of composed datasets, in order (minus = 1: a set taken away). A
 * member cannot be removed while a composition names it (no ON DELETE on member_id). */
static const char *const schema_v4 =
    "CREATE TABLE IF NOT EXISTS members("
    " dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,"
    " ord INTEGER NOT NULL,"
    " member_id INTEGER NOT NULL REFERENCES datasets(id),"
    " minus INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(dataset_id, ord));";

/* Schema 5: whether a dataset indexes its case-folded text. Self-contained (one column of
 * its own), so that it composes with the other steps in any order; added only when missing,
 * as a catalog whose version was set back (by hand, or by an older tool) may have it. */
static int schema_v5(ig_catalog *c, ig_error *err)
{
    int64_t has = 0;
    int rc = pragma_int(c, "SELECT count(*) FROM pragma_table_info('datasets') WHERE name = 'casefold'", &has, err);
    if (!rc && !has)
        rc = exec(c, "ALTER TABLE datasets ADD COLUMN casefold INTEGER NOT NULL DEFAULT 0",
                  "cannot add the casefold column", err);
    return rc;
}

/* Schema 6: token indexes attached read-only from another engine's directory (what attach
 * checked, and the fingerprint of the files it saw). */
static const char *const schema_v6 =
    "CREATE TABLE IF NOT EXISTS attached("
    " dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,"
    " dir TEXT NOT NULL,"
    " format TEXT NOT NULL,"
    " token_width INTEGER NOT NULL,"
    " version INTEGER NOT NULL DEFAULT 0,"
    " vocab TEXT,"
    " fingerprint INTEGER NOT NULL);";

/* Schema 7, part: token datasets of our own (ig_token_options), with the tokenizer's checksum. */
static const char *const schema_v7_tokenized =
    "CREATE TABLE IF NOT EXISTS tokenized("
    " dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,"
    " format TEXT NOT NULL CHECK(format IN ('ids','jsonl-ids','text')),"
    " dtype INTEGER NOT NULL DEFAULT 0,"
    " separator INTEGER NOT NULL DEFAULT 0,"
    " field TEXT,"
    " vocab TEXT,"
    " tokenizer TEXT,"
    " tokenizer_hash TEXT);";

/* Schema 7: token datasets of our own (schema_v7_tokenized), next-token tables of attached datasets (files in the home's tables directory), and
 * the fingerprint of an attached dataset's vocabulary (NULL: attached before it was taken).
 * Each step is skipped when done, as a catalog set back to an older version holds them. */
static int schema_v7(ig_catalog *c, ig_error *err)
{
    int64_t has = 0;
    int rc = pragma_int(c, "SELECT count(*) FROM pragma_table_info('attached') WHERE name = 'vocab_fingerprint'", &has,
                        err);
    if (!rc && !has)
        rc = exec(c, "ALTER TABLE attached ADD COLUMN vocab_fingerprint INTEGER",
                  "cannot add the vocabulary fingerprint column", err);
    if (!rc)
        rc = exec(c,
                  "CREATE TABLE IF NOT EXISTS next_tables("
                  " dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id) ON DELETE CASCADE,"
                  " path TEXT NOT NULL,"
                  " fingerprint INTEGER NOT NULL,"
                  " min_count INTEGER NOT NULL,"
                  " contexts INTEGER NOT NULL,"
                  " entries INTEGER NOT NULL,"
                  " bytes INTEGER NOT NULL);",
                  "cannot create the table of next-token tables", err);
    if (!rc)
        rc = exec(c, schema_v7_tokenized, "cannot create the table of token datasets", err);
    return rc;
}

static int newer_schema(ig_catalog *c, int64_t v, ig_error *err)
{
    return ig_error_set(err, IG_ECORRUPT,
                        "%s: schema version %lld is newer than this program (%d)",
                        c->dbpath, (long long)v, IG_CATALOG_SCHEMA_VERSION);
}

/* Schema 2 stores index paths relative to the home. A catalog of schema 1 holds absolute
 * ones — possibly of the home's former location, if it was moved — and every index
 * directory lived in home/indexes, so each becomes "indexes/" and its last component. */
static int relative_index_paths(ig_catalog *c, ig_error *err)
{
    sqlite3_stmt *st, *up;
    int rc = prep(c, "SELECT id, index_path FROM datasets WHERE index_path LIKE '/%'", &st, err);
    if (rc)
        return rc;
    if ((rc = prep(c, "UPDATE datasets SET index_path = ? WHERE id = ?", &up, err))) {
        sqlite3_finalize(st);
        return rc;
    }
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 1);
        char *rel = p ? igi_aprintf("indexes/%s", base_name(p)) : NULL;
        if (!rel) {
            rc = oom(err);
            break;
        }
        sqlite3_bind_text(up, 1, rel, -1, free);
        sqlite3_bind_int64(up, 2, sqlite3_column_int64(st, 0));
        int u = sqlite3_step(up);
        if (u != SQLITE_DONE)
            rc = db_fail(c, u, "cannot migrate an index path", err);
        sqlite3_reset(up);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(c, s, "cannot read index paths", err);
    sqlite3_finalize(up);
    sqlite3_finalize(st);
    return rc;
}

static int migrate(ig_catalog *c, ig_error *err)
{
    int64_t v;
    int rc = pragma_int(c, "PRAGMA user_version", &v, err);
    if (rc)
        return rc;
    /* The common case takes no write lock, so opening never waits behind a writer. */
    if (v == IG_CATALOG_SCHEMA_VERSION)
        return 0;
    if (v > IG_CATALOG_SCHEMA_VERSION)
        return newer_schema(c, v, err);
    if ((rc = tx_begin_write(c, err)))
        return rc;
    /* Re-read under the lock: another process may have migrated meanwhile. */
    rc = pragma_int(c, "PRAGMA user_version", &v, err);
    if (!rc && v > IG_CATALOG_SCHEMA_VERSION)
        rc = newer_schema(c, v, err);
    if (!rc && v < 1)
        rc = exec(c, schema_v1, "cannot create the schema", err);
    if (!rc && v >= 1 && v < 2)
        rc = relative_index_paths(c, err);
    if (!rc && v < 3)
        rc = exec(c, schema_v3, "cannot create the decontamination table", err);
    if (!rc && v < 4)
        rc = exec(c, schema_v4, "cannot create the composition table", err);
    if (!rc && v < 5)
        rc = schema_v5(c, err);
    if (!rc && v < 6)
        rc = exec(c, schema_v6, "cannot create the table of attached indexes", err);
    if (!rc && v < 7)
        rc = schema_v7(c, err);
    if (!rc && v < 2) /* new, or older than the id: mark it ours */
        rc = pragma_set(c, "application_id", IG_CATALOG_APP_ID, "cannot mark the catalog", err);
    if (!rc && v < IG_CATALOG_SCHEMA_VERSION)
        rc = pragma_set(c, "user_version", IG_CATALOG_SCHEMA_VERSION, "cannot set the schema version", err);
    return tx_end_write(c, rc, err);
}

/* ---------------------------------------------------------------- open / close */

static void reap_wait(ig_catalog *c);

static void catalog_free(ig_catalog *c)
{
    if (!c)
        return;
    reap_wait(c);
    ig_build_cache_free(c->build_cache);
    if (c->db)
        sqlite3_close(c->db);
    IGI_FREE(c->home, c->indexes, c->dbpath, c->readonly, c);
}

/* journal_mode is the first statement that reads the file, so it is where a file that
 * is not a database shows up. synchronous=FULL: the build's commit must survive a power
 * cut, since the previous index is deleted right after it. */
/* A file is ours when it carries our application id, or is empty (new), or is a catalog of
 * schema 1 (before the id) with our tables. Checked before anything writes to the file. */
static int check_identity(ig_catalog *c, ig_error *err)
{
    int64_t app = 0, v = 0, tables = 0, ours = 0;
    /* one snapshot: another process may be creating the catalog meanwhile */
    int rc = tx_begin_read(c, err);
    if (!rc)
        rc = pragma_int(c, "PRAGMA application_id", &app, err);
    if (!rc)
        rc = pragma_int(c, "PRAGMA user_version", &v, err);
    if (!rc)
        rc = pragma_int(c, "SELECT count(*) FROM sqlite_master", &tables, err);
    if (!rc)
        rc = pragma_int(c, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                           " ('datasets', 'sources', 'settings')", &ours, err);
    tx_end_read(c);
    if (rc)
        return rc;
    if (app == IG_CATALOG_APP_ID || (app == 0 && tables == 0 && v == 0) || (app == 0 && v == 1 && ours == 3))
        return 0;
    return ig_error_set(err, IG_ECORRUPT, "%s: not an infinigram catalog (an SQLite database of another program; "
                        "it was left untouched)", c->dbpath);
}

static int setup(ig_catalog *c, ig_error *err)
{
    int rc = check_identity(c, err);
    if (rc)
        return rc;
    if (c->readonly) { /* nothing may be written: the schema must already be one we read */
        int64_t v;
        if ((rc = pragma_int(c, "PRAGMA user_version", &v, err)))
            return rc;
        if (v > IG_CATALOG_SCHEMA_VERSION)
            return newer_schema(c, v, err);
        if (v < 1)
            return ig_error_set(err, IG_EUSAGE, "%s: the catalog is read-only (%s) and not initialised", c->dbpath,
                                c->readonly);
        c->no_casefold = v < 5;
        return 0;
    }
    rc = exec(c, "PRAGMA journal_mode = WAL", "cannot enable WAL", err);
    if (!rc)
        rc = exec(c, "PRAGMA synchronous = FULL", "cannot set synchronous mode", err);
    if (!rc)
        rc = migrate(c, err);
    return rc;
}

/* Opens c->dbpath and sets it up; read-only when c->readonly is set. A read-only catalog whose
 * write-ahead log is there (a writer still at work, or one that was killed) is opened as SQLite
 * reads a file it may not write (mode=ro), which reads the log: the catalog as it is now. Else,
 * or where that fails (the log's files cannot be read), it is opened immutable: no lock or
 * journal file is made, and the catalog is read as of its last checkpoint, which without a log
 * is all of it. */
static int open_db_as(ig_catalog *c, int immutable, ig_error *err);

static int open_db(ig_catalog *c, ig_error *err)
{
    if (!c->readonly)
        return open_db_as(c, 0, err);
    /* only a log that is there is read: mode=ro would make the log's files where the folder
     * can be written, owned by this reader, and lock the catalog's owner out of writing */
    char *wal = igi_aprintf("%s-wal", c->dbpath), *shm = igi_aprintf("%s-shm", c->dbpath);
    int logged = wal && shm && access(wal, F_OK) == 0 && access(shm, F_OK) == 0;
    free(wal);
    free(shm);
    if (!logged)
        return open_db_as(c, 1, err);
    ig_error first;
    int rc = open_db_as(c, 0, &first);
    if (!rc)
        return 0;
    if (c->db)
        sqlite3_close(c->db);
    c->db = NULL;
    return open_db_as(c, 1, err);
}

/* "file:" URI of a path, every byte but letters, digits, "-._~/" percent-encoded (a home
 * may hold "?", "#" or "%"), then `query`; malloc'd, or NULL. */
static char *file_uri(const char *path, const char *query)
{
    size_t n = strlen(path), q = strlen(query);
    char *u = malloc(5 + 3 * n + q + 1), *o = u;
    if (!u)
        return NULL;
    memcpy(o, "file:", 5);
    o += 5;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("-._~/", *p)) {
            *o++ = (char)*p;
        } else {
            snprintf(o, 4, "%%%02X", *p);
            o += 3;
        }
    }
    memcpy(o, query, q + 1);
    return u;
}

static int open_db_as(ig_catalog *c, int immutable, ig_error *err)
{
    int s;
    if (c->readonly) {
        char *uri = file_uri(c->dbpath, immutable ? "?immutable=1" : "?mode=ro");
        if (!uri)
            return oom(err);
        s = sqlite3_open_v2(uri, &c->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        free(uri);
    } else {
        s = sqlite3_open_v2(c->dbpath, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    }
    if (s != SQLITE_OK) {
        if (!c->db)
            return ig_error_set(err, IG_ENOMEM, "%s: cannot open: out of memory", c->dbpath);
        return db_fail(c, s, "cannot open", err);
    }
    sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
    int rc = exec(c, "PRAGMA foreign_keys = ON", "cannot enable foreign keys", err);
    /* Switching a new database to WAL reports SQLITE_BUSY at once, without the busy
     * handler, when another process is doing the same; so the setup is retried here
     * for as long as the busy timeout would have waited. */
    double deadline = igi_now_mono() + BUSY_TIMEOUT_MS / 1000.0;
    useconds_t pause = 1000;
    while (!rc) {
        rc = setup(c, err);
        if (rc != IG_EBUSY || igi_now_mono() >= deadline)
            break;
        usleep(pause);
        if (pause < 50000)
            pause *= 2;
        rc = 0;
    }
    return rc;
}

/* Why the home cannot be written, or NULL when it can (as far as access(2) tells: it
 * sees read-only mounts even for root). */
static char *unwritable(const ig_catalog *c)
{
    const char *paths[] = {c->home, c->indexes, c->dbpath};
    for (size_t i = 0; i < 3; i++)
        if (access(paths[i], W_OK) != 0 && errno != ENOENT)
            return igi_aprintf("%s: %s", paths[i], strerror(errno));
    return NULL;
}

static int build_dir_name(const char *entry);

/* How many complete indexes (a NAME-<hex> directory with its manifest) a home's index folder
 * holds. */
static size_t complete_indexes(const char *indexes)
{
    DIR *d = opendir(indexes);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *m = build_dir_name(e->d_name) ? igi_aprintf("%s/%s/manifest.json", indexes, e->d_name) : NULL;
        n += m && access(m, F_OK) == 0;
        free(m);
    }
    if (d)
        closedir(d);
    return n;
}

int ig_catalog_open(ig_catalog **out, const char *home, ig_error *err)
{
    *out = NULL;
    if (!home || !*home)
        return ig_error_set(err, IG_EUSAGE, "catalog home directory not given");
    ig_catalog *c = calloc(1, sizeof *c);
    if (!c)
        return oom(err);
    c->home = igi_abs_path(home);
    c->indexes = c->home ? igi_path_join(c->home, "indexes") : NULL;
    c->dbpath = c->home ? igi_path_join(c->home, "catalog.db") : NULL;
    if (!c->indexes || !c->dbpath) {
        catalog_free(c);
        return oom(err);
    }
    struct stat st;
    int exists = stat(c->dbpath, &st) == 0;
    int rc = 0;
    size_t kept = 0;
    /* SQLite's open would wait on a FIFO for a writer, for ever (the database or a file it
     * keeps beside it); a device or a directory is no catalog either */
    for (size_t i = 0; igi_sqlite_beside[i]; i++) {
        char *f = igi_aprintf("%s%s", c->dbpath, igi_sqlite_beside[i]);
        struct stat fs;
        if (!f) {
            catalog_free(c);
            return oom(err);
        }
        if (stat(f, &fs) == 0 && !S_ISREG(fs.st_mode)) {
            rc = ig_error_set(err, IG_ECORRUPT, "%s: not a regular file (a %s): a catalog is an SQLite database file",
                              f, S_ISDIR(fs.st_mode) ? "directory" : S_ISFIFO(fs.st_mode) ? "FIFO"
                                                       : S_ISSOCK(fs.st_mode)              ? "socket"
                                                                                           : "device");
            free(f);
            catalog_free(c);
            return rc;
        }
        free(f);
    }
    /* SQLite takes an empty file for a new database: a catalog emptied by accident (a full
     * disk, a truncation, `: >`) would silently list nothing while its indexes are on disk */
    if (exists && S_ISREG(st.st_mode) && st.st_size == 0 && (kept = complete_indexes(c->indexes))) {
        rc = ig_error_set(err, IG_ECORRUPT, "%s is empty (0 bytes) while %s holds %zu built index%s: restore the "
                          "catalog from a copy, or remove the empty file to start a new catalog (the indexes stay on disk)",
                          c->dbpath, c->indexes, kept, kept == 1 ? "" : "es");
        catalog_free(c);
        return rc;
    }
    if (exists && (c->readonly = unwritable(c))) {
        rc = open_db(c, err);
    } else {
        if (!(rc = igi_mkdir_p(c->home, err)))
            rc = open_db(c, err);
        if (!rc) /* only once the file is known to be ours */
            rc = igi_mkdir_p(c->indexes, err);
        /* A catalog that exists but cannot be written now (a full disk, a file system
         * that turned read-only) still answers queries. */
        if (rc && rc != IG_ECORRUPT && exists) {
            char why[IG_ERRMSG_MAX];
            snprintf(why, sizeof why, "%s", err ? err->msg : "cannot write");
            if (c->db)
                sqlite3_close(c->db);
            c->db = NULL;
            if (!(c->readonly = igi_strdup(why)))
                rc = oom(err);
            else
                rc = open_db(c, err);
        }
    }
    if (rc) {
        catalog_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

const char *ig_catalog_readonly(const ig_catalog *c)
{
    return c ? c->readonly : NULL;
}

void ig_catalog_close(ig_catalog **c)
{
    if (c && *c) {
        catalog_free(*c);
        *c = NULL;
    }
}

const char *ig_catalog_home(const ig_catalog *c)
{
    return c ? c->home : NULL;
}

/* ---------------------------------------------------------------- small pieces */

const char *ig_dataset_source_kind_name(int kind)
{
    switch (kind) {
    case IG_DSRC_FILE: return "file";
    case IG_DSRC_DIR: return "dir";
    case IG_DSRC_LINES: return "lines";
    case IG_DSRC_JSONL: return "jsonl";
    case IG_DSRC_INLINE: return "inline";
    default: return "unknown";
    }
}

static int source_kind_parse(const char *s)
{
    for (int k = IG_DSRC_FILE; k <= IG_DSRC_INLINE; k++)
        if (!strcmp(s, ig_dataset_source_kind_name(k)))
            return k;
    return -1;
}

static const char *format_name(ig_format f)
{
    switch (f) {
    case IG_FORMAT_TEXT: return "text";
    case IG_FORMAT_LINES: return "lines";
    case IG_FORMAT_JSONL: return "jsonl";
    default: return NULL;
    }
}

int ig_dataset_name_check(const char *name, ig_error *err)
{
    if (!name || !*name)
        return ig_error_set(err, IG_EUSAGE, "dataset name is empty");
    size_t n = strlen(name);
    int ok = n <= 64;
    for (size_t i = 0; ok && i < n; i++) {
        char ch = name[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9');
        ok = alnum || (i > 0 && (ch == '_' || ch == '.' || ch == '-'));
    }
    if (!ok)
        return ig_error_set(err, IG_EUSAGE,
                            "invalid dataset name \"%.80s%s\": use 1-64 letters, digits, "
                            "'_', '.' or '-', starting with a letter or digit",
                            name, n > 80 ? "..." : "");
    return 0;
}

void ig_dataset_free(ig_dataset *d)
{
    if (!d)
        return;
    IGI_FREE(d->name, d->status, d->index_path, d->field_buf, d->range_text, d->build_params, d->decontam,
             d->decontam_path, d->decontam_field, d->decontam_report);
    for (size_t i = 0; i < d->nsources; i++) {
        free(d->sources[i].path);
        free(d->sources[i].text);
    }
    free(d->sources);
    for (size_t i = 0; i < d->nmembers; i++)
        free(d->members[i]);
    for (size_t i = 0; i < d->nminus; i++)
        free(d->minus[i]);
    IGI_FREE(d->members, d->minus, d->index_key, d->attach_dir, d->next_table, d->attach_format, d->vocab,
             d->tokens_field, d->tokenizer, d->tokenizer_hash);
    memset(d, 0, sizeof *d);
}

void ig_dataset_list_free(ig_dataset *list, size_t n)
{
    if (!list)
        return;
    for (size_t i = 0; i < n; i++)
        ig_dataset_free(&list[i]);
    free(list);
}

/* Text for a range given only as parsed options, so it can be stored and re-parsed. */
static char *range_to_text(const ig_byte_range *r)
{
    char a[48] = "", b[48] = "";
    const ig_range_end *ends[2] = {&r->start, &r->end};
    char *bufs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (ends[i]->kind == 1)
            snprintf(bufs[i], sizeof a, "%.0f", ends[i]->value);
        else if (ends[i]->kind == 2)
            snprintf(bufs[i], sizeof a, "%.17g%%", ends[i]->value);
    }
    return igi_aprintf("%s:%s", a, b);
}

/* Is `path` a directory directly inside home/indexes? Guards every recursive delete
 * against a catalog row that points elsewhere. */
static int in_indexes(const ig_catalog *c, const char *path)
{
    size_t n = strlen(c->indexes);
    return path && !strncmp(path, c->indexes, n) && path[n] == '/' && path[n + 1] &&
           !strchr(path + n + 1, '/');
}

/* Index paths are stored relative to the home ("indexes/NAME"), so that a home can be
 * moved, copied, backed up and restored; callers see them absolute. */
static char *stored_path(const ig_catalog *c, const char *abs)
{
    if (in_indexes(c, abs))
        return igi_aprintf("indexes/%s", abs + strlen(c->indexes) + 1);
    return igi_strdup(abs);
}

/* The absolute form of a stored path (relative paths are under the home). Replaces *p;
 * -1 when out of memory. */
static int resolve_path(const ig_catalog *c, char **p)
{
    if (!*p || (*p)[0] == '/')
        return 0;
    char *abs = igi_path_join(c->home, *p);
    free(*p);
    *p = abs;
    return abs ? 0 : -1;
}

/* ---------------------------------------------------------------- lock files */

/*
 * Takes an exclusive flock on `path` (created if needed). Returns 0 with *fd set, 1 if
 * nonblock and someone else holds it, or an error. The holder unlinks the file before
 * closing, so after locking we check that the path still names our inode; if not, the
 * lock we got is on a dead file and we start over.
 */
static int lock_take(const char *path, int nonblock, int *fd_out, ig_error *err)
{
    *fd_out = -1;
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return igi_error_errno(err, errno, path, "cannot open lock file");
        while (flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0)) != 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            close(fd);
            if (e == EWOULDBLOCK)
                return 1;
            return igi_error_errno(err, e, path, "cannot lock");
        }
        struct stat a, b;
        if (fstat(fd, &a) != 0) {
            int e = errno;
            close(fd);
            return igi_error_errno(err, e, path, "cannot stat lock file");
        }
        int e = stat(path, &b) == 0 ? 0 : errno;
        if (!e && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            /* the holder's pid, for cleanup to tell a dead build from a running one */
            char pid[24];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) == 0) /* only a hint: without it a lock is treated as a live one's */
                (void)!pwrite(fd, pid, (size_t)n, 0);
            *fd_out = fd;
            return 0;
        }
        close(fd);
        if (e && e != ENOENT)
            return igi_error_errno(err, e, path, "cannot stat lock file");
    }
}

static void lock_release(const char *path, int fd)
{
    if (fd < 0)
        return;
    unlink(path);
    close(fd);
}

/* Removes an index directory no dataset names any more, under its lock (so that cleanup in
 * another process never races it). A failure only leaves garbage for cleanup. Takes `dir`. */
static void *reap_index(void *dir)
{
    char *lock = igi_aprintf("%s.lock", (char *)dir);
    int fd = -1;
    ig_error scratch;
    if (lock && lock_take(lock, 0, &fd, &scratch) == 0) {
        igi_remove_tree(dir, &scratch);
        lock_release(lock, fd);
    }
    free(lock);
    free(dir);
    return NULL;
}

static void reap_wait(ig_catalog *c)
{
    if (c->reaping)
        pthread_join(c->reaper, NULL);
    c->reaping = 0;
}

/* ---------------------------------------------------------------- add */

/* The kind a file source is recorded as: how the dataset's format reads it. */
static int file_source_kind(int fmt)
{
    return fmt == IG_FORMAT_LINES ? IG_DSRC_LINES : fmt == IG_FORMAT_JSONL ? IG_DSRC_JSONL : IG_DSRC_FILE;
}

typedef struct pending_source {
    int kind;
    char *path;
    const char *text;
    size_t text_len;
    uint64_t size;
    int64_t mtime_ns;
} pending_source;

static int check_source(const ig_source *s, ig_format fmt, pending_source *p, ig_error *err)
{
    if (s->kind == IG_SOURCE_INLINE) {
        if (!s->text && s->text_len)
            return ig_error_set(err, IG_EUSAGE, "inline source without text");
        p->kind = IG_DSRC_INLINE;
        p->text = s->text ? s->text : "";
        p->text_len = s->text_len;
        p->size = s->text_len;
        return 0;
    }
    if (s->kind != IG_SOURCE_FILE)
        return ig_error_set(err, IG_EUSAGE, "unknown source kind %d", (int)s->kind);
    if (!s->path || !*s->path)
        return ig_error_set(err, IG_EUSAGE, "source path is empty");
    struct stat st;
    if (stat(s->path, &st) != 0)
        return igi_error_errno(err, errno, s->path, "cannot read source");
    if (S_ISDIR(st.st_mode)) {
        if (access(s->path, R_OK | X_OK) != 0)
            return igi_error_errno(err, errno, s->path, "cannot read source");
        p->kind = IG_DSRC_DIR;
    } else if (S_ISREG(st.st_mode)) {
        if (access(s->path, R_OK) != 0)
            return igi_error_errno(err, errno, s->path, "cannot read source");
        p->kind = file_source_kind(fmt);
    } else {
        return ig_error_set(err, IG_EUSAGE, "%s: not a regular file or directory", s->path);
    }
    ig_fingerprint fp;
    int rc = igi_source_fingerprint(s->path, 0, &fp, err);
    if (rc)
        return rc;
    p->size = fp.size;
    p->mtime_ns = fp.mtime_ns;
    p->path = igi_abs_path(s->path);
    return p->path ? 0 : oom(err);
}

static int dataset_exists(ig_catalog *c, const char *name, int *exists, ig_error *err)
{
    return lookup(c, "SELECT 1 FROM datasets WHERE name = ?", name, exists, NULL, NULL, "cannot look up a dataset", err);
}

/* ---------------------------------------------------------------- decontamination */

/* Records a dataset's decontamination options; the eval set must be readable now. */
static int insert_decontam(ig_catalog *c, sqlite3_int64 id, const ig_decontam_options *o, ig_error *err)
{
    if (!o->eval_path || !*o->eval_path)
        return ig_error_set(err, IG_EUSAGE, "the eval set path is empty");
    struct stat sb;
    if (stat(o->eval_path, &sb) != 0 || access(o->eval_path, R_OK) != 0)
        return igi_error_errno(err, errno, o->eval_path, "cannot read the eval set");
    if (!S_ISREG(sb.st_mode))
        return ig_error_set(err, IG_EUSAGE, "%s: the eval set is not a regular file", o->eval_path);
    if (o->n < 1 || !(o->threshold >= 0 && o->threshold <= 1))
        return ig_error_set(err, IG_EUSAGE, "decontamination needs n >= 1 and a threshold within 0 to 1");
    char *abs = igi_abs_path(o->eval_path);
    if (!abs)
        return oom(err);
    sqlite3_stmt *st;
    int rc = prep(c, "INSERT INTO decontam(dataset_id, eval_path, field, n, bytes, threshold, lowercase, flag_only)"
                     " VALUES(?, ?, ?, ?, ?, ?, ?, ?)", &st, err);
    if (rc) {
        free(abs);
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, abs, -1, free);
    if (o->field)
        sqlite3_bind_text(st, 3, o->field, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)o->n);
    sqlite3_bind_int(st, 5, o->bytes ? 1 : 0);
    sqlite3_bind_double(st, 6, o->threshold);
    sqlite3_bind_int(st, 7, o->lowercase ? 1 : 0);
    sqlite3_bind_int(st, 8, o->flag_only ? 1 : 0);
    return run(c, st, "cannot record the decontamination", err);
}

/* Reads a dataset's decontamination, if any, into d (ingest.decontam points to it). */
static int read_decontam(ig_catalog *c, ig_dataset *d, sqlite3_stmt *st, ig_error *err)
{
    (void)c;
    int rc = 0;
    if (!(d->decontam = calloc(1, sizeof *d->decontam)) || col_str(st, 0, &d->decontam_path) ||
        col_str(st, 1, &d->decontam_field) || col_str(st, 7, &d->decontam_report))
        rc = oom(err);
    else {
        ig_decontam_options_default(d->decontam);
        d->decontam->eval_path = d->decontam_path;
        d->decontam->field = d->decontam_field;
        d->decontam->n = (uint64_t)sqlite3_column_int64(st, 2);
        d->decontam->bytes = sqlite3_column_int(st, 3);
        d->decontam->threshold = sqlite3_column_double(st, 4);
        d->decontam->lowercase = sqlite3_column_int(st, 5);
        d->decontam->flag_only = sqlite3_column_int(st, 6);
        d->ingest.decontam = d->decontam;
    }
    return rc;
}

static int load_decontam(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    /* a read-only catalog of schema 2 has no such table: no dataset of it is decontaminated */
    return record_read(c, d, "decontam", "SELECT eval_path, field, n, bytes, threshold, lowercase, flag_only, report"
                                         " FROM decontam WHERE dataset_id = ?", &d->id, 1,
                       "cannot read a dataset's decontamination", read_decontam, err);
}

/* The report of a decontaminated build as the JSON text the catalog keeps. */
static char *decontam_report_json(const ig_decontam_report *r)
{
    cJSON *j = cJSON_CreateObject();
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->eval_hash);
    cJSON_AddStringToObject(j, "eval_hash", hex);
    cJSON_AddNumberToObject(j, "eval_items", (double)r->eval_items);
    cJSON_AddNumberToObject(j, "eval_ngrams", (double)r->eval_ngrams);
    cJSON_AddNumberToObject(j, "documents", (double)r->documents);
    cJSON_AddNumberToObject(j, "caught", (double)r->caught);
    cJSON_AddBoolToObject(j, "flag_only", r->flag_only);
    cJSON *a = cJSON_AddArrayToObject(j, "sources");
    for (size_t i = 0; a && i < r->nsources; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", r->sources[i].name);
        cJSON_AddNumberToObject(x, "documents", (double)r->sources[i].documents);
        cJSON_AddNumberToObject(x, "caught", (double)r->sources[i].caught);
        cJSON_AddItemToArray(a, x);
    }
    a = cJSON_AddArrayToObject(j, "docs");
    for (size_t i = 0; a && i < r->ndocs; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "doc", (double)r->docs[i].doc);
        cJSON_AddStringToObject(x, "name", r->docs[i].name);
        cJSON_AddNumberToObject(x, "source_line", (double)r->docs[i].source_line);
        cJSON_AddNumberToObject(x, "ngrams", (double)r->docs[i].ngrams);
        cJSON_AddNumberToObject(x, "matched", (double)r->docs[i].matched);
        cJSON_AddItemToArray(a, x);
    }
    char *out = cJSON_PrintUnformatted(j); /* NULL when any allocation above failed */
    cJSON_Delete(j);
    return out;
}

static int insert_dataset(ig_catalog *c, const char *name, const ig_ingest_options *o,
                          const char *range_text, const pending_source *ps, size_t n,
                          ig_error *err)
{
    int exists = 0;
    int rc = dataset_exists(c, name, &exists, err);
    if (rc)
        return rc;
    if (exists)
        return ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", name);
    sqlite3_stmt *st;
    rc = prep(c, "INSERT INTO datasets(name, status, created, updated, format, field,"
                 " range_text, normalize, lossy, strict, casefold)"
                 " VALUES(?, 'registered', ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st, err);
    if (rc)
        return rc;
    double now = igi_now_real();
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, now);
    sqlite3_bind_double(st, 3, now);
    sqlite3_bind_text(st, 4, format_name(o->format), -1, SQLITE_STATIC);
    if (o->field)
        sqlite3_bind_text(st, 5, o->field, -1, SQLITE_STATIC);
    if (range_text)
        sqlite3_bind_text(st, 6, range_text, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, o->normalize ? 1 : 0);
    sqlite3_bind_int(st, 8, o->lossy ? 1 : 0);
    sqlite3_bind_int(st, 9, o->strict ? 1 : 0);
    sqlite3_bind_int(st, 10, o->casefold ? 1 : 0);
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    if ((s & 0xff) == SQLITE_CONSTRAINT)
        return ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", name);
    if (s != SQLITE_DONE)
        return db_fail(c, s, "cannot add a dataset", err);
    sqlite3_int64 id = sqlite3_last_insert_rowid(c->db);
    for (size_t i = 0; i < n; i++) {
        rc = prep(c, "INSERT INTO sources(dataset_id, ord, kind, path, text, size, mtime_ns)"
                     " VALUES(?, ?, ?, ?, ?, ?, ?)", &st, err);
        if (rc)
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_text(st, 3, ig_dataset_source_kind_name(ps[i].kind), -1, SQLITE_STATIC);
        if (ps[i].path)
            sqlite3_bind_text(st, 4, ps[i].path, -1, SQLITE_STATIC);
        if (ps[i].kind == IG_DSRC_INLINE)
            sqlite3_bind_blob64(st, 5, ps[i].text, ps[i].text_len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)ps[i].size);
        sqlite3_bind_int64(st, 7, ps[i].mtime_ns);
        if ((rc = run(c, st, "cannot add a source", err)))
            return rc;
    }
    return o->decontam ? insert_decontam(c, id, o->decontam, err) : 0;
}

/* ---------------------------------------------------------------- token datasets */

/* What is recorded of a token dataset's options: its files' absolute paths, the tokenizer's checksum. */
typedef struct tokens_row {
    char *vocab, *tokenizer;
    char hash[17];
} tokens_row;

static const char *tokens_format_name(int f)
{
    return f == IG_TOKENS_IDS ? "ids" : f == IG_TOKENS_JSONL_IDS ? "jsonl-ids" : f == IG_TOKENS_TEXT ? "text" : NULL;
}

/* The checksum of a tokenizer file as it is now (hex into hash[17]). */
static int tokenizer_checksum(const char *path, char hash[17], ig_error *err)
{
    char *data;
    size_t n;
    int rc = igi_vocab_read(path, &data, &n, err);
    if (rc)
        return rc;
    snprintf(hash, 17, "%016" PRIx64, igi_hash_bytes(data, n));
    free(data);
    return 0;
}

/* Token options checked at add: the formats' own fields, and a tokenizer or vocabulary that loads. */
static int tokens_check(const ig_token_options *t, tokens_row *r, ig_error *err)
{
    if (!tokens_format_name(t->format))
        return ig_error_set(err, IG_EUSAGE, "unknown token format %d", t->format);
    if (t->format == IG_TOKENS_IDS && t->dtype != 2 && t->dtype != 4)
        return ig_error_set(err, IG_EUSAGE, "--format ids needs --dtype u16 or u32");
    if (t->format == IG_TOKENS_IDS && t->dtype == 2 && t->separator > 65535)
        return ig_error_set(err, IG_EUSAGE, "--separator %" PRIu32 " does not fit a u16 id", t->separator);
    if (t->format == IG_TOKENS_TEXT && !t->tokenizer)
        return ig_error_set(err, IG_EUSAGE, "text becomes tokens through a tokenizer: give --tokenizer");
    if (t->format != IG_TOKENS_TEXT && t->tokenizer)
        return ig_error_set(err, IG_EUSAGE, "--tokenizer tokenises text: ids are given as they are (use --vocab to "
                            "show them)");
    if (t->tokenizer && t->vocab)
        return ig_error_set(err, IG_EUSAGE, "--tokenizer is the vocabulary as well: give one of them");
    const char *file = t->tokenizer ? t->tokenizer : t->vocab;
    if (!file)
        return 0;
    struct ig_vocab *v = NULL;
    int rc = igi_vocab_load(file, &v, err); /* refused now, not at the build */
    igi_vocab_free(v);
    if (!rc) /* a vocabulary may be a SentencePiece model, which tokenises text queries */
        rc = tokenizer_checksum(file, r->hash, err);
    char *abs = rc ? NULL : igi_abs_path(file);
    if (!rc && !abs)
        rc = oom(err);
    if (t->tokenizer)
        r->tokenizer = abs;
    else
        r->vocab = abs;
    return rc;
}

/* The text options a token dataset takes: its ids are the tokenizer's, so the text reaches the
 * tokenizer as it is (NFC first would give ids spm_encode does not give for the same file, and
 * text queries are not normalised), and neither folding nor decontamination, both written for
 * bytes, applies. Recorded as not normalised, which is what the build does. */
static int tokens_ingest_check(ig_ingest_options *o, int ranged, ig_error *err)
{
    if (ranged && o->tokens->format != IG_TOKENS_TEXT)
        return ig_error_set(err, IG_EUSAGE, "--range cuts text files: files of ids are read whole");
    if (o->casefold)
        return ig_error_set(err, IG_EUSAGE, "--casefold folds the bytes of text datasets: a token dataset counts the ids "
                            "its tokenizer gives (fold the text before tokenising it instead)");
    if (o->decontam)
        return ig_error_set(err, IG_EUSAGE, "--decontaminate drops documents of text datasets: token datasets are not "
                            "decontaminated (decontaminate the text before tokenising it)");
    o->normalize = 0;
    return 0;
}

/* The token options of dataset `name`, just inserted in the caller's transaction. */
static int insert_tokens(ig_catalog *c, const char *name, const ig_token_options *t, const tokens_row *r, ig_error *err)
{
    sqlite3_stmt *st;
    int rc = prep(c, "INSERT INTO tokenized(dataset_id, format, dtype, separator, field, vocab, tokenizer,"
                     " tokenizer_hash) SELECT id, ?, ?, ?, ?, ?, ?, ? FROM datasets WHERE name = ?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 8, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 1, tokens_format_name(t->format), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, t->dtype);
    sqlite3_bind_int64(st, 3, t->separator);
    if (t->field)
        sqlite3_bind_text(st, 4, t->field, -1, SQLITE_STATIC);
    if (r->vocab)
        sqlite3_bind_text(st, 5, r->vocab, -1, SQLITE_STATIC);
    if (r->tokenizer)
        sqlite3_bind_text(st, 6, r->tokenizer, -1, SQLITE_STATIC);
    if (r->tokenizer || r->vocab) /* the checksum of whichever was given */
        sqlite3_bind_text(st, 7, r->hash, -1, SQLITE_STATIC);
    return run(c, st, "cannot record a token dataset", err);
}

static int read_tokens(ig_catalog *c, ig_dataset *d, sqlite3_stmt *st, ig_error *err)
{
    (void)c;
    int rc = 0;
    const char *f = (const char *)sqlite3_column_text(st, 0);
    d->tokens.format = !f ? 0 : !strcmp(f, "ids") ? IG_TOKENS_IDS : !strcmp(f, "jsonl-ids") ? IG_TOKENS_JSONL_IDS
                                                                                            : IG_TOKENS_TEXT;
    d->tokens.dtype = (uint32_t)sqlite3_column_int64(st, 1);
    d->tokens.separator = (uint32_t)sqlite3_column_int64(st, 2);
    if (col_str(st, 3, &d->tokens_field) || col_str(st, 4, &d->vocab) || col_str(st, 5, &d->tokenizer) ||
        col_str(st, 6, &d->tokenizer_hash))
        rc = oom(err);
    d->tokens.field = d->tokens_field;
    d->tokens.vocab = d->vocab;
    d->tokens.tokenizer = d->tokenizer;
    d->ingest.tokens = &d->tokens;
    if (d->index_path) /* what the build chose, as for attached indexes */
        d->token_width = igi_tokens_width(d->index_path);
    return rc;
}

static int load_tokens(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    return record_read(c, d, "tokenized", "SELECT format, dtype, separator, field, vocab, tokenizer, tokenizer_hash"
                                          " FROM tokenized WHERE dataset_id = ?", &d->id, 1,
                       "cannot read a token dataset", read_tokens, err);
}

/* Why a token dataset's tokenizer or vocabulary no longer is the one it was added with (*why
 * malloc'd), or NULL. A vocabulary recorded without a checksum (catalogs older than its
 * checksum) is not compared. */
static int tokenizer_change(const ig_dataset *d, char **why, ig_error *err)
{
    *why = NULL;
    const char *file = d->tokenizer ? d->tokenizer : d->vocab, *what = d->tokenizer ? "tokenizer" : "vocabulary";
    if (!file || (!d->tokenizer && !d->tokenizer_hash))
        return 0;
    char hash[17];
    ig_error e;
    if (tokenizer_checksum(file, hash, &e))
        *why = igi_aprintf("its %s %s cannot be read: %s", what, file, e.msg);
    else if (!d->tokenizer_hash || strcmp(hash, d->tokenizer_hash))
        *why = igi_aprintf("its %s %s changed since the dataset was added (checksum %s, was %s): restore it, or "
                           ":dataset remove %s and add it again", what, file, hash,
                           d->tokenizer_hash ? d->tokenizer_hash : "none", d->name);
    else
        return 0;
    return *why ? 0 : oom(err);
}

/* tokenizer_change as an error (IG_EUSAGE naming the dataset), 0 when unchanged. */
static int tokenizer_refuse(const ig_dataset *d, ig_error *err)
{
    char *why;
    int rc = tokenizer_change(d, &why, err);
    if (!rc && why) {
        rc = ig_error_set(err, IG_EUSAGE, "dataset %s: %s", d->name, why);
        free(why);
    }
    return rc;
}

/* Opens a built token dataset of our own: the tokenizer checked, the index read as attach
 * reads the infini-gram layout, with the tokenizer (or vocabulary) for display and text. */
static int open_tokens(const ig_dataset *d, ig_index **out, ig_error *err)
{
    int rc = tokenizer_refuse(d, err);
    if (rc)
        return rc;
    if (!d->index_path)
        return ig_error_set(err, IG_EUSAGE, "dataset \"%s\" is not built: run build %s", d->name, d->name);
    if ((rc = igi_tokens_verify_files(d->index_path, 1, err)))
        return rc;
    ig_attach_options o = {.vocab = d->tokenizer ? d->tokenizer : d->vocab};
    return ig_index_attach(out, d->index_path, &o, err);
}

int ig_catalog_add(ig_catalog *c, const char *name, const ig_source *sources,
                   size_t nsources, const ig_ingest_options *opts,
                   const char *range_text, ig_error *err)
{
    int rc = ig_dataset_name_check(name, err);
    if (rc)
        return rc;
    if (!sources || nsources == 0)
        return ig_error_set(err, IG_EUSAGE, "dataset \"%s\" needs at least one source", name);
    ig_ingest_options o;
    if (opts)
        o = *opts;
    else
        ig_ingest_options_default(&o);
    if (!format_name(o.format))
        return ig_error_set(err, IG_EUSAGE, "unknown source format %d", (int)o.format);

    /* The typed text is what is stored (and shown); it is parsed now so a bad range is
     * refused at add rather than at build. */
    char *rtext = NULL;
    if (range_text) {
        ig_byte_range r;
        if ((rc = ig_byte_range_parse(range_text, &r, err)))
            return rc;
        rtext = igi_strdup(range_text);
    } else if (o.has_range) {
        rtext = range_to_text(&o.range);
    }
    if ((range_text || o.has_range) && !rtext)
        return oom(err);

    pending_source *ps = calloc(nsources, sizeof *ps);
    if (!ps) {
        free(rtext);
        return oom(err);
    }
    for (size_t i = 0; i < nsources && !rc; i++)
        rc = check_source(&sources[i], o.format, &ps[i], err);
    tokens_row tr = {0};
    if (!rc && o.tokens)
        rc = tokens_ingest_check(&o, range_text || o.has_range, err);
    if (!rc && o.tokens)
        rc = tokens_check(o.tokens, &tr, err);
    if (!rc && !(rc = tx_begin_write(c, err))) {
        rc = insert_dataset(c, name, &o, rtext, ps, nsources, err);
        if (!rc && o.tokens)
            rc = insert_tokens(c, name, o.tokens, &tr, err);
        rc = tx_end_write(c, rc, err);
    }
    for (size_t i = 0; i < nsources; i++)
        free(ps[i].path);
    IGI_FREE(ps, rtext, tr.vocab, tr.tokenizer);
    return rc;
}

/* ---------------------------------------------------------------- get / list */

#define DATASET_COLS                                                                   \
    "id, name, status, index_path, bytes, documents, shards, skipped_files, created,"  \
    " updated, built, format, field, range_text, normalize, lossy, strict, build_params"
/* the columns to select: read-only catalogs of older schemas have no casefold column */
#define DATASET_SELECT(c, rest)                                                                           \
    ((c)->no_casefold ? "SELECT " DATASET_COLS ", 0 FROM datasets " rest                                  \
                      : "SELECT " DATASET_COLS ", casefold FROM datasets " rest)

static int read_dataset_row(ig_catalog *c, sqlite3_stmt *st, ig_dataset *d, ig_error *err)
{
    memset(d, 0, sizeof *d);
    d->id = sqlite3_column_int64(st, 0);
    char *format = NULL;
    if (col_str(st, 1, &d->name) || col_str(st, 2, &d->status) ||
        col_str(st, 3, &d->index_path) || resolve_path(c, &d->index_path) || col_str(st, 11, &format) ||
        col_str(st, 12, &d->field_buf) || col_str(st, 13, &d->range_text) ||
        col_str(st, 17, &d->build_params)) {
        free(format);
        return oom(err);
    }
    d->bytes = (uint64_t)sqlite3_column_int64(st, 4);
    d->documents = (uint64_t)sqlite3_column_int64(st, 5);
    d->shards = (uint32_t)sqlite3_column_int64(st, 6);
    d->skipped_files = (uint64_t)sqlite3_column_int64(st, 7);
    d->created = sqlite3_column_double(st, 8);
    d->updated = sqlite3_column_double(st, 9);
    d->built = sqlite3_column_double(st, 10);
    ig_ingest_options_default(&d->ingest);
    d->ingest.format = !format ? IG_FORMAT_TEXT
                     : !strcmp(format, "lines") ? IG_FORMAT_LINES
                     : !strcmp(format, "jsonl") ? IG_FORMAT_JSONL : IG_FORMAT_TEXT;
    free(format);
    d->ingest.field = d->field_buf;
    d->ingest.normalize = sqlite3_column_int(st, 14);
    d->ingest.lossy = sqlite3_column_int(st, 15);
    d->ingest.strict = sqlite3_column_int(st, 16);
    d->ingest.casefold = sqlite3_column_int(st, 18);
    d->ingest.has_range = 0;
    if (d->range_text) {
        ig_error e;
        if (ig_byte_range_parse(d->range_text, &d->ingest.range, &e))
            return ig_error_set(err, IG_ECORRUPT, "%s: dataset \"%s\": stored range: %s",
                                c->dbpath, d->name, e.msg);
        d->ingest.has_range = 1;
    }
    return 0;
}

static int load_sources(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    sqlite3_stmt *st;
    int rc = prep(c, "SELECT kind, path, text, size, mtime_ns, tree_hash FROM sources"
                     " WHERE dataset_id = ? ORDER BY ord", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, d->id);
    size_t cap = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (igi_grow(&d->sources, d->nsources, &cap, sizeof *d->sources, 4)) {
            rc = oom(err);
            break;
        }
        ig_dataset_source *src = &d->sources[d->nsources];
        memset(src, 0, sizeof *src);
        d->nsources++;
        const char *kind = (const char *)sqlite3_column_text(st, 0);
        src->kind = kind ? source_kind_parse(kind) : -1;
        if (src->kind < 0) {
            rc = ig_error_set(err, IG_ECORRUPT, "%s: dataset \"%s\": unknown source kind",
                              c->dbpath, d->name);
            break;
        }
        if (col_str(st, 1, &src->path)) {
            rc = oom(err);
            break;
        }
        if (src->kind == IG_DSRC_INLINE) {
            const void *blob = sqlite3_column_blob(st, 2);
            size_t n = (size_t)sqlite3_column_bytes(st, 2);
            /* NUL-terminated for convenience; text_len is authoritative (NULs allowed). */
            src->text = malloc(n + 1);
            if (!src->text) {
                rc = oom(err);
                break;
            }
            if (n)
                memcpy(src->text, blob, n);
            src->text[n] = '\0';
            src->text_len = n;
        }
        src->size = (uint64_t)sqlite3_column_int64(st, 3);
        src->mtime_ns = sqlite3_column_int64(st, 4);
        src->tree_hash = (uint64_t)sqlite3_column_int64(st, 5);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(c, s, "cannot read sources", err);
    sqlite3_finalize(st);
    return rc;
}

static int load_members(ig_catalog *c, ig_dataset *d, ig_error *err);
static int resolve_composed(ig_catalog *c, ig_dataset *d, ig_error *err);

/* The next-token table of an attached dataset, if any (a read-only catalog older than
 * schema 7 has none). */
static int read_next_table(ig_catalog *c, ig_dataset *d, sqlite3_stmt *st, ig_error *err)
{
    int rc = 0;
    if (col_str(st, 0, &d->next_table) || resolve_path(c, &d->next_table))
        rc = oom(err);
    d->next_info = (ig_next_table_info){(uint64_t)sqlite3_column_int64(st, 1),
                                        (uint64_t)sqlite3_column_int64(st, 2),
                                        (uint64_t)sqlite3_column_int64(st, 3),
                                        (uint64_t)sqlite3_column_int64(st, 4)};
    /* the table is part of what a load opens: a server holding the index reloads it */
    char *key = rc || !d->index_key ? NULL : igi_aprintf("%s:next:%" PRIu64 ":%s", d->index_key,
                                                               d->next_info.bytes, d->next_table);
    if (!rc && d->index_key && !key)
        rc = oom(err);
    else if (key) {
        free(d->index_key);
        d->index_key = key;
    }
    return rc;
}

static int load_next_table(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    const int64_t ids[] = {d->id, (int64_t)d->attach_fingerprint};
    return record_read(c, d, "next_tables", "SELECT path, min_count, contexts, entries, bytes FROM next_tables"
                                            " WHERE dataset_id = ? AND fingerprint = ?", ids, 2,
                       "cannot read a next-token table's record", read_next_table, err);
}

/* The attachment of a dataset, if any (a read-only catalog older than schema 6 has none). */
static int load_attached(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    int has = 0, rc = has_table(c, "attached", &has, err);
    if (rc || !has)
        return rc;
    int64_t vfp = 0; /* a read-only catalog older than schema 7 has no vocabulary fingerprints */
    if ((rc = pragma_int(c, "SELECT count(*) FROM pragma_table_info('attached') WHERE name = 'vocab_fingerprint'",
                         &vfp, err)))
        return rc;
    sqlite3_stmt *st;
    if ((rc = first_row(c, vfp ? "SELECT dir, format, token_width, vocab, fingerprint, vocab_fingerprint FROM attached"
                                 " WHERE dataset_id = ?"
                               : "SELECT dir, format, token_width, vocab, fingerprint, NULL FROM attached"
                                 " WHERE dataset_id = ?",
                        &d->id, 1, NULL, &st, "cannot read an attached index", err)) <= 0)
        return rc;
    rc = 0;
    if (col_str(st, 0, &d->attach_dir) || col_str(st, 1, &d->attach_format) || col_str(st, 3, &d->vocab))
        rc = oom(err);
    d->token_width = (uint32_t)sqlite3_column_int64(st, 2);
    d->attach_fingerprint = (uint64_t)sqlite3_column_int64(st, 4);
    d->vocab_fingerprint = (uint64_t)sqlite3_column_int64(st, 5);
    if (!rc && d->attach_dir && !(d->index_key = igi_aprintf("attached:%016" PRIx64 ":%s", d->attach_fingerprint,
                                                               d->attach_dir)))
        rc = oom(err);
    sqlite3_finalize(st);
    if (!rc && d->attach_dir)
        rc = load_next_table(c, d, err);
    return rc;
}

/* What identifies a vocabulary file as it is now: its size and modification time, as for the
 * files of an attached directory (never 0, which stands for "not taken"; 1 when it cannot be
 * read, which the caller reports first). */
static uint64_t vocab_fingerprint(const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return 1;
    uint64_t v[3] = {(uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec};
    uint64_t h = igi_hash_bytes(v, sizeof v);
    return h > 1 ? h : h + 2;
}

/* Why an attached dataset no longer loads as attached: its files changed (*why malloc'd), or
 * NULL when they are as they were. */
static int attached_change(const ig_dataset *d, char **why, ig_error *err)
{
    *why = NULL;
    uint64_t fp, bytes;
    ig_error e;
    if (ig_attach_fingerprint(d->attach_dir, &fp, &bytes, &e))
        *why = igi_aprintf("%s", e.msg);
    else if (fp != d->attach_fingerprint)
        *why = igi_aprintf("%s changed since it was attached (a file was modified or replaced): :dataset remove %s, "
                           "then attach it again", d->attach_dir, d->name);
    else if (d->vocab && access(d->vocab, R_OK) != 0)
        *why = igi_aprintf("its vocabulary %s cannot be read: %s", d->vocab, strerror(errno));
    else if (d->vocab && d->vocab_fingerprint && vocab_fingerprint(d->vocab) != d->vocab_fingerprint)
        *why = igi_aprintf("its vocabulary %s changed since it was attached (its size or time differs): :dataset "
                           "remove %s, then attach it again", d->vocab, d->name);
    else
        return 0;
    return *why ? 0 : oom(err);
}

int ig_catalog_attach(ig_catalog *c, const char *name, const char *dir, const char *format,
                      const ig_attach_options *o, ig_error *err)
{
    int rc = ig_dataset_name_check(name, err);
    if (rc || (rc = writable(c, err)))
        return rc;
    if (format && strcmp(format, "infini-gram"))
        return ig_error_set(err, IG_EUSAGE, "format \"%s\": the index formats that attach reads are: infini-gram", format);
    char *adir = igi_abs_path(dir), *avocab = o && o->vocab ? igi_abs_path(o->vocab) : NULL;
    char *home = igi_abs_path(c->home);
    if (!adir || !home || (o && o->vocab && !avocab)) {
        IGI_FREE(adir, avocab, home);
        return oom(err);
    }
    size_t hl = strlen(home);
    int inside = !strncmp(adir, home, hl) && (adir[hl] == '/' || adir[hl] == 0);
    free(home);
    if (inside) { /* the home is the catalog's: an index there could be taken for its own */
        rc = ig_error_set(err, IG_EUSAGE, "%s is inside the home directory: attach an index from outside it", adir);
        free(adir);
        free(avocab);
        return rc;
    }
    ig_attach_options ao = {0};
    if (o)
        ao = *o;
    ao.vocab = avocab;
    ig_index *idx = NULL;
    uint64_t fp = 0, fbytes = 0;
    rc = ig_index_attach(&idx, adir, &ao, err);
    if (!rc)
        rc = ig_attach_fingerprint(adir, &fp, &fbytes, err);
    ig_index_info info = {0};
    uint32_t tw = 0;
    if (!rc) {
        ig_index_get_info(idx, &info);
        tw = ig_index_token_width(idx);
    }
    ig_index_close(&idx);
    if (!rc && !(rc = tx_begin_write(c, err))) {
        int exists = 0;
        rc = dataset_exists(c, name, &exists, err);
        if (!rc && exists)
            rc = ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", name);
        sqlite3_stmt *st;
        if (!rc && !(rc = prep(c, "INSERT INTO datasets(name, status, created, updated, built, format, normalize, bytes,"
                                  " documents, shards) VALUES(?, 'built', ?, ?, ?, 'text', 0, ?, ?, ?)", &st, err))) {
            double now = igi_now_real();
            sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 2, now);
            sqlite3_bind_double(st, 3, now);
            sqlite3_bind_double(st, 4, now);
            sqlite3_bind_int64(st, 5, (sqlite3_int64)info.bytes);
            sqlite3_bind_int64(st, 6, (sqlite3_int64)info.documents);
            sqlite3_bind_int64(st, 7, (sqlite3_int64)info.shards);
            rc = run(c, st, "cannot add a dataset", err);
        }
        if (!rc && !(rc = prep(c, "INSERT INTO attached(dataset_id, dir, format, token_width, version, vocab, fingerprint,"
                                  " vocab_fingerprint) VALUES(?, ?, 'infini-gram', ?, ?, ?, ?, ?)", &st, err))) {
            sqlite3_bind_int64(st, 1, sqlite3_last_insert_rowid(c->db));
            sqlite3_bind_text(st, 2, adir, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 3, tw);
            sqlite3_bind_int64(st, 4, ao.version);
            if (avocab)
                sqlite3_bind_text(st, 5, avocab, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 6, (sqlite3_int64)fp);
            if (avocab)
                sqlite3_bind_int64(st, 7, (sqlite3_int64)vocab_fingerprint(avocab));
            rc = run(c, st, "cannot record an attached index", err);
        }
        rc = tx_end_write(c, rc, err);
    }
    free(adir);
    free(avocab);
    return rc;
}

/* Opens an attached dataset's index, once its files are checked to be those attached. */
static int open_attached(const ig_dataset *d, ig_index **out, ig_error *err)
{
    char *why;
    int rc = attached_change(d, &why, err);
    if (rc)
        return rc;
    if (why) {
        rc = ig_error_set(err, IG_EUSAGE, "dataset %s: %s", d->name, why);
        free(why);
        return rc;
    }
    ig_attach_options o = {.token_width = d->token_width, .vocab = d->vocab};
    if ((rc = ig_index_attach(out, d->attach_dir, &o, err)) || !d->next_table)
        return rc;
    ig_error e;
    if ((rc = ig_next_table_use(*out, d->next_table, NULL, &e))) {
        ig_index_close(out);
        rc = ig_error_set(err, rc, "dataset %s: %s (:dataset prepare %s makes it again)", d->name, e.msg, d->name);
    }
    return rc;
}

int ig_catalog_prepare(ig_catalog *c, const char *name, uint64_t min_count, const volatile int *cancel,
                       ig_next_table_info *info, ig_error *err)
{
    ig_next_table_info got = {0};
    if (info)
        *info = got;
    int rc = writable(c, err);
    ig_dataset d;
    if (rc || (rc = ig_catalog_get(c, name, &d, err)))
        return rc;
    ig_index *idx = NULL;
    char *rel = NULL, *path = NULL, *dir = igi_path_join(c->home, "tables");
    uint64_t salt[2] = {(uint64_t)(igi_now_real() * 1e9), (uint64_t)getpid()};
    char *lock = NULL; /* held while the table is unrecorded: cleanup leaves it alone */
    int lock_fd = -1;
    if (!d.attach_dir)
        rc = ig_error_set(err, IG_EUSAGE, "%s is not an attached token dataset: next-token tables are made for "
                          "those (:dataset attach)", name);
    /* a name of its own each time: the table in force stays whole, and in the catalog, until
     * the new one is recorded (then it is removed; a reader holding it keeps reading it) */
    else if (!dir || !(rel = igi_aprintf("tables/next-%" PRId64 "-%016" PRIx64 "-%08" PRIx32 ".tab", d.id,
                                         d.attach_fingerprint, (uint32_t)igi_hash_bytes(salt, sizeof salt))) ||
             !(path = igi_path_join(c->home, rel)))
        rc = oom(err);
    else if (!(lock = igi_aprintf("%s.lock", path)))
        rc = oom(err);
    else if (!(rc = igi_mkdir_p(dir, err)) && !(rc = lock_take(lock, 0, &lock_fd, err))) {
        char *keep = d.next_table; /* the table in force is not read while its successor is made */
        d.next_table = NULL;
        rc = open_attached(&d, &idx, err);
        d.next_table = keep;
    }
    if (!rc)
        rc = ig_next_table_write(idx, path, min_count, cancel, &got, err);
    ig_index_close(&idx);
    if (!rc && !(rc = tx_begin_write(c, err))) {
        sqlite3_stmt *st;
        if (!(rc = prep(c, "INSERT OR REPLACE INTO next_tables(dataset_id, path, fingerprint, min_count, contexts,"
                           " entries, bytes) SELECT id, ?, ?, ?, ?, ?, ? FROM datasets WHERE id = ? AND name = ?",
                        &st, err))) {
            sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, (sqlite3_int64)d.attach_fingerprint);
            sqlite3_bind_int64(st, 3, (sqlite3_int64)got.min_count);
            sqlite3_bind_int64(st, 4, (sqlite3_int64)got.contexts);
            sqlite3_bind_int64(st, 5, (sqlite3_int64)got.entries);
            sqlite3_bind_int64(st, 6, (sqlite3_int64)got.bytes);
            sqlite3_bind_int64(st, 7, d.id);
            sqlite3_bind_text(st, 8, name, -1, SQLITE_STATIC);
            rc = run(c, st, "cannot record a next-token table", err);
        }
        if (!rc && sqlite3_changes(c->db) != 1) /* removed (or renamed) while the table was made */
            rc = ig_error_set(err, IG_ENOTFOUND, "dataset \"%s\" was removed or renamed while its table was made", name);
        rc = tx_end_write(c, rc, err);
    }
    if (rc && path && lock_fd >= 0)
        (void)unlink(path); /* not recorded: the table before (if any) is still in force */
    else if (!rc && d.next_table)
        (void)unlink(d.next_table);
    if (lock_fd >= 0)
        lock_release(lock, lock_fd);
    free(lock);
    if (!rc && info)
        *info = got;
    IGI_FREE(rel, path, dir);
    ig_dataset_free(&d);
    return rc;
}

/* Reads one dataset's row and members (not its sources) inside the caller's transaction. */
static int get_row(ig_catalog *c, const char *name, ig_dataset *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    int rc = first_row(c, DATASET_SELECT(c, "WHERE name = ?"), NULL, 0, name, &st, "cannot read a dataset", err);
    if (rc < 0)
        return rc;
    if (!rc)
        return ig_error_set(err, IG_ENOTFOUND, "unknown dataset \"%s\"", name);
    rc = read_dataset_row(c, st, out, err);
    sqlite3_finalize(st);
    if (!rc)
        rc = load_members(c, out, err);
    if (rc)
        ig_dataset_free(out);
    return rc;
}

/* Reads one dataset inside the caller's transaction. */
static int get_locked(ig_catalog *c, const char *name, ig_dataset *out, ig_error *err)
{
    int rc = get_row(c, name, out, err);
    if (rc)
        return rc;
    rc = load_sources(c, out, err);
    if (!rc)
        rc = load_decontam(c, out, err);
    if (!rc)
        rc = load_attached(c, out, err);
    if (!rc)
        rc = load_tokens(c, out, err);
    if (!rc)
        rc = resolve_composed(c, out, err);
    if (rc)
        ig_dataset_free(out);
    return rc;
}

int ig_catalog_get(ig_catalog *c, const char *name, ig_dataset *out, ig_error *err)
{
    memset(out, 0, sizeof *out);
    if (!name)
        return ig_error_set(err, IG_EUSAGE, "dataset name not given");
    /* One read transaction so the row and its sources are one snapshot. */
    int rc = tx_begin_read(c, err);
    if (rc)
        return rc;
    rc = get_locked(c, name, out, err);
    tx_end_read(c);
    return rc;
}

int ig_catalog_list(ig_catalog *c, ig_dataset **out, size_t *n, ig_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = tx_begin_read(c, err);
    if (rc)
        return rc;
    sqlite3_stmt *st;
    ig_dataset *list = NULL;
    size_t cnt = 0, cap = 0;
    rc = prep(c, DATASET_SELECT(c, "ORDER BY name"), &st, err);
    if (!rc) {
        int s;
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
            if (igi_grow(&list, cnt, &cap, sizeof *list, 8)) {
                rc = oom(err);
                break;
            }
            rc = read_dataset_row(c, st, &list[cnt], err);
            cnt++;
            if (rc)
                break;
        }
        if (!rc && s != SQLITE_DONE)
            rc = db_fail(c, s, "cannot list datasets", err);
        sqlite3_finalize(st);
    }
    for (size_t i = 0; i < cnt && !rc; i++) {
        rc = load_sources(c, &list[i], err);
        if (!rc)
            rc = load_decontam(c, &list[i], err);
        if (!rc)
            rc = load_members(c, &list[i], err);
        if (!rc)
            rc = load_attached(c, &list[i], err);
        if (!rc)
            rc = load_tokens(c, &list[i], err);
        if (!rc)
            rc = resolve_composed(c, &list[i], err);
    }
    tx_end_read(c);
    if (rc) {
        ig_dataset_list_free(list, cnt);
        return rc;
    }
    *out = list;
    *n = cnt;
    return 0;
}

/* ---------------------------------------------------------------- compositions */

/* 1 when the catalog has the members table (a read-only catalog of schema 3 has none). */
static int has_members_table(ig_catalog *c, int *has, ig_error *err)
{
    return has_table(c, "members", has, err);
}

/* Appends a copy of s to the list *v of *n names. */
static int push_name(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    if (!(nv[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

/* Reads a composed dataset's members and subtracted sets, in order, into d. */
static int load_members(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    int has = 0, rc = has_members_table(c, &has, err);
    if (rc || !has || d->nmembers || d->nminus)
        return rc;
    sqlite3_stmt *st;
    if ((rc = prep(c, "SELECT x.name, m.minus FROM members m JOIN datasets x ON x.id = m.member_id"
                      " WHERE m.dataset_id = ? ORDER BY m.ord", &st, err)))
        return rc;
    sqlite3_bind_int64(st, 1, d->id);
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *nm = (const char *)sqlite3_column_text(st, 0);
        int minus = sqlite3_column_int(st, 1);
        if (nm && push_name(minus ? &d->minus : &d->members, minus ? &d->nminus : &d->nmembers, nm))
            rc = oom(err);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(c, s, "cannot read a composition's members", err);
    sqlite3_finalize(st);
    return rc;
}

/* A dataset with an index of its own that a composition is made of, once flattened. */
typedef struct leaf {
    char *name, *index_path;
    int neg, stale;
    int has_sum;           ///< the build recorded its index's checksum (builds since it did)
    uint64_t sum;          ///< ig_index_checksum of the index the build made
    uint64_t bytes, documents;
    uint32_t shards;
    double built;
} leaf;

typedef struct leaves {
    leaf *v;
    size_t n;
} leaves;

static void leaves_free(leaves *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].index_path);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* The index checksum a build recorded in its parameters ("index_checksum"), if any. */
static int recorded_sum(const char *params, uint64_t *sum)
{
    cJSON *j = params ? cJSON_Parse(params) : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "index_checksum");
    char *end = NULL;
    int ok = cJSON_IsString(v) && strlen(v->valuestring) == 16 &&
             (*sum = strtoull(v->valuestring, &end, 16), end && !*end);
    cJSON_Delete(j);
    return ok;
}

/* The index at a leaf's path is the one its build made: a directory swapped with another
 * dataset's, or replaced, answers for the wrong corpus without a checksum failing (each
 * index is sound on its own). */
static int leaf_is_its_own(const leaf *x, ig_error *err)
{
    uint64_t now;
    ig_error e;
    if (!x->has_sum || !x->index_path || ig_index_checksum(x->index_path, &now, &e))
        return 0; /* an index that cannot be read says why when it is opened */
    if (now == x->sum)
        return 0;
    return ig_error_set(err, IG_ECORRUPT, "%s: not the index built for %s (its files are not those its build "
                        "recorded: the directory was swapped, replaced or restored from another copy): rebuild %s",
                        x->index_path, x->name, x->name);
}

#define COMPOSE_MAX_DEPTH 16

/* Flattens dataset `name` into the datasets with indexes it is made of (neg: they are taken
 * away), inside the caller's transaction. stack[0, depth) are the compositions being
 * flattened: meeting one of them again is a cycle. */
static int flatten(ig_catalog *c, const char *name, int neg, const char **stack, int depth, leaves *out,
                   ig_error *err)
{
    for (int i = 0; i < depth; i++)
        if (!strcmp(stack[i], name)) {
            char path[512] = "";
            size_t k = 0;
            for (int j = i; j < depth && k < sizeof path; j++)
                k += (size_t)snprintf(path + k, sizeof path - k, "%s → ", stack[j]);
            return ig_error_set(err, IG_EUSAGE, "composition cycle: %s%s", path, name);
        }
    if (depth >= COMPOSE_MAX_DEPTH)
        return ig_error_set(err, IG_EUSAGE, "compositions nest more than %d deep at %s", COMPOSE_MAX_DEPTH, name);
    ig_dataset d;
    int rc = get_row(c, name, &d, err);
    if (rc)
        return rc;
    if (!d.nmembers) {
        leaf *nv = realloc(out->v, (out->n + 1) * sizeof *nv);
        if (!nv) {
            ig_dataset_free(&d);
            return oom(err);
        }
        out->v = nv;
        leaf *l = &nv[out->n];
        memset(l, 0, sizeof *l);
        if (!(l->name = strdup(d.name)) || (d.index_path && !(l->index_path = strdup(d.index_path)))) {
            free(l->name);
            ig_dataset_free(&d);
            return oom(err);
        }
        out->n++;
        l->neg = neg;
        l->stale = !strcmp(d.status, "stale");
        l->bytes = d.bytes;
        l->documents = d.documents;
        l->shards = d.shards;
        l->built = d.built;
        l->has_sum = recorded_sum(d.build_params, &l->sum);
    } else if (neg && d.nminus) {
        rc = ig_error_set(err, IG_EUSAGE, "%s cannot be taken away: it takes %s away itself", d.name, d.minus[0]);
    } else {
        stack[depth] = d.name;
        for (size_t i = 0; !rc && i < d.nmembers; i++)
            rc = flatten(c, d.members[i], neg, stack, depth + 1, out, err);
        for (size_t i = 0; !rc && i < d.nminus; i++)
            rc = flatten(c, d.minus[i], 1, stack, depth + 1, out, err);
    }
    ig_dataset_free(&d);
    return rc;
}

static int flatten_top(ig_catalog *c, const char *name, leaves *out, ig_error *err)
{
    const char *stack[COMPOSE_MAX_DEPTH];
    memset(out, 0, sizeof *out);
    int rc = flatten(c, name, 0, stack, 0, out, err);
    if (rc)
        leaves_free(out);
    return rc;
}

/* What identifies the index a dataset loads now: a dataset's own index path, or every member's
 * of a composition. NULL in *key when a leaf is not built; -1 when memory ran out. */
static int leaves_key(const leaves *l, int composed, char **key)
{
    *key = NULL;
    ig_buf b = {0};
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].index_path)
            return 0;
    if (!composed)
        return l->n && !(*key = strdup(l->v[0].index_path)) ? -1 : 0;
    for (size_t i = 0; i < l->n; i++) {
        const leaf *x = &l->v[i];
        char *part = igi_aprintf("%s%s=%s\n", x->neg ? "-" : "+", x->name, x->index_path);
        int bad = !part || ig_buf_append(&b, part, strlen(part));
        free(part);
        if (bad) {
            ig_buf_free(&b);
            return -1;
        }
    }
    if (ig_buf_append(&b, "", 1)) {
        ig_buf_free(&b);
        return -1;
    }
    *key = (char *)b.data;
    return 0;
}

/* Whether flattened leaves are a composition rather than the one dataset `name` itself. */
static int leaves_composed(const leaves *l, const char *name)
{
    return !(l->n == 1 && !l->v[0].neg && !strcmp(l->v[0].name, name));
}

static int check_leaves(const char *name, const leaves *l, ig_index_info *first, ig_error *err);

/* A composed dataset's figures come from its members as they are now: its status (built
 * when every member is, stale when one is, broken when they no longer fit together), sizes
 * (the members' less what is taken away), build time (the latest member's) and index key.
 * Every dataset gets its index key. */
static int resolve_composed(ig_catalog *c, ig_dataset *d, ig_error *err)
{
    if (!d->nmembers) {
        if (!d->index_path)
            return 0;
        /* an index directory gone (moved away, deleted by hand) is not "built": load would
         * fail, and the list should say so before it does */
        if (access(d->index_path, F_OK) != 0 && errno == ENOENT && d->status && strcmp(d->status, "broken")) {
            free(d->status);
            d->status = igi_strdup("broken");
        }
        return !d->status || !(d->index_key = strdup(d->index_path)) ? oom(err) : 0;
    }
    leaves l;
    int rc = flatten_top(c, d->name, &l, err);
    if (rc == IG_ENOMEM || rc == IG_EIO)
        return rc;
    if (rc) { /* a catalog edited by hand (a cycle): listed as not loadable; load says why */
        ig_error_clear(err);
        free(d->status);
        return (d->status = strdup("registered")) ? 0 : oom(err);
    }
    int ready = 1, stale = 0;
    int64_t bytes = 0, docs = 0; /* what is taken away may outweigh what is left once members change */
    uint32_t shards = 0;
    double built = 0;
    for (size_t i = 0; i < l.n; i++) {
        leaf *x = &l.v[i];
        ready &= x->index_path != NULL;
        stale |= x->stale;
        bytes += x->neg ? -(int64_t)x->bytes : (int64_t)x->bytes;
        docs += x->neg ? -(int64_t)x->documents : (int64_t)x->documents;
        shards += x->shards;
        if (x->built > built)
            built = x->built;
    }
    if (leaves_key(&l, 1, &d->index_key))
        rc = oom(err);
    /* members rebuilt since may no longer fit together: the loader's own check, from their
     * manifests alone (no index is opened); load and :dataset info say why */
    int broken = 0;
    ig_index_info first;
    if (!rc && ready && (rc = check_leaves(d->name, &l, &first, err)) && rc != IG_ENOMEM) {
        ig_error_clear(err);
        rc = 0;
        broken = 1;
    } else if (!rc && ready && l.n) { /* its text is as its members' (which agree) */
        d->ingest.normalize = first.normalized;
        d->ingest.casefold = first.casefold;
    }
    /* a set taken away that is larger than what it is taken from: a member was rebuilt and its
     * documents are no longer the copies they were (load says which) */
    if (bytes < 0 || docs < 0)
        broken = 1;
    leaves_free(&l);
    free(d->status);
    if (!rc && !(d->status = strdup(!ready ? "registered" : broken ? "broken" : stale ? "stale" : "built")))
        rc = oom(err);
    d->bytes = bytes > 0 ? (uint64_t)bytes : 0;
    d->documents = docs > 0 ? (uint64_t)docs : 0;
    d->shards = shards;
    d->built = ready ? built : 0;
    return rc;
}

/* Opens the flattened leaves: one index, or a composition of them. */
static int open_leaves(const char *name, int composed, const leaves *l, ig_index **out, ig_error *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].index_path)
            return !strcmp(l->v[i].name, name)
                       ? ig_error_set(err, IG_EUSAGE, "dataset %s is not built (run: build %s)", name, name)
                       : ig_error_set(err, IG_EUSAGE, "%s is not built: %s is made of it (run: build %s)",
                                      l->v[i].name, name, l->v[i].name);
    for (size_t i = 0; i < l->n; i++)
        if (leaf_is_its_own(&l->v[i], err))
            return IG_ECORRUPT;
    if (!composed)
        return ig_index_open(out, l->v[0].index_path, err);
    ig_index_member_spec *sp = calloc(l->n, sizeof *sp);
    if (!sp)
        return ig_error_set(err, IG_ENOMEM, "out of memory");
    size_t np = 0, nm = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].neg)
            sp[np++] = (ig_index_member_spec){l->v[i].name, l->v[i].index_path};
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].neg)
            sp[np + nm++] = (ig_index_member_spec){l->v[i].name, l->v[i].index_path};
    int rc = ig_index_open_composed(out, sp, np, nm ? sp + np : NULL, nm, err);
    free(sp);
    return rc;
}

int ig_catalog_open_index(ig_catalog *c, const char *name, ig_index **out, char **key, ig_error *err)
{
    *out = NULL;
    if (key)
        *key = NULL;
    if (!name)
        return ig_error_set(err, IG_EUSAGE, "dataset name not given");
    int rc = tx_begin_read(c, err);
    if (rc)
        return rc;
    ig_dataset d;
    memset(&d, 0, sizeof d);
    rc = get_row(c, name, &d, err);
    if (!rc)
        rc = load_attached(c, &d, err);
    if (!rc)
        rc = load_tokens(c, &d, err);
    leaves l;
    if (!rc && !d.attach_dir && !d.tokens.format)
        rc = flatten_top(c, name, &l, err);
    tx_end_read(c);
    if (!rc && (d.tokens.format || d.attach_dir)) { /* an index of its own, no composition */
        /* a token dataset's key is its index directory (none before it is built); an attached
         * index always has a key */
        const char *k = d.tokens.format ? d.index_path : d.index_key;
        if (key && k && !(*key = igi_strdup(k)))
            rc = oom(err);
        if (!rc)
            rc = d.tokens.format ? open_tokens(&d, out, err) : open_attached(&d, out, err);
        ig_dataset_free(&d);
        if (rc && key) {
            free(*key);
            *key = NULL;
        }
        return rc;
    }
    ig_dataset_free(&d);
    if (rc)
        return rc;
    int composed = leaves_composed(&l, name);
    if (key && leaves_key(&l, composed, key))
        rc = oom(err);
    if (!rc)
        rc = open_leaves(name, composed, &l, out, err);
    leaves_free(&l);
    if (rc && key) {
        free(*key);
        *key = NULL;
    }
    return rc;
}

/* Members must agree on what they index: read from the manifests alone. */
/* Whether the leaves' indexes fit together (the loader's check, from their manifests); *first
 * (may be NULL) receives the first one's facts, which the others share. */
static int check_leaves(const char *name, const leaves *l, ig_index_info *first_out, ig_error *err)
{
    ig_index_info first;
    for (size_t i = 0; i < l->n; i++) {
        ig_index_info info;
        if (!l->v[i].index_path)
            return ig_error_set(err, IG_EUSAGE, "%s is not built (run: build %s), so %s cannot be made of it",
                                l->v[i].name, l->v[i].name, name);
        int rc = ig_index_read_info(l->v[i].index_path, &info, err);
        if (rc)
            return rc;
        if (i == 0) {
            first = info;
            continue;
        }
        if ((rc = igi_index_compatible(&first, l->v[0].name, &info, l->v[i].name, err)))
            return rc;
    }
    if (first_out && l->n)
        *first_out = first;
    return 0;
}

int ig_catalog_compose(ig_catalog *c, const char *name, const char *const *members, size_t n,
                       const char *const *minus, size_t nminus, ig_error *err)
{
    int rc = writable(c, err);
    if (rc || (rc = ig_dataset_name_check(name, err)))
        return rc;
    if (n == 0)
        return ig_error_set(err, IG_EUSAGE, "a composition needs at least one member");
    for (size_t i = 0; i < n + nminus; i++) {
        const char *m = i < n ? members[i] : minus[i - n];
        if (!m || !strcmp(m, name))
            return ig_error_set(err, IG_EUSAGE, "%s cannot be made of itself", name);
    }
    /* what the composition is made of, as the catalog says now */
    leaves l = {0};
    if ((rc = tx_begin_read(c, err)))
        return rc;
    int exists = 0;
    rc = dataset_exists(c, name, &exists, err);
    if (!rc && exists)
        rc = ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", name);
    const char *stack[COMPOSE_MAX_DEPTH];
    for (size_t i = 0; !rc && i < n + nminus; i++) {
        ig_dataset md;
        const char *m = i < n ? members[i] : minus[i - n];
        if (get_row(c, m, &md, err)) { /* unknown: flatten says so */
            ig_error_clear(err);
        } else {
            if (!(rc = load_attached(c, &md, err)) && md.attach_dir)
                rc = ig_error_set(err, IG_EUSAGE, "%s is a token index attached read-only: compositions are of "
                                  "datasets built here", m);
            else if (!rc && !(rc = load_tokens(c, &md, err)) && md.tokens.format)
                rc = ig_error_set(err, IG_EUSAGE, "%s is a token dataset: compositions are of datasets of bytes", m);
            ig_dataset_free(&md);
        }
        if (!rc)
            rc = flatten(c, m, i >= n, stack, 0, &l, err);
    }
    tx_end_read(c);
    if (!rc)
        rc = check_leaves(name, &l, NULL, err);
    if (!rc && l.n) {
        /* a subtracted set is checked now, document by document (the same check runs at
         * every load, as members may be rebuilt) */
        int any_neg = 0;
        for (size_t i = 0; i < l.n; i++)
            any_neg |= l.v[i].neg;
        if (any_neg) {
            ig_index *idx = NULL;
            rc = open_leaves(name, 1, &l, &idx, err);
            ig_index_close(&idx);
        }
    }
    leaves_free(&l);
    if (rc || (rc = tx_begin_write(c, err)))
        return rc;
    sqlite3_stmt *st = NULL;
    double now = (double)time(NULL);
    sqlite3_int64 id = 0;
    if (!(rc = dataset_exists(c, name, &exists, err)) && exists)
        rc = ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", name);
    if (!rc && !(rc = prep(c, "INSERT INTO datasets(name, status, created, updated, format) VALUES(?, 'built', ?, ?, 'text')",
                           &st, err))) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, now);
        sqlite3_bind_double(st, 3, now);
        if (!(rc = run(c, st, "cannot record a composition", err)))
            id = sqlite3_last_insert_rowid(c->db);
    }
    if (!rc && !(rc = prep(c, "INSERT INTO members(dataset_id, ord, member_id, minus)"
                              " SELECT ?, ?, id, ? FROM datasets WHERE name = ?", &st, err))) {
        for (size_t i = 0; !rc && i < n + nminus; i++) {
            sqlite3_bind_int64(st, 1, id);
            sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
            sqlite3_bind_int(st, 3, i >= n);
            sqlite3_bind_text(st, 4, i < n ? members[i] : minus[i - n], -1, SQLITE_STATIC);
            int s = sqlite3_step(st);
            if (s != SQLITE_DONE)
                rc = db_fail(c, s, "cannot record a member", err);
            else if (sqlite3_changes(c->db) != 1) /* removed meanwhile */
                rc = ig_error_set(err, IG_ENOTFOUND, "unknown dataset \"%s\"", i < n ? members[i] : minus[i - n]);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    return tx_end_write(c, rc, err);
}

/* Runs fn on every dataset with an index that composition `name` is made of, stopping at
 * the first failure. */
static int each_leaf(ig_catalog *c, const char *name, int (*fn)(ig_catalog *, const char *, void *, ig_error *),
                     void *arg, ig_error *err)
{
    leaves l;
    int rc = tx_begin_read(c, err);
    if (rc)
        return rc;
    rc = flatten_top(c, name, &l, err);
    tx_end_read(c);
    for (size_t i = 0; !rc && i < l.n; i++)
        rc = fn(c, l.v[i].name, arg, err);
    leaves_free(&l);
    return rc;
}

/* IG_EUSAGE when a composition names dataset `name` (it must not be removed under it). */
static int refuse_if_member(ig_catalog *c, const char *name, ig_error *err)
{
    int has = 0, rc = has_members_table(c, &has, err);
    if (rc || !has)
        return rc;
    sqlite3_stmt *st;
    if ((rc = prep(c, "SELECT DISTINCT d.name FROM members m JOIN datasets d ON d.id = m.dataset_id"
                      " JOIN datasets x ON x.id = m.member_id WHERE x.name = ? ORDER BY d.name", &st, err)))
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    char *first = NULL;
    size_t users = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (users++ == 0 && col_str(st, 0, &first))
            rc = oom(err);
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(c, s, "cannot read compositions", err);
    sqlite3_finalize(st);
    if (!rc && users)
        rc = users == 1 ? ig_error_set(err, IG_EUSAGE, "%s is used by the composition %s: remove %s first", name,
                                       first, first)
                        : ig_error_set(err, IG_EUSAGE, "%s is used by the compositions %s and %zu more: remove them first",
                                       name, first, users - 1);
    free(first);
    return rc;
}

/* ---------------------------------------------------------------- remove / rename */

/* The file of dataset name's next-token table, absolute (*path NULL: none). */
static int next_table_path(ig_catalog *c, const char *name, char **path, ig_error *err)
{
    *path = NULL;
    int has = 0, found = 0, rc = has_table(c, "next_tables", &has, err);
    if (rc || !has || (rc = lookup(c, "SELECT path FROM next_tables JOIN datasets ON datasets.id = dataset_id"
                                      " WHERE name = ?", name, &found, NULL, path,
                                   "cannot read a next-token table's record", err)))
        return rc;
    return resolve_path(c, path) ? oom(err) : 0;
}

int ig_catalog_remove(ig_catalog *c, const char *name, ig_error *err)
{
    if (!name)
        return ig_error_set(err, IG_EUSAGE, "dataset name not given");
    int rc = tx_begin_write(c, err);
    if (rc)
        return rc;
    char *index_path = NULL, *table = NULL;
    sqlite3_stmt *st;
    rc = refuse_if_member(c, name, err);
    if (!rc)
        rc = next_table_path(c, name, &table, err);
    int found = 0;
    if (!rc && !(rc = lookup(c, "SELECT index_path FROM datasets WHERE name = ?", name, &found, NULL, &index_path,
                             "cannot read a dataset", err)))
        rc = !found ? ig_error_set(err, IG_ENOTFOUND, "unknown dataset \"%s\"", name)
             : resolve_path(c, &index_path) ? oom(err) : 0;
    if (!rc && !(rc = prep(c, "DELETE FROM datasets WHERE name = ?", &st, err))) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        rc = run(c, st, "cannot remove a dataset", err);
    }
    if ((rc = tx_end_write(c, rc, err))) {
        free(index_path);
        free(table);
        return rc;
    }
    if (table && unlink(table) && errno != ENOENT)
        rc = igi_error_errno(err, errno, table, "dataset removed, but its next-token table could not be");
    free(table);
    /* Deleted only after the commit: a crash in between leaves an unreferenced
     * directory, which cleanup removes, never a dataset without its index. */
    if (index_path && in_indexes(c, index_path)) {
        char *lock = igi_aprintf("%s.lock", index_path);
        int fd = -1;
        if (!lock)
            rc = oom(err);
        else if (!(rc = lock_take(lock, 0, &fd, err))) {
            /* the manifest first: a folder left half deleted is then an interrupted build's,
             * which the next start reclaims, not a complete index kept as another catalog's */
            char *manifest = igi_path_join(index_path, "manifest.json");
            ig_error why;
            /* an index directory replaced by a link (moved to another disk and linked back, or a
             * link to another dataset's index) loses the link only: what it points to is not ours */
            struct stat st;
            int linked = !lstat(index_path, &st) && !S_ISDIR(st.st_mode);
            if (!manifest)
                rc = oom(err);
            else if ((!linked && unlink(manifest) && errno != ENOENT &&
                      (rc = igi_error_errno(&why, errno, manifest, "cannot delete"))) ||
                     (rc = igi_remove_tree(index_path, &why)))
                rc = ig_error_set(err, rc, "dataset \"%s\" is removed, but its index could not be deleted: %s (delete "
                                           "%s by hand)", name, why.msg, index_path);
            free(manifest);
            lock_release(lock, fd);
        }
        free(lock);
    }
    free(index_path);
    return rc;
}

int ig_catalog_rename(ig_catalog *c, const char *from, const char *to, ig_error *err)
{
    if (!from)
        return ig_error_set(err, IG_EUSAGE, "dataset name not given");
    int rc = ig_dataset_name_check(to, err);
    if (rc)
        return rc;
    if ((rc = tx_begin_write(c, err)))
        return rc;
    int exists = 0;
    rc = dataset_exists(c, from, &exists, err);
    if (!rc && !exists)
        rc = ig_error_set(err, IG_ENOTFOUND, "unknown dataset \"%s\"", from);
    if (!rc && strcmp(from, to)) {
        rc = dataset_exists(c, to, &exists, err);
        if (!rc && exists)
            rc = ig_error_set(err, IG_EEXISTS, "dataset \"%s\" already exists", to);
        sqlite3_stmt *st;
        if (!rc && !(rc = prep(c, "UPDATE datasets SET name = ?, updated = ? WHERE name = ?",
                               &st, err))) {
            sqlite3_bind_text(st, 1, to, -1, SQLITE_STATIC);
            sqlite3_bind_double(st, 2, igi_now_real());
            sqlite3_bind_text(st, 3, from, -1, SQLITE_STATIC);
            rc = run(c, st, "cannot rename a dataset", err);
        }
    }
    return tx_end_write(c, rc, err);
}

/* ---------------------------------------------------------------- check */

/* Compares a recorded source with its current state; *why is set (malloc) if it changed.
 * *walked says whether a directory's tree was compared (deep: an IG_CHECK_* level). */
static int source_change(const ig_dataset_source *s, int deep, char **why, int *walked, ig_error *err)
{
    *why = NULL;
    ig_fingerprint fp;
    ig_error e;
    ig_error_clear(&e);
    uint64_t limit = deep == IG_CHECK_DEEP ? UINT64_MAX : deep == IG_CHECK_BOUNDED ? IG_CHECK_BOUNDED_ENTRIES : 0;
    int rc = igi_source_fingerprint(s->path, limit, &fp, &e);
    *walked = fp.walked;
    if (rc == IG_ENOTFOUND)
        *why = igi_aprintf("%s: missing", s->path);
    else if (rc == IG_EINTERNAL)
        return ig_error_set(err, rc, "%s", e.msg);
    else if (rc)
        /* An unreadable source cannot be rebuilt as it was: report it as the change. */
        *why = igi_aprintf("%s", e.msg);
    else if (s->kind == IG_DSRC_DIR && !fp.is_dir)
        *why = igi_aprintf("%s changed (no longer a directory)", s->path);
    else if (s->kind != IG_DSRC_DIR && fp.is_dir)
        *why = igi_aprintf("%s changed (now a directory)", s->path);
    else if (s->kind != IG_DSRC_DIR || fp.walked) {
        /* Files: size and mtime. Deep directories: total size and the tree hash; their
         * own mtime is not compared because hidden files (not indexed) move it. */
        if (fp.size != s->size)
            *why = igi_aprintf("%s changed (size %llu → %llu)", s->path,
                              (unsigned long long)s->size, (unsigned long long)fp.size);
        else if (s->kind != IG_DSRC_DIR && fp.mtime_ns != s->mtime_ns)
            *why = igi_aprintf("%s changed (modification time)", s->path);
        else if (s->kind == IG_DSRC_DIR && fp.tree_hash != s->tree_hash)
            *why = igi_aprintf("%s changed (files below it changed)", s->path);
        else
            return 0;
    } else if (fp.mtime_ns != s->mtime_ns) {
        *why = igi_aprintf("%s changed (directory modified)", s->path);
    } else {
        return 0;
    }
    return *why ? 0 : oom(err);
}

typedef struct check_arg {
    int deep, *stale;
    char **why;
} check_arg;

static int check_leaf(ig_catalog *c, const char *name, void *arg, ig_error *err)
{
    check_arg *a = arg;
    int st = 0;
    char *w = NULL;
    int rc = ig_catalog_check(c, name, a->deep, &st, a->why && !*a->why ? &w : NULL, err);
    if (!rc && st) {
        *a->stale = 1;
        if (w && a->why && !*a->why && !(*a->why = igi_aprintf("%s: %s", name, w)))
            rc = oom(err);
    }
    free(w);
    return rc;
}

/* A decontaminated dataset whose eval set no longer holds the items its build read (their
 * fingerprint, in the build's report): a rebuild would drop other documents. */
static int decontam_change(const ig_dataset *d, char **why, ig_error *err)
{
    cJSON *rep = d->decontam_report ? cJSON_Parse(d->decontam_report) : NULL;
    const char *hex = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rep, "eval_hash"));
    char *end = NULL;
    unsigned long long was = hex ? strtoull(hex, &end, 16) : 0;
    int known = hex && *hex && end && !*end;
    cJSON_Delete(rep);
    if (!known) /* a build before reports had it, or none: nothing to compare */
        return 0;
    uint64_t now = 0;
    ig_error e;
    int rc = igi_decontam_eval_hash(d->decontam->eval_path, d->decontam->field, d->ingest.normalize, &now, &e);
    if (rc == IG_ENOMEM)
        return ig_error_set(err, rc, "%s", e.msg);
    if (rc) /* gone or unreadable: a rebuild cannot read it as the build did */
        *why = igi_aprintf("the eval set of its decontamination: %s", e.msg);
    else if (now != was)
        *why = igi_aprintf("%s changed (the eval set its decontamination reads)", d->decontam->eval_path);
    return (rc || now != was) && !*why ? oom(err) : 0;
}

int ig_catalog_check(ig_catalog *c, const char *name, int deep, int *stale, char **why,
                     ig_error *err)
{
    *stale = 0;
    if (why)
        *why = NULL;
    ig_dataset d;
    int rc = ig_catalog_get(c, name, &d, err);
    if (rc)
        return rc;
    if (d.nmembers) { /* a composition is stale when a dataset it is made of is */
        ig_dataset_free(&d);
        check_arg a = {deep, stale, why};
        rc = each_leaf(c, name, check_leaf, &a, err);
        if (!rc && deep == IG_CHECK_DEEP && !*stale) {
            /* members rebuilt since composing may no longer fit together (a pointer width, a
             * document taken away that is gone): the whole check opens it as load would */
            ig_index *idx = NULL;
            if ((rc = ig_catalog_open_index(c, name, &idx, NULL, err))) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                ig_error_set(err, rc, "%s no longer loads: %s", name, msg);
            }
            ig_index_close(&idx);
        }
        return rc;
    }
    if (!strcmp(d.status, "registered")) {
        ig_dataset_free(&d);
        return 0;
    }
    char *first = NULL;
    int unwalked = 0;
    if (d.attach_dir)
        rc = attached_change(&d, &first, err);
    else if (d.tokenizer || d.vocab)
        rc = tokenizer_change(&d, &first, err);
    for (size_t i = 0; i < d.nsources && !rc && !first; i++) {
        const ig_dataset_source *s = &d.sources[i];
        if (s->kind == IG_DSRC_INLINE)
            continue;
        char *w = NULL;
        int walked = 0;
        rc = source_change(s, deep, &w, &walked, err);
        unwalked |= s->kind == IG_DSRC_DIR && !walked;
        if (w) {
            first = w;
            break;
        }
    }
    if (!rc && !first && deep == IG_CHECK_DEEP && d.decontam)
        rc = decontam_change(&d, &first, err);
    if (!rc && !first && deep == IG_CHECK_DEEP && d.index_path && !d.attach_dir) {
        /* sources as built are not enough: an index folder gone, emptied or swapped would
         * pass for "up to date" while load fails; the whole check opens it as load would */
        ig_index *idx = NULL;
        if ((rc = ig_catalog_open_index(c, name, &idx, NULL, err))) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            ig_error_set(err, rc, "%s no longer loads: %s (run: build %s)", name, msg, name);
        }
        ig_index_close(&idx);
    }
    if (rc) {
        free(first);
        ig_dataset_free(&d);
        return rc;
    }
    *stale = first != NULL;
    /* A shallow look cannot see edits below a directory, so it never clears a stale mark
     * on a dataset with a directory source it did not walk. */
    const char *want = NULL;
    if (*stale && !strcmp(d.status, "built"))
        want = "stale";
    else if (!*stale && !strcmp(d.status, "stale") && !unwalked)
        want = "built";
    if (want) {
        /* Conditional on the index checked: a build that committed meanwhile wins. */
        sqlite3_stmt *st;
        rc = prep(c, "UPDATE datasets SET status = ? WHERE id = ? AND (index_path IS ? OR index_path IS ?)"
                     " AND status IN ('built','stale')", &st, err);
        if (!rc) {
            sqlite3_bind_text(st, 1, want, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, d.id);
            char *rel = d.index_path ? stored_path(c, d.index_path) : NULL;
            if (d.index_path && !rel) {
                sqlite3_finalize(st);
                rc = oom(err);
            } else {
                if (rel) { /* the path as stored, relative or (written by hand) absolute */
                    sqlite3_bind_text(st, 3, rel, -1, free);
                    sqlite3_bind_text(st, 4, d.index_path, -1, SQLITE_STATIC);
                }
                rc = run(c, st, "cannot update a dataset's status", err);
            }
        }
    }
    ig_dataset_free(&d);
    if (!rc && why)
        *why = first;
    else
        free(first);
    return rc;
}

/* ---------------------------------------------------------------- build */

static int random_hex(char out[17], ig_error *err)
{
    uint8_t b[8];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t r = getrandom(b + got, sizeof b - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    if (got < sizeof b) {
        /* Kernels without getrandom(2). */
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return igi_error_errno(err, errno, "/dev/urandom", "cannot open");
        got = 0;
        while (got < sizeof b) {
            ssize_t r = read(fd, b + got, sizeof b - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                int e = r < 0 ? errno : EIO;
                close(fd);
                return igi_error_errno(err, e, "/dev/urandom", "cannot read");
            }
            got += (size_t)r;
        }
        close(fd);
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static int commit_build(ig_catalog *c, const ig_dataset *d, const char *dir,
                        const ig_build_result *r, const ig_build_options *bo,
                        const ig_fingerprint *fps, char **old, ig_error *err)
{
    *old = NULL;
    /* what load checks the index it opens against (leaf_is_its_own); a token index has its own
     * layout and is not recorded */
    uint64_t sum;
    ig_error ignored;
    char sum_member[48] = "";
    if (!ig_index_checksum(dir, &sum, &ignored))
        snprintf(sum_member, sizeof sum_member, ",\"index_checksum\":\"%016llx\"", (unsigned long long)sum);
    char *params = igi_aprintf("{\"shard_size\":%llu,\"force_wide\":%d,\"normalize\":%d,"
                              "\"format\":\"%s\",\"lcp\":%d%s}",
                              (unsigned long long)bo->shard_size, bo->force_wide ? 1 : 0,
                              d->ingest.normalize ? 1 : 0, format_name(d->ingest.format), bo->lcp ? 1 : 0, sum_member);
    if (!params)
        return oom(err);
    int rc = tx_begin_write(c, err);
    if (rc) {
        free(params);
        return rc;
    }
    sqlite3_stmt *st;
    /* Matching the id as well as the name catches a dataset removed and re-added
     * under the same name while we were building. */
    rc = first_row(c, "SELECT index_path FROM datasets WHERE id = ? AND name = ?", &d->id, 1, d->name, &st,
                   "cannot read a dataset", err);
    if (!rc)
        rc = ig_error_set(err, IG_ENOTFOUND, "dataset \"%s\" was removed or renamed during the build", d->name);
    else if (rc > 0) {
        rc = col_str(st, 0, old) || resolve_path(c, old) ? oom(err) : 0;
        sqlite3_finalize(st);
    }
    if (!rc && !(rc = prep(c, "UPDATE datasets SET index_path = ?, status = 'built',"
                              " bytes = ?, documents = ?, shards = ?, skipped_files = ?,"
                              " built = ?, updated = ?, build_params = ? WHERE id = ?",
                           &st, err))) {
        double now = igi_now_real();
        char *rel = stored_path(c, dir);
        if (!rel) {
            sqlite3_finalize(st);
            free(params);
            tx_rollback(c);
            return oom(err);
        }
        sqlite3_bind_text(st, 1, rel, -1, free);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)r->bytes);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)r->documents);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)r->shards);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)r->nskipped);
        sqlite3_bind_double(st, 6, now);
        sqlite3_bind_double(st, 7, now);
        sqlite3_bind_text(st, 8, params, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 9, d->id);
        rc = run(c, st, "cannot record the build", err);
    }
    if (!rc && r->decontam) {
        char *rep = decontam_report_json(r->decontam);
        if (!rep)
            rc = oom(err);
        else if (!(rc = prep(c, "UPDATE decontam SET report = ? WHERE dataset_id = ?", &st, err))) {
            sqlite3_bind_text(st, 1, rep, -1, free);
            sqlite3_bind_int64(st, 2, d->id);
            rc = run(c, st, "cannot record the decontamination report", err);
        } else {
            free(rep);
        }
    }
    for (size_t i = 0; i < d->nsources && !rc; i++) {
        if (d->sources[i].kind == IG_DSRC_INLINE)
            continue;
        if ((rc = prep(c, "UPDATE sources SET size = ?, mtime_ns = ?, tree_hash = ?, kind = ?"
                          " WHERE dataset_id = ? AND ord = ?", &st, err)))
            break;
        /* a file that became a directory (or the reverse) was built as what it is now */
        int kind = fps[i].is_dir ? IG_DSRC_DIR : file_source_kind(d->ingest.format);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)fps[i].size);
        sqlite3_bind_int64(st, 2, fps[i].mtime_ns);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)fps[i].tree_hash);
        sqlite3_bind_text(st, 4, ig_dataset_source_kind_name(kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, d->id);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)i);
        rc = run(c, st, "cannot record source fingerprints", err);
    }
    if ((rc = tx_end_write(c, rc, err))) {
        free(*old);
        *old = NULL;
    }
    free(params);
    return rc;
}

int ig_catalog_build(ig_catalog *c, const char *name, const ig_build_options *bo,
                     ig_progress_fn progress, void *user,
                     const volatile sig_atomic_t *cancel, ig_build_result *res,
                     ig_error *err)
{
    return ig_catalog_build_agreed(c, name, bo, progress, user, cancel, NULL, NULL, res, err);
}

int ig_catalog_build_agreed(ig_catalog *c, const char *name, const ig_build_options *bo,
                            ig_progress_fn progress, void *user, const volatile sig_atomic_t *cancel,
                            ig_agree_fn agree, void *agree_user, ig_build_result *res, ig_error *err)
{
    int wrc = writable(c, err);
    if (wrc)
        return wrc;
    ig_build_result local;
    ig_build_result *r = res ? res : &local;
    memset(r, 0, sizeof *r);
    ig_dataset d;
    int rc = ig_catalog_get(c, name, &d, err);
    if (rc)
        return rc;
    if (d.attach_dir) {
        rc = ig_error_set(err, IG_EUSAGE, "%s is attached read-only from %s: there is nothing to build (attach it again "
                          "after that index changes)", name, d.attach_dir);
        ig_dataset_free(&d);
        return rc;
    }
    if (d.nmembers) {
        rc = ig_error_set(err, IG_EUSAGE, "%s is made of other datasets and has no index of its own: build its members "
                          "(%s%s) instead", name, d.members[0], d.nmembers + d.nminus > 1 ? ", …" : "");
        ig_dataset_free(&d);
        return rc;
    }
    if ((d.tokenizer || d.vocab) && (rc = tokenizer_refuse(&d, err))) {
        ig_dataset_free(&d);
        return rc;
    }
    ig_build_options bopt;
    if (bo)
        bopt = *bo;
    else
        ig_build_options_default(&bopt);

    char *dir = NULL, *lock = NULL, *old = NULL;
    int lfd = -1;
    ig_fingerprint *fps = calloc(d.nsources ? d.nsources : 1, sizeof *fps);
    ig_source *srcs = calloc(d.nsources ? d.nsources : 1, sizeof *srcs);
    if (!fps || !srcs) {
        rc = oom(err);
        goto fail;
    }
    /* Fingerprints first: a source edited while we read it then looks stale later
     * rather than fresh. */
    for (size_t i = 0; i < d.nsources; i++) {
        const ig_dataset_source *s = &d.sources[i];
        if (s->kind == IG_DSRC_INLINE) {
            srcs[i].kind = IG_SOURCE_INLINE;
            srcs[i].text = s->text;
            srcs[i].text_len = s->text_len;
            continue;
        }
        srcs[i].kind = IG_SOURCE_FILE;
        srcs[i].path = s->path;
        if ((rc = igi_source_fingerprint(s->path, UINT64_MAX, &fps[i], err)))
            goto fail;
    }
    char hex[17];
    if ((rc = random_hex(hex, err)))
        goto fail;
    dir = igi_aprintf("%s/%s-%s", c->indexes, d.name, hex);
    lock = dir ? igi_aprintf("%s.lock", dir) : NULL;
    if (!lock) {
        rc = oom(err);
        goto fail;
    }
    /* The lock comes before the directory exists, so cleanup never sees our directory
     * unlocked. */
    if ((rc = lock_take(lock, 0, &lfd, err))) {
        if (rc > 0)
            rc = ig_error_set(err, IG_EBUSY, "%s: locked by another process", lock);
        goto fail;
    }
    /* a session that builds again reuses the sort's memory (without a cache: fresh memory) */
    if (!bopt.cache) {
        if (!c->build_cache)
            c->build_cache = ig_build_cache_new(0);
        bopt.cache = c->build_cache;
    }
    if ((rc = ig_build_index(dir, srcs, d.nsources, &d.ingest, &bopt, progress, user,
                             cancel, r, err)))
        goto fail;
    /* ig_build_index has made the directory's entry in c->indexes durable too */
    if (cancel && *cancel) {
        rc = ig_error_set(err, IG_ECANCELLED, "build of \"%s\" cancelled", d.name);
        goto fail;
    }
    /* the index is complete and durable: the last word before the switch is the caller's */
    if (agree && (rc = agree(agree_user, dir, r, err)))
        goto fail;
    if ((rc = commit_build(c, &d, dir, r, &bopt, fps, &old, err)))
        goto fail;

    /* Committed: from here on nothing may fail the build. */
    if (progress) {
        ig_progress p = {.phase = IG_PHASE_COMMIT, .done = r->source_bytes,
                         .total = r->source_bytes, .shard = 0, .path = NULL};
        (void)progress(user, &p);
    }
    lock_release(lock, lfd);
    /* The index replaced goes in a thread of its own: unlinking its files (freeing their
     * blocks and cached pages) took 4-9 ms of a 1 MB build, and more the larger the index.
     * The previous removal is waited for here (one at a time), not when a build starts:
     * a build started at once after another waited 40-55 ms for it at 1 MB, its unlinks
     * queueing behind the journal commits of the build's own fsyncs. Closing the catalog
     * waits too. */
    if (old && strcmp(old, dir) && in_indexes(c, old)) {
        reap_wait(c);
        if (igi_thread_start(&c->reaper, reap_index, old) == 0)
            c->reaping = 1;
        else
            reap_index(old);
        old = NULL;
    }
    IGI_FREE(old, dir, lock, fps, srcs);
    ig_dataset_free(&d);
    if (!res)
        ig_build_result_free(&local);
    return 0;

fail:
    if (dir) {
        ig_error scratch;
        igi_remove_tree(dir, &scratch);
    }
    if (lfd >= 0)
        lock_release(lock, lfd);
    ig_build_result_free(r);
    memset(r, 0, sizeof *r);
    IGI_FREE(dir, lock, fps, srcs);
    ig_dataset_free(&d);
    return rc;
}

static int verify_leaf(ig_catalog *c, const char *name, void *arg, ig_error *err)
{
    (void)arg;
    return ig_catalog_verify(c, name, err);
}

int ig_catalog_verify(ig_catalog *c, const char *name, ig_error *err)
{
    ig_dataset d;
    int rc = ig_catalog_get(c, name, &d, err);
    if (rc)
        return rc;
    if (d.nmembers)
        rc = each_leaf(c, name, verify_leaf, NULL, err);
    else if (d.attach_dir) { /* no checksums to compare: its files as attached, and every row */
        ig_index *idx = NULL;
        rc = open_attached(&d, &idx, err);
        if (!rc)
            rc = ig_index_attach_verify(idx, NULL, err);
        ig_index_close(&idx);
    } else if (!strcmp(d.status, "registered") || !d.index_path)
        rc = ig_error_set(err, IG_EUSAGE, "dataset \"%s\" is not built", d.name);
    else if (d.tokens.format) { /* the manifest's checksums, then every row as for attached indexes */
        ig_index *idx = NULL;
        rc = igi_tokens_verify_files(d.index_path, 0, err);
        if (!rc)
            rc = open_tokens(&d, &idx, err);
        if (!rc)
            rc = ig_index_attach_verify(idx, NULL, err);
        ig_index_close(&idx);
    } else {
        leaf x = {.name = d.name, .index_path = d.index_path};
        x.has_sum = recorded_sum(d.build_params, &x.sum);
        if (!(rc = leaf_is_its_own(&x, err)))
            rc = ig_index_verify(d.index_path, err);
    }
    ig_dataset_free(&d);
    return rc;
}

/* ---------------------------------------------------------------- cleanup */

/* Whether any dataset names the directory `entry` of home/indexes, under any spelling of
 * its path (relative, absolute, or absolute under the home's former location): all index
 * directories live in home/indexes, so the last component decides. */
static int index_in_use(ig_catalog *c, const char *entry, int *used, ig_error *err)
{
    sqlite3_stmt *st;
    int rc = prep(c, "SELECT index_path FROM datasets WHERE index_path IS NOT NULL", &st, err);
    if (rc)
        return rc;
    *used = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 0);
        if (!p) {
            rc = oom(err);
            break;
        }
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/') /* "indexes/x/" names x too */
            n--;
        char *q = igi_strndup(p, n);
        if (!q) {
            rc = oom(err);
            break;
        }
        *used |= !strcmp(base_name(q), entry);
        free(q);
    }
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(c, s, "cannot look up an index", err);
    sqlite3_finalize(st);
    return rc;
}

static int is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* At most this many waits of 50 ms for the sorters of a dead build to let go of its lock. */
#define LOCK_ORPHAN_WAITS 100

/* Whether the process that took a lock (its pid is in the lock file) no longer exists. */
static int holder_gone(const char *lock)
{
    char buf[24] = "";
    int fd = open(lock, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Handles one entry of home/indexes; *removed counts deleted directories. */
/* Whether a directory name is one a build makes (NAME-<16 hex digits>): nothing else in
 * home/indexes is ever removed, whatever a user put there. */
static int build_dir_name(const char *entry)
{
    size_t n = strlen(entry);
    if (n < 18 || entry[n - 17] != '-')
        return 0;
    for (size_t i = n - 16; i < n; i++)
        if (!((entry[i] >= '0' && entry[i] <= '9') || (entry[i] >= 'a' && entry[i] <= 'f')))
            return 0;
    return 1;
}

/* A complete index (its manifest written) of a dataset this catalog does not have: it
 * outlived a catalog that was deleted, emptied or replaced, and is the only copy of that
 * work, so it is kept (*keep = 1). A dataset's superseded index and an interrupted build
 * (no manifest) are this catalog's leftovers. */
static int foreign_index(ig_catalog *c, const char *entry, const char *path, int *keep, ig_error *err)
{
    *keep = 0;
    char *manifest = igi_path_join(path, "manifest.json");
    char *name = igi_strndup(entry, strlen(entry) - 17); /* NAME-<16 hex digits> */
    int rc = 0, known = 0;
    if (!manifest || !name)
        rc = oom(err);
    else if (access(manifest, F_OK) == 0 && !(rc = dataset_exists(c, name, &known, err)))
        *keep = !known;
    free(manifest);
    free(name);
    return rc;
}

static int cleanup_entry(ig_catalog *c, const char *entry, size_t *removed, ig_error *err)
{
    char *path = igi_path_join(c->indexes, entry);
    if (!path)
        return oom(err);
    int rc = 0;
    if (ends_with(entry, ".lock")) {
        /* A lock without its directory: left by a build killed before creating it,
         * or after finishing. Lock files with a directory are handled with it. */
        char *base = igi_strndup(path, strlen(path) - 5);
        int fd = -1;
        if (!base)
            rc = oom(err);
        else if (!is_dir(base) && (rc = lock_take(path, 1, &fd, err)) == 0) {
            /* Builds create their directory only while holding this lock. */
            if (!is_dir(base))
                lock_release(path, fd);
            else
                close(fd);
        }
        free(base);
        free(path);
        return rc < 0 ? rc : 0;
    }
    if (!is_dir(path) || !build_dir_name(entry)) {
        free(path);
        return 0;
    }
    char *lock = igi_aprintf("%s.lock", path);
    int fd = -1;
    if (!lock) {
        free(path);
        return oom(err);
    }
    rc = lock_take(lock, 1, &fd, err);
    /* A build killed while its sorters (forked, so holding the lock with it) still free their
     * memory leaves the lock held a moment after its process is gone: wait for them, briefly. */
    for (int tries = 0; rc == 1 && tries < LOCK_ORPHAN_WAITS && holder_gone(lock); tries++) {
        usleep(50000);
        rc = lock_take(lock, 1, &fd, err);
    }
    if (rc == 0) {
        /* Only now, with the lock held, can no build be about to commit this one. */
        int used = 1;
        rc = index_in_use(c, entry, &used, err);
        if (!rc && !used)
            rc = foreign_index(c, entry, path, &used, err);
        if (!rc && !used && is_dir(path)) {
            rc = igi_remove_tree(path, err);
            if (!rc && removed)
                (*removed)++;
        }
        lock_release(lock, fd);
    }
    free(lock);
    free(path);
    return rc < 0 ? rc : 0;
}

/* The entries of directory `dir` but dot files (*names malloc'd, each too; *n of them): collected
 * first, as the callers delete entries. A missing directory has none when missing_ok. */
static int dir_names(const char *dir, int missing_ok, char ***names, size_t *n, ig_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh)
        return missing_ok && errno == ENOENT ? 0 : igi_error_errno(err, errno, dir, "cannot open directory");
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(dh))) {
        if (e->d_name[0] == '.')
            continue;
        if (igi_grow(names, *n, &cap, sizeof **names, 16) || !((*names)[*n] = igi_strdup(e->d_name))) {
            rc = oom(err);
            break;
        }
        (*n)++;
    }
    if (!rc && errno)
        rc = igi_error_errno(err, errno, dir, "cannot read directory");
    closedir(dh);
    return rc;
}

/* A file of the tables directory that no record names: a table whose prepare died before
 * recording it, or after recording its successor; its temporary file; or its lock. Each is
 * removed under the table's lock, which prepare holds from before the temporary file is made
 * until the table is recorded, and only once the catalog, read under the lock, does not name it. */
static int cleanup_table(ig_catalog *c, const char *dir, const char *entry, size_t *removed, ig_error *err)
{
    size_t len = strlen(entry);
    size_t cut = ends_with(entry, ".tab") ? len : ends_with(entry, ".tab.tmp") ? len - 4
                                                : ends_with(entry, ".tab.lock") ? len - 5 : 0;
    if (strncmp(entry, "next-", 5) || !cut)
        return 0;
    char *base = igi_strndup(entry, cut), *path = igi_path_join(dir, entry);
    char *table = base ? igi_path_join(dir, base) : NULL, *lock = table ? igi_aprintf("%s.lock", table) : NULL;
    char *rel = base ? igi_aprintf("tables/%s", base) : NULL;
    int rc = 0, fd = -1;
    if (!path || !lock || !rel)
        rc = oom(err);
    else if ((rc = lock_take(lock, 1, &fd, err)) == 0) {
        int64_t named = 0;
        int has = 0;
        if (!(rc = has_table(c, "next_tables", &has, err)) && has)
            rc = lookup(c, "SELECT count(*) FROM next_tables WHERE path = ?", rel, NULL, &named, NULL,
                        "cannot read the next-token tables' records", err);
        if (!rc && !ends_with(entry, ".lock") && (ends_with(entry, ".tmp") || !named) && unlink(path) == 0 && removed)
            (*removed)++;
        lock_release(lock, fd); /* the lock file goes with it */
    }
    IGI_FREE(base, path, table, lock, rel);
    return rc < 0 ? rc : 0;
}

int ig_catalog_cleanup(ig_catalog *c, size_t *removed, ig_error *err)
{
    if (removed)
        *removed = 0;
    if (c->readonly) /* nothing can be removed, and no build can have run here */
        return 0;
    char *tables = igi_path_join(c->home, "tables");
    if (!tables)
        return oom(err);
    int rc = 0;
    /* Keep going past a failure so one bad entry does not pin all the others; the first
     * error is the one reported. */
    ig_error scratch;
    for (int pass = 0; pass < 2; pass++) {
        const char *dir = pass ? tables : c->indexes;
        char **names;
        size_t n;
        int r = dir_names(dir, pass, &names, &n, rc ? &scratch : err); /* tables: made by the first prepare */
        if (r && !rc)
            rc = r;
        for (size_t i = 0; i < n; i++) {
            r = pass ? cleanup_table(c, dir, names[i], removed, rc ? &scratch : err)
                     : cleanup_entry(c, names[i], removed, rc ? &scratch : err);
            if (r && !rc)
                rc = r;
        }
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
    }
    free(tables);
    return rc;
}

/* ---------------------------------------------------------------- settings */

int ig_catalog_setting_get(ig_catalog *c, const char *key, char **value, ig_error *err)
{
    *value = NULL;
    if (!key)
        return ig_error_set(err, IG_EUSAGE, "setting name not given");
    int found;
    return lookup(c, "SELECT value FROM settings WHERE key = ?", key, &found, NULL, value, "cannot read a setting", err);
}

int ig_catalog_setting_set(ig_catalog *c, const char *key, const char *value, ig_error *err)
{
    if (!key)
        return ig_error_set(err, IG_EUSAGE, "setting name not given");
    sqlite3_stmt *st;
    /* A NULL value unsets the key, so get returns NULL again. */
    int rc = prep(c, value ? "INSERT INTO settings(key, value) VALUES(?, ?)"
                             " ON CONFLICT(key) DO UPDATE SET value = excluded.value"
                           : "DELETE FROM settings WHERE key = ?", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (value)
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    return run(c, st, "cannot write a setting", err);
}

int64_t ig_catalog_data_version(ig_catalog *c)
{
    int64_t v = -1;
    ig_error e;
    if (!c || pragma_int(c, "PRAGMA data_version", &v, &e))
        return -1;
    return v;
}
