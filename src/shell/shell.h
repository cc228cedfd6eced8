/*
 * The infinigram shell: session state, the command table and the helpers every
 * command family uses (argument access, output, errors, JSON). One `shell` struct is
 * passed to every handler; the only process-wide state is the interrupt flag set by
 * the SIGINT handler, which the library polls as its cancel flag.
 */
#ifndef SH_SHELL_H
#define SH_SHELL_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "infinigram/infinigram.h"
#include "infinigram/fields.h"
#include "infinigram/query.h"

/** Set by SIGINT while a command runs; cleared before each command. */
extern volatile sig_atomic_t sh_interrupted;
/** Set by SIGINT and never cleared: a script (-c, -f, piped commands) stops at its first. */
extern volatile sig_atomic_t sh_sigints;

enum { SH_OK = 0, SH_ERR = 1, SH_EXIT = 2 };

/** One word of a command line after quote processing. */
typedef struct sh_word {
    char *text;      ///< decoded bytes (NUL-terminated; may contain NUL if quoted \x00)
    size_t len;
    int quoted;      ///< 1 if written as a quoted string
    size_t col;      ///< byte column of the word in the line (for carets)
    int heap;        ///< text is its own allocation (else it points into the line's words)
} sh_word;

/** An option as written: `--name` or `--name VALUE`. */
typedef struct sh_optval {
    const char *name;  ///< without the dashes (points into the line copy)
    sh_word value;     ///< value (text NULL for switches)
    size_t col;
    int used;          ///< set when a handler read it (unread options are an error)
} sh_optval;

struct sh_cmd;

typedef struct sh_args {
    const struct sh_cmd *def; ///< the command being run (set by the dispatcher)
    char *line;        ///< the raw command line (owned)
    ig_line parsed;    ///< the line as the library read it (owned): words and opts point into it
    const char *cmd;   ///< command word as typed
    sh_word *words;    ///< positional words (owned)
    int nwords;
    sh_optval *opts;   ///< options (owned)
    int nopts;
    int help;          ///< --help was given: the command's usage is shown instead of running it
} sh_args;

/** Option of a command, for parsing, completion and help. */
typedef ig_option sh_opt; /* {name, placeholder (NULL: a switch), help} */

struct shell;
typedef int (*sh_handler)(struct shell *sh, sh_args *a);

/** A command: the single source for dispatch, completion, :help, --help and man. */
typedef struct sh_face sh_face;

typedef struct sh_cmd {
    const char *name;      ///< ":dataset", "count", ...
    const char *args;      ///< usage after the name
    const char *summary;   ///< one line
    const char *help;      ///< paragraph(s)
    const sh_opt *opts;    ///< NULL-terminated (name NULL)
    const char *const *subs; ///< sub-commands (NULL-terminated) or NULL
    const char *example;   ///< an example line, or NULL
    sh_handler run;        ///< the handler, or NULL for a command that is its face alone
    const ig_op *op;       ///< the typed operation whose field table gives the options, or NULL
    const sh_face *face;   ///< with run NULL: parse, run op, render through this (sh_face_run)
} sh_cmd;

/** The options of a command: its own table, or the one generated from its operation's
 *  fields (names with dashes, help with the default). NULL-terminated. */
const sh_opt *sh_cmd_opts(const sh_cmd *c);

extern const sh_cmd sh_cmds[];
extern const size_t sh_ncmds;

/** A persisted setting. */
typedef struct sh_setting {
    const char *key;
    const char *def;       ///< default value text
    const char *help;
    const char *values;    ///< alternatives for completion ("on|off"), or NULL
    int (*check)(const char *v, char *why, size_t whylen); ///< validates a value
} sh_setting;

extern const sh_setting sh_settings[];
extern const size_t sh_nsettings;

