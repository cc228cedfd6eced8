#!/usr/bin/env bash
# HTTP load test of `infinigram serve` with wrk, on loopback only. Builds a scratch home
# with the bundled Tiny Shakespeare dataset, starts
#     infinigram --home H serve --host 127.0.0.1 --port P --threads 2
# on a free port, and runs wrk (bounded: LOAD_SECONDS each) at concurrency 1, 8 and 64
# against
#     POST /v1/count        {"query":"the"}
#     POST /v1/predict      {"query":"What say"}
#     POST /v1/completions  {"model":"shakespeare","prompt":"ROMEO:","max_tokens":64,
#                            "temperature":0.8,"seed":<different on every request>}
# reporting requests/s, p50/p99/max latency, errors (responses with status >= 400 and
# socket errors: connect, read, write, timeout), the server's VmRSS before and after each
# run, the load average before and after each run and the CPU that other processes used
# during it ("other CPU", in cores: all busy CPU time from /proc/stat, interrupt time
# included, minus the server's and wrk's). A run during which other processes used more
# than LOAD_MAX_FOREIGN cores is repeated (up to LOAD_RETRIES times, LOAD_RETRY_WAIT
# seconds apart) and the quietest attempt is reported. The server is stopped with SIGINT
# at the end (or on Ctrl-C or SIGTERM).
#
#   tests/bench/load.sh                    # 9 runs of 30 s: about 5 minutes (more if
#                                          # runs are repeated on a busy machine)
#   LOAD_SECONDS=5 tests/bench/load.sh     # quick check
#   tests/bench/load.sh path/to/infinigram # another binary (default: build-release's, built)
#
# Settings (environment): LOAD_SECONDS (30), LOAD_CONNECTIONS ("1 8 64"), LOAD_THREADS
# (server threads, 2), LOAD_WRK_THREADS (wrk threads, 2, at most the concurrency),
# LOAD_WRK_TIMEOUT (seconds before wrk counts a request as timed out, 10),
# LOAD_MAX_FOREIGN (0.5), LOAD_RETRIES (2), LOAD_RETRY_WAIT (20), LOAD_RSS_LIMIT_MB (256),
# LOAD_RSS_GROWTH_MB (8). Temp files go under $TMPDIR (default /tmp).
#
# Targets (the exit status is 1 if one is missed): /v1/count at concurrency 8 serves more
# than 10,000 requests/s; no errors in any run; memory stays bounded (the server's peak
# VmHWM stays under LOAD_RSS_LIMIT_MB and no run grows VmRSS by more than
# LOAD_RSS_GROWTH_MB, i.e. nothing grows with the number of requests); the server stops
# cleanly on SIGINT. wrk installs with apt-get if missing (Debian package wrk).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${LOAD_SECONDS:-30}
conns=${LOAD_CONNECTIONS:-1 8 64}
sthreads=${LOAD_THREADS:-2}
wthreads=${LOAD_WRK_THREADS:-2}
wtimeout=${LOAD_WRK_TIMEOUT:-10}
max_foreign=${LOAD_MAX_FOREIGN:-0.5}
retries=${LOAD_RETRIES:-2}
retry_wait=${LOAD_RETRY_WAIT:-20}
rss_limit=${LOAD_RSS_LIMIT_MB:-256}
rss_growth=${LOAD_RSS_GROWTH_MB:-8}
lua="$here/load.lua"

say() { printf '%s\n' "$*"; }
die() { printf 'load.sh: %s\n' "$*" >&2; exit 2; }

# --- tools -----------------------------------------------------------------------------
need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]} with apt-get"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y "${need[@]}" || { $sudo apt-get update && $sudo apt-get install -y "${need[@]}"; } ||
        die "could not install ${need[*]} (apt-get install ${need[*]})"
fi

