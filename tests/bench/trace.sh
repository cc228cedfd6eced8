#!/bin/bash
# Trace benchmark on the Linux kernel corpus: `spans --rank bm25` (each span's sources
# ranked by the BM25 relevance of their documents to the whole traced text), target
# "trace of a 1 000-byte text, spans and ranked sources, < 300 ms end to end".
#
#   tests/bench/trace.sh [texts|first|shell|http|all]       (default: all)
#
# Needs the kernel home of tests/bench/kernel.sh (`kernel.sh setup && kernel.sh build`:
# dataset "kernel" in $SCRATCH/home) and the release binary build-release/src/infinigram.
#
# texts  makes the texts (every other stage makes them first; a few seconds), reproducibly
#        (Python's random.Random(TRACE_SEED), default 42, over the sorted list of regular
#        files of the unpacked tree of >= 2 000 bytes):
#        - TRACE_N (default 50) texts of exactly 1 000 bytes: a 300-byte verbatim slice of
#          file A (from a line start), ~200 bytes "paraphrased" (the next lines of A with
#          the words of each line in reverse order), own English text about kernel code
#          (seeded word picks, cut so the text is 1 000 bytes), a 300-byte verbatim slice
#          of file B. Slices that are not valid UTF-8 are drawn again.
#        - TRACE_HEAVY (default 10) texts made the same way from the files of >= 2 MB only
#          (about 40, mostly AMD GPU register headers of 2-24 MB that share many lines):
#          the heavy tail, where a span's candidate documents are large, and ranking reads
#          every candidate document whole.
#        - one warm-up text: a 250-byte slice of one document of each shard (read from the
#          shard's `names`).
#        Written to $SCRATCH/trace/texts.jsonl, with the shell scripts of each stage.
# first  the first-use cost of the BM25 statistics: removes the index's `bm25` file, then
#        one process runs `load kernel` and one ranked trace (text 0) under
#        /usr/bin/time; reports the trace's elapsed_ms (counting df and document lengths
#        over the whole corpus, then writing `bm25`), the file's size, and the same
#        script in a second process, which reads the file.
# shell  in-process: one `infinigram --json -f SCRIPT` process loads kernel, runs one
#        untimed ranked trace of the warm-up text (it reads `bm25` and makes every shard's
#        line index: one-time costs of a process), then, for the N texts and then for the
#        heavy ones, three passes: ranked, unranked, ranked again:
#            spans --rank bm25 --min-len 20 --positions 5 -- "TEXT"
#            spans --min-len 20 --positions 5 -- "TEXT"
#        and reports median, p95 (nearest rank) and max of each pass's elapsed_ms. The
#        first pass is each text's first trace in the process (its suffix-array pages and
#        documents first touched by this process, though the index is in the page cache);
#        the later passes find them warm, so compare rank none with the third pass.
# http   end to end: starts `infinigram --home H serve --port TRACE_PORT` (default
#        18089), waits for /v1/health, then one Python http.client connection
#        (keep-alive) POSTs /v1/spans {"dataset":"kernel","query":TEXT,"min_len":20,
#        "positions":5,"rank":R} with, after one untimed ranked warm-up, the same passes
#        (R = "bm25", "none", "bm25"); reports the client's wall time per request (from
#        sending to having read the whole body) and the server's elapsed_ms; stops the
#        server.
#
# Before each stage the index's files are read once (cat), so that the figures are those
# of an index in the page cache (TRACE_NO_WARM=1 skips this); the share that was resident
# before is printed. Both modes also report the mean number of spans and of sources
# listed per text. The machine should be otherwise idle (2 cores here); the load average
# is printed before and after each stage.
#
# Environment: IG_BENCH_TMP (scratch base, default /tmp; scratch is $IG_BENCH_TMP/ig-kernel),
# KERNEL_TAG (home $SCRATCH/home-TAG, as kernel.sh), TRACE_N, TRACE_HEAVY, TRACE_SEED,
# TRACE_PORT, TRACE_THREADS (serve --threads; default the server's, one per core), IG_BIN
# (the infinigram binary, default build-release/src/infinigram: e.g. a copy of another
# commit's binary, for an A/B run on the same texts).
# Results go to $SCRATCH/results/trace*.txt and are echoed. Nothing under the repo is written.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ig=${IG_BIN:-$root/build-release/src/infinigram}
base=${IG_BENCH_TMP:-/tmp}
scratch="$base/ig-kernel"
src="$scratch/src/linux-source-6.1"
tag=${KERNEL_TAG:-}
home="$scratch/home${tag:+-$tag}"
res="$scratch/results"
work="$scratch/trace"
n=${TRACE_N:-50}
nheavy=${TRACE_HEAVY:-10}
seed=${TRACE_SEED:-42}
port=${TRACE_PORT:-18089}
threads=${TRACE_THREADS:-}
stage=${1:-all}
opts="--min-len 20 --positions 5"
mkdir -p "$res" "$work"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

