#!/usr/bin/env python3
"""The interactive shell driven through a real pseudo-terminal (standard library only).

usage: interactive_test.py INFINIGRAM_BINARY [--extra]

Each session runs the binary on the slave side of a pty (pty.fork: its own session,
the pty as controlling terminal, 80x24), with a temporary home, HOME and INPUTRC, so
nothing of the user's setup leaks in. Keystrokes are written to the master side; every
read has a timeout and a global alarm stops the whole test after 58 s.

Checked:
- first start on an empty catalog registers, builds and loads "shakespeare", prints the
  hint and the prompt "infinigram[shakespeare]> ";
- a command runs and prints its result;
- TAB completes ":datas" to ":dataset " and "load sha" to "load shakespeare" (and the
  completed lines run);
- Ctrl-C at the prompt clears the line; the shell stays alive and the next command works;
- Ctrl-C during the build of a ~30 MB generated file reports the cancellation, the shell
  stays alive and the previous index of that dataset still answers;
- HOME/history holds the commands (not the line cleared by Ctrl-C);
- Ctrl-D exits; a second start reopens the last dataset without rebuilding, Up recalls
  the last command, and Ctrl-D after a clean session exits with status 0;
- on a pty the highlighted match of "count --positions" is coloured; with NO_COLOR=1
  the output has no ESC byte.

--extra adds checks for known rough edges (Ctrl-C inside reverse-i-search or the
"Display all N possibilities?" query, Ctrl-C during a long listing, 80-column fit).
"""
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import struct
import sys
import tempfile
import termios
import time

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
EXTRA = "--extra" in sys.argv[2:]
T0 = time.monotonic()
passed = failed = 0
live = []  # sessions to kill if the test stops early


def check(cond, what, detail=None):
    global passed, failed
    if cond:
        passed += 1
        print("ok:", what, flush=True)
    else:
        failed += 1
        print("FAIL:", what, flush=True)
        if detail is not None:
            print("   ", detail if isinstance(detail, str) else repr(detail)[-1500:], flush=True)


