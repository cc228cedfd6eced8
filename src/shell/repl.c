/*
 * The interactive loop: GNU readline with completion generated from the command table
 * (commands, sub-commands, options, dataset names from the catalog, setting keys, and
 * file paths), history saved after every command, and Ctrl-C that cancels the running
 * command or clears the line being typed — never the shell. The dispatcher is here too:
 * every face of the shell (prompt, -c, -f, piped input) runs a line through sh_run_line,
 * which finds the command by unique prefix and reads the line with the library's reader
 * (ig_line_read: the one tokenizer, which the cluster program shares). A command of an
 * operation then goes parse → operation → render here (sh_face_run): the library's codec
 * fills the options from the line (ig_fields_from_line), the operation runs, and the
 * command's face renders; the shell's own commands get the words and options as handlers.
 */
#include <ctype.h>
#include <errno.h>
#include <sys/select.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell.h"

volatile sig_atomic_t sh_interrupted, sh_sigints;
static volatile sig_atomic_t got_tstp, got_winch;
static shell *completion_shell; /* readline's callbacks take no user data */

/* Handlers only set flags: the REPL loop (readline's callback interface) sees the
 * interrupted select() and does the terminal work outside signal context. */
static void on_sigint(int sig)
{
    (void)sig;
    sh_interrupted = 1;
    sh_sigints = 1;
}
static void on_sigtstp(int sig) { (void)sig; got_tstp = 1; }
static void on_sigwinch(int sig) { (void)sig; got_winch = 1; }

static void set_handler(int sig, void (*fn)(int), int restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(sig, &sa, NULL);
}

void sh_sigint_restarts(int restart) { set_handler(SIGINT, on_sigint, restart); }

void sh_install_signals(void)
{
    set_handler(SIGINT, on_sigint, 1);
    /* a file-size limit must turn into a write error we can report, not a crash */
    signal(SIGXFSZ, SIG_IGN);
}

/* ---- completion ---- */

typedef struct cand_list {
    char **v;
    size_t n, i;
} cand_list;

static cand_list cands;

static void cands_reset(void)
{
    for (size_t i = 0; i < cands.n; i++)
        free(cands.v[i]);
    free(cands.v);
    memset(&cands, 0, sizeof cands);
}

static void cands_add(const char *prefix, const char *s)
{
    if (strncmp(s, prefix, strlen(prefix)))
        return;
    char **v = realloc(cands.v, (cands.n + 1) * sizeof *v);
    if (!v)
        return;
    cands.v = v;
    cands.v[cands.n++] = strdup(s);
}

static char *cand_gen(const char *text, int state)
{
    (void)text;
    if (state == 0)
        cands.i = 0;
    return cands.i < cands.n ? strdup(cands.v[cands.i++]) : NULL;
}

static void add_datasets(const char *prefix)
{
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (completion_shell && !ig_catalog_list(completion_shell->cat, &list, &n, &e)) {
        for (size_t i = 0; i < n; i++)
            cands_add(prefix, list[i].name);
        ig_dataset_list_free(list, n);
    }
}

static void add_alternatives(const char *prefix, const char *alts)
{
    char *copy = strdup(alts), *save = NULL;
    for (char *w = strtok_r(copy, "|", &save); w; w = strtok_r(NULL, "|", &save))
        cands_add(prefix, w);
    free(copy);
}

/* Last space-separated word of s (s is modified). */
static const char *last_word(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    char *sp = strrchr(s, ' ');
    return sp ? sp + 1 : s;
}

/* Whether an option's or argument's placeholder names a file ("FILE", "FILE|JSON", "DIR",
 * "M.model"). */
static int names_file(const char *arg) { return strstr(arg, "FILE") || strstr(arg, "DIR") || strstr(arg, ".model"); }

