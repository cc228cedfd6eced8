/*
 * Program entry: option parsing, home directory, catalog, and the three ways to run
 * commands (-c/-f scripts, stdin, the interactive REPL), all through one dispatcher.
 * Only the REPL on an empty catalog bootstraps the bundled Tiny Shakespeare dataset;
 * scripts never create datasets by themselves.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell.h"

static char *resolve_home(const char *opt)
{
    const char *env;
    char buf[4096];
    if (opt)
        return strdup(opt);
    if ((env = getenv("INFINIGRAM_HOME")) && *env)
        return strdup(env);
    if ((env = getenv("XDG_DATA_HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/infinigram", env);
        return strdup(buf);
    }
    if ((env = getenv("HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/.local/share/infinigram", env);
        return strdup(buf);
    }
    return NULL;
}

/* The build-tree binary uses the source tree's datasets/; an installed one (its path
 * under the install prefix) uses share/infinigram/datasets. */
static char *resolve_datasets(void)
{
    const char *env = getenv("INFINIGRAM_DATASETS");
    if (env && *env)
        return strdup(env);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    if (n > 0) {
        exe[n] = '\0';
        const char *prefix_share = IG_INSTALL_DATASETS;
        const char *share = strstr(prefix_share, "/share/");
        size_t plen = share ? (size_t)(share - prefix_share) : 0;
        if (plen && !strncmp(exe, prefix_share, plen) && !strncmp(exe + plen, "/bin/", 5) &&
            stat(IG_INSTALL_DATASETS, &st) == 0)
            return strdup(IG_INSTALL_DATASETS);
    }
    if (stat(IG_SOURCE_DATASETS, &st) == 0)
        return strdup(IG_SOURCE_DATASETS);
    return strdup(IG_INSTALL_DATASETS);
}

/* The longest line a script may hold: a command's text is parsed whole, so a file with no
 * line end (a device, a corrupt file) must not be read on into memory. */
#define SH_SCRIPT_LINE_MAX ((size_t)64 << 20)

/* getline with a bound: -1 at the end of the file, -2 (the line read so far kept) when a line
 * is longer than SH_SCRIPT_LINE_MAX, or when memory runs out (errno ENOMEM). */
