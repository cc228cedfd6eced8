"""Corruption suite: every file of a built index (over 10 MB, with prefix table and sampled
keys, several sources and thousands of documents) truncated, zeroed, filled with 0xFF and
with random bytes flipped (fixed seeds), its time kept as if the disk had rotted (a file
modified later than the manifest is checksummed at load: checked first, on its own). After
each edit a fixed set of queries runs; each case must end in one of three classes:

  correct   the answers equal those of the intact index;
  error     the corruption error (code "corrupt"), at load or at the query;
  flagged   a different answer, only for in-range edits of `sa` or `text` (which the spot
            checks at load need not read), and `:dataset verify` then flags the index.

Edits of the `lcp` file (built with --lcp) give the intact answers or the corruption error:
its windows' checksums send a search to the text.

The same edits of the `fold` file of a case-folded index of the same corpus (with some
ß, İ and Σ added) must give the intact answers or the corruption error: never a wrong one.

Anything else — a signal, a hang, another error, a wrong answer from another file, or a
wrong answer `verify` does not flag — fails. The count of each class is printed.

usage: corruption_test.py INFINIGRAM CORPUS.txt [CASES_PER_FILE]
"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import call, check, free_port, shell, start_server, summary  # noqa: E402

BIN, CORPUS = sys.argv[1], sys.argv[2]
FLIP_SEEDS = int(sys.argv[3]) if len(sys.argv) > 3 else 12

QUERIES = [
    'count --positions 3 "the"', 'count "ROMEO:"', 'count --positions 2 "wherefore art thou"',
    'count "e"', 'count "zzzq"', 'count "\\n\\n"', 'predict --top 5 "What say"', 'predict --top 5 "R"',
    'predict --top 5 ""', 'count --positions 2 "KING RICHARD III:\\nGive me"', 'doc 7 --lines 1:2',
    'doc 3001', 'spans --min-len 12 "O Romeo, Romeo! wherefore art thou Romeo?"',
]


def run(home, *cmds, timeout=60):
    return shell(BIN, home, *cmds, timeout=timeout)


CF_QUERIES = [
    'count --positions 3 "romeo"', 'count --positions 2 "STRASSE"', 'count --positions 2 "istanbul"',
    'count --positions 2 "σοφος"', 'doc 7 --lines 1:2', 'doc 40001',
    'spans --min-len 12 "o romeo, ROMEO! Wherefore art thou Romeo?"',
]


def answers(home, dataset="c", queries=QUERIES):
    """Each query's JSON (without timings) or ("error", code)."""
    p = run(home, "load " + dataset, *queries)
    if p.returncode < 0 or p.returncode > 1:
        return ("signal", p.returncode, p.stderr[-500:])
    out = []
    for line in p.stdout.splitlines():
        o = json.loads(line)
        o.pop("elapsed_ms", None)
        out.append(o)
    return out


def classify(out, want):
    if isinstance(out, tuple):
        return "signal"
    if out == want:
        return "correct"
    errors = [o["error"]["code"] for o in out if "error" in o]
    if errors and all(c == "corrupt" or c == "usage" for c in errors) and "corrupt" in errors:
        # after a failed load, the queries say "no dataset loaded" (usage)
        ok = [o for o in out if "error" not in o]
        return "error" if all(o in want for o in ok) else "wrong"
    return "error-other" if errors else "wrong"


