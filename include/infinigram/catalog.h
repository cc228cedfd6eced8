/*
 * The catalog: a SQLite database in the home directory that names datasets, records
 * their sources and how to read them, the index in force and shell settings. It is the
 * commit point of every build: a new index is written to a fresh directory, fsynced, and
 * only then does one transaction point the dataset at it; the old directory is deleted
 * afterwards. A killed build therefore leaves the previous index in force, and its
 * leftovers are removed by ig_catalog_cleanup (never those of a build still running:
 * each build holds an flock on `<dir>.lock`). WAL mode and a busy timeout let several
 * shells share one home.
 */
#ifndef IG_CATALOG_H
#define IG_CATALOG_H

#include <signal.h>
#include <stdint.h>
#include "build.h"
#include "error.h"
#include "index.h"
#include "tokens.h"

IG_BEGIN_DECLS

typedef struct ig_catalog ig_catalog;

/** Kind of a recorded source (contract names: file, dir, lines, jsonl, inline). */
typedef enum ig_dataset_source_kind {
    IG_DSRC_FILE = 0, IG_DSRC_DIR, IG_DSRC_LINES, IG_DSRC_JSONL, IG_DSRC_INLINE,
} ig_dataset_source_kind;

/** "file", "dir", "lines", "jsonl", "inline" ("unknown" otherwise): a static string. */
IG_API const char *ig_dataset_source_kind_name(int kind);

typedef struct ig_dataset_source {
    int kind;              ///< ig_dataset_source_kind
    char *path;            ///< absolute path (NULL for inline)
    char *text;            ///< inline text (NULL otherwise)
    size_t text_len;
    uint64_t size;         ///< at the last build (or at add): bytes of file; dir: total bytes
    int64_t mtime_ns;      ///< at the last build (or at add); dir: the directory's own mtime
    uint64_t tree_hash;    ///< dir: fingerprint of every (path, size, mtime) below it
} ig_dataset_source;

typedef struct ig_dataset {
    int64_t id;
    char *name;
    char *status;          ///< "registered", "built", "stale", or for a composition "broken"
    char *index_path;      ///< absolute index directory in force, NULL before the first build
    uint64_t bytes, documents;
    uint32_t shards;
    uint64_t skipped_files;
    double created, updated, built; ///< Unix times (built = 0 before the first build)
    ig_ingest_options ingest;       ///< how sources are read (field points into `field_buf`)
    char *field_buf;
    char *range_text;      ///< the --range as given, or NULL
    char *build_params;    ///< JSON text of the last build's parameters, or NULL
    size_t nsources;
    ig_dataset_source *sources;
    /** Decontamination (NULL when none): the options as added (ingest.decontam points to
     *  them), and the last build's report as JSON text (NULL before a build): eval_hash (hex),
     *  eval_items, eval_ngrams, documents, caught, flag_only, sources [{name, documents,
     *  caught}], docs [{doc, name, source_line, ngrams, matched}] (the first 1000 caught). */
    ig_decontam_options *decontam;
    char *decontam_path, *decontam_field, *decontam_report;
    /** A composed dataset (ig_catalog_compose): the datasets it is made of, in order, and
     *  those it takes away (0 and NULL for a dataset of sources). Its status, bytes,
     *  documents, shards and build time are its members' as they are now (built when every
     *  member is, stale when one is, broken when members rebuilt since no longer fit
     *  together: it does not load); it has no index_path of its own. */
    char **members, **minus;
    size_t nmembers, nminus;
    /** A token index attached read-only (ig_catalog_attach; NULL otherwise): its directory,
     *  layout ("infini-gram"), token width, vocabulary file (NULL: none) and the fingerprint
     *  of its files at attach, against which every load checks them. */
    char *attach_dir, *attach_format, *vocab;
    uint32_t token_width;
    uint64_t attach_fingerprint;
    /** A token dataset of our own (tokens.format 0 otherwise; see ig_token_options): how its
     *  sources become ids, ingest.tokens pointing here and its strings owned below; `vocab`
     *  above is its vocabulary file and `token_width` its index's width once built. tokenizer_hash is the checksum (hex) of the tokenizer
     *  file, or else of the vocabulary file, when it was added: a load or build refuses either
     *  missing or changed (a vocabulary may be a SentencePiece model tokenising text queries). */
    ig_token_options tokens;
    char *tokens_field, *tokenizer, *tokenizer_hash;
    uint64_t vocab_fingerprint; ///< its vocabulary's size and time at attach (0: not taken)
    /** An attached dataset's next-token table (ig_catalog_prepare; NULL: none): its file,
     *  in the home, and what it holds. */
    char *next_table;
    ig_next_table_info next_info;
    /** What identifies the index in force — the index path, or for a composition every
     *  member's — so that a change shows as a different key; NULL when not loadable. */
    char *index_key;
} ig_dataset;

