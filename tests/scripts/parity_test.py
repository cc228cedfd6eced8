#!/usr/bin/env python3
"""CLI and HTTP give identical results: every operation, a set of requests each run
through `infinigram --json -c` and through the server on the same home, with saved
settings present (which neither scripts nor the server apply unless asked), compared as
JSON minus the shell's "command" key. Then the same with --saved-settings on both."""
import json
import os
import shlex
import subprocess
import sys
import tempfile

BIN, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
from igtest import call, check, free_port, start_server, summary



def q(s):
    """A shell-syntax quoted word for text s."""
    out = '"'
    for ch in s:
        if ch == '"' or ch == '\\':
            out += '\\' + ch
        elif ch == '\n':
            out += '\\n'
        elif ch == '\t':
            out += '\\t'
        elif ord(ch) < 0x20:
            out += '\\x%02x' % ord(ch)
        else:
            out += ch
    return out + '"'


# (endpoint, request body, command line): the same request in both spellings
CASES = [
    ("count", {"query": "the"}, 'count "the"'),
    ("count", {"query": "Romeo", "positions": 3}, 'count --positions 3 "Romeo"'),
    ("count", {"query": "Romeo", "positions": 2, "width": 5}, 'count --positions=2 --width 5 "Romeo"'),
    ("count", {"query": "the\u0000 x"}, 'count "the\\x00 x"'),
    ("count", {"query": ""}, 'count ""'),
    ("predict", {"query": "wherefore art th"}, 'predict "wherefore art th"'),
    ("predict", {"query": "What say", "interp": 2, "top": 3}, 'predict --interp 2 --top 3 "What say"'),
    ("predict", {"query": "What say", "n": 3, "bytes": True}, 'predict --n 3 --bytes "What say"'),
    ("predict", {"query": "What say", "weighted": "linear", "max_context": 5}, 'predict --weighted linear --max-context 5 "What say"'),
    ("prob", {"query": "wherefore art ", "continuation": "thou"}, 'prob "wherefore art " "thou"'),
    ("prob", {"query": "the ", "continuation": "king", "interp": 3}, 'prob --interp 3 "the " "king"'),
    ("backoff", {"query": "O Romeo, Romeo! wherefore"}, 'backoff "O Romeo, Romeo! wherefore"'),
    ("backoff", {"query": "the kin", "factor": 0.5, "threshold": 2}, 'backoff --factor 0.5 --threshold 2 "the kin"'),
    ("eval", {"text": "O Romeo, Romeo! wherefore art thou Romeo?", "threads": 1},
     'eval --threads 1 --text "O Romeo, Romeo! wherefore art thou Romeo?"'),
    ("eval", {"text": "the king is dead", "interp": 2, "sbi": True, "threads": 1, "max_context": 20},
     'eval --interp 2 --sbi --threads 1 --max-context 20 --text "the king is dead"'),
    ("explain", {"query": "ROMEO:"}, 'explain "ROMEO:"'),
    ("explain", {"query": "wherefore art", "top": 2, "positions": 1}, 'explain --top 2 --positions 1 "wherefore art"'),
    ("spans", {"query": "O Romeo, Romeo! wherefore art thou Romeo? Deny thy father", "min_len": 10},
     'spans --min-len 10 "O Romeo, Romeo! wherefore art thou Romeo? Deny thy father"'),
    ("dups", {"min_len": 60, "top": 2, "positions": 2}, 'dups --min-len 60 --top 2 --positions 2'),
    ("dups", {"min_len": 40, "top": 1, "within_doc": True}, 'dups --min-len 40 --top 1 --within-doc'),
    ("search", {"query": '"Romeo" AND ("Juliet" OR "Tybalt")'}, 'search "Romeo" AND ("Juliet" OR "Tybalt")'),
    ("search", {"query": '"Romeo" AND "Juliet"', "within": 50, "limit": 2}, 'search --within=50 --limit 2 "Romeo" AND "Juliet"'),
    ("doc", {"query": 0, "lines": "2:4"}, 'doc 0 --lines 2:4'),
    ("doc", {"query": "0", "range": "10:40"}, 'doc 0 --range 10:40'),
    ("generate", {"query": "ROMEO:", "max": 40, "seed": 7}, 'generate --max 40 --seed 7 "ROMEO:"'),
    ("generate", {"query": "JULIET:", "max": 30, "seed": 3, "temperature": 0.5, "top_k": 5, "stop": ["\n"]},
     'generate --max 30 --seed 3 --temperature 0.5 --top-k 5 --stop "\\n" "JULIET:"'),
    ("mix", {"query": "wherefore art", "llm": [{"token": " thou", "logprob": -1.0}, {"token": " you", "logprob": -0.5}],
             "lambda": 0.3},
     'mix "wherefore art" --lambda 0.3 --llm ' + q(json.dumps([{"token": " thou", "logprob": -1.0},
                                                               {"token": " you", "logprob": -0.5}]))),
]


def norm(o):
    o = dict(o)
    o.pop("command", None)
    o.pop("elapsed_ms", None)
    return o