typedef struct shell {
    ig_catalog *cat;       ///< open catalog
    char *home;            ///< home directory
    char *datasets_dir;    ///< bundled datasets
    ig_index *idx;         ///< loaded index, or NULL
    int idx_tokens;        ///< idx is a token index: its files are its user's and are checked before each use
    char *current;         ///< name of the loaded dataset, or NULL
    FILE *out;             ///< where results go (stdout)
    FILE *err;             ///< where messages go (stderr)
    int json;              ///< JSON Lines output
    int timer;             ///< print command time
    int color;             ///< ANSI colour on stdout
    int out_tty;           ///< stdout is a terminal: corpus text is shown with its control characters made visible
    int err_color;         ///< ANSI colour on stderr
    int progress;          ///< progress bars on stderr
    int interactive;       ///< REPL (vs -c / -f / stdin)
    int bail;              ///< stop at the first failure
    int fake_clock;        ///< INFINIGRAM_FAKE_CLOCK=1: elapsed 0
    int columns;           ///< terminal width (80 when not a tty)
    const char *src_name;  ///< script name for messages ("-c", file), NULL in REPL
    int lineno;            ///< line number in the script
    double elapsed;        ///< seconds inside library calls for this command
    double t_start;        ///< start of the command (monotonic)
    int failed;            ///< a command failed (exit status 1)
    int cmd_failed;        ///< the running command reported an error (it fails, whatever it returns)
    char *cmdline;         ///< the line being run (for carets)
    double prog_t0, prog_last; ///< progress bar: build start, last redraw
    int prog_drawn;        ///< a progress line is on screen
    int test_stopped;      ///< INFINIGRAM_TEST_STOP_AT already fired
    ig_generation last;    ///< the last generation, for explain --step/--last and spans --last
    int server;            ///< a request of the HTTP server (no terminal, no catalog writes)
    char **settings;       ///< each setting's value in this session (sh_settings order; NULL: never set), owned
    uint32_t set_here;     ///< bit i: sh_settings[i] was given by :set in this session
    int saved_asked;       ///< started with --saved-settings (serve then applies the saved values too)
} shell;

/* ---- output (out.c) ---- */
void sh_printf(shell *sh, const char *fmt, ...) IG_PRINTF(2, 3);
void sh_puts(shell *sh, const char *s);
void sh_write(shell *sh, const void *p, size_t n);
/** Writes text from a corpus or a generation: as it is into a pipe or a file, and to a terminal
 *  with its control characters (C0 but tab and newline, DEL, C1) shown in caret or U+ notation,
 *  so that a document cannot drive the terminal (an escape sequence can set its title, write
 *  the clipboard or hide what follows). */
void sh_write_text(shell *sh, const void *p, size_t n);
/** Message on stderr, prefixed by "warning: " (and the script line). */
void sh_warn(shell *sh, const char *fmt, ...) IG_PRINTF(2, 3);
/** Reports a failed command (stderr, plus a JSON error object in JSON mode); returns SH_ERR. */
int sh_fail(shell *sh, sh_args *a, const char *code, const char *fmt, ...) IG_PRINTF(4, 5);
/** Same, from a library error. */
int sh_fail_ig(shell *sh, sh_args *a, const ig_error *e);
/** Error pointing at column `col` of the command line with a caret. */
int sh_fail_at(shell *sh, sh_args *a, size_t col, const char *code, const char *fmt, ...) IG_PRINTF(5, 6);
/** "Did you mean": the closest of the names offered to a mistyped word (edit distance,
 *  a transposition counting one; a name the word begins is near too). The word is borrowed. */
typedef struct sh_near {
    const char *word;
    size_t len;
    const char *best; ///< borrowed from the caller's names
    unsigned dist;
} sh_near;
void sh_near_init(sh_near *n, const char *word, size_t len);
void sh_near_add(sh_near *n, const char *name);
/** " (did you mean X?)" for the closest name within reach, or "": written to buf. */
const char *sh_near_hint(const sh_near *n, const char *prefix, char *buf, size_t size);
/** New JSON result object with "command" (the command's full name, whatever abbreviation was typed). */
cJSON *sh_json_new(shell *sh, sh_args *a);
/** Adds elapsed_ms, prints the object as one line, frees it. */
void sh_json_emit(shell *sh, cJSON *o);
/** Prints a result whose fields are all strings: key, value, ..., NULL (borrowed). */
void sh_json_strings(shell *sh, sh_args *a, ...);
/** Adds a JSON number from uint64. */
void sh_json_u64(cJSON *o, const char *k, uint64_t v);
/** ANSI sequence if colour is on, else "". */
const char *sh_c(shell *sh, const char *ansi);
#define SH_BOLD "\033[1m"
#define SH_RED "\033[31m"
#define SH_GREEN "\033[32m"
#define SH_YELLOW "\033[33m"
#define SH_CYAN "\033[36m"
#define SH_DIM "\033[2m"
#define SH_HL "\033[1;30;43m"
#define SH_HL2 "\033[1;30;46m"
#define SH_RESET "\033[0m"

