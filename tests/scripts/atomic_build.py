#!/usr/bin/env python3
"""Atomic builds, leftovers and concurrency, against the real binary.

- A build killed (SIGKILL) at every phase leaves the previous index in force,
  answering identically, and the catalog consistent; the next start removes the
  leftovers. Killed after the commit point, the new index is in force.
- Kills at pseudo-random moments (fixed seed) during a larger build: same guarantees.
- A build that is still running (frozen with SIGSTOP) keeps its directory when another
  shell starts, and completes afterwards.
- A full disk (RLIMIT_FSIZE) fails the build with a clear message; nothing changes.
- Two shells on one home add and build at the same time; both succeed.
- A catalog locked by another process gives a clear "busy" error, not a hang or crash.
"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.path.abspath(sys.argv[1])
SHAKES = os.path.abspath(sys.argv[2])
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, flush=True)


def run(home, *cmds, env=None, dataset=None, check_rc=None):
    args = [BIN, "--home", home, "--json"]
    if dataset:
        args += ["-d", dataset]
    for c in cmds:
        args += ["-c", c]
    e = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    e.update(env or {})
    p = subprocess.run(args, capture_output=True, text=True, env=e, timeout=600)
    return p


def answers(home, name, queries):
    p = run(home, *['count "%s"' % q for q in queries], dataset=name)
    if p.returncode != 0:
        return ("error", p.stderr)
    return [json.loads(l)["count"] for l in p.stdout.splitlines()]


def index_dirs(home):
    d = os.path.join(home, "indexes")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def info(home, name):
    p = run(home, ":dataset info " + name)
    return json.loads(p.stdout.splitlines()[0]) if p.returncode == 0 else None


QUERIES = ["the", "ROMEO", "wherefore", "NEWTEXT", "e", "KING RICHARD III:", "zzzz"]


def kill_at_phases(tmp):
    home = os.path.join(tmp, "h1")
    src = os.path.join(tmp, "src.txt")
    with open(SHAKES, "rb") as f:
        base = f.read()
    with open(src, "wb") as f:
        f.write(base)
    p = run(home, ":dataset add d " + src, "build d")
    check(p.returncode == 0, "initial build: " + p.stderr)
    old = answers(home, "d", QUERIES)
    old_info = info(home, "d")
    with open(src, "ab") as f:
        f.write(b"\nNEWTEXT NEWTEXT the end\n")
    for phase in ["scan", "read", "sort", "write", "sync"]:
        p = run(home, "build d", env={"INFINIGRAM_TEST_KILL_AT": phase})
        check(p.returncode == -signal.SIGKILL, f"kill at {phase}: killed (rc {p.returncode})")
        check(answers(home, "d", QUERIES) == old, f"kill at {phase}: old index answers identically")
        now = info(home, "d")
        check(now and now["index_path"] == old_info["index_path"] and now["bytes"] == old_info["bytes"],
              f"kill at {phase}: catalog unchanged")
        # the query runs above started shells, which cleaned the leftovers
        leftovers = [d for d in index_dirs(home) if d != os.path.basename(old_info["index_path"])]
        check(leftovers == [], f"kill at {phase}: leftovers removed on next start: {leftovers}")
    p = run(home, "build d", env={"INFINIGRAM_TEST_KILL_AT": "commit"})
    check(p.returncode == -signal.SIGKILL, "kill after commit: killed")
    new = answers(home, "d", QUERIES)
    check(new != old and new[QUERIES.index("NEWTEXT")] == 2, f"after the commit point the new index is in force: {new}")
    now = info(home, "d")
    check(now["index_path"] != old_info["index_path"] and os.path.isdir(now["index_path"]), "catalog points at the new index")
    check(index_dirs(home) == [os.path.basename(now["index_path"])], f"old index removed at next start: {index_dirs(home)}")


def random_kills(tmp):
    home = os.path.join(tmp, "h2")
    src = os.path.join(tmp, "big.txt")
    with open(SHAKES, "rb") as f:
        base = f.read()
    with open(src, "wb") as f:
        for i in range(6):
            f.write(base.replace(b"the", b"the%d" % i))
    p = run(home, ":dataset add big " + src, "build big")
    check(p.returncode == 0, "big initial build")
    old = answers(home, "big", QUERIES + ["the3"])
    t0 = time.time()
    p = run(home, "build big")
    full = time.time() - t0
    old = answers(home, "big", QUERIES + ["the3"])
    ref = info(home, "big")
    rnd = random.Random(7)
    for i in range(6):
        delay = rnd.uniform(0.02, max(0.05, full * 0.9))
        proc = subprocess.Popen([BIN, "--home", home, "-c", "build big"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        got = answers(home, "big", QUERIES + ["the3"])
        check(got == old, f"random kill {i} after {delay:.3f}s: answers identical")
        cur = info(home, "big")
        check(cur["status"] == "built" and os.path.isdir(cur["index_path"]), f"random kill {i}: catalog consistent")
        check(len(index_dirs(home)) == 1, f"random kill {i}: one index directory left: {index_dirs(home)}")
        check(not [f for f in index_dirs(home) if f.endswith(".lock")], f"random kill {i}: no lock files left")


def running_build_is_respected(tmp):
    home = os.path.join(tmp, "h3")
    p = run(home, ":dataset add s " + SHAKES)
    proc = subprocess.Popen([BIN, "--home", home, "-c", "build s"], env=dict(os.environ, INFINIGRAM_TEST_STOP_AT="sort"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    dirs = []
    while time.time() < deadline:
        dirs = [d for d in index_dirs(home) if not d.endswith(".lock")]
        st = open(f"/proc/{proc.pid}/stat").read().split()[2] if os.path.exists(f"/proc/{proc.pid}/stat") else "?"
        if dirs and st == "T":
            break
        time.sleep(0.02)
    check(len(dirs) == 1, "a build in progress has its directory")
    p = run(home, ":dataset list")  # a second shell starts and cleans up
    check(p.returncode == 0, "second shell runs while a build is in progress")
    check([d for d in index_dirs(home) if not d.endswith(".lock")] == dirs, "the running build's directory survives cleanup")
    proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    check(proc.returncode == 0, "the frozen build completes: " + err)
    check(answers(home, "s", ["wherefore art thou"]) == [1], "its index works")


def cancel_during_sort(tmp):
    home = os.path.join(tmp, "h7")
    src = os.path.join(tmp, "sortme.txt")
    with open(SHAKES, "rb") as f:
        base = f.read()
    with open(src, "wb") as f:
        for i in range(8):
            f.write(base.replace(b"e", b"%d" % i))
    run(home, ":dataset add s " + src)
    proc = subprocess.Popen([BIN, "--home", home, "-c", "build s"], env=dict(os.environ, INFINIGRAM_TEST_STOP_AT="sort"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        st = open(f"/proc/{proc.pid}/stat").read().split()[2]
        if st == "T":
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    t0 = time.time()
    proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    took = time.time() - t0
    check(proc.returncode == 130 and "cancelled" in err, f"Ctrl-C during the sort cancels the build ({proc.returncode}: {err.strip()})")
    check(took < 1.0, f"the cancel takes effect at once, not after the sort ({took:.2f} s)")
    check(index_dirs(home) == [], f"nothing left behind by the cancelled build: {index_dirs(home)}")


def tight_memory(tmp):
    home = os.path.join(tmp, "h8")
    p = run(home, f":dataset add big {SHAKES} --format lines", f":dataset add small {SHAKES} --format lines",
            "build big --jobs 1", "build small --jobs 2 --memory 4M")
    check(p.returncode == 0, "a build under a tight --memory limit succeeds: " + p.stderr[-300:])
    objs = [json.loads(l) for l in p.stdout.splitlines()]
    big, small = objs[2], objs[3]
    check(big["shards"] == 1 and small["shards"] >= 3, f"it uses more, smaller shards ({small['shards']})")
    check(small["memory_limited"] and small["shard_size"] <= 4 * 1024 * 1024 // 11,
          f"the shard size was lowered to fit: {small['shard_size']}")
    for q in QUERIES + ["ROMEO:", "Romeo", "\\n"]:
        a = answers(home, "big", [q])
        b = answers(home, "small", [q])
        check(a == b, f"same answers with {small['shards']} shards and one: {q!r} {a} {b}")


def disk_full(tmp):
    home = os.path.join(tmp, "h4")
    p = run(home, ":dataset add s " + SHAKES, "build s")
    check(p.returncode == 0, "disk-full setup build")
    before = answers(home, "s", QUERIES)
    ref = info(home, "s")
    p = subprocess.run(["bash", "-c", f'ulimit -f 2000; exec "{BIN}" --home "{home}" -c "build s"'],
                       capture_output=True, text=True)
    check(p.returncode == 1, f"build with a full disk fails cleanly (rc {p.returncode})")
    check("File too large" in p.stderr or "No space" in p.stderr, "message names the cause: " + p.stderr.strip())
    check("/indexes/" in p.stderr, "message names the file")
    check(answers(home, "s", QUERIES) == before, "old index still answers after the failed build")
    check(info(home, "s")["index_path"] == ref["index_path"], "catalog unchanged after the failed build")
    check(len(index_dirs(home)) == 1, f"no leftovers after the failed build: {index_dirs(home)}")


def two_shells(tmp):
    home = os.path.join(tmp, "h5")
    run(home, ":show")
    errors = []

    def worker(k):
        for i in range(4):
            p = run(home, f":dataset add w{k}_{i} --text \"worker {k} text {i}\"", f"build w{k}_{i}")
            if p.returncode != 0:
                errors.append(p.stderr)

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    check(errors == [], f"two shells at once: {errors[:2]}")
    p = run(home, ":dataset list")
    names = [d["name"] for d in json.loads(p.stdout)["datasets"]]
    check(len(names) == 8 and all(json.loads(p.stdout)["datasets"][i]["status"] == "built" for i in range(8)),
          f"all datasets registered and built: {names}")


def locked_catalog(tmp):
    home = os.path.join(tmp, "h6")
    run(home, ":show")
    db = sqlite3.connect(os.path.join(home, "catalog.db"), timeout=1, isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    t0 = time.time()
    p = run(home, ":dataset add x --text hello")
    took = time.time() - t0
    db.execute("ROLLBACK")
    db.close()
    check(p.returncode == 1 and "locked" in p.stderr, f"locked catalog: clear error ({p.returncode}: {p.stderr.strip()})")
    check(took < 60, "locked catalog: no hang")
    p = run(home, ":dataset add x --text hello")
    check(p.returncode == 0, "after the lock is released the same command works")


def orphaned_lock(tmp):
    """A killed build whose sorters still hold its lock for a moment: the next start waits
    for them (briefly) and removes the partial directory, instead of leaving it."""
    home = os.path.join(tmp, "h7")
    run(home, ":show")
    part = os.path.join(home, "indexes", "s-0123456789abcdef")
    os.makedirs(os.path.join(part, "shard-0000"))
    lock = part + ".lock"
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer exists
    with open(lock, "w") as f:
        f.write(f"{dead.pid}\n")
    # a "sorter" holding the lock for 1 s, as a forked child of the dead build would
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               "f = open(sys.argv[1], 'r+'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                               "print('locked', flush=True); time.sleep(1.0)", lock], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    t0 = time.time()
    p = run(home, ":dataset list")
    took = time.time() - t0
    holder.wait()
    check(p.returncode == 0, "a start beside an orphaned lock: " + p.stderr)
    check(not os.path.exists(part), f"the partial directory is removed once its lock is free (waited {took:.2f} s)")
    check(took < 8, f"the wait is bounded ({took:.2f} s)")


with tempfile.TemporaryDirectory(prefix="igatomic") as tmp:
    for t in (kill_at_phases, random_kills, running_build_is_respected, cancel_during_sort, tight_memory, disk_full,
              two_shells, locked_catalog, orphaned_lock):
        t(tmp)
print(f"atomic: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
