"""Token datasets built from text with a SentencePiece model trained here with spm_train (BPE,
a small vocabulary) on a slice of Tiny Shakespeare, checked end to end against brute force
over the ids `spm_encode --output_format=id` gives for the same text (line by line, as the
build tokenises):

  - build (two jobs) and load; the stored width is the narrowest the vocabulary allows;
  - count of phrases (tokenised like the corpus), predict's ∞-gram distribution, seeded
    generate (every token follows the longest context suffix seen in the corpus), eval's
    perplexity per token and bits per byte of the text the tokens stand for;
  - the server answers text queries alike, and lists the stored width;
  - :dataset info shows the tokenizer and its checksum; a changed tokenizer, then a missing
    one, make load fail naming it, and :dataset check calls the dataset stale;
  - the same build from ids (--format ids and jsonl-ids with the model as --vocab) answers
    alike, and so does the built index attached from elsewhere with the model as --vocab;
    text given to a dataset without a tokenizer is refused;
  - a model whose normalization rules (the precompiled_charsmap trie libsentencepiece walks
    unchecked) point outside themselves is refused at add and attach, naming them: it used to
    crash the first text query, the server with it.

usage: token_build_test.py INFINIGRAM TINYSHAKESPEARE
"""
import json
import math
import os
import shutil
import struct
import subprocess
import time
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from igtest import call, check, free_port, shell, start_server, summary, swap_for_stream  # noqa: E402

BIN, TEXT = sys.argv[1], sys.argv[2]
if not shutil.which("spm_train") or not shutil.which("spm_encode"):
    print("SKIP: spm_train and spm_encode (Debian package sentencepiece) are not installed")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="ig-token-build-")
home = os.path.join(tmp, "home")
corpus = os.path.join(tmp, "shakes.txt")
with open(TEXT, "rb") as f:
    data = f.read()[:300_000]
data = data[: data.rfind(b"\n") + 1]
with open(corpus, "wb") as f:
    f.write(data)
model = os.path.join(tmp, "m.model")
subprocess.run(["spm_train", "--input=" + corpus, "--model_prefix=" + model[:-6], "--vocab_size=800",
                "--model_type=bpe", "--minloglevel=2"], check=True, capture_output=True)
with open(model, "rb") as f:
    good = f.read()  # the model as trained: the test below changes and removes the file


def encode(text):
    """ids per line, as spm_encode gives them."""
    p = subprocess.run(["spm_encode", "--model=" + model, "--output_format=id"], input=text.encode(),
                       capture_output=True, check=True)
    return [[int(x) for x in line.split()] for line in p.stdout.decode().split("\n")[:-1]]


ids = [i for line in encode(data.decode()) for i in line]
V = 800


def count(p):
    n = len(p)
    return sum(1 for i in range(len(ids) - n + 1) if ids[i:i + n] == p)


def following(p):
    """Next ids after p in the corpus (the end of the document counted as none)."""
    n = len(p)
    return Counter(ids[i + n] for i in range(len(ids) - n) if ids[i:i + n] == p)


def infgram(ctx):
    """∞-gram distribution: the longest suffix of ctx followed by something in the corpus."""
    for k in range(len(ctx), -1, -1):
        c = following(ctx[len(ctx) - k:])
        if c:
            return k, c
    return 0, Counter()


def jl(p):
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


out = jl(shell(BIN, home, ":dataset add ts %s --tokenizer %s" % (corpus, model), "build ts --jobs 2", "load ts",
               "count \"wherefore art thou\"", "count \"ROMEO:\"", "count \"the king\"", "count \"zzzqqq\"",
               "predict \"ROMEO:\"", "predict \"First Citizen:\"", "generate \"ROMEO:\" --max 30 --seed 7",
               "eval --text \"First Citizen: Before we proceed any further, hear me speak.\"",
               ":dataset info ts"))
check(all("error" not in o for o in out), "the tokenised dataset answers: %s" % [o.get("error") for o in out])
by = [o for o in out]
build = by[1]
check(build.get("documents") == 1, "one document: %s" % build)
counts = [o for o in out if o.get("command") == "count"]
for o, phrase in zip(counts, ["wherefore art thou", "ROMEO:", "the king", "zzzqqq"]):
    q = encode(phrase)[0]
    check(o.get("query_ids") == q, "%s tokenised as spm_encode does: %s against %s" % (phrase, o.get("query_ids"), q))
    check(o.get("count") == count(q), "count %s: %s against %d" % (phrase, o.get("count"), count(q)))
