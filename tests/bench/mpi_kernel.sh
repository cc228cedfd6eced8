#!/bin/bash
# The kernel corpus of tests/bench/kernel.sh built over 2 MPI ranks on this machine (not CI).
#
#   tests/bench/mpi_kernel.sh [NQ]
#
# Needs the unpacked tree ($IG_BENCH_TMP/ig-kernel/src, made by `kernel.sh setup`) and the
# release binaries (build-release/src/infinigram, infinigram-mpi). Steps:
#   1. the one-machine reference: dataset "kernel" of kernel.sh's home ($scratch/home), used
#      as it is when it loads; else, or with MPI_KERNEL_AB=1 (the A/B of the build times in
#      one run), built and timed here into $scratch/home-mpiref (--jobs 2);
#   2. `:dataset add kernel DIR` and `build kernel --jobs 1` over 2 ranks
#      (mpirun --oversubscribe -np 2, homes $scratch/mpi/h0 and h1), wall time measured;
#   3. NQ (default 300) substrings of random files of the tree (fixed seed; 10% made absent)
#      as `count`, `count --positions 5`, `predict --top 5` and `predict --n 3 --top 5`, asked
#      of both with INFINIGRAM_FAKE_CLOCK=1: every answer must be byte-identical;
#   4. count latency, warm (a second pass): the elapsed_ms each reports, median and p90.
# Prints a RESULT line. Nothing under the repository is written.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ig="$root/build-release/src/infinigram"
igmpi="$root/build-release/src/infinigram-mpi"
scratch="${IG_BENCH_TMP:-/tmp}/ig-kernel"
src="$scratch/src/linux-source-6.1"
nq=${1:-300}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_btl_base_warn_component_unused=0

[ -x "$ig" ] && [ -x "$igmpi" ] || { echo "mpi_kernel.sh: build the release binaries first (meson setup build-release --buildtype=release)" >&2; exit 1; }
[ -d "$src" ] || { echo "mpi_kernel.sh: $src is missing: run tests/bench/kernel.sh setup" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ref="$scratch/home"
one_s=-
if [ "${MPI_KERNEL_AB:-0}" = 1 ] || ! "$ig" --home "$ref" --bail -c "load kernel" >/dev/null 2>&1; then
    ref="$scratch/home-mpiref"
    rm -rf "$ref"
    echo "building the one-machine reference in $ref (--jobs 2); load $(cut -d' ' -f1-3 /proc/loadavg)"
    t0=$(date +%s.%N)
    "$ig" --home "$ref" --bail -c ":dataset add kernel $src" -c "build kernel --jobs 2" >/dev/null
    one_s=$(echo "$(date +%s.%N) - $t0" | bc)
    echo "one-machine build: $one_s s"
fi

mhome="$scratch/mpi"
rm -rf "$mhome"
echo "load before the 2-rank build: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
mpirun --oversubscribe -np 2 "$igmpi" --home "$mhome/h%r" -c ":dataset add kernel $src" \
    -c "build kernel --jobs 1" >"$work/build.json" 2>"$work/build.err"
t1=$(date +%s.%N)
build_s=$(echo "$t1 - $t0" | bc)
cat "$work/build.json"
grep -q '"parts":2' "$work/build.json" || { cat "$work/build.err" >&2; exit 1; }

python3 - "$src" "$nq" >"$work/queries" <<'EOF'
import os, random, sys
src, nq = sys.argv[1], int(sys.argv[2])
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith((".c", ".h", ".rst")))
r = random.Random(21)
out = []
while len(out) < 4 * nq:
    try:
        t = open(r.choice(files), encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    if len(t) < 40:
        continue
    a = r.randrange(len(t) - 30)
    s = t[a:a + r.randint(3, 24)].split("\n")[0]
    if not s.strip() or '"' in s or "\\" in s or s != s.strip() or "\t" in s:
        continue
    if r.random() < 0.1:
        s = "qzx" + s
    out += ['count "%s"' % s, 'count --positions 5 "%s"' % s, 'predict --top 5 "%s"' % s,
            'predict --n 3 --top 5 "%s"' % s]
print("\n".join(out))
EOF

INFINIGRAM_FAKE_CLOCK=1 "$ig" --home "$ref" --json -d kernel -f "$work/queries" 2>/dev/null | grep "^{" >"$work/one.json"
INFINIGRAM_FAKE_CLOCK=1 mpirun -np 2 "$igmpi" --home "$mhome/h%r" -d kernel -f "$work/queries" 2>"$work/q.err" \
    | grep '^{' | tail -n +2 >"$work/two.json"
asked=$(wc -l <"$work/queries")
same=$(paste -d'\n' "$work/one.json" "$work/two.json" | python3 -c '
import sys
ls = sys.stdin.read().split("\n")
print(sum(1 for a, b in zip(ls[0::2], ls[1::2]) if a == b and a))')
echo "answers compared: $asked asked, $same identical"
paste -d'\n' "$work/one.json" "$work/two.json" | python3 -c '
import sys
ls = sys.stdin.read().split("\n")
for a, b in zip(ls[0::2], ls[1::2]):
    if a != b:
        print("first difference:\n  one machine: %s\n  2 ranks:     %s" % (a[:300], b[:300])); break'

grep '^count "' "$work/queries" >"$work/counts"
cat "$work/counts" "$work/counts" >"$work/counts2"
"$ig" --home "$ref" --json -d kernel -f "$work/counts2" 2>/dev/null | grep "^{" >"$work/one-t.json"
mpirun -np 2 "$igmpi" --home "$mhome/h%r" -d kernel -f "$work/counts2" 2>/dev/null | grep '^{' | tail -n +2 >"$work/two-t.json"
lat() {
    python3 -c '
import json, sys
v = [json.loads(l)["elapsed_ms"] * 1000 for l in open(sys.argv[1])]
v = sorted(v[len(v) // 2:])  # the second, warm pass
print("%.1f %.1f" % (v[len(v) // 2], v[int(len(v) * 0.9)]))' "$1"
}
read -r one_med one_p90 < <(lat "$work/one-t.json")
read -r two_med two_p90 < <(lat "$work/two-t.json")
echo "count latency (us, warm, elapsed_ms as reported): one machine median $one_med p90 $one_p90; 2 ranks median $two_med p90 $two_p90"
echo "RESULT mpi_kernel build_1machine_s=$one_s build_2ranks_s=$build_s identical=$same/$asked count_us_one=$one_med count_us_2ranks=$two_med load=$(cut -d' ' -f1 /proc/loadavg)"
[ "$same" = "$asked" ]