/** Seconds on the monotonic clock. */
static inline double sh_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
/** Times a library call: accumulates into sh->elapsed. */
#define SH_TIMED(sh, expr) ({ double t0_ = sh_clock(); __typeof__(expr) r_ = (expr); (sh)->elapsed += sh_clock() - t0_; r_; })

/* ---- reading a line (repl.c): the library's command-line reader and codec ---- */
/** Reads a line into command word, words and options: the options of an operation's command
 *  are its fields (ig_fields_lookup), those of any other its own table. Returns 0 or fails
 *  with a caret message (unterminated quote, bad escape, unknown option). */
int sh_parse(shell *sh, const char *line, const sh_cmd *cmd, sh_args *a);
/** Tokenises just the command word (for lookup). Returns malloc'd word or NULL. */
char *sh_first_word(const char *line);
void sh_args_free(sh_args *a);

/* ---- options of the shell's own commands, and messages about a line (args.c) ---- */
/** Option value or NULL; marks it used. Last occurrence wins. */
sh_optval *sh_opt_get(sh_args *a, const char *name);
int sh_opt_has(sh_args *a, const char *name);
/** Integer option within [min, max]; *out untouched when absent. */
int sh_opt_int(shell *sh, sh_args *a, const char *name, long long min, long long max, long long *out);
/** Size option ("512M", "1G", "4096"). */
int sh_opt_size(shell *sh, sh_args *a, const char *name, uint64_t *out);
int sh_parse_size(const char *s, uint64_t *out);
/** Expands a leading "~/" of an unquoted word to $HOME, as a shell would. */
void sh_expand_tilde(sh_word *w);
/** A word naming a file: refused (reported, SH_ERR) when it holds a NUL byte, else ~ expanded. */
int sh_path_arg(shell *sh, sh_args *a, sh_word *w);
/** Reports a failed ig_line_read (sh_parse): the caret under the word, and for an unknown
 *  option the nearest the command has. Returns SH_ERR. */
int sh_parse_fail(shell *sh, sh_args *a, const ig_error *e);
/** Reports a usage error: `why` (may be NULL), then the command row's own usage line (the one
 *  :help shows). Returns SH_ERR. */
int sh_fail_usage(shell *sh, sh_args *a, const char *why);
/** Reports a failed ig_fields_from_line (sh_fill_opts): the caret under the word, the usage
 *  line for a missing or an extra argument. Returns SH_ERR. */
int sh_fill_fail(shell *sh, sh_args *a, const sh_cmd *c, const ig_line_fill *fill, const ig_error *e);
/* (repl.c) */
/** Fills an operation's options from the parsed words and options through its field
 *  table: options by name, positional fields from the words. *given (may be NULL) gets
 *  bit i set for each field i that was written. Reports errors naming the option. */
int sh_fill_opts(shell *sh, sh_args *a, const sh_cmd *c, void *opts, uint64_t *given);
/** Defaults, then the options of the command line (a dataset must be loaded); on failure
 *  reports it and leaves nothing allocated. */
int sh_op_begin(shell *sh, sh_args *a, const ig_op *op, void *opts, uint64_t *given);
/** Bit of field `name` in a `given` mask (0 when there is no such field). */
uint64_t sh_field_bit(const ig_op *op, const char *name);
/** Runs an operation (timed); reports a failure, with {field} names spelled as options. */
int sh_op_run(shell *sh, sh_args *a, const ig_op *op, const void *opts, void *result);
/** sh_op_run of an operation that reports its progress through the options' callback and user
 *  pointer (*progress, *user: set for the run, NULL after): a bar labelled with the operation's
 *  name when progress display is on; Ctrl-C stops it. */
