/*
 * Typed operations and their field tables. Every engine command (count, predict, …) is
 * one operation: an options struct with its defaults set in one function, a result
 * struct, a run function and one JSON writer. Its options are described once, by a
 * table of fields {name, type, bounds, default, help}; the shell's argument codec and
 * the server's JSON codec both fill the options struct through this table, so a value
 * is validated once, with one bound, and help for every face is generated from the same
 * rows.
 *
 * Field names are written with underscores ("top_k"); the shell spells them with dashes
 * ("--top-k"). Messages from the library that mention a field write it as {top_k};
 * each face replaces that with its own spelling (ig_field_msg_render).
 *
 * Ownership: an options struct filled by a codec owns the bytes of its text fields
 * (malloc'd, or NULL); release them with ig_fields_free. A setter (and ig_explain_follow,
 * which sets the query) frees what the text member held before: point a member at bytes
 * of your own only in a struct that goes to no setter and not to ig_fields_free. A result
 * struct is released by its operation's free function, which takes NULL (as free does), a
 * zeroed struct, or one a failed run left (already empty), and leaves it zeroed. Nothing here keeps a pointer after a call returns, except results, which
 * may point into the index (document names) and must not outlive it. Pointer arguments
 * must not be NULL unless a prototype says so.
 *
 * JSON writers use cJSON with allocation hooks the library installs when it is loaded
 * (cJSON_InitHooks), which is how a writer knows that memory ran out and returns NULL. cJSON
 * keeps its hooks process-wide: a program that uses cJSON too shares them, and one that
 * installs hooks of its own takes that knowledge from the writers.
 */
#ifndef IG_FIELDS_H
#define IG_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "index.h"

IG_BEGIN_DECLS

/** Exact bytes of a text value (may contain NUL); `p` is malloc'd by whoever fills it. A
 *  value is given when `p` is set, even with n = 0 (the empty text); {NULL, 0} is not given. */
typedef struct ig_bytes {
    uint8_t *p;
    size_t n;
} ig_bytes;

/** A repeatable text value (e.g. stop strings). */
typedef struct ig_texts {
    ig_bytes *v;
    size_t n;
} ig_texts;

typedef enum ig_field_type {
    IG_FIELD_BOOL,   ///< int, 0 or 1 (a switch in the shell, true/false in JSON)
    IG_FIELD_INT,    ///< int64_t within [min, max]
    IG_FIELD_UINT,   ///< uint64_t within [min, max] (max may exceed 2^53 in the shell)
    IG_FIELD_DOUBLE, ///< finite double within [min, max]
    IG_FIELD_ENUM,   ///< int: index into `choices`
    IG_FIELD_TEXT,   ///< ig_bytes
    IG_FIELD_TEXTS,  ///< ig_texts, repeatable
    IG_FIELD_SIZE,   ///< uint64_t byte count; the shell accepts K/M/G suffixes
} ig_field_type;

enum {
    IG_FIELD_POSITIONAL = 1 << 0, ///< the shell takes it as a positional word, not an option
    IG_FIELD_REST = 1 << 1,       ///< positional: the remaining words joined by spaces
    IG_FIELD_SHELL = 1 << 2,      ///< only the shell offers it (e.g. a file to read)
    IG_FIELD_HTTP = 1 << 3,       ///< only the JSON face offers it
    IG_FIELD_REQUIRED = 1 << 4,   ///< must be given
    IG_FIELD_NUMBER_AS_TEXT = 1 << 5, ///< TEXT: a JSON integer is accepted as its decimal text (an id)
    IG_FIELD_JSON = 1 << 6,       ///< TEXT holding JSON: over HTTP an array or object is taken as its text
    IG_FIELD_UNLESS_IDS = 1 << 7, ///< with REQUIRED: not needed when the field "ids" is given (token ids
                                  ///< stand for the text on a token dataset)
    IG_FIELD_RESOLVED = 1 << 8,   ///< `def` is what the operation chooses when the field is not given
                                  ///< (the member keeps a "not given" value until then)
    IG_FIELD_GRAMMAR = 1 << 9,    ///< REST: words of a grammar of the field's own (quoted terms among
                                  ///< operators), not one text: quoted and plain words may mix
};

/** One option of an operation. */
typedef struct ig_field {
    const char *name;             ///< "top_k"; NULL ends a table
    ig_field_type type;
    size_t offset;                ///< offsetof(options struct, member)
    double min, max;              ///< bounds of INT, UINT, DOUBLE, SIZE
    const char *arg;              ///< value placeholder for help ("K"); NULL for BOOL
    const char *def;              ///< the default, as help shows it and as ig_fields_defaults sets it; or NULL
    const char *help;             ///< one line
    const char *const *choices;   ///< ENUM: NULL-terminated spellings
    unsigned flags;               ///< IG_FIELD_*
} ig_field;