IG_API void ig_dataset_free(ig_dataset *d);
IG_API void ig_dataset_list_free(ig_dataset *list, size_t n);

/** Checks a dataset name: 1-64 chars of [A-Za-z0-9_.-], starting with a letter or digit. */
IG_API int ig_dataset_name_check(const char *name, ig_error *err);

/**
 * Opens (creating if needed) the catalog under `home` (created with parents), runs
 * migrations. *out is freed with ig_catalog_close. A catalog that exists but cannot be
 * written (a read-only home or mount, a full disk) is opened read-only: reads work, and
 * every write fails with IG_EUSAGE saying the catalog is read-only and why. An SQLite file
 * of another program is refused ("not an infinigram catalog", IG_ECORRUPT) and left
 * byte-for-byte untouched.
 */
IG_API int ig_catalog_open(ig_catalog **out, const char *home, ig_error *err);
/** Why the catalog was opened read-only (owned by the catalog), or NULL when writable. */
IG_API const char *ig_catalog_readonly(const ig_catalog *c);
/** Closes the catalog and frees it; sets *c to NULL. NULL-safe. */
IG_API void ig_catalog_close(ig_catalog **c);
/** The home directory (owned by the catalog). */
IG_API const char *ig_catalog_home(const ig_catalog *c);

/**
 * Registers a dataset. Every file/dir source must exist and be readable now (contents
 * are read at build), and so must opts->decontam's eval set (read at each build, when its
 * hash is recorded). `range_text` is the --range as typed (or NULL); it is parsed here.
 */
IG_API int ig_catalog_add(ig_catalog *c, const char *name, const ig_source *sources,
                          size_t nsources, const ig_ingest_options *opts,
                          const char *range_text, ig_error *err);

/** Fills *out with dataset `name` (its strings are malloc'd, owned by *out: free them with
 *  ig_dataset_free); IG_ENOTFOUND when there is none. */
IG_API int ig_catalog_get(ig_catalog *c, const char *name, ig_dataset *out, ig_error *err);
/** Every dataset, by name: *out (malloc'd, *n entries) is the caller's, freed with ig_dataset_list_free. */
IG_API int ig_catalog_list(ig_catalog *c, ig_dataset **out, size_t *n, ig_error *err);

/**
 * Defines dataset `name` as the composition of the built datasets `members` (in order),
 * less the documents of `minus` (each of which must be a copy of a document of the
 * members; see ig_index_open_composed). Nothing is copied: queries run over the members'
 * indexes as they are when the composition is loaded, so a member rebuilt is picked up.
 * Members that are compositions are flattened. Refused with IG_EUSAGE, naming the
 * dataset at fault: an unknown or unbuilt member, a cycle, members that index text
 * differently, a subtracted set that is not part of the members.
 */
IG_API int ig_catalog_compose(ig_catalog *c, const char *name, const char *const *members, size_t n,
                              const char *const *minus, size_t nminus, ig_error *err);

/**
 * Records dataset `name` as the token index in `dir` (read-only; see tokens.h), opened now
 * with `o` to check it; nothing in dir is written or copied. Its status is built, and turns
 * stale when a file of dir changes (size, times or inode): it then no longer loads until attached
 * again. It cannot be built, and removing it forgets it without touching dir.
 */
IG_API int ig_catalog_attach(ig_catalog *c, const char *name, const char *dir, const char *format,
                             const ig_attach_options *o, ig_error *err);

/**
 * Makes the next-token table (tokens.h) of attached dataset `name` — the histograms of its
 * contexts of one, two or three tokens seen at least min_count times (0: ig_next_table_min_count) — writes it
 * into the home (never into the attached directory), records it, and replaces the one before.
 * Loads use it from then on; removing the dataset removes it. A dataset whose files change is
 * stale, and its table with it. IG_EUSAGE for a dataset that is not attached; polls cancel
 * (IG_ECANCELLED, nothing changed). *info (may be NULL) describes the table.
 */
