#!/bin/bash
# Scaling table and --jobs comparison (issue "Scale and speed", tasks 2 and 3).
# Run tests/bench/kernel.sh first: the corpora are prefixes of its kernel index.
#
#   tests/bench/scale.sh [prefix|table|query|jobs|report|all]   (default: all; query is not in all)
#
# prefix  bench_scale prefix: for each size S in SIZES (MB = 10^6; default
#         "1 10 30 100 300"), the longest run of the kernel index's first documents
#         (index order = the build's walk order: depth first, each directory's entries
#         in byte order, dot-names skipped) whose indexed bytes (+1 per document for its
#         0xFF) are <= S. Written as a tree of hard links to those files under
#         $SCRATCH/prefix/S/, so each size is registered like the kernel itself
#         (`:dataset add pS DIR`, one document per file) and its indexed text is exactly
#         a prefix of the kernel's indexed text, cut at a document boundary.
# table   for each size: `build pS --jobs 2` (/usr/bin/time -v + memwatch.sh), raw
#         single-threaded divsufsort of the same text as one array (bench_scale dss
#         --whole; for sizes above DSS_MAX, default 400e6, it is skipped) and, for 2-shard
#         indexes, of each shard in turn (--shards), then bench_scale query (count warm and
#         cold, predict, spans).
# query   only the bench_scale query part of `table`, on the indexes it built.
# jobs    on the 300 MB prefix (two shards of ~150 MB): `build --jobs 1 --shard-size 150M`,
#         `build --jobs 2` (already in the table, repeated here), raw divsufsort of each
#         shard in turn and of both shards at once in two processes. REPS times (default 2).
# report  tests/bench/scale_report.py: prints the scaling table (every size plus the full
#         kernel from kernel.sh's results) and appends it, under a dated heading, to
#         tests/bench/HISTORY.md (REPORT_TO overrides the file; REPORT_TO= prints only).
#
# Environment: IG_BENCH_TMP (default /tmp; scratch $IG_BENCH_TMP/ig-kernel, shared with
# kernel.sh), SIZES, DSS_MAX, COUNT_QUERIES (20000), COLD_QUERIES (200), REPS.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ig="$root/build-release/src/infinigram"
bs=${BENCH_SCALE:-$root/build-release/tests/bench/bench_scale}
base=${IG_BENCH_TMP:-/tmp}
scratch="$base/ig-kernel"
src="$scratch/src/linux-source-6.1"
khome="$scratch/home"
res="$scratch/results"
sizes=${SIZES:-"1 10 30 100 300"}
dss_max=${DSS_MAX:-400000000}
nq=${COUNT_QUERIES:-20000}
ncold=${COLD_QUERIES:-200}
reps=${REPS:-2}
stage=${1:-all}
mkdir -p "$res"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
index_dir() { ls -d "$1"/indexes/"$2"-*/ | grep -v '\.lock' | head -1; }

do_prefix() {
    local kdir
    kdir=$(index_dir "$khome" kernel)
    rm -rf "$scratch/prefix"
    "$bs" prefix --index "$kdir" --root "$src" --out "$scratch/prefix" --sizes "$(echo $sizes | tr ' ' ',')" |
        tee "$res/prefix.txt"
}

# build_one HOME NAME TAG ARGS...: timed build of dataset NAME; results in $res/TAG.*
build_one() {
    local home=$1 name=$2 tag=$3
    shift 3
    local out="$res/$tag"
    : >"$out.mem"
    echo "[$tag] load avg before: $(loadavg)" | tee "$out.txt"
    "$here/memwatch.sh" "$out.mem" /usr/bin/time -v -o "$out.time" \
        "$ig" --home "$home" --json --bail -c "build $name $*" >"$out.json" 2>"$out.err"
    echo "[$tag] load avg after: $(loadavg)" | tee -a "$out.txt"
    python3 - "$out.json" "$out.time" "$out.mem" <<'EOF' | tee -a "$out.txt"
import json, re, sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
t = open(sys.argv[2]).read()
m = dict(l.split() for l in open(sys.argv[3]) if l.strip())
wall = j["elapsed_ms"] / 1e3
rss = int(re.search(r"Maximum resident set size .kbytes.: (\d+)", t).group(1))
print(f"BUILD wall {wall:.2f} s  bytes {j['bytes']}  docs {j['documents']}  shards {j['shards']}  "
      f"jobs {j['jobs']}  skipped {j['skipped_files']}  {j['bytes'] / 1e6 / wall:.2f} MB/s  "
      f"maxrss(time -v) {rss / 1024:.0f} MiB  peak Pss sum {int(m['peak_pss_kib']) / 1024:.0f} MiB  "
      f"peak Rss sum {int(m['peak_rss_sum_kib']) / 1024:.0f} MiB")
EOF
}

