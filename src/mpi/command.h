/*
 * Rank 0's commands: a command line split into words, an operation's options filled from
 * them through its field table (or, while serving, taken as the server decoded them), and the
 * answer written as one JSON line per command, shaped as `infinigram --json` writes it (or, while
 * serving, kept for the server). A failure is written as the command's error, its {field} names
 * rendered as the shell renders them.
 */
#ifndef IG_MPI_COMMAND_H
#define IG_MPI_COMMAND_H

#include "cluster.h"

/* Output: one JSON line per command, as infinigram --json writes it. */
/* serve: a command's answer is kept for the server instead of printed (its members, or its
 * error with the library's {field} names, which the server writes its own way). */
typedef struct captured_answer {
    int on;
    char *members;
    int failed;
    ig_error err;
} captured_answer;

extern captured_answer captured;

/* Writes a command's answer, its JSON members `members` (the caller's), with the time since t0:
 * as one line on standard output, or while serving kept in `captured`. */
void emit(const char *cmd, const char *members, double t0);

/* Writes the command's error (code, and the message formatted from fmt, as it is: it may quote
 * the line or a file name) as emit writes an answer, and marks the job failed. Always -1, so
 * that a command can return it. */
int fail(const char *cmd, int code, double t0, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* fail of a library error, whose message names fields as {name}: spelled as the shell spells
 * them (--name), as the shell reports an operation's error. */
int fail_error(const char *cmd, const ig_error *e, double t0);

/* Prints the answer made of a result's JSON members (malloc'd by the operation's writer; NULL
 * when writing them ran out of memory, which is then the command's error). Frees them. */
int emit_answer(const char *cmd, char *members, double t0);

/* One round trip of request q (freed) to every rank, its first failing reply written as the
 * command's error (report_failures). 0, or -1; the replies are the caller's to free. */
int ask_all_or_fail(const char *cmd, double t0, wire *q, uint8_t **rep, size_t *nrep);

/* The end of an operation's command: its error (rc not 0, message in *e) written by fail, or
 * its answer, the operation's JSON writer over opts and result (both the caller's), written by
 * emit_answer. 0, or -1 when the command failed. */
int answer_or_fail(const ig_op *op, int rc, const ig_error *e, const void *opts, const void *result, double t0);

/* The first failing reply among ranks [from, to) as the command's error (replies_error, then
 * fail): 0 when none failed, else -1. The replies stay the caller's. */
int report_failures(const char *cmd, double t0, uint8_t **rep, size_t *nrep, int from, int to);

/* Words of a command line: bare words, or "..." with \n \t \\ \" \xHH escapes. Each word is
 * malloc'd (exact bytes: a quoted word may hold a NUL). */
typedef struct words {
    char **w;
    size_t *len;
    size_t n;
    const char *line;  ///< the line split
    size_t *at, *end;  ///< each word's source in it: line[at, end), quotes and escapes included
    size_t *quoted;    ///< non-zero: written as "..." (len, at, end and quoted are one allocation, at len)
} words;

/* Frees the words and their arrays, and zeroes *ws (the caller's struct). */
void words_free(words *ws);

/* Splits line s (the caller's, referred to by ws->line) into *ws with the shell's tokenizer
 * (ig_words_split: the same escapes, and for search the same query grammar), which the
 * caller frees with words_free, also on failure. 0, or -1 with why[0, whylen) saying what is
 * wrong (an unterminated quote, an invalid escape, memory). */
int split(const char *s, words *ws, char *why, size_t whylen);

/* serve: the request's options, decoded by the server through the same field table (taken by
 * fill_opts, which then zeroes them: the command frees what it took). */
extern void *preset;

/* Fills an operation's options from the line ws was split from, by its field table, with the
 * shell's reader and codec (ig_line_read, ig_fields_from_line: the same options, spellings and
 * messages as the shell); with ws NULL, takes `preset`. What it sets in opts is the caller's to free
 * (ig_fields_free), also on failure. 0, or the error in *e. */
int fill_opts(const ig_op *op, void *opts, const words *ws, ig_error *e);

/* Reads the line ws was split from with the shell's reader (ig_line_read) against `table` (the
 * options of a command of the program's own: build, :dataset add, load): the
 * same spellings (--name=VALUE, --) and messages, and as the shell a NUL byte in any word is
 * refused (names and paths are C strings). 0, or -1 reported (fail); ig_line_free *l either way. */
int read_own(const char *cmd, const words *ws, const ig_option *table, ig_line *l, double t0);

/* Whether field `field` of op was given on the line ws was split from as a quoted word (a file
 * named "~/x" is not expanded, as in the shell); 0 when not given, or with ws NULL. */
int value_quoted(const ig_op *op, const words *ws, const char *field);

/* The value of option `name` of a line read_own read (the last given; "" for a switch), or NULL. */
const char *own_value(const ig_line *l, const char *name);

/* The word after the first word `name` (an option's value, in ws's memory), or NULL. */
const char *opt_value(const words *ws, const char *name);

/* 0 when every rank's part of a dataset is loaded; else writes the command's error: -1. */
int need_loaded(const char *cmd, double t0);

/* Text p[0, n) normalised as the loaded part's sources were (ig_query_normalize; *out
 * malloc'd); p NULL, an option not given, is the empty text. */
int normalize_text(const uint8_t *p, size_t n, uint8_t **out, size_t *len, ig_error *e);

/* The start of operation op's command: its options at their defaults (the caller's to free
 * with ig_fields_free once filled), its result zeroed unless NULL, and need_loaded. */
int cmd_begin(const ig_op *op, void *opts, void *result, double t0);

#endif
