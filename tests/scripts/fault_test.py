"""I/O fault injection: every write, fsync, rename, mmap and open that a rebuild and a catalog
update make under the home fails in turn (ENOSPC, EIO and EACCES in rotation), through the
LD_PRELOAD shim tests/fault/faultinject.c. After each run:

  - the program exited with a status, never a signal, and a failure said why (the errno's
    words, or a disk-full message);
  - the next start finds the catalog and an index that `:dataset verify` accepts, answering
    either as before the rebuild or as after it — nothing in between;
  - that start leaves no partial index directory and no lock file behind.

usage: fault_test.py INFINIGRAM FAULTINJECT.so CORPUS.txt
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, shell, summary  # noqa: E402

BIN, SHIM, CORPUS = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
CALLS = ("write", "fsync", "rename", "mmap", "open")
ERRNOS = ("ENOSPC", "EIO", "EACCES")
WORDS = {"ENOSPC": ("No space left on device", "disk full"), "EIO": ("Input/output error", "disk I/O error"),
         "EACCES": ("Permission denied", "access permission denied")}
QUERIES = ['count "the"', 'count "NEWTEXT appended"', 'count "wherefore art thou"']


def run(home, *cmds, fault=None):
    env = dict(LD_PRELOAD=SHIM, IG_FAULT_PATH=os.path.realpath(home), **fault) if fault else None
    return shell(BIN, home, *cmds, json_out=False, timeout=300, env=env)


def answers(home):
    p = run(home, "load d", *QUERIES)
    return p.stdout.splitlines()[1:] if p.returncode == 0 else ("error", p.stderr)


def counts(home, cmd):
    f = os.path.join(os.path.dirname(home), "counts.txt")
    if os.path.exists(f):
        os.remove(f)
    run(home, cmd, fault={"IG_FAULT_COUNTS": f})
    total = {}
    for line in open(f):
        name, n = line.split()
        total[name] = total.get(name, 0) + int(n)
    return total


def leftovers(home):
    d = os.path.join(home, "indexes")
    return sorted(os.listdir(d))


def sweep(tmp, pristine, cmd, after_ok, label):
    work = os.path.join(tmp, "work")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work, symlinks=True)
    n = counts(work, cmd)
    cases = 0
    for call in CALLS:
        for k in range(1, n.get(call, 0) + 1):
            e = ERRNOS[cases % 3]
            cases += 1
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(pristine, work, symlinks=True)
            p = run(work, cmd, fault={"IG_FAULT_CALL": call, "IG_FAULT_N": str(k), "IG_FAULT_ERRNO": e})
            what = f"{label}: {call} #{k} fails with {e}"
            check(p.returncode in (0, 1), f"{what}: exit {p.returncode} {p.stderr[-300:]}")
            if p.returncode == 1:
                named = any(w in p.stderr for w in WORDS[e]) or "read-only" in p.stderr
                check(named, f"{what}: the error names the cause: {p.stderr.strip()[-300:]}")
            after_ok(work, what)
    return cases


def main():
    tmp = tempfile.mkdtemp(prefix="ig-fault-")
    try:
        home = os.path.join(tmp, "home")
        src = os.path.join(tmp, "src.txt")
        shutil.copy(CORPUS, src)
        p = run(home, f":dataset add d {src}", "build d")
        check(p.returncode == 0, "build: " + p.stderr)
        before = answers(home)
        with open(src, "a") as f:
            f.write("NEWTEXT appended\n")
        probe = os.path.join(tmp, "probe")
        shutil.copytree(home, probe, symlinks=True)
        run(probe, "build d")
        after = answers(probe)
        check(before != after and not isinstance(before, tuple), "the rebuild changes answers")
        shutil.rmtree(probe)

        def rebuilt_or_not(work, what):
            v = run(work, ":dataset verify d")
            check(v.returncode == 0, f"{what}: verify afterwards: {v.stderr.strip()[-300:]}")
            a = answers(work)
            check(a in (before, after), f"{what}: answers as before or after: {a}")
            left = leftovers(work)
            check(len(left) == 1 and not left[0].endswith(".lock"), f"{what}: leftovers after the next start: {left}")

        n1 = sweep(tmp, home, "build d", rebuilt_or_not, "rebuild")

        def added_or_not(work, what):
            p = run(work, ":dataset list", ":dataset verify d")
            check(p.returncode == 0 and "d " in p.stdout, f"{what}: the catalog and d intact: {p.stderr.strip()[-300:]}")
            check(answers(work) == before, f"{what}: d answers as before")

        n2 = sweep(tmp, home, ":dataset add x --text hello", added_or_not, "catalog update")
        print(f"fault cases: {n1} in a rebuild, {n2} in a catalog update")
        check(n1 > 50 and n2 > 5, "the sweeps reached the calls")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
