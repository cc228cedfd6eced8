/* Fuzz target: the shell's tokenizer and option codec. The input is one command line: it
 * is looked up, tokenised against its command's options and, for a command backed by a
 * typed operation, decoded into the operation's options through its field table. Nothing
 * runs: every outcome is options filled or one error message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "shell.h"

static shell sh;

static void setup(void)
{
    memset(&sh, 0, sizeof sh);
    sh.out = fopen("/dev/null", "w");
    sh.err = sh.out;
    sh.columns = 80;
    sh.fake_clock = 1;
    if (!sh.out || sh_settings_init(&sh, 0))
        abort();
    char dir[200];
    snprintf(dir, sizeof dir, "%s/index", fuzz_tmpdir());
    fuzz_build_index(dir);
    ig_error e;
    if (ig_index_open(&sh.idx, dir, &e))
        abort();
    sh.current = strdup("fuzz");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sh.out)
        setup();
    char *line = strndup((const char *)data, size);
    if (!line)
        return 0;
    char *word = sh_first_word(line);
    const sh_cmd *c = word ? sh_find_cmd(&sh, word, NULL) : NULL;
    free(word);
    if (c) {
        sh_args a;
        sh.cmdline = line;
        if (sh_parse(&sh, line, c, &a) == SH_OK && c->op) {
            void *o = calloc(1, c->op->opts_size);
            uint64_t given = 0;
            if (o && sh_op_begin(&sh, &a, c->op, o, &given) == SH_OK)
                ig_fields_free(c->op->fields, o);
            free(o);
        }
        sh_args_free(&a);
    }
    free(line);
    return 0;
}