index_dir() { ls -d "$home"/indexes/kernel-*/ | grep -v '\.lock' | head -1; }

# Reads the index's files once so that the timed traces find them in the page cache (the
# cold case is kernel.sh query's); reports how much was resident before (fincore).
warm_cache() {
    local dir
    dir=$(index_dir)
    if [ -n "${TRACE_NO_WARM:-}" ]; then
        echo "page cache: not warmed (TRACE_NO_WARM)"
        return
    fi
    if command -v fincore >/dev/null; then
        fincore -b -n -o RES,SIZE "$dir"/shard-*/* |
            awk '{r += $1; s += $2} END {printf "page cache: %.1f%% of the index (%.2f of %.2f GB) resident before warming; ", s ? 100 * r / s : 0, r / 1e9, s / 1e9}'
    fi
    /usr/bin/time -f "read it all in %e s" cat "$dir"/shard-*/* >/dev/null
}

check() {
    [ -x "$ig" ] || { echo "no $ig: meson setup build-release --buildtype=release && ninja -C build-release" >&2; exit 1; }
    [ -d "$src" ] && index_dir >/dev/null 2>&1 || { echo "no kernel home: run tests/bench/kernel.sh setup and build" >&2; exit 1; }
}

do_texts() {
    python3 - "$src" "$n" "$nheavy" "$seed" "$work" "$opts" "$(index_dir)" <<'EOF'
import glob, json, os, random, sys

root, n, nheavy, seed, work, opts, idx = sys.argv[1:8]
n, nheavy, seed = int(n), int(nheavy), int(seed)
paths = []
for d, dirs, files in os.walk(root):
    dirs[:] = sorted(x for x in dirs if not x.startswith("."))
    for f in sorted(files):
        p = os.path.join(d, f)
        if not f.startswith(".") and os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) >= 2000:
            paths.append(p)
paths.sort()
big = [p for p in paths if os.path.getsize(p) >= 2_000_000]
rng = random.Random(seed)

WORDS = ("the driver lock buffer queue device memory page kernel interrupt handler register "
         "call returns value error pointer list entry timer state the a of to in when if "
         "we must should never after before each first last free allocate release check "
         "count flag bit mask read write map table cache user thread task core module").split()

def slice_of(data, size):
    """size bytes of data from a line start, valid UTF-8 without NUL; None if none found."""
    for _ in range(20):
        at = rng.randrange(0, len(data) - size)
        nl = data.find(b"\n", at, at + 200)
        at = nl + 1 if nl >= 0 else at
        s = data[at:at + size]
        if len(s) == size and b"\0" not in s:
            try:
                s.decode("utf-8")
                return at, s
            except UnicodeDecodeError:
                pass
    return None

def pick(pool, size):
    while True:
        p = rng.choice(pool)
        data = open(p, "rb").read()
        if len(data) < size + 400 or b"\0" in data[:8192]:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        r = slice_of(data, size)
        if r:
            return p, data, r[0], r[1]

def own(size):
    out = b""
    while len(out) < size:
        k = rng.randrange(6, 14)
        w = [rng.choice(WORDS) for _ in range(k)]
        out += (" ".join(w).capitalize() + ". ").encode()
    return out

def make(i, pool, kind):
    pa, da, ata, sa = pick(pool, 300)
    # paraphrase: the lines after A's slice, words of each line reversed, ~200 bytes
    nxt = da[ata + 300:ata + 300 + 400].decode("utf-8", "ignore")
    para = "\n".join(" ".join(reversed(l.split())) for l in nxt.split("\n")).encode()[:200]
    while True:  # cut on a character boundary
        try:
            para.decode("utf-8")
            break
        except UnicodeDecodeError:
            para = para[:-1]
    pb, db, atb, sb = pick(pool, 300)
    head = sa + b"\n" + para + b"\n"
    tail = b"\n" + sb
    t = head + own(1000 - len(head) - len(tail))[:1000 - len(head) - len(tail)] + tail
    assert len(t) == 1000, len(t)
    return {"i": i, "kind": kind, "a": os.path.relpath(pa, root), "a_at": ata, "b": os.path.relpath(pb, root),
            "b_at": atb, "text": t.decode("utf-8")}