IG_API int ig_catalog_prepare(ig_catalog *c, const char *name, uint64_t min_count, const volatile int *cancel,
                              ig_next_table_info *info, ig_error *err);

/**
 * Opens the index of dataset `name` — its own, or its members' composed — into *out (NULL on
 * failure; free with ig_index_close). *key (may be NULL; free()) receives the dataset's index_key at
 * that moment. IG_EUSAGE naming the dataset to build when one is not built.
 */
IG_API int ig_catalog_open_index(ig_catalog *c, const char *name, ig_index **out, char **key, ig_error *err);

/** Removes the dataset and its index directory; refused (IG_EUSAGE) while a composition
 *  is made of it. */
IG_API int ig_catalog_remove(ig_catalog *c, const char *name, ig_error *err);
IG_API int ig_catalog_rename(ig_catalog *c, const char *from, const char *to, ig_error *err);

/** How far a staleness check looks below a directory source. A directory's own time moves
 *  when a name in it is added, removed or renamed, not when a file below it is rewritten in
 *  place: only a walk sees that. */
enum {
    IG_CHECK_SHALLOW = 0, ///< file sources (size, mtime) and directory mtimes
    IG_CHECK_DEEP = 1,    ///< every file below directory sources (size, mtime)
    IG_CHECK_BOUNDED = 2, ///< deep for directories of at most IG_CHECK_BOUNDED_ENTRIES, shallow above
};
#define IG_CHECK_BOUNDED_ENTRIES 20000

/**
 * Staleness check of a dataset's sources, as far as `deep` (IG_CHECK_*) says. A
 * composition is stale when a dataset it is made of is; with IG_CHECK_DEEP it is also
 * opened, and an error says why it no longer loads (members rebuilt so that they no longer
 * fit together). Marks the dataset stale (or built again, when every directory was walked)
 * in the catalog. *stale is set; *why (may be NULL; free()) names the first change.
 */
IG_API int ig_catalog_check(ig_catalog *c, const char *name, int deep, int *stale,
                            char **why, ig_error *err);

/**
 * Builds the dataset's index into a fresh directory and atomically makes it the one in
 * force (see the file comment). Reports IG_PHASE_COMMIT through `progress` after the
 * commit, before the old index is deleted.
 */
IG_API int ig_catalog_build(ig_catalog *c, const char *name, const ig_build_options *bo,
                            ig_progress_fn progress, void *user,
                            const volatile sig_atomic_t *cancel, ig_build_result *res,
                            ig_error *err);

/**
 * Asked once by ig_catalog_build_agreed when the new index `dir` is complete and fsynced,
 * just before it is switched in (`res` describes it). 0 switches it in; any other value
 * (with err set) abandons it: the directory is removed, the previous index stays in force
 * and that value is returned. It is not asked when the build fails before that point.
 */
typedef int (*ig_agree_fn)(void *user, const char *dir, const ig_build_result *res, ig_error *err);
/**
 * ig_catalog_build with a last check before the switch: how several machines building one
 * part each switch their parts in all or none (each asks the others in `agree`).
 */
IG_API int ig_catalog_build_agreed(ig_catalog *c, const char *name, const ig_build_options *bo,
                                   ig_progress_fn progress, void *user, const volatile sig_atomic_t *cancel,
                                   ig_agree_fn agree, void *agree_user, ig_build_result *res, ig_error *err);
/** Verifies the checksums of the dataset's index in force. */
IG_API int ig_catalog_verify(ig_catalog *c, const char *name, ig_error *err);

/**
 * Deletes index directories under home/indexes that no dataset uses and no running
 * build holds. *removed (may be NULL) receives how many were deleted.
 */
IG_API int ig_catalog_cleanup(ig_catalog *c, size_t *removed, ig_error *err);

/** Persisted settings (string values). *value is NULL when unset; free() it. */
IG_API int ig_catalog_setting_get(ig_catalog *c, const char *key, char **value, ig_error *err);
IG_API int ig_catalog_setting_set(ig_catalog *c, const char *key, const char *value, ig_error *err);

/** Changes whenever another connection commits (PRAGMA data_version). */
IG_API int64_t ig_catalog_data_version(ig_catalog *c);

IG_END_DECLS

#endif