static char **complete(const char *text, int start, int end)
{
    (void)end;
    cands_reset();
    rl_attempted_completion_over = 1;
    /* words before the one being completed */
    char *head = strndup(rl_line_buffer, (size_t)start);
    char *words[4] = {0};
    int nw = 0;
    for (char *save = NULL, *w = strtok_r(head, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        if (nw < 4 && w[0] != '-' && w[0] != '"')
            words[nw++] = w;
    const sh_cmd *cmd = nw ? sh_find_cmd(completion_shell, words[0], NULL) : NULL;
    /* the value of an option with listed alternatives ("text|lines|jsonl") */
    char *head2 = strndup(rl_line_buffer, (size_t)start);
    const char *prev = start > 0 ? last_word(head2) : NULL;
    const sh_opt *vo = NULL;
    int file = 0; /* the word names a file: readline's own file-name completion */
    for (const sh_opt *o = cmd && prev && !strncmp(prev, "--", 2) ? sh_cmd_opts(cmd) : NULL; o && o->name; o++)
        if (!strcmp(o->name, prev + 2) && o->arg) {
            if (names_file(o->arg))
                file = 1;
            else if (strchr(o->arg, '|'))
                vo = o;
        }
    /* an operation's argument that is a file (eval FILE, contam FILE), unless quoted text */
    for (const ig_field *f = cmd && cmd->op && !file && !vo && nw >= 1 && text[0] != '"' && text[0] != '-' &&
                                     !(prev && !strncmp(prev, "--", 2))
                                 ? cmd->op->fields
                                 : NULL;
         f && f->name; f++)
        file |= (f->flags & IG_FIELD_POSITIONAL) && f->arg && names_file(f->arg);
    if (file) {
        rl_attempted_completion_over = 0;
        free(head);
        free(head2);
        return NULL;
    }
    if (vo) {
        add_alternatives(text, vo->arg);
    } else if (nw == 0) {
        for (size_t i = 0; i < sh_ncmds; i++)
            cands_add(text, sh_cmds[i].name);
    } else if (cmd && text[0] == '-') {
        for (const sh_opt *o = sh_cmd_opts(cmd); o && o->name; o++) {
            char buf[64];
            snprintf(buf, sizeof buf, "--%s", o->name);
            cands_add(text, buf);
        }
    } else if (cmd && cmd->subs && nw == 1) {
        for (const char *const *s = cmd->subs; *s; s++)
            cands_add(text, *s);
    } else if (cmd && cmd->subs) {
        const char *sub = words[1];
        if ((!strcmp(sub, "add") || !strcmp(sub, "attach")) && nw >= 3) {
            rl_attempted_completion_over = 0; /* sources: file names */
            free(head);
            free(head2);
            return NULL;
        }
        if (strcmp(sub, "add") && strcmp(sub, "list") && nw == 2)
            add_datasets(text);
    } else if (cmd && (!strcmp(cmd->name, "load") || !strcmp(cmd->name, "build")) && nw == 1) {
        add_datasets(text);
    } else if (cmd && (!strcmp(cmd->name, ":set") || !strcmp(cmd->name, ":show")) && nw == 1) {
        for (size_t i = 0; i < sh_nsettings; i++)
            cands_add(text, sh_settings[i].key);
    } else if (cmd && !strcmp(cmd->name, ":set") && nw == 2) {
        const sh_setting *st = sh_setting_find(words[1]);
        if (st && st->values)
            add_alternatives(text, st->values);
    } else if (cmd && !strcmp(cmd->name, ":help") && nw == 1) {
        for (size_t i = 0; i < sh_ncmds; i++)
            cands_add(text, sh_cmds[i].name);
    } else if (cmd && (!strcmp(cmd->name, ":timer"))) {
        cands_add(text, "on");
        cands_add(text, "off");
    } else if (cmd && (!strcmp(cmd->name, ":format"))) {
        cands_add(text, "table");
        cands_add(text, "json");
    }
    free(head);
    free(head2);
    return rl_completion_matches(text, cand_gen);
}

static char *history_path(shell *sh)
{
    const char *env = getenv("INFINIGRAM_HISTFILE");
    if (env)
        return strdup(env);
    size_t n = strlen(sh->home) + 16;
    char *p = malloc(n);
    snprintf(p, n, "%s/history", sh->home);
    return p;
}

/* Whether a command line ends inside a quoted text, as the shell's words are read (a quote
 * opens one only where a word starts; a comment line has none). */
static int open_quote(const char *line)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '#')
        return 0;
    char *arena = malloc(2 * strlen(line) + 1);
    ig_word *w = NULL;
    size_t nw = 0, col = 0;
    ig_error e;
    int open = arena && ig_words_split(line, 0, arena, &w, &nw, &col, &e) == IG_EUSAGE &&
               !strcmp(e.msg, "unterminated quote");
    free(arena);
    free(w);
    return open;
}

