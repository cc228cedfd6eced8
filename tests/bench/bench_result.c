/*
 * bench_result: prints one `RESULT NAME {...}` line for a benchmark script, with the common
 * members of bench_result_begin (build type, machine, date, load average, command) and then
 * the script's own figures, so scripts and programs print the same format.
 *
 *   bench_result NAME MEMBERS COMMAND [ARG...]
 *
 * MEMBERS: the figures as JSON object members without braces ("a":1,"b":{...}); COMMAND
 * and ARGs: the script's command line, recorded as "command".
 */
#include <stdio.h>

#include "bench_common.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_result NAME MEMBERS COMMAND [ARG...]\n");
        return 2;
    }
    bench_result_begin(argv[1], argc - 3, argv + 3);
    printf(",%s}\n", argv[2]);
    return ferror(stdout) || fflush(stdout) != 0 ? 1 : 0;
}
