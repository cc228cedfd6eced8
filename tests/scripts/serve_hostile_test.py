#!/usr/bin/env python3
"""The server as a hostile client meets it: paths and FIFOs where inline JSON is expected,
unknown and injected keys, strings with NUL, bad escapes and lone surrogates, every
numeric field of every endpoint (read from the server's own reference at GET /v1) out of
range or of the wrong type, bodies of many terms, and a slow request beside quick ones.
Each must be a 400 naming the field (or an exact answer for NUL), within a second, with
the server answering other clients meanwhile."""
import contextlib
import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BIN = os.path.abspath(sys.argv[1])
# a binary built with AddressSanitizer or ThreadSanitizer (its timings are not the program's)
SANITIZED = any(x in subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout for x in ("libasan", "libtsan"))
from igtest import call, check, free_port, start_server, summary



@contextlib.contextmanager
def serving(home, env, *args):
    """A server on `home` started with `serve --port P *args`, yielding (P, process); stopped
    after unless the block stopped it."""
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), *args], port,
                       stderr=subprocess.DEVNULL, env=env)
    try:
        yield port, srv
    finally:
        if srv.poll() is None:
            srv.terminate()
            srv.wait(timeout=10)


def bad(port, path, body, field, what, raw=None):
    st, b, dt = call(port, path, body, raw=raw)
    try:
        msg = json.loads(b)["error"]["message"]
    except Exception:
        msg = None
    check(st == 400 and msg is not None and f'"{field}"' in msg and dt < 1.0,
          f"{what}: {path} {str(body)[:120]} -> {st} in {dt:.2f}s {b[:200]}")