/** Where an operation runs: the index and the cancel flag it polls. */
typedef struct ig_op_ctx {
    const ig_index *idx;
    const char *dataset;          ///< name reported in results (may be NULL)
    const volatile int *cancel;   ///< non-zero stops long work with IG_ECANCELLED (may be NULL)
} ig_op_ctx;

/** An operation, as the generic faces see it. */
typedef struct ig_op {
    const char *name;             ///< "count"
    const ig_field *fields;
    size_t opts_size, result_size;
    void (*defaults)(void *opts);
    /** The typed ig_NAME_run: checks the options (ig_fields_check against the defaults),
     *  computes the result (zeroed first), then checks the index's health. On failure the
     *  result holds nothing (what was made before the failure is freed). */
    int (*run)(const ig_op_ctx *ctx, const void *opts, void *result, ig_error *err);
    /** The result as one JSON object's members, without braces: `"a":1,"b":2`. malloc'd. */
    char *(*json)(const ig_op_ctx *ctx, const void *opts, const void *result);
    void (*free_result)(void *result);
} ig_op;

/** JSON text nested deeper than this (arrays and objects) is refused, by request bodies,
 *  JSONL sources and LLM candidate lists alike: no legitimate record needs it, and a
 *  recursive parser's stack must stay bounded. */
#define IG_JSON_MAX_DEPTH 64

/** 0 when the JSON text p[0, n) nests at most IG_JSON_MAX_DEPTH deep (brackets inside
 *  strings do not count); else -1 with *pos the byte offset of the first bracket too deep.
 *  Checks nesting only: the parser checks the rest. */
IG_API int ig_json_depth_check(const char *p, size_t n, size_t *pos);

/** About how many bytes the parser allocates to hold the values of the JSON text p[0, n):
 *  from a quarter of n (long strings) to 75 times n ("{},{},..."). A text whose cost is over
 *  IG_JSON_COST_MAX(n) is refused (IG_JSON_HEAVY): memory stays proportional to what was
 *  sent, 32 times its size and 4 MiB at most (a 1 MB request body, 36 MB). */
IG_API uint64_t ig_json_cost(const char *p, size_t n);
#define IG_JSON_COST_MAX(n) (32 * (uint64_t)(n) + ((uint64_t)4 << 20))

struct json_t;
struct json_error_t;
/** Outcomes of ig_json_parse. */
enum { IG_JSON_OK, IG_JSON_BAD, IG_JSON_DEEP, IG_JSON_NOMEM, IG_JSON_HEAVY };
/** The one way the library and its faces parse JSON text (request bodies, JSONL, manifests,
 *  candidate lists), with jansson: its cost bounded first (IG_JSON_HEAVY past
 *  IG_JSON_COST_MAX, je->text saying so), then its nesting (IG_JSON_DEEP past
 *  IG_JSON_MAX_DEPTH, je->position then the byte offset of the bracket too deep), then
 *  json_loadb with the strict flags (NUL allowed in strings, so a string is its exact bytes;
 *  duplicate keys rejected; jansson's own flags `extra` added). jansson reports a failed
 *  allocation as a syntax error, so a failure is parsed once more: the same error twice is
 *  the text's fault (IG_JSON_BAD), a different one means memory ran out (IG_JSON_NOMEM), a
 *  success is returned. *why gets the outcome; the value returned belongs to the caller
 *  (json_decref). */
IG_API struct json_t *ig_json_parse(const char *p, size_t n, size_t extra, struct json_error_t *je, int *why);

/** Parses a JSON text that a client or a file gave (a request body, a record) with
 *  ig_json_parse, integers kept exact (one past 2^63, which no integer holds, is read as a
 *  double so that a field's range check can refuse it by name). On failure NULL and
 *  IG_EINVAL with a message that says where and, when it can, in which member: "WHAT is not
 *  valid JSON: \"top_k\": invalid token (byte 12)", "...: in a key: ...", "...: \"k\": given
 *  twice (byte 9)", "...: nested more than 64 deep (byte 70)"; or IG_ENOMEM. `what` names
 *  the text ("the request body"). The value returned belongs to the caller (json_decref). */
IG_API struct json_t *ig_json_read(const char *p, size_t n, const char *what, ig_error *err);

