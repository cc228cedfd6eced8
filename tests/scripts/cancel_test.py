#!/usr/bin/env python3
"""Ctrl-C (SIGINT) during a long eval stops it, reports the partial result and fails the
command and ends the run (exit status 130); the process does not hang or crash."""
import os
import signal
import subprocess
import sys
import tempfile
import time

BIN, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
passed = failed = 0


def check(cond, what):
    global passed, failed
    passed, failed = passed + bool(cond), failed + (not cond)
    print(("ok: " if cond else "FAIL: ") + what, flush=True)


with tempfile.TemporaryDirectory() as home:
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add s {DATA}", "-c", "build s"], capture_output=True)
    check(p.returncode == 0, "setup")
    # scoring the indexed text itself with all levels is the slowest evaluation there is
    proc = subprocess.Popen([BIN, "--home", home, "-d", "s", "-c", f"eval --interp -1 --threads 1 {DATA}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    took = time.time() - t0
    check(proc.returncode == 130, f"cancelled eval exits with status 130 (got {proc.returncode})")
    check("CANCELLED" in out and "perplexity" in out, "the partial result is printed: " + out[:200])
    check("cancelled" in err, "a message says it was cancelled: " + err.strip())
    check(took < 5, f"the cancel takes effect quickly ({took:.2f} s)")
print(f"cancel: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
