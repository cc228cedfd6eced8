"""infinigram-mpi on loopback, each rank with its own home:

  - every distributed command (count with and without positions, predict in every model
    and both views, smoothed or not, prob, backoff, seeded generate, doc) answers exactly as
    the shell does on one machine for the same sources, over 3 ranks and over 1, on small
    random corpora (fixed seeds, some UTF-8) and on a real text;
  - a command not distributed yet is refused with an error naming it; eval in every model and
    spans --rank bm25 (the corpus's BM25 statistics summed over the parts, identical
    documents folded across them) answer as one machine;
  - every message cut into pieces of 40 bytes (INFINIGRAM_MPI_PIECE, as one over 2 GiB is
    cut into pieces of INT_MAX bytes), and eval's positions asked for 97 at a time
    (INFINIGRAM_MPI_EVAL_SLICE, as a text's are a million at a time): the same answers;
  - a build that fails on one rank (its part empty) leaves every rank's previous index in
    force and no new directory anywhere;
  - a part missing or corrupt on its node gives an error naming rank, host and path;
  - serve under mpirun answers the engine endpoints as infinigram serve does, and /v1/datasets
    lists the whole distributed dataset (its bytes and documents, its parts); a stopped rank
    makes its requests answer 503 (code busy) naming it, at once after the first; a killed
    rank ends the job within 10 s;
  - a rank killed with SIGKILL mid-query and mid-build: mpirun exits non-zero within 10 s
    with our message naming the rank (mid-build: the previous index stays in force and the
    half-written part is removed at the next start).

usage: mpi_test.py INFINIGRAM INFINIGRAM_MPI TEXT
"""
import json
import re
import os
import random
import shutil
import signal
import subprocess
import sys
import socket
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, shell, summary  # noqa: E402

BIN, MPIBIN, TEXT = sys.argv[1], sys.argv[2], sys.argv[3]
WORK = None  # the scratch directory: files the queries read (candidates, held-out text) go there
ENV = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include="lo",
           OMPI_MCA_btl_base_warn_component_unused="0")


def mpirun(np, home, *cmds, timeout=120, stdin=None, env=None):
    args = ["mpirun", "--oversubscribe", "-np", str(np), MPIBIN, "--home", home + "/h%r"]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args, capture_output=True, text=True, env=env or ENV, timeout=timeout, input=stdin)


def jl(out):
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def words_corpus(seed, n):
    r = random.Random(seed)
    vocab = ["the", "lord", "said", "unto", "moses", "and", "of", "a", "b", "ab", "ba", "é", "été", "日本", "語"]
    return "".join(" ".join(r.choice(vocab) for _ in range(r.randint(1, 14))) + "\n" for _ in range(n))


