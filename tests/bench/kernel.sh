#!/bin/bash
# Scale benchmark on the Linux kernel source (issue "Scale and speed", task 1).
#
#   tests/bench/kernel.sh [setup|build|query|dss|all] [--update-page]
#                                                          (default: all; dss is not in all)
#
# setup  installs the Debian package linux-source-6.1 with apt-get if
#        /usr/src/linux-source-6.1.tar.xz is missing (~138 MB download; needs root)
#        and unpacks it to $SCRATCH/src (skipped if already unpacked).
# build  registers the tree as dataset "kernel" in a scratch home ($SCRATCH/home:
#        `:dataset add kernel DIR`, a directory walk, each file a document; binary and
#        invalid UTF-8 files are skipped with a warning) and runs `build kernel --jobs J`
#        under /usr/bin/time -v and tests/bench/memwatch.sh. Reports wall time, MB/s
#        (source bytes / wall, MB = 10^6), shards, skipped files, peak RSS of the largest
#        process (time -v) and the summed Pss of the build's processes (memwatch).
# query  `load kernel` through the shell (its elapsed_ms, and the shell's max RSS), then
#        bench_scale query on the index directory: ig_index_open time, VmRSS after open
#        and after 1 000 random counts, count median/p99 warm over COUNT_QUERIES (default
#        20 000) random substrings, cold-cache counts, predict and spans.
#
# dss    raw single-threaded divsufsort on the kernel index's text (bench_scale dss: the
#        whole text as one array, each shard in turn, and all shards at once in parallel
#        processes): the baseline of the build throughput.
#
# Environment: KERNEL_TAG (a second home $SCRATCH/home-TAG and result names with -TAG,
# e.g. KERNEL_TAG=1shard KERNEL_JOBS=1 KERNEL_BUILD_ARGS="--shard-size 2G", or KERNEL_TAG=lcp
# KERNEL_BUILD_ARGS=--lcp for the index whose cold counts BENCHMARKS.md compares), IG_BENCH_TMP (scratch base, default /tmp; scratch is $IG_BENCH_TMP/ig-kernel),
# KERNEL_JOBS (default 2), COUNT_QUERIES, COLD_QUERIES (default 200), BENCH_SCALE (path
# of the bench_scale binary, default build-release/tests/bench/bench_scale).
# Results go to $SCRATCH/results/*.txt and are echoed. Nothing under the repo is written,
# unless --update-page is given: then the query stage's RESULT line (bench_scale query)
# rewrites the kernel table of BENCHMARKS.md and is appended to tests/bench/HISTORY.md
# (tests/bench/front_page.py --update; the other stages print no RESULT for the page).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ig="$root/build-release/src/infinigram"
bench_scale=${BENCH_SCALE:-$root/build-release/tests/bench/bench_scale}
base=${IG_BENCH_TMP:-/tmp}
scratch="$base/ig-kernel"
src="$scratch/src"
tag=${KERNEL_TAG:-}
home="$scratch/home${tag:+-$tag}"
build_args=${KERNEL_BUILD_ARGS:-}
res="$scratch/results"
jobs=${KERNEL_JOBS:-2}
nq=${COUNT_QUERIES:-20000}
ncold=${COLD_QUERIES:-200}
tarball=/usr/src/linux-source-6.1.tar.xz
stage=all
update_page=0
for arg in "$@"; do
    case $arg in
    --update-page) update_page=1 ;;
    *) stage=$arg ;;
    esac
done
mkdir -p "$scratch" "$res"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

do_setup() {
    if [ ! -f "$tarball" ]; then
        echo "installing linux-source-6.1 with apt-get..."
        apt-get install -y --no-install-recommends linux-source-6.1 >/dev/null ||
            { apt-get update >/dev/null && apt-get install -y --no-install-recommends linux-source-6.1 >/dev/null; }
    fi
    ls -l "$tarball"
    if [ ! -d "$src/linux-source-6.1" ]; then
        mkdir -p "$src"
        echo "unpacking to $src..."
        /usr/bin/time -f "unpack: %e s" tar -xJf "$tarball" -C "$src"
    fi
    echo "tree: $(find "$src/linux-source-6.1" -type f | wc -l) files, $(du -sb "$src/linux-source-6.1" | cut -f1) bytes (apparent)"
}