int sh_op_run_progress(shell *sh, sh_args *a, const ig_op *op, void *opts, void *result,
                       int (**progress)(void *user, uint64_t done, uint64_t total), void **user);
/** Prints the result as the command's JSON line (command, the writer's members, elapsed_ms). */
/** Prints the result as one JSON line; SH_ERR (out_of_memory) when it cannot be written. */
int sh_op_json(shell *sh, sh_args *a, const ig_op *op, const void *opts, const void *result);
/** What one operation command adds to the shape every one shares (sh_face_run); the
 *  operation is the command row's. Each hook but render may be NULL; `self` is the command's
 *  own state, passed through untouched. */
struct sh_face {
    /** After the options are filled, before the run: the command's checks of its words and
     *  what the shell supplies itself (a file's bytes, the last generation). Reports its own
     *  failure; whatever it puts in the options is freed with them. */
    int (*prepare)(shell *sh, sh_args *a, void *opts, uint64_t given, void *self);
    /** Runs the operation in place of sh_op_run (a progress bar, a file written from the
     *  result); on failure reports it and leaves the result holding nothing. */
    int (*run)(shell *sh, sh_args *a, void *opts, void *result, void *self);
    /** The text form of the result (JSON mode prints sh_op_json's line instead). */
    void (*render)(shell *sh, const void *opts, const void *result, uint64_t given, void *self);
    /** After either form is printed, before the result is freed: may take the result's
     *  buffers; SH_ERR (reported) fails the command though its output stands. */
    int (*finish)(shell *sh, sh_args *a, void *result, void *self);
};
/** An operation command: defaults and options (sh_op_begin), prepare, run, the result as JSON
 *  or as render prints it, finish, then the result and the options freed (the storage of both
 *  is made here, of the operation's sizes; nothing stays allocated on return). */
int sh_face_run(shell *sh, sh_args *a, const sh_face *f, void *self);
/** Reports a library error whose message may name fields as {name} (shown as --name). */
int sh_fail_field(shell *sh, sh_args *a, const ig_error *e);
/** Requires between min and max positional words; prints usage otherwise. */
int sh_need_words(shell *sh, sh_args *a, int min, int max, const char *usage);
/** Fails (usage) unless a dataset is loaded. */
int sh_need_index(shell *sh, sh_args *a);

/* ---- rendering (render.c) ---- */
/** "4.3 MB" style (decimal units). */
void sh_fmt_bytes(uint64_t n, char *buf, size_t len);
/** Progress callback for builds (draws on stderr when enabled). */
int sh_progress_cb(void *user, const ig_progress *p);
void sh_progress_clear(shell *sh);
void sh_print_snippet2(shell *sh, const char *s, const size_t hl[3]);
/** Prints a snippet with its match highlighted (colour only when enabled). */
void sh_print_snippet(shell *sh, const char *s, size_t hl0, size_t hl1);
/** Display width of UTF-8 text (characters). */
size_t sh_display_width(const char *s);
/** Shortens a name to at most max characters, keeping its end ("…/dir/file.txt"). */
void sh_short_name(const char *name, size_t max, char *buf, size_t len);
/** Replaces each control byte of the NUL-terminated s (a file name to print) by '?', in place. */
void sh_controls_hidden(char *s);
/** sh_short_name of document `doc`'s name, after its member's name when the loaded dataset
 *  is composed ("web:…/a.txt"), and "#N" after it when the document is line or record N of
 *  its source (`source_line`, 0 when it is a whole file). */
void sh_doc_label(shell *sh, uint64_t doc, const char *name, uint64_t source_line, size_t max, char *buf,
                  size_t len);
/** Quotes text for display ("..." with C escapes for control bytes). */
char *sh_quote(const char *p, size_t n);

/** Draws a generic progress bar on stderr (only when progress display is on). */
void sh_progress_draw(shell *sh, const char *label, uint64_t done, uint64_t total);

/* ---- models (cmd-model.c) ---- */
const char *sh_model_name(const ig_model *m, char *buf, size_t n);
/** A proportional bar of `width` cells (eighth-block resolution). */
void sh_bar(shell *sh, double frac, int width);
void sh_symbol_text(const uint8_t *b, int len, char *out, size_t n);
void sh_print_context(shell *sh, const uint8_t *ctx, size_t len, uint64_t matched);
/** The head of a distribution's listing (predict, explain): the context with its longest
 *  matched suffix highlighted, then the model, effective n, suffix count and sparseness. */
