"""Cluster benchmark (not a test): infinigram-mpi with 2 ranks on loopback against the
same shards in one process.

Tiny Shakespeare (one document per line) is built over 2 ranks (each rank its own home).
Queries are drawn with a fixed seed from the text: 90% substrings of 1..30 bytes, 10%
absent ones. Measured:
  - round trips and messages per command, as rank 0 counts them (INFINIGRAM_MPI_TRACE=1):
    count, count --positions, predict (∞-gram, --n, --interp), prob, backoff, doc, generate (20
    characters: 2 round trips per byte, 2 for the summary), spans (2; --max-count 3), mix (2),
    eval (1, every model), explain (3), search (2), spans --rank bm25 (2; 3 when
    two candidate sources may be identical);
  - count latency with 2 ranks: each query's elapsed_ms as rank 0 reports it (parse, the
    round trip, the merge and the JSON), median and 90th percentile of a timed pass after an
    untimed one (warm);
  - the same shards in one process (bench_parts: the two parts composed, the count
    operation plus its JSON), the same statistics.
Target: 2 ranks <= 3 x one process + 200 us (median).

MPI progress: nothing runs in the background; a waiting rank polls (MPI_Iprobe / MPI_Test),
spinning for 200 polls, then sleeping 50 us growing to 1 ms between polls.

usage: mpi_bench.py INFINIGRAM_MPI BENCH_PARTS TEXT [QUERIES]
"""
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

MPIBIN, PARTS, TEXT = sys.argv[1:4]
NQ = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include="lo",
           INFINIGRAM_MPI_TRACE="1")


def mpirun(np, home, script):
    return subprocess.run(["mpirun", "-np", str(np), MPIBIN, "--home", home + "/h%r", "-f", "-"], input=script,
                          capture_output=True, text=True, env=ENV, timeout=1800)


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    tmp = tempfile.mkdtemp(prefix="ig-mpi-bench-")
    try:
        text = open(TEXT, encoding="utf-8").read()
        r = random.Random(42)
        qs = []
        while len(qs) < NQ:
            a = r.randrange(len(text) - 31)
            s = text[a:a + r.randint(1, 30)]
            if "\n" in s or '"' in s or "\\" in s or s != s.strip() or "  " in s:
                continue
            qs.append(s if r.random() < 0.9 else "qzx" + s)
        open(os.path.join(tmp, "queries"), "w").write("".join(q + "\n" for q in qs))
        home = os.path.join(tmp, "home")
        p = mpirun(2, home, ":dataset add tiny %s --format lines\nbuild tiny --jobs 1\n" % TEXT)
        if p.returncode:
            print(p.stdout, p.stderr)
            return 1
        db = sqlite3.connect(os.path.join(home, "h0", "catalog.db"))
        rec = json.loads(db.execute("SELECT value FROM settings WHERE key = 'cluster.tiny'").fetchone()[0])
        dirs = [x["index"] for x in rec["ranks"]]

        # round trips per command
        llm = os.path.join(tmp, "llm.json")
        open(llm, "w").write(json.dumps([{"token": " thou", "logprob": -0.7}, {"token": " you", "logprob": -1.5},
                                         {"token": " thee", "logprob": -2.1}, {"token": " Romeo", "logprob": -3}]))
        cmds = ['count "the"', 'count --positions 10 "the"', 'predict "wherefore art th"', 'predict --n 3 "the"',
                'predict --interp 2 "wherefore art th"', 'prob "wherefore art" " thou Romeo"', 'backoff "wherefore art th"', "doc 20000",
                "generate --seed 1 --max 20 --no-stop-at-end \"wherefore art\"",
                'spans "O Romeo, Romeo, wherefore art thou Romeo? Deny thy father"',
                'spans --max-count 50 --min-len 4 "O Romeo, Romeo, wherefore art thou Romeo?"',
                'mix "wherefore art" --llm %s --lambda 0.3' % llm,
                'explain --interp 3 "wherefore art th"', 'search "Romeo" AND ("love" OR "night")',
                'eval --text "O Romeo, Romeo, wherefore art thou Romeo? Deny thy father and refuse thy name"',
                'eval --interp 2 --text "O Romeo, Romeo, wherefore art thou Romeo? Deny thy father and refuse thy name"',
                'spans --rank bm25 --min-len 6 "O Romeo, Romeo, wherefore art thou Romeo? Deny thy father"']
        p = mpirun(2, home, "load tiny\n" + "".join(c + "\n" for c in cmds))
        trace = [l for l in p.stderr.splitlines() if l.startswith("trace:")][1:]
        answers = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")][1:]
        print("%-40s %12s %9s" % ("command (2 ranks)", "round trips", "messages"))
        for c, t, a in zip(cmds, trace, answers):
            rt, msgs = t.split(": ")[2].split(", ")
            print("%-40s %12s %9s" % (c, rt.split()[0], msgs.split()[0]))
            if c.startswith("generate"):  # the summary takes 2; the rest is per byte generated
                nb = len(a["text"].encode("utf-8"))
                print("%-40s %12.1f" % ("  a generation step (one byte)", (int(rt.split()[0]) - 2) / max(nb, 1)))

        # count latency: 2 ranks
        script = "load tiny\n" + "".join('count "%s"\n' % q for q in qs) * 2
        p = mpirun(2, home, script)
        out = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")][1:]
        timed = out[len(qs):]
        us = [o["elapsed_ms"] * 1000 for o in timed]
        dist_sum = sum(o["count"] for o in timed)
        # the same shards in one process
        one = subprocess.run([PARTS, os.path.join(tmp, "queries")] + dirs, capture_output=True, text=True,
                             timeout=1800)
        if one.returncode:
            print(one.stderr)
            return 1
        med1, p901, sum1 = one.stdout.split()
        med2, p902 = statistics.median(us), quantile(us, 0.9)
        print()
        print("count latency, %d queries, warm     median us   p90 us" % len(qs))
        print("  2 ranks (infinigram-mpi)         %9.1f %8.1f" % (med2, p902))
        print("  same shards, one process         %9.1f %8.1f" % (float(med1), float(p901)))
        target = 3 * float(med1) + 200
        print("  target: 2 ranks <= 3 x one process + 200 us = %.1f us: %s" % (
            target, "met" if med2 <= target else "NOT met"))
        print("  counts agree: %s" % ("yes" if int(sum1) == dist_sum else "NO (%s vs %d)" % (sum1, dist_sum)))
        return 0 if int(sum1) == dist_sum else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