/** Sets field f from a JSON value, checked as the other setters check: BOOL takes true/false;
 *  a number field a number (an integer exactly, to 2^63) or, for SIZE, a string ("4G"); TEXT
 *  a string (an IG_FIELD_JSON field an array or object too, as its compact text; an
 *  IG_FIELD_NUMBER_AS_TEXT field a non-negative integer too); TEXTS a string or an array of
 *  strings. IG_EUSAGE with a message naming the member as `key` ("\"top_k\": expected an
 *  integer, not a string", "\"stop[2]\": ..."), or another code of the setter. */
IG_API int ig_field_set_json(const ig_field *f, void *opts, const char *key, struct json_t *v, ig_error *err);

/** Fills opts from the members of a JSON object, each through ig_field_set_json: keys listed in
 *  `skip` (NULL-terminated, or NULL) are passed over; `alias` (pairs "other", "name", then
 *  NULL; or NULL) lets a key stand for a field of another name; null is the field's default
 *  (as OpenAI clients send for what they leave unset). An unknown key, one a face other than
 *  JSON offers only (IG_FIELD_SHELL), a field given twice through an alias, or a required
 *  field missing is IG_EUSAGE naming it ("unknown field \"x\"", "\"query\" is required").
 *  Members set before a failure stay in opts (ig_fields_free releases them). A table of more
 *  than 64 rows is IG_EINTERNAL (the fields given are kept as a 64-bit mask, as by
 *  ig_fields_from_line). */
IG_API int ig_fields_from_json(const ig_field *fields, void *opts, struct json_t *obj, const char *const *skip,
                               const char *const *alias, ig_error *err);

/** A saved setting named like a field is that field's default: sets the field of `fields`
 *  named `key` from `value` (text, as a setting is stored), unless there is no such field,
 *  it is positional, or value is NULL or "none" (the operation's own default): then 0 and
 *  nothing changes. Else the setter's result (a setting is checked when it is saved, so a
 *  face may ignore it). */
IG_API int ig_field_setting(const ig_field *fields, void *opts, const char *key, const char *value, ig_error *err);

/** Every operation, NULL-terminated (static: never freed). */
IG_API const ig_op *const *ig_ops(void);
/** The operation named `name` (static), or NULL. */
IG_API const ig_op *ig_op_find(const char *name);

/** The field named `name` (underscores; a dash matches an underscore): a row of `fields`, or NULL. */
IG_API const ig_field *ig_field_find(const ig_field *fields, const char *name, size_t len);

/* Setters used by the codecs. Each validates against the field's type and bounds and
 * fails with IG_EUSAGE, err->msg saying what is wrong without naming the field (the
 * face prefixes its own spelling). Text setters copy the bytes. */
IG_API int ig_field_set_bool(const ig_field *f, void *opts, int v, ig_error *err);
IG_API int ig_field_set_int(const ig_field *f, void *opts, long long v, ig_error *err);
IG_API int ig_field_set_uint(const ig_field *f, void *opts, unsigned long long v, ig_error *err);
/** A number from JSON: integral fields need an integral value within ±2^53. */
IG_API int ig_field_set_number(const ig_field *f, void *opts, double v, ig_error *err);
/** Parses text as the field's type ("12", "0.5", "64M", an enum spelling, or the text itself). */
IG_API int ig_field_set_text(const ig_field *f, void *opts, const uint8_t *p, size_t n, ig_error *err);

/** A size: "4096", "64M", "1.5G", "1TiB" (binary multiples), at least 1 byte. 0, or -1 when
 *  the text is not a size. */
IG_API int ig_parse_size(const char *s, uint64_t *out);

/** Whether field f of `fields` is missing although required, given the fields set so far
 *  (`given`: bit i for fields[i]): the one rule both codecs apply (IG_FIELD_UNLESS_IDS). */
IG_API int ig_field_missing(const ig_field *fields, const ig_field *f, uint64_t given);

/** Sets each field of `opts` whose row has a default (and no IG_FIELD_RESOLVED) to that
 *  default, parsed as the codecs parse it: the table is the one place a default is written.
 *  Other members are left as they are. 0, or the error of the first default that does not
 *  parse (a defect of the table: the unit tests run every operation's). */
IG_API int ig_fields_defaults(const ig_field *fields, void *opts, ig_error *err);

/** Checks an options struct filled by hand (not through the setters) against its table: each
 *  number within its row's bounds (finite for DOUBLE), each BOOL 0 or 1, each ENUM one of its
 *  choices, each text with bytes when it has a length; a member equal to the same member of
 *  `defaults` (an options struct as the operation's defaults function leaves it) passes
 *  whatever it is, since "not given" is often spelled outside the bounds (0, -1); a required
 *  text (IG_FIELD_REQUIRED) must have bytes (p not NULL; an empty text is {"", 0}). 0, or
 *  IG_EUSAGE with a message naming the field as {name}. Every typed ig_NAME_run calls it
 *  first, so a C caller gets the bounds the codecs apply. */