def finish():
    for s in live:
        s.kill()
    print("interactive: %d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(1 if failed or passed == 0 else 0)


def on_alarm(sig, frame):
    global failed
    failed += 1
    print("FAIL: whole test exceeded its time limit (%.0f s)" % (time.monotonic() - T0), flush=True)
    finish()


PROMPT_RE = rb"infinigram(\[[^\]\r\n]*\])?> "


class Session:
    """One infinigram process on a pty."""

    def __init__(self, env, args=()):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child: the pty slave is stdin/stdout/stderr and controlling tty
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
                os.execve(BIN, [BIN, *args], env)
            finally:
                os._exit(127)
        self.buf = b""  # everything read so far
        self.pos = 0  # start of what expect() has not consumed yet
        self.status = None
        self.eof = False
        live.append(self)

    def _fill(self, deadline):
        """Reads what is available until deadline; False at EOF or timeout."""
        left = deadline - time.monotonic()
        if left <= 0 or self.eof:
            return False
        r, _, _ = select.select([self.fd], [], [], min(left, 0.2))
        if not r:
            return True
        try:
            d = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the slave
            d = b""
        if not d:
            self.eof = True
            return False
        self.buf += d
        return True

    def expect(self, pattern, timeout):
        """Waits for regex `pattern` after the last match; returns (match, text before it
        and the match) or (None, unread text) on timeout/EOF. Never blocks past timeout."""
        rx = re.compile(pattern, re.S)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.buf, self.pos)
            if m:
                seg = self.buf[self.pos:m.end()]
                self.pos = m.end()
                return m, seg
            if not self._fill(deadline):
                m = rx.search(self.buf, self.pos)
                if m:
                    continue
                return None, self.buf[self.pos:]

    def settle(self, quiet=0.3, timeout=3):
        """Reads until nothing arrives for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        n = len(self.buf)
        last = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - last < quiet:
            if not self._fill(min(deadline, time.monotonic() + quiet)):
                break
            if len(self.buf) != n:
                n = len(self.buf)
                last = time.monotonic()

    def drain(self, quiet=0.3):
        """Reads until quiet and forgets it (e.g. readline's redisplay after ^C)."""
        self.settle(quiet)
        self.pos = len(self.buf)

    def send(self, data):
        os.write(self.fd, data if isinstance(data, bytes) else data.encode())

    def command(self, line, timeout=10):
        """Types a line, waits for the next prompt; returns the output between them."""
        self.send(line + "\r")
        m, seg = self.expect(PROMPT_RE, timeout)
        return (seg if m else None), seg

    def wait(self, timeout):
        """Waits for the process to exit; returns its exit status or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(st)
                live.remove(self)
                os.close(self.fd)
                return self.status
            self._fill(min(deadline, time.monotonic() + 0.1))
        return None

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass


def make_big_file(path, target):
    """~target bytes of Shakespeare-like text, varied so that it is not one repeated block."""
    shakes = SMALL_TEXT
    variants = [shakes, shakes.upper(), shakes.replace(b"e", b"3"), shakes.replace(b"a", b"@"),
                shakes.lower(), shakes.replace(b" ", b"  ")]
    n = i = 0
    with open(path, "wb") as f:
        while n < target:
            chunk = variants[i % len(variants)].replace(b"the", b"the%d" % i)
            f.write(chunk)
            n += len(chunk)
            i += 1


def main():
    global SMALL_TEXT
    if not BIN or not os.access(BIN, os.X_OK):
        print("usage: interactive_test.py INFINIGRAM_BINARY [--extra]", file=sys.stderr)
        sys.exit(2)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(58)

    tmp = tempfile.mkdtemp(prefix="ig-interactive-")
    try:
        run(tmp)
    finally:
        for s in list(live):
            s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    signal.alarm(0)
    finish()


def run(tmp):
    global SMALL_TEXT
    home = os.path.join(tmp, "home")
    with open(os.path.join(tmp, "inputrc"), "w") as f:
        # bracketed paste makes readline write ESC sequences of its own around each line
        f.write("set enable-bracketed-paste off\nset bell-style none\n")
    base_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tmp,
        "TERM": "xterm",
        "INPUTRC": os.path.join(tmp, "inputrc"),
        "INFINIGRAM_HOME": home,
        "LANG": "C.UTF-8",
    }
    for k in ("INFINIGRAM_DATASETS", "LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if k in os.environ:
            base_env[k] = os.environ[k]

    # ---- session 1: first start -------------------------------------------------------
    s = Session(base_env)
    m, seg = s.expect(rb"infinigram\[shakespeare\]> ", 30)
    check(m is not None, "first start shows the prompt infinigram[shakespeare]> ", seg)
    if not m:
        return
    check(b"Welcome" in seg and b'"shakespeare"' in seg, "first start announces the demo dataset", seg)
    check(re.search(rb"built shakespeare: [0-9.]+ [kM]B, 1 doc, 1 shard", seg) is not None,
          "first start builds shakespeare", seg)
    check(b"Try:" in seg and b"count" in seg, "first start prints a hint", seg)
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "tinyshakespeare.txt")
    check(b"tinyshakespeare.txt" in seg, "the welcome line names the bundled file", seg)
    SMALL_TEXT = open(bundled, "rb").read() if os.path.exists(bundled) else None

    out, raw = s.command('count "wherefore art thou"')
    check(out is not None and re.search(rb"\r\n1\r\n", out) is not None,
          'count "wherefore art thou" prints 1', raw)

    # ---- tab completion ----
    s.send(":datas\t")
    m, seg = s.expect(rb":dataset ", 5)
    check(m is not None, "TAB completes :datas to ':dataset '", seg)
    out, raw = s.command("list")
    check(out is not None and re.search(rb"shakespeare +built", out) is not None,
          "the completed ':dataset list' runs", raw)

    s.send("load sha\t")
    m, seg = s.expect(rb"load shakespeare ", 5)
    check(m is not None, "TAB completes 'load sha' to 'load shakespeare'", seg)
    out, raw = s.command("")
    check(out is not None and b"loaded shakespeare" in out, "the completed 'load shakespeare' runs", raw)

    # file names where a command takes a file: eval FILE, mix --llm FILE
    with open(os.path.join(tmp, "evalsample-only.txt"), "w") as f:
        f.write("ROMEO: what light\n")
    s.send("eval %s/evalsample-o\t" % tmp)
    m, seg = s.expect(rb"evalsample-only\.txt ", 5)
    check(m is not None, "TAB completes eval's FILE", seg)
    out, raw = s.command("")
    check(out is not None and b"perplexity" in out, "the completed eval runs", raw)
    s.send('mix "a" --llm %s/evalsample-o\t' % tmp)
    time.sleep(0.5)  # the completion redraws the line (it wraps at the terminal's width)
    out, raw = s.command("")  # not JSON: the error names the file the TAB completed
    check(out is not None and b"evalsample-only.txt" in out.replace(b"\r", b"").replace(b"\n", b""),
          "TAB completes mix --llm FILE (not the words FILE and JSON)", raw)

    # a paste of several lines (bracketed: readline takes it as one line) runs each; a quoted
    # text with a newline in it stays one text
    s.send(b'\x1b[200~count "Romeo"\n# a 12" record\ncount "ROMEO:\ncount"\ncount Juliet\x1b[201~')
    out, raw = s.command("")
    check(out is not None and re.search(rb"\r\n128\r\n", out) is not None and re.search(rb"\r\n0\r\n", out)
          is not None and re.search(rb"\r\n50\r\n", out) is not None and b"error" not in out,
          "pasted commands run each (a comment's lone quote opens nothing)", raw)
    s.send("eval --max-con\t")
    m, seg = s.expect(rb"--max-context ", 5)
    check(m is not None, "TAB completes eval's options too", seg)
    s.send(b"\x15")  # Ctrl-U: the line is left unrun
    s.drain()

    # ---- Ctrl-C at the prompt ----
    s.send("count half typed")
    s.expect(rb"half typed", 5)  # echoed: the tty would otherwise flush it with the ^C
    s.send(b"\x03")
    m, seg = s.expect(PROMPT_RE, 5)
    check(m is not None and b"^C" in seg, "Ctrl-C at the prompt gives a fresh prompt", seg)
    s.drain()
    check(s.wait(0) is None, "Ctrl-C at the prompt does not end the shell")
    out, raw = s.command("count Romeo")
    check(out is not None and re.search(rb"\r\n128\r\n", out) is not None and b"half" not in out,
          "after Ctrl-C the line is gone and the next command works", raw)

    # colour on a pty (default): the match in a snippet is highlighted
    out, raw = s.command("count --positions 2 Romeo")
    check(out is not None and re.search(rb"\x1b\[[0-9;]*mRomeo\x1b\[", out) is not None,
          "on a pty the match in a snippet is coloured", raw)

    # ---- Ctrl-C during a build ----
    big = os.path.join(tmp, "big.txt")
    if SMALL_TEXT is None:
        check(False, "found the bundled tinyshakespeare.txt from the welcome line", seg)
        return
    with open(big, "wb") as f:  # first version: small, with a marker the big one lacks
        f.write(SMALL_TEXT + b"\nOLDMARKER OLDMARKER\n")
    out, raw = s.command(':dataset add big "%s"' % big)
    check(out is not None and b"added big" in out, ":dataset add big FILE", raw)
    out, raw = s.command("build big", timeout=20)
    check(out is not None and b"built big" in out, "build big (small first version)", raw)
    out, raw = s.command("load big")
    check(out is not None and b"loaded big" in out and out.endswith(b"infinigram[big]> "),
          "load big; prompt shows infinigram[big]> ", raw)
    t = time.monotonic()
    make_big_file(big, 30_000_000)
    gen_s = time.monotonic() - t

    s.send("build big\r")
    m, seg = s.expect(rb"(read|sort|write) *(\[|shard)", 15)  # past the scan: into the real work
    check(m is not None, "build of a ~30 MB file draws a progress bar", seg)
    s.send(b"\x03")
    t = time.monotonic()
    m, seg = s.expect(rb"cancel[^\r\n]*", 30)
    cancel_s = time.monotonic() - t
    check(m is not None and b"built big" not in seg,
          "Ctrl-C during the build reports the cancellation (%.1f s after ^C)" % cancel_s, seg)
    if os.environ.get("IG_TEST_VERBOSE"):
        print("    build output:", repr(seg[-400:]))
    m, seg2 = s.expect(rb"infinigram\[big\]> ", 10)
    check(m is not None, "after the cancelled build the prompt is back", seg + seg2)
    out, raw = s.command('count "OLDMARKER"')
    check(out is not None and re.search(rb"\r\n2\r\n", out) is not None,
          "the previous index of big still answers after the cancelled build", raw)
    out, raw = s.command("count Romeo")
    check(out is not None and re.search(rb"\r\n128\r\n", out) is not None,
          "the shell still runs commands after the cancelled build", raw)

    # ---- Ctrl-D ----
    s.send(b"\x04")
    st = s.wait(10)
    check(st is not None, "Ctrl-D exits the shell (status %r)" % st)
    # the session had a failed (cancelled) command; per the contract the status reflects it
    check(st in (0, 1), "Ctrl-D after a cancelled build exits with 0 or 1, not a crash (%r)" % st)

    hist_path = os.path.join(home, "history")
    hist = open(hist_path, "rb").read().splitlines() if os.path.exists(hist_path) else []
    check(b'count "wherefore art thou"' in hist and b"count Romeo" in hist and b"build big" in hist,
          "HOME/history holds the commands", hist)
    check(not any(b"half typed" in h for h in hist), "a line cleared by Ctrl-C is not in history", hist)

    # ---- session 2: restart ----
    s = Session(base_env)
    m, seg = s.expect(PROMPT_RE, 15)
    check(m is not None and m.group(0) == b"infinigram[big]> ",
          "second start reopens the last dataset (prompt infinigram[big]> )", seg)
    # (a warning that big is stale is expected: its source changed after the build)
    check(b"built" not in seg and b"Welcome" not in seg and not re.search(rb"(scan|read|sort) *\[", seg),
          "second start does not rebuild anything", seg)
    s.send(b"\x1b[A")  # Up
    m, seg = s.expect(rb"count Romeo", 5)
    check(m is not None, "Up recalls the last command of the previous session", seg)
    out, raw = s.command("")
    check(out is not None and re.search(rb"\r\n128\r\n", out) is not None, "the recalled command runs", raw)
    s.send(b"\x04")
    st = s.wait(10)
    check(st == 0, "Ctrl-D after a clean session exits with status 0 (got %r)" % st)

    # ---- a history file that is a FIFO: readline would wait for a writer before the prompt ----
    fifo = os.path.join(tmp, "hist-fifo")
    os.mkfifo(fifo)
    s = Session(dict(base_env, INFINIGRAM_HISTFILE=fifo))
    m, seg = s.expect(PROMPT_RE, 15)
    check(m is not None and b"not a regular file" in seg and b"history is not kept" in seg,
          "a FIFO as the history file: a warning, then the prompt", seg)
    s.send(b"\x04")
    check(s.wait(10) is not None, "that session exits on Ctrl-D")

    # ---- session 3: NO_COLOR ----
    s = Session(dict(base_env, NO_COLOR="1"))
    m, seg = s.expect(PROMPT_RE, 15)
    check(m is not None, "NO_COLOR=1 start shows the prompt", seg)
    out, raw = s.command("load shakespeare")
    out, raw = s.command("count --positions 3 Romeo")
    check(out is not None and b"Romeo" in out and b"\x1b" not in out,
          "with NO_COLOR=1 the output has no ESC byte", raw)
    out, raw = s.command("nosuchcommand")
    check(out is not None and b"unknown command" in out and b"\x1b" not in out,
          "with NO_COLOR=1 error messages have no ESC byte", raw)
    # corpus text is shown to a terminal with its control characters made visible (an OSC
    # sequence set the terminal's title, another can write its clipboard); a pipe gets the bytes
    esc_file = os.path.join(base_env["HOME"], "esc.txt")
    with open(esc_file, "wb") as f:
        f.write(b"title \x1b]0;pwned\x07 red \x1b[31mX\x1b[0m c1 \xc2\x9b2J end\n")
    out, raw = s.command(":dataset add esc %s" % esc_file)
    out, raw = s.command("build esc", timeout=30)
    out, raw = s.command("load esc")
    out, raw = s.command("doc 0")
    check(out is not None and b"^[]0;pwned^G" in out and b"^[[31mX" in out and b"<U+009B>2J" in out
          and b"\x1b" not in out and b"\x07" not in out, "doc shows a document's control characters visibly", raw)
    piped = subprocess.run([BIN, "--home", home, "-c", "load esc", "-c", "doc 0"], capture_output=True, env=base_env,
                           timeout=30)
    check(b"\x1b]0;pwned\x07" in piped.stdout, "doc into a pipe gives the bytes as they are", piped.stdout[-300:])
    out, raw = s.command("load shakespeare")  # as the checks below expect

    if EXTRA and not extra(s):
        s.kill()
        live.remove(s)
        return
    s.send(b"\x04")
    st = s.wait(10)
    check(st is not None, "NO_COLOR session exits on Ctrl-D")
    print("(generated the big file in %.1f s; total %.1f s)" % (gen_s, time.monotonic() - T0), flush=True)


def extra(s):
    """Rough edges found by hand; these fail on versions that have them."""
    out, raw = s.command("count --positions 5 Romeo")
    lines = out.split(b"\r\n")[1:-1] if out else []
    width = max((len(l.decode("utf-8", "replace")) for l in lines), default=0)
    check(out is not None and width <= 80, "count --positions 5 fits 80 columns (widest %d)" % width, raw)

    # Ctrl-C inside reverse-i-search must abandon the search
    s.send(b"\x12")  # Ctrl-R
    s.send("count Rom")
    s.expect(rb"count Romeo", 5)
    s.send(b"\x03")
    s.expect(PROMPT_RE, 5)
    s.drain()
    out, raw = s.command('count "ROMEO:"')
    check(out is not None and re.search(rb"\r\n163\r\n", out) is not None,
          "after Ctrl-C in reverse-i-search the typed command runs", raw)

    # Ctrl-C at "Display all N possibilities? (y or n)"
    s.send(":dataset add x /usr/bin/\t\t")
    s.expect(rb"possibilities|y or n", 5)
    s.send(b"\x03")
    s.expect(PROMPT_RE, 5)
    s.drain()
    out, raw = s.command("count Romeo")
    check(out is not None and re.search(rb"\r\n128\r\n", out) is not None,
          "after Ctrl-C at a completion query the typed command runs", raw)

    # Ctrl-C during a long listing stops it
    s.send("count --positions 1000000 e\r")
    s.expect(rb"doc 0", 5)
    s.send(b"\x03")
    t = time.monotonic()
    m, seg = s.expect(PROMPT_RE + rb"$", 8)
    stopped = m is not None and time.monotonic() - t < 3
    check(stopped, "Ctrl-C stops a long count --positions listing (%.1f s)" % (time.monotonic() - t))
    return stopped


if __name__ == "__main__":
    main()