if [ $# -ge 1 ]; then
    bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
    bdir="$root/build-release"
    [ -f "$bdir/build.ninja" ] || meson setup "$bdir" --buildtype=release >/dev/null
    ninja -C "$bdir" src/infinigram >/dev/null
    bin="$bdir/src/infinigram"
fi
[ -x "$bin" ] || die "no binary at $bin"

# --- scratch home and server -----------------------------------------------------------
home=$(mktemp -d "${TMPDIR:-/tmp}/ig-load.XXXXXX")
pid=""
server_rc=""
stop_server() {
    [ -n "$pid" ] || return 0
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        say "the server did not stop within 10 s of SIGINT: killing it"
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        server_rc=killed
    else
        server_rc=0
        wait "$pid" 2>/dev/null || server_rc=$?
    fi
    pid=""
}
cleanup() { stop_server; rm -rf "$home"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bin" --home "$home" -c ":dataset add shakespeare $root/datasets/tinyshakespeare.txt" -c "build shakespeare" \
    >"$home/build.log" 2>&1 || { cat "$home/build.log" >&2; die "building the dataset failed"; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 40000))
}
for _ in 1 2 3 4 5; do
    port=$(free_port)
    "$bin" --home "$home" serve --host 127.0.0.1 --port "$port" --threads "$sthreads" 2>"$home/serve.log" &
    pid=$!
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 && break
    stop_server                     # the port was taken meanwhile, or the server failed
done
[ -n "$pid" ] || { cat "$home/serve.log" >&2; die "the server did not start"; }
base="http://127.0.0.1:$port"

# --- measurements ----------------------------------------------------------------------
tck=$(getconf CLK_TCK)
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
server_ticks() { sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'; }
child_ticks() { sed 's/^.*) //' "/proc/$$/stat" | awk '{ print $14 + $15 }'; }   # waited-for children (wrk)
now() { date +%s.%N; }

endpoints=(count predict completions)
declare -A path=([count]=/v1/count [predict]=/v1/predict [completions]=/v1/completions)
declare -A body=(
    [count]='{"query":"the"}'
    [predict]='{"query":"What say"}'
    [completions]='{"model":"shakespeare","prompt":"ROMEO:","max_tokens":64,"temperature":0.8}'
)
declare -A seeded=([count]=0 [predict]=0 [completions]=1)

say "# Infinigram HTTP load test (tests/bench/load.sh)"
say "date:       $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "commit:     $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)')"
say "command:    tests/bench/load.sh  (LOAD_SECONDS=$secs LOAD_CONNECTIONS=\"$conns\" LOAD_THREADS=$sthreads LOAD_WRK_THREADS=$wthreads)"
say "server:     $bin --home H serve --host 127.0.0.1 --port $port --threads $sthreads  (pid $pid)"
say "wrk:        $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), threads min($wthreads, concurrency), --timeout ${wtimeout}s, script tests/bench/load.lua"
say "cpu:        $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) (nproc $(nproc))"
say "ram:        $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
say "kernel:     $(uname -sr)"
say "load avg:   $(loadavg)"
say "server RSS: $(rss_kb) kB at start"

# one request per endpoint first: each must answer 200 with a JSON result
for e in "${endpoints[@]}"; do
    b=${body[$e]}
    [ "${seeded[$e]}" = 1 ] && b="${b%\}},\"seed\":1}"
    st=$(curl -s -o "$home/sanity.json" -w '%{http_code}' -H 'Content-Type: application/json' -d "$b" "$base${path[$e]}")
    [ "$st" = 200 ] || die "POST ${path[$e]} $b answered $st: $(head -c 300 "$home/sanity.json")"
    say "sanity:     POST ${path[$e]} -> 200 $(head -c 110 "$home/sanity.json")..."
done
say

rows=()
fail=0
total_errors=0
max_growth_kb=0
count8_rps=""
for e in "${endpoints[@]}"; do
    for c in $conns; do
        wt=$((c < wthreads ? c : wthreads))
        best=""
        for attempt in $(seq 0 "$retries"); do
            la0=$(loadavg)
            r0=$(rss_kb)
            b0=$(busy_ticks); s0=$(server_ticks); k0=$(child_ticks); t0=$(now)
            out=$(LOAD_BODY=${body[$e]} LOAD_SEED=${seeded[$e]} timeout -s INT $((secs + 60)) \
                wrk -t"$wt" -c"$c" -d"${secs}s" --timeout "${wtimeout}s" --latency -s "$lua" "$base${path[$e]}" 2>&1) ||
                { say "$out"; die "wrk failed on ${path[$e]} at concurrency $c"; }
            b1=$(busy_ticks); s1=$(server_ticks); k1=$(child_ticks); t1=$(now)
            r1=$(rss_kb)
            la1=$(loadavg)
            res=$(grep '^LOADRESULT' <<<"$out") || { say "$out"; die "no LOADRESULT from wrk"; }
            say "## POST ${path[$e]} ${body[$e]} concurrency $c (wrk -t$wt -c$c -d${secs}s), attempt $((attempt + 1))"
            grep -v '^LOADRESULT' <<<"$out"
            row=$(awk -v e="${path[$e]}" -v c="$c" -v r0="$r0" -v r1="$r1" -v la0="$la0" -v la1="$la1" \
                -v busy=$((b1 - b0)) -v srv=$((s1 - s0)) -v kids=$((k1 - k0)) -v tck="$tck" -v t0="$t0" -v t1="$t1" '
                function ms(us) { return us < 1000 ? sprintf("%.3f", us / 1000) : sprintf("%.2f", us / 1000) }
                {
                    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                    rps = v["requests"] / (v["duration_us"] / 1e6)
                    sock = v["connect"] + v["read"] + v["write"] + v["timeout"]
                    other = (busy - srv - kids) / tck / (t1 - t0); if (other < 0) other = 0
                    printf "%s|%d|%d|%.0f|%s|%s|%s|%d|%d|%.1f → %.1f|%s|%s|%.2f|%.2f|%.2f|%d\n", e, c, v["requests"], rps,
                        ms(v["p50_us"]), ms(v["p99_us"]), ms(v["max_us"]), v["status"], sock, r0 / 1024, r1 / 1024,
                        la0, la1, srv / tck / (t1 - t0), kids / tck / (t1 - t0), other, r1 - r0
                }' <<<"$res")
            other=$(cut -d'|' -f15 <<<"$row")
            say "server RSS $r0 → $r1 kB; load avg $la0 → $la1; CPU (cores): server $(cut -d'|' -f13 <<<"$row"), wrk $(cut -d'|' -f14 <<<"$row"), other processes $other"
            say
            if [ -z "$best" ] || awk -v a="$other" -v b="$(cut -d'|' -f15 <<<"$best")" 'BEGIN { exit !(a < b) }'; then
                best=$row
            fi
            # every attempt counts for errors and memory growth
            total_errors=$((total_errors + $(cut -d'|' -f8 <<<"$row") + $(cut -d'|' -f9 <<<"$row")))
            g=$(cut -d'|' -f16 <<<"$row")
            [ "$g" -gt "$max_growth_kb" ] && max_growth_kb=$g
            awk -v a="$other" -v m="$max_foreign" 'BEGIN { exit !(a > m) }' || break
            if [ "$attempt" -lt "$retries" ]; then
                say "(other processes used $other cores, more than LOAD_MAX_FOREIGN=$max_foreign: repeating in ${retry_wait}s)"
                sleep "$retry_wait"
            else
                say "(other processes used $other cores on every attempt: reporting the quietest one, marked *)"
                best="${best}*"
            fi
        done
        rows+=("$best")
        [ "$e" = count ] && [ "$c" = 8 ] && count8_rps=$(cut -d'|' -f4 <<<"$best")
    done
done

hwm=$(hwm_kb)
rss_end=$(rss_kb)
stop_server

say "## Summary (latencies in ms; RSS in MiB; other CPU = cores used by other processes during the run)"
say
say "| endpoint | concurrency | requests | requests/s | p50 | p99 | max | non-2xx | socket errors | server RSS before → after | load avg before | load avg after | server CPU | wrk CPU | other CPU |"
say "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"
for r in "${rows[@]}"; do
    mark=""
    case $r in *\*) mark=" (busy machine)"; r=${r%\*} ;; esac
    IFS='|' read -r f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12 f13 f14 f15 _ <<<"$r"
    say "| $f1$mark | $f2 | $f3 | $f4 | $f5 | $f6 | $f7 | $f8 | $f9 | $f10 | $f11 | $f12 | $f13 | $f14 | $f15 |"
done
say
say "server peak RSS (VmHWM) $(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }') MiB, RSS at the end $(awk -v k="$rss_end" 'BEGIN { printf "%.1f", k / 1024 }') MiB; largest growth in one run $max_growth_kb kB"
say
verdict() { if [ "$1" = 1 ]; then say "target met:     $2"; else say "target MISSED:  $2"; fail=1; fi; }
if [ -n "$count8_rps" ]; then
    verdict "$( [ "$count8_rps" -gt 10000 ] && echo 1 || echo 0)" "/v1/count at concurrency 8 > 10,000 requests/s ($count8_rps)"
else
    say "target not measured: /v1/count at concurrency 8 (LOAD_CONNECTIONS has no 8)"
fi
verdict "$( [ "$total_errors" -eq 0 ] && echo 1 || echo 0)" "zero errors ($total_errors non-2xx responses and socket errors over all runs)"
verdict "$( [ "$hwm" -le $((rss_limit * 1024)) ] && [ "$max_growth_kb" -le $((rss_growth * 1024)) ] && echo 1 || echo 0)" \
    "bounded memory (peak VmHWM $hwm kB <= $rss_limit MiB; largest growth in one run $max_growth_kb kB <= $rss_growth MiB)"
verdict "$( [ "$server_rc" = 0 ] && echo 1 || echo 0)" "the server stops cleanly on SIGINT (exit status $server_rc)"
exit "$fail"