do_table() {
    local home="$scratch/home-scale"
    head_commit >"$res/commit.txt"
    rm -rf "$home"
    mkdir -p "$home"
    for s in $sizes; do
        "$ig" --home "$home" --bail -c ":dataset add p$s $scratch/prefix/$s" >/dev/null
        # read the tree once so every size starts with its sources in the page cache
        find "$scratch/prefix/$s" -type f -print0 | xargs -0 cat >/dev/null
        build_one "$home" "p$s" "build-p$s" --jobs 2
        local dir
        dir=$(index_dir "$home" "p$s")
        echo "[dss p$s] load avg: $(loadavg)" | tee "$res/dss-p$s.txt"
        "$bs" dss --index "$dir" --whole --max-bytes "$dss_max" $([ "$s" -ge 100 ] && echo --shards) |
            tee -a "$res/dss-p$s.txt"
        echo "[query p$s] load avg: $(loadavg)" | tee "$res/query-p$s.txt"
        "$bs" query --index "$dir" --queries "$nq" --cold "$ncold" | tee -a "$res/query-p$s.txt"
        echo "[query p$s] load avg after: $(loadavg)" | tee -a "$res/query-p$s.txt"
    done
}

# queries again on the table's indexes (no rebuild)
do_query() {
    local home="$scratch/home-scale"
    for s in $sizes; do
        local dir
        dir=$(index_dir "$home" "p$s")
        echo "[query p$s] load avg: $(loadavg)" | tee "$res/query-p$s.txt"
        "$bs" query --index "$dir" --queries "$nq" --cold "$ncold" | tee -a "$res/query-p$s.txt"
        echo "[query p$s] load avg after: $(loadavg)" | tee -a "$res/query-p$s.txt"
    done
}

do_jobs() {
    local home="$scratch/home-jobs" s=300
    rm -rf "$home"
    mkdir -p "$home"
    "$ig" --home "$home" --bail -c ":dataset add p$s $scratch/prefix/$s" >/dev/null
    find "$scratch/prefix/$s" -type f -print0 | xargs -0 cat >/dev/null
    for r in $(seq 1 "$reps"); do
        build_one "$home" "p$s" "jobs1-r$r" --jobs 1 --shard-size 150M
        build_one "$home" "p$s" "jobs2-r$r" --jobs 2
        local dir
        dir=$(index_dir "$home" "p$s")
        echo "[dss-jobs r$r] load avg: $(loadavg)" | tee "$res/dss-jobs-r$r.txt"
        "$bs" dss --index "$dir" --shards --parallel | tee -a "$res/dss-jobs-r$r.txt"
        echo "[dss-jobs r$r] load avg after: $(loadavg)" | tee -a "$res/dss-jobs-r$r.txt"
    done
}

head_commit() { git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown; }

do_report() {
    local commit
    # the commit the results were measured with (recorded by `table`), else the current one
    commit=$(cat "$res/commit.txt" 2>/dev/null || head_commit)
    local to=${REPORT_TO-$root/tests/bench/HISTORY.md}
    python3 "$here/scale_report.py" "$res" --commit "$commit" ${to:+--append "$to"}
}

case $stage in
prefix) do_prefix ;;
report) do_report ;;
table) do_table ;;
query) do_query ;;
jobs) do_jobs ;;
all)
    do_prefix
    do_table
    do_jobs
    do_report
    ;;
*)
    echo "usage: $0 [prefix|table|query|jobs|report|all]" >&2
    exit 2
    ;;
esac
