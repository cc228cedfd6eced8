#!/usr/bin/env bash
# infinigram-mpi over three hosts that really talk over network interfaces: three network
# namespaces on this machine, each joined to a bridge by a veth pair, with Open MPI's launch
# agent (plm_rsh_agent) a small script that runs `ip netns exec HOST` instead of ssh. Builds a
# corpus over the three ranks, checks the answers against one process of the same parts
# (bench_parts), and prints round trips, count latency and the bytes each host's interface
# carried. Needs root (ip netns); a benchmark, not a test: CI does not run it.
#
# usage: tests/bench/netns.sh BUILD_DIR [CORPUS] [QUERIES]
set -euo pipefail
build=$(cd "$1" && pwd)
corpus=$(realpath "${2:-$(dirname "$0")/../../datasets/tinyshakespeare.txt}")
nq=${3:-1000}
tag=ig$$            # names unique to this run (interfaces: at most 15 characters)
net=10.251.$(( $$ % 200 + 20 ))
tmp=$(mktemp -d)
cleanup() {
  for i in 1 2 3; do ip netns del "${tag}h$i" 2>/dev/null || true; done
  ip link del "${tag}br" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ip link add "${tag}br" type bridge
ip addr add "$net.254/24" dev "${tag}br"
ip link set "${tag}br" up
for i in 1 2 3; do
  ns=${tag}h$i
  ip netns add "$ns"
  ip link add "${tag}v$i" type veth peer name "${tag}p$i"
  ip link set "${tag}p$i" netns "$ns"
  ip link set "${tag}v$i" master "${tag}br" up
  ip -n "$ns" addr add "$net.$i/24" dev "${tag}p$i"
  ip -n "$ns" link set "${tag}p$i" up
  ip -n "$ns" link set lo up
  echo "$net.$i slots=1" >> "$tmp/hosts"
done
# the launch agent: "AGENT HOST COMMAND..." runs COMMAND inside HOST's namespace
cat > "$tmp/agent" <<AGENT
#!/bin/sh
host=\$1; shift
exec ip netns exec "${tag}h\${host##*.}" sh -c "\$*"
AGENT
chmod +x "$tmp/agent"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 INFINIGRAM_MPI_TRACE=1
run() {
  mpirun --hostfile "$tmp/hosts" -np 3 --mca plm_rsh_agent "$tmp/agent" \
    --mca oob_tcp_if_include "$net.0/24" --mca btl tcp,self --mca btl_tcp_if_include "$net.0/24" \
    "$build/src/infinigram-mpi" --home "$tmp/home/h%r" "$@"
}
rx() { ip -n "${tag}h$1" -s link show "${tag}p$1" | awk '/RX:/{getline; r=$1} /TX:/{getline; t=$1} END{print r+t}'; }

t0=$(date +%s.%N)
run -c ":dataset add c $corpus --format lines" -c "build c --jobs 1" > "$tmp/build.out" 2> "$tmp/build.err" || {
  cat "$tmp/build.out" "$tmp/build.err"; exit 1; }
t1=$(date +%s.%N)
echo "build over 3 hosts: $(echo "$t1 - $t0" | bc) s (mpirun included): $(tail -1 "$tmp/build.out")"

python3 - "$corpus" "$nq" > "$tmp/queries" <<'PY'
import random, sys
text = open(sys.argv[1], encoding="utf-8").read()
r, out = random.Random(42), []
while len(out) < int(sys.argv[2]):
    a = r.randrange(len(text) - 31)
    s = text[a:a + r.randint(1, 30)]
    if "\n" in s or '"' in s or "\\" in s or s != s.strip() or "  " in s:
        continue
    out.append(s)
print("\n".join(out))
PY
{ echo "load c"; sed 's/.*/count "&"/' "$tmp/queries"; sed 's/.*/count "&"/' "$tmp/queries"; } > "$tmp/script"
before=$(( $(rx 1) + $(rx 2) + $(rx 3) ))
run -f "$tmp/script" > "$tmp/q.out" 2> "$tmp/q.err"
after=$(( $(rx 1) + $(rx 2) + $(rx 3) ))
python3 - "$tmp/q.out" "$tmp/q.err" "$nq" "$(( after - before ))" <<'PY'
import json, statistics, sys
out = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][1:]
nq = int(sys.argv[3])
timed = [o["elapsed_ms"] * 1000 for o in out[nq:]]
trace = [l for l in open(sys.argv[2]) if l.startswith("trace: count")]
print("count over 3 hosts: %d queries, median %.1f us, p90 %.1f us; %s" % (
    len(timed), statistics.median(timed), sorted(timed)[int(0.9 * len(timed))], trace[0].split(": ", 2)[2].strip()))
print("bytes through the three hosts' interfaces for %d commands: %s (%.0f per count)" % (
    len(out) + 1, sys.argv[4], int(sys.argv[4]) / (len(out) + 1)))
PY
