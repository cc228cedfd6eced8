#!/usr/bin/env python3
"""Scaling table from the results of tests/bench/kernel.sh and tests/bench/scale.sh.

    scale_report.py RESULTS_DIR [--append FILE] [--commit HASH]

Reads, for every prefix size S found (build-pS.txt from scale.sh) and for the full kernel
(build-j2.txt, dss-kernel.txt, query.txt from kernel.sh), the build line, the raw divsufsort
RESULT line and the query RESULT line, and prints one Markdown table: build time and MB/s,
ratio to raw single-threaded divsufsort of the same text (as one array, and as the same
shards one after the other), index bytes per corpus byte, peak memory, and count / predict /
spans latency warm and cold. With --append the table is also appended to FILE under a dated
heading. A size whose files are missing is left out (and said so), never invented.
"""
import datetime
import glob
import json
import os
import re
import sys


def result(path, name):
    """The JSON of the last `RESULT name {...}` line of a file, or None."""
    if not os.path.exists(path):
        return None
    found = None
    for line in open(path, errors="replace"):
        if line.startswith("RESULT " + name + " "):
            found = json.loads(line.split(" ", 2)[2])
    return found


def cpu_percent(time_file):
    if not os.path.exists(time_file):
        return None
    m = re.search(r"Percent of CPU this job got: (\d+)%", open(time_file).read())
    return int(m.group(1)) if m else None


def pss_sampled(mem_file):
    """Whether memwatch.sh took enough samples for its peak to mean anything."""
    if not os.path.exists(mem_file):
        return False
    m = re.search(r"^samples (\d+)", open(mem_file).read(), re.M)
    return bool(m) and int(m.group(1)) >= 3


def scale_build(res, s):
    """scale.sh's BUILD line for prefix size s."""
    path = os.path.join(res, f"build-p{s}.txt")
    if not os.path.exists(path):
        return None
    m = None
    for line in open(path):
        if line.startswith("BUILD "):
            m = line
    if not m:
        return None
    g = lambda pat: re.search(pat, m).group(1)
    return dict(wall=float(g(r"wall ([\d.]+) s")), bytes=int(g(r"bytes (\d+)")), docs=int(g(r"docs (\d+)")),
                shards=int(g(r"shards (\d+)")), rss=float(g(r"maxrss\(time -v\) ([\d.]+) MiB")),
                pss=float(g(r"peak Pss sum ([\d.]+) MiB")) if pss_sampled(os.path.join(res, f"build-p{s}.mem")) else None,
                cpu=cpu_percent(os.path.join(res, f"build-p{s}.time")))


def kernel_build(res):
    """kernel.sh's SUMMARY line (the --jobs 2 build)."""
    path = os.path.join(res, "build-j2.txt")
    if not os.path.exists(path):
        return None
    m = None
    for line in open(path):
        if line.startswith("SUMMARY "):
            m = line
    if not m:
        return None
    g = lambda pat: re.search(pat, m).group(1)
    return dict(wall=float(g(r"wall ([\d.]+) s")), bytes=int(g(r"indexed (\d+) bytes")),
                docs=int(g(r"(\d+) docs")), shards=int(g(r"(\d+) shards")),
                rss=float(g(r"\(time -v\) ([\d.]+) MiB")),
                pss=float(g(r"peak summed Pss ([\d.]+) MiB")) if pss_sampled(path + ".mem") else None,
                cpu=cpu_percent(os.path.join(res, "build-j2.txt.time")))


def fmt_bytes(n):
    return f"{n:,}".replace(",", " ")


def mb(n):
    return n / 1e6


