#!/bin/sh
# Side-by-side timing of the byte-level engine against the official infini-gram engine and
# tiny-infini-gram, on the same corpora and the same queries. A benchmark, not a test: it
# needs two programs built outside the repository and skips (status 0, with a message
# saying what is missing) without them:
#
#   $SIDE_OFFICIAL  a driver over the official engine's C++ header (cpp_engine.h) taking
#                   `INDEX_DIR count|ntd|infgram|attribute QUERIES_HEX` and printing
#                   "OP MEDIAN_US N CHECKSUM" (default $SIDE_SCRATCH/driver/bench);
#   $SIDE_TINY      tiny-infini-gram's Go code with a main taking `count|ntd|infgram CORPUS
#                   QUERIES_HEX` (same output) or `gen TRAIN_FILE NSEEDS` ("gen MEDIAN_MS N
#                   CHARS") (default $SIDE_SCRATCH/tiny/tiny);
#
# SIDE_SCRATCH defaults to /tmp/official-scratch. Queries files hold one query per line in
# hex; every program runs each query twice and reports the median of the second (warm)
# pass, timed inside the program (load and start-up excluded; ours: the shell's
# "elapsed_ms" per command).
#
# Method, per corpus (Tiny Shakespeare, and ~4 MB of English made of the plain-text
# copyright and README files under /usr/share/doc in path order, whole files, valid UTF-8
# without 0xFF, as one document; its hash is printed):
#   our index: `:dataset add` + `build`; the official one: a u8 index of the corpus as one
#   document written by tests/oracle/official_index (the official layout, minimal pointers);
#   count: 2,000 random substrings (1-20 bytes, on character boundaries) — ours `count`,
#     official count(), tiny-infini-gram's Lookup (all positions, their way of counting);
#   next byte: the exact distribution after each of those substrings — ours
#     `predict --n LEN+1 --bytes`, official ntd(), tiny buildDistribution with one level;
#   ∞-gram: 2,000 contexts of 40 bytes (20 random corpus bytes, then 20 from elsewhere, so
#     the longest suffix found is partial) — ours `predict --bytes` (∞-gram), official
#     infgram_ntd(), tiny buildDistribution with one level (its longest matching suffix);
#   spans: 200 texts of 120 bytes (four 30-byte pieces from random places) — ours
#     `spans --min-len 8 --max-count 10 --positions 3`, official attribute() with min_len 8,
#     max_cnt 10 and the documents of the first 3 occurrences of each span;
# and generation on the first 90% of Tiny Shakespeare: ours `generate --max 486 --interp 2
# --temperature 0.8 --seed S --no-stop-at-end "First Citizen:"` for 5 seeds, tiny-infini-gram
# Generate("First Citizen:", 500 characters in all, temperature 0.8, k = 2) for 5 seeds.
# Ends with one `RESULT side_by_side {json}` line (bench_result); no table of BENCHMARKS.md
# is written from it.
#
#   tests/bench/side_by_side.sh            # BUILD=build-release by default, else build
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${SIDE_SCRATCH:-/tmp/official-scratch}
official=${SIDE_OFFICIAL:-$scratch/driver/bench}
tiny=${SIDE_TINY:-$scratch/tiny/tiny}
bdir=${BUILD:-}
if [ -z "$bdir" ]; then
    if [ -x "$root/build-release/src/infinigram" ]; then bdir=$root/build-release; else bdir=$root/build; fi
fi
ig=$bdir/src/infinigram
writer=$bdir/tests/oracle/official_index
result=$bdir/tests/bench/bench_result

for p in "$official" "$tiny"; do
    if [ ! -x "$p" ]; then
        echo "SKIP: $p is missing: build the official engine driver and tiny-infini-gram in $scratch first (see the header of $0)"
        exit 0
    fi
done
for p in "$ig" "$writer" "$result"; do
    if [ ! -x "$p" ]; then
        echo "$0: $p is missing: ninja -C $bdir src/infinigram tests/oracle/official_index tests/bench/bench_result" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${IG_BENCH_TMP:-${TMPDIR:-/tmp}}/side_by_side.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export INFINIGRAM_HOME="$tmp/home"

# The queries of one corpus: hex files for the drivers and shell scripts (each query twice:
# the first pass warms up) for ours.
make_queries() { # CORPUS OUTDIR SEED
    python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
corpus, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(corpus, 'rb').read()
r = random.Random(seed)

def boundary(i):  # move i back to the start of a UTF-8 character
    while 0 < i < len(data) and data[i] & 0xC0 == 0x80:
        i -= 1
    return i

def piece(n):
    while True:
        a = boundary(r.randrange(len(data) - n))
        b = boundary(a + n)
        if b > a:
            return data[a:b]

def esc(b):
    return '"' + ''.join('\\x%02x' % c for c in b) + '"'

def emit(name, queries, command):
    with open(f'{out}/{name}.hex', 'w') as f:
        f.writelines(q.hex() + '\n' for q in queries)
    with open(f'{out}/{name}.ig', 'w') as f:
        for _ in range(2):
            f.writelines(command(q) + '\n' for q in queries)

subs = [piece(r.randint(1, 20)) for _ in range(2000)]
emit('count', subs, lambda q: 'count ' + esc(q))
emit('ntd', subs, lambda q: f'predict --n {len(q) + 1} --bytes --top 256 ' + esc(q))
emit('infgram', [piece(20) + piece(20) for _ in range(2000)], lambda q: 'predict --bytes --top 256 ' + esc(q))
emit('spans', [b''.join(piece(30) for _ in range(4)) for _ in range(200)],
     lambda q: 'spans --min-len 8 --max-count 10 --positions 3 ' + esc(q))
EOF
}

