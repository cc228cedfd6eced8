#!/usr/bin/env python3
"""Reproduces the published SBI table (share/doc/models.md) with exactly the commands
of the README, and checks all ten perplexities to two decimals, plus the share of
floored validation positions documented there."""
import json
import os
import subprocess
import sys
import tempfile

BIN, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
EXPECT = {("90%:", 1): 4036.19, ("90%:", 2): 97.73, ("90%:", 3): 18.24, ("90%:", 5): 7.10, ("90%:", -1): 6.06,
          ("0:90%", 1): 1.00, ("0:90%", 2): 1.17, ("0:90%", 3): 1.28, ("0:90%", 5): 1.42, ("0:90%", -1): 1.45}
FLOOR = {1: 0.348, 2: 0.161, 3: 0.070, 5: 0.012, -1: 0.0017}
passed = failed = 0


def check(cond, what):
    global passed, failed
    passed, failed = passed + bool(cond), failed + (not cond)
    print(("ok: " if cond else "FAIL: ") + what, flush=True)


with tempfile.TemporaryDirectory() as home:
    cmds = [f":dataset add shakes-train {DATA} --range 0:90%", "build shakes-train", "load shakes-train"]
    for (rng, k) in EXPECT:
        cmds.append(f"eval --sbi --interp {k} {DATA} --range {rng}")
    args = [BIN, "--home", home, "--json"]
    for c in cmds:
        args += ["-c", c]
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    check(p.returncode == 0, "the commands run: " + p.stderr[-300:])
    objs = [json.loads(l) for l in p.stdout.splitlines()][3:]
    for ((rng, k), want), o in zip(EXPECT.items(), objs):
        got = round(o["perplexity"], 2)
        check(got == want, f"{'validation' if rng == '90%:' else 'training'} K={k}: perplexity {got:.2f} (published {want:.2f})")
        if rng == "90%:":
            share = o["zero_prob"] / o["scored"]
            check(abs(share - FLOOR[k]) < 0.0006 if k != -1 else o["zero_prob"] == 187,
                  f"validation K={k}: {o['zero_prob']} floored positions ({100 * share:.2f}%)")
        check(o["scored"] == (111539 if rng == "90%:" else 1003853), f"positions scored: {o['scored']}")
print(f"sbi: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