for o in [o for o in out if o.get("command") == "predict"]:
    ctx = o["context_ids"]
    k, c = infgram(ctx)
    total = sum(c.values())
    check(o.get("suffix_count") == total, "predict %s: suffix count %s against %d" % (ctx, o.get("suffix_count"), total))
    check(o.get("longest_match") == k, "predict %s: longest match %s against %d" % (ctx, o.get("longest_match"), k))
    for cand in o["candidates"]:
        want = c.get(cand["token_id"], 0)
        check(cand["count"] == want and abs(cand["prob"] - want / total) < 1e-12,
              "predict %s: id %d count %d against %d" % (ctx, cand["token_id"], cand["count"], want))
    best = sorted(c.values(), reverse=True)[:len(o["candidates"])]
    check([x["count"] for x in o["candidates"]] == best, "predict %s: the most frequent next tokens" % ctx)
gen = [o for o in out if o.get("command") == "generate"][0]
hist = encode("ROMEO:")[0]
for t in gen["text_ids"]:
    k, c = infgram(hist)
    check(c.get(t, 0) > 0, "generate: %d follows the longest context suffix (%d tokens)" % (t, k))
    hist.append(t)
check(len(gen["text_ids"]) == 30, "generate: 30 tokens")
ev = [o for o in out if o.get("command") == "eval"][0]
text = "First Citizen: Before we proceed any further, hear me speak."
q = encode(text)[0]
check(ev.get("tokens") == len(q), "eval: %s tokens against %d" % (ev.get("tokens"), len(q)))
lnp = 0.0
for i in range(1, len(q)):
    k, c = infgram(q[max(0, i - 100):i])
    lnp += math.log(c[q[i]] / sum(c.values())) if c.get(q[i]) else math.log(1e-10)
check(abs(ev["perplexity"] - math.exp(-lnp / (len(q) - 1))) < 1e-6 * ev["perplexity"],
      "eval perplexity %s against %s" % (ev["perplexity"], math.exp(-lnp / (len(q) - 1))))
# bits per byte: of the text the scored tokens (all but the first) stand for, pieces decoded
pieces = {}
with open(model[:-6] + ".vocab", encoding="utf-8") as f:
    for n, line in enumerate(f):
        pieces[n] = line.split("\t")[0]
nbytes = sum(len(pieces[t].replace("\u2581", " ").encode()) for t in q[1:])
check(ev.get("text_bytes") == nbytes, "eval: %s bytes of text against %d" % (ev.get("text_bytes"), nbytes))
check(abs(ev["bits_per_byte"] - (-lnp / math.log(2) / nbytes)) < 1e-9, "eval bits per byte")
info = out[-1]
check(info.get("tokens", {}).get("tokenizer") == model and len(info["tokens"].get("tokenizer_checksum", "")) == 16,
      "info shows the tokenizer: %s" % info.get("tokens"))

check(info["tokens"].get("token_width") == 2, "info: stored as u16: %s" % info.get("tokens"))
# the stored width: 800 ids fit u16
man = json.load(open(os.path.join(info["index_path"], "tokens.json")))
check(man["token_width"] == 2 and man["tokens"] == len(ids), "manifest: u16, %d tokens: %s" % (len(ids), man))
size = sum(f["bytes"] for s in man["shards"] for f in s["files"] if f["name"].split(".")[0] in ("tokenized", "table"))
check(size / man["tokens"] <= 7, "%.2f bytes a token (at most 7)" % (size / man["tokens"]))

# the same ids given as ids: the same answers
u16 = os.path.join(tmp, "ids.u16")
with open(u16, "wb") as f:
    f.write(struct.pack("<%dH" % (len(ids) + 1), *(ids + [65535])))
jsonl = os.path.join(tmp, "ids.jsonl")
with open(jsonl, "w") as f:
    f.write(json.dumps({"ids": ids}) + "\n")
out = jl(shell(BIN, home, ":dataset add u %s --format ids --dtype u16 --separator 65535 --vocab %s" % (u16, model),
               ":dataset add j %s --format jsonl-ids --vocab %s" % (jsonl, model), "build u", "build j",
               "load u", "count \"wherefore art thou\"", "predict \"ROMEO:\"", "load j", "count \"wherefore art thou\"",
               "predict \"ROMEO:\""))