IG_API int ig_fields_check(const ig_field *fields, const void *opts, const void *defaults, ig_error *err);

/** Frees the text fields of an options struct filled by a codec. */
IG_API void ig_fields_free(const ig_field *fields, void *opts);

/** Replaces each {name} in msg by prefix+name+suffix, with '_' as `sep`; writes out. */
IG_API void ig_field_msg_render(const char *msg, const char *prefix, char sep, const char *suffix, char *out,
                                size_t outlen);

/** Writes msg to out (at most cap bytes, NUL-terminated) with each {name} spelled as the
 *  shell spells it: a positional field of `fields` by its placeholder, anything else as
 *  --name with dashes; a positional field opening the message as "{name}: " is left out
 *  with its ": ", the caret under the word saying no less. For each {name} met, `seen`
 *  (when not NULL) is given the name, its length and whether it opens the message followed
 *  by ':' (the message is about its value); it keeps no pointer. `fields` may be NULL. */
IG_API void ig_field_msg_shell(const ig_field *fields, const char *msg, char *out, size_t cap,
                               void (*seen)(void *ctx, const char *name, size_t len, int value), void *ctx);

/** The type's name in help ("integer", "number", "boolean", "string", "list of strings"): a static string. */
IG_API const char *ig_field_type_name(const ig_field *f);

/* ---- command-line words (the shell's grammar, for every face that reads a typed line) ---- */

/** One word of a command line. */
typedef struct ig_word {
    char *text;      ///< decoded, NUL-terminated (it may hold NULs: len is authoritative); in the arena
    size_t len;
    size_t col, end; ///< byte columns of the line where the word starts and just after it ends
    int quoted;      ///< written as "..."
    int literal;     ///< after a "--" word (ig_line_read): text, never taken for an option
} ig_word;

/** Splits `line` into words: runs of non-space bytes, or "quoted text" with the escapes
 *  \n \t \\ \" \xHH (any other escape is an error). With `grammar` (a query language of
 *  quoted terms and parentheses) a plain word also ends at a quote or a parenthesis, and each
 *  parenthesis is a word. Decoded texts go into `arena`, the caller's, of 2 × strlen(line) + 1
 *  bytes; *words is malloc'd (the caller frees it, on error too). On error returns
 *  IG_EUSAGE with *errcol the column the message is about, or IG_ENOMEM. */
IG_API int ig_words_split(const char *line, int grammar, char *arena, ig_word **words, size_t *n, size_t *errcol,
                          ig_error *err);
/** The text of a TEXT argument made of words[0, n): one quoted word, or plain words joined by
 *  single spaces; a quoted word among others is an error (IG_EUSAGE, *errcol the column of
 *  the word that cannot join), except in a `grammar` text, whose words are all joined. *text
 *  is malloc'd (the caller frees it), NUL-terminated. */
IG_API int ig_words_text(const ig_word *words, size_t n, int grammar, char **text, size_t *len, size_t *errcol,
                         ig_error *err);

/** The file a word names, as a shell reads one: an unquoted word "~" or "~/…" with $HOME in
 *  place of the "~" (when HOME is set), any other word as it is. IG_EUSAGE when the word
 *  holds a NUL byte (the path would be cut there and name another file), or IG_ENOMEM.
 *  *path is malloc'd (the caller frees it); NULL on failure. */
IG_API int ig_word_path(const ig_word *w, char **path, ig_error *err);

/* ---- command lines: the words sorted into options and arguments, then options filled ---- */

/** What a command's option table says of option `name` (len bytes, as typed after "--"):
 *  -1 when the command has no such option, 0 for a switch, 1 when it takes a value. For an
 *  option it has, *canon is its name as the table spells it (static, NUL-terminated) and
 *  *arg its value's placeholder for messages ("N"; NULL for a switch). */
typedef int (*ig_option_lookup)(const void *table, const char *name, size_t len, const char **canon,
                                const char **arg);

/** The lookup of an operation's field table (`table` is the ig_field array): its options are
 *  its fields but the positional ones and those only JSON offers (IG_FIELD_HTTP), spelled
 *  with dashes ("--top-k"); *canon is the field's name (underscores) and *arg its
 *  placeholder, both static (rows of the table). */
IG_API int ig_fields_lookup(const void *table, const char *name, size_t len, const char **canon, const char **arg);

/** An option of a command that is not an operation (a program's own: build, load, …): a
 *  row of a table ending with a row of NULLs. */
