#!/usr/bin/env bash
# Runs the libFuzzer targets: each for SECONDS, from the committed seeds plus the corpus it
# grew in earlier runs (kept in BUILD/fuzz-corpus/NAME), on a clang build with -Dfuzz=true.
# Prints one line per target (executions, coverage, corpus size) and fails on any crash,
# leak, timeout or out-of-memory, leaving the reproducer in BUILD/fuzz-artifacts/.
#
#   tests/fuzz/run.sh BUILD SECONDS [TARGET...]      (targets: cnf ingest index attach args http http_raw token_ids)
set -uo pipefail
build=$1 secs=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(cnf ingest index attach args http http_raw token_ids)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/fuzz-artifacts"
status=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  grown="$build/fuzz-corpus/$t"
  mkdir -p "$grown"
  log="$build/fuzz-artifacts/$t.log"
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" "$grown" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "fuzz_$t: exit $rc, ${execs:-0} executions in ${secs} s, ${cov:-cov: ?}, corpus $(ls "$grown" | wc -l) grown"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
  fi
done
exit $status