check(all("error" not in o for o in out), "ids datasets answer: %s" % [o.get("error") for o in out])
cs = [o for o in out if o.get("command") == "count"]
check(all(o.get("count") == count(encode("wherefore art thou")[0]) for o in cs), "ids datasets count alike")
ps = [o for o in out if o.get("command") == "predict"]
check(all(p["candidates"] == ps[0]["candidates"] for p in ps), "ids datasets predict alike")
# the index a build wrote, attached from elsewhere with the model as --vocab: text queries work there too
att = os.path.join(tmp, "attached")
shutil.copytree(info["index_path"], att)
out = jl(shell(BIN, home, ":dataset attach att %s --format infini-gram --vocab %s" % (att, model), "load att",
               "count \"wherefore art thou\"", "predict \"ROMEO:\""))
check(all("error" not in o for o in out), "attached with a .model vocabulary: %s" % [o.get("error") for o in out])
check(out[2].get("count") == count(encode("wherefore art thou")[0]), "attached: count %s" % out[2])
check(out[3].get("candidates") == ps[0]["candidates"], "attached: predict alike")
out = jl(shell(BIN, home, ":dataset add n %s --format ids --dtype u16 --separator 65535" % u16, "build n", "load n",
               "count \"ROMEO\""))
check("ids" in out[-1].get("error", {}).get("message", ""), "text on a dataset without a tokenizer: %s" % out)
# a built token dataset's file grown to a sparse terabyte (its time then after the build's): the
# load compares sizes before it reads, so the refusal is at once and takes no memory
ninfo = jl(shell(BIN, home, ":dataset info n"))[-1]
grown = os.path.join(ninfo["index_path"], "offset.0")
kept_size = os.path.getsize(grown)
os.truncate(grown, 1 << 40)
t0 = time.monotonic()
p = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys\n"
                    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
                    "print(r.stdout.strip()); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                    BIN, "--home", home, "--json", "-c", "load n"], capture_output=True, text=True, timeout=60)
took = time.monotonic() - t0
said, grown_kib = p.stdout.strip().rsplit("\n", 1)
check("offset.0: 1099511627776 bytes, the manifest says %d" % kept_size in said and took < 5 and int(grown_kib) < 200000,
      "a sparse terabyte in a token file: %.1f s, %s KiB: %s" % (took, grown_kib, said[-300:]))
os.truncate(grown, kept_size)