void sh_print_dist_head(shell *sh, const uint8_t *ctx, size_t len, const ig_dist *d, const ig_model *m, int sparse);
/* ---- dispatch (repl.c) ---- */
/** Exact name or unique prefix; reports unknown/ambiguous through `report` when non-NULL. */
const sh_cmd *sh_find_cmd(shell *sh, const char *word, sh_args *report);
/** Runs one command line: lookup, parse, the handler, the timer line. */
int sh_run_line(shell *sh, const char *line);
/* ---- help and man page from the command table (commands.c) ---- */
void sh_print_usage(shell *sh, const sh_cmd *c, FILE *f);
void sh_dump_man(FILE *f);
void sh_print_program_help(FILE *f);
/** The program's option names ("-d --dataset ..."), space-separated, for completion. */
void sh_program_option_words(FILE *f);
/** The bash completion script (completion.c). */
void sh_dump_bash(FILE *f);

/* ---- settings (settings.c) ---- */
const sh_setting *sh_setting_find(const char *key);
/** The session's value of a setting; malloc'd. Precedence for a command's option:
 *  the option on its command line > :set in this session > the saved value (interactive
 *  sessions, or --saved-settings) > the default. */
char *sh_setting_value(shell *sh, const char *key);
/** Loads every setting into the session once: saved values when use_saved, else defaults. */
int sh_settings_init(shell *sh, int use_saved);
void sh_settings_free(shell *sh);
/** Sets a setting's value for this session only (and applies it); -1 when out of memory. */
int sh_setting_session_set(shell *sh, const sh_setting *s, const char *value);
/** Applies a setting to the session (format, timer, color). */
int sh_setting_apply(shell *sh, const char *key, const char *value);

/* ---- sessions (cmd-build.c) ---- */
int sh_load_dataset(shell *sh, sh_args *a, const char *name, cJSON *json);
int sh_build_dataset(shell *sh, sh_args *a, const char *name, const ig_build_options *bo, cJSON *json);

/* ---- REPL (repl.c) ---- */
int sh_repl(shell *sh);
void sh_install_signals(void);
/** Whether a system call SIGINT interrupts resumes (1, the default) or fails with EINTR (0):
 *  a script waiting for its next line must see Ctrl-C. */
void sh_sigint_restarts(int restart);

/* handlers */
int cmd_dataset(shell *sh, sh_args *a);
/* the operation commands that are their face alone (a command row with run NULL) */
extern const sh_face sh_count_face, sh_predict_face, sh_backoff_face, sh_eval_face,
    sh_generate_face, sh_explain_face, sh_spans_face, sh_doc_face;
int cmd_build(shell *sh, sh_args *a);
int cmd_load(shell *sh, sh_args *a);
int cmd_prob(shell *sh, sh_args *a);
int cmd_contam(shell *sh, sh_args *a);
int cmd_dups(shell *sh, sh_args *a);
int cmd_search(shell *sh, sh_args *a);
int cmd_mix(shell *sh, sh_args *a);
int cmd_serve(shell *sh, sh_args *a);
int cmd_set(shell *sh, sh_args *a);
int cmd_show(shell *sh, sh_args *a);
int cmd_timer(shell *sh, sh_args *a);
int cmd_format(shell *sh, sh_args *a);
int cmd_help(shell *sh, sh_args *a);
/** `:help NAME`'s answer for command c (text, or JSON in JSON mode); also `NAME --help`. */
int sh_show_help(shell *sh, sh_args *a, const sh_cmd *c);
int cmd_quit(shell *sh, sh_args *a);

/** A token dataset's context (ids len bytes) shown through its vocabulary, the last `longest`
 *  tokens highlighted. */
void sh_print_token_context(shell *sh, const uint8_t *ctx, size_t len, uint64_t longest);
/** "ID \"text\"" of the token whose tw little-endian bytes are at b, into buf (n bytes). */
void sh_token_label(shell *sh, const uint8_t *b, uint32_t tw, char *buf, size_t n);

#endif