# Median of the second half of the elapsed_ms of our JSON lines, in microseconds.
our_median() { # JSONL
    python3 - "$1" <<'EOF'
import json, sys
ms = [json.loads(l)['elapsed_ms'] for l in open(sys.argv[1]) if l.startswith('{"command"')]
ms = sorted(ms[len(ms) // 2:])
print('%.3f' % (1000 * ms[len(ms) // 2]))
EOF
}

# The figure of a driver's output line "OP MEDIAN N CHECKSUM".
field2() { awk '{print $2}' "$1"; }

# The sum of our counts over the second pass: the drivers' count checksum, so that the three
# engines are seen to count alike.
our_count_sum() { # JSONL
    python3 - "$1" <<'EOF'
import json, sys
c = [json.loads(l)['count'] for l in open(sys.argv[1]) if l.startswith('{"command"')]
print(sum(c[len(c) // 2:]))
EOF
}

members=""
corpus_english() { # OUT: ~4 MB of plain-text English from /usr/share/doc
    python3 - "$1" <<'EOF'
import os, sys, hashlib
budget, out = 4_000_000, bytearray()
paths = []
for d, _, files in os.walk('/usr/share/doc'):
    for f in files:
        if f == 'copyright' or f.startswith('README') or f.endswith('.txt'):
            if not f.endswith('.gz'):
                paths.append(os.path.join(d, f))
for p in sorted(paths):
    if os.path.islink(p) or not os.path.isfile(p):
        continue
    b = open(p, 'rb').read()
    try:
        b.decode('utf-8')
    except UnicodeDecodeError:
        continue
    if b'\xff' in b or b'\0' in b or not b:
        continue
    if len(out) + len(b) > budget:
        break
    out += b
open(sys.argv[1], 'wb').write(out)
print(f'english: {len(out)} bytes, sha256 {hashlib.sha256(out).hexdigest()[:16]}', file=sys.stderr)
EOF
}

corpus_english "$tmp/english.txt"
first=1
for name in tinyshakespeare english; do
    if [ $name = tinyshakespeare ]; then src=$root/datasets/tinyshakespeare.txt; else src=$tmp/english.txt; fi
    q=$tmp/q-$name
    mkdir -p "$q"
    make_queries "$src" "$q" 20261126
    "$ig" -c ":dataset add $name $src" -c "build $name" > "$tmp/build-$name.txt"
    "$writer" --bytes "$src" "$tmp/official-$name"
    bytes=$(wc -c < "$src")
    echo "== $name ($bytes bytes)"
    m="\"name\":\"$name\",\"bytes\":$bytes"
    for op in count ntd infgram spans; do
        "$ig" --json -d $name -f "$q/$op.ig" > "$q/$op.ours"
        ours=$(our_median "$q/$op.ours")
        oop=$op
        [ $op = spans ] && oop=attribute
        "$official" "$tmp/official-$name" $oop "$q/$op.hex" > "$q/$op.official"
        off=$(field2 "$q/$op.official")
        line="$op median us: infinigram $ours, official $off"
        json="\"infinigram\":$ours,\"official\":$off"
        if [ $op != spans ]; then
            "$tiny" $op "$src" "$q/$op.hex" > "$q/$op.tiny"
            t=$(field2 "$q/$op.tiny")
            line="$line, tiny-infini-gram $t"
            json="$json,\"tiny_infini_gram\":$t"
        fi
        echo "$line"
        if [ $op = count ]; then
            sums="$(our_count_sum "$q/count.ours") $(awk '{print $4}' "$q/count.official") $(awk '{print $4}' "$q/count.tiny")"
            echo "count totals (infinigram, official, tiny-infini-gram): $sums"
            if ! echo "$sums" | awk '{exit !($1 == $2 && $1 == $3)}'; then
                echo "$0: the engines count differently on $name" >&2
                exit 1
            fi
        fi
        m="$m,\"${op}_us\":{$json}"
    done
    [ $first = 1 ] || members="$members,"
    members="$members{$m}"
    first=0
done

# generation on the first 90% of Tiny Shakespeare (tiny-infini-gram's own split)
python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d[:int(len(d) * 0.9)])" \
    "$root/datasets/tinyshakespeare.txt" "$tmp/shake90.txt"
"$ig" -c ":dataset add shake90 $tmp/shake90.txt" -c "build shake90" > "$tmp/build-shake90.txt"
: > "$tmp/gen.ig"
for s in 1 2 3 4 5; do
    echo "generate --max 486 --interp 2 --temperature 0.8 --seed $s --no-stop-at-end \"First Citizen:\"" >> "$tmp/gen.ig"
done
cat "$tmp/gen.ig" "$tmp/gen.ig" > "$tmp/gen2.ig"
"$ig" --json -d shake90 -f "$tmp/gen2.ig" > "$tmp/gen.ours"
gours=$(our_median "$tmp/gen.ours")
"$tiny" gen "$tmp/shake90.txt" 5 > "$tmp/gen.tiny"
gtiny=$(awk '{printf "%.3f", $2 * 1000}' "$tmp/gen.tiny")
echo "== generate 486 characters on 90% of Tiny Shakespeare, median us: infinigram $gours, tiny-infini-gram $gtiny"

"$result" side_by_side "\"corpora\":[$members],\"generate_us\":{\"infinigram\":$gours,\"tiny_infini_gram\":$gtiny}" \
    side_by_side.sh "$@"