/* Adds a command line to the history (not a blank one, nor the last one again) and to the
 * history file; a file that cannot be written is said once and no longer tried. */
static void remember(const char *line, const char *hist, int *save_hist, shell *sh)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
    if (!*p || (last && !strcmp(last->line, line)))
        return;
    add_history(line);
    int werr = 0;
    if (*save_hist && append_history(1, hist) != 0 && (werr = write_history(hist)) != 0) {
        /* (append fails the first time, before the file exists; write then makes it) */
        sh_warn(sh, "cannot save history to %s: %s; history is not kept", hist, strerror(werr));
        *save_hist = 0;
    }
}

static char *line_read;
static int line_done;

static void on_line(char *line)
{
    line_read = line;
    line_done = 1;
    rl_callback_handler_remove();
}

/* Reads one line with the callback interface, so that Ctrl-C can abandon any readline
 * state (incremental search, completion query) cleanly. Returns NULL at end of input. */
/* Called by readline when a read inside one of its own nested prompts (the
 * "Display all N possibilities?" query, the --More-- pager) is interrupted: answer
 * "no" so that it returns to our loop, which then clears the line. */
static int on_signal_event(void)
{
    if (sh_interrupted && RL_ISSTATE(RL_STATE_COMPLETING))
        rl_stuff_char('n');
    return 0;
}

static char *read_line(const char *prompt)
{
    line_read = NULL;
    line_done = 0;
    sh_interrupted = 0; /* a Ctrl-C that cancelled the last command is spent */
    rl_signal_event_hook = on_signal_event;
    set_handler(SIGINT, on_sigint, 0); /* let select() be interrupted */
    set_handler(SIGTSTP, on_sigtstp, 0);
    set_handler(SIGWINCH, on_sigwinch, 0);
    rl_callback_handler_install(prompt, on_line);
    while (!line_done) {
        int r = 0;
        if (!sh_interrupted && !got_tstp && !got_winch) {
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(fileno(rl_instream), &fds);
            r = select(fileno(rl_instream) + 1, &fds, NULL, NULL, NULL);
            if (r < 0 && errno != EINTR)
                break;
        }
        if (sh_interrupted) {
            sh_interrupted = 0;
            rl_callback_sigcleanup();
            rl_free_line_state();
            rl_replace_line("", 0);
            rl_point = rl_end = 0;
            fputs("^C", rl_outstream);
            rl_crlf();
            rl_on_new_line();
            rl_redisplay();
        }
        if (got_tstp) {
            got_tstp = 0;
            rl_deprep_terminal();
            signal(SIGTSTP, SIG_DFL);
            raise(SIGTSTP); /* stops here until fg */
            set_handler(SIGTSTP, on_sigtstp, 0);
            rl_prep_terminal(1);
            rl_forced_update_display();
        }
        if (got_winch) {
            got_winch = 0;
            rl_resize_terminal();
        }
        if (r > 0)
            rl_callback_read_char();
    }
    if (!line_done)
        rl_callback_handler_remove();
    signal(SIGTSTP, SIG_DFL);
    signal(SIGWINCH, SIG_DFL);
    set_handler(SIGINT, on_sigint, 1);
    return line_read;
}

