#!/usr/bin/env python3
"""tests/bench/front_page.py --update on copies of BENCHMARKS.md and HISTORY.md: sample RESULT
lines rewrite the marked tables (and nothing outside them), the same blocks are appended to
HISTORY.md, the check still passes, a second update replaces the first, and a malformed or
incomplete RESULT line is an error that changes neither file.

usage: front_page_test.py FRONT_PAGE_PY SOURCE_ROOT"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCRIPT, ROOT = sys.argv[1], sys.argv[2]
HEAD = {"buildtype": "release", "machine": "Test CPU, 2 cpus, 23.5 GiB RAM", "date": "2031-01-02 03:04 UTC",
        "load_average": 0.25}


def result(name, command, **figures):
    return f"RESULT {name} " + json.dumps(dict(HEAD, command=command, **figures), ensure_ascii=False)


def predict_kind(base):
    k = {"count_median_us": base, "count_p99_us": base * 2}
    for model in ("infgram", "interp2"):
        for variant in ("predict", "predict_symbols"):
            k[f"{model}_{variant}_median_us"] = base * 30
            k[f"{model}_{variant}_p99_us"] = base * 90
    return k


def span_kind(med):
    return {"median_us": med, "p95_us": med + 50, "p99_us": med + 90, "searches_mean": 210.5, "spans_mean": 4.25}


def search_class(med):
    return {"median_ms": med, "p95_ms": med * 2, "p99_ms": med * 3, "occurrences_mean": 21391,
            "occurrences_max": 120637}


corpus = {"name": "tinyshakespeare", "bytes": 1115394}
big = {"name": "usr-include", "bytes": 16771443}
SAMPLES = [
    "some program output",
    result("bench_build", "bench_build --reps 7", corpora=[
        dict(corpus, ratio=0.8704, build_mbps=12.191, dss_mbps=14.004, bytes_per_byte=5.0011,
             bytes_per_byte_du=5.0204, floor_ms=6.31, ratio_floor=0.8838)]),
    result("bench_count", "bench_count --queries 100000", corpora=[
        dict(big, queries=100000, count_median_us=2.5123, count_p99_us=3.5612, load_median_ms=2.4567,
             present_by_length_median_us=[0.12, 2.16, 2.01], absent_median_us=1.71)]),
    result("bench_model", "bench_model --queries 3000 --reps 3",
           predict=[dict(big, count_space=2849745, count_e=1081341, space=predict_kind(0.055),
                         e=predict_kind(0.05), ctx100=predict_kind(2.45))],
           eval={"reps": 3, "eight_total_s_median": 7.404, "eight_total_s_min": 6.561, "eight_total_s_max": 11.63,
                 "all_match": True,
                 "perplexities": [{"text": "validation", "k": k, "perplexity": 97.7349, "published": 97.73,
                                   "floored": 17990, "seconds": 0.183} for k in (1, 2, 3, 5, -1)]}),
    result("bench_generate", "bench_generate --seeds 3 --chars 20000",
           generate={"seeds": 3, "models": [{"k": k, "chars_per_s_median": 455123, "chars_per_s_min": 451000,
                                             "effective_n_median": 15} for k in (1, 2, -1)]},
           spans=[dict(big, texts=2000, mutated=span_kind(282.6), generated=span_kind(276.0),
                       words=span_kind(290.5), all=span_kind(283.4))],
           search=dict(big, documents=39050, queries=2000, A=search_class(3.92), B=search_class(0.96),
                       C=search_class(0.37), D=search_class(2.21), all=search_class(1.54))),
    result("bench_compose", "bench_compose --parts 4", parts=4, member_median_ns=400, composed_median_ns=2113,
           limit_ns=2600, composed_open_ms=1.7, minus_open_ms=0.636),
    result("bench_compose", "bench_compose --parts 2", parts=2, member_median_ns=591, composed_median_ns=1011,
           limit_ns=2042, composed_open_ms=0.233, minus_open_ms=0.352),
    result("bench_casefold", "bench_casefold --queries 100000", build_ratio=0.97, count_median_ratio=0.935,
           count_p99_ratio=0.928, fold_bytes_per_byte=0.125,
           plain={"build_s": 13.1, "bytes_per_byte": 5.133, "count_median_ns": 2293, "count_p99_ns": 4000},
           casefold={"build_s": 12.7, "bytes_per_byte": 5.258, "count_median_ns": 2144, "count_p99_ns": 3712}),
    result("faces", "faces.py build/src/infinigram datasets/tinyshakespeare.txt",
           rows=[{"what": "shell count", "this": 1.7, "baseline": 5.7}]),
    result("bench_scale_query", "bench_scale query --index DIR", bytes=1298428179, documents=78223, shards=4,
           open_ms=3.25, count_med_us=5.78, count_p99_us=15.2, cold_med_us=2870, cold_p99_us=18390,
           predict1_med_us=4.5, predict1_p99_us=9.4, predict100_med_us=45.7, predict100_p99_us=75.6,
           spans_med_us=992, spans_p99_us=1946),
    result("bench_scale_dss", "bench_scale dss --index DIR", whole_s=150.9),
]
# area -> rows or phrases its rewritten block must hold
EXPECT = {
    "build": ["| tinyshakespeare | 1 115 394 | 0.870 | 12.19 | 14.00 | 6.3 ms (≤ 0.884) | 5.001 (du 5.020) |",
              "≥ 0.9× raw libdivsufsort for corpora of 1–20 MB — **missed** (0.870)", "`bench_build --reps 7`"],
    "count": ["| usr-include | 16 771 443 | 100 000 | 2.51 | 3.56 | 0.120 / 2.16 / 2.01 / 1.71 | 2.457 |",
              "≤ 2 µs on a warm index of ≥ 4 MB — **missed**: 2.51 µs on usr-include"],
    "predict": ['| usr-include | `" "` (2 849 745 times) | 0.055 / 0.110 | 1.65 / 4.95 (30×) |',
                "— **met** (at most 30×"],
    "eval": ["| validation | −1 | 97.73 | 97.73 | 17 990 | 0.183 |", "**7.40** (min 6.56, max 11.63)",
             "< 8 s — **met**: 7.40 s (median of 3). All eight"],
    "generate": ["| 2 | 455 123 | 451 000 | 2.20 | 15 |", "— **met**: 455 123 chars/s"],
    "spans": ["| usr-include (16.8 MB) | all | 283.4 | 333.4 | 373.4 | 210.5 | 4.25 |", "— **met**: 0.283 ms"],
    "search": ["| **all** | 1.54 | 3.08 | 4.62 | 21 391 / 120 637 |", "— **met**: p99 4.62 ms"],
    "compose": ["| 2 | 591 ns | 1011 ns | 2042 ns | 0.233 ms | 0.352 ms |\n| 4 | 400 ns |", "+ 1 µs — **met**"],
    "casefold": ["| casefold | 12.70 | 5.258 | 2144 | 3712 |", "— **met**: 5.258 bytes per byte"],
    "faces": ["| shell count | 1.7 | 5.7 |"],
    "kernel": ["| count, warm | 5.78 µs | 15.20 µs |", "| count, cold (index pages evicted) | 2.87 ms | 18.39 ms |"],
}
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=""):
    return subprocess.run([sys.executable, SCRIPT, *args], input=stdin, capture_output=True, text=True)


def blocks(text):
    return dict(re.findall(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", text, re.S))


def outside(text):
    return re.sub(r"(<!-- bench:(\w+) -->\n).*?(<!-- /bench:\2 -->)", r"\1\3", text, flags=re.S)


with tempfile.TemporaryDirectory() as tmp:
    page, hist = os.path.join(tmp, "BENCHMARKS.md"), os.path.join(tmp, "HISTORY.md")
    shutil.copy(os.path.join(ROOT, "BENCHMARKS.md"), page)
    shutil.copy(os.path.join(ROOT, "tests", "bench", "HISTORY.md"), hist)
    page0, hist0 = open(page, encoding="utf-8").read(), open(hist, encoding="utf-8").read()
    expect(set(EXPECT) <= set(blocks(page0)), f"the front page marks every area: {sorted(blocks(page0))}")

    # every area from standard input
    r = run("--update", "--page", page, "--history", hist, stdin="\n".join(SAMPLES) + "\n")
    expect(r.returncode == 0, f"update succeeds: {r.stderr}")
    expect("no table for RESULT bench_scale_dss" in r.stderr, "a RESULT without a table is named and skipped")
    page1, hist1 = open(page, encoding="utf-8").read(), open(hist, encoding="utf-8").read()
    new = blocks(page1)
    for area, wanted in EXPECT.items():
        for text in wanted:
            expect(text in new.get(area, ""), f"{area} block holds {text!r}")
        expect("2031-01-02 03:04 UTC, commit " in new.get(area, ""), f"{area} block names the date and commit")
        expect("Machine: Test CPU, 2 cpus, 23.5 GiB RAM." in new.get(area, ""), f"{area} block names the machine")
        expect(new.get(area, "") in hist1, f"HISTORY.md holds the {area} block")
    expect(outside(page1) == outside(page0), "nothing outside the markers changes")
    expect(hist1.startswith(hist0) and "front-page tables regenerated" in hist1[len(hist0):],
           "HISTORY.md gains one dated section at its end")
    check = run(page, hist)
    expect(check.returncode == 0, f"the check passes after an update: {check.stdout[-500:]}")

    # a second update from a file replaces the block; HISTORY.md keeps both
    results = os.path.join(tmp, "results.txt")
    with open(results, "w", encoding="utf-8") as f:
        f.write(result("faces", "faces.py BIN DATA", rows=[{"what": "shell count", "this": 2.5}]) + "\n")
    r = run("--update", "--page", page, "--history", hist, results)
    page2, hist2 = open(page, encoding="utf-8").read(), open(hist, encoding="utf-8").read()
    expect(r.returncode == 0, f"second update succeeds: {r.stderr}")
    expect("| shell count | 2.5 |" in blocks(page2)["faces"] and "5.7" not in blocks(page2)["faces"],
           "the second update replaces the faces table")
    expect({a: b for a, b in blocks(page2).items() if a != "faces"} == {a: b for a, b in new.items() if a != "faces"},
           "the second update leaves the other areas alone")
    expect(hist2.startswith(hist1) and "| shell count | 2.5 |" in hist2[len(hist1):], "HISTORY.md keeps both runs")

    # errors: nothing changes
    for bad, message in (
            (SAMPLES[1] + '\nRESULT bench_count {"corpora": [', "stdin:2: malformed RESULT line"),
            (SAMPLES[1] + "\nRESULT bench_count", "stdin:2: malformed RESULT line"),
            (SAMPLES[1] + '\nRESULT bench_count ["a list"]', "stdin:2: malformed RESULT line"),
            (result("bench_build", "bench_build", corpora=[{"name": "x"}]), "lacks the figures of the build table"),
            ("no result at all", "no RESULT lines")):
        r = run("--update", "--page", page, "--history", hist, stdin=bad + "\n")
        expect(r.returncode == 2 and message in r.stderr and "nothing changed" in r.stderr,
               f"{bad[-40:]!r} is an error naming {message!r}: rc {r.returncode}, {r.stderr.strip()}")
        expect(open(page, encoding="utf-8").read() == page2 and open(hist, encoding="utf-8").read() == hist2,
               f"{bad[-40:]!r} changes no file")
    with open(page, "w", encoding="utf-8") as f:
        f.write(outside(page2).replace("<!-- bench:count -->", ""))
    r = run("--update", "--page", page, "--history", hist, stdin=SAMPLES[2] + "\n")
    expect(r.returncode == 2 and "no <!-- bench:count -->" in r.stderr, f"a page without the markers: {r.stderr}")
    expect(open(hist, encoding="utf-8").read() == hist2, "a page without the markers changes no file")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
