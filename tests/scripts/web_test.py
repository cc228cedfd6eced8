#!/usr/bin/env python3
"""The explorer page in a real browser: Debian's chromium, driven by playwright-core from the
npm registry (installed into the build directory on first use; no browser download), against
the server on loopback with a small corpus that holds HTML markup and the bundled Tiny
Shakespeare. Screenshots go to the build directory's meson-logs/.
  web_test.py INFINIGRAM SHAKESPEARE_TXT TESTS_WEB_DIR NPM_CACHE_DIR MESON_LOGS_DIR"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from igtest import free_port, start_server

BIN, DATA, WEB, CACHE, LOGS = (os.path.abspath(a) for a in sys.argv[1:6])
CI = os.environ.get("CI") == "true"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def unavailable(why):
    """Without chromium or the npm registry a developer machine skips, and says so; CI fails."""
    if CI:
        print(why)
        print("web: 0 passed, 1 failed")
        sys.exit(1)
    print("skipped:", why)
    sys.exit(77)


if not os.access(CHROMIUM, os.X_OK):
    unavailable(f"{CHROMIUM} is not installed (apt-get install chromium)")
if not shutil.which("node") or not shutil.which("npm"):
    unavailable("node and npm are not installed")
os.makedirs(CACHE, exist_ok=True)
want = open(os.path.join(WEB, "package.json"), "rb").read()
have_path = os.path.join(CACHE, "package.json")
have = open(have_path, "rb").read() if os.path.exists(have_path) else b""
if have != want or not os.path.isdir(os.path.join(CACHE, "node_modules", "playwright-core")):
    with open(have_path, "wb") as f:
        f.write(want)
    p = subprocess.run(["npm", "install", "--loglevel=error", "--no-audit", "--no-fund", "--prefix", CACHE],
                       capture_output=True, text=True, timeout=600)
    if p.returncode:
        os.remove(have_path)  # try again next time
        unavailable("the npm registry cannot be reached (npm install playwright-core): " + p.stderr.strip()[-500:])

with tempfile.TemporaryDirectory() as tmp:
    home, docs = os.path.join(tmp, "home"), os.path.join(tmp, "docs")
    os.makedirs(docs)
    corpus = {
        "animals.txt": "the cat sat on the mat.\nthe dog sat on the log.\nthe cat and the dog sat together.\n"
                       "un café naïve — the 猫 and the 🐈 sat.\n",
        "markup.html": "<p>Tom &amp; Jerry</p>\n<script>alert(1)</script>\nthe cat ran off the page.\n",
        "genesis.txt": "In the beginning God created the heaven and the earth.\n"
                       "And the earth was without form, and void.\nAnd the LORD said unto the cat: sit.\n",
    }
    for name, text in corpus.items():
        with open(os.path.join(docs, name), "w") as f:
            f.write(text)
    # case folding changes byte lengths (ẞ is 3 bytes, its folding ss 2; İ is 2, its folding 3)
    folded = os.path.join(tmp, "folded.txt")
    with open(folded, "w") as f:
        f.write("Die MAẞE und die Masse.\nİstanbul und ISTANBUL.\n")
    p = subprocess.run([BIN, "--home", home, "-c", f":dataset add web {docs}", "-c", "build web",
                        "-c", f":dataset add shakespeare {DATA}", "-c", "build shakespeare",
                        "-c", f":dataset add folded {folded} --casefold", "-c", "build folded"],
                       capture_output=True, text=True)
    if p.returncode:
        print("setup failed:", p.stderr)
        print("web: 0 passed, 1 failed")
        sys.exit(1)
    # a dataset whose source changed after its build: the datasets panel flags it stale
    notes = os.path.join(tmp, "notes.txt")
    with open(notes, "w") as f:
        f.write("first notes\n")
    subprocess.run([BIN, "--home", home, "-c", f":dataset add old {notes}", "-c", "build old"], capture_output=True)
    with open(notes, "a") as f:
        f.write("more notes\n")
    p = subprocess.run([BIN, "--home", home, "-c", ":dataset check old"], capture_output=True, text=True)
    if "stale" not in p.stdout + p.stderr:
        print("setup: the changed dataset is not stale:", p.stdout, p.stderr)
        print("web: 0 passed, 1 failed")
        sys.exit(1)
    port = free_port()
    srv = start_server([BIN, "--home", home, "serve", "--port", str(port)], port, stderr=subprocess.DEVNULL)
    try:
        env = dict(os.environ, NODE_PATH=os.path.join(CACHE, "node_modules"), CHROMIUM=CHROMIUM)
        p = subprocess.run(["node", os.path.join(WEB, "explorer.cjs"), f"http://127.0.0.1:{port}/", "web",
                            "shakespeare", LOGS, "folded"], env=env, timeout=600)
        rc = p.returncode
    finally:
        srv.send_signal(signal.SIGINT)
        srv.wait(timeout=10)
sys.exit(rc)