int sh_repl(shell *sh)
{
    completion_shell = sh;
    rl_readline_name = "infinigram";
    rl_attempted_completion_function = complete;
    rl_completer_word_break_characters = " \t\n";
    rl_completer_quote_characters = "\"";
    rl_filename_quote_characters = " \t\"\\";
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    char *hist = history_path(sh);
    int save_hist = hist && strcmp(hist, "/dev/null") != 0;
    struct stat hst;
    if (save_hist && stat(hist, &hst) == 0 && !S_ISREG(hst.st_mode)) {
        /* readline would wait on a FIFO for a writer before the first prompt; /dev/null by
         * another name (a link to it) is the documented way to keep none, said by nothing */
        struct stat null;
        if (!(S_ISCHR(hst.st_mode) && stat("/dev/null", &null) == 0 && null.st_rdev == hst.st_rdev))
            sh_warn(sh, "%s is not a regular file (a directory, device or FIFO): history is not kept", hist);
        save_hist = 0;
    }
    if (save_hist) {
        using_history();
        read_history(hist);
        stifle_history(2000);
    }
    for (;;) {
        char prompt[160];
        snprintf(prompt, sizeof prompt, "infinigram%s%s%s> ", sh->current ? "[" : "",
                 sh->current ? sh->current : "", sh->current ? "]" : "");
        char *line = read_line(prompt);
        if (!line) {
            fputc('\n', sh->out);
            break;
        }
        /* A paste of several lines arrives as one (readline's bracketed paste): each line is
         * a command, as if typed and entered one by one, unless it ends inside a quoted text,
         * whose newline is then part of the text. */
        int rc = SH_OK;
        for (char *cmd = line, *q = line;; q++) {
            if (*q && *q != '\n')
                continue;
            int last_piece = !*q;
            *q = '\0';
            if (!last_piece && open_quote(cmd)) {
                *q = '\n';
                continue;
            }
            remember(cmd, hist, &save_hist, sh);
            rc = sh_run_line(sh, cmd);
            if (last_piece || rc == SH_EXIT)
                break;
            cmd = q + 1;
        }
        free(line);
        if (rc == SH_EXIT)
            break;
    }
    if (save_hist)
        history_truncate_file(hist, 2000);
    free(hist);
    cands_reset();
    return SH_OK;
}

/* ---------------------------------------------------------------- dispatch */

const sh_cmd *sh_find_cmd(shell *sh, const char *word, sh_args *report)
{
    const sh_cmd *hit = NULL;
    int nhits = 0;
    size_t n = strlen(word);
    for (size_t i = 0; i < sh_ncmds; i++) {
        if (!strcmp(sh_cmds[i].name, word))
            return &sh_cmds[i];
        /* unique prefixes, but a prefix of ":" commands must keep the colon */
        if (n > 0 && !strncmp(sh_cmds[i].name, word, n)) {
            hit = &sh_cmds[i];
            nhits++;
        }
    }
    if (nhits == 1)
        return hit;
    if (!report)
        return NULL;
    if (nhits > 1) {
        char list[512] = "";
        for (size_t i = 0; i < sh_ncmds; i++)
            if (!strncmp(sh_cmds[i].name, word, n)) {
                strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, sh_cmds[i].name, sizeof list - strlen(list) - 1);
            }
        sh_fail(sh, report, "usage", "ambiguous command \"%s\", could be: %s", word, list);
    } else {
        sh_near near;
        sh_near_init(&near, word, n);
        for (size_t i = 0; i < sh_ncmds; i++)
            sh_near_add(&near, sh_cmds[i].name);
        char hint[96];
        /* what other shells leave with (exit, bye, \q) is no command's misspelling */
        int leave = (n == 4 && !strncmp(word, "exit", 4)) || (n == 3 && !strncmp(word, "bye", 3)) ||
                    (n == 2 && !strncmp(word, "\\q", 2));
        sh_fail(sh, report, "usage", "unknown command \"%s\"%s. Enter \":help\" for help.", word,
                leave ? " (to leave, :quit or Ctrl-D)" : sh_near_hint(&near, NULL, hint, sizeof hint));
    }
    return NULL;
}

char *sh_first_word(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    size_t n = 0;
    while (line[n] && !isspace((unsigned char)line[n]))
        n++;
    return n ? strndup(line, n) : NULL;
}