typedef struct ig_option {
    const char *name; ///< without "--"
    const char *arg;  ///< its value's placeholder ("N"), NULL for a switch
    const char *help;
} ig_option;

/** The lookup of such a table (`table` is the ig_option array): its rows' names exactly; *canon and
 *  *arg are the row's (static, as the table is). */
IG_API int ig_options_lookup(const void *table, const char *name, size_t len, const char **canon, const char **arg);

/** An option's value text as an integer within [min, max], or as a size ("64M"): 0, or IG_EUSAGE
 *  naming the option as typed ("--jobs: not an integer: \"x\"", "--jobs: 0 is out of range (1
 *  to 64)", "--memory: not a size: …"). For the options of a program's own commands, which
 *  have no field row; an operation's go through its fields' setters. */
IG_API int ig_option_int(const char *name, const char *text, long long min, long long max, long long *out,
                         ig_error *err);
IG_API int ig_option_size(const char *name, const char *text, uint64_t *out, ig_error *err);

/** An option met on a command line. */
typedef struct ig_line_opt {
    const char *name; ///< as the table spells it (the lookup's canon)
    const char *typed; ///< as the line spells it, after "--" (NUL-terminated, in the line's arena)
    size_t col;       ///< the column of its `--name` word
    int has_value;    ///< it took a value (else a switch)
    ig_word value;    ///< the value: the next word, or the text after '=' (not quoted)
} ig_line_opt;

/** A command line read by ig_line_read. Every pointer is owned by it (ig_line_free). */
typedef struct ig_line {
    ig_word *words;    ///< every word, the command word first
    size_t nwords;
    char *arena;       ///< the words' decoded text
    ig_line_opt *opts; ///< the options, in the order given
    size_t nopts;
    ig_word *args;     ///< the other words after the command word (the arguments), in order
    size_t nargs;
    int help;          ///< `--help` was given to a command without such an option
    int unknown;       ///< on failure: the message is about an option the command lacks
    size_t errcol;     ///< on failure: the column the message is about
} ig_line;

/** Reads a command line: splits it (ig_words_split, with `grammar`) and sorts the words after
 *  the command word into options — `--name`, `--name VALUE` or `--name=VALUE`, anywhere up
 *  to a `--` word, which ends them — and arguments; a quoted word is never an option.
 *  `lookup` and `table` say which options `command` (named in messages) has. 0; or IG_EUSAGE
 *  saying what is wrong ("unknown option --x for CMD", "option --x needs a value (N)",
 *  "option --x takes no value", or the splitter's message), with l->errcol and l->unknown
 *  set; or IG_ENOMEM. Call ig_line_free on every path. */
IG_API int ig_line_read(const char *line, int grammar, ig_option_lookup lookup, const void *table, const char *command,
                        ig_line *l, ig_error *err);

/** Frees what a line holds and zeroes it; NULL-safe. */
IG_API void ig_line_free(ig_line *l);

/** For a command whose words name things (datasets, files, settings: C strings, which a NUL
 *  byte would cut short so that they name another): 0, or IG_EUSAGE when a word after the
 *  command word holds a NUL byte, with l->errcol at that word. */
IG_API int ig_line_names(ig_line *l, ig_error *err);

/** Where ig_fields_from_line stopped, and what a face may want to say besides. */
typedef struct ig_line_fill {
    uint64_t given;               ///< bit i: fields[i] was set from the line
    const ig_field *field;        ///< on failure: the field the message is about, or NULL
    size_t errcol;                ///< on failure: the column the message is about
    int missing;                  ///< on failure: a required argument is missing (no column)
    int extra;                    ///< on failure: an argument no field takes
    /** A REST field whose plain words open and close with a single quote: most shells'
     *  quotes, but text here (a face may warn); NULL otherwise. */
    const ig_field *single_quoted;
} ig_line_fill;

/** Fills opts from a line read with ig_fields_lookup on the same table: each option through
 *  its field's setter, in the order given, then the positional fields from the arguments in
 *  order (a REST field takes all that are left, joined by ig_words_text). Options already set
 *  in opts (defaults, settings) are overwritten only by those given. 0, or IG_EUSAGE with a
 *  message naming the field as typed ("--top-k: …", "TEXT: …", "TEXT is …", "missing TEXT",
 *  "unexpected argument") and f set, or IG_ENOMEM. What was set before a failure stays in opts
 *  (ig_fields_free releases it). */
IG_API int ig_fields_from_line(const ig_field *fields, const ig_line *l, void *opts, ig_line_fill *f, ig_error *err);

IG_END_DECLS

#endif
