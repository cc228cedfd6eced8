/*
 * Bash completion, written from the command table (`infinigram --help-dump=bash`), so
 * that it cannot drift from the program: the program's options, `serve` and its options
 * (with the choices of an option that has them), the shell's command names for -c, and
 * dataset names read from the catalog when completing -d (through --list-datasets, with
 * the --home the line gives).
 */
#include <string.h>

#include "shell.h"

/* Writes the names of cmd's options as "--a --b ...". */
static void opt_words(FILE *f, const sh_cmd *cmd)
{
    const char *sep = "";
    for (const sh_opt *o = sh_cmd_opts(cmd); o && o->name; o++) {
        fprintf(f, "%s--%s", sep, o->name);
        sep = " ";
    }
}

void sh_dump_bash(FILE *f)
{
    fputs("# bash completion for infinigram, written by `infinigram --help-dump=bash` from its\n"
          "# command table. Install as bash-completion/completions/infinigram, or source it.\n\n"
          "_infinigram_datasets()\n"
          "{\n"
          "    local home=() h i\n"
          "    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do\n"
          "        h=\n"
          "        [[ ${COMP_WORDS[i]} == --home ]] && h=${COMP_WORDS[i + 1]}\n"
          "        # bash splits --home=DIR at the '=' into three words\n"
          "        [[ ${COMP_WORDS[i]} == --home && $h == = ]] && h=${COMP_WORDS[i + 2]}\n"
          "        [[ ${COMP_WORDS[i]} == --home=* ]] && h=${COMP_WORDS[i]#--home=}\n"
          "        [[ -n $h ]] || continue\n"
          "        # the word as typed: quotes and backslashes removed, ~ expanded (never eval'd)\n"
          "        [[ $h == \\'*\\' || $h == \\\"*\\\" ]] && h=${h:1:${#h}-2}\n"
          "        h=${h//\\\\ / }\n"
          "        [[ $h == \\~* ]] && h=$HOME${h:1}\n"
          "        home=(--home \"$h\")\n"
          "    done\n"
          "    \"${COMP_WORDS[0]}\" \"${home[@]}\" --list-datasets 2>/dev/null\n"
          "}\n\n"
          "# Adds the dataset names that start with $cur. Names are only compared, never expanded\n"
          "# (compgen -W would run a $(...) in a name of a catalog edited by hand).\n"
          "_infinigram_add_datasets()\n"
          "{\n"
          "    local n\n"
          "    while IFS= read -r n; do\n"
          "        [[ $n == \"$cur\"* ]] && COMPREPLY+=(\"$n\")\n"
          "    done < <(_infinigram_datasets)\n"
          "}\n\n"
          "_infinigram()\n"
          "{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i serve=0\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        [[ ${COMP_WORDS[i]} == serve ]] && serve=1\n"
          "    done\n"
          "    COMPREPLY=()\n"
          "    local IFS=$'\\n'\n"
          "    case $prev in\n"
          "    -d | --dataset)\n"
          "        _infinigram_add_datasets\n"
          "        return\n"
          "        ;;\n"
          "    =)\n"
          "        # bash splits --help-dump=VALUE and --home=DIR at the '='\n"
          "        [[ ${COMP_WORDS[COMP_CWORD - 2]} == --help-dump ]] && COMPREPLY=($(compgen -W $'man\\nbash' -- \"$cur\"))\n"
          "        [[ ${COMP_WORDS[COMP_CWORD - 2]} == --home ]] && COMPREPLY=($(compgen -d -- \"$cur\"))\n"
          "        return\n"
          "        ;;\n"
          "    --home)\n"
          "        COMPREPLY=($(compgen -d -- \"$cur\"))\n"
          "        return\n"
          "        ;;\n"
          "    -f)\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "        return\n"
          "        ;;\n"
          "    -c)\n"
          "        IFS=' '\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    for (size_t i = 0; i < sh_ncmds; i++)
        fprintf(f, "%s%s", i ? " " : "", sh_cmds[i].name);
    fputs("\" -- \"$cur\"))\n"
          "        return\n"
          "        ;;\n"
          "    esac\n"
          "    IFS=' '\n"
          "    if ((serve)); then\n"
          "        case $prev in\n",
          f);
    const sh_cmd *serve = NULL;
    for (size_t i = 0; i < sh_ncmds; i++)
        if (!strcmp(sh_cmds[i].name, "serve"))
            serve = &sh_cmds[i];
    /* an option with listed choices ("text|lines|jsonl") completes them; another one that
     * takes a value completes nothing (its value is the user's) */
    for (const sh_opt *o = serve ? sh_cmd_opts(serve) : NULL; o && o->name; o++) {
        if (!o->arg)
            continue;
        fprintf(f, "        --%s)\n", o->name);
        if (!strcmp(o->name, "datasets")) {
            fputs("            _infinigram_add_datasets\n", f);
        } else if (strchr(o->arg, '|')) {
            fputs("            COMPREPLY=($(compgen -W \"", f);
            for (const char *p = o->arg; *p; p++)
                fputc(*p == '|' ? ' ' : *p, f);
            fputs("\" -- \"$cur\"))\n", f);
        }
        fputs("            return\n            ;;\n", f);
    }
    fputs("        esac\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    opt_words(f, serve);
    fputs("\" -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    sh_program_option_words(f);
    fputs("\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -W \"serve\" -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -F _infinigram infinigram\n",
          f);
}
