/*
 * The interactive loop: GNU readline with completion generated from the command table
 * (commands, sub-commands, options, dataset names from the catalog, setting keys, and
 * file paths), history saved after every command, and Ctrl-C that cancels the running
 * command or clears the line being typed — never the shell.
 */
#include <errno.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell.h"

volatile sig_atomic_t sh_interrupted;
static volatile sig_atomic_t at_prompt;
static shell *completion_shell; /* readline's completion callbacks take no user data */

static void on_sigint(int sig)
{
    (void)sig;
    sh_interrupted = 1;
    if (at_prompt) {
        /* drop the half-typed line and show a fresh prompt */
        (void)!write(STDOUT_FILENO, "^C\n", 3);
        rl_on_new_line();
        rl_replace_line("", 0);
        rl_redisplay();
    }
}

void sh_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
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
    if (nw == 0) {
        for (size_t i = 0; i < sh_ncmds; i++)
            cands_add(text, sh_cmds[i].name);
    } else if (cmd && text[0] == '-') {
        for (const sh_opt *o = cmd->opts; o && o->name; o++) {
            char buf[64];
            snprintf(buf, sizeof buf, "--%s", o->name);
            cands_add(text, buf);
        }
    } else if (cmd && cmd->subs && nw == 1) {
        for (const char *const *s = cmd->subs; *s; s++)
            cands_add(text, *s);
    } else if (cmd && cmd->subs) {
        const char *sub = words[1];
        if (!strcmp(sub, "add") && nw >= 3) {
            rl_attempted_completion_over = 0; /* sources: file names */
            free(head);
            return NULL;
        }
        if (strcmp(sub, "add") && strcmp(sub, "list") && nw == 2)
            add_datasets(text);
    } else if (cmd && (!strcmp(cmd->name, "load") || !strcmp(cmd->name, "build")) && nw == 1) {
        add_datasets(text);
    } else if (cmd && (!strcmp(cmd->name, ":set") || !strcmp(cmd->name, ":show")) && nw == 1) {
        for (size_t i = 0; i < sh_nsettings; i++)
            cands_add(text, sh_settings[i].key);
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

int sh_repl(shell *sh)
{
    completion_shell = sh;
    rl_readline_name = "infinigram";
    rl_attempted_completion_function = complete;
    rl_completer_word_break_characters = " \t\n";
    rl_catch_signals = 0; /* our handler decides what Ctrl-C means */
    char *hist = history_path(sh);
    int save_hist = strcmp(hist, "/dev/null") != 0;
    if (save_hist) {
        using_history();
        read_history(hist);
        stifle_history(2000);
    }
    int rc = SH_OK;
    for (;;) {
        char prompt[160];
        snprintf(prompt, sizeof prompt, "infinigram%s%s%s> ", sh->current ? "[" : "",
                 sh->current ? sh->current : "", sh->current ? "]" : "");
        sh_interrupted = 0;
        at_prompt = 1;
        char *line = readline(prompt);
        at_prompt = 0;
        if (!line) {
            fputc('\n', sh->out);
            break;
        }
        const char *p = line;
        while (*p == ' ')
            p++;
        if (*p) {
            add_history(line);
            if (save_hist && append_history(1, hist) != 0) {
                /* first run: the file does not exist yet */
                if (write_history(hist) != 0)
                    save_hist = 0;
            }
        }
        rc = sh_run_line(sh, line);
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