def row(name, b, d, q):
    cells = [name]
    cells.append(fmt_bytes(b["bytes"]) if b else "—")
    cells.append(str(b["shards"]) if b else "—")
    if b:
        cells.append(f"{b['wall']:.2f} s")
        cells.append(f"{mb(b['bytes']) / b['wall']:.2f}")
        cells.append(f"{b['cpu']}%" if b["cpu"] is not None else "—")
    else:
        cells += ["—"] * 3
    whole = d and d.get("whole_s", -1) > 0
    turn = d and d.get("shards_s", -1) > 0
    cells.append(f"{d['whole_s']:.2f} s" if whole else "—")
    cells.append(f"{d['whole_s'] / b['wall']:.2f}×" if whole and b else "—")
    cells.append(f"{d['shards_s']:.2f} s" if turn else "—")
    cells.append(f"{d['shards_s'] / b['wall']:.2f}×" if turn and b else "—")
    cells.append(f"{q['index_bytes'] / q['bytes']:.3f}" if q else "—")
    if b:
        pss = f"{b['pss']:.0f} MiB" if b["pss"] is not None else "— (too short to sample)"
        cells.append(f"{b['rss']:.0f} MiB / {pss}")
    else:
        cells.append("—")
    if q:
        cells.append(f"{q['count_med_us']:.2f} / {q['count_p99_us']:.2f} µs")
        cells.append(f"{q['cold_med_us'] / 1e3:.2f} / {q['cold_p99_us'] / 1e3:.2f} ms")
        cells.append(f"{q['predict1_med_us']:.1f} / {q['predict1_p99_us']:.1f} µs")
        cells.append(f"{q['predict100_med_us']:.1f} / {q['predict100_p99_us']:.1f} µs")
        cells.append(f"{q['spans_med_us']:.0f} / {q['spans_p99_us']:.0f} µs")
    else:
        cells += ["—"] * 5
    return "| " + " | ".join(cells) + " |"


HEADER = ("| corpus | indexed bytes | shards | build wall | MB/s | CPU | raw divsufsort, one array | build speed-up "
          "| raw divsufsort, shards in turn | build speed-up | index B/B | max RSS / peak Pss | count warm med / p99 "
          "| count cold med / p99 | predict 1 B med / p99 | predict 100 B med / p99 | spans 120 B med / p99 |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    res, append, commit = args[0], None, None
    i = 1
    while i < len(args):
        if args[i] == "--append" and i + 1 < len(args):
            append = args[i + 1]
            i += 2
        elif args[i] == "--commit" and i + 1 < len(args):
            commit = args[i + 1]
            i += 2
        else:
            print(__doc__, file=sys.stderr)
            return 2
    sizes = sorted(int(m.group(1)) for p in glob.glob(os.path.join(res, "build-p*.txt"))
                   if (m := re.fullmatch(r"build-p(\d+)\.txt", os.path.basename(p))))
    lines, missing = [], []
    for s in sizes:
        b = scale_build(res, s)
        d = result(os.path.join(res, f"dss-p{s}.txt"), "bench_scale_dss")
        q = result(os.path.join(res, f"query-p{s}.txt"), "bench_scale_query")
        if not (b and q):
            missing.append(f"p{s}")
        lines.append(row(f"p{s}", b, d, q))
    kb = kernel_build(res)
    kd = result(os.path.join(res, "dss-kernel.txt"), "bench_scale_dss")
    kq = result(os.path.join(res, "query.txt"), "bench_scale_query")
    if kb or kq:
        lines.append(row("kernel", kb, kd, kq))
    if not kb or not kq:
        missing.append("kernel")
    if not lines:
        print(f"scale_report: no results under {res}", file=sys.stderr)
        return 1
    machine = ""
    for p in sorted(glob.glob(os.path.join(res, "query*.txt"))):
        for line in open(p, errors="replace"):
            if line.startswith("machine: "):
                machine = line[len("machine: "):].strip()
                break
        if machine:
            break
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    table = HEADER + "\n" + "\n".join(lines)
    notes = [f"* Generated {when} by `tests/bench/scale.sh report` from `{res}`"
             + (f", commit {commit}" if commit else "") + (f"; machine: {machine}." if machine else ".")]
    notes.append("* Build speed-up = raw single-threaded divsufsort time ÷ `build --jobs 2` wall time "
                 "(raw sorts of the index's own text; `bench_scale dss`). MB = 10^6 bytes. "
                 "Latencies: `bench_scale query` (warm: 20 000 random substrings; cold: every index page "
                 "evicted before each query).")
    if missing:
        notes.append("* Incomplete rows (a result file was missing): " + ", ".join(missing) + ".")
    text = table + "\n\n" + "\n".join(notes) + "\n"
    print(text)
    if append:
        with open(append, "a") as f:
            f.write(f"\n### Scaling table, {when}\n\n" + text)
        print(f"appended to {append}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
