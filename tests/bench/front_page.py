#!/usr/bin/env python3
"""The benchmark front page, BENCHMARKS.md, and its dated record, tests/bench/HISTORY.md.

Check (the default): every number on the front page must appear, written the same way, in
HISTORY.md, so the front page can only quote figures that were measured and recorded there.

    python3 tests/bench/front_page.py [FRONT_PAGE [HISTORY]]

A number is a run of digits with its decimal or comma parts ("0.871", "9,938,221") and
any space-separated groups of three ("1 115 394"), not preceded by a letter (so "p99",
"v1" and "K=2"'s name are not numbers, but the 2 is). Words of 7 to 40 hexadecimal digits
are commit ids: each must appear in HISTORY.md or name a commit of this repository.
Prints every number that is missing, with its line, and exits with status 1 if any is.

Update: rewrite the generated tables from the `RESULT name {json}` lines that the benchmark
programs print last (read from the files given, or from standard input).

    python3 tests/bench/front_page.py --update [--page FILE] [--history FILE] [RESULTS...]

Each area's table sits on the front page between `<!-- bench:AREA -->` and
`<!-- /bench:AREA -->`; everything between the two markers is replaced by the target (met or
missed, as the program judges it), the table and a line with the command, date, commit
(`+ changes` when the work tree differs from it) and machine. The same blocks are appended to
HISTORY.md as one dated section, so the check above holds by construction. Text outside the
markers is never touched. A malformed RESULT line, a RESULT without the figures its table
needs, or a page without the area's markers is an error (status 2) and changes no file.
Tables in no marker pair are written by hand.
"""
import datetime
import json
import os
import re
import subprocess
import sys

HEX = re.compile(r"(?<![\w])[0-9a-f]{7,40}(?![\w])")
NUM = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?: \d{3}(?![\d]))*(?:\.\d+)?")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


class Error(Exception):
    pass


# ---- check ----

def numbers(line):
    return [m.group(0) for m in NUM.finditer(line)]


def is_commit(root, word):
    r = subprocess.run(["git", "-C", root, "rev-parse", "--verify", "--quiet", word + "^{commit}"],
                       capture_output=True)
    return r.returncode == 0


def check(front, hist):
    history = open(hist, encoding="utf-8").read()
    hist_words = set(HEX.findall(history))
    hist_nums = set()
    for line in history.splitlines():
        hist_nums.update(numbers(HEX.sub(" ", line)))

    missing = 0
    checked = 0
    for no, line in enumerate(open(front, encoding="utf-8").read().splitlines(), 1):
        for word in HEX.findall(line):
            checked += 1
            if word not in hist_words and not is_commit(ROOT, word):
                print(f"{front}:{no}: commit {word} is neither in {hist} nor a commit")
                missing += 1
        for num in numbers(HEX.sub(" ", line)):
            checked += 1
            if num not in hist_nums:
                print(f"{front}:{no}: {num!r} does not appear in {hist}")
                missing += 1
    print(f"{checked} numbers and commit ids checked, {missing} not found")
    return 1 if missing else 0


# ---- number formats ----

def grouped(n):
    """1115394 -> "1 115 394", the page's way of writing long integers."""
    return f"{int(n):,}".replace(",", " ")


def sig(x):
    """Three significant figures or so: 0.055, 7.05, 23.2, 158, 4101."""
    x = float(x)
    for limit, fmt in ((1, "{:.3f}"), (10, "{:.2f}"), (100, "{:.1f}")):
        if abs(x) < limit:
            return fmt.format(x)
    return f"{x:.0f}"


def times(x):
    return f"{x:.1f}×" if x < 10 else f"{x:.0f}×"


def verdict(ok):
    return "**met**" if ok else "**missed**"


def k_name(k):
    return "−1" if k < 0 else str(k)