do_build() {
    rm -rf "$home"
    mkdir -p "$home"
    "$ig" --home "$home" --bail -c ":dataset add kernel $src/linux-source-6.1" >/dev/null
    # The source tree is left as it is in the page cache (warm right after unpacking):
    # dropping caches machine-wide would disturb other work on the machine.
    local out="$res/build-j$jobs${tag:+-$tag}.txt"
    : >"$out"
    : >"$out.mem"
    echo "load avg before build: $(loadavg)" | tee -a "$out"
    # not --json: the human output names every skipped file on stderr (the JSON only counts them)
    "$here/memwatch.sh" "$out.mem" /usr/bin/time -v -o "$out.time" \
        "$ig" --home "$home" --bail -c "build kernel --jobs $jobs $build_args" >"$out.out" 2>"$out.err"
    echo "load avg after build: $(loadavg)" | tee -a "$out"
    cat "$out.out" | tee -a "$out"
    grep -E 'Elapsed|Maximum resident|Exit status|Major|Minor|User time|System time' "$out.time" | tee -a "$out"
    cat "$out.mem" | tee -a "$out"
    # The shell names the first 10 skipped files; classify all of them: files of the walk
    # (regular, no dot-name on the path) that are not documents of the index.
    local dir
    dir=$(ls -d "$home"/indexes/kernel-*/ | grep -v '\.lock' | head -1)
    rm -rf "$scratch/allnames"
    "$bench_scale" prefix --index "$dir" --root "$src/linux-source-6.1" --out "$scratch/allnames" --sizes 999999 >/dev/null
    sort "$scratch/allnames/999999.list" >"$scratch/indexed.txt"
    rm -rf "$scratch/allnames"
    find "$src/linux-source-6.1" -name '.*' -prune -o -type f -print | sort >"$scratch/walked.txt"
    comm -23 "$scratch/walked.txt" "$scratch/indexed.txt" >"$scratch/skipped.txt"
    echo "files: $(find "$src/linux-source-6.1" -type f | wc -l) in the tree, $(wc -l <"$scratch/walked.txt") walked (dot-names are not), $(wc -l <"$scratch/indexed.txt") indexed, $(wc -l <"$scratch/skipped.txt") skipped:" | tee -a "$out"
    python3 - "$scratch/skipped.txt" <<'EOF2' | tee -a "$out"
import collections, sys
c, ex = collections.Counter(), {}
for p in open(sys.argv[1]).read().split("\n"):
    if not p:
        continue
    b = open(p, "rb").read()
    if not b:
        r = "empty file"
    elif b"\0" in b[:8192]:
        r = "binary (NUL byte in the first 8 KiB)"
    else:
        try:
            b.decode("utf-8")
            r = "other"
        except UnicodeDecodeError:
            r = "invalid UTF-8"
    c[r] += 1
    ex.setdefault(r, []).append(p.split("linux-source-6.1/")[1])
for r, n in c.most_common():
    print(f"  {n:4d} {r}, e.g. {', '.join(ex[r][:3])}")
EOF2
    "$ig" --home "$home" --json -c 'load kernel' >"$out.load.json"
    python3 - "$out.load.json" "$out.time" "$out.mem" <<'EOF2' | tee -a "$out"
import json, re, sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
t = open(sys.argv[2]).read()
m = dict(l.split() for l in open(sys.argv[3]) if l.strip())
h, mi, se = (["0"] + re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1).split(":"))[-3:]
wall = int(h) * 3600 + int(mi) * 60 + float(se)
rss = int(re.search(r"Maximum resident set size .kbytes.: (\d+)", t).group(1))
print(f"SUMMARY wall {wall:.1f} s (whole shell process), indexed {j['bytes']} bytes, {j['documents']} docs, "
      f"{j['shards']} shards, {j['bytes'] / 1e6 / wall:.2f} MB/s (indexed bytes / wall), "
      f"max RSS of one process (time -v) {rss / 1024:.0f} MiB, peak summed Pss {int(m['peak_pss_kib']) / 1024:.0f} MiB")
EOF2
    du -sb "$home/indexes" | tee -a "$out"
    ls -l "$home"/indexes/kernel-*/ "$home"/indexes/kernel-*/shard-* 2>/dev/null | tee -a "$out"
    free -m | tee -a "$out"
}

do_query() {
    local out="$res/query${tag:+-$tag}.txt"
    : >"$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
    /usr/bin/time -v -o "$out.time" "$ig" --home "$home" --json -c 'load kernel' | tee -a "$out"
    grep -E 'Elapsed|Maximum resident' "$out.time" | sed 's/^/shell load: /' | tee -a "$out"
    # the shell with 1 000 generated count commands (random 12-byte substrings of the
    # corpus, written by bench_scale) and its peak RSS
    local dir
    dir=$(ls -d "$home"/indexes/kernel-*/ | grep -v '\.lock' | head -1)
    "$bench_scale" script --index "$dir" --count 1000 --len 12 >"$scratch/count1000.ig"
    /usr/bin/time -v -o "$out.time2" "$ig" --home "$home" -d kernel -f "$scratch/count1000.ig" >/dev/null
    grep -E 'Elapsed|Maximum resident' "$out.time2" | sed 's/^/shell load + 1000 counts: /' | tee -a "$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
    "$bench_scale" query --index "$dir" --queries "$nq" --cold "$ncold" | tee -a "$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
    if [ "$update_page" = 1 ]; then
        python3 "$here/front_page.py" --update "$out"
    fi
}

do_dss() {
    local dir out="$res/dss-kernel${tag:+-$tag}.txt"
    dir=$(ls -d "$home"/indexes/kernel-*/ | grep -v '\.lock' | head -1)
    echo "load avg: $(loadavg)" | tee "$out"
    "$bench_scale" dss --index "$dir" --whole --shards --parallel | tee -a "$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
}

case $stage in
setup) do_setup ;;
dss) do_dss ;;
build) do_build ;;
query) do_query ;;
all)
    do_setup
    do_build
    do_query
    ;;
*)
    echo "usage: $0 [setup|build|query|dss|all] [--update-page]" >&2
    exit 2
    ;;
esac