texts = [make(i, paths, "mix") for i in range(n)]
heavy = [make(n + i, big, "heavy") for i in range(nheavy)]

# The warm-up text: a 250-byte slice of a document of each shard (from the middle of the
# shard's names file), so that the one-time work of each shard (its line index, made on a
# shard's first location) is done before the timed traces.
warm = []
for names in sorted(glob.glob(os.path.join(idx, "shard-*", "names"))):
    docs = [x for x in open(names, "rb").read().split(b"\0") if x]
    for p in docs[len(docs) // 2:] + docs[:len(docs) // 2]:
        try:
            d = open(p, "rb").read()
            d.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(d) >= 2000 and b"\0" not in d:
            warm.append(d[1000:1250].decode("utf-8", "ignore"))
            break
warm = {"i": n + nheavy, "kind": "warm-up", "text": "\n".join(warm)}

def shell_quote(s):
    out = []
    for ch in s:
        c = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif c < 0x20 or c == 0x7f:
            out.append("\\x%02x" % c)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'

with open(os.path.join(work, "texts.jsonl"), "w") as f:
    for t in texts + heavy + [warm]:
        f.write(json.dumps(t) + "\n")
with open(os.path.join(work, "first.ig"), "w") as f:
    f.write("load kernel\n")
    f.write(f"spans --rank bm25 {opts} -- {shell_quote(texts[0]['text'])}\n")
with open(os.path.join(work, "shell.ig"), "w") as f:
    f.write("load kernel\n")
    f.write(f"spans --rank bm25 {opts} -- {shell_quote(warm['text'])}\n")
    for group in (texts, heavy):
        for rank in ("--rank bm25 ", "", "--rank bm25 "):
            for t in group:
                f.write(f"spans {rank}{opts} -- {shell_quote(t['text'])}\n")
print(f"{n} texts of 1000 bytes from {len(paths)} files, {nheavy} heavy ones from {len(big)} files of >= 2 MB "
      f"(seed {seed}), a warm-up text of {len(warm['text'])} bytes: {work}/texts.jsonl")
EOF
}

do_first() {
    local dir out="$res/trace-first${tag:+-$tag}.txt"
    dir=$(index_dir)
    : >"$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
    rm -f "$dir/bm25"
    /usr/bin/time -f "%e s wall, %M KiB max RSS" -o "$work/first.time" \
        "$ig" --home "$home" --json --bail -f "$work/first.ig" >"$work/first.json"
    /usr/bin/time -f "%e s wall, %M KiB max RSS" -o "$work/second.time" \
        "$ig" --home "$home" --json --bail -f "$work/first.ig" >"$work/second.json"
    python3 - "$work" "$dir/bm25" <<'EOF' | tee -a "$out"
import json, os, sys
w, f = sys.argv[1], sys.argv[2]
def ms(name):
    l = [json.loads(x) for x in open(os.path.join(w, name)) if x.strip()]
    return l[0]["elapsed_ms"], l[1]["elapsed_ms"], len(l[1]["spans"])
l1, t1, s1 = ms("first.json")
l2, t2, s2 = ms("second.json")
sz = os.path.getsize(f)
print(f"first use (no bm25 file): ranked trace of text 0 {t1:.0f} ms ({s1} spans), load {l1:.1f} ms, "
      f"process {open(os.path.join(w, 'first.time')).read().strip()}")
print(f"bm25 file: {sz} bytes ({sz / 2**20:.1f} MiB)")
print(f"next process (reads bm25; the trace also makes the line index of each shard it locates in): "
      f"same trace {t2:.0f} ms, load {l2:.1f} ms, process {open(os.path.join(w, 'second.time')).read().strip()}")
EOF
    echo "load avg: $(loadavg)" | tee -a "$out"
}

# median / p95 (nearest rank) / max of a list of ms, as a table row
summary_py='
import json, math, statistics, sys
def pct(xs, q):
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]
def row(name, xs, extra=""):
    print(f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, 0.95):.1f} | {max(xs):.1f} | {extra} |")
'

