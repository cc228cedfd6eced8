#!/bin/bash
# How many source files a command crosses on its way to the engine, for each face: the
# distinct .c files of src/ on the stack at the first suffix-array read, plus the files
# entered before it since the face received the command (gdb, tests/bench/hops_gdb.py).
# `count "the"` typed to the shell (a -c script: the same dispatch as the prompt, counted from
# sh_run_line, once the line is read) and POST /v1/count to `serve` (counted from route, once
# libmicrohttpd has read the request's headers and body), on a one-line dataset.
#
#   tests/bench/hops.sh [BINARY]        (default build/src/infinigram; a -O0 or -O2 -g build)
#
# Prints, per face, the stack, the files entered in order, and "FILES N ...".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../src" && pwd)
bin=$(realpath "${1:-build/src/infinigram}")
command -v gdb >/dev/null || { echo "hops.sh: needs gdb" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill %1 2>/dev/null || true' EXIT
printf 'the cat sat on the mat\nxyz the x\n' > "$tmp/c.txt"
"$bin" --home "$tmp/home" -c ":dataset add t $tmp/c.txt" -c 'build t' >/dev/null

echo "== shell: count \"the\""
TRACE_ROOT=$root TRACE_START=sh_run_line TRACE_ARG=line TRACE_MATCH=count \
  timeout 300 gdb -q -batch -x "$here/hops_gdb.py" --args "$bin" --home "$tmp/home" -c 'load t' -c 'count "the"' \
  2>/dev/null | grep -E '^(STACK|ENTERED|FILES) '

echo "== http: POST /v1/count"
port=$((20000 + RANDOM % 20000))
( for _ in $(seq 60); do
    sleep 1
    curl -s -m 5 -X POST "localhost:$port/v1/count" -d '{"dataset":"t","query":"the"}' >/dev/null 2>&1 && break
  done ) &
TRACE_ROOT=$root TRACE_START=route TRACE_ARG=url TRACE_MATCH=/v1/count \
  timeout 300 gdb -q -batch -x "$here/hops_gdb.py" --args "$bin" --home "$tmp/home" serve --port "$port" \
  2>/dev/null | grep -E '^(STACK|ENTERED|FILES) '