def queries(text, seed, ndocs, path):
    """Counts of substrings of the corpus (so most occur), absent ones, the empty text, with
    positions enough to cross every part; documents at both ends and in between."""
    r = random.Random(seed)
    q = []
    for _ in range(25):
        a = r.randrange(len(text) - 1)
        s = text[a:a + r.randint(1, 12)].split("\n")[0]
        if not s or '"' in s or "\\" in s or s != s.strip() or "  " in s:
            continue
        q.append('count "%s"' % s)
        q.append('count --positions 2000 --width 12 "%s"' % s)
    q += ['count ""', 'count "zzz not there"', 'count --positions 5 the', "count --positions 1000000 a"]
    for _ in range(10):  # contexts that occur, cut anywhere (inside a character too), and some that do not
        a = r.randrange(len(text) - 1)
        s = text[a:a + r.randint(0, 20)].encode("utf-8")[:r.randint(0, 24)].decode("utf-8", "ignore")
        s = s.replace("\n", " ").replace('"', "").replace("\\", "").strip()
        q += ['predict "%s"' % s, 'predict --n %d "%s"' % (r.randint(1, 6), s),
              'predict --bytes --alpha 0.5 --top 40 "%s"' % s, 'predict --max-context 3 --top 3 "%s zq"' % s,
              'predict --interp %d --top 30 "%s"' % (r.choice([1, 2, 3, -1]), s),
              'predict --interp 2 --sbi --bytes "%s"' % s,
              'predict --weighted %s --top 30 "%s"' % (r.choice(["linear", "quadratic", "exponential", "sigmoid"]), s),
              'predict --weighted linear --min-len 2 --max-len 4 "%s"' % s,
              'backoff --top 30 "%s"' % s, 'backoff --bytes --threshold 3 --factor 0.5 "%s"' % s]
    q += ['predict ""', 'predict --n 2 --alpha 1 "qqq"', 'predict "\\xC3"', 'predict --bytes "\\xE6\\x97"',
          'backoff "\\xE6\\x97"', 'backoff --top 50 "a \\xE6\\x97"', 'backoff --max-context 2 ""']
    for k in range(4):  # seeded generation, byte for byte, in several models
        a = r.randrange(len(text) - 10)
        s = text[a:a + r.randint(0, 8)].replace("\n", " ").replace('"', "").replace("\\", "")
        model = ["", "--infgram", "--n 3 --alpha 0.1", "--weighted linear --temperature 0.7 --top-k 5"][k]
        q.append('generate --seed %d --max 40 %s "%s"' % (seed * 10 + k, model, s))
    q.append('generate --seed 3 --max 60 --top-p 0.9 --no-stop-at-end --stop "a" "%s"' % text[:3].strip())
    for _ in range(6):  # a context and what follows it in the corpus (or not quite)
        a = r.randrange(len(text) - 40)
        s = text[a:a + 40].replace("\n", " ").replace('"', "").replace("\\", "")
        cut = r.randint(0, 20)
        ctx, cont = s[:cut], s[cut:cut + r.randint(1, 15)] or "x"
        q += ['prob "%s" "%s"' % (ctx, cont), 'prob --bytes --alpha 0.25 "%s" "%s"' % (ctx, cont + "q"),
              'prob --n %d "%s" "%s"' % (r.randint(1, 5), ctx, cont),
              'prob --interp %d "%s" "%s"' % (r.randint(1, 4), ctx, cont),
              'prob --weighted %s --bytes "%s" "%s"' % (r.choice(["linear", "exponential"]), ctx, cont)]
    for _ in range(6):  # texts made of pieces of the corpus and noise: spans cross the parts' limits
        pieces = []
        for _ in range(r.randint(1, 4)):
            a = r.randrange(len(text) - 30)
            pieces.append(text[a:a + r.randint(3, 30)])
            pieces.append(r.choice(["", " ", "zq", " qq ", "é"]))
        s = "".join(pieces).replace("\n", " ").replace('"', "").replace("\\", "").strip() or "x"
        q += ['spans "%s"' % s, 'spans --min-len %d --positions %d "%s"' % (r.randint(1, 6), r.randint(0, 40), s),
              'spans --words --min-len 3 "%s"' % s, 'spans --max-count %d --min-len 2 "%s"' % (r.randint(1, 30), s),
              'spans --words --max-count 3 --min-len 1 --positions 1 "%s"' % s,
              # ranked: the corpus's BM25 statistics are the parts' sums; identical documents fold
              'spans --rank bm25 --min-len %d --positions %d "%s"' % (r.randint(2, 8), r.randint(1, 20), s),
              'spans --rank bm25 --candidates %d --k1 %g --b %g --min-len 3 "%s"' % (
                  r.randint(1, 400), r.choice([0, 0.5, 1.2, 3]), r.choice([0, 0.3, 0.75, 1]), s),
              'spans --rank bm25 --max-count %d --min-len 2 --positions 5 "%s"' % (r.randint(2, 50), s)]
    q += ['spans --min-len 1 --positions 1000000 "a b a b the"', 'spans "é\xC3"', 'spans ""',
          'spans --rank bm25 --min-len 1 --candidates 100000 "a b a b the"', 'spans --rank bm25 ""',
          'spans --rank bm25 --positions 50 --min-len 4 "the lord said unto moses and the lord"']
    llm = os.path.join(WORK, "llm-%d.json" % seed)
    if not os.path.exists(llm):  # candidates: pieces of the corpus (some cut inside a character), and absent ones
        toks = [{"token": "zq", "logprob": -3.0}, {"bytes_hex": "e697", "logprob": -5.0}, {"bytes": [255, 97], "prob": 0.01}]
        for k in range(12):
            a = r.randrange(len(text) - 8)
            t = text[a:a + r.randint(1, 6)].encode("utf-8")[:r.randint(1, 8)]
            toks.append({"bytes_hex": t.hex(), "logprob": -r.random() * 6})
        open(llm, "w").write(json.dumps(toks))
    for _ in range(4):
        a = r.randrange(len(text) - 20)
        s = text[a:a + r.randint(0, 20)].replace("\n", " ").replace('"', "").replace("\\", "")
        q += ['mix "%s" --llm %s --lambda 0.3' % (s, llm), 'mix "%s" --llm %s --adaptive --alpha 0.1' % (s, llm),
              'mix "%s" --llm %s --lambda-sparse 0.8 --lambda-dense 0.2' % (s, llm)]
    q += ['mix "" --llm %s' % llm, 'mix "a" --llm %s/none.json' % os.path.dirname(llm)]
    for _ in range(5):  # explain in several models: profile, level shares, candidates and their sources
        a = r.randrange(len(text) - 20)
        s = text[a:a + r.randint(0, 16)].replace("\n", " ").replace('"', "").replace("\\", "")
        q += ['explain "%s"' % s, 'explain --interp %d --positions %d "%s"' % (r.randint(1, 4), r.randint(0, 30), s),
              'explain --bytes --top 20 --weighted %s "%s"' % (r.choice(["linear", "sigmoid"]), s),
              'explain --n %d --top 3 "%s zq"' % (r.randint(1, 5), s), 'explain --sbi --interp 2 "%s"' % s]
    q += ['explain ""', 'explain "\xE6\x97"']
    # explain --step/--last: the last generation's context, model and drawn character
    q += ['explain --last', 'count --ids 1,2', 'predict --ids 3 --interp 2']  # refused alike
    for _ in range(2):
        a = r.randrange(len(text) - 20)
        s = text[a:a + r.randint(0, 12)].replace("\n", " ").replace('"', "").replace("\\", "")
        q += ['generate --max 30 --seed %d --interp 2 --temperature 0.8 "%s"' % (r.randint(1, 10 ** 6), s),
              'explain --step %d' % r.randint(1, 30), 'explain --step 1 --top 2 --positions 4',
              'explain --last --positions 2', 'explain --step 31']
    vocab = sorted(set(w for w in text.split() if '"' not in w and "\\" not in w)) + ["zzq"]
    for _ in range(5):  # CNF search: exact answers are one machine's; sampled ones flagged with its scale
        w1, w2, w3 = (r.choice(vocab) for _ in range(3))
        q += ['search "%s"' % w1, 'search "%s" "%s" --limit 30' % (w1, w2),
              'search "%s" AND ("%s" OR "%s") --within %d --offset %d --limit 8' % (w1, w2, w3, r.randint(1, 40),
                                                                                 r.randint(0, 5)),
              'search "%s %s" OR "%s" --limit 1000' % (w1, w2, w3), 'search "%s" --budget %d --limit 3' % (w1, r.randint(5, 60)),
              'search "%s" --offset 1000001 --limit 4' % w1,
              # terms with spaces inside parentheses, options as --name=VALUE between them
              'search ("%s " OR "%s") AND " %s" --limit=6' % (w1, w2, w3),
              'search ("%s  %s"OR"%s")AND"%s" --within=60' % (w1, w2, w3, w1)]
    q += ['search (', 'search "a" --offset 2 --limit 0']
    held = os.path.join(WORK, "held-%d.txt" % seed)
    if not os.path.exists(held):  # held-out text: the corpus's words in a new order, and some others
        words = text.split() + ["zebra", "qq", "é"]
        open(held, "w", encoding="utf-8").write(
            "".join(" ".join(r.choice(words) for _ in range(r.randint(1, 12))) + "\n" for _ in range(400)))
    q += ['eval %s' % held, 'eval --alpha 0.5 --max-context 5 %s' % held, 'eval --max-context -1 %s --range 10:900' % held,
          'eval --threads 3 %s' % held, 'eval --text "%s"' % text[:60].replace("\n", " ").replace('"', ""),
          'eval --text a', 'eval %s/none.txt' % os.path.dirname(held)]
    # eval in every model: one round trip of each part's levels of every position
    q += ['eval --n %d %s' % (r.randint(1, 6), held), 'eval --n 3 --alpha 0.5 --max-context 4 %s --range 0:700' % held,
          'eval --n 1 --alpha 0.01 %s' % held, 'eval --weighted linear %s' % held,
          'eval --weighted %s --min-len 2 --max-len 6 %s' % (r.choice(["quadratic", "exponential", "sigmoid"]), held),
          'eval --interp 2 %s' % held, 'eval --interp -1 --threads 2 %s --range 5:600' % held,
          'eval --interp %d --sbi --max-context 100 %s' % (r.randint(1, 3), held),
          'eval --interp 2 --text "%s"' % text[100:190].replace("\n", " ").replace('"', ""),
          'eval --n 3 --text a', 'eval --weighted linear --alpha 0.5 %s' % held]
    # a model that reads no context; the shell's reader and codec, its spellings and messages
    q += ['eval --max-context 0 %s' % held, 'eval --max-context 0 --text "the cat"', 'count --bogus x',
          'predict --bytes=1 a', 'count x --positions', 'count --positions={width} a', 'prob the cat', 'prob "a"',
          'eval "%s\\x00junk"' % held, 'prob --bogus "a" "b"', 'eval "~/no-such-ig-file"', 'eval ~/no-such-ig-file']
    for d in sorted({0, 1, ndocs // 3, ndocs // 3 + 1, ndocs // 2, ndocs - 2, ndocs - 1}):
        q.append("doc %d" % d)
    q += ["doc %d --lines 1:2" % (ndocs // 2), "doc %d" % ndocs, "doc --range 1:3 %d" % (ndocs - 1),
          "doc 99999999999999999999999", "doc nosuchname", "doc %s" % os.path.basename(path), "doc %s" % path]
    return q


def compare(tmp, name, path, fmt, np, qs, env=None, tag=""):
    one = os.path.join(tmp, "one-" + name)
    if not os.path.isdir(one):
        p = shell(BIN, one, ":dataset add %s %s --format %s" % (name, path, fmt), "build %s --jobs 1" % name)
        check(p.returncode == 0, "one-machine build of %s: %s" % (name, p.stderr))
    ref = jl(shell(BIN, one, "load " + name, *qs).stdout)[1:]
    home = os.path.join(tmp, "np%d-%s%s" % (np, name, tag))
    script = "\n".join([":dataset add %s %s --format %s" % (name, path, fmt), "build %s --jobs 1" % name,
                        "load " + name] + qs) + "\n"
    t = time.time()
    p = mpirun(np, home, stdin=script, env=env)
    got = jl(p.stdout)
    check(len(got) == len(qs) + 3, "%s over %d ranks: %d answers for %d commands: %s" % (
        name, np, len(got), len(qs) + 3, p.stderr[-2000:]))
    check(got and got[1].get("parts") == np and "error" not in got[1], "%s: build over %d ranks: %s" % (
        name, np, got[1] if len(got) > 1 else p.stderr[-500:]))
    got = got[3:]
    check(len(ref) == len(qs), "%s: one-machine answers %d of %d" % (name, len(ref), len(qs)))
    errors = [q for q, a in zip(qs, ref) if "error" in a]
    check(len(errors) <= 44, "%s: only the documents past the end or by a name not unique, the hostile requests, "
          "the texts too short to score and ranges past the end of a short file fail: %s" % (name, errors))
    # a sampled search reads each part's own sample: flagged, and scaled, as on one machine
    bad = [(q, a, b) for q, a, b in zip(qs, ref, got) if a != b and not (
        a.get("approximate") and b.get("approximate") and a.get("scale") == b.get("scale"))]
    sampled = sum(1 for a in ref if a.get("approximate"))
    check(sampled == sum(1 for b in got if b.get("approximate")), "%s: the same searches are sampled" % name)
    check(not bad, "%s over %d ranks differs from one machine: %s" % (name, np, bad[:1]))
    print("%s over %d ranks: %d commands compared (%.1f s)" % (name, np, len(qs), time.time() - t), flush=True)
    return home


def rank_pid(home, rank):
    """The pid of infinigram-mpi rank `rank` of the job on `home`."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"infinigram-mpi") and (home + "/h%r").encode() in cmd and \
                ("OMPI_COMM_WORLD_RANK=%d" % rank).encode() in env:
            return int(pid)
    return None


def index_dirs(home, rank):
    d = os.path.join(home, "h%d" % rank, "indexes")
    return sorted(x for x in os.listdir(d) if not x.endswith(".lock")) if os.path.isdir(d) else []


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def post(port, path, body, timeout=30):
    """(status, parsed JSON) of a POST to the server."""
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as f:
            return f.status, json.loads(f.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def get(port, path, timeout=30):
    """(status, parsed JSON) of a GET from the server."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as f:
            return f.status, json.loads(f.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def wait_up(port, proc, deadline=60):
    t = time.time() + deadline
    while time.time() < t and proc.poll() is None:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/v1/health" % port, timeout=2) as f:
                return f.status == 200
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    return False


def serve_checks(tmp, home, one, name, text, llm):
    """infinigram-mpi serve over 3 ranks against infinigram serve on one machine: the same
    JSON for the engine endpoints; a rank stopped (SIGSTOP) answers 503 with the error shape,
    at once for the requests after; a rank killed ends the job (mpirun non-zero, < 10 s)."""
    p1, p2 = free_port(), free_port()
    ref = subprocess.Popen([BIN, "--home", one, "-c", "serve --port %d --threads 2" % p1], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=ENV)
    args = ["mpirun", "--oversubscribe", "-np", "3", MPIBIN, "--home", home + "/h%r", "--timeout", "3", "-c",
            "serve --port %d --threads 2" % p2]
    job = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        check(wait_up(p1, ref) and wait_up(p2, job), "both servers up")
        r = random.Random(11)
        reqs = []
        for _ in range(6):
            a = r.randrange(len(text) - 30)
            q = text[a:a + r.randint(1, 20)]
            reqs += [("/v1/count", {"dataset": name, "query": q, "positions": 5}),
                     ("/v1/predict", {"dataset": name, "query": q, "interp": 2, "top": 10}),
                     ("/v1/prob", {"dataset": name, "query": q[:5], "continuation": q[5:] or "x"}),
                     ("/v1/backoff", {"dataset": name, "query": q}),
                     ("/v1/spans", {"dataset": name, "query": text[a:a + 60], "min_len": 4}),
                     ("/v1/explain", {"dataset": name, "query": q, "top": 3}),
                     ("/v1/generate", {"dataset": name, "query": q, "seed": 7, "max": 20}),
                     ("/v1/eval", {"dataset": name, "text": text[a:a + 200]}),
                     ("/v1/mix", {"dataset": name, "query": q, "llm": open(llm).read(), "lambda": 0.3}),
                     ("/v1/search", {"dataset": name, "query": '"%s"' % q.split()[0] if q.split() else '"a"',
                                     "limit": 5})]
        reqs += [("/v1/doc", {"dataset": name, "query": "3"}), ("/v1/count", {"dataset": "nosuch", "query": "a"}),
                 ("/v1/count", {"dataset": name, "query": "a", "positions": -1}),
                 ("/v1/count", {"dataset": name, "ids": [1, 2]}), ("/v1/predict", {"dataset": name, "ids": "3"}),
                 ("/v1/prob", {"dataset": name, "query": "a", "continuation": "b", "interp": 3, "top": 2})]
        bad = []
        for path, body in reqs:
            a, b = post(p1, path, body), post(p2, path, body)
            if a != b:
                bad.append((path, body, a, b))
        check(not bad, "serve over 3 ranks answers as infinigram serve: %d requests, first difference %s" % (
            len(reqs), bad[:1]))
        # /v1/datasets: the whole distributed dataset (its sizes are one machine's), with its parts
        st1, one_ds = get(p1, "/v1/datasets")
        st2, mpi_ds = get(p2, "/v1/datasets")
        a = [d for d in one_ds.get("datasets", []) if d.get("name") == name]
        b = [d for d in mpi_ds.get("datasets", []) if d.get("name") == name]
        check(st1 == st2 == 200 and len(a) == len(b) == 1 and b[0].get("parts") == 3 and
              b[0]["bytes"] == a[0]["bytes"] and b[0]["documents"] == a[0]["documents"] and b[0]["shards"] >= 3 and
              "parts" not in a[0], "/v1/datasets over 3 ranks lists the whole dataset: %s against %s" % (b, a))
        st, out = post(p2, "/v1/dups", {"dataset": name})
        check(st == 400 and "dups is not distributed yet" in out.get("error", {}).get("message", ""),
              "serve refuses an operation not distributed: %s %s" % (st, out))
        st, out = post(p2, "/v1/completions", {"model": name, "prompt": "the"})
        check(st == 400 and "not distributed" in out.get("error", {}).get("message", ""),
              "serve refuses completions: %s %s" % (st, out))

        # an unresponsive rank: 503 with the error shape within the timeout, then at once
        pid = rank_pid(home, 2)
        check(pid is not None, "serve: rank 2 found")
        if pid:
            os.kill(pid, signal.SIGSTOP)
        t = time.time()
        st, out = post(p2, "/v1/count", {"dataset": name, "query": "the"})
        took = time.time() - t
        err = out.get("error", {})
        check(st == 503 and err.get("code") == "busy" and "rank 2 (host " in err.get("message", "") and
              set(err) == {"message", "type", "code"} and took < 6,
              "a stopped rank: 503 naming it in %.1f s: %s %s" % (took, st, out))
        t = time.time()
        st, out = post(p2, "/v1/predict", {"dataset": name, "query": "the"})
        check(st == 503 and time.time() - t < 1, "after it, 503 at once: %s %s" % (st, out))
        st, out = post(p2, "/v1/doc", {"dataset": name, "query": "0"})
        check(st == 200 and out.get("doc") == 0, "a request rank 0 answers alone is still served: %s %s" % (st, out))
        if pid:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
        t = time.time()
        try:
            _, err = job.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()
            _, err = job.communicate()
        took = time.time() - t
        check(job.returncode != 0 and took < 10, "serve: a killed rank ends the job in %.1f s (rc %s)" % (
            took, job.returncode))
        check("rank 2" in err and "infinigram-mpi:" in err, "serve: the messages name rank 2: %s" % err[-600:])
    finally:
        for p in (ref, job):
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    global WORK
    tmp = WORK = tempfile.mkdtemp(prefix="ig-mpi-")
    try:
        # ---- identical answers
        for seed, n in ((1, 300), (2, 41), (3, 1000)):
            path = os.path.join(tmp, "r%d.txt" % seed)
            text = words_corpus(seed, n)
            open(path, "w", encoding="utf-8").write(text)
            qs = queries(text, seed, n, path)
            for np in (3, 1):
                compare(tmp, "r%d" % seed, path, "lines", np, qs)
            if seed == 2:  # every message cut into pieces of 40 bytes (what a message over 2 GiB goes as), and
                # an evaluation sent in slices of 97 positions (what a text over a million bytes is)
                compare(tmp, "r%d" % seed, path, "lines", 3, qs, tag="-pieces",
                        env=dict(ENV, INFINIGRAM_MPI_PIECE="40", INFINIGRAM_MPI_EVAL_SLICE="97"))
        # a directory of files, one document each (text format): documents by name
        d = os.path.join(tmp, "files")
        os.mkdir(d)
        texts = []
        for i in range(7):
            t = words_corpus(20 + i, 3 + i)
            open(os.path.join(d, "f%d.txt" % i), "w", encoding="utf-8").write(t)
            texts.append(t)
        qs = queries("".join(texts), 4, 7, d) + ["doc f%d.txt" % i for i in range(7)] + ["doc %s/f5.txt" % d]
        compare(tmp, "files", d, "text", 3, qs)
        text = open(TEXT, encoding="utf-8").read()
        ndocs = sum(1 for line in text.split("\n") if line.strip())
        qs = queries(text, 7, ndocs, TEXT) + ['count "the LORD"', 'count --positions 40 "wherefore art thou"']
        # the shell's tokenizer: the same escapes, the same refusals, the same texts
        qs += ['count "x"x', 'count "\\u00e9"', 'count "caf\\é"', 'count "é" é', 'count -- --positions',
               'count "Ro\\x6deo"', 'count Romeo  and', 'predict "x"x', 'count "unterminated',
               'search ("Romeo" OR "Juliet") AND "love"', 'search "Romeo"AND"Juliet"',
               'generate --seed 5 --max 40 "the "', 'spans --last --min-len 6', 'spans --last "x"',
               'explain --last --step 2', 'search -- Romeo', 'search "--limit" 1 Romeo', 'search Romeo -- --limit']
        home = compare(tmp, "shakespeare", TEXT, "lines", 3, qs)

        # ---- :help: the command list, and a command's options from the field table the shell uses
        p = mpirun(1, os.path.join(tmp, "help"), ":help", ":help count", ":help predict", ":help nosuch")
        out = jl(p.stdout)
        check(len(out) == 4 and "count [--positions K]" in out[0].get("text", ""), f":help: {p.stdout[:300]}")
        opts = {o["option"] for o in out[1].get("options", [])} if len(out) > 1 else set()
        check({"--positions", "--width", "query"} <= opts and "1 round trip" in out[1].get("usage", ""),
              f":help count: {out[1:2]}")
        opts = {o["option"] for o in out[2].get("options", [])} if len(out) > 2 else set()
        check({"--top", "--interp", "--n"} <= opts, f":help predict: {sorted(opts)}")
        check(len(out) == 4 and "no help for nosuch" in out[3].get("error", {}).get("message", ""),
              f":help nosuch: {out[3:]}")

        # ---- ranks sharing one home (no %r) are refused before anything is written there
        shared = os.path.join(tmp, "shared-home")
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", MPIBIN, "--home", shared, "-c",
                            ":dataset add ts %s --format lines" % TEXT, "-c", "build ts"],
                           capture_output=True, text=True, env=ENV, timeout=120)
        out = jl(p.stdout)
        check(len(out) == 2 and all("shares its home" in o.get("error", {}).get("message", "") for o in out)
              and not os.listdir(os.path.join(shared, "indexes")) if os.path.isdir(os.path.join(shared, "indexes"))
              else len(out) == 2 and all("shares its home" in o.get("error", {}).get("message", "") for o in out),
              f"a shared home: {out} {p.stderr[-300:]}")

        # ---- ranks of another build (simulated: the build id patched in a copy) are refused at start
        ver = subprocess.run(["mpirun", "-np", "1", MPIBIN, "--version"], capture_output=True, text=True, env=ENV,
                             timeout=60).stdout.split()[-1].encode()
        blob = open(MPIBIN, "rb").read()
        other = os.path.join(tmp, "infinigram-mpi-other")
        with open(other, "wb") as f:
            f.write(blob.replace(b"\0" + ver + b"\0", b"\0" + bytes(reversed(ver)) + b"\0"))
        os.chmod(other, 0o755)
        check(bytes(reversed(ver)) != ver and blob.count(b"\0" + ver + b"\0") >= 1, f"build id {ver!r} in the binary")
        p = subprocess.run(["mpirun", "--oversubscribe", "-np", "1", MPIBIN, "--home", os.path.join(tmp, "mixed%r"),
                            "-c", ":help", ":", "-np", "1", other, "--home", os.path.join(tmp, "mixed%r")],
                           capture_output=True, text=True, env=ENV, timeout=120)
        check(p.returncode != 0 and "run the same build on every rank" in p.stderr and not p.stdout.strip(),
              f"mixed builds: {p.returncode} {p.stdout[:200]} {p.stderr[-300:]}")

        # ---- a load refused keeps the dataset loaded, as the shell does
        p = mpirun(3, home, "load shakespeare", "load nope", 'count "the"')
        out = jl(p.stdout)
        check(len(out) == 3 and "error" in out[1] and out[2].get("count", 0) > 0, f"a refused load: {out}")

        # ---- serve under mpirun
        llm = os.path.join(tmp, "llm-7.json")
        serve_checks(tmp, home, os.path.join(tmp, "one-shakespeare"), "shakespeare", text, llm)

        # ---- the program's own options and commands: mistakes named, as the shell names them
        for opt in (["--timeout", "0"], ["--timeout", "abc"], ["--build-timeout", "nan"], ["--home="]):
            p = subprocess.run(["mpirun", "--oversubscribe", "-np", "1", MPIBIN] + opt + ["-c", "load x"],
                               capture_output=True, text=True, env=ENV, timeout=60)
            check(p.returncode != 0 and opt[0].split("=")[0] + ":" in p.stderr, f"{opt}: {p.returncode} {p.stderr[:200]}")
        p = mpirun(3, home, "load shakespeare", "build nosuch", "count the", "build shakespeare --jobs=abc",
                   "build shakespeare --no-such-option", ":dataset add e /tmp/x --format", 'load "shakespeare\\x00x"',
                   "build shakespeare extra")
        out = jl(p.stdout)
        check(len(out) == 8 and "unexpected argument" in out[7].get("error", {}).get("message", ""),
              "build with a word too many: %s" % out[7:])
        check(len(out) == 8 and "count" in out[2] and "error" not in out[2],
              "a failed build leaves the loaded dataset in force: %s" % out[:3])
        check(len(out) == 8 and "--jobs: not an integer" in out[3].get("error", {}).get("message", "") and
              "unknown option --no-such-option" in out[4].get("error", {}).get("message", "") and
              "option --format needs a value" in out[5].get("error", {}).get("message", "") and
              "NUL byte" in out[6].get("error", {}).get("message", ""), "own commands' mistakes: %s" % out[3:])

        # ---- a command not distributed yet
        p = mpirun(3, home, "load shakespeare", "prob --ids 1 --next-ids 2", "explain --ids 1,2",
                   "spans --words the lord", "dups")
        out = jl(p.stdout)
        check(len(out) == 5 and "dups is not distributed yet" in out[4].get("error", {}).get("message", ""),
              "dups refused with its name: %s" % out)
        check(len(out) == 5 and "--ids needs a token dataset" in out[1].get("error", {}).get("message", ""),
              "prob --ids refused as on a byte dataset: %s" % out)
        check(len(out) == 5 and "--ids needs a token dataset" in out[2].get("error", {}).get("message", ""),
              "explain --ids refused as on a byte dataset: %s" % out)
        check(len(out) == 5 and "error" not in out[3], "spans --words answered: %s" % out)

        # ---- a build failing on one rank: every rank keeps its previous index
        path = os.path.join(tmp, "two.txt")
        open(path, "w").write(words_corpus(5, 60))
        home = os.path.join(tmp, "vote")
        p = mpirun(3, home, ":dataset add two %s --format lines" % path, "build two --jobs 1", "load two",
                   "count the")
        before = jl(p.stdout)
        check(len(before) == 4 and "count" in before[3], "first build of two: %s %s" % (before, p.stderr[-500:]))
        dirs = [index_dirs(home, r) for r in range(3)]
        open(path, "w").write("one document of some length\nanother one, about as long\n")
        p = mpirun(3, home, "build two --jobs 1", "load two", "count the")
        out = jl(p.stdout)
        err = out[0].get("error", {}).get("message", "") if out else ""
        check(p.returncode != 0 and "rank 2" in err and "holds no document" in err,
              "a build failing on rank 2 names it: %s" % out)
        check(len(out) == 3 and out[2] == before[3], "after the failed build every rank answers as before: %s" % out)
        check([index_dirs(home, r) for r in range(3)] == dirs, "no directory left by the failed build")

        # ---- a missing part
        rec = os.path.join(tmp, "np3-r1")
        gone = [x for x in index_dirs(rec, 2)]
        check(len(gone) == 1, "rank 2 has one index: %s" % gone)
        moved = os.path.join(tmp, "moved")
        shutil.move(os.path.join(rec, "h2", "indexes", gone[0]), moved)
        p = mpirun(3, rec, "load r1", "count the")
        out = jl(p.stdout)
        msg = out[0].get("error", {}).get("message", "") if out else ""
        check("rank 2 (host " in msg and gone[0] in msg, "a missing part names rank, host and path: %s" % out)
        check(len(out) == 2 and "no dataset loaded" in out[1].get("error", {}).get("message", ""),
              "no answer from the parts left: %s" % out)
        shutil.move(moved, os.path.join(rec, "h2", "indexes", gone[0]))

        # ---- a corrupt part: rank 1's suffix array cut short
        part1 = index_dirs(rec, 1)[0]
        sa = os.path.join(rec, "h1", "indexes", part1, "shard-0000", "sa")
        keep = open(sa, "rb").read()
        open(sa, "wb").write(keep[: len(keep) // 2])
        p = mpirun(3, rec, "load r1", "count the")
        out = jl(p.stdout)
        msg = out[0].get("error", {}).get("message", "") if out else ""
        check("rank 1 (host " in msg and part1 in msg and out[0]["error"].get("code") == "corrupt",
              "a corrupt part names rank, host and path: %s" % out)
        check(len(out) == 2 and "no dataset loaded" in out[1].get("error", {}).get("message", ""),
              "no answer from a corrupt part: %s" % out)
        open(sa, "wb").write(keep)

        # ---- a rank killed mid-query
        args = ["mpirun", "--oversubscribe", "-np", "3", MPIBIN, "--home", rec + "/h%r", "-d", "r1", "-f", "-"]
        job = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               errors="replace", env=ENV)  # Open MPI's shutdown output is not always UTF-8
        job.stdin.write("count the\n")
        job.stdin.flush()
        first = job.stdout.readline()
        check('"load"' in first, "the job loads: %s" % first)
        first = job.stdout.readline()
        pid = rank_pid(rec, 2)
        check(pid is not None, "rank 2 found")
        if pid:
            os.kill(pid, signal.SIGKILL)
        t = time.time()
        try:
            job.stdin.write("count the\n")
            job.stdin.flush()
        except BrokenPipeError:
            pass
        try:
            out, err = job.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()
            out, err = job.communicate()
        took = time.time() - t
        check(job.returncode != 0 and took < 10, "mid-query kill: mpirun exits non-zero in %.1f s (rc %s)" % (
            took, job.returncode))
        # Whoever notices first names the rank: our message when the next query reached rank 0 before
        # mpirun ended the job, else mpirun's own ("process rank 2 ... exited on signal 9").
        check(("rank 2 (host " in err and "infinigram-mpi:" in err) or re.search(r"rank 2\b.*signal 9", err, re.S),
              "mid-query kill: the message names rank 2: %s" % err)
        check(out.count('"count"') <= 1, "no answer after the kill: %s" % out)

        # ---- a rank killed mid-build
        big = os.path.join(tmp, "big.txt")
        open(big, "w", encoding="utf-8").write(words_corpus(9, 120000))
        home = os.path.join(tmp, "killbuild")
        p = mpirun(3, home, ":dataset add big %s --format lines" % big, "build big --jobs 1", "load big", "count the")
        before = jl(p.stdout)
        check(len(before) == 4 and "count" in before[3], "first build of big: %s" % p.stderr[-500:])
        dirs = [index_dirs(home, r) for r in range(3)]
        args = ["mpirun", "--oversubscribe", "-np", "3", MPIBIN, "--home", home + "/h%r", "-c", "build big --jobs 1"]
        job = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        pid, deadline = None, time.time() + 60
        while time.time() < deadline and job.poll() is None:  # rank 2 is building: its new directory exists
            if len(index_dirs(home, 2)) > len(dirs[2]):
                pid = rank_pid(home, 2)
                break
            time.sleep(0.01)
        check(pid is not None, "rank 2 seen building")
        if pid:
            os.kill(pid, signal.SIGKILL)
        t = time.time()
        try:
            out, err = job.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()
            out, err = job.communicate()
        took = time.time() - t
        check(job.returncode != 0 and took < 10, "mid-build kill: mpirun exits non-zero in %.1f s" % took)
        # As mid-query: whoever notices first names the rank (under load mpirun may end the job
        # before rank 0's deadline passes, and then only its own message is printed).
        check(("infinigram-mpi:" in err and "rank" in err) or re.search(r"rank 2\b.*signal 9", err, re.S),
              "mid-build kill: the message names rank 2: %s" % err[-800:])
        p = mpirun(3, home, "load big", "count the")
        out = jl(p.stdout)
        check(len(out) == 2 and out[1] == before[3], "after the killed build every rank answers as before: %s" % out)
        check([index_dirs(home, r) for r in range(3)] == dirs, "the half-written part is gone after the next start")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