static ssize_t read_line(FILE *f, char **line, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) {
        if (n + 2 > *cap) {
            if (n >= SH_SCRIPT_LINE_MAX)
                return -2;
            size_t want = *cap ? *cap * 2 : 256;
            char *p = realloc(*line, want);
            if (!p) {
                errno = ENOMEM;
                return -2;
            }
            *line = p;
            *cap = want;
        }
        (*line)[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (!n)
        return -1;
    (*line)[n] = '\0';
    return (ssize_t)n;
}

/* Output that could not be written is a failure, not a success with less output: a full
 * disk, a closed standard output or a file-size limit end the program with status 1 after
 * saying why, as cat does. A standard output closed on purpose (>&-) with nothing written to
 * it is no error. Run at exit, after every path out of main. */
static void close_stdout(void)
{
    int pending = __fpending(stdout) != 0, failed_before = ferror(stdout) != 0;
    errno = 0;
    int close_failed = fclose(stdout) != 0, e = errno;
    if (failed_before || (close_failed && (pending || e != EBADF))) {
        if (e && close_failed)
            fprintf(stderr, "infinigram: cannot write the output: %s\n", strerror(e));
        else
            fprintf(stderr, "infinigram: cannot write the output (some of it is lost)\n");
        _exit(1);
    }
}

static int run_file(shell *sh, FILE *f, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = SH_OK;
    sh->src_name = name;
    sh->lineno = 0;
    /* a read that can wait (a pipe, a terminal) must end at Ctrl-C; a regular file's never
     * waits, and spares the two system calls a line */
    struct stat st;
    int may_wait = fstat(fileno(f), &st) || !S_ISREG(st.st_mode);
    errno = 0;
    for (;;) {
        if (may_wait)
            sh_sigint_restarts(0);
        n = read_line(f, &line, &cap);
        if (may_wait)
            sh_sigint_restarts(1);
        if (n == -1 || sh_sigints)
            break;
        sh->lineno++;
        if (n == -2) { /* nothing after it is read: it may never end */
            sh->cmdline = NULL;
            rc = errno == ENOMEM ? sh_fail(sh, NULL, "out_of_memory", "out of memory reading the line")
                                 : sh_fail(sh, NULL, "usage", "a line longer than %zu MiB: the rest of the file is not read",
                                           SH_SCRIPT_LINE_MAX >> 20);
            sh->failed = 1;
            break;
        }
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (memchr(line, 0, (size_t)n)) { /* the line would end there, unseen */
            sh->cmdline = NULL;
            rc = sh_fail(sh, NULL, "usage", "a NUL byte in the line (write it as \\x00 in a quoted text)");
            sh->failed = 1;
        } else {
            rc = sh_run_line(sh, line);
        }
        if (rc == SH_EXIT || (rc == SH_ERR && sh->bail) || sh_sigints)
            break;
    }
    if (ferror(f) && !sh_sigints) { /* a directory, a failing disk: not a script that ran */
        sh->lineno = 0;
        sh->cmdline = NULL;
        rc = sh_fail(sh, NULL, "io", "%.*s cannot be read: %s", (int)strcspn(name, ":"), name, strerror(errno));
        sh->failed = 1;
    }
    free(line);
    return rc;
}

/* First interactive start on an empty catalog: register, build and load the demo. */
static void bootstrap(shell *sh)
{
    ig_dataset *list = NULL;
    size_t n = 0;
    ig_error e;
    if (ig_catalog_list(sh->cat, &list, &n, &e))
        return;
    ig_dataset_list_free(list, n);
    char *cur = NULL;
    if (n > 0) {
        if (!ig_catalog_setting_get(sh->cat, "current", &cur, &e) && cur) {
            ig_dataset d;
            if (!ig_catalog_get(sh->cat, cur, &d, &e)) {
                if (d.index_key)
                    sh_load_dataset(sh, NULL, cur, NULL);
                ig_dataset_free(&d);
            }
        }
        free(cur);
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/tinyshakespeare.txt", sh->datasets_dir);
    ig_source src = {.kind = IG_SOURCE_FILE, .path = path};
    ig_ingest_options o;
    ig_ingest_options_default(&o);
    char shown[64];
    sh_short_name(path, 30, shown, sizeof shown);
    fprintf(sh->out, "Welcome to infinigram. Setting up the demo dataset \"shakespeare\" (%s)...\n", shown);
    if (ig_catalog_add(sh->cat, "shakespeare", &src, 1, &o, NULL, &e)) {
        sh_warn(sh, "could not register the demo dataset: %s", e.msg);
        return;
    }
    ig_build_options bo;
    ig_build_options_default(&bo);
    if (sh_build_dataset(sh, NULL, "shakespeare", &bo, NULL) == SH_OK &&
        sh_load_dataset(sh, NULL, "shakespeare", NULL) == SH_OK)
        fprintf(sh->out, "Try: count \"wherefore art thou\"   (:help lists commands)\n");
}

int main(int argc, char **argv)
{
    /* An answer over a frequent context is a block of hundreds of KiB (32,000 next tokens are
     * 768 KiB) made and freed by every command or request. glibc would map such a block afresh
     * and unmap it when freed, so each answer paid a page fault per 4 KiB of itself, about half
     * its time. Blocks under 2 MiB come from the heap instead, and up to 4 MiB of freed heap is
     * kept for the next answer: the process holds at most that much more than it uses (builds
     * under a small --memory budget stay within it). */
    atexit(close_stdout);
    mallopt(M_MMAP_THRESHOLD, 2 << 20);
    mallopt(M_TRIM_THRESHOLD, 4 << 20);
    static const struct option longopts[] = {
        {"home", required_argument, NULL, 'H'}, {"dataset", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},       {"bail", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},       {"version", no_argument, NULL, 'V'},
        {"help-dump", required_argument, NULL, 'M'}, {"saved-settings", no_argument, NULL, 'S'},
        {"no-saved-settings", no_argument, NULL, 'X'}, {"list-datasets", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *home_opt = NULL, *dataset = NULL, *script = NULL;
    /* -c and -f run in the order given (as psql's do); kinds[i] says which cmds[i] is */
    char **cmds = calloc((size_t)argc + 1, sizeof *cmds), *kinds = calloc((size_t)argc + 1, 1);
    int ncmds = 0, json = 0, bail = 0, c, saved = -1, list = 0, interrupted = 0;
    if (!cmds || !kinds) {
        fprintf(stderr, "infinigram: out of memory\n");
        free(cmds);
        free(kinds);
        return 1;
    }
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+d:c:f:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'H': home_opt = optarg; break;
        case 'd': dataset = optarg; break;
        case 'j': json = 1; break;
        case 'b': bail = 1; break;
        case 'S': saved = 1; break;
        case 'X': saved = 0; break;
        case 'L': list = 1; break;
        case 'c': kinds[ncmds] = 'c', cmds[ncmds++] = optarg; break;
        case 'f': kinds[ncmds] = 'f', script = cmds[ncmds++] = optarg; break;
        case 'h':
            sh_print_program_help(stdout);
            free(cmds);
            free(kinds);
            return 0;
        case 'V':
            printf("infinigram %d.%d.%d (index format %d, catalog schema %d)\n", IG_API_VERSION_MAJOR,
                   IG_API_VERSION_MINOR, IG_API_VERSION_PATCH, IG_INDEX_FORMAT_VERSION, IG_CATALOG_SCHEMA_VERSION);
            free(cmds);
            free(kinds);
            return 0;
        case 'M':
            if (strcmp(optarg, "man") && strcmp(optarg, "bash")) {
                fprintf(stderr, "infinigram: --help-dump takes \"man\" or \"bash\"\n");
                free(cmds);
                free(kinds);
                return 2;
            }
            (!strcmp(optarg, "man") ? sh_dump_man : sh_dump_bash)(stdout);
            free(cmds);
            free(kinds);
            return 0;
        default:
            if (optopt && strchr("dcfHM", optopt)) /* given last, without its value: named as written */
                fprintf(stderr, "infinigram: option %s needs an argument\n", argv[optind - 1]);
            else if (optopt > 0 && optopt < 0x80 && strncmp(argv[optind - 1], "--", 2)) /* perhaps inside a group (-zj) */
                fprintf(stderr, "infinigram: unknown option \"-%c\"\n", optopt);
            else if (optopt && strncmp(argv[optind - 1], "--", 2)) { /* a byte of a character: the word it is in */
                const char *w = "";
                for (int k = 1; k < argc && !*w; k++)
                    if (argv[k][0] == '-' && argv[k][1] != '-' && strchr(argv[k], (char)optopt))
                        w = argv[k];
                fprintf(stderr, "infinigram: unknown option in \"%s\"\n", w);
            }
            else {
                const char *w = argv[optind - 1], *eq = strchr(w, '=');
                sh_near near;
                sh_near_init(&near, w + strspn(w, "-"), eq ? (size_t)(eq - w) - strspn(w, "-") : strlen(w) - strspn(w, "-"));
                for (const struct option *o = longopts; o->name; o++)
                    sh_near_add(&near, o->name);
                char hint[96];
                fprintf(stderr, "infinigram: unknown option \"%s\"%s\n", w, sh_near_hint(&near, "--", hint, sizeof hint));
            }
            fprintf(stderr, "Try \"infinigram --help\".\n");
            free(cmds);
            free(kinds);
            return 2;
        }
    }
    char *serve_line = NULL;
    if (optind < argc) {
        /* `infinigram COMMAND --help`: the command's help, before any home is opened or made */
        const sh_cmd *named = sh_find_cmd(NULL, argv[optind], NULL);
        for (int i = optind + 1; named && i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                sh_print_usage(NULL, named, stdout);
                free(cmds);
                free(kinds);
                return 0;
            }
        if (named && strcmp(named->name, "serve")) {
            fprintf(stderr, "infinigram: %s is a shell command: run it with -c '%s ...' (or type it at the prompt)\n"
                    "Try \"infinigram %s --help\".\n", named->name, named->name, named->name);
            free(cmds);
            free(kinds);
            return 2;
        }
        if (!named) {
            fprintf(stderr, "infinigram: unexpected argument \"%s\"\nTry \"infinigram --help\".\n", argv[optind]);
            free(cmds);
            free(kinds);
            free(serve_line);
            return 2;
        }
        /* `infinigram serve OPTIONS` is the shell command `serve OPTIONS` */
        size_t n = 8;
        for (int i = optind; i < argc; i++)
            n += 2 * strlen(argv[i]) + 3;
        serve_line = malloc(n);
        strcpy(serve_line, "serve");
        for (int i = optind + 1; i < argc; i++) {
            /* the home is the program's, wherever it is written: `serve --port P --home H` too */
            if (!strcmp(argv[i], "--home") && i + 1 < argc) {
                home_opt = argv[++i];
                continue;
            }
            if (!strncmp(argv[i], "--home=", 7)) {
                home_opt = argv[i] + 7;
                continue;
            }
            if (!strncmp(argv[i], "--", 2) && !strpbrk(argv[i], " \t\"")) { /* an option name stays a word */
                strcat(serve_line, " ");
                strcat(serve_line, argv[i]);
                continue;
            }
            strcat(serve_line, " \"");
            char *q = serve_line + strlen(serve_line);
            for (const char *p = argv[i]; *p; p++) {
                if (*p == '"' || *p == '\\')
                    *q++ = '\\';
                *q++ = *p;
            }
            *q = '\0';
            strcat(serve_line, "\"");
        }
        kinds[ncmds] = 'c', cmds[ncmds++] = serve_line;
    }

    shell sh;
    memset(&sh, 0, sizeof sh);
    sh.out = stdout;
    sh.err = stderr;
    sh.json = json;
    sh.bail = bail;
    sh.fake_clock = getenv("INFINIGRAM_FAKE_CLOCK") && !strcmp(getenv("INFINIGRAM_FAKE_CLOCK"), "1");
    sh_setting_apply(&sh, "color", "auto");
    sh.progress = isatty(STDERR_FILENO);
    sh.out_tty = isatty(STDOUT_FILENO);
    sh.columns = 80;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
        sh.columns = ws.ws_col;
    sh.interactive = ncmds == 0 && !script && isatty(STDIN_FILENO);
    sh_install_signals();

    if (list && (sh.home = resolve_home(home_opt))) {
        /* names for completion: a home that does not exist has none, and is not created */
        char *db = malloc(strlen(sh.home) + 16);
        struct stat st;
        int none = !db || (sprintf(db, "%s/catalog.db", sh.home), stat(db, &st) != 0);
        free(db);
        if (none) {
            free(sh.home);
            free(sh.datasets_dir);
            free(cmds);
            free(kinds);
            free(serve_line);
            return 0;
        }
        free(sh.home);
        sh.home = NULL;
    }
    if (home_opt && !*home_opt) { /* a bad argument, not a home that cannot be opened */
        fprintf(stderr, "infinigram: --home: an empty path (give a directory)\n");
        free(cmds);
        free(kinds);
        free(serve_line);
        return 2;
    }
    if (!(sh.home = resolve_home(home_opt))) {
        fprintf(stderr, "infinigram: no home directory: use --home DIR or set INFINIGRAM_HOME\n");
        free(cmds);
        free(kinds);
        free(serve_line);
        return 1; /* the program cannot start: EXIT STATUS */
    }
    sh.datasets_dir = resolve_datasets();
    ig_error e;
    if (ig_catalog_open(&sh.cat, sh.home, &e)) {
        fprintf(stderr, "infinigram: %s\n", e.msg);
        free(sh.home);
        free(sh.datasets_dir);
        free(cmds);
        free(kinds);
        free(serve_line);
        return 1;
    }
    if (list) { /* names only: nothing is cleaned up, loaded or started */
        ig_dataset *ds = NULL;
        size_t nds = 0;
        if (ig_catalog_list(sh.cat, &ds, &nds, &e)) {
            fprintf(stderr, "infinigram: %s\n", e.msg);
            sh.failed = 1;
        }
        ig_error ne;
        for (size_t i = 0; i < nds; i++) /* a catalog edited by hand may hold any bytes: only valid names */
            if (!ig_dataset_name_check(ds[i].name, &ne))
                printf("%s\n", ds[i].name);
        ig_dataset_list_free(ds, nds);
        goto done;
    }
    if (ig_catalog_readonly(sh.cat) && isatty(STDIN_FILENO) && !ncmds)
        fprintf(stderr, "note: the catalog is read-only (%s): queries only\n", ig_catalog_readonly(sh.cat));
    size_t removed = 0;
    if (ig_catalog_cleanup(sh.cat, &removed, &e))
        sh_warn(&sh, "cleanup of interrupted builds failed: %s", e.msg);

    int rc = SH_OK;
    /* saved settings: interactive sessions by default, scripts and the server only when asked */
    sh.saved_asked = saved == 1;
    if (sh_settings_init(&sh, saved >= 0 ? saved : sh.interactive)) {
        fprintf(stderr, "infinigram: out of memory\n");
        sh.failed = 1;
        goto done;
    }
    if (json)
        sh.json = 1;
    if (dataset) {
        sh_args a = {.cmd = "load"};
        if (sh_load_dataset(&sh, &a, dataset, NULL) != SH_OK) {
            sh.failed = 1;
            if (!sh.interactive)
                goto done;
        }
    }
    if (sh.interactive) {
        if (!dataset)
            bootstrap(&sh);
        sh_repl(&sh);
    } else {
        for (int i = 0, nc = 0; i < ncmds && rc != SH_EXIT && !(sh.failed && bail) && !sh_sigints; i++) {
            if (kinds[i] == 'f') {
                FILE *f = strcmp(cmds[i], "-") ? fopen(cmds[i], "r") : stdin;
                if (!f) {
                    fprintf(stderr, "infinigram: %s: %s\n", cmds[i], strerror(errno));
                    sh.failed = 1;
                    continue;
                }
                char label[4200];
                snprintf(label, sizeof label, "%s:", cmds[i]);
                rc = run_file(&sh, f, label);
                if (f != stdin)
                    fclose(f);
                continue;
            }
            sh.src_name = "command ";
            sh.lineno = ++nc;
            /* lines of one -c argument are separate commands, as in a script file */
            for (char *line = cmds[i], *nl; line && rc != SH_EXIT && !(sh.failed && bail) && !sh_sigints;
                 line = nl ? nl + 1 : NULL) {
                if ((nl = strchr(line, '\n')))
                    *nl = '\0';
                rc = sh_run_line(&sh, line);
            }
        }
        if (ncmds == 0) {
            run_file(&sh, stdin, "line ");
        }
        if (sh_sigints) { /* like sqlite3's: Ctrl-C ends a script, the command it cut included */
            fflush(stdout);
            fprintf(stderr, "infinigram: interrupted: the rest of the script is not run\n");
            sh.failed = 1;
            interrupted = 1;
        }
    }
done:
    ig_generation_clear(&sh.last);
    sh_settings_free(&sh);
    ig_index_close(&sh.idx);
    ig_catalog_close(&sh.cat);
    free(sh.current);
    free(sh.home);
    free(sh.datasets_dir);
    free(cmds);
    free(kinds);
    free(serve_line);
    /* like psql and sqlite3, an interactive session ends with 0 whatever was mistyped */
    return interrupted ? 130 : sh.failed && !sh.interactive ? 1 : 0; /* 130: 128 + SIGINT, as shells say it */
}