int sh_parse(shell *sh, const char *line, const sh_cmd *cmd, sh_args *a)
{
    memset(a, 0, sizeof *a);
    a->def = cmd;
    a->line = strdup(line);
    a->cmd = sh_first_word(line); /* before reading the line, so errors can name the command */
    if (!a->line || !a->cmd)
        return sh_fail(sh, a, "internal", "out of memory reading the command line");
    int grammar = 0;
    for (const ig_field *f = cmd && cmd->op ? cmd->op->fields : NULL; f && f->name; f++)
        grammar |= (f->flags & IG_FIELD_GRAMMAR) != 0;
    ig_error e;
    ig_line *l = &a->parsed;
    int rc = cmd && cmd->op ? ig_line_read(line, grammar, ig_fields_lookup, cmd->op->fields, cmd->name, l, &e)
                            : ig_line_read(line, grammar, ig_options_lookup, cmd ? cmd->opts : NULL, cmd ? cmd->name : a->cmd, l, &e);
    if (rc)
        return sh_parse_fail(sh, a, &e);
    a->help = l->help;
    if ((l->nargs && !(a->words = calloc(l->nargs, sizeof *a->words))) ||
        (l->nopts && !(a->opts = calloc(l->nopts, sizeof *a->opts))))
        return sh_fail(sh, a, "internal", "out of memory reading the command line");
    for (size_t i = 0; i < l->nargs; i++)
        a->words[a->nwords++] = (sh_word){l->args[i].text, l->args[i].len, l->args[i].quoted, l->args[i].col, 0};
    for (size_t i = 0; i < l->nopts; i++) {
        const ig_line_opt *o = &l->opts[i];
        /* the name as typed: the table's own for the shell's commands, with dashes for an operation's */
        a->opts[a->nopts++] = (sh_optval){o->typed, {o->has_value ? o->value.text : NULL, o->value.len, o->value.quoted,
                                                     o->value.col, 0}, o->col, 0};
    }
    if (cmd && !cmd->op && ig_line_names(l, &e)) /* names, paths and settings: an operation's text may hold NULs */
        return sh_fail_at(sh, a, l->errcol, "usage", "%s", e.msg);
    return SH_OK;
}

void sh_args_free(sh_args *a)
{
    for (int i = 0; i < a->nwords; i++)
        if (a->words[i].heap)
            free(a->words[i].text);
    for (int i = 0; i < a->nopts; i++)
        if (a->opts[i].value.heap)
            free(a->opts[i].value.text);
    free(a->words);
    free(a->opts);
    ig_line_free(&a->parsed);
    free((char *)a->cmd);
    free(a->line);
    memset(a, 0, sizeof *a);
}

/* ---- an operation's command: options, run, answer ---- */

int sh_fill_opts(shell *sh, sh_args *a, const sh_cmd *c, void *opts, uint64_t *given)
{
    const ig_op *op = c->op;
    ig_error e;
    /* a setting named like a field is its default ("none": the operation's own) */
    for (size_t i = 0; sh->settings && i < sh_nsettings; i++)
        (void)ig_field_setting(op->fields, opts, sh_settings[i].key, sh->settings[i], &e); /* checked by :set */
    ig_line_fill fill;
    if (ig_fields_from_line(op->fields, &a->parsed, opts, &fill, &e))
        return sh_fill_fail(sh, a, c, &fill, &e);
    for (int i = 0; i < a->nopts; i++) /* every option of an operation is one of its fields */
        a->opts[i].used = 1;
    if (fill.single_quoted && !sh->server)
        sh_warn(sh, "the single quotes are part of %s here (quote with \"...\" to leave them out)",
                fill.single_quoted->arg ? fill.single_quoted->arg : fill.single_quoted->name);
    if (given)
        *given = fill.given;
    return SH_OK;
}

int sh_need_index(shell *sh, sh_args *a)
{
    if (!sh->idx)
        return sh_fail(sh, a, "usage", "no dataset loaded (use: load NAME)");
    ig_error e;
    /* a token index's files or tokenizer may change under us; a built one is replaced whole */
    if (sh->idx_tokens && ig_index_changed(sh->idx, &e))
        return sh_fail_ig(sh, a, &e);
    return SH_OK;
}