with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    src = os.path.join(tmp, "notes.txt")
    with open(src, "wb") as f:
        f.write(b"the cat sat on the mat.\nthe dog\x00sat on the log.\nthe\x00 king\n")
    env = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add notes {src}", "-c", "build notes"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, "setup: " + p.stderr)
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--threads", "4", "--timeout", "5"], port,
                       stderr=subprocess.DEVNULL, env=env)
    try:
        # NUL is text: "\u0000" is a NUL byte of the query, counted exactly
        st, b, _ = call(port, "/v1/count", {"query": "the\u0000 king"})
        check(st == 200 and json.loads(b)["count"] == 1 and json.loads(b)["query_hex"] == "74686500206b696e67",
              f"NUL query: {b}")
        st, b, _ = call(port, "/v1/count", {"query": "dog\u0000sat"})
        check(st == 200 and json.loads(b)["count"] == 1, f"NUL inside: {b}")
        st, b, _ = call(port, "/v1/count", {"query": "the"})
        check(st == 200 and json.loads(b)["count"] == 5, f"plain count: {b}")
        # DNS rebinding (a foreign Host on a loopback server) and cross-site posts (a foreign
        # Origin) are refused; the server's own origin and clients that send none are not
        for hdrs, want in (({"Host": "evil.example.com"}, 403), ({"Host": f"evil.example.com:{port}"}, 403),
                           ({"Origin": "http://evil.example.com"}, 403), ({"Origin": "null"}, 403),
                           ({"Origin": f"http://127.0.0.1:{port}"}, 200), ({"Host": f"localhost:{port}"}, 200),
                           ({}, 200)):
            st, b, _ = call(port, "/v1/count", {"query": "the"}, headers=hdrs)
            check(st == want and (want == 200 or json.loads(b)["error"]["code"] == "forbidden"),
                  f"headers {hdrs}: {st} {b[:160]}")
        # integers are exact past 2^53 (a seed the shell takes gives the same text here); a size
        # may be spelled as the shell spells it; the seed meaning "none" cannot be given
        st, b, _ = call(port, "/v1/generate", {"query": "the", "max": 5, "seed": 9007199254740993})
        check(st == 200 and json.loads(b)["seed"] == 9007199254740993, f"seed past 2^53: {st} {b[:200]}")
        bad(port, "/v1/generate", {"query": "the", "max": 5, "seed": 18446744073709551615}, "seed", "seed 2^64-1")
        # every step is kept: the bound on max is one of memory (1e8 held 9 GB)
        bad(port, "/v1/generate", {"query": "the", "max": 10000001}, "max", "max past 10 M characters")
        # the memory a dups walk may take is the server's to give (a client asked for 9.2e18)
        bad(port, "/v1/dups", {"min_len": 20, "memory": 9000000000000000000}, "memory", "a client's memory budget")
        st, b, _ = call(port, "/v1/dups", {"min_len": 8, "threads": 64})  # as many threads as cores, at most
        check(st == 200 and ("duplicated_bytes" in b or "repeats" in b), f"dups with threads 64: {st} {b[:200]}")
        bad(port, "/v1/dups", {"memory": "lots"}, "memory", "a size that is not one")
        # generation with nothing to continue from (an empty prompt under interpolation) says so
        bad(port, "/v1/generate", {"query": "", "max": 5, "seed": 1}, "query", "an empty prompt under interpolation")
        # the completions say the same before anything is generated or streamed; the ∞-gram
        # always continues; no characters asked, nothing to refuse
        bad(port, "/v1/completions", {"model": "notes", "prompt": "", "max_tokens": 5}, "prompt",
            "a completion of an empty prompt under interpolation")
        bad(port, "/v1/completions", {"model": "notes", "max_tokens": 5, "stream": True}, "prompt",
            "a streamed completion of no prompt under interpolation")
        bad(port, "/v1/completions", {"model": "notes", "prompt": ["the", ""], "max_tokens": 5}, "prompt[1]",
            "the empty one of two prompts")
        bad(port, "/v1/completions", {"model": "notes", "prompt": "", "max_tokens": 5, "interp": -1}, "prompt",
            "an empty prompt under interpolation of every level")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "", "max_tokens": 5, "interp": 0,
                                                  "seed": 1})
        check(st == 200 and len(json.loads(b)["choices"][0]["text"]) == 5, f"the ∞-gram after an empty prompt: {st} {b}")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "", "max_tokens": 0})
        check(st == 200 and json.loads(b)["choices"][0]["text"] == "", f"no characters asked: {st} {b}")
        # log-probabilities are held whole until the answer is written: a request that would
        # hold gigabytes of them is refused at once (a stream, which holds none, is not)
        bad(port, "/v1/completions", {"model": "notes", "prompt": ["the"] * 64, "max_tokens": 100000, "logprobs": 20},
            "logprobs", "64 prompts of 100,000 characters with 20 alternatives each")
        bad(port, "/v1/chat/completions", {"model": "notes", "messages": [{"role": "user", "content": "the"}],
                                           "n": 16, "max_tokens": 100000, "logprobs": True, "top_logprobs": 20},
            "top_logprobs", "16 chat choices of 100,000 characters with 20 alternatives each")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "the", "max_tokens": 3, "logprobs": 20,
                                                  "n": 16, "seed": 1})
        check(st == 200 and len(json.loads(b)["choices"]) == 16, f"a small request with logprobs: {st} {b[:200]}")
        # a NUL in a dataset's name: never a name, and never cut to one that is
        bad(port, "/v1/count", {"dataset": "notes\u0000junk", "query": "the"}, "dataset", "NUL in a dataset name")
        bad(port, "/v1/contam", {"dataset": "notes", "eval_dataset": "notes\u0000x", "n": 2}, "eval_dataset",
            "NUL in eval_dataset")
        bad(port, "/v1/completions", {"model": "notes\u0000x", "prompt": "the", "max_tokens": 2}, "model",
            "NUL in a model name")
        # bad escapes and lone surrogates name the field
        bad(port, "/v1/count", None, "query", "invalid escape", raw=b'{"query":"abc\\uZZZZdef"}')
        bad(port, "/v1/count", None, "query", "lone surrogate", raw=b'{"query":"abc\\ud800"}')
        bad(port, "/v1/count", None, "query", "lone low surrogate", raw=b'{"query":"abc\\udc00 x"}')
        bad(port, "/v1/count", None, "query", "bad escape letter", raw=b'{"query":"a\\qb"}')
        # a key JSON refuses (a NUL, a lone surrogate) is said to be one, not blamed on the member before
        for raw in (b'{"dataset":"notes","query":"a","x\\u0000y":1}', b'{"dataset":"notes","positions":1,"w\\ud800":1}'):
            st, b, _ = call(port, "/v1/count", raw=raw)
            m = json.loads(b)["error"]["message"]
            check(st == 400 and "in a key" in m and '"query"' not in m and '"positions"' not in m,
                  f"a bad key: {raw}: {st} {b}")
        # an integer past 2^63 cannot be held exactly: refused by name, saying so (not "out of range")
        st, b, _ = call(port, "/v1/generate", raw=b'{"dataset":"notes","query":"a","max":5,"seed":9223372036854775808}')
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and '"seed"' in m and "cannot be read exactly" in m and "out of range" not in m, f"seed 2^63: {st} {m}")
        # a body of values that would take many times its size to read is refused before it is read
        t0 = time.monotonic()
        st, b, _ = call(port, "/v1/count", raw=b'{"dataset":"notes","queries":[' + b",".join([b"{}"] * 300000) + b"]}")
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and "too many values" in m and time.monotonic() - t0 < 5, f"300,000 empty objects: {st} {m}")
        # candidates given as a JSON string are bounded the same way, by name
        st, b, _ = call(port, "/v1/mix", {"dataset": "notes", "query": "a", "llm": "[" + ",".join(["{}"] * 300000) + "]"})
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and '"llm"' in m and "too many values" in m and "not valid JSON" not in m,
              f"candidates of 300,000 empty objects: {st} {m}")
        # an element of a list of strings that is not one is named as such
        st, b, _ = call(port, "/v1/generate", {"dataset": "notes", "query": "a", "max": 5, "stop": ["a", 1]})
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and '"stop[1]": expected a string, not an integer' in m, f"stop [a, 1]: {st} {m}")
        # a text part of a chat message with a key of no text part is refused by name
        st, b, _ = call(port, "/v1/chat/completions", {"model": "notes", "max_tokens": 2, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a", "extra": 1}]}]})
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and '"messages[0].content[0].extra"' in m, f"content part key: {st} {m}")
        # a doc range starting past 2^64 is refused quoting what was given
        st, b, _ = call(port, "/v1/doc", {"dataset": "notes", "query": "0", "range": "99999999999999999999:"})
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and "99999999999999999999" in m and "18446744073709551615" not in m, f"doc range: {st} {m}")
        # out of range is said so before a number is found inexact
        st, b, _ = call(port, "/v1/generate", {"dataset": "notes", "query": "a", "max": 5, "top_k": -1e20})
        m = json.loads(b)["error"]["message"] if st == 400 else b
        check(st == 400 and '"top_k"' in m and "out of range" in m, f"top_k -1e20: {st} {m}")
        # messages about fields speak JSON's words, not the shell's placeholders
        for path, body in (("/v1/spans", {"dataset": "notes"}), ("/v1/predict", {"dataset": "notes", "query": "a", "sbi": True}),
                           ("/v1/predict", {"dataset": "notes", "query": "a", "max_len": 4})):
            st, b, _ = call(port, path, body)
            m = json.loads(b)["error"]["message"]
            check(st == 400 and '"' in m and "TEXT" not in m and " K" not in m and " FN" not in m and "--" not in m,
                  f"{path} {body}: {st} {m}")
        # a key given twice is named, not the key read before it
        st, b, _ = call(port, "/v1/count", raw=b'{"query":"a","top":1,"query":"b"}')
        m = json.loads(b)["error"]["message"]
        check(st == 400 and '"query": given twice' in m and '"top"' not in m, f"a duplicate key: {st} {b}")
        longkey = "k" * 70
        st, b, _ = call(port, "/v1/count", raw=('{"query":"a","%s":1,"%s":2}' % (longkey, longkey)).encode())
        m = json.loads(b)["error"]["message"]
        check(st == 400 and "duplicate" in m and '"query"' not in m, f"a long duplicate key: {st} {b}")
        odd = "a" * 63 + "\u00e9"
        bad(port, "/v1/chat/completions", {"model": "notes", "messages": [{"role": "user", "content": "x", odd: 1}],
                                           "max_tokens": 2}, "messages[0]." + "a" * 63, "a long unknown message key")
        # a %00 in the path does not end it
        st, b, _ = call(port, "/v1/health%00.html")
        check(st == 404 and "%00" in b, f"%00 in the path: {st} {b}")
        st, b, _ = call(port, "/v1/h%65alth")
        check(st == 200, f"an escaped letter in the path: {st} {b}")
        # a chat message's keys: role and content, OpenAI's others ignored, anything else named
        msg = {"role": "user", "content": "the"}
        bad(port, "/v1/chat/completions", {"model": "notes", "messages": [msg, dict(msg, contents="x")],
                                           "max_tokens": 2}, "messages[1].contents", "a misspelt key of a message")
        st, b, _ = call(port, "/v1/chat/completions", {"model": "notes", "messages": [dict(msg, name="ann")],
                                                       "max_tokens": 2, "seed": 1})
        check(st == 200, f"a message with OpenAI's name: {st} {b}")
        st, b, _ = call(port, "/v1/count", raw=b'{"query":"\xff\xfe"}')
        check(st == 400 and "error" in json.loads(b), f"invalid UTF-8 body: {st} {b}")
        # the one JSON parser: nesting bounded, duplicate keys refused, both with the byte offset
        st, b, _ = call(port, "/v1/count", raw=b'{"query":"the","x":' + b"[" * 70 + b"]" * 70 + b"}")
        check(st == 400 and "nested more than 64 deep (byte 82)" in json.loads(b)["error"]["message"],
              f"deep body: {st} {b[:200]}")
        st, b, _ = call(port, "/v1/count", raw=b'{"query":"the","query":"cat"}')
        check(st == 400 and '"query": given twice' in json.loads(b)["error"]["message"], f"duplicate key: {st} {b[:200]}")
        # unknown and injected keys
        bad(port, "/v1/count", {"query": "the", "width 5 \"zzz\" --positions": 1}, "width 5 \"zzz\" --positions",
            "injected key")
        bad(port, "/v1/count", {"query": "the", "bogus": 1}, "bogus", "unknown key")
        bad(port, "/v1/count", {"query": "the", "--positions": 1}, "--positions", "option spelling as key")
        bad(port, "/v1/completions", {"model": "notes", "prompt": "x", "bogus": 1}, "bogus", "unknown OpenAI key")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "the", "max_tokens": 2, "user": "u",
                                                  "presence_penalty": 0, "logit_bias": {}, "stream_options": None})
        check(st == 200, f"ignored OpenAI parameters: {st} {b[:200]}")
        # paths are never opened: llm must be inline
        for path in ("/etc/shadow", "/proc/self/environ", fifo, "/nonexistent"):
            st, b, dt = call(port, "/v1/mix", {"query": "the", "llm": path}, timeout=5)
            check(st == 400 and dt < 1.0 and "llm" in b and "root:" not in b, f"llm path {path}: {st} {dt:.2f}s {b[:200]}")
        # every numeric field of every endpoint, from the server's own reference
        st, b, _ = call(port, "/v1")
        ref = json.loads(b)
        check(st == 200 and len(ref["endpoints"]) >= 1, f"GET /v1: {st}")
        samples = {"query": "the", "continuation": "cat", "llm": [{"token": " cat", "logprob": -1}], "model": "notes"}
        for ep in ref["endpoints"]:
            base = {}
            for f in ep["fields"]:
                if f.get("required") and f["name"] in samples:
                    base[f["name"]] = samples[f["name"]]
            for f in ep["fields"]:
                name = f["name"]
                if f["type"] in ("integer", "number", "size"):
                    vals = [1e300, -1e300, "NaN", True, [1], {"a": 1}]
                    if f["min"] > -1:
                        vals.append(-1)
                    if f["type"] in ("integer", "size"):
                        vals.append(f["min"] + 0.5)
                    for v in vals:
                        bad(port, ep["path"], dict(base, **{name: v}), name, f"{ep['path']} {name}={v!r}")
                elif f["type"] == "boolean":
                    for v in (1, "true", [True]):
                        bad(port, ep["path"], dict(base, **{name: v}), name, f"{ep['path']} {name}={v!r}")
                elif f["type"].startswith("string"):
                    for v in ([1], {"a": 1}, False):
                        if name == "query" and ep["path"] == "/v1/doc":
                            continue
                        bad(port, ep["path"], dict(base, **{name: v}), name, f"{ep['path']} {name}={v!r}")
        for field, v in (("top_k", -1), ("temperature", 5e6), ("max_tokens", 1e300), ("seed", 1e30),
                         ("logprobs", -3), ("interp", -5), ("n", 0), ("top_p", 0), ("max_tokens", "5")):
            bad(port, "/v1/completions", {"model": "notes", "prompt": "x", field: v}, field, f"completions {field}={v}")
        # a big body of many terms: a clear 400 within a second, others answered meanwhile
        slow = {}

        def big():
            q = " OR ".join(f'"w{i}"' for i in range(60000))
            slow["r"] = call(port, "/v1/search", {"query": f"({q})"}, timeout=10)
        th = threading.Thread(target=big)
        th.start()
        st, b, dt = call(port, "/v1/health")
        check(st == 200 and dt < 1.0, f"health while a big request runs: {st} {dt:.2f}s")
        th.join()
        st, b, dt = slow["r"]
        check(st in (400, 413) and dt < 2.0 and "error" in json.loads(b), f"many terms: {st} {dt:.2f}s {b[:200]}")
        # a small body asking for every occurrence of tens of thousands of spans: memory goes
        # to the occurrences there are (never to the most a field allows), and a request whose
        # spans would hold over a million of them is refused before listing any
        # a sanitizer keeps freed memory in quarantine, shadows every byte and runs slower:
        # looser bounds there
        # (gcc links the sanitizer's runtime as a library, clang into the program)
        libs = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout
        with open(BIN, "rb") as fh:
            linked_in = any(s in fh.read() for s in (b"__asan_init", b"__tsan_init"))
        sanitized = "libasan" in libs or "libtsan" in libs or linked_in
        for rank in ("bm25", "none"):
            st, b, dt = call(port, "/v1/spans", {"query": "e " * 35000, "rank": rank, "min_len": 1,
                                                  "candidates": 100000, "positions": 1000}, timeout=120)
            check(st == 200 and dt < (60.0 if sanitized else 5.0),
                  f"spans of 35,000 words ({rank}): {st} {dt:.2f}s {b[:200]}")
        with open(f"/proc/{srv.pid}/status") as fh:
            hwm = [int(l.split()[1]) for l in fh if l.startswith("VmHWM:")][0]
        bound = 4 << 20 if sanitized else 400 << 10
        check(hwm < bound, f"the server's peak memory stays bounded: {hwm} kB (bound {bound} kB)")
        # every error is JSON, libmicrohttpd's own included
        st, b, _ = call(port, "/v1/count", raw=b"x" * (2 << 20))
        check(st == 413 and "error" in json.loads(b), f"413 is JSON: {st} {b[:100]}")
        for status, req in ((431, b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n"),
                            (414, b"GET /v1/" + b"a" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n"),
                            (400, b"GET /v1/health HTTP/1.1\r\n\r\n"),  # HTTP/1.1 requires Host
                            (403, b"GET /v1/health HTTP/1.1\r\nHost: \r\n\r\n"),
                            (200, b"GET /v1/health HTTP/1.0\r\n\r\n")):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(req)
            resp = s.recv(65536).decode(errors="replace")
            s.close()
            body = resp.split("\r\n\r\n", 1)[-1]
            check(resp.startswith(f"HTTP/1.1 {status}") and body.startswith("{\"error\"" if status != 200 else "{"),
                  f"{status} is JSON: {resp[:300]}")
        # framing libmicrohttpd takes loosely (the first of repeated headers; a body it cannot
        # frame waited for until --timeout) is refused at once, before the body, and the
        # connection closed; a body over the limit is refused without 100 Continue
        body = b'{"query":"the"}'
        cl = b"Content-Length: %d\r\n" % len(body)
        for status, head in ((501, b"Transfer-Encoding: gzip, chunked\r\n"), (501, b"Transfer-Encoding: foo\r\n"),
                             (400, b"Transfer-Encoding: chunked\r\n" + cl),
                             (400, b"Content-Length: 20\r\n" + cl), (400, b"Host: evil.example\r\n" + cl),
                             (413, b"Content-Length: 99999999999\r\nExpect: 100-continue\r\n")):
            s = socket.create_connection(("127.0.0.1", port))
            s.settimeout(10)
            t0 = time.time()
            s.sendall(b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\n" + head + b"\r\n")
            resp = b""
            while chunk := s.recv(65536):  # the server closes the connection
                resp += chunk
            dt = time.time() - t0
            s.close()
            text = resp.decode(errors="replace")
            check(text.startswith(f"HTTP/1.1 {status}") and "100 Continue" not in text and dt < 2.0 and
                  text.split("\r\n\r\n", 1)[-1].startswith('{"error"') and text.count("HTTP/1.1") == 1,
                  f"framing {head!r}: {dt:.2f}s {text[:200]!r}")
        # a path that is not UTF-8 is named with U+FFFD for its bad bytes, not cut there
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /v1/\xffcount HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        resp = b""
        while chunk := s.recv(65536):
            resp += chunk
        s.close()
        msg = json.loads(resp.split(b"\r\n\r\n", 1)[-1]).get("error", {}).get("message", "")
        check(resp.startswith(b"HTTP/1.1 404") and msg.endswith("/v1/\ufffdcount"), f"bad bytes in a path: {resp[:200]!r}")
        # OpenAI's clients: a model retrieved by name; a chat stream's role comes alone first (the
        # official library adds the first chunk's logprobs twice otherwise); a NUL character is
        # listed among the top logprobs like any other
        st, b, _ = call(port, "/v1/models/notes")
        check(st == 200 and json.loads(b) == {"id": "notes", "object": "model", "created": 0, "owned_by": "infinigram"},
              f"GET /v1/models/notes: {st} {b[:200]}")
        st, b, _ = call(port, "/v1/models/nope")
        check(st == 404 and json.loads(b)["error"]["code"] == "not_found", f"GET /v1/models/nope: {st} {b[:200]}")
        st, b, _ = call(port, "/v1/chat/completions", {"model": "notes", "messages": [{"role": "user", "content": "the"}],
                                                        "max_tokens": 4, "seed": 1, "logprobs": True, "stream": True})
        events = [json.loads(line[6:]) for line in b.split("\n") if line.startswith("data: {")]
        first = events[0]["choices"][0] if events else {}
        content = "".join(e["choices"][0]["delta"].get("content", "") for e in events if e.get("choices"))
        entries = sum(len((e["choices"][0].get("logprobs") or {}).get("content") or []) for e in events if e.get("choices"))
        check(st == 200 and first.get("delta") == {"role": "assistant", "content": ""} and first.get("logprobs") is None
              and entries == len(content) and len(content) > 0, f"chat stream's first chunk: {first} {entries} {content!r}")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "the", "max_tokens": 6, "seed": 2,
                                                   "stream": True, "stream_options": {"include_usage": True}})
        events = [json.loads(line[6:]) for line in b.split("\n") if line.startswith("data: {")]
        text = "".join(c["text"] for e in events for c in e["choices"])
        check(st == 200 and events and events[-1]["choices"] == [] and b.rstrip().endswith("data: [DONE]") and
              events[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": len(text),
                                      "total_tokens": 3 + len(text)}, f"include_usage: {events[-1:]} {text!r}")
        for seed in range(1, 6):  # a stop string withdraws characters: the usage counts the text, streamed or not
            req = {"model": "notes", "prompt": "the", "max_tokens": 30, "seed": seed, "stop": ["sat", "t "]}
            st1, b1, _ = call(port, "/v1/completions", req)
            st2, b2, _ = call(port, "/v1/completions", dict(req, stream=True, stream_options={"include_usage": True}))
            ev = [json.loads(line[6:]) for line in b2.split("\n") if line.startswith("data: {")]
            check(st1 == 200 and st2 == 200 and ev and ev[-1].get("usage") == json.loads(b1)["usage"],
                  f"usage streamed and not, seed {seed}: {b1[-160:]} {ev[-1:] if ev else b2[-200:]}")
        bad(port, "/v1/completions", {"model": "notes", "prompt": "the", "stream": True, "stream_options": 3},
            "stream_options", "stream_options not an object")
        bad(port, "/v1/completions", {"model": "notes", "prompt": "the", "stream_options": {"include_usage": True}},
            "stream_options", "stream_options without stream")
        bad(port, "/v1/chat/completions", {"model": "notes", "messages": [{"role": "user", "content": "x"}],
                                          "stream_options": {"include_usage": "yes"}},
            "stream_options.include_usage", "include_usage not a boolean")
        st, b, _ = call(port, "/v1/completions", {"model": "notes", "prompt": "the dog", "max_tokens": 1, "logprobs": 3,
                                                   "temperature": 0, "interp": 0})
        lp = json.loads(b)["choices"][0]["logprobs"] if st == 200 else {}
        check(st == 200 and lp.get("tokens") == ["\u0000"] and "\u0000" in lp["top_logprobs"][0],
              f"a NUL among the top logprobs: {st} {b[:300]}")
        # a client that sends part of a request, or whole ones, and ends its side with its last
        # bytes is let go at once (libmicrohttpd alone misses that end and would hold the
        # connection until --timeout, 5 s here): the whole requests answered, the rest dropped
        whole = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for req, answers in ((b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n{\"que", 0),
                             (b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n", 0), (whole * 2, 2)):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(req)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            t0, resp = time.time(), b""
            while chunk := s.recv(65536):
                resp += chunk
            dt = time.time() - t0
            s.close()
            check(dt < 2.0 and resp.count(b"HTTP/1.1 200") == answers and b"408" not in resp,
                  f"a client that ended its side is let go: {req[:40]!r} {dt:.2f}s {resp[:100]!r}")
        st, b, _ = call(port, "/v1/health")
        check(st == 200, "still serving")
    finally:
        srv.terminate()
        srv.wait(timeout=10)

    # Long requests stop: at their deadline, and as soon as their client goes away. One worker
    # only, so a request still computing would hold up the next one.
    port = free_port()
    long_text = "the cat sat on the log. the dog\u0000sat on the mat. " * 1200000  # 58 MB: about 10 s of eval
    longsrc = os.path.join(tmp, "long.txt")
    with open(longsrc, "w") as f:  # one document of 1 MB: a generation from it runs on for long
        f.write("the cat sat on the log. the dog sat on the mat. " * 21000)
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add long {longsrc}", "-c", "build long"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, "setup long: " + p.stderr)
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--threads", "1", "--deadline", "1",
                        "--body-limit", "64000000"], port, stderr=subprocess.DEVNULL, env=env)
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/eval", method="POST",
                                     data=json.dumps({"dataset": "notes", "text": long_text}).encode())
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                st, b, retry = r.status, r.read().decode(), r.headers.get("x-should-retry")
        except urllib.error.HTTPError as e:
            st, b, retry = e.code, e.read().decode(), e.headers.get("x-should-retry")
        dt = time.monotonic() - t0
        out = json.loads(b)
        # an OpenAI client library would send it again, to meet the same deadline: told not to
        check(dt < 4.0 and st == 503 and out["error"]["code"] == "cancelled" and retry == "false",
              f"the deadline stops an eval: {st} {dt:.2f}s x-should-retry {retry} {b[:200]}")
        # answers are bounded: snippets (positions x width) and batches (queries, and their bytes)
        bad(port, "/v1/count", {"dataset": "long", "query": "t", "positions": 1000000, "width": 10000}, "positions",
            "positions x width over the snippet bound")
        bad(port, "/v1/count", {"dataset": "long", "queries": [{"query": "t"}] * 1001}, "queries", "1001 queries")
        # generation keeps its text so far when stopped; over HTTP a stopped request is a 503 all the same
        st, b, dt = call(port, "/v1/generate", {"dataset": "notes", "query": "the", "max": 10000000,
                                                "no_stop_at_end": True}, timeout=60)
        check(dt < 4.0 and st == 503, f"the deadline stops a generation: {st} {dt:.2f}s {b[:200]}")
        st, b, dt = call(port, "/v1/completions", {"model": "long", "prompt": "the", "max_tokens": 100000, "n": 16, "stream": True},
                         timeout=120)
        last = b.strip().split("\n\n")[-1]
        check(dt < 4.0 and st == 200 and last.startswith("data: {") and json.loads(last[6:])["error"]["code"] == "cancelled",
              f"the deadline stops a stream, its last event saying so: {st} {dt:.2f}s {b[-200:]}")
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--threads", "1", "--deadline", "600",
                        "--body-limit", "64000000"], port, stderr=subprocess.DEVNULL, env=env)
    try:
        body = json.dumps({"dataset": "notes", "text": long_text}).encode()
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /v1/eval HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % len(body) + body)
        time.sleep(1.0)
        s.close()
        st, b, dt = call(port, "/v1/count", {"dataset": "notes", "query": "the"}, timeout=30)
        # freed within seconds, where the deadline would hold it 600 s (the margin is for a
        # sanitizer build on a loaded machine: 2.9 s was seen there)
        check(st == 200 and dt < 8.0, f"a request whose client left frees its worker: {st} {dt:.2f}s")
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    # a fresh server, so that no earlier request (the big eval above, read slowly under a
    # sanitizer) still holds a thread
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--threads", "1", "--deadline", "600"],
                       port, stderr=subprocess.DEVNULL, env=env)
    try:
        # a long computation holds the one compute slot (--threads 1): health checks and
        # listings are answered at once all the same (each connection has its own thread), a
        # second computation waits for the slot, and both slots free when their clients leave
        def long_generation():
            try:
                call(port, "/v1/generate", {"dataset": "notes", "query": "the", "max": 10000000,
                                            "no_stop_at_end": True}, timeout=3)
            except OSError:
                pass
        gens = [threading.Thread(target=long_generation) for _ in range(2)]
        for g in gens:
            g.start()
        time.sleep(0.5)
        for path in ("/v1/health", "/v1/datasets", "/v1/models", "/v1"):
            st, b, dt = call(port, path, timeout=10)
            check(st == 200 and dt < 1.0, f"{path} while the compute slot is held: {st} {dt:.2f}s")
        st, b, dt = call(port, "/v1/completions", {"model": "notes", "prompt": "the", "max_tokens": 5, "stream": True},
                         timeout=10)
        check(st == 200 and dt < 1.0 and b.strip().endswith("data: [DONE]"),
              f"a stream while the compute slot is held: {st} {dt:.2f}s")
        for g in gens:
            g.join()
        st, b, dt = call(port, "/v1/count", {"dataset": "notes", "query": "the"}, timeout=30)
        check(st == 200 and dt < 8.0, f"the slot is free again once the clients left: {st} {dt:.2f}s")
        # clients that give up while they wait for the slot: none keeps it once they are gone
        gen = threading.Thread(target=long_generation)
        gen.start()
        time.sleep(0.3)

        def impatient():
            try:
                call(port, "/v1/count", {"dataset": "notes", "query": "the"}, timeout=0.5)
            except OSError:
                pass
        quitters = [threading.Thread(target=impatient) for _ in range(12)]
        for q in quitters:
            q.start()
        for q in quitters + [gen]:
            q.join()
        for i in range(3):
            try:
                st, b, dt = call(port, "/v1/count", {"dataset": "notes", "query": "the"}, timeout=30)
            except OSError as e:
                st, dt = str(e), 30.0
            check(st == 200 and dt < 8.0, f"served after waiting clients gave up ({i}): {st} {dt:.2f}s")
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    # Requests that wait for a compute thread are computed as soon as any is free, whichever
    # connection thread accepted them, and a keep-alive connection is not held behind another
    # connection's computation (both failed when answers were computed on the thread that
    # accepted the connection: every waiting request sat on the one spare thread, and ran one
    # at a time there).
    with serving(home, env, "--threads", "2", "--deadline", "600") as (port, srv):
        def generation(n):
            return {"dataset": "notes", "query": "the", "max": n, "no_stop_at_end": True, "seed": 1}
        n, took = 20000, 0.0
        while took < 0.6 and n < 10000000:  # a generation that takes 0.6 s or more on this build
            n *= 2
            st, _, took = call(port, "/v1/generate", generation(n), timeout=120)
            check(st == 200, f"calibration: generate max {n}: {st}")
        done = []

        def timed():
            st, _, dt = call(port, "/v1/generate", generation(n), timeout=120)
            done.append((st, time.monotonic()))
        gens = []
        sent = time.monotonic()
        for _ in range(6):  # sent 50 ms apart: two compute at once, four wait
            gens.append(threading.Thread(target=timed))
            gens[-1].start()
            time.sleep(0.05)
        for g in gens:
            g.join()
        # Equal generations: in rounds of two, each pair is answered together, a round apart,
        # and the last about three first answers' time after the sending; one at a time after
        # the first two, each a generation's time after the one before, the last about five.
        # Times compared with times of the same batch, so a busy machine slows both alike; either
        # sign of rounds will do (under a sanitizer the two compute threads drift apart).
        # Under a sanitizer, with other suites running beside it on two cores, the two compute
        # threads get too uneven a share of the machine for the rounds to show: there only the
        # answers are checked (the timing is checked by the plain build's run).
        t = sorted(at for _, at in done)
        rnd = t[2] - t[1]
        pairs = t[3] - t[2] < 0.5 * rnd and t[4] - t[3] > 0.5 * rnd and t[5] - t[4] < 0.5 * (t[4] - t[3])
        check(all(st == 200 for st, _ in done) and (pairs or t[5] - sent < 4.0 * (t[0] - sent) or SANITIZED),
              f"six generations on two compute threads, answered at (s) {[round(x - t[0], 2) for x in t]}")
        import http.client
        conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(6)]
        count = json.dumps({"dataset": "notes", "query": "the"})

        def ask(k):
            t = time.monotonic()
            k.request("POST", "/v1/count", count, {"Content-Type": "application/json"})
            r = k.getresponse()
            r.read()
            return r.status, time.monotonic() - t
        for k in conns:  # the connections spread over the connection threads
            ask(k)
        hog = threading.Thread(target=lambda: call(port, "/v1/generate", generation(n * 4), timeout=120))
        hog.start()
        time.sleep(0.2)
        slow = [(st, dt) for st, dt in map(ask, conns) if st != 200 or dt > 0.5 * took]
        check(not slow, f"keep-alive connections while one generation computes: {slow}")
        hog.join()
        for k in conns:
            k.close()
    # Work that used to outlive its deadline or a stop: an echoed prompt scored inside a
    # stream (each character's context a long match: quadratic), a stop with requests
    # computing and waiting, and waiting requests whose clients left.
    import random
    rng = random.Random(7)
    words_src = os.path.join(tmp, "words.txt")
    with open(words_src, "w") as f:
        f.write(" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"])
                         for _ in range(40000)))
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add words {words_src}", "-c", "build words"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, "words: " + p.stderr)
    long_prompt = open(words_src).read()[:150000]
    with serving(home, env, "--threads", "1", "--deadline", "1", "--datasets", "words") as (port, srv):
        t0 = time.monotonic()
        st, b, dt = call(port, "/v1/completions", {"model": "words", "prompt": long_prompt, "max_tokens": 2,
                                                   "logprobs": 0, "echo": True, "stream": True}, timeout=60)
        check(st == 200 and '"code":"cancelled"' in b and dt < 6.0,
              f"a stream scoring a long echoed prompt stops at its deadline: {st} {dt:.2f}s {b[-200:]}")
    # the memory a dups walk may take is the operator's to set (serve --dups-memory), no request's
    with serving(home, env, "--threads", "1", "--datasets", "words", "--dups-memory", "1K") as (port, srv):
        st, b, _ = call(port, "/v1/dups", {"min_len": 20}, timeout=60)
        check(st >= 500 and "over the budget of 1024" in b, f"serve --dups-memory 1K bounds a dups request: {st} {b[:200]}")
    p = subprocess.run([BIN, "--home", home, "serve", "--dups-memory", "lots"], capture_output=True, text=True, env=env,
                       timeout=30)
    check(p.returncode != 0 and "--dups-memory" in p.stderr, "serve --dups-memory lots is refused: " + p.stderr[-200:])
    # a mixture over a context whose count changes every two bytes walks 50,000 levels, a
    # search each (16 s for 100 KB here before the model polled the flag): it stops at the
    # deadline, as do back-off's walk, and a batch stops at the first query past it
    aa_src = os.path.join(tmp, "aa.txt")
    with open(aa_src, "w") as f:
        f.write("a " * 150000)
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add aa {aa_src}", "-c", "build aa"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, "aa: " + p.stderr)
    with serving(home, env, "--threads", "1", "--deadline", "1", "--datasets", "aa") as (port, srv):
        for path, body in (("/v1/predict", {"query": "a " * 50000, "interp": -1}),
                           ("/v1/predict", {"query": "a " * 50000, "weighted": "linear"}),
                           ("/v1/backoff", {"query": "a " * 50000}),
                           ("/v1/predict", {"queries": [{"query": "a " * 4000, "interp": -1}] * 100})):
            st, b, dt = call(port, path, body, timeout=120)
            check(st == 503 and '"code":"cancelled"' in b and dt < 3.0,
                  f"{path} {list(body)[0]} over 100 KB stops at its deadline: {st} {dt:.2f}s {b[:160]}")
        st, b, dt = call(port, "/v1/completions", {"model": "aa", "prompt": "a " * 50000, "interp": -1,
                                                   "max_tokens": 3, "stream": True}, timeout=120)
        # (its prompt is checked before the stream starts: the check is what the deadline stops)
        check(st in (200, 503) and '"code":"cancelled"' in b and dt < 3.0,
              f"a stream over a 100 KB mixture prompt stops at its deadline: {st} {dt:.2f}s {b[-160:]}")
        st, b, dt = call(port, "/v1/completions", {"model": "aa", "prompt": "a " * 50000, "interp": -1,
                                                   "max_tokens": 3}, timeout=120)
        check(st == 503 and '"code":"cancelled"' in b and dt < 3.0,
              f"a completion of a 100 KB mixture prompt stops at its deadline: {st} {dt:.2f}s {b[-160:]}")
        # prob's chain starts with the whole mixture walk of its context: it stops there too
        st, b, dt = call(port, "/v1/prob", {"query": "a " * 50000, "continuation": "a a", "interp": -1}, timeout=120)
        check(st == 503 and '"code":"cancelled"' in b and dt < 3.0,
              f"prob over a 100 KB mixture context stops at its deadline: {st} {dt:.2f}s {b[:160]}")
    with serving(home, env, "--threads", "1", "--deadline", "60", "--datasets", "words") as (port, srv):
        # prob carries ℓ* from byte to byte: a long continuation the corpus holds verbatim costs
        # time in proportion to its length (it searched each byte's context afresh: 10 s for
        # these 150 KB on a debug build, a quarter of an hour at 900 KB)
        st, b, dt = call(port, "/v1/prob", {"query": long_prompt[:10], "continuation": long_prompt[10:]}, timeout=120)
        check(st == 200 and json.loads(b)["log2_prob"] is not None and dt < 10.0,
              f"prob of a 150 KB continuation the corpus holds: {st} {dt:.2f}s {b[:200]}")
    with serving(home, env, "--threads", "1", "--deadline", "60", "--datasets", "words") as (port, srv):
        long = {"query": "alpha", "max": 10000000, "no_stop_at_end": True}
        results = []

        def ask(body):
            try:
                st, b, _ = call(port, "/v1/generate" if "max" in body else "/v1/count", body, timeout=30)
            except Exception as e:  # noqa: BLE001 - a cut connection is what this looks for
                st, b = None, repr(e)
            results.append((st, b))
        # streams that score a long echoed prompt do it on the compute thread, leaving the
        # connection threads to other clients (three such streams held both of --threads 1's),
        # and stop when their clients leave
        def leaving_stream():
            try:
                call(port, "/v1/completions", {"model": "words", "prompt": long_prompt, "max_tokens": 2,
                                               "logprobs": 0, "echo": True, "stream": True}, timeout=3)
            except Exception:  # noqa: BLE001 - leaving is the point
                pass
        leavers = [threading.Thread(target=leaving_stream) for _ in range(3)]
        for x in leavers:
            x.start()
        time.sleep(1.0)
        try:
            st, b, dt = call(port, "/v1/health", timeout=10)
        except OSError as e:
            st, dt = repr(e), 10.0
        check(st == 200 and dt < 1.0, f"health while three streams score their prompts: {st} {dt:.2f}s")
        for x in leavers:
            x.join()
        try:
            st, b, dt = call(port, "/v1/health", timeout=10)
        except OSError as e:
            st, dt = repr(e), 10.0
        check(st == 200 and dt < 2.0, f"health after streams whose clients left: {st} {dt:.2f}s")
        gen = threading.Thread(target=ask, args=(long,))
        gen.start()
        streamed = []

        def stream():
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(
                {"model": "words", "prompt": "alpha", "max_tokens": 100000, "n": 16, "stream": True}).encode())
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    streamed.append(r.read().decode())
            except Exception as e:  # noqa: BLE001
                streamed.append(repr(e))
        streamer = threading.Thread(target=stream)
        streamer.start()
        time.sleep(0.3)
        # clients that send a request and leave while it waits: their connections are released
        # at once, not when the running generation ends
        fds = lambda: len(os.listdir(f"/proc/{srv.pid}/fd"))
        base = fds()
        quitters = []
        for _ in range(40):
            q = socket.create_connection(("127.0.0.1", port))
            body = b'{"query":"alpha"}'
            q.sendall(b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            quitters.append(q)
        time.sleep(0.3)
        for q in quitters:
            q.close()
        time.sleep(1.0)
        check(fds() <= base + 2, f"waiting clients that left are let go: {fds()} descriptors, {base} before")
        waiting = [threading.Thread(target=ask, args=({"query": "alpha"},)) for _ in range(4)]
        for w in waiting:
            w.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        srv.send_signal(signal.SIGINT)
        code = srv.wait(timeout=30)
        stopped = time.monotonic() - t0
        for w in waiting + [gen, streamer]:
            w.join()
        check(streamed and "the server is stopping" in streamed[0][-400:],
              f"a stream cut by the stop ends with the error event: {streamed[0][-300:] if streamed else None}")
        check(code == 0 and stopped < 4.0, f"SIGINT with a request computing and four waiting: exit {code} "
              f"after {stopped:.2f} s")
        check(len(results) == 5 and all(st == 503 and "stopping" in b for st, b in results),
              f"each is answered that the server is stopping: {results}")
    # --host takes a name as well as an address; a loopback name keeps the Host check
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--host", "localhost"], port,
                       stderr=subprocess.DEVNULL, env=env)
    try:
        st, b, _ = call(port, "/v1/health")
        st2, b2, _ = call(port, "/v1/health", headers={"Host": f"rebound.example:{port}"})
        check(st == 200 and st2 == 403, f"--host localhost: {st} {b}; a foreign Host: {st2} {b2}")
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    p = subprocess.run([BIN, "--home", home, "serve", "--port", str(free_port()), "--host", "no-such-host.invalid"],
                       capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode != 0 and "--host no-such-host.invalid" in p.stderr, f"an unknown --host: {p.returncode} {p.stderr}")
    # a rebuilt dataset whose new index cannot be opened at once (here: moved away for a moment;
    # in life, too many open files) is tried again a second later, not only at the catalog's
    # next change
    with serving(home, env) as (port, srv):
        st0, _, _ = call(port, "/v1/count", {"dataset": "notes", "query": "the"})
        p = subprocess.run([BIN, "--home", home, "-c", "build notes"], capture_output=True, text=True, env=env)
        new = [d for d in os.listdir(os.path.join(home, "indexes")) if d.startswith("notes-")]
        away = os.path.join(tmp, "away")
        os.rename(os.path.join(home, "indexes", new[0]), away)
        st1, _, _ = call(port, "/v1/count", {"dataset": "notes", "query": "the"})
        os.rename(away, os.path.join(home, "indexes", new[0]))
        time.sleep(1.3)
        st2, b2, _ = call(port, "/v1/count", {"dataset": "notes", "query": "the"})
        check(p.returncode == 0 and len(new) == 1 and st0 == 200 and st1 == 409 and st2 == 200 and
              json.loads(b2)["count"] == 5, f"a failed open tried again: {st0} {st1} {st2} {b2[:200]}")
    # a rebuilt dataset whose index fails to open for a passing reason (here the server's open
    # files limit, lowered for a moment) is answered 503 to retry, and served once it opens
    with serving(home, env) as (port, srv):
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def ask():
            kept.request("POST", "/v1/count", body=json.dumps({"dataset": "notes", "query": "the"}))
            r = kept.getresponse()
            return r.status, r.read().decode()

        st0, _ = ask()
        limit = resource.prlimit(srv.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(srv.pid, resource.RLIMIT_NOFILE, (3, limit[1]))  # no descriptor past stderr
        with open(src, "ab") as f:
            f.write(b"the end\n")
        p = subprocess.run([BIN, "--home", home, "-c", "build notes"], capture_output=True, text=True, env=env)
        st1, b1 = ask()
        resource.prlimit(srv.pid, resource.RLIMIT_NOFILE, limit)
        time.sleep(1.3)
        st2, b2 = ask()
        check(p.returncode == 0 and st0 == 200 and st1 == 503 and "Too many open files" in b1 and
              '"busy"' in b1 and st2 == 200 and json.loads(b2)["count"] == 6,
              f"an open failed for a passing reason: {st0} {st1} {b1[:300]} {st2} {b2[:200]}")
    # a syntax error names the member only where the fault is in its value
    with serving(home, env) as (port, srv):
        for raw, want, unwanted in ((b'{"dataset":"notes","query":"the"} trailing', "end of file expected", '"query"'),
                                    (b'{"dataset":"notes","query":"the",}', "string or '}' expected", '"query"'),
                                    (b'{"dataset":"notes","query":tru}', '"query": invalid token', None)):
            st, b, _ = call(port, "/v1/count", None, raw=raw)
            msg = json.loads(b)["error"]["message"] if st == 400 else ""
            check(want in msg and (not unwanted or unwanted not in msg), f"{raw!r}: {st} {b[:200]}")
    # a server with no dataset says so when a request names none (not "several are served")
    with serving(os.path.join(tmp, "empty-home"), env) as (port, srv):
        st, b, _ = call(port, "/v1/count", {"query": "x"})
        check(st == 404 and "no dataset is served" in b, f"no dataset served: {st} {b[:200]}")
    # logprobs on multi-byte characters under mixtures: a character listed among the
    # alternatives has the logprob it has as the token (both the product of its bytes'
    # probabilities, as generation draws it), alternatives most probable first; the same for
    # the echoed prompt's characters
    utf = os.path.join(tmp, "utf.txt")
    with open(utf, "w") as f:
        f.write("héllo\nΣίσυφος φίλος σοφός\nキスキスキャット ストア\nσφαίρα φως σῶμα\n")
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add utf {utf}", "-c", "build utf"],
                       capture_output=True, text=True, env=env)
    with serving(home, env) as (port, srv):
        seen = wrong = 0
        for seed in range(12):
            for interp in (0, 2, 3):
                st, b, _ = call(port, "/v1/chat/completions", {"model": "utf", "messages": [{"role": "user", "content": "x"}],
                                                               "max_tokens": 6, "seed": seed, "logprobs": True,
                                                               "top_logprobs": 5, "interp": interp})
                for e in json.loads(b)["choices"][0]["logprobs"]["content"] if st == 200 else [None]:
                    lps = [a["logprob"] for a in e["top_logprobs"]] if e else [1, 2]
                    same = [a for a in (e["top_logprobs"] if e else []) if a["token"] == e["token"]]
                    seen += 1
                    wrong += lps != sorted(lps, reverse=True) or any(abs(a["logprob"] - e["logprob"]) > 1e-9 for a in same)
        st, b, _ = call(port, "/v1/completions", {"model": "utf", "prompt": "σοφός", "max_tokens": 4, "logprobs": 3,
                                                  "echo": True, "interp": 2, "seed": 1})
        lp = json.loads(b)["choices"][0]["logprobs"] if st == 200 else {"tokens": []}
        for tok, l, alts in zip(lp["tokens"][1:], lp["token_logprobs"][1:], lp["top_logprobs"][1:]):
            seen += 1
            wrong += tok in alts and abs(alts[tok] - l) > 1e-9
        st, b, _ = call(port, "/v1/completions", {"model": "utf", "prompt": "σ", "ngram": 3, "interp": 3, "max_tokens": 3})
        check(st == 400 and "choose one model" in b, f"completions with two models: {st} {b[:200]}")
        check(p.returncode == 0 and seen > 150 and wrong == 0,
              f"a character's logprob is the same as the token and among the alternatives: {wrong} of {seen} differ")
    # a crowd of connections that send nothing holds every place the server has (1,024): once
    # three quarters are taken, a request must be whole within 2 s and idle keep-alive
    # connections are closed, so a real request gets in within seconds, not after --timeout
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1400:
        print(f"skipped the crowd: this process may open {hard} files")
    else:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1400), hard))
        with serving(home, env, "--timeout", "60") as (port, srv):
            kept = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            kept.request("GET", "/v1/health")
            kept.getresponse().read()
            crowd = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]
            t0 = time.monotonic()
            st = None
            while st != 200 and time.monotonic() - t0 < 30:
                with contextlib.suppress(Exception):
                    st, b, _ = call(port, "/v1/count", {"dataset": "notes", "query": "the"}, timeout=2)
            waited = time.monotonic() - t0
            crowd[0].settimeout(10)
            told = b""
            with contextlib.suppress(OSError):
                while len(told) < 2000 and (more := crowd[0].recv(4096)):
                    told += more
            kept.sock.settimeout(10)
            try:
                closed = kept.sock.recv(1) == b""
            except ConnectionResetError:
                closed = True
            except OSError:
                closed = False
            for c in crowd:
                c.close()
            check(st == 200 and waited < 12, f"a request beside 1,100 silent connections: {st} after {waited:.1f} s")
            check(b"408" in told and b"crowded" in told, f"a silent connection in a crowd is told: {told[-300:]}")
            check(closed, "an idle keep-alive connection is closed when the server is crowded")
sys.exit(summary())
