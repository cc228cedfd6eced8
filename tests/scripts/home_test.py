"""Homes that move, get copied, turn read-only or fill up, and catalogs that are not ours.

  - a home moved (mv) or copied (cp -a) keeps working; the copy uses its own indexes and
    survives the original's removal; no start deletes an index the catalog names;
  - a catalog of schema 1 (absolute index paths, of a home since moved) is migrated to
    relative paths without losing a dataset;
  - a read-only home (a read-only bind mount: root ignores file modes) answers queries,
    `:dataset list/info` and `doc`, and commands that must write say it is read-only;
  - a full disk (a small tmpfs) is named as such, and queries still work;
  - an SQLite file of another program as catalog.db is refused and left byte-for-byte;
  - files that are not what they were: a source swapped for a FIFO or /dev/zero after it was
    added, a FIFO as catalog.db, an index folder gone (`:dataset check`), a `dups --write`
    onto the home's own files, an index that cannot be deleted (`:dataset remove`): each a
    clear error naming the file, at once, and nothing lost.

usage: home_test.py INFINIGRAM CORPUS.txt
"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, shell, summary, swap_for_stream  # noqa: E402

BIN, CORPUS = sys.argv[1], sys.argv[2]


def run(home, *cmds, timeout=120):
    return shell(BIN, home, *cmds, timeout=timeout)


def jl(p):
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def count(home, q="the"):
    p = run(home, "load ts", 'count "%s"' % q)
    out = jl(p)
    return out[1].get("count") if len(out) > 1 else ("error", p.stderr)


def build(home):
    p = run(home, ":dataset add ts %s" % CORPUS, "build ts", ":dataset add two --text \"hello there\"", "build two")
    check(p.returncode == 0, "build: " + p.stderr)


def root_can_mount():
    return os.geteuid() == 0 and shutil.which("mount") is not None


def odd_files(tmp):
    """Files swapped under a home: each must be named at once, never waited on or read for ever."""
    h = os.path.join(tmp, "odd")
    src = os.path.join(tmp, "odd-src.txt")
    with open(src, "w") as fh:
        fh.write("hello hello hello\n")
    p = run(h, ":dataset add w %s" % src, "build w")
    check(p.returncode == 0, "odd: build: " + p.stderr)
    for kind in ("fifo", "zero"):
        swap_for_stream(src, kind)
        try:
            p = run(h, "build w", timeout=20)
            err = json.dumps(jl(p))
            check(p.returncode == 1 and "not a regular file" in err and src in err,
                  "a source swapped for a %s: refused, naming it: %s" % (kind, err[-300:]))
        except subprocess.TimeoutExpired:
            check(False, "a source swapped for a %s: the build waited or read for ever" % kind)
    os.unlink(src)
    with open(src, "w") as fh:
        fh.write("hello hello hello\n")
    check(run(h, "build w").returncode == 0, "odd: the source back, rebuilt")
    # dups --write onto the home's own files is refused; beside them it is not
    idx = [d for d in os.listdir(os.path.join(h, "indexes")) if d.startswith("w-") and not d.endswith(".lock")][0]
    for target in (os.path.join(h, "catalog.db"), os.path.join(h, "indexes", idx, "shard-0000", "text"),
                   os.path.join(h, "history"), os.path.join(h, "indexes", "x.jsonl")):
        p = run(h, "load w", "dups --write %s --min-len 2" % target)
        out = jl(p)
        check(p.returncode == 1 and "own files" in json.dumps(out[-1]), "dups --write %s refused: %s" % (target, out[-1:]))
    p = run(h, "load w", 'dups --write "" --min-len 2')
    check(p.returncode == 1 and "an empty name names no file" in json.dumps(jl(p)), "dups --write \"\": " + p.stdout[-300:])
    p = run(h, "load w", "dups --write %s --min-len 2" % os.path.join(h, "kept.jsonl"))
    check(p.returncode == 0 and os.path.exists(os.path.join(h, "kept.jsonl")), "dups --write beside them: " + p.stderr)
    check(jl(run(h, "load w", 'count "hello"'))[-1].get("count") == 3, "the catalog and index are intact")
    # an index folder gone: check says it no longer loads (it said "up to date")
    away = os.path.join(tmp, "odd-away")
    os.rename(os.path.join(h, "indexes", idx), away)
    p = run(h, ":dataset check w")
    check(p.returncode == 1 and "w no longer loads" in p.stdout and "build w" in p.stdout,
          ":dataset check of a dataset whose index is gone: " + p.stdout[-300:])
    os.rename(away, os.path.join(h, "indexes", idx))
    p = run(h, ":dataset check w")
    check(p.returncode == 0 and jl(p)[-1].get("stale") is False, ":dataset check once it is back: " + p.stdout[-300:])
    # an index folder replaced by a link to another dataset's index: removing the dataset
    # removes the link, never the other index's files through it
    p = run(h, ':dataset add v --text "other text"', "build v")
    vidx = [d for d in os.listdir(os.path.join(h, "indexes")) if d.startswith("v-") and not d.endswith(".lock")][0]
    moved = os.path.join(tmp, "odd-moved")
    os.rename(os.path.join(h, "indexes", vidx), moved)
    os.symlink(os.path.join(h, "indexes", idx), os.path.join(h, "indexes", vidx))
    p = run(h, ":dataset remove v")
    check(p.returncode == 0 and not os.path.lexists(os.path.join(h, "indexes", vidx)) and
          os.path.exists(os.path.join(h, "indexes", idx, "manifest.json")),
          ":dataset remove of a linked index removes the link only: " + p.stdout[-300:] + p.stderr[-300:])
    check(jl(run(h, "load w", 'count "hello"'))[-1].get("count") == 3, "the index linked to still answers")
    shutil.rmtree(moved)
    # an index that cannot be deleted (immutable, where the file system has the flag)
    shard = os.path.join(h, "indexes", idx, "shard-0000")
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", shard], capture_output=True).returncode == 0:
        try:
            p = run(h, ":dataset remove w")
            err = json.dumps(jl(p))
            check(p.returncode == 1 and "is removed, but its index could not be deleted" in err and idx in err,
                  ":dataset remove names the folder it could not delete: " + err[-300:])
        finally:
            subprocess.run(["chattr", "-i", shard])
        run(h, ":dataset list")  # the next start reclaims the folder
        check(not os.path.exists(os.path.join(h, "indexes", idx)), "the folder left is reclaimed at the next start")
    else:
        print("skipped: chattr +i is not available here")
    # a FIFO as the catalog: refused at once (SQLite would wait for a writer)
    hf = os.path.join(tmp, "odd-fifo")
    os.makedirs(hf)
    os.mkfifo(os.path.join(hf, "catalog.db"))
    try:
        p = run(hf, ":dataset list", timeout=20)
        check(p.returncode != 0 and "not a regular file (a FIFO)" in p.stderr, "a FIFO as catalog.db: " + p.stderr)
    except subprocess.TimeoutExpired:
        check(False, "a FIFO as catalog.db: the start waited for ever")
    # ... or as the write-ahead log SQLite keeps beside it
    hw = os.path.join(tmp, "odd-wal")
    check(run(hw, ":dataset add a --text \"x y\"").returncode == 0, "odd-wal: a catalog")
    os.mkfifo(os.path.join(hw, "catalog.db-wal"))
    try:
        p = run(hw, ":dataset list", timeout=20)
        check(p.returncode != 0 and "catalog.db-wal: not a regular file (a FIFO)" in p.stderr,
              "a FIFO as catalog.db-wal: " + p.stderr)
    except subprocess.TimeoutExpired:
        check(False, "a FIFO as catalog.db-wal: the start waited for ever")


def main():
    tmp = tempfile.mkdtemp(prefix="ig-home-")
    try:
        want = None
        # -- moved
        h1 = os.path.join(tmp, "h1")
        build(h1)
        want = count(h1)
        check(isinstance(want, int) and want > 0, "count in the original home: %s" % (want,))
        h2 = os.path.join(tmp, "h2")
        os.rename(h1, h2)
        check(count(h2) == want, "moved home answers")
        check(count(h2) == want, "moved home answers after a second start")
        info = jl(run(h2, ":dataset info ts"))[0]
        check(info.get("index_path", "").startswith(h2 + "/indexes/"), "index_path absolute under the new home: %s"
              % info.get("index_path"))
        # -- a home kept inside the tree it indexes: its own files (build locks, manifests) are
        # never documents, and a rebuild leaves the dataset as it was, up to date
        tree = os.path.join(tmp, "tree")
        os.makedirs(tree)
        with open(os.path.join(tree, "real.txt"), "w") as f:
            f.write("some real text here\n")
        hin = os.path.join(tree, "home")
        p = run(hin, ":dataset add s %s" % tree, "build s", "build s", ":dataset check s", ":dataset info s")
        out = jl(p)
        check(p.returncode == 0 and len(out) == 5 and out[2].get("documents") == 1 and out[3].get("stale") is False and
              out[4].get("documents") == 1 and out[2].get("skipped_files") == 1,
              "a home inside the tree is skipped, and said to be: %s %s" % (out[1:], p.stderr[-300:]))
        # -- its catalog deleted, then emptied: the built indexes are the only copy of that work
        # and stay (a fresh catalog does not know them, so they are not its leftovers)
        hc = os.path.join(tmp, "hc")
        subprocess.run(["cp", "-a", h2, hc], check=True)
        before = sorted(os.listdir(os.path.join(hc, "indexes")))
        for f in os.listdir(hc):
            if f.startswith("catalog.db"):
                os.remove(os.path.join(hc, f))
        run(hc, ":show width")
        open(os.path.join(hc, "catalog.db"), "w").close()
        # an emptied catalog is not taken for a new one while built indexes are there (it
        # listed no datasets, silently)
        p = run(hc, ":dataset list")
        check(p.returncode != 0 and "catalog.db is empty (0 bytes)" in p.stderr and "built index" in p.stderr,
              "an emptied catalog is refused: %s %s" % (p.returncode, p.stderr[-300:]))
        os.remove(os.path.join(hc, "catalog.db"))  # the user's choice: a new catalog
        p = run(hc, ":dataset list")
        after = sorted(os.listdir(os.path.join(hc, "indexes")))
        check(p.returncode == 0 and len([d for d in before if not d.endswith(".lock")]) >= 2 and
              [d for d in before if not d.endswith(".lock")] == [d for d in after if not d.endswith(".lock")],
              "a lost catalog keeps the indexes: %s -> %s" % (before, after))
        shutil.rmtree(hc)
        # -- two datasets' index directories swapped (each sound on its own): load and verify
        # say the index is not the one built for the dataset (it answered for the other corpus)
        hs = os.path.join(tmp, "hs")
        p = run(hs, ":dataset add a --text \"apple banana\"", ":dataset add b --text \"cherry grape\"", "build a",
                "build b")
        check(p.returncode == 0, "swap: build: " + p.stderr)
        ix = os.path.join(hs, "indexes")
        da = [d for d in os.listdir(ix) if d.startswith("a-") and not d.endswith(".lock")][0]
        db = [d for d in os.listdir(ix) if d.startswith("b-") and not d.endswith(".lock")][0]
        os.rename(os.path.join(ix, da), os.path.join(ix, "t"))
        os.rename(os.path.join(ix, db), os.path.join(ix, da))
        os.rename(os.path.join(ix, "t"), os.path.join(ix, db))
        for cmd in ("load a", ":dataset verify a"):
            p = run(hs, cmd, 'count "apple"')
            check(p.returncode == 1 and "not the index built for a" in p.stderr and "rebuild a" in p.stderr,
                  "swapped index directories, %s: %s" % (cmd, p.stderr[-300:]))
        p = run(hs, "build a", "load a", 'count "apple"')
        check(p.returncode == 0 and jl(p)[-1].get("count") == 1, "rebuilt after the swap: %s" % p.stderr[-300:])
        # an index directory moved away: the list says broken, not built (only load noticed)
        db = [d for d in os.listdir(ix) if d.startswith("b-") and not d.endswith(".lock")][0]
        os.rename(os.path.join(ix, db), os.path.join(hs, "moved-away"))
        p = run(hs, ":dataset list", ":dataset info b")
        got = jl(p)
        listed = {d["name"]: d["status"] for d in got[0].get("datasets", [])} if got else {}
        check(listed.get("b") == "broken" and listed.get("a") == "built" and got[1].get("status") == "broken",
              "an index directory moved away: %s %s" % (listed, got[1:]))
        # -- copied: the copy uses its own indexes
        h3 = os.path.join(tmp, "h3")
        subprocess.run(["cp", "-a", h2, h3], check=True)
        check(count(h3) == want, "copied home answers")
        info3 = jl(run(h3, ":dataset info ts"))[0]
        check(info3.get("index_path", "").startswith(h3 + "/indexes/"), "copy uses its own index: %s"
              % info3.get("index_path"))
        shutil.rmtree(h2)
        check(count(h3) == want, "the copy answers after the original is removed")
        check(len(os.listdir(os.path.join(h3, "indexes"))) >= 2, "the copy's indexes are all kept")
        # -- schema 1 with absolute paths of a former location
        h4 = os.path.join(tmp, "h4")
        subprocess.run(["cp", "-a", h3, h4], check=True)
        db = sqlite3.connect(os.path.join(h4, "catalog.db"))
        db.execute("UPDATE datasets SET index_path = '/somewhere/else/indexes/' || substr(index_path, 9)")
        db.execute("PRAGMA application_id = 0")
        db.execute("PRAGMA user_version = 1")
        db.commit()
        db.close()
        check(count(h4) == want, "a schema-1 catalog with absolute paths of a moved home is migrated")
        db = sqlite3.connect(os.path.join(h4, "catalog.db"))
        paths = [r[0] for r in db.execute("SELECT index_path FROM datasets")]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.close()
        check(all(p.startswith("indexes/") for p in paths) and version >= 2, "migrated to relative paths: %s" % paths)
        check(len(os.listdir(os.path.join(h4, "indexes"))) >= 2, "migration kept every index")

        # -- a foreign SQLite file is refused and left untouched
        h5 = os.path.join(tmp, "h5")
        os.makedirs(h5)
        f = os.path.join(h5, "catalog.db")
        db = sqlite3.connect(f)
        db.execute("CREATE TABLE datasets(x)")
        db.execute("INSERT INTO datasets VALUES (1)")
        db.commit()
        db.close()
        before = hashlib.sha256(open(f, "rb").read()).hexdigest()
        p = run(h5, ":dataset list")
        check(p.returncode != 0 and "not an infinigram catalog" in p.stderr, "foreign catalog refused: " + p.stderr)
        check(hashlib.sha256(open(f, "rb").read()).hexdigest() == before, "foreign catalog byte-for-byte untouched")
        check(sorted(os.listdir(h5)) == ["catalog.db"], "nothing created beside it: %s" % os.listdir(h5))

        # -- a home we may not write while its writer is still at work: the catalog is read as it
        # is now (its write-ahead log included), not as of its last checkpoint. As root, the
        # reader and writer are user nobody (root ignores file modes); a home under a path with
        # "?", "#" and "%" (read through an SQLite URI)
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        if not as_user or shutil.which("setpriv"):
            base = os.path.join(tmp, "odd ?#% dir")
            os.makedirs(base)
            os.chmod(tmp, 0o755)
            src = os.path.join(base, "src.txt")
            shutil.copy(CORPUS, src)
            if as_user:
                os.chown(base, 65534, 65534)
            hw = os.path.join(base, "home")
            env = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
            p = subprocess.run(as_user + [BIN, "--home", hw, "-c", ':dataset add a "%s"' % src, "-c", "build a"],
                               capture_output=True, text=True, env=env, timeout=120)
            check(p.returncode == 0, "writer's first build: " + p.stderr)
            holder = subprocess.Popen(as_user + [BIN, "--home", hw], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, text=True)  # keeps the catalog open: no checkpoint
            try:
                holder.stdin.write(":dataset list\n")
                holder.stdin.flush()
                p = subprocess.run(as_user + [BIN, "--home", hw, "-c", ':dataset add b "%s"' % src, "-c", "build b",
                                              "-c", "build a"], capture_output=True, text=True, env=env, timeout=120)
                check(p.returncode == 0 and os.path.exists(os.path.join(hw, "catalog.db-wal")),
                      "writer's second build, in the log: " + p.stderr)
                subprocess.run(["chmod", "-R", "a-w", hw], check=True)
                p = subprocess.run(as_user + [BIN, "--home", hw, "--json", "-c", ":dataset list", "-c", "load b",
                                              "-c", 'count "Romeo"'], capture_output=True, text=True, env=env, timeout=120)
                out = [json.loads(x) for x in p.stdout.splitlines()]
                names = [d.get("name") for d in out[0].get("datasets", [])] if out else []
                check(p.returncode == 0 and names == ["a", "b"] and out[-1].get("count", 0) > 0,
                      f"a read-only home with its writer at work: {names} {p.stdout[-300:]} {p.stderr[-300:]}")
            finally:
                holder.stdin.close()
                holder.wait(timeout=30)
                subprocess.run(["chmod", "-R", "u+w", hw])
            # another user reading a home whose folder it may write but whose catalog it may not
            # leaves no file there (a log's files of its own would lock the owner out of writing)
            if as_user:
                shared = os.path.join(base, "shared")
                p = subprocess.run(as_user + [BIN, "--home", shared, "-c", ":dataset add a --text \"hello there\"",
                                              "-c", "build a"], capture_output=True, text=True, env=env, timeout=120)
                os.chmod(shared, 0o777)
                other = ["setpriv", "--reuid=12345", "--regid=12345", "--clear-groups"]
                q = subprocess.run(other + [BIN, "--home", shared, "--json", "-c", "load a", "-c", 'count "hello"'],
                                   capture_output=True, text=True, env=env, timeout=120)
                left = sorted(f for f in os.listdir(shared) if f.startswith("catalog.db-"))
                w = subprocess.run(as_user + [BIN, "--home", shared, "-c", ":dataset add b --text more"],
                                   capture_output=True, text=True, env=env, timeout=120)
                check(p.returncode == 0 and q.returncode == 0 and '"count":1' in q.stdout and not left and
                      w.returncode == 0, f"a reader of a shared home: {q.stdout[-200:]} {q.stderr[-200:]} left {left} "
                      f"owner: {w.stderr[-200:]}")
        if not root_can_mount():
            print("skipped: read-only and full homes need root and mount")
            return summary()
        # -- read-only home: a read-only bind mount
        ro = os.path.join(tmp, "ro")
        os.makedirs(ro)
        m = subprocess.run(["mount", "--bind", h3, ro], capture_output=True, text=True)
        if m.returncode == 0:
            try:
                subprocess.run(["mount", "-o", "remount,bind,ro", ro], check=True)
                check(count(ro) == want, "read-only home answers count")
                p = run(ro, ":dataset list", ":dataset info ts", "load ts", "doc 0 --lines 1:2")
                out = jl(p)
                check(p.returncode == 0 and len(out) == 4 and all("error" not in o for o in out),
                      "read-only home: list, info, load, doc: " + p.stderr)
                p = run(ro, ":dataset add x --text abc")
                check(p.returncode != 0 and "read-only" in p.stderr, "add on a read-only home says so: " + p.stderr)
                p = run(ro, "build ts")
                check(p.returncode != 0 and "read-only" in p.stderr, "build on a read-only home says so: " + p.stderr)
                p = run(ro, ":set width 3", "load ts", 'count --positions 1 "Romeo"')
                out = jl(p)
                snip = out[-1]["positions"][0]["snippet"] if out and out[-1].get("positions") else ""
                check(p.returncode == 0 and "session only" in p.stderr and len(snip) <= 3 + 5 + 3 + 2,
                      ":set on a read-only home applies to the session: %s %s" % (p.stderr, snip))
            finally:
                subprocess.run(["umount", ro])
        else:
            print("skipped: read-only bind mount:", m.stderr.strip())
        # -- full disk: a small tmpfs holding a built home, then filled
        full = os.path.join(tmp, "full")
        os.makedirs(full)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", full], capture_output=True, text=True)
        if m.returncode == 0:
            try:
                hf = os.path.join(full, "home")
                subprocess.run(["cp", "-a", h3, hf], check=True)
                with open(os.path.join(full, "filler"), "wb") as fh:
                    try:
                        while True:
                            fh.write(b"\0" * (1 << 20))
                            fh.flush()
                    except OSError:
                        pass
                check(count(hf) == want, "a full home answers count")
                p = run(hf, ":dataset add y --text abcdef", "build y")
                text = p.stderr
                check(p.returncode != 0 and ("No space left on device" in text or "disk full" in text or "read-only" in text),
                      "a full disk is named: " + text)
            finally:
                subprocess.run(["umount", full])
        else:
            print("skipped: tmpfs:", m.stderr.strip())
        odd_files(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
