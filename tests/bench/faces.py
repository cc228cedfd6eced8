#!/usr/bin/env python3
"""The faces over the typed operations, A/B: per-command time of the shell running a
script of 20,000 counts and 3,000 predicts, and per-request time of the HTTP server
answering 2,000 counts and predicts on one keep-alive connection, for this binary and
(optionally) a baseline binary, alternated over three rounds in one run.

usage: faces.py BIN DATASET [BASELINE_BIN]"""
import http.client
import json
import os
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