def edits(data):
    """Truncated, zeroed, filled with 0xFF, and bits flipped with fixed seeds."""
    cases = [("truncate", lambda b: b[: len(b) // 2]), ("zero", lambda b: bytes(len(b))),
             ("0xff", lambda b: b"\xff" * len(b))]
    for seed in range(FLIP_SEEDS):
        for flips in (1, 16, 256):
            def edit(b, seed=seed, flips=flips):
                r = random.Random(seed * 1000 + flips)
                b = bytearray(b)
                for _ in range(flips):
                    b[r.randrange(len(b))] ^= 1 << r.randrange(8)
                return bytes(b)
            if data:
                cases.append(("flip%d/seed%d" % (flips, seed), edit))
    return cases


def casefold_cases(tmp, home, srcdir):
    """The fold file of a case-folded index: an edit gives the intact answers or the error."""
    srcdir = shutil.copytree(srcdir, os.path.join(tmp, "src-cf"))  # the other dataset's sources stay as built
    with open(os.path.join(srcdir, "part99.txt"), "wb") as f:
        f.write("Die Straße heißt STRASSE.\nİstanbul ISTANBUL istanbul\nΟ ΣΟΦΟΣ ο σοφος\n".encode() * 2000)
    p = run(home, ":dataset add cf %s --format lines --casefold" % srcdir, "build cf", timeout=600)
    check(p.returncode == 0, "casefold build: " + p.stderr)
    idx = [os.path.join(home, "indexes", d) for d in os.listdir(os.path.join(home, "indexes")) if d.startswith("cf-")][0]
    path = os.path.join(idx, "shard-0000", "fold")
    want = answers(home, "cf", CF_QUERIES)
    check(isinstance(want, list) and not any("error" in o for o in want[:4]) and
          want[1].get("count", 0) > 3 and want[2].get("count", 0) > 3, "intact casefold answers: %s" % str(want)[:300])
    pristine = open(path, "rb").read()
    built = os.stat(path).st_mtime_ns
    classes = {}
    cases = edits(pristine)
    for kind, edit in cases:
        data = edit(pristine)
        with open(path, "wb") as fh:
            fh.write(data)
        os.utime(path, ns=(built, built))  # damage no program made: the load's own checks must catch it
        try:
            out = answers(home, "cf", CF_QUERIES)
        except subprocess.TimeoutExpired:
            out = ("hang",)
        c = classify(out, want)
        classes[c] = classes.get(c, 0) + 1
        check(c in ("correct", "error"), "fold %s: %s %s" % (kind, c, str(out)[:600]))
    with open(path, "wb") as fh:
        fh.write(pristine)
    os.utime(path, ns=(built, built))
    print("fold cases: %d; %s" % (len(cases), ", ".join("%s %d" % kv for kv in sorted(classes.items()))))
    check(answers(home, "cf", CF_QUERIES) == want, "restored casefold index answers as before")


def cut_short(tmp, text):
    """Index files truncated under a shell and a server that have them mapped (a home restored
    with cp over a running server): the reads past the new end were SIGBUS, which killed both.
    Now the query that meets them fails with the corruption error naming the file, later ones
    too, and the process goes on (the server answers its health and other datasets)."""
    home = os.path.join(tmp, "home-cut")
    src = os.path.join(tmp, "cut.txt")
    with open(src, "wb") as fh:
        fh.write(text * 2)
    p = run(home, ":dataset add cut %s" % src, "build cut", ":dataset add other --text \"other text\"", "build other",
            timeout=600)
    check(p.returncode == 0, "build cut: " + p.stderr)
    idx = [os.path.join(home, "indexes", d) for d in os.listdir(os.path.join(home, "indexes")) if d.startswith("cut-")][0]
    files = [os.path.join(idx, "shard-0000", f) for f in ("sa", "text")]
    kept = {f: open(f, "rb").read() for f in files}

    def truncate():
        for f in files:
            os.truncate(f, 4096)

    def restore():
        for f in files:
            with open(f, "wb") as fh:
                fh.write(kept[f])

    sh = subprocess.Popen([BIN, "--home", home, "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    sh.stdin.write("load cut\n")
    sh.stdin.flush()
    first = sh.stdout.readline()
    truncate()
    out, err = sh.communicate('count "wherefore art thou"\ncount --positions 2 "Romeo"\n'
                              'spans "O Romeo, Romeo! wherefore art thou Romeo?"\ndups --min-len 40 --top 1\n'
                              'generate --max 30 --seed 1 --infgram "ROMEO:"\n', timeout=120)
    lines = [json.loads(x) for x in out.splitlines()]
    check('"load"' in first and sh.returncode == 1 and len(lines) == 5 and "\\u0000" not in out and
          all(o.get("error", {}).get("code") == "corrupt" and "cut short" in o["error"]["message"] and
              "shard-0000/" in o["error"]["message"] for o in lines),
          "a shell whose index is cut short under it: status %s, %s %s" % (sh.returncode, out[-600:], err[-300:]))
    restore()
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    try:
        st0, b0, _ = call(port, "/v1/count", {"dataset": "cut", "query": "Romeo"})
        truncate()
        st1, b1, _ = call(port, "/v1/count", {"dataset": "cut", "query": "wherefore art thou"})
        st2, b2, _ = call(port, "/v1/predict", {"dataset": "cut", "query": "What say"})
        # generation too: no character read from the zeros is answered (they were NULs, 200)
        st5, b5, _ = call(port, "/v1/completions", {"model": "cut", "prompt": "ROMEO:", "max_tokens": 40, "seed": 1})
        st6, b6, _ = call(port, "/v1/chat/completions", {"model": "cut", "messages": [{"role": "user", "content": "x"}],
                                                         "max_tokens": 40, "seed": 1, "stream": True})
        last = [x for x in b6.split("\n") if x.startswith("data: {")][-1:]
        check(st5 == 500 and '"code":"corrupt"' in b5 and "\\u0000" not in b6 and
              ((st6 == 500 and '"code":"corrupt"' in b6) or
               (st6 == 200 and last and json.loads(last[0][6:]).get("error", {}).get("code") == "corrupt")),
              "completions on an index cut short: %s %s / %s %s" % (st5, b5[:200], st6, b6[-300:]))
        st3, b3, _ = call(port, "/v1/count", {"dataset": "other", "query": "text"})
        st4, _, _ = call(port, "/v1/health")
        check(st0 == 200 and st1 == 500 and '"code":"corrupt"' in b1 and "cut short" in b1 and st2 == 500 and
              st3 == 200 and st4 == 200 and srv.poll() is None,
              "a server whose index is cut short under it: %s %s / %s %s / %s %s / %s %s" %
              (st0, b0[:100], st1, b1[:200], st2, b2[:100], st3, b3[:100]))
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        restore()


def many_shards(tmp, text):
    """An index of more mappings than the first block of the SIGBUS registry holds (2,000
    shards of five files, past 8,192): a file cut short in its last shard is the corruption
    error too, not a server killed by SIGBUS."""
    home = os.path.join(tmp, "home-many")
    src = os.path.join(tmp, "many.txt")
    with open(src, "wb") as fh:
        fh.write(text * 4)
    p = run(home, ":dataset add m %s --format lines" % src, "build m --shard-size 2K", timeout=600)
    check(p.returncode == 0, "build m: " + p.stderr)
    idx = [os.path.join(home, "indexes", d) for d in os.listdir(os.path.join(home, "indexes")) if d.startswith("m-")][0]
    shards = sorted(d for d in os.listdir(idx) if d.startswith("shard-"))
    check(len(shards) * 5 > 8192, "shards enough: %d" % len(shards))
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    try:
        st0, b0, _ = call(port, "/v1/count", {"dataset": "m", "query": "Romeo"})
        os.truncate(os.path.join(idx, shards[-1], "text"), 0)
        st1, b1, _ = call(port, "/v1/count", {"dataset": "m", "query": "Romeo"})
        st2, _, _ = call(port, "/v1/health")
        check(st0 == 200 and st1 == 500 and '"code":"corrupt"' in b1 and shards[-1] in b1 and st2 == 200 and
              srv.poll() is None, "%d shards, the last cut short: %s %s / %s %s / %s" % (
                  len(shards), st0, b0[:100], st1, b1[:200], srv.poll()))
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def main():
    tmp = tempfile.mkdtemp(prefix="ig-corrupt-")
    try:
        home = os.path.join(tmp, "home")
        srcdir = os.path.join(tmp, "src")
        os.makedirs(srcdir)
        with open(CORPUS, "rb") as f:
            text = f.read()
        for i in range(10):  # ten files of lines: thousands of documents, ten names, >10 MB
            with open(os.path.join(srcdir, "part%02d.txt" % i), "wb") as f:
                f.write(text)
        p = run(home, ":dataset add c %s --format lines" % srcdir, "build c --lcp", timeout=600)
        check(p.returncode == 0, "build: " + p.stderr)
        idx = [os.path.join(home, "indexes", d) for d in os.listdir(os.path.join(home, "indexes"))][0]
        shard = os.path.join(idx, "shard-0000")
        files = sorted(os.listdir(shard))
        check({"prefix", "sample", "lines", "lcp", "sa", "text", "docs", "docmeta", "names"} <= set(files),
              "tables built: %s" % files)
        want = answers(home)
        check(isinstance(want, list) and not any("error" in o for o in want[:-3] if o.get("command") != "doc"),
              "intact answers")
        pristine = {f: open(os.path.join(shard, f), "rb").read() for f in files}
        classes = {}
        cases = []
        for f in files:
            n = len(pristine[f])
            cases += [(f, "truncate", lambda b: b[: len(b) // 2]), (f, "zero", lambda b: bytes(len(b))),
                      (f, "0xff", lambda b: b"\xff" * len(b))]
            for seed in range(FLIP_SEEDS):
                for flips in (1, 16, 256):
                    def edit(b, seed=seed, flips=flips):
                        r = random.Random(seed * 1000 + flips)
                        b = bytearray(b)
                        for _ in range(flips):
                            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
                        return bytes(b)
                    if n:
                        cases.append((f, "flip%d/seed%d" % (flips, seed), edit))
        times = {f: os.stat(os.path.join(shard, f)).st_mtime_ns for f in files}

        def write_as_before(path, data, f):
            """Writes data keeping the file's time: damage no program made (bit rot)."""
            with open(path, "wb") as fh:
                fh.write(data)
            os.utime(path, ns=(times[f], times[f]))

        # a file changed after the build (its time later than the manifest's) is checksummed
        # at load: one flipped byte is the corruption error, naming the file; a file only
        # touched loads as before
        for f in ("text", "sa", "docs"):
            path = os.path.join(shard, f)
            damaged = bytearray(pristine[f])
            damaged[len(damaged) // 2] ^= 0x04
            with open(path, "wb") as fh:
                fh.write(damaged)
            p = run(home, "load c")
            check(p.returncode == 1 and "corrupt" in p.stdout and "shard-0000/%s: modified after" % f in p.stdout,
                  "a changed %s is refused at load: %s" % (f, (p.stdout + p.stderr)[-300:]))
            write_as_before(path, pristine[f], f)
            os.utime(path)
            check(answers(home) == want, "a touched %s answers as before" % f)
            os.utime(path, ns=(times[f], times[f]))
        for f, kind, edit in cases:
            path = os.path.join(shard, f)
            data = edit(pristine[f])
            write_as_before(path, data, f)
            try:
                out = answers(home)
            except subprocess.TimeoutExpired:
                out = ("hang",)
            c = classify(out, want)
            if c == "wrong" and f in ("sa", "text") and kind.startswith("flip"):
                v = run(home, ":dataset verify c")
                c = "flagged" if v.returncode != 0 and "checksum" in (v.stdout + v.stderr) else "wrong-unflagged"
            if c == "correct" and data != pristine[f] and kind.startswith("flip"):
                pass  # a flip the queries never read: fine
            classes[c] = classes.get(c, 0) + 1
            check(c in ("correct", "error", "flagged"), "%s %s: %s %s" % (f, kind, c, str(out)[:600]))
            write_as_before(path, pristine[f], f)
        print("cases: %d; %s" % (len(cases), ", ".join("%s %d" % kv for kv in sorted(classes.items()))))
        check(answers(home) == want, "restored index answers as before")
        # dups reads every byte of the text in a scan and then searches its top repeats: a byte
        # flipped under the scan (the corpus eight times over, one document) makes the two
        # disagree, which is the corruption error naming the index (it read freed memory and
        # said "internal" with a garbage count)
        big = os.path.join(tmp, "big.txt")
        with open(big, "wb") as fh:
            fh.write(text * 8)
        p = run(home, ":dataset add big %s" % big, "build big", timeout=600)
        check(p.returncode == 0, "build big: " + p.stderr)
        big_idx = [os.path.join(home, "indexes", d) for d in os.listdir(os.path.join(home, "indexes"))
                   if d.startswith("big-")][0]
        big_text = os.path.join(big_idx, "shard-0000", "text")
        built = os.stat(big_text).st_mtime_ns
        with open(big_text, "r+b") as fh:
            fh.seek(len(text) * 3 + len(text) // 2)
            b = fh.read(1)
            fh.seek(-1, 1)
            fh.write(bytes([b[0] ^ 0x20]))
        os.utime(big_text, ns=(built, built))
        p = run(home, "load big", "dups --min-len 60 --top 2")
        out = p.stdout + p.stderr
        check(p.returncode == 1 and '"code":"corrupt"' in out and "index corrupt (" + big_idx in out and
              "counted" in out and ":dataset verify big" in out, "dups over a flipped text: %s" % out[-400:])
        # an index file that is a FIFO (the open blocked for ever) or a manifest that is a device
        # (read on into memory, gigabytes in seconds): refused at once, naming the file
        for name, make in (("shard-0000/text", lambda q: os.mkfifo(q)),
                           ("manifest.json", lambda q: os.symlink("/dev/zero", q))):
            path = os.path.join(idx, name)
            os.rename(path, path + ".kept")
            make(path)
            try:
                p = run(home, "load c", timeout=20)
                out = p.stdout + p.stderr
            except subprocess.TimeoutExpired:
                out = "(hung)"
            check("not a regular file" in out and path in out, "%s not a regular file: %s" % (name, out[-300:]))
            os.unlink(path)
            os.rename(path + ".kept", path)
        check(answers(home) == want, "the index answers as before once its files are back")
        cut_short(tmp, text)
        many_shards(tmp, text)
        casefold_cases(tmp, home, srcdir)
        # an index built before the line index was stored (no `lines` in its manifest or
        # directory) answers the same, counting it in memory, and :dataset info says so
        info = json.loads(run(home, ":dataset info c").stdout.splitlines()[-1])
        check(info.get("line_index_missing") == 0, "a fresh index stores its line index: %s" % info)
        man_path = os.path.join(idx, "manifest.json")
        man = json.load(open(man_path))
        man.pop("manifest_checksum", None)  # manifests of those builds carried none
        db = sqlite3.connect(os.path.join(home, "catalog.db"))  # nor did their catalogs record the index's checksum
        params = json.loads(db.execute("SELECT build_params FROM datasets WHERE name = 'c'").fetchone()[0])
        params.pop("index_checksum")
        db.execute("UPDATE datasets SET build_params = ? WHERE name = 'c'", (json.dumps(params),))
        db.commit()
        db.close()
        for sh in man["shards"]:
            sh["files"].pop("lines", None)
        with open(man_path, "w") as fh:
            json.dump(man, fh)
        os.unlink(os.path.join(shard, "lines"))
        check(answers(home) == want, "an index without a stored line index answers as before")
        # a field of such a manifest out of its range is named (it said "missing or invalid fields")
        for field, value, shown in (("documents", -5, "field documents"), ("sa_api", "48", "field sa_api"),
                                    ("dir", "../x", "shard 0: field dir")):
            bad = json.loads(json.dumps(man))
            if field == "dir":
                bad["shards"][0]["dir"] = value
            else:
                bad[field] = value
            with open(man_path, "w") as fh:
                json.dump(bad, fh)
            p = run(home, "load c")
            check(p.returncode == 1 and shown in p.stdout + p.stderr, "manifest %s %r: %s" % (field, value,
                                                                                           (p.stdout + p.stderr)[-300:]))
        with open(man_path, "w") as fh:
            json.dump(man, fh)
        info = json.loads(run(home, ":dataset info c").stdout.splitlines()[-1])
        check(info.get("line_index_missing") == 1, "info counts the shard without a line index: %s" % info)
        p = subprocess.run([BIN, "--home", home, "-c", ":dataset info c"], capture_output=True, text=True)
        check("rebuild to store one" in p.stdout, "info says a rebuild stores it: " + p.stdout[-300:])
        # an index built without an lcp file (before it existed, or without --lcp) answers the
        # same, and :dataset info says a rebuild with --lcp makes cold counts faster
        check(info.get("lcp_missing") == 0, "an index built with --lcp has its lcp file: %s" % info)
        lcp_path = os.path.join(shard, "lcp")
        damaged = bytearray(pristine["lcp"])
        damaged[len(damaged) // 3] ^= 0x10  # one window's lcp or branching byte
        write_as_before(lcp_path, damaged, "lcp")
        v = run(home, ":dataset verify c")
        check(v.returncode != 0 and "shard-0000/lcp: checksum mismatch" in v.stdout + v.stderr,
              ":dataset verify names the damaged lcp file: " + (v.stdout + v.stderr)[-300:])
        check(answers(home) == want, "a damaged lcp window is searched without it")
        write_as_before(lcp_path, pristine["lcp"], "lcp")
        man = json.load(open(man_path))
        for sh in man["shards"]:
            sh["files"].pop("lcp", None)
        with open(man_path, "w") as fh:
            json.dump(man, fh)
        os.unlink(os.path.join(shard, "lcp"))
        check(answers(home) == want, "an index without an lcp file answers as before")
        info = json.loads(run(home, ":dataset info c").stdout.splitlines()[-1])
        check(info.get("lcp_missing") == 1, "info counts the shard without an lcp file: %s" % info)
        p = subprocess.run([BIN, "--home", home, "-c", ":dataset info c"], capture_output=True, text=True)
        check("build --lcp" in p.stdout and "cold" in p.stdout, "info says a rebuild with --lcp helps: " + p.stdout[-300:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