def run(home, port, extra):
    env = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    srv = start_server([BIN, "--home", home] + extra + ["serve", "--port", str(port), "--threads", "2"], port,
                       stderr=subprocess.DEVNULL, env=env)
    try:
        for ep, body, line in CASES:
            st, b, _ = call(port, "/v1/" + ep, dict(body, dataset="shakespeare"), timeout=60)
            p = subprocess.run([BIN, "--home", home, "-d", "shakespeare", "--json"] + extra + ["-c", line],
                               capture_output=True, text=True, env=env)
            try:
                cli = norm(json.loads(p.stdout.strip().splitlines()[-1]))
                http = norm(json.loads(b))
            except Exception as e:
                check(False, f"{ep} {extra}: unreadable output ({e}): cli={p.stdout[:200]!r} {p.stderr[:200]!r} "
                             f"http={st} {b[:200]}")
                continue
            check(st == 200 and p.returncode == 0, f"{ep} {extra}: status {st}/{p.returncode} {b[:200]} {p.stderr[:200]}")
            check(cli == http, f"{ep} {extra} {line}: CLI and HTTP differ:\n  cli  {json.dumps(cli)[:400]}\n"
                               f"  http {json.dumps(http)[:400]}")
    finally:
        srv.terminate()
        srv.wait(timeout=10)


with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    env = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add shakespeare {DATA}", "-c", "build shakespeare",
                        "-c", ":set width 3", "-c", ":set max-context 3"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, "setup: " + p.stderr)
    run(home, free_port(), [])
    run(home, free_port(), ["--saved-settings"])
    # the OpenAI endpoints follow the same settings as the engine's: with max-context 3 saved
    # and --saved-settings, a completion is the generation of the same seed
    for flags in ([], ["--saved-settings"]):
        port = free_port()
        srv = start_server([BIN, "--home", home] + flags + ["serve", "--port", str(port)], port,
                           stderr=subprocess.DEVNULL, env=env)
        try:
            # the reference names the defaults this server applies (width 3 saved)
            st, b, _ = call(port, "/v1")
            eps = {e["path"]: {f["name"]: f for f in e["fields"]} for e in json.loads(b)["endpoints"]} if st == 200 else {}
            want = "3" if flags else "30"
            got = eps.get("/v1/count", {}).get("width", {}).get("default")
            check(got == want, f"{flags}: GET /v1 gives count's width default {got!r}, the server applies {want!r}")
            st, b, _ = call(port, "/v1/generate", {"query": "ROMEO:", "max": 40, "seed": 5})
            st2, b2, _ = call(port, "/v1/completions", {"model": "shakespeare", "prompt": "ROMEO:", "max_tokens": 40,
                                                        "seed": 5})
            gen, comp = json.loads(b).get("text"), json.loads(b2)["choices"][0]["text"] if st2 == 200 else None
            check(st == 200 and st2 == 200 and gen == comp, f"{flags}: generate {gen!r} vs completion {comp!r}")
        finally:
            srv.terminate()
            srv.wait(timeout=10)
    # serve typed at an interactive prompt (a terminal: the session holds the saved width 3) starts
    # from the defaults as every server does; a :set of the session applies, as in a script
    import pty
    import select
    import time
    for typed, want in (([], 30), ([":set width 9"], 9)):
        port = free_port()
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(BIN, [BIN, "--home", home, "-d", "shakespeare"], env)
        def prompt(seen=b""):  # the terminal's output up to the next prompt (readline reads a line only then)
            t = time.monotonic() + 20
            while not seen.rstrip().endswith(b">") and time.monotonic() < t:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        seen += os.read(fd, 65536)
                    except OSError:
                        break
            return seen
        try:
            for line in typed + [f"serve --port {port}"]:
                prompt()
                os.write(fd, (line + "\n").encode())
            body = None
            for _ in range(100):
                while select.select([fd], [], [], 0)[0]:
                    try:
                        os.read(fd, 65536)
                    except OSError:
                        break
                try:
                    st, body, _ = call(port, "/v1/count", {"dataset": "shakespeare", "query": "ROMEO:", "positions": 1})
                    break
                except OSError:
                    time.sleep(0.1)
            got = json.loads(body)["positions"][0]["snippet"] if body else None
            p = subprocess.run([BIN, "--home", home, "-d", "shakespeare", "--json", "-c",
                                f'count --positions 1 --width {want} "ROMEO:"'], capture_output=True, text=True, env=env)
            wanted = json.loads(p.stdout.strip().splitlines()[-1])["positions"][0]["snippet"]
            check(got == wanted, f"serve from a terminal after {typed}: width {want} wanted: {got!r} != {wanted!r}")
        finally:
            os.kill(pid, 15)  # stops the server; the shell then leaves with the terminal
            for _ in range(50):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            os.close(fd)
    # a seed past 2^63 is reported with its exact digits (2^63 and 2^63 + 1 give different texts)
    p = subprocess.run([BIN, "--home", home, "-d", "shakespeare", "--json", "-c",
                        'generate --max 20 --seed 9223372036854775809 "ROMEO:"'], capture_output=True, text=True, env=env)
    check('"seed":9223372036854775809,' in p.stdout, f"a seed past 2^63: {p.stdout[:300]}")
    # a generation without --seed reports the seed it drew, exactly (drawn below 2^53, where
    # every JSON reader holds an integer exactly): given back, it gives the same text
    for attempt in range(4):
        p = subprocess.run([BIN, "--home", home, "-d", "shakespeare", "--json", "-c", 'generate --max 40 "ROMEO:"'],
                           capture_output=True, text=True, env=env)
        first = json.loads(p.stdout.strip().splitlines()[-1])
        seed = p.stdout.split('"seed":')[1].split(",")[0].split("}")[0]
        check(seed.isdigit() and int(seed) < 2**53, f"the seed is written as its digits, below 2^53: {seed!r}")
        p = subprocess.run([BIN, "--home", home, "-d", "shakespeare", "--json", "-c",
                            f'generate --max 40 --seed {seed} "ROMEO:"'], capture_output=True, text=True, env=env)
        again = json.loads(p.stdout.strip().splitlines()[-1])
        check(again["text"] == first["text"], f"seed {seed} given back: {again['text']!r} != {first['text']!r}")
sys.exit(summary())
