"""Token datasets attached from an infini-gram index directory, where the catalog and the
server matter:

  - the shell and the server answer count, predict and doc alike (ids as a list or as text);
  - commands that do not run on token datasets yet are refused (400), never answered empty;
  - the attached directory is never written, by attach, queries, check, remove;
  - a file of the directory changed after attach: load refuses it, :dataset check says it
    is stale, and attaching it again brings it back;
  - a directory moved away: load says so; a vocabulary changed (size or time): stale;
  - a next-token table (:dataset prepare) is written into the home, never into the directory,
    changes no answer, is named when damaged, cut short or missing (and made again by
    prepare), is refused for a stale dataset, and goes with :dataset remove; leftovers of a
    prepare that died are removed at the next start, unless a prepare still holds them.

usage: tokens_test.py INFINIGRAM GOLDEN_DATA_DIR
"""
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import call, check, free_port, shell, start_server, summary  # noqa: E402

BIN, DATA = sys.argv[1], sys.argv[2]


def jl(p):
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def tree_digest(d):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(d)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(root, f)
            st = os.stat(p)
            h.update(p.encode() + open(p, "rb").read() + str(st.st_mtime_ns).encode())
    return h.hexdigest()


with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    idx = os.path.join(tmp, "idx")
    shutil.copytree(os.path.join(DATA, "tokens-v4"), idx)
    vocab = os.path.join(tmp, "tokens-vocab.json")
    shutil.copy(os.path.join(DATA, "tokens-vocab.json"), vocab)
    before = tree_digest(idx)
    p = shell(BIN, home, f":dataset attach t {idx} --format infini-gram --vocab {vocab}")
    check(p.returncode == 0, f"attach: {p.stderr}")
    out = jl(p)
    check(out and out[0]["dataset"]["attached"]["token_width"] == 2, f"attach JSON: {out}")

    # the shell's answers
    p = shell(BIN, home, "load t", "count --ids 3,260 --positions 2", "predict --ids 3 --top 3", "doc 2")
    cli = jl(p)
    check(p.returncode == 0 and len(cli) == 4, f"shell: {p.stderr}")
    check(cli[1]["count"] == 3 and cli[1]["query_ids"] == [3, 260], f"count: {cli[1]}")
    check([c["token_id"] for c in cli[2]["candidates"]] == [260, 31, 573], f"predict: {cli[2]}")

    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        st, body, _ = call(port, "/v1/datasets")
        check(st == 200 and json.loads(body)["datasets"][0].get("token_width") == 2, f"datasets: {st} {body}")
        st, body, _ = call(port, "/v1/count", {"dataset": "t", "ids": [3, 260], "positions": 2})
        h = json.loads(body)
        check(st == 200 and h["count"] == cli[1]["count"] and h["positions"] == cli[1]["positions"],
              f"HTTP count (ids as a list) differs from the shell's: {st} {body}")
        st, body, _ = call(port, "/v1/count", {"dataset": "t", "ids": "3, 260"})
        check(st == 200 and json.loads(body)["count"] == 3, f"HTTP count (ids as text): {st} {body}")
        st, body, _ = call(port, "/v1/predict", {"dataset": "t", "ids": 3, "top": 3})
        h = json.loads(body)
        check(st == 200 and h["candidates"] == cli[2]["candidates"], f"HTTP predict differs: {st} {body}")
        st, body, _ = call(port, "/v1/doc", {"dataset": "t", "query": 2})
        h = json.loads(body)
        check(st == 200 and h["text"] == cli[3]["text"] and h["tokens"] == 10, f"HTTP doc: {st} {body}")
        for path, req in [("/v1/count", {"dataset": "t", "query": "the cat"}),
                          ("/v1/count", {"dataset": "t", "ids": [3, 65535, 260]}),
                          ("/v1/count", {"dataset": "t", "ids": {"a": 1}}),
                          ("/v1/count", {"dataset": "t", "ids": [1.5]}),
                          ("/v1/spans", {"dataset": "t", "query": "x"}),
                          ("/v1/search", {"dataset": "t", "query": "x"}),
                          ("/v1/generate", {"dataset": "t", "query": "x"}),
                          ("/v1/explain", {"dataset": "t", "query": "x"}),
                          ("/v1/mix", {"dataset": "t", "query": "x", "llm": [{"token_id": 3, "logprob": -1}]}),
                          ("/v1/completions", {"model": "t", "prompt": "x"}),
                          ("/v1/chat/completions", {"model": "t", "messages": [{"role": "user", "content": "x"}]})]:
            st, body, _ = call(port, path, req)
            check(st == 400 and "error" in json.loads(body), f"{path} {req}: expected 400, got {st} {body}")
    finally:
        srv.terminate()
        srv.wait()

    # check, remove: the directory untouched
    p = shell(BIN, home, ":dataset check t", ":dataset verify t")
    check(p.returncode == 0 and jl(p)[0]["stale"] is False, f"check: {p.stdout} {p.stderr}")
    check(tree_digest(idx) == before, "the attached directory was modified")

    # a next-token table
    tables = os.path.join(home, "tables")
    p = shell(BIN, home, ":dataset prepare t --min-count 2", ":dataset info t")
    out = jl(p)
    check(p.returncode == 0 and out[0]["next_table"]["contexts"] == 13 and out[0]["next_table"]["min_count"] == 2
          and out[1]["attached"]["next_table"] == out[0]["next_table"], f"prepare: {p.stdout} {p.stderr}")
    names = os.listdir(tables) if os.path.isdir(tables) else []
    check(len(names) == 1 and names[0].endswith(".tab"), f"the table in the home: {names}")
    check(tree_digest(idx) == before, "prepare wrote into the attached directory")
    p = shell(BIN, home, "load t", "count --ids 3,260 --positions 2", "predict --ids 3 --top 3", "doc 2")
    check(p.returncode == 0 and jl(p)[1:] == cli[1:], f"answers with the table differ: {p.stdout} {p.stderr}")
    tab = os.path.join(tables, names[0]) if names else os.path.join(tables, "missing")
    good = open(tab, "rb").read() if names else b""
    for what, data, needle in [("a damaged directory", good[:65] + bytes([good[65] ^ 1]) + good[66:], "checksum"),
                               ("a table cut short", good[:100], "cut short"),
                               ("a missing table", None, "cannot open")]:
        if data is None:
            os.remove(tab)
        else:
            with open(tab, "wb") as f:
                f.write(data)
        p = shell(BIN, home, "load t", json_out=False)
        check(p.returncode != 0 and tab in p.stderr and needle in p.stderr and ":dataset prepare t" in p.stderr,
              f"load with {what}: {p.stderr}")
    p = shell(BIN, home, ":dataset prepare t", "load t", "predict --ids 3 --top 3")
    out = jl(p)
    check(p.returncode == 0 and out[0]["next_table"]["min_count"] == 2 and out[2] == cli[2],
          f"prepared again (default min_count 2 here): {p.stdout} {p.stderr}")
    # a table larger than the memory it may take: refused with the way out, the table before
    # kept (a quarter of physical memory; lowered here to 2,000 bytes)
    now = sorted(os.listdir(tables))
    kept_table = open(os.path.join(tables, now[0]), "rb").read() if len(now) == 1 else b""
    p = shell(BIN, home, ":dataset prepare t --min-count 1", json_out=False, env={"INFINIGRAM_TABLE_BUDGET": "2000"})
    check(p.returncode != 0 and "passes" in p.stderr and "larger --min-count" in p.stderr,
          f"prepare past the budget: {p.returncode} {p.stderr}")
    check(len(now) == 1 and sorted(os.listdir(tables)) == now and open(os.path.join(tables, now[0]), "rb").read() == kept_table,
          f"the table before kept, nothing left: {os.listdir(tables)}")
    # made again while a server holds the dataset: it reloads it with the new table
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        st, body, _ = call(port, "/v1/predict", {"dataset": "t", "ids": 3, "top": 3})
        check(st == 200 and json.loads(body)["candidates"] == cli[2]["candidates"], f"served: {st} {body}")
        p = shell(BIN, home, ":dataset prepare t --min-count 3")
        check(p.returncode == 0 and jl(p)[0]["next_table"]["contexts"] < 13, f"prepare while served: {p.stderr}")
        st, body, _ = call(port, "/v1/predict", {"dataset": "t", "ids": 3, "top": 3})
        check(st == 200 and json.loads(body)["candidates"] == cli[2]["candidates"], f"served after: {st} {body}")
        check(len(os.listdir(tables)) == 1, f"one table is left: {os.listdir(tables)}")
    finally:
        srv.terminate()
        srv.wait()

    # leftovers of prepares that died: removed at the next start, unless a prepare holds them
    kept = sorted(os.listdir(tables))
    orphans = ["next-9-00000000000000aa-00000001.tab", "next-9-00000000000000aa-00000002.tab.tmp",
               "next-9-00000000000000aa-00000003.tab.lock", "next-9-00000000000000aa-00000004.tab"]
    for name in orphans:
        with open(os.path.join(tables, name), "wb") as f:
            f.write(b"x")
    busy = open(os.path.join(tables, orphans[3] + ".lock"), "wb")
    fcntl.flock(busy, fcntl.LOCK_EX)
    p = shell(BIN, home, "load t", "count --ids 3")
    check(p.returncode == 0 and jl(p)[1]["count"] == 6, f"start with leftovers: {p.stderr}")
    check(sorted(os.listdir(tables)) == sorted(kept + [orphans[3], orphans[3] + ".lock"]),
          f"leftovers removed, the table in force and a locked one kept: {sorted(os.listdir(tables))}")
    busy.close()
    p = shell(BIN, home, ":dataset list")
    check(sorted(os.listdir(tables)) == kept, f"unlocked, removed too: {sorted(os.listdir(tables))}")

    # the vocabulary changed behind the catalog's back: stale until it is as it was
    st0 = os.stat(vocab)
    os.utime(vocab, ns=(st0.st_atime_ns, st0.st_mtime_ns + 10**9))
    p = shell(BIN, home, "load t", json_out=False)
    check(p.returncode != 0 and "vocabulary" in p.stderr and "changed since it was attached" in p.stderr,
          f"load with a changed vocabulary: {p.stderr}")
    p = shell(BIN, home, ":dataset check t")
    out = jl(p)
    check(out and out[0]["stale"] is True and "vocabulary" in out[0].get("reason", ""), f"check: {p.stdout}")
    os.utime(vocab, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    p = shell(BIN, home, "load t", "count --ids 3")
    check(p.returncode == 0 and jl(p)[1]["count"] == 6, f"the vocabulary as it was: {p.stdout} {p.stderr}")

    # a file rewritten in place, or replaced by a copy, with its size and times carried over
    # (touch -r, cp -p, rsync -a): stale all the same, so a prepared table is never trusted
    # for files it was not made from
    tok0 = os.path.join(idx, "tokenized.0")
    for how in ("rewritten in place", "replaced by a copy"):
        st0 = os.stat(tok0)
        data = open(tok0, "rb").read()
        if how == "rewritten in place":
            with open(tok0, "r+b") as f:
                f.write(data)
            os.utime(tok0, ns=(st0.st_atime_ns, st0.st_mtime_ns))
        else:
            with open(tok0 + ".new", "wb") as f:
                f.write(data)
            os.utime(tok0 + ".new", ns=(st0.st_atime_ns, st0.st_mtime_ns))
            os.rename(tok0 + ".new", tok0)
        p = shell(BIN, home, ":dataset check t")
        out = jl(p)
        check(out and out[0]["stale"] is True and "modified or replaced" in out[0].get("reason", ""),
              f"check of a file {how}: {p.stdout} {p.stderr}")
        p = shell(BIN, home, "load t", json_out=False)
        check(p.returncode != 0 and "changed since it was attached" in p.stderr, f"load of a file {how}: {p.stderr}")
        p = shell(BIN, home, ":dataset remove t", f":dataset attach t {idx} --format infini-gram", "load t",
                  "count --ids 3")
        check(p.returncode == 0 and jl(p)[-1]["count"] == 6, f"attached again after a file {how}: {p.stderr}")

    # a file changed behind the catalog's back
    with open(os.path.join(idx, "metadata.0"), "ab") as f:
        f.write(b"\n")
    p = shell(BIN, home, "load t", json_out=False)
    check(p.returncode != 0 and "changed since it was attached" in p.stderr, f"load of a changed index: {p.stderr}")
    p = shell(BIN, home, ":dataset check t")
    out = jl(p)
    check(out and out[0]["stale"] is True and "changed" in out[0].get("reason", ""), f"check: {p.stdout}")
    p = shell(BIN, home, ":dataset prepare t", json_out=False)
    check(p.returncode != 0 and "changed since it was attached" in p.stderr, f"prepare of a stale dataset: {p.stderr}")
    p = shell(BIN, home, ":dataset remove t", f":dataset attach t {idx} --format infini-gram", "load t",
              "count --ids 3")
    out = jl(p)
    check(p.returncode == 0 and out[-1]["count"] == 6, f"attached again: {p.stdout} {p.stderr}")
    check(os.path.isdir(idx) and os.path.exists(os.path.join(idx, "table.0")), "remove deleted the attached files")
    check(os.listdir(tables) == [], f"remove left the next-token table: {os.listdir(tables)}")

    # a vocabulary smaller than the ids of the index: smoothing over it would give more than
    # probability 1, so a smoothed answer that meets such an id is refused, naming it; the
    # unsmoothed answers stand
    small = os.path.join(tmp, "small-vocab.json")
    with open(small, "w") as f:
        json.dump(["a", "b", "c", "d", "e"], f)
    p = shell(BIN, home, f":dataset attach s {idx} --format infini-gram --vocab {small}", "load s",
              "predict --ids 3 --top 3", json_out=False)
    check(p.returncode == 0, f"attach with a small vocabulary: {p.stderr}")
    for cmd in ("predict --ids 3 --alpha 1", "predict --ids 3 --n 2 --alpha 0.5", "eval --ids 3,260,31 --alpha 1"):
        p = shell(BIN, home, "load s", cmd, json_out=False)
        check(p.returncode != 0 and "vocabulary has only 5 entries" in p.stderr and "--alpha" in p.stderr,
              f"{cmd} with a small vocabulary: {p.stderr}")
    p = shell(BIN, home, ":dataset remove s")
    check(p.returncode == 0, f"remove s: {p.stderr}")

    # a file cut short while the server serves it: refused (409), never a fault
    cut = os.path.join(tmp, "cut")
    shutil.copytree(os.path.join(DATA, "tokens-v4"), cut)
    p = shell(BIN, home, f":dataset attach c {cut} --format infini-gram")
    check(p.returncode == 0, f"attach c: {p.stderr}")
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        st, body, _ = call(port, "/v1/count", {"dataset": "c", "ids": [3]})
        check(st == 200 and json.loads(body)["count"] == 6, f"count before the cut: {st} {body}")
        for f in ("tokenized.0", "table.0"):
            with open(os.path.join(cut, f), "r+b") as fh:
                fh.truncate(0)
        st, body, _ = call(port, "/v1/count", {"dataset": "c", "ids": [3]})
        check(st == 409 and "changed since it was attached" in body, f"count after the cut: {st} {body}")
        st, body, _ = call(port, "/v1/datasets")
        check(st == 200 and srv.poll() is None, f"the server survives: {st}")
    finally:
        srv.terminate()
        srv.wait()

    # an index kept inside the home: attach refuses it, and no cleanup ever removes it
    inside = os.path.join(home, "indexes", "my-official-index")
    shutil.copytree(os.path.join(DATA, "tokens-v4"), inside)
    p = shell(BIN, home, f":dataset attach in {inside} --format infini-gram", ":dataset list", json_out=False)
    check(p.returncode != 0 and "inside the home" in p.stderr, f"attach inside the home: {p.stderr}")
    p = shell(BIN, home, ":dataset list")
    check(os.path.isdir(inside) and os.path.exists(os.path.join(inside, "table.0")),
          "a directory the catalog did not make was removed from home/indexes")

    # a catalog of schema 6 (before tables and vocabulary fingerprints): migrated, it loads and prepares
    old_home = os.path.join(tmp, "home6")
    p = shell(BIN, old_home, f":dataset attach o {idx} --format infini-gram --vocab {vocab}")
    check(p.returncode == 0, f"attach o: {p.stderr}")
    db = sqlite3.connect(os.path.join(old_home, "catalog.db"))
    db.executescript("DROP TABLE next_tables; ALTER TABLE attached DROP COLUMN vocab_fingerprint;"
                     " PRAGMA user_version = 6;")
    db.close()
    p = shell(BIN, old_home, "load o", "count --ids 3", ":dataset prepare o", "load o", "predict --ids 3 --top 3")
    out = jl(p)
    check(p.returncode == 0 and out[1]["count"] == 6 and out[4]["candidates"] == cli[2]["candidates"],
          f"schema 6 migrated: {p.stdout} {p.stderr}")
    db = sqlite3.connect(os.path.join(old_home, "catalog.db"))
    check(db.execute("PRAGMA user_version").fetchone()[0] == 7, "schema 7 after the migration")
    db.close()

    # the directory moved away
    shutil.move(idx, idx + "-moved")
    p = shell(BIN, home, "load t", json_out=False)
    check(p.returncode != 0 and "idx" in p.stderr, f"load of a moved index: {p.stderr}")

sys.exit(summary())
