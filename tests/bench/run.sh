#!/bin/sh
# Builds Infinigram in release mode (build-release/, created if missing) and runs the
# benchmarks (tests/bench/bench_build, bench_count, bench_model, bench_generate) with the
# same arguments as their meson benchmark() targets, printing the machine description
# (and load average) first. Its output is also saved to build-release/bench-results.txt.
#
#   tests/bench/run.sh                 # everything (~4-5 minutes on 2 cores)
#   tests/bench/run.sh --update-page   # the same, then rewrites BENCHMARKS.md's tables
#   BENCH_REPS=3 BENCH_QUERIES=20000 BENCH_MODEL_REPS=1 tests/bench/run.sh   # quicker, noisier
#
# Updating the front page: each program ends with one `RESULT name {json}` line. With
# --update-page, tests/bench/front_page.py --update reads them from bench-results.txt and
# rewrites the tables of BENCHMARKS.md between their <!-- bench:AREA --> markers (build,
# count, predict, eval, generate, spans, search) with the command, date, commit and
# machine, and appends the same figures to tests/bench/HISTORY.md as a dated section.
# Without the flag nothing is rewritten; the same update can be run later on the saved
# file (`python3 tests/bench/front_page.py --update build-release/bench-results.txt`).
# Run it on a quiet machine, review the diff, and commit both files.
#
# bench_model takes BENCH_MODEL_QUERIES predict queries per context kind (default 3000)
# and repeats each eval measurement BENCH_MODEL_REPS times (default 3). bench_generate
# takes BENCH_GEN_SEEDS generations per model (default 3) of BENCH_GEN_CHARS characters
# (default 20000), BENCH_SPANS_TEXTS spans texts per corpus (default 2000) and
# BENCH_SEARCH_QUERIES search queries (default 2000).
#
# Temp files go under $IG_BENCH_TMP, else $TMPDIR, else /tmp: put them on the disk
# you care about (fsync on tmpfs costs nothing and would flatter the build).
set -eu

update_page=0
case "${1:-}" in
--update-page) update_page=1 ;;
"") ;;
*)
    echo "usage: $0 [--update-page]" >&2
    exit 2
    ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bdir="$root/build-release"
reps=${BENCH_REPS:-7}
queries=${BENCH_QUERIES:-100000}
mqueries=${BENCH_MODEL_QUERIES:-3000}
mreps=${BENCH_MODEL_REPS:-3}
gseeds=${BENCH_GEN_SEEDS:-3}
gchars=${BENCH_GEN_CHARS:-20000}
stexts=${BENCH_SPANS_TEXTS:-2000}
squeries=${BENCH_SEARCH_QUERIES:-2000}

cd "$root"
if [ ! -f "$bdir/build.ninja" ]; then
    meson setup "$bdir" --buildtype=release
fi
ninja -C "$bdir" tests/bench/bench_build tests/bench/bench_count tests/bench/bench_model tests/bench/bench_generate

out="$bdir/bench-results.txt"
tmpbase=${IG_BENCH_TMP:-${TMPDIR:-/tmp}}
{
    echo "# Infinigram benchmarks"
    echo "date:       $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "commit:     $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)')"
    echo "command:    tests/bench/run.sh  (BENCH_REPS=$reps BENCH_QUERIES=$queries BENCH_MODEL_QUERIES=$mqueries BENCH_MODEL_REPS=$mreps BENCH_GEN_SEEDS=$gseeds BENCH_GEN_CHARS=$gchars BENCH_SPANS_TEXTS=$stexts BENCH_SEARCH_QUERIES=$squeries)"
    echo "build type: $(meson introspect --buildoptions "$bdir" 2>/dev/null | tr ',' '\n' | grep -A1 '"name": "buildtype"' | sed -n 's/.*"value": "\([a-z]*\)".*/\1/p' | head -1)"
    echo "cpu:        $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) ($(nproc) cpus online)"
    echo "ram:        $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "kernel:     $(uname -sr)"
    echo "compiler:   $(cc --version 2>/dev/null | head -1)"
    echo "divsufsort: $(pkg-config --modversion libdivsufsort 2>/dev/null || echo unknown)"
    echo "temp fs:    $tmpbase on $(df -T "$tmpbase" | awk 'NR == 2 { print $2 " (" $1 ")" }')"
    echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    "$bdir/tests/bench/bench_build" --reps "$reps" --max-bytes 4300000,16777216 --catalog
    echo
    "$bdir/tests/bench/bench_count" --queries "$queries"
    echo
    "$bdir/tests/bench/bench_model" --queries "$mqueries" --reps "$mreps"
    echo
    "$bdir/tests/bench/bench_generate" --seeds "$gseeds" --chars "$gchars" --texts "$stexts" --queries "$squeries"
} 2>&1 | tee "$out"
echo
echo "saved to $out"
if [ "$update_page" = 1 ]; then
    python3 "$here/front_page.py" --update "$out"
fi