int sh_op_begin(shell *sh, sh_args *a, const ig_op *op, void *opts, uint64_t *given)
{
    op->defaults(opts);
    if (sh_need_index(sh, a) || sh_fill_opts(sh, a, a->def, opts, given)) {
        ig_fields_free(op->fields, opts);
        return SH_ERR;
    }
    return SH_OK;
}

int sh_op_run(shell *sh, sh_args *a, const ig_op *op, const void *opts, void *result)
{
    ig_op_ctx ctx = {sh->idx, sh->current, (const volatile int *)&sh_interrupted};
    ig_error e;
    memset(result, 0, op->result_size);
    if (!sh->idx)
        return sh_fail(sh, a, "usage", "no dataset loaded (use: load NAME)");
    if (SH_TIMED(sh, op->run(&ctx, opts, result, &e))) /* a failed run holds nothing */
        return sh_fail_field(sh, a, &e);
    return SH_OK;
}

int sh_face_run(shell *sh, sh_args *a, const sh_face *f, void *self)
{
    const ig_op *op = a->def->op;
    void *opts = malloc(op->opts_size), *result = malloc(op->result_size);
    uint64_t given = 0;
    if (!opts || !result) {
        free(opts);
        free(result);
        return sh_fail(sh, a, "internal", "out of memory");
    }
    int rc = sh_op_begin(sh, a, op, opts, &given); /* on failure nothing is left allocated */
    if (rc == SH_OK) {
        rc = f->prepare ? f->prepare(sh, a, opts, given, self) : SH_OK;
        if (rc == SH_OK)
            rc = f->run ? f->run(sh, a, opts, result, self) : sh_op_run(sh, a, op, opts, result);
        if (rc == SH_OK) { /* a failed run holds nothing */
            if (sh->json)
                sh_op_json(sh, a, op, opts, result);
            else
                f->render(sh, opts, result, given, self);
            if (f->finish)
                rc = f->finish(sh, a, result, self);
            op->free_result(result);
        }
        ig_fields_free(op->fields, opts);
    }
    free(opts);
    free(result);
    return rc == SH_OK ? SH_OK : SH_ERR;
}

int sh_run_line(shell *sh, const char *line)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#')
        return SH_OK;
    sh->cmdline = (char *)line;
    sh->elapsed = 0;
    sh->t_start = sh_clock();
    if (!sh->server) /* server threads must not swallow the Ctrl-C that stops the server */
        sh_interrupted = 0;
    char *word = sh_first_word(p);
    sh_args a;
    memset(&a, 0, sizeof a);
    a.line = (char *)p;
    a.cmd = word;
    const sh_cmd *cmd = sh_find_cmd(sh, word, &a);
    a.def = cmd;
    int rc;
    if (!cmd) {
        free(word);
        sh->failed = 1;
        return SH_ERR;
    }
    free(word);
    rc = sh_parse(sh, p, cmd, &a);
    if (rc == SH_OK) {
        sh->cmd_failed = 0;
        rc = a.help  ? sh_show_help(sh, &a, cmd)
             : cmd->run ? cmd->run(sh, &a)
                        : sh_face_run(sh, &a, cmd->face, NULL);
        if (sh->cmd_failed) /* an error was reported: the command failed, whatever it returned */
            rc = SH_ERR;
        for (int i = 0; rc == SH_OK && i < a.nopts; i++)
            if (!a.opts[i].used) {
                /* an option the command accepts in general but not in this form */
                sh_warn(sh, "option --%s was ignored", a.opts[i].name);
            }
    }
    if (rc == SH_OK && sh->timer && !sh->json) {
        double ms = sh->fake_clock ? 0 : sh->elapsed * 1e3;
        fprintf(sh->out, "%stime: %.6f ms (engine), %.3f ms (total)%s\n", sh_c(sh, SH_DIM), ms,
                sh->fake_clock ? 0 : (sh_clock() - sh->t_start) * 1e3, sh_c(sh, SH_RESET));
    }
    fflush(sh->out);
    sh_args_free(&a);
    if (rc == SH_ERR)
        sh->failed = 1;
    return rc;
}
