"""Composed datasets through the shell, where the catalog matters:

  - a composition answers like one dataset built from its members' sources: counts,
    positions (document, line, column) and documents, in member order, and with a
    subtracted set, like one built without the documents it takes away;
  - a member rebuilt (sources changed) is picked up at the next load; renaming a member
    keeps the composition; compositions nest (flattened);
  - a composition is stale when a member is;
  - a cycle written into the catalog by hand, and a member removed behind the catalog's
    back, give clear errors at load instead of a crash;
  - compositions and their members survive a move of the home.

usage: compose_test.py INFINIGRAM
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import call, check, free_port, shell, start_server, summary  # noqa: E402

BIN = sys.argv[1]


def jl(p):
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def run(home, *cmds):
    p = shell(BIN, home, *cmds)
    return p, jl(p)


with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    files = {
        "a": "the cat sat on the mat\nthe dog ran\n",
        "b": "a bird sang\nthe cat sat on the mat\nthe dog sat\n",
        "c": "zebras graze\nthe cat sat on the mat\n",
        "t": "the cat sat on the mat\n",
    }
    for k, v in files.items():
        with open(os.path.join(tmp, k + ".txt"), "w") as f:
            f.write(v)
    cmds = []
    for k in files:
        cmds += [":dataset add %s %s/%s.txt --format lines" % (k, tmp, k), "build " + k]
    # the reference: one dataset of every member's lines, and one without t's copy
    with open(os.path.join(tmp, "all.txt"), "w") as f:
        f.write(files["a"] + files["b"] + files["c"])
    with open(os.path.join(tmp, "rest.txt"), "w") as f:
        f.write(files["a"].split("\n", 1)[1] + files["b"] + files["c"])
    cmds += [":dataset add all %s/all.txt --format lines" % tmp, "build all",
             ":dataset add rest %s/rest.txt --format lines" % tmp, "build rest",
             ":dataset compose ab a b", ":dataset compose abc ab c", ":dataset compose abc-t abc --minus t"]
    p, out = run(home, *cmds)
    check(p.returncode == 0, "setup: " + p.stderr)

    def answers(name, queries=("the cat", "the", "sat", "t", "", "zebra", "mat\n")):
        """count with positions (document, line, column, offset) and every document's text."""
        cmds = ["load " + name] + ['count --positions 20 "%s"' % q.replace("\n", "\\n") for q in queries]
        cmds += ["doc %d" % i for i in range(7)]
        p, out = run(home, *cmds)
        res = []
        for o in out[1:]:
            if o.get("command") == "count":
                res.append((o["count"], [(x["doc"], x["line"], x["column"], x["offset"], x.get("source_line"))
                                         for x in o.get("positions", [])]))
            elif o.get("command") == "doc":
                res.append(o.get("text"))
            else:
                res.append(o.get("error", {}).get("code"))
        return res, out

    want, _ = answers("all")
    got, out = answers("abc")
    # source lines differ (each member numbers its own file's lines): compare the rest
    strip = lambda r: [(x[0], [y[:4] for y in x[1]]) if isinstance(x, tuple) else x for x in r]
    check(strip(got) == strip(want), f"a composition answers like one dataset of its members: {got} {want}")
    members = [x.get("member") for o in out if o.get("command") == "count" for x in o.get("positions", [])]
    check(set(members) == {"a", "b", "c"}, f"positions name the flattened members: {members}")
    want, _ = answers("rest")
    got, _ = answers("abc-t")
    check(strip(got) == strip(want), f"minus answers like a rebuild without the document: {got} {want}")

    # a member whose sources change is stale, and so is the composition; a rebuild is picked up
    with open(os.path.join(tmp, "c.txt"), "a") as f:
        f.write("zebra crossing\n")
    p, out = run(home, ":dataset check abc")
    check(out and out[0].get("stale") is True and "c:" in out[0].get("reason", ""), f"stale through a member: {out}")
    p, out = run(home, "build c", "load abc", 'count "zebra"')
    check(out[-1].get("count") == 2, f"a member rebuilt is picked up: {out}")
    # renaming a member keeps the composition
    p, out = run(home, ":dataset rename c cc", ":dataset info abc", "load abc", 'count "zebra"')
    check(p.returncode == 0 and out[1].get("members") == ["ab", "cc"] and out[-1].get("count") == 2,
          f"rename a member: {out} {p.stderr}")
    # removing a member is refused while used; a composition removed frees it
    p, out = run(home, ":dataset remove cc")
    check(p.returncode != 0 and "abc" in p.stderr, f"a member in use: {p.stderr}")
    # a move of the home keeps everything
    home2 = os.path.join(tmp, "home2")
    shutil.move(home, home2)
    p, out = run(home2, "load abc-t", 'count "the cat"')
    check(p.returncode == 0 and out[-1].get("count") == 2, f"after a move of the home: {out} {p.stderr}")
    # a member rebuilt so that it no longer fits: build warns, check says why, load refuses
    p = shell(BIN, home2, "build cc --pointer-width 5", ":dataset check abc", json_out=False)
    check(p.returncode == 1 and "composition abc, made of cc, no longer loads" in p.stderr and
          "abc no longer loads: " in p.stderr and "pointer widths" in p.stderr, f"a member that no longer fits: {p.stderr}")
    p, out = run(home2, ":dataset info abc")
    check(out and out[0].get("loads") is False and "pointer widths" in out[0].get("load_error", ""),
          f"info says it no longer loads: {out}")
    p, out = run(home2, ":dataset list")
    status = {d["name"]: d["status"] for d in (out[0].get("datasets", []) if out else [])}
    check(status.get("abc") == "broken" and status.get("cc") == "built", f"list shows it broken: {status}")
    p, out = run(home2, "build cc", ":dataset check abc")
    check(p.returncode == 0 and out[-1].get("stale") is False, f"rebuilt to fit again: {out} {p.stderr}")
    p, out = run(home2, ":dataset info abc")
    check(out and out[0].get("loads") is True and out[0].get("casefold") is False and out[0].get("normalize") is True,
          f"info of a composition that loads says what it indexes: {out}")
    # a composition of members that keep their bytes and fold case says so wherever it is shown
    # (compose's answer and the list said "normalize": true, info false)
    p, out = run(home2, ":dataset add kx --text xY --no-normalize --casefold", "build kx",
                 ":dataset add ky --text yZ --no-normalize --casefold", "build ky", ":dataset compose kxy kx ky")
    check(p.returncode == 0 and out[-1].get("dataset", {}).get("normalize") is False and
          out[-1]["dataset"].get("casefold") is True, f"compose answers what its members index: {out[-1:]} {p.stderr}")
    p, out = run(home2, ":dataset info kxy", ":dataset list")
    listed = {d["name"]: d for d in out[1].get("datasets", [])} if len(out) > 1 else {}
    check(out and out[0].get("normalize") is False and out[0].get("casefold") is True and
          listed.get("kxy", {}).get("normalize") is False and listed["kxy"].get("casefold") is True,
          f"info and list agree: {out[:1]} {listed.get('kxy')}")
    # a cycle written by hand into the catalog: a clear error, no crash
    db = sqlite3.connect(os.path.join(home2, "catalog.db"))
    ids = dict(db.execute("SELECT name, id FROM datasets"))
    db.execute("INSERT INTO members(dataset_id, ord, member_id, minus) VALUES(?, 9, ?, 0)", (ids["ab"], ids["abc"]))
    db.commit()
    db.close()
    p, out = run(home2, "load abc")
    check(p.returncode == 1 and "composition cycle" in p.stderr and "-11" not in str(p.returncode),
          f"a cycle: {p.returncode} {p.stderr}")
    p, out = run(home2, ":dataset list")
    st = {d["name"]: d["status"] for d in (out[0].get("datasets", []) if out else [])}
    check(p.returncode == 0 and st.get("abc") == "registered" and st.get("a") == "built",
          f"list still works, the broken composition not loadable: {p.returncode} {st} {p.stderr}")
    db = sqlite3.connect(os.path.join(home2, "catalog.db"))
    db.execute("DELETE FROM members WHERE ord = 9")
    db.commit()
    db.close()
    # a member's index deleted behind the catalog's back
    p, out = run(home2, ":dataset info a")
    shutil.rmtree(out[0]["index_path"])
    p, out = run(home2, "load ab")
    check(p.returncode == 1 and "a: " in p.stderr and "no index directory" in p.stderr, f"a member's index gone: {p.stderr}")

    # a copy taken away that a member no longer holds: build warns of every composition made of
    # the member however deep, and the server answers why (not "unknown") and lists it broken
    home3 = os.path.join(tmp, "home3")
    for name, text in (("m.txt", "a one\nb two\n"), ("t3.txt", "b two\n")):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    p, out = run(home3, f":dataset add m {tmp}/m.txt --format lines", "build m",
                 f":dataset add t3 {tmp}/t3.txt --format lines", "build t3", ":dataset compose c m --minus t3",
                 ":dataset compose ab m", ":dataset compose c2 ab --minus t3")
    check(p.returncode == 0, f"compositions of compositions: {p.stderr}")
    with open(os.path.join(tmp, "m.txt"), "w") as f:
        f.write("a one\nc three\n")
    p = shell(BIN, home3, "build m", json_out=False)
    check("composition c, made of m, no longer loads" in p.stderr and
          "composition c2, made of m, no longer loads" in p.stderr, f"nested compositions warned: {p.stderr}")
    port = free_port()
    srv = start_server([BIN, "--home", home3, "serve", "--port", str(port)], port)
    try:
        st, b, _ = call(port, "/v1/count", {"dataset": "c2", "query": "a"})
        check(st == 409 and "not a document of what it is taken from" in json.loads(b)["error"]["message"],
              f"the server says why a composition does not load: {st} {b}")
        st, b, _ = call(port, "/v1/datasets")
        listed = {d["name"]: d for d in json.loads(b)["datasets"]} if st == 200 else {}
        check(listed.get("c", {}).get("status") == "broken" and "taken from" in listed.get("c", {}).get("error", "") and
              listed.get("ab", {}).get("status") == "built", f"the server lists it broken: {st} {b}")
    finally:
        srv.terminate()
        srv.wait()

sys.exit(summary())
