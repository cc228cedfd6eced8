#!/bin/bash
# memwatch.sh OUT CMD [ARGS...]: runs CMD in a new session and samples, every
# MEMWATCH_INTERVAL seconds (default 2), the summed Pss and Rss (from /proc/PID/smaps_rollup) of every process of that session
# (the shell and its forked sort children), plus the machine's MemAvailable. Appends
# "peak_pss_kib N", "peak_rss_sum_kib N", "min_memavailable_kib N", "samples N" to OUT
# and exits with CMD's status.
#
# Why: /usr/bin/time -v reports the largest single process ("Maximum resident set size"),
# but a build with --jobs 2 sorts in two forked children at once, and the text pages are
# shared copy-on-write between them and the parent. Pss divides shared pages among the
# processes mapping them, so its sum is what the build really occupies.
#
# The interval is long on purpose: reading smaps_rollup walks every page table of a
# process, and at 0.25 s the sampler took enough CPU from a 2-core machine to slow a
# 1.3 GB build from ~80 s to ~100 s. A sort's memory plateau lasts tens of seconds, so
# 2 s still catches the peak of any build that takes longer than a few seconds.
set -u
interval=${MEMWATCH_INTERVAL:-2}
out=$1
shift
setsid "$@" &
pid=$!
peak_pss=0 peak_rss=0 min_avail=999999999999 n=0
while kill -0 "$pid" 2>/dev/null; do
    read -r pss rss < <(for p in $(ps -o pid= -s "$pid" 2>/dev/null); do
        cat "/proc/$p/smaps_rollup" 2>/dev/null
    done | awk '/^Pss:/ { p += $2 } /^Rss:/ { r += $2 } END { print p + 0, r + 0 }')
    avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
    [ "${pss:-0}" -gt "$peak_pss" ] && peak_pss=$pss
    [ "${rss:-0}" -gt "$peak_rss" ] && peak_rss=$rss
    [ "$avail" -lt "$min_avail" ] && min_avail=$avail
    n=$((n + 1))
    sleep "$interval"
done
wait "$pid"
rc=$?
{
    echo "peak_pss_kib $peak_pss"
    echo "peak_rss_sum_kib $peak_rss"
    echo "min_memavailable_kib $min_avail"
    echo "samples $n"
} >>"$out"
exit $rc
