#!/usr/bin/env python3
"""The faces over the typed operations, A/B: per-command time of the shell running a
script of 20,000 counts and 3,000 predicts, and per-request time of the HTTP server
answering 2,000 counts and predicts on one keep-alive connection, for this binary and
(optionally) a baseline binary, alternated over three rounds in one run.

usage: faces.py BIN DATASET [BASELINE_BIN]

Ends with one line `RESULT faces {json}` (medians in µs per command or request), which
tests/bench/front_page.py --update turns into the table of BENCHMARKS.md."""
import datetime
import http.client
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from igtest import free_port, start_server  # noqa: E402

bins = {"new": os.path.abspath(sys.argv[1])}
data = os.path.abspath(sys.argv[2])
if len(sys.argv) > 3:
    bins["baseline"] = os.path.abspath(sys.argv[3])
random.seed(5)
text = open(data, encoding="utf-8").read()


def pick(lo, hi):
    a = random.randrange(len(text) - hi)
    return text[a:a + random.randint(lo, hi)]


counts = [pick(3, 12) for _ in range(20000)]
predicts = [pick(5, 30) for _ in range(3000)]
res = {}
with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    subprocess.run([bins["new"], "--home", home, "-c", f":dataset add shakespeare {data}", "-c", "build shakespeare"],
                   check=True, capture_output=True)
    for name, lines in (("count", [f"count {json.dumps(q)}" for q in counts]),
                        ("predict", [f"predict --interp 2 {json.dumps(q)}" for q in predicts])):
        with open(os.path.join(tmp, name + ".ig"), "w") as f:
            f.write("\n".join(lines) + "\n")
    for rnd in range(3):
        for v, b in bins.items():
            for name, n in (("count", len(counts)), ("predict", len(predicts))):
                t0 = time.perf_counter()
                subprocess.run([b, "--home", home, "-d", "shakespeare", "-f", os.path.join(tmp, name + ".ig")],
                               check=True, stdout=subprocess.DEVNULL)
                res.setdefault((v, "shell " + name), []).append((time.perf_counter() - t0) / n * 1e6)
            port = free_port()
            srv = start_server([b, "--home", home, "serve", "--port", str(port), "--threads", "2"], port,
                               stderr=subprocess.DEVNULL)
            c = http.client.HTTPConnection("127.0.0.1", port)
            for ep, body in (("count", lambda q: {"query": q}), ("predict", lambda q: {"query": q, "interp": 2})):
                t0 = time.perf_counter()
                for q in counts[:2000]:
                    c.request("POST", "/v1/" + ep, json.dumps(body(q)))
                    r = c.getresponse()
                    r.read()
                res.setdefault((v, "http " + ep), []).append((time.perf_counter() - t0) / 2000 * 1e6)
            srv.terminate()
            srv.wait()
print("| what | " + " | ".join(f"{v} (µs, median of 3)" for v in bins) + " |")
print("|---|" + "---|" * len(bins))
for what in ("shell count", "shell predict", "http count", "http predict"):
    print(f"| {what} | " + " | ".join(f"{sorted(res[(v, what)])[1]:.1f}" for v in bins) + " |")


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    ram = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return f"{cpu}, {os.cpu_count()} cpus, {ram / 1048576:.1f} GiB RAM"


def shorter(path):
    """A path inside the repository, relative to its root."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return os.path.relpath(path, root) if os.path.abspath(path).startswith(root + os.sep) else path


rows = [{"what": what, "this": round(sorted(res[("new", what)])[1], 1)} for what in
        ("shell count", "shell predict", "http count", "http predict")]
if "baseline" in bins:
    for row in rows:
        row["baseline"] = round(sorted(res[("baseline", row["what"])])[1], 1)
result = {"machine": machine(),
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
          "load_average": round(os.getloadavg()[0], 2),
          "command": "faces.py " + " ".join(shorter(a) for a in sys.argv[1:]), "rows": rows}
print("RESULT faces " + json.dumps(result, ensure_ascii=False))