# the server: text tokenised by the dataset's model, the stored width listed
port = free_port()
srv = start_server([BIN, "--home", home, "serve", "--port", str(port), "--datasets", "ts"], port,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    st, body, _ = call(port, "/v1/datasets")
    check(st == 200 and json.loads(body)["datasets"][0].get("token_width") == 2, "HTTP datasets: %s %s" % (st, body))
    st, body, _ = call(port, "/v1/count", {"dataset": "ts", "query": "wherefore art thou"})
    h = json.loads(body)
    check(st == 200 and h["count"] == count(encode("wherefore art thou")[0]) and
          h["query_ids"] == encode("wherefore art thou")[0], "HTTP count of text: %s %s" % (st, body))
    st, body, _ = call(port, "/v1/predict", {"dataset": "ts", "query": "ROMEO:", "top": 3})
    h = json.loads(body)
    k, c = infgram(encode("ROMEO:")[0])
    check(st == 200 and [x["count"] for x in h["candidates"]] == sorted(c.values(), reverse=True)[:3],
          "HTTP predict of text: %s %s" % (st, body))
    # the model changed under the running server: its text queries are refused (409), naming it
    st0 = os.stat(model)
    os.utime(model, ns=(st0.st_atime_ns, st0.st_mtime_ns + 1_000_000_000))
    st, body, _ = call(port, "/v1/count", {"dataset": "ts", "query": "wherefore art thou"})
    check(st == 409 and model in json.loads(body)["error"]["message"],
          "a model changed under the server is named (409): %s %s" % (st, body))
    os.utime(model, ns=(st0.st_atime_ns, st0.st_mtime_ns))
finally:
    srv.terminate()
    srv.wait()

# the model changed under a shell that loaded the dataset: the next query says so
sh = subprocess.Popen([BIN, "--home", home, "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.STDOUT, text=True)
sh.stdin.write("load ts\n")
sh.stdin.flush()
first = sh.stdout.readline()
st0 = os.stat(model)
os.utime(model, ns=(st0.st_atime_ns, st0.st_mtime_ns + 1_000_000_000))
sh.stdin.write('count "wherefore art thou"\n')
sh.stdin.close()
rest = sh.stdout.read()
sh.wait()
os.utime(model, ns=(st0.st_atime_ns, st0.st_mtime_ns))
check('"load"' in first and model in rest and "changed" in rest,
      "a model changed under the shell is named at the next query: %s %s" % (first, rest))

# the tokenizer changed, then missing: load refuses it, check calls it stale
with open(model, "ab") as f:
    f.write(b"\n")
out = jl(shell(BIN, home, "load ts", ":dataset check ts"))
msg = out[0].get("error", {}).get("message", "")
check(model in msg and "changed" in msg, "a changed tokenizer is refused: %s" % out[0])
check(out[1].get("stale") is True, "check: stale: %s" % out[1])
os.rename(model, model + ".gone")
out = jl(shell(BIN, home, "load ts"))
msg = out[0].get("error", {}).get("message", "")
check(model in msg and "cannot be read" in msg, "a missing tokenizer is refused: %s" % out[0])
out = jl(shell(BIN, home, "build ts"))
check(model in out[0].get("error", {}).get("message", ""), "build refuses a missing tokenizer: %s" % out[0])
# a file that is not a model
bad = os.path.join(tmp, "bad.model")
with open(bad, "wb") as f:
    f.write(b"\x01\x02 not a model")
out = jl(shell(BIN, home, ":dataset add b %s --tokenizer %s" % (corpus, bad)))
check("bad.model" in out[0].get("error", {}).get("message", ""), "a bad model is refused at add: %s" % out[0])

# Text reaches the tokenizer as it is, as spm_encode reads it: a model whose normaliser is the
# identity (the golden one) sees decomposed accents as they are written, and so do text queries.
ident = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "data", "shakes-500.model")
nfd = os.path.join(tmp, "nfd.txt")
nfd_text = "Cafe\u0301 and cafe\u0301 and Caf\u00e9 again.\nThe re\u0301sume\u0301 is here.\n"
with open(nfd, "w", encoding="utf-8") as f:
    f.write(nfd_text)


def encode_with(m, text):
    p = subprocess.run(["spm_encode", "--model=" + m, "--output_format=id"], input=text.encode(),
                       capture_output=True, check=True)
    return [int(x) for x in p.stdout.split()]


want = encode_with(ident, nfd_text)
out = jl(shell(BIN, home, ":dataset add nfd %s --tokenizer %s" % (nfd, ident), "build nfd", "load nfd",
               "count \"cafe\u0301\"", ":dataset info nfd"))
check(all("error" not in o for o in out), "NFD text: %s" % [o.get("error") for o in out])
man = json.load(open(os.path.join(out[-1]["index_path"], "tokens.json")))
raw = open(os.path.join(out[-1]["index_path"], "tokenized.0"), "rb").read()
got = list(struct.unpack("<%dH" % (len(raw) // 2), raw))[1:] if man["token_width"] == 2 else list(raw)[1:]
check(got == want, "NFD text: the ids spm_encode gives: %s against %s" % (got, want))
q = encode_with(ident, "cafe\u0301")
check(out[3].get("query_ids") == q and out[3].get("count") == sum(
    1 for i in range(len(want)) if want[i:i + len(q)] == q), "NFD query counted as spm_encode ids: %s" % out[3])
check(out[-1].get("normalize") is False, "NFD: recorded as not normalised: %s" % out[-1].get("normalize"))
# case folding and decontamination are for bytes: refused on token datasets, not ignored
ev = os.path.join(tmp, "ev.txt")
with open(ev, "w") as f:
    f.write("First Citizen: Before we proceed any further\n")
out = jl(shell(BIN, home, ":dataset add cf %s --tokenizer %s --casefold" % (nfd, ident),
               ":dataset add dc %s --tokenizer %s --decontaminate %s" % (nfd, ident, ev),
               ":dataset add cfi %s --format ids --dtype u16 --separator 65535 --casefold" % u16))
for o, opt in zip(out, ["--casefold", "--decontaminate", "--casefold"]):
    check(opt in o.get("error", {}).get("message", ""), "%s refused on a token dataset: %s" % (opt, o))

# Text the tokenizer turns into no token is refused rather than taken for the empty pattern
# (which every position matches); eval needs two tokens to score one.
out = jl(shell(BIN, home, "load nfd", "count \"  \"", "predict \"\\n\"", "eval --text \"\\n\"",
               "eval --text \"The\"", "count \"\""))
for o in out[1:3]:
    check("no token" in o.get("error", {}).get("message", ""), "text of no tokens refused: %s" % o)
check("no token" in out[3].get("error", {}).get("message", ""), "eval of no tokens refused: %s" % out[3])
check("nothing to score" in out[4].get("error", {}).get("message", ""), "eval of one token refused: %s" % out[4])
check(out[5].get("count") == len(want) + 1, "count of the empty text: every position: %s" % out[5])

# A SentencePiece model given as the --vocab of ids tokenises text queries too: changed after
# the build, it is refused as a changed --tokenizer is (it would tokenise queries otherwise).
vm = os.path.join(tmp, "vocab.model")
shutil.copy(ident, vm)
idsf = os.path.join(tmp, "few.u16")
with open(idsf, "wb") as f:
    f.write(struct.pack("<%dH" % (len(q) + 1), *(q + [65535])))
out = jl(shell(BIN, home, ":dataset add vm %s --format ids --dtype u16 --separator 65535 --vocab %s" % (idsf, vm),
               "build vm", "load vm", "count \"cafe\u0301\""))
check(all("error" not in o for o in out) and out[-1].get("count") == 1, "ids with a model as vocabulary: %s" % out)
with open(model + ".gone", "rb") as f, open(vm, "wb") as g:  # the BPE model trained above (a byte was added)
    g.write(f.read()[:-1])
out = jl(shell(BIN, home, "load vm", ":dataset check vm"))
check(vm in out[0].get("error", {}).get("message", "") and "changed" in out[0]["error"]["message"],
      "a changed vocabulary is refused at load: %s" % out[0])
check(out[1].get("stale") is True, "check: a changed vocabulary makes the dataset stale: %s" % out[1])

# Bits per byte need the text of every scored token: an id beyond the vocabulary has none (its
# "[id]" label is not text), so eval gives no bits per byte then, and does with ids inside it.
out = jl(shell(BIN, home, "load nfd", "eval --ids %d,%d,500" % (q[0], q[1]), "eval --ids %d,%d,%d" % (q[0], q[1], q[2])))
check("bits_per_byte" not in out[1] and "perplexity" in out[1], "eval: an id beyond the vocabulary, no bits per byte: %s"
      % out[1])
check("bits_per_byte" in out[2], "eval: ids inside the vocabulary, bits per byte: %s" % out[2])
check(out[2].get("source") == "ids", "eval of ids says so (as the request's field does): %s" % out[2].get("source"))

# --range cuts text files; ids files are read whole, so it is refused there rather than ignored
out = jl(shell(BIN, home, ":dataset add rg %s --format ids --dtype u16 --separator 65535 --range 0:4" % idsf,
               ":dataset add rg2 %s --format jsonl-ids --range 0:50%%" % jsonl))
for o in out:
    check("--range" in o.get("error", {}).get("message", ""), "--range refused on ids: %s" % o)

# Memory: the text is tokenised a batch at a time (an eighth of --memory), not held whole
# beside its ids. Twelve files of 1 MB under --memory 8M: beyond the ids (4 bytes each, held
# until the end), the build's peak grows over that of a tiny build by less than the text
# (holding the text whole and each id twice took about three times the text).
big = os.path.join(tmp, "bigtext")
os.mkdir(big)
with open(TEXT, "rb") as f:
    mb = f.read()[:1 << 20]
for i in range(12):
    with open(os.path.join(big, "part%02d.txt" % i), "wb") as f:
        f.write(mb)


def peak_kib(*commands):
    """The peak resident size (KiB) of one run of the program."""
    args = [BIN, "--home", home, "--json"] + [x for c in commands for x in ("-c", c)]
    p = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys\n"
                        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
                        "print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"] + args,
                       capture_output=True, text=True, check=True)
    rc, kib = p.stdout.split()
    check(rc == "0", "%s: status %s" % (commands, rc))
    return int(kib)


jl(shell(BIN, home, ":dataset add bigt %s --tokenizer %s" % (big, ident), ":dataset add tiny %s --tokenizer %s" % (nfd, ident)))
small = peak_kib("build tiny --memory 8M --jobs 2")
large = peak_kib("build bigt --memory 8M --jobs 2")
info = jl(shell(BIN, home, ":dataset info bigt"))[0]
ntok = json.load(open(os.path.join(info["index_path"], "tokens.json")))["tokens"]
# a sanitizer keeps freed memory in quarantine: the figure is for plain builds
libs = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout
sanitized = "libasan" in libs or "libtsan" in libs or "libubsan" in libs
check(sanitized or large - small - ntok * 4 / 1024 < 12 * len(mb) / 1024, "memory: 12 MB of text (%d tokens) built under --memory "
      "8M took %d KiB more than a tiny build (%d KiB)" % (ntok, large - small, small))

# A model replaced after the build by something that is not a regular file (a FIFO would block
# reading it, /dev/zero never end): load, :dataset check and build refuse it at once.
swap = os.path.join(tmp, "swap.model")
shutil.copy(ident, swap)
out = jl(shell(BIN, home, ":dataset add sw %s --tokenizer %s" % (nfd, swap), "build sw"))
check(all("error" not in o for o in out), "swap: built: %s" % out)
for kind in ("fifo", "zero"):
    swap_for_stream(swap, kind)
    try:
        p = subprocess.run([BIN, "--home", home, "--json", "-c", "load sw", "-c", ":dataset check sw", "-c", "build sw"],
                           capture_output=True, text=True, timeout=20)
        out = jl(p)
        check(len(out) == 3 and all("not a regular file" in json.dumps(o) for o in out),
              "a %s for a model is refused: %s" % (kind, out))
    except subprocess.TimeoutExpired:
        check(False, "a %s for a model is refused, not read: timed out" % kind)

# A model whose normalization rules are damaged. libsentencepiece walks the precompiled_charsmap
# trie (protobuf field 2 of the NormalizerSpec, field 3 of the ModelProto) without a bounds
# check: each of these crashed the first text query, and the server with it.
def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def fields(b):
    """(number, wire type, raw bytes of the whole field, payload of a length-delimited one)."""
    i, out = 0, []
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wt, payload = key & 7, None
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            n, i = varint(b, i)
            payload, i = b[i:i + n], i + n
        out.append((key >> 3, wt, b[start:i], payload))
    return out


def with_charsmap(model_bytes, blob):
    def ld(num, payload):
        return put_varint(num << 3 | 2) + put_varint(len(payload)) + payload
    out = b""
    for num, wt, raw, payload in fields(model_bytes):
        if num == 3:
            raw = ld(3, b"".join(ld(2, blob) if n == 2 else r for n, _, r, _ in fields(payload)))
        out += raw
    return out


cm = [p for n, _, _, p in fields([p for n, _, _, p in fields(good) if n == 3][0]) if n == 2][0]
tsize = struct.unpack("<I", cm[:4])[0]
root_far = bytearray(cm)  # the root's offset sent past the trie's units (no extension bit)
root_far[4:8] = struct.pack("<I", ((tsize // 4 + 1) << 10) | (struct.unpack("<I", cm[4:8])[0] & 0x3FF))
damaged = {  # each one libsentencepiece itself takes, and then reads outside the blob with
    "a trie of 0xFF units": struct.pack("<I", 1024) + b"\xff" * 1024 + b"abc\0",
    "a rule past the strings": cm[:4 + tsize],  # the trie whole, its rules' strings cut off
    "a root past the trie": bytes(root_far),
}
for k, (what, blob) in enumerate(damaged.items()):
    bad = os.path.join(tmp, "bad.model")
    with open(bad, "wb") as f:
        f.write(with_charsmap(good, blob))
    p = subprocess.run([BIN, "--home", home, "--json", "-c", ":dataset add bad%d %s --tokenizer %s" % (k, corpus, bad),
                        "-c", ":dataset attach badatt%d %s --format infini-gram --vocab %s" % (k, att, bad)],
                       capture_output=True, text=True, timeout=60)
    out = jl(p)
    msgs = [o.get("error", {}).get("message", "") for o in out]
    check(p.returncode != 0 and len(msgs) == 2 and all("normalization rule" in m and bad in m for m in msgs),
          "%s: refused, named: %s" % (what, msgs))
# the same rules, whole, still pass (a rewrite of the model that changes nothing)
same = os.path.join(tmp, "same.model")
with open(same, "wb") as f:
    f.write(with_charsmap(good, cm))
out = jl(shell(BIN, home, ":dataset add same %s --tokenizer %s" % (corpus, same)))
check(all("error" not in o for o in out), "the model rewritten with its own rules is taken: %s" % out)

shutil.rmtree(tmp)
sys.exit(summary())