def table(head, rows, right_from=1):
    """A Markdown table; columns from right_from on are right-aligned."""
    align = ["---" if i < right_from else "---:" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---- one renderer per area: (target line or None, table) from the RESULT's JSON ----

def area_build(r):
    rows, ratios, bpbs, ok_ratio, ok_size = [], [], [], True, True
    for c in r["corpora"]:
        rows.append([c["name"], grouped(c["bytes"]), f"{c['ratio']:.3f}", f"{c['build_mbps']:.2f}",
                     f"{c['dss_mbps']:.2f}",
                     f"{c['floor_ms']:.1f} ms (≤ {c['ratio_floor']:.3f})" if "floor_ms" in c else "—",
                     f"{c['bytes_per_byte']:.3f} (du {c['bytes_per_byte_du']:.3f})"])
        ratios.append(f"{c['ratio']:.3f}")
        bpbs.append(f"{max(c['bytes_per_byte'], c['bytes_per_byte_du']):.3f}")
        ok_ratio &= c["ratio"] >= 0.9
        ok_size &= c["bytes_per_byte"] <= 5.2 and c["bytes_per_byte_du"] <= 5.2
    target = (f"Targets: whole build ≥ 0.9× raw libdivsufsort for corpora of 1–20 MB — {verdict(ok_ratio)} "
              f"({', '.join(ratios)}); "
              f"index ≤ 5.2 bytes per indexed byte — {verdict(ok_size)} ({', '.join(bpbs)}).")
    head = ["corpus", "bytes", "build ÷ raw divsufsort", "build MB/s", "raw divsufsort MB/s",
            "suffix array made durable (ratio bound)", "index bytes/byte"]
    return target, table(head, rows)


def area_count(r):
    rows, judged = [], []
    for c in r["corpora"]:
        by = c.get("present_by_length_median_us")
        lengths = " / ".join(sig(x) for x in by + [c["absent_median_us"]]) if by else "—"
        rows.append([c["name"], grouped(c["bytes"]), grouped(c["queries"]), sig(c["count_median_us"]),
                     sig(c["count_p99_us"]), lengths, f"{c['load_median_ms']:.3f}"])
        if c["bytes"] >= 4_000_000:
            judged.append(c)
    if judged:
        ok = all(c["count_median_us"] <= 2 for c in judged)
        figs = ", ".join(f"{sig(c['count_median_us'])} µs on {c['name']}" for c in judged)
        target = f"Target: count median ≤ 2 µs on a warm index of ≥ 4 MB — {verdict(ok)}: {figs}."
    else:
        target = None
    head = ["corpus", "bytes", "queries", "median µs", "p99 µs",
            "median by length: 1–3 / 4–10 / 11–30 bytes / absent, µs", "load ms"]
    return target, table(head, rows, right_from=1)


PREDICT_COLUMNS = [("infgram", "predict"), ("infgram", "predict_symbols"),
                   ("interp2", "predict"), ("interp2", "predict_symbols")]


def area_predict(r):
    rows, worst = [], []
    for c in r["predict"]:
        for key, label in (("space", f'`" "` ({grouped(c["count_space"])} times)'),
                           ("e", f'`"e"` ({grouped(c["count_e"])} times)'), ("ctx100", "100 B")):
            k = c[key]
            base = k["count_median_us"]
            cells = [f"{sig(base)} / {sig(k['count_p99_us'])}"]
            for model, variant in PREDICT_COLUMNS:
                med = k[f"{model}_{variant}_median_us"]
                cells.append(f"{sig(med)} / {sig(k[f'{model}_{variant}_p99_us'])} ({times(med / base)})")
            rows.append([c["name"], label] + cells)
            if key != "ctx100":
                worst.append((k["infgram_predict_symbols_median_us"] / base, c["name"], label.split(" (")[0]))
    ratio, name, ctx = max(worst)
    target = (f"Target: after a one-byte context occurring very often, `predict` (∞-gram +symbols) within "
              f"~100× of a count of the same context — {verdict(ratio <= 100)} (at most {times(ratio)}: "
              f"{name}, {ctx}).")
    head = ["corpus", "context", "count", "∞-gram predict", "∞-gram +symbols", "interp K=2 predict",
            "interp K=2 +symbols"]
    note = "Median / p99 in µs; in brackets the median as a multiple of the count of the same contexts."
    return target, table(head, rows, right_from=2) + "\n\n" + note


def area_eval(r):
    e = r["eval"]
    rows = [[p["text"], k_name(p["k"]), f"{p['perplexity']:.2f}", f"{p['published']:.2f}",
             grouped(p["floored"]), f"{p['seconds']:.3f}"] for p in e["perplexities"]]
    med, lo, hi = e["eight_total_s_median"], e["eight_total_s_min"], e["eight_total_s_max"]
    rows.append(["**total**", "", "", "", "", f"**{med:.2f}** (min {lo:.2f}, max {hi:.2f})"])
    match = "All eight" if e["all_match"] else "**Not** all eight"
    target = (f"Target: the eight SBI figures in < 8 s — {verdict(med < 8)}: {med:.2f} s (median of "
              f"{e['reps']}). {match} perplexities reproduce the published values.")
    head = ["text", "K", "perplexity", "published", "floored positions", "seconds"]
    return target, table(head, rows)


def area_generate(r):
    g = r["generate"]
    rows = [[k_name(m["k"]), grouped(m["chars_per_s_median"]), grouped(m["chars_per_s_min"]),
             sig(1e6 / m["chars_per_s_median"]), grouped(m["effective_n_median"])] for m in g["models"]]
    k2 = [m for m in g["models"] if m["k"] == 2]
    target = None
    if k2:
        cps = k2[0]["chars_per_s_median"]
        target = (f"Target: ≥ 250 000 chars/s for interp K = 2 on Tiny Shakespeare — {verdict(cps >= 250000)}: "
                  f"{grouped(cps)} chars/s.")
    head = ["K", f"chars/s (median of {g['seeds']} seeds)", "slowest seed", "µs per character",
            "effective n (median)"]
    return target, table(head, rows)


def area_spans(r):
    rows, judged = [], []
    for c in r["spans"]:
        for kind in ("mutated", "generated", "words", "all"):
            s = c[kind]
            rows.append([f"{c['name']} ({c['bytes'] / 1e6:.1f} MB)", kind, f"{s['median_us']:.1f}",
                         f"{s['p95_us']:.1f}", f"{s['p99_us']:.1f}", f"{s['searches_mean']:.1f}",
                         f"{s['spans_mean']:.2f}"])
        if c["bytes"] >= 4_000_000:
            judged.append(c)
    target = None
    if judged:
        ok = all(c["all"]["median_us"] < 1000 for c in judged)
        figs = ", ".join(f"{c['all']['median_us'] / 1000:.3f} ms on {c['name']}" for c in judged)
        target = f"Target: median < 1 ms for 120 bytes on a ≥ 4 MB corpus — {verdict(ok)}: {figs}."
    head = ["corpus", "texts", "median µs", "p95 µs", "p99 µs", "searches per text", "spans per text"]
    return target, table(head, rows, right_from=2)


def area_search(r):
    s = r["search"]
    names = {"A": "A F∧(F∨F)", "B": "B R∧F", "C": "C R∧(M∨R)", "D": "D M∧(F∨M)", "all": "**all**"}
    rows = [[names[k], sig(s[k]["median_ms"]), sig(s[k]["p95_ms"]), sig(s[k]["p99_ms"]),
             f"{grouped(s[k]['occurrences_mean'])} / {grouped(s[k]['occurrences_max'])}"] for k in names]
    p99 = s["all"]["p99_ms"]
    target = (f"Target: p99 < 10 ms for 2 clauses on ≥ 4 MB and ≥ 10 000 documents — {verdict(p99 < 10)}: "
              f"p99 {sig(p99)} ms ({grouped(s['bytes'])} bytes, {grouped(s['documents'])} documents, "
              f"{grouped(s['queries'])} queries).")
    head = ["class", "median ms", "p95 ms", "p99 ms", "occurrences enumerated (mean / max)"]
    return target, table(head, rows)


def area_compose(results):
    rows, ok = [], True
    for r in sorted(results, key=lambda r: r["parts"]):
        rows.append([r["parts"], f"{r['member_median_ns']:.0f} ns", f"{r['composed_median_ns']:.0f} ns",
                     f"{r['limit_ns']:.0f} ns", f"{r['composed_open_ms']:.3f} ms", f"{r['minus_open_ms']:.3f} ms"])
        ok &= r["composed_median_ns"] <= r["limit_ns"]
    target = (f"Target: a count over a composition of k members within k × one member's count + 1 µs — "
              f"{verdict(ok)}.")
    head = ["members", "one member", "composition", "limit", "open composed", "open minus a part"]
    return target, table(head, rows, right_from=0)


def area_casefold(r):
    rows = [[name, f"{r[name]['build_s']:.2f}", f"{r[name]['bytes_per_byte']:.3f}",
             f"{r[name]['count_median_ns']:.0f}", f"{r[name]['count_p99_ns']:.0f}"]
            for name in ("plain", "casefold")]
    rows.append(["casefold ÷ plain", f"{r['build_ratio']:.3f}", "", f"{r['count_median_ratio']:.3f}",
                 f"{r['count_p99_ratio']:.3f}"])
    size, ratio = r["casefold"]["bytes_per_byte"], r["count_median_ratio"]
    target = (f"Target: a case-folded index ≤ 5.6 bytes per byte on ASCII-heavy text, count latency within "
              f"1.2× of a plain index — {verdict(size <= 5.6 and ratio <= 1.2)}: {size:.3f} bytes per byte "
              f"(the fold file {r['fold_bytes_per_byte']:.4f}), count median {ratio:.3f}× the plain index's.")
    head = ["index", "build s", "bytes per byte", "count median ns", "count p99 ns"]
    return target, table(head, rows)


def area_faces(r):
    base = "baseline" in r["rows"][0]
    rows = [[x["what"], f"{x['this']:.1f}"] + ([f"{x['baseline']:.1f}"] if base else []) for x in r["rows"]]
    head = ["what", "this binary (µs)"] + (["baseline (µs)"] if base else [])
    return None, table(head, rows)


def area_kernel(r):
    rows = [["count, warm", f"{r['count_med_us']:.2f} µs", f"{r['count_p99_us']:.2f} µs"],
            ["count, cold (index pages evicted)", f"{r['cold_med_us'] / 1000:.2f} ms",
             f"{r['cold_p99_us'] / 1000:.2f} ms"],
            ["predict, 1-byte context", f"{sig(r['predict1_med_us'])} µs", f"{sig(r['predict1_p99_us'])} µs"],
            ["predict, 100-byte context", f"{sig(r['predict100_med_us'])} µs", f"{sig(r['predict100_p99_us'])} µs"],
            ["spans, 120 bytes", f"{r['spans_med_us']:.0f} µs", f"{r['spans_p99_us']:.0f} µs"]]
    about = (f"{grouped(r['bytes'])} indexed bytes, {grouped(r['documents'])} documents, {r['shards']} shards; "
             f"index open {r['open_ms']:.2f} ms.")
    return None, table(["query on the kernel index", "median", "p99"], rows) + "\n\n" + about


def area_tokens(r):
    rows = [["attach (map, check sizes, offsets and 1,024 rows a shard)", f"{r['attach_ms']:.3f} ms"],
            ["count, median of " + grouped(r["queries"]) + " runs of 1–4 ids", f"{r['count_median_ns']:.0f} ns"],
            [f"next tokens after the most frequent id ({grouped(r['frequent_context_count'])} occurrences, "
             f"{grouped(r['frequent_next_distinct'])} distinct next), first", f"{r['frequent_ntd_first_ms']:.3f} ms"],
            ["the same again (cached histogram), median of 20", f"{r['frequent_ntd_ms']:.3f} ms"],
            ["next tokens after a 3-id context, median of 20", f"{r['context3_ntd_ms']:.3f} ms"],
            [f"next-token table made ({grouped(r['table_contexts'])} contexts seen {grouped(r['table_min_count'])}+ "
             f"times, {grouped(r['table_entries'])} entries, {r['table_bytes'] / 2**20:.1f} MiB), once",
             f"{r['table_make_s']:.2f} s"],
            ["next tokens after the most frequent id, first, from the table (index attached afresh)",
             f"{r['table_frequent_ntd_first_ms']:.3f} ms"],
            ["the same again, from the table (the answer read in place), median of 20",
             f"{r['table_frequent_ntd_ms'] * 1000:.1f} µs"],
            ["next tokens after id 19, first, from the table", f"{r['table_id19_ntd_first_ms']:.3f} ms"]]
    about = f"Synthetic u16 index: {r['mib']} MiB, {grouped(r['tokens'])} tokens, one shard."
    return None, table(["on an attached token index", "time"], rows) + "\n\n" + about


def area_side_by_side(r):
    rows = []
    for c in r["corpora"]:
        for op, key in (("count", "count_us"), ("next byte", "ntd_us"), ("∞-gram", "infgram_us"),
                        ("spans / attribute", "spans_us")):
            v = c[key]
            rows.append([c["name"], op, f"{v['infinigram']:.2f}", f"{v['official']:.2f}",
                         f"{v['tiny_infini_gram']:.2f}" if "tiny_infini_gram" in v else "–"])
    g = r["generate_us"]
    rows.append(["90% of tinyshakespeare", "generate 486 chars", f"{g['infinigram']:.0f}", "–",
                 f"{g['tiny_infini_gram']:.0f}"])
    return None, table(["corpus", "query", "infinigram µs", "official µs", "tiny-infini-gram µs"], rows, right_from=2)


# area: (RESULT name, part of its JSON that must be there, renderer, renderer takes every RESULT)
AREAS = {
    "build": ("bench_build", "corpora", area_build, False),
    "count": ("bench_count", "corpora", area_count, False),
    "predict": ("bench_model", "predict", area_predict, False),
    "eval": ("bench_model", "eval", area_eval, False),
    "generate": ("bench_generate", "generate", area_generate, False),
    "spans": ("bench_generate", "spans", area_spans, False),
    "search": ("bench_generate", "search", area_search, False),
    "compose": ("bench_compose", "parts", area_compose, True),
    "casefold": ("bench_casefold", "casefold", area_casefold, False),
    "faces": ("faces", "rows", area_faces, False),
    "kernel": ("bench_scale_query", "count_med_us", area_kernel, False),
    "tokens": ("bench_tokens", "count_median_ns", area_tokens, False),
    "side_by_side": ("side_by_side", "corpora", area_side_by_side, False),
}
RESULT = re.compile(r"^RESULT (\S+) (.*)$")


def read_results(sources):
    """{name: [json, ...]} from the RESULT lines of the sources ((label, text) pairs)."""
    found = {}
    for label, text in sources:
        for no, line in enumerate(text.splitlines(), 1):
            if not line.startswith("RESULT"):
                continue
            m = RESULT.match(line.rstrip())
            try:
                if not m:
                    raise ValueError("expected `RESULT name {json}`")
                value = json.loads(m.group(2))
                if not isinstance(value, dict):
                    raise ValueError("the JSON is not an object")
            except ValueError as e:
                raise Error(f"{label}:{no}: malformed RESULT line ({e}): {line[:120]}")
            found.setdefault(m.group(1), []).append(value)
    if not found:
        raise Error("no RESULT lines in the input")
    return found


def commit_id():
    """Short HEAD, with "+ changes" when tracked files differ (the two pages aside)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!BENCHMARKS.md", ":!tests/bench/HISTORY.md"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not known (no git)"
    return head + (" + changes" if dirty else "")


def render(area, results, commit):
    name, needs, fn, takes_all = AREAS[area]
    chosen = [r for r in results if r.get(needs)]
    last = chosen[-1]
    try:
        target, body = fn(chosen) if takes_all else fn(last)
        build = f", {last['buildtype']} build" if "buildtype" in last else ""
        where = (f"`{last['command']}`; {last['date']}, commit {commit}{build}, "
                 f"load average {last['load_average']:.2f}. Machine: {last['machine']}.")
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise Error(f"RESULT {name} lacks the figures of the {area} table: {type(e).__name__} {e}")
    if last.get("buildtype", "release") != "release":
        print(f"warning: the {area} figures come from a {last['buildtype']} build, not release", file=sys.stderr)
    parts = ([target] if target else []) + [body, where]
    return "\n\n".join(parts)


def block_re(area):
    return re.compile(rf"(<!-- bench:{area} -->\n)(.*?)(<!-- /bench:{area} -->)", re.S)


def update(page_path, hist_path, sources):
    found = read_results(sources)
    commit = commit_id()
    blocks = {}
    for area, (name, needs, _, _) in AREAS.items():
        if any(r.get(needs) for r in found.get(name, [])):
            blocks[area] = render(area, found[name], commit)
    unused = sorted(set(found) - {AREAS[a][0] for a in blocks})
    for name in unused:
        print(f"no table for RESULT {name}: skipped", file=sys.stderr)
    if not blocks:
        raise Error("none of the RESULT lines has a table on the front page")
    page = open(page_path, encoding="utf-8").read()
    for area, text in blocks.items():
        pattern = block_re(area)
        if not pattern.search(page):
            raise Error(f"{page_path} has no <!-- bench:{area} --> ... <!-- /bench:{area} --> block")
        page = pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(3), page, count=1)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section = [f"\n## {now}: front-page tables regenerated ({', '.join(blocks)})\n"]
    for area, text in blocks.items():
        section.append(f"### {area.capitalize()}\n\n{text}\n")
    history = open(hist_path, encoding="utf-8").read()
    if not history.endswith("\n"):
        history += "\n"
    history += "\n".join(section)
    write(page_path, page)
    write(hist_path, history)
    print(f"{page_path}: rewrote {', '.join(blocks)}; {hist_path}: appended the same figures")


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    if not argv or argv[0] != "--update":
        front = argv[0] if argv else os.path.join(ROOT, "BENCHMARKS.md")
        hist = argv[1] if len(argv) > 1 else os.path.join(HERE, "HISTORY.md")
        return check(front, hist)
    page, hist, files = os.path.join(ROOT, "BENCHMARKS.md"), os.path.join(HERE, "HISTORY.md"), []
    args = iter(argv[1:])
    for a in args:
        if a in ("--page", "--history"):
            value = next(args, None)
            if value is None:
                print(f"front_page.py: {a} needs a file", file=sys.stderr)
                return 2
            page, hist = (value, hist) if a == "--page" else (page, value)
        else:
            files.append(a)
    try:
        sources = [(f, open(f, encoding="utf-8").read()) if f != "-" else ("stdin", sys.stdin.read())
                   for f in files or ["-"]]
        update(page, hist, sources)
    except (Error, OSError) as e:
        print(f"front_page.py: {e}; nothing changed", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
