#!/usr/bin/env python3
"""The HTTP API against the real server on loopback: every endpoint (single and batch),
every error status, OpenAI-compatible completions (plain, streaming, logprobs, stop,
echo, n, seed reproducibility) and chat, a slow client, and a rebuild by another
process while serving (the new index is picked up; requests keep working)."""
import http.client
import json
import math
import os
import signal
import select
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import time

BIN, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
import igtest
from igtest import check, free_port


def call(*args, **kw):
    """(status, body) of one request."""
    return igtest.call(*args, **kw)[:2]


with tempfile.TemporaryDirectory() as tmp:
    home = os.path.join(tmp, "home")
    src = os.path.join(tmp, "notes.txt")
    with open(src, "w") as f:
        f.write("the cat sat on the mat.\nthe dog sat on the log.\n")
    env = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add shakespeare {DATA}", "-c", "build shakespeare",
                        "-c", f":dataset add notes {src}", "-c", "build notes"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, "setup: " + p.stderr)
    port = free_port()
    srv = igtest.start_server([BIN, "--home", home, "serve", "--port", str(port), "--threads", "4", "--timeout", "2",
                               "--body-limit", "4096"], port, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # GET endpoints
        st, b = call(port, "/v1/health")
        check(st == 200 and json.loads(b) == {"status": "ok", "datasets": 2}, f"health {st} {b}")
        st, b = call(port, "/v1/models")
        ids = sorted(m["id"] for m in json.loads(b)["data"])
        check(st == 200 and ids == ["notes", "shakespeare"] and json.loads(b)["object"] == "list", f"models {b}")
        st, b = call(port, "/v1/datasets")
        check(st == 200 and len(json.loads(b)["datasets"]) == 2, f"datasets {b}")
        # the build date: ISO-8601 UTC, the time of the build above
        import datetime
        built = [d.get("built", "") for d in json.loads(b)["datasets"]]
        ok = True
        for x in built:
            try:
                t = datetime.datetime.strptime(x, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
                ok = ok and abs(t.timestamp() - time.time()) < 600
            except ValueError:
                ok = False
        check(ok, f"datasets carry their build time: {built}")
        # the explorer page and its files, and the security headers on every answer
        csp = "default-src 'none'"
        for path, ctype in [("/", "text/html"), ("/index.html", "text/html"), ("/app.js", "text/javascript"),
                            ("/style.css", "text/css"), ("/v1/health", "application/json"), ("/nope", "application/json")]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                    st, h, page = r.status, r.headers, r.read()
            except urllib.error.HTTPError as e:
                st, h, page = e.code, e.headers, e.read()
            check(st == (404 if path == "/nope" else 200) and h.get("Content-Type", "").startswith(ctype) and
                  h.get("Content-Security-Policy", "").startswith(csp) and h.get("X-Content-Type-Options") == "nosniff"
                  and len(page) > 0, f"GET {path}: {st} {dict(h)}")
            if path == "/":
                check(b'src="app.js"' in page and b"<script>" not in page, "the page loads its script from its own file")
        st, b = call(port, "/", {}, "POST")
        check(st == 405 and "error" in json.loads(b), f"POST / is a 405: {st} {b}")
        # HEAD is a GET without the body; a 405 says which methods the path takes
        for path, allow in (("/", "GET, HEAD"), ("/v1/health", "GET, HEAD"), ("/v1/count", "POST")):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("HEAD" if allow != "POST" else "GET", path)
            r = conn.getresponse()
            r.read()
            if allow == "POST":
                check(r.status == 405 and r.getheader("Allow") == "POST", f"GET {path}: {r.status} {r.getheader('Allow')}")
            else:
                check(r.status == 200 and r.getheader("Content-Type"), f"HEAD {path}: {r.status}")
                conn.request("DELETE", path)
                r = conn.getresponse()
                r.read()
                check(r.status == 405 and r.getheader("Allow") == allow, f"DELETE {path}: {r.status} {r.getheader('Allow')}")
            conn.close()
        st, b = call(port, "/app.js/x")
        check(st == 404, f"unknown paths stay 404: {st}")
        # engine endpoints: the same objects as the shell's --json minus "command"
        shell = subprocess.run([BIN, "--home", home, "-d", "notes", "--json", "-c", 'count --positions 2 "sat"'],
                               capture_output=True, text=True, env=env).stdout
        want = json.loads(shell)
        del want["command"]
        st, b = call(port, "/v1/count", {"dataset": "notes", "query": "sat", "positions": 2})
        check(st == 200 and json.loads(b) == want, f"count equals the shell's JSON: {b}")
        cases = [
            ("/v1/predict", {"dataset": "notes", "query": "the ", "top": 3}, ["effective_n", "candidates"]),
            ("/v1/prob", {"dataset": "notes", "query": "the ", "continuation": "cat"}, ["prob", "factors"]),
            ("/v1/backoff", {"dataset": "notes", "context": "sat on the "}, ["candidates"]),
            ("/v1/explain", {"dataset": "notes", "query": "the c", "positions": 1}, ["profile", "candidates"]),
            ("/v1/spans", {"dataset": "notes", "query": "the cat sat on the log", "min_len": 4}, ["spans", "novelty"]),
            ("/v1/search", {"dataset": "notes", "query": '"cat" AND ("mat" OR "log")'}, ["documents_total"]),
            ("/v1/doc", {"dataset": "notes", "query": 0, "lines": "2:3"}, ["text"]),
            ("/v1/generate", {"dataset": "shakespeare", "query": "ROMEO:", "max": 20, "seed": 3}, ["text", "seed"]),
            ("/v1/mix", {"dataset": "notes", "query": "the", "llm": [{"token": " cat", "logprob": -1}], "lambda": 0.5},
             ["tokens", "lambda"]),
            ("/v1/predict", {"dataset": "shakespeare", "query": "What say", "interp": 2, "max_context": 50}, ["candidates"]),
            ("/v1/contam", {"dataset": "notes", "items": ["the dog sat on the log.", "a bird"], "n": 3},
             ["items", "summary", "bloom"]),
            ("/v1/dups", {"dataset": "notes", "min_len": 4, "top": 2}, ["duplicated", "repeats", "top"]),
        ]
        for path, body, keys in cases:
            st, b = call(port, path, body)
            o = json.loads(b) if b else {}
            check(st == 200 and all(k in o for k in keys) and "command" not in o, f"{path}: {st} {b[:200]}")
        st, b = call(port, "/v1/generate", {"dataset": "shakespeare", "query": "ROMEO:", "max": 30, "seed": 9})
        st2, b2 = call(port, "/v1/generate", {"dataset": "shakespeare", "query": "ROMEO:", "max": 30, "seed": 9})
        check(json.loads(b)["text"] == json.loads(b2)["text"], "same seed, same generated text")
        # contam: items inline, exact counts; a path is never a field of the request
        st, b = call(port, "/v1/contam", {"dataset": "notes", "items": ["the dog sat on the log.", "zebra crossing"],
                                          "n": 3, "threshold": 0.9})
        o = json.loads(b)
        check(st == 200 and [i["in_corpus"] for i in o["items"]] == [4, 0] and o["summary"]["contaminated"] == 1 and
              o["items"][0]["longest_match"]["source"]["doc"] == 0 and o["source"] == "items", f"contam inline: {b}")
        # the documents of another served dataset as the items: the same figures as inline
        st, b = call(port, "/v1/contam", {"dataset": "shakespeare", "eval_dataset": "notes", "n": 2})
        st2, b2 = call(port, "/v1/contam", {"dataset": "shakespeare", "n": 2,
                                            "items": ["the cat sat on the mat.\nthe dog sat on the log.\n"]})
        o, o2 = json.loads(b), json.loads(b2)
        check(st == 200 and st2 == 200 and o["items"][0]["eval_doc"] == 0 and
              o["items"][0]["in_corpus"] == o2["items"][0]["in_corpus"] and o["summary"] == o2["summary"],
              f"contam eval_dataset: {b[:300]} {b2[:300]}")
        st, b = call(port, "/v1/contam", {"dataset": "notes", "eval_dataset": "nope"})
        check(st == 404, f"contam: an eval dataset not served is a 404: {st} {b}")
        for body in ({"dataset": "notes", "file": "/etc/passwd"}, {"dataset": "notes", "items": ["x"], "field": "q"},
                     {"dataset": "notes", "items": []}, {"dataset": "notes", "items": ["x"], "n": 0},
                     {"dataset": "notes", "items": "/etc/passwd", "file": "/etc/passwd"}):
            st, b = call(port, "/v1/contam", body)
            check(st == 400 and "error" in json.loads(b), f"contam refuses {body}: {st} {b}")
        # batches
        st, b = call(port, "/v1/count", {"dataset": "notes", "queries": [{"query": "the"}, {"query": "zzz"}, {"query": 5}]})
        r = json.loads(b)["results"]
        check(st == 200 and r[0]["count"] == 4 and r[1]["count"] == 0 and "error" in r[2], f"batch: {b}")
        # errors
        errs = [
            ("/v1/nothing", {"query": "x"}, None, 404),
            ("/v1/count", None, "GET", 405),
            ("/v1/health", {}, "POST", 405),
            ("/v1/count", {"dataset": "nope", "query": "x"}, None, 404),
            ("/v1/count", {"query": "x"}, None, 400),                      # two datasets: which?
            ("/v1/predict", {"dataset": "notes", "query": "x", "top": "a"}, None, 400),
            ("/v1/predict", {"dataset": "notes", "query": "x", "interp": 0}, None, 400),
            ("/v1/search", {"dataset": "notes", "query": '("a" OR'}, None, 400),
            ("/v1/dups", {"dataset": "notes", "min_len": 0}, None, 400),
            ("/v1/dups", {"dataset": "notes", "write": "/tmp/x.jsonl"}, None, 400),  # the shell's only
            ("/v1/completions", {"model": "nope", "prompt": "x"}, None, 404),
            ("/v1/completions", {"model": "notes", "prompt": 3}, None, 400),
            ("/v1/completions", {"model": "notes", "n": 99}, None, 400),
            ("/v1/chat/completions", {"model": "notes", "messages": []}, None, 400),
        ]
        for path, body, method, want_st in errs:
            st, b = call(port, path, body, method)
            o = json.loads(b) if b.startswith("{") else {}
            e = o.get("error", {})
            check(st == want_st and {"message", "type", "code"} <= set(e), f"{method or 'POST'} {path} {body}: {st} {b}")
        st, b = call(port, "/v1/count", raw=b"not json")
        check(st == 400 and "error" in json.loads(b), f"bad JSON: {st}")
        st, b = call(port, "/v1/count", raw=b"{" + b" " * 5000 + b"}")
        check(st == 413, f"body over the limit: {st}")
        # OpenAI completions
        body = {"model": "shakespeare", "prompt": "ROMEO:", "max_tokens": 24, "temperature": 0.8, "seed": 1}
        st, b = call(port, "/v1/completions", body)
        o = json.loads(b)
        ch = o["choices"][0]
        check(st == 200 and o["object"] == "text_completion" and o["model"] == "shakespeare" and
              ch["finish_reason"] == "length" and len(ch["text"]) == 24 and o["usage"]["completion_tokens"] == 24,
              f"completions: {b}")
        st, b2 = call(port, "/v1/completions", body)
        check(json.loads(b2)["choices"][0]["text"] == ch["text"], "seed reproducibility")
        st, b = call(port, "/v1/completions", dict(body, n=3, prompt=["ROMEO:", "JULIET:"]))
        o = json.loads(b)
        check(len(o["choices"]) == 6 and [c["index"] for c in o["choices"]] == list(range(6)), "n and prompt lists")
        st, b = call(port, "/v1/completions", dict(body, echo=True, logprobs=2, max_tokens=5))
        c = json.loads(b)["choices"][0]
        lp = c["logprobs"]
        # with echo, the prompt's characters come first, as OpenAI lists them: the first with
        # no log-probability, each other with its probability after those before it
        check(c["text"].startswith("ROMEO:") and len(lp["tokens"]) == 11 and len(lp["token_logprobs"]) == 11 and
              len(lp["top_logprobs"]) == 11 and lp["text_offset"] == list(range(11)) and
              "".join(lp["tokens"]) == c["text"] and lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None,
              f"echo and logprobs: {b}")
        for i in range(1, 6):
            st, pb = call(port, "/v1/prob", {"dataset": "shakespeare", "query": "ROMEO:"[:i], "continuation": "ROMEO:"[i], "interp": 2})
            want = math.log(json.loads(pb)["prob"])
            check(abs(lp["token_logprobs"][i] - want) < 1e-12, f"echo: the log-probability of prompt character {i}: "
                  f"{lp['token_logprobs'][i]} against prob's {want}")
        st, b = call(port, "/v1/completions", dict(body, echo=True, logprobs=0, max_tokens=0))
        lp = json.loads(b)["choices"][0]["logprobs"]
        check(lp["tokens"] == list("ROMEO:"), f"echo with no characters asked scores the prompt: {b}")
        # the prompt is echoed as the model reads it (NFC here), so that its listed characters
        # and offsets are the text's
        st, b = call(port, "/v1/completions", dict(body, prompt="cafe\u0301 is", echo=True, logprobs=0, max_tokens=4))
        c = json.loads(b)["choices"][0]
        lp = c["logprobs"]
        check(c["text"].startswith("caf\u00e9 is") and "".join(lp["tokens"]) == c["text"] and
              lp["text_offset"] == list(range(len(c["text"]))), f"echo of a prompt NFC changes: {b}")
        # text_offset counts characters, as clients index the text
        st, b = call(port, "/v1/completions", dict(body, prompt="Où est ", echo=True, logprobs=0, max_tokens=6))
        c = json.loads(b)["choices"][0]
        offs = c["logprobs"]["text_offset"]
        check(offs == list(range(len(offs))) and len(offs) == 13 and
              all(c["text"][o] == t for o, t in zip(offs, c["logprobs"]["tokens"])), f"text_offset in characters: {b}")
        st, b = call(port, "/v1/completions", dict(body, stop=["e"], max_tokens=200))
        c = json.loads(b)["choices"][0]
        check("e" not in c["text"] and c["finish_reason"] == "stop", f"stop: {c}")
        # streaming
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                     data=json.dumps(dict(body, stream=True)).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            events = r.read().decode().split("\n\n")
        datas = [e[6:] for e in events if e.startswith("data: ")]
        text = "".join(json.loads(d)["choices"][0]["text"] for d in datas[:-1])
        check(datas[-1] == "[DONE]" and text == ch["text"], f"streaming gives the same text: {text!r} vs {ch['text']!r}")
        # each streamed choice carries the effective n of each of its characters: the same as
        # predict's after the prompt and the characters before it
        chunks = [json.loads(d)["choices"][0] for d in datas[:-1]]
        effn = [n for c in chunks for n in c.get("effective_n", [])]
        check(all(len(c.get("effective_n", [])) == len(c["text"]) for c in chunks) and len(effn) == len(text),
              f"one effective_n per streamed character: {chunks[:3]}")
        want = [json.loads(call(port, "/v1/predict", {"dataset": "shakespeare", "query": "ROMEO:" + text[:i]})[1])
                ["effective_n"] for i in range(len(text))]
        check(effn == want, f"streamed effective_n equals predict's: {effn} vs {want}")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                     data=json.dumps(dict(body, stream=True, stop=["e"], max_tokens=200)).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            chunks = [json.loads(e[6:])["choices"][0] for e in r.read().decode().split("\n\n")
                      if e.startswith("data: {")]
        check(all(len(c.get("effective_n", [])) == len(c["text"]) for c in chunks) and "e" not in
              "".join(c["text"] for c in chunks), f"effective_n with a stop string: {chunks[-3:]}")
        # chat
        st, b = call(port, "/v1/chat/completions", {"model": "shakespeare", "messages": [{"role": "user", "content": "Speak"}],
                                                   "max_tokens": 10, "seed": 2})
        o = json.loads(b)
        check(st == 200 and o["object"] == "chat.completion" and o["choices"][0]["message"]["role"] == "assistant",
              f"chat: {b}")
        # chat logprobs as OpenAI has them (a switch and top_logprobs), the same figures as the
        # completion of the same prompt; content as a list of text parts; streamed logprobs
        chat = {"model": "shakespeare", "messages": [{"role": "user", "content": "Speak"}], "max_tokens": 12, "seed": 2}
        st, b = call(port, "/v1/chat/completions", dict(chat, logprobs=True, top_logprobs=3))
        c = json.loads(b)["choices"][0]
        lc = c["logprobs"]["content"]
        check(st == 200 and "".join(e["token"] for e in lc) == c["message"]["content"] and
              all(bytes(e["bytes"]) == e["token"].encode() and len(e["top_logprobs"]) <= 3 and
                  all(a["logprob"] >= a2["logprob"] for a, a2 in zip(e["top_logprobs"], e["top_logprobs"][1:]))
                  for e in lc), f"chat logprobs: {b}")
        st, b2 = call(port, "/v1/completions", {"model": "shakespeare", "prompt": "user: Speak\nassistant: ",
                                                 "max_tokens": 12, "seed": 2, "logprobs": 3})
        l2 = json.loads(b2)["choices"][0]["logprobs"]
        check(l2["tokens"] == [e["token"] for e in lc] and l2["token_logprobs"] == [e["logprob"] for e in lc] and
              l2["top_logprobs"] == [{a["token"]: a["logprob"] for a in e["top_logprobs"]} for e in lc],
              f"chat and completion logprobs agree: {b} vs {b2}")
        parts = dict(chat, messages=[{"role": "user", "content": [{"type": "text", "text": "Sp"},
                                                                  {"type": "text", "text": "eak"}]}])
        st, b3 = call(port, "/v1/chat/completions", parts)
        check(st == 200 and json.loads(b3)["choices"][0]["message"] == json.loads(b)["choices"][0]["message"],
              f"content as text parts: {b3}")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                     data=json.dumps(dict(chat, logprobs=True, top_logprobs=3, stream=True)).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            chunks = [json.loads(e[6:])["choices"][0] for e in r.read().decode().split("\n\n")
                      if e.startswith("data: {")]
        streamed = [e for ch in chunks if ch["logprobs"] for e in ch["logprobs"]["content"]]
        check(streamed == lc, f"streamed chat logprobs: {streamed} vs {lc}")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                     data=json.dumps(dict(body, stream=True, stop=["e"], max_tokens=60, logprobs=2,
                                                          echo=True)).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            chunks = [json.loads(e[6:])["choices"][0] for e in r.read().decode().split("\n\n")
                      if e.startswith("data: {")]
        st, b = call(port, "/v1/completions", dict(body, stop=["e"], max_tokens=60, logprobs=2, echo=True))
        whole = json.loads(b)["choices"][0]["logprobs"]
        joined = {k: [x for ch in chunks if ch["logprobs"] for x in ch["logprobs"][k]] for k in whole}
        check(joined == whole and len(whole["tokens"]) == len(json.loads(b)["choices"][0]["text"]),
              f"streamed completion logprobs with echo and a stop string: {joined} vs {whole}")
        for bad, words in (({"echo": True}, '"echo"'), ({"top_logprobs": 2}, '"top_logprobs"'),
                           ({"logprobs": 3}, '"logprobs"'), ({"max_tokens": 3, "max_completion_tokens": 4},
                                                             '"max_completion_tokens"'),
                           ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
                            '"messages[0].content[0]"'),
                           ({"messages": [{"role": "user", "content": 5}]}, '"messages[0].content"')):
            st, b = call(port, "/v1/chat/completions", dict(chat, **bad))
            check(st == 400 and words in json.loads(b)["error"]["message"], f"chat {bad}: {st} {b}")
        st, b = call(port, "/v1/chat/completions", dict(chat, max_tokens=None, max_completion_tokens=5))
        check(st == 200 and len(json.loads(b)["choices"][0]["message"]["content"]) == 5, f"max_completion_tokens: {b}")
        # slow clients get a 408 after --timeout (2 s), and the workers stay free
        def slow(parts, pause, what):
            s = socket.create_connection(("127.0.0.1", port))
            s.settimeout(10)
            t0 = time.time()
            data = b""
            try:
                for part in parts:  # like any HTTP client, stop sending once an answer comes
                    if select.select([s], [], [], pause)[0]:
                        break
                    s.sendall(part)
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            took = time.time() - t0
            s.close()
            head, _, body = data.partition(b"\r\n\r\n")
            ok = head.startswith(b"HTTP/1.1 408 ") and b"\r\nContent-Security-Policy: default-src 'none'" in head
            try:
                ok = ok and json.loads(body)["error"]["code"] == "io"
            except ValueError:
                ok = False
            check(ok and 1.5 < took < 6, f"{what}: 408 after {took:.1f} s: {data[:200]!r}")
        slow([b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"], 0, "a stalled body")
        slow([b"GET /v1/health HTTP/1.1\r\nHo"], 0, "stalled headers")
        slow([], 0, "a connection that never sends")
        slow([b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"] + [b" "] * 40, 0.1,
             "a body trickling in (slowloris)")
        # a slow request that completes within the deadline is answered
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(10)
        body = json.dumps({"dataset": "shakespeare", "query": "ROMEO"}).encode()
        s.sendall(b"POST /v1/count HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body))
        for i in range(0, len(body), 4):
            time.sleep(0.05)
            s.sendall(body[i:i + 4])
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        check(data.startswith(b"HTTP/1.1 200") and b'"count"' in data, f"a slow but timely request is answered: {data[:120]!r}")
        # an idle keep-alive connection is closed quietly, not answered
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(10)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data, t0 = b"", time.time()
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        check(data.startswith(b"HTTP/1.1 200") and b"408" not in data and 1.5 < time.time() - t0 < 6,
              f"an idle keep-alive connection closes without a 408: {data[-120:]!r}")
        st, b = call(port, "/v1/health")
        check(st == 200, "the server still answers")
        # a rebuild by another process is picked up
        with open(src, "a") as f:
            f.write("a new line about a zebra.\n")
        p = subprocess.run([BIN, "--home", home, "-c", "build notes"], capture_output=True, text=True, env=env)
        check(p.returncode == 0, "rebuild while serving")
        st, b = call(port, "/v1/count", {"dataset": "notes", "query": "zebra"})
        check(json.loads(b).get("count") == 1, f"the new index is used: {b}")
        # compositions are served like any dataset; positions name the member; a member
        # rebuilt is picked up, and a subtracted set takes its documents away
        p = subprocess.run([BIN, "--home", home, "-c", ":dataset compose both shakespeare notes",
                            "-c", ":dataset compose bare both --minus notes"], capture_output=True, text=True, env=env)
        check(p.returncode == 0, "compose while serving: " + p.stderr)
        st, b = call(port, "/v1/count", {"dataset": "both", "query": "zebra", "positions": 1})
        o = json.loads(b)
        check(st == 200 and o.get("count") == 1 and o["positions"][0].get("member") == "notes", f"composed count: {b}")
        st, b = call(port, "/v1/count", {"dataset": "bare", "query": "zebra"})
        check(st == 200 and json.loads(b).get("count") == 0, f"a subtracted member counts nothing: {b}")
        n_shake = json.loads(call(port, "/v1/count", {"dataset": "shakespeare", "query": "the"})[1])["count"]
        n_bare = json.loads(call(port, "/v1/count", {"dataset": "bare", "query": "the"})[1])["count"]
        check(n_shake == n_bare, f"both minus notes is shakespeare: {n_shake} {n_bare}")
        with open(src, "a") as f:
            f.write("zebra crossing.\n")
        p = subprocess.run([BIN, "--home", home, "-c", "build notes"], capture_output=True, text=True, env=env)
        st, b = call(port, "/v1/count", {"dataset": "both", "query": "zebra"})
        check(p.returncode == 0 and json.loads(b).get("count") == 2, f"a member rebuilt is picked up: {b}")
        st, b = call(port, "/v1/datasets")
        names = {d["name"]: d for d in json.loads(b)["datasets"]}
        check("both" in names and names["both"]["status"] == "built" and names["both"].get("members") ==
              ["shakespeare", "notes"] and names["bare"].get("minus") == ["notes"], f"compositions are listed: {b}")
        # a case-folded dataset: completions fold the prompt and the stop strings as every face does
        p = subprocess.run([BIN, "--home", home, "-c", f":dataset add cf {src} --casefold", "-c", "build cf"],
                           capture_output=True, text=True, env=env)
        check(p.returncode == 0, "casefold dataset: " + p.stderr)
        outs = []
        for prompt, stop in (("THE CAT", "ON"), ("the cat", "on")):
            st, b = call(port, "/v1/completions", {"model": "cf", "prompt": prompt, "max_tokens": 20, "seed": 5,
                                                   "stop": [stop]})
            outs.append((st, json.loads(b)["choices"][0]["text"] if st == 200 else b))
        check(outs[0] == outs[1] and outs[0][0] == 200 and outs[0][1], f"completions fold prompt and stops: {outs}")
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(
            {"model": "cf", "prompt": "THE CAT", "max_tokens": 20, "seed": 5, "stop": ["ON"], "stream": True}).encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            streamed = "".join(json.loads(e[6:])["choices"][0]["text"] for e in r.read().decode().split("\n\n")
                               if e.startswith("data: {"))
        check(streamed == outs[0][1], f"a stream folds the prompt too: {streamed!r} vs {outs[0][1]!r}")
        st, b = call(port, "/v1/datasets")
        cfd = [d for d in json.loads(b)["datasets"] if d["name"] == "cf"]
        check(cfd and cfd[0].get("casefold") is True, f"/v1/datasets says case-folded: {cfd}")
        # a composition whose member was rebuilt so that it no longer fits: 409 saying why, as the log does
        p = subprocess.run([BIN, "--home", home, "-c", f":dataset add notes2 {src}", "-c", "build notes2",
                            "-c", ":dataset compose pw notes notes2", "-c", "build notes2 --pointer-width 5"],
                           capture_output=True, text=True, env=env)
        check("composition pw, made of notes2, no longer loads" in p.stderr, f"build warns: {p.stderr}")
        st, b = call(port, "/v1/count", {"dataset": "pw", "query": "the"})
        check(st == 409 and "pointer widths" in json.loads(b)["error"]["message"],
              f"a composition that no longer loads is not served, and the answer says why: {st} {b}")
    finally:
        srv.send_signal(signal.SIGINT)
        try:
            err = srv.communicate(timeout=10)[1]
        except subprocess.TimeoutExpired:
            srv.kill()
            err = ""
        check(srv.returncode == 0, f"Ctrl-C stops the server cleanly ({srv.returncode}): {err[-300:]}")
        check("dataset pw cannot be served: " in (err or "") and "pointer widths" in (err or ""),
              f"the log says why a dataset is not served: {(err or '')[-400:]}")
print(f"serve: {igtest.passed} passed, {igtest.failed} failed")
sys.exit(1 if igtest.failed else 0)