do_shell() {
    local out="$res/trace-shell${tag:+-$tag}.txt"
    : >"$out"
    echo "binary: $ig" | tee -a "$out"
    echo "load avg: $(loadavg)" | tee -a "$out"
    /usr/bin/time -f "%e s wall, %M KiB max RSS" -o "$work/shell.time" \
        "$ig" --home "$home" --json --bail -f "$work/shell.ig" >"$work/shell.json"
    echo "load avg: $(loadavg)" | tee -a "$out"
    echo "process: $(cat "$work/shell.time")" | tee -a "$out"
    python3 - "$work/shell.json" "$n" "$nheavy" <<EOF | tee -a "$out"
$summary_py
l = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
n, h = int(sys.argv[2]), int(sys.argv[3])
assert len(l) == 2 + 3 * (n + h), len(l)
print(f"load {l[0]['elapsed_ms']:.1f} ms; warm-up ranked trace (reads bm25, makes the line indexes; untimed) {l[1]['elapsed_ms']:.1f} ms")
print("| shell, in-process (elapsed_ms) | n | median ms | p95 ms | max ms | spans / sources per text (mean) |")
print("|---|---:|---:|---:|---:|---|")
at = 2
for kind, k in (("mix", n), ("heavy", h)):
    for name in ("spans --rank bm25, 1st pass", "spans (rank none), 2nd pass", "spans --rank bm25, 3rd pass"):
        part = l[at:at + k]
        at += k
        if not part:
            continue
        sp = sum(len(j["spans"]) for j in part) / k
        so = sum(len(s["sources"]) for j in part for s in j["spans"]) / k
        row(f"{kind}: {name}", [j["elapsed_ms"] for j in part], f"{sp:.1f} / {so:.1f}")
EOF
}

do_http() {
    local out="$res/trace-http${tag:+-$tag}.txt" spid
    : >"$out"
    echo "binary: $ig" | tee -a "$out"
    "$ig" --home "$home" serve --port "$port" ${threads:+--threads $threads} >"$work/serve.log" 2>&1 &
    spid=$!
    # stop the server whatever happens below
    trap 'kill $spid 2>/dev/null || true; wait $spid 2>/dev/null || true' EXIT
    echo "load avg: $(loadavg)" | tee -a "$out"
    python3 - "$work/texts.jsonl" "$port" <<EOF | tee -a "$out"
$summary_py
import http.client, time
texts = [json.loads(x) for x in open(sys.argv[1])]
port = int(sys.argv[2])
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        c.request("GET", "/v1/health")
        c.getresponse().read()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("server did not answer")
def post(text, rank):
    body = json.dumps({"dataset": "kernel", "query": text, "rank": rank, "min_len": 20, "positions": 5}).encode()
    t0 = time.perf_counter()
    c.request("POST", "/v1/spans", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    t1 = time.perf_counter()
    if r.status != 200:
        sys.exit(f"HTTP {r.status}: {data[:300]!r}")
    return (t1 - t0) * 1000, json.loads(data), len(data)
w, j, _ = post([t for t in texts if t["kind"] == "warm-up"][0]["text"], "bm25")
print(f"warm-up ranked request (reads bm25, makes the line indexes; untimed): client {w:.1f} ms, server elapsed_ms {j['elapsed_ms']:.1f}")
print("| HTTP POST /v1/spans, keep-alive: client wall | n | median ms | p95 ms | max ms | server elapsed_ms median / p95; response KiB (mean) |")
print("|---|---:|---:|---:|---:|---|")
for kind in ("mix", "heavy"):
    group = [t["text"] for t in texts if t["kind"] == kind]
    if not group:
        continue
    for k, rank in enumerate(("bm25", "none", "bm25")):
        res = [post(t, rank) for t in group]
        s = [x[1]["elapsed_ms"] for x in res]
        row(f'{kind}: rank "{rank}", {("1st", "2nd", "3rd")[k]} pass', [x[0] for x in res],
            f"{statistics.median(s):.1f} / {pct(s, 0.95):.1f}; {sum(x[2] for x in res) / len(res) / 1024:.1f}")
EOF
    echo "load avg: $(loadavg)" | tee -a "$out"
    kill $spid 2>/dev/null || true
    wait $spid 2>/dev/null || true
    trap - EXIT
}

check
case $stage in
texts) do_texts ;;
first) do_texts && warm_cache && do_first ;;
shell) do_texts && warm_cache && do_shell ;;
http) do_texts && warm_cache && do_http ;;
all)
    echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src || echo ' + uncommitted src changes'), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
    do_texts
    warm_cache
    do_first
    warm_cache
    do_shell
    warm_cache
    do_http
    ;;
*)
    echo "usage: $0 [texts|first|shell|http|all]" >&2
    exit 2
    ;;
esac
