"""Command-line details that a golden transcript (stdin, one line a command) cannot show.

  - the lines of one -c argument are separate commands, as in a script file, never joined
    into one query;
  - `serve ... --home H` uses H, like `--home H serve ...`;
  - out of memory (an address-space limit, from generous to tight) is a clean answer or a
    clean out_of_memory error that fails the command: exit status 1, --bail stops, never a
    signal and never a partial JSON line;

usage: cli_test.py INFINIGRAM CORPUS.txt
"""
import contextlib
import json
import re
import os
import signal
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from igtest import call, check, free_port, shell, start_server, summary  # noqa: E402

BIN, CORPUS = sys.argv[1], sys.argv[2]


def run(home, *cmds):
    return shell(BIN, home, *cmds)


def main():
    tmp = tempfile.mkdtemp(prefix="ig-cli-")
    try:
        p = run(tmp, ":dataset add ts " + CORPUS, "build ts")
        check(p.returncode == 0, "build: " + p.stderr)
        p = run(tmp, "load ts", 'count "the"\ncount "and"\r\ncount "zzq"')
        out = [json.loads(l) for l in p.stdout.splitlines()]
        counts = [o.get("count") for o in out[1:]]
        check(p.returncode == 0 and len(out) == 4 and counts[0] > 0 and counts[1] > 0 and counts[2] == 0,
              "three lines of one -c are three commands: %s %s" % (counts, p.stderr))
        p = run(tmp, "load ts\ncount \"the")
        check(p.returncode == 1 and "unterminated quote" in p.stderr, "a quote never spans lines: " + p.stderr)
        # file names are bytes: one with a newline and an escape sequence, one not UTF-8. The
        # text listing shows them on one line without the escape; JSON stays valid UTF-8
        evil = os.path.join(tmp, "evil")
        os.makedirs(evil)
        for name, body in ((b"a\nb\x1b[31mRED", b"romeo one\n"), (b"bad\xff\xfename", b"romeo two\n")):
            with open(os.path.join(evil.encode(), name), "wb") as fh:
                fh.write(body)
        ehome = os.path.join(tmp, "evil-home")
        p = subprocess.run([BIN, "--home", ehome, "-c", ":dataset add evil " + evil, "-c", "build evil", "-c", "load evil",
                            "-c", 'count --positions 5 "romeo"'], capture_output=True, timeout=60)
        listed = [line for line in p.stdout.split(b"\n") if b"@0" in line]
        check(p.returncode == 0 and len(listed) == 2 and not any(b"\x1b" in line for line in listed),
              "hostile file names in a listing: %r" % p.stdout[-400:])
        # doc's header shows the name whole, its control bytes hidden too
        p = subprocess.run([BIN, "--home", ehome, "-d", "evil", "-c", "doc 0", "-c", "doc 1"], capture_output=True,
                           timeout=60)
        heads = [line for line in p.stdout.split(b"\n") if line.startswith(b"doc ")]
        check(p.returncode == 0 and len(heads) == 2 and not any(b"\x1b" in h for h in heads) and
              any(b"a?b?[31mRED" in h for h in heads), "hostile file names in doc's header: %r" % p.stdout[-400:])
        p = subprocess.run([BIN, "--home", ehome, "--json", "-d", "evil", "-c", 'count --positions 5 "romeo"',
                            "-c", 'search "romeo"', "-c", 'spans --min-len 3 "romeo two"', "-c", "doc 1"],
                           capture_output=True, timeout=60)
        try:
            docs = [json.loads(line.decode("utf-8")) for line in p.stdout.splitlines()]
        except (UnicodeDecodeError, ValueError) as e:
            docs = [repr(e)]
        names = {x["name"] for x in docs[0].get("positions", [])} if docs and isinstance(docs[0], dict) else set()
        check(p.returncode == 0 and len(docs) == 4 and evil + "/bad\ufffd\ufffdname" in names and
              evil + "/a\nb\x1b[31mRED" in names, "hostile file names in JSON: %s %r" % (names, p.stdout[-300:]))
        # a script with no line end (a device) is not read on into memory; a text to evaluate
        # that never ends is refused
        p = subprocess.run([BIN, "--home", tmp, "-f", "/dev/zero"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 1 and "a line longer than 64 MiB" in p.stderr and "/dev/zero:1" in p.stderr,
              "-f /dev/zero: %s %s" % (p.returncode, p.stderr[-300:]))
        p = run(tmp, "load ts", "eval /dev/zero")
        check(p.returncode == 1 and "/dev/zero: not a regular file" in p.stderr, "eval /dev/zero: " + p.stderr[-300:])
        # more positions than an answer may hold: the error says how many it may hold
        p = run(tmp, "load ts", 'count --positions 1000000 --width 30 ""')
        check(p.returncode == 1 and "list at most 469292 at this width" in p.stderr, "positions past the cap: " +
              p.stderr[-300:])
        # COMMAND --help, at the program's command line and in a script: the command's help,
        # and no home made for it
        fresh = os.path.join(tmp, "never-made")
        for argv in (["count", "--help"], ["serve", "--port", "1", "--help"], ["generate", "-h"]):
            p = subprocess.run([BIN, "--home", fresh] + argv, capture_output=True, text=True, timeout=30)
            check(p.returncode == 0 and p.stdout.startswith(argv[0] + " ") and "example:" in p.stdout
                  and not os.path.exists(fresh), f"{argv}: help without a home: {p.returncode} {p.stderr}")
        p = subprocess.run([BIN, "--home", fresh, "count", "x"], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and "-c 'count ...'" in p.stderr and not os.path.exists(fresh),
              f"a shell command as an argument says how to run it: {p.stderr}")
        p = run(tmp, "load ts", "count --help", 'count "the"', "g --max 3 --seed 1 \"Th\"", "p \"x\"")
        out = p.stdout.splitlines()
        got = [json.loads(line) for line in out]
        check(len(got) == 5 and got[1].get("name") == "count" and "usage" in got[1] and got[2].get("count", 0) > 0
              and got[3].get("chars") == 3 and "could be: predict, prob" in got[4]["error"]["message"],
              f"--help in a script, one-letter prefixes: {out} {p.stderr}")
        # JSON names the command, not the abbreviation typed
        p = run(tmp, "lo ts", 'cou "the"', "g --max 2 --seed 1 \"Th\"", ":h count", ":sh width")
        names = [json.loads(line).get("command") for line in p.stdout.splitlines()]
        check(names == ["load", "count", "generate", ":help", ":show"], f"JSON command of abbreviations: {names}")
        # :format and :timer change this session only; :set saves (for interactive sessions)
        fhome = os.path.join(tmp, "format-home")
        p = run(fhome, ":format json", ":timer on", ":set width 12")
        p = subprocess.run([BIN, "--home", fhome, "--saved-settings", "--json", "-c", ":show"], capture_output=True,
                           text=True, timeout=30)
        shown = json.loads(p.stdout.splitlines()[0]).get("settings", {}) if p.stdout else {}
        check((shown.get("format"), shown.get("timer"), shown.get("width")) == ("table", "off", "12"),
              f":format and :timer are not saved, :set is: {shown}")
        # -c and -f run in the order given, every -f as well
        fa, fb = os.path.join(tmp, "a.ig"), os.path.join(tmp, "b.ig")
        with open(fa, "w") as f:
            f.write('count "the"\n')
        with open(fb, "w") as f:
            f.write('count "zzq"\n')
        p = subprocess.run([BIN, "--home", tmp, "--json", "-d", "ts", "-f", fa, "-c", 'count "and"', "-f", fb],
                           capture_output=True, text=True, timeout=60)
        got = [json.loads(line).get("query") for line in p.stdout.splitlines()]
        check(p.returncode == 0 and got == ["the", "and", "zzq"], f"-f, -c, -f in order: {got} {p.stderr}")
        # explain --step N and --last are one or the other
        p = run(tmp, "load ts", 'generate --max 5 --seed 1 "Th"', "explain --last --step 3")
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(p.returncode == 1 and "--step N or --last, not both" in out[-1].get("error", {}).get("message", ""),
              f"explain --last --step: {out[-1:]}")
        # a document's lines are those wc -l counts (no empty line after the final newline); a
        # search page of none offers no next page
        nl = open(CORPUS, "rb").read().count(b"\n")
        p = run(tmp, "load ts", f"doc 0 --lines {nl}:{nl + 1}", f"doc 0 --lines {nl + 1}:{nl + 2}")
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(len(out) == 3 and "error" not in out[1] and out[2].get("error", {}).get("message", "").endswith(
              f"the document has only {nl} lines"), f"doc --lines past the end: {nl} {out[1:]}")
        p = subprocess.run(
            [BIN, "--home", tmp, "-d", "ts", "-c", 'search --limit 0 "Romeo"'], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and "matc" in p.stdout and "more:" not in p.stdout, f"search --limit 0: {p.stdout}")
        # a percentage names no byte: each end moves on to the next character's start, so that
        # 0:P% and P%: split a file whole (an offset inside a character is refused)
        uf = os.path.join(tmp, "e.txt")
        with open(uf, "w", encoding="utf-8") as f:
            f.write("é" * 50 + "\n")  # 101 bytes: 3% is byte 3, inside the second é
        p = run(os.path.join(tmp, "pct"), f":dataset add p {uf} --range 0:3%", "build p", "load p", 'count "é"',
                f":dataset add q {uf} --range 3%:", "build q", "load q", 'count "é"', f"eval {uf} --range 3%:50%",
                f":dataset add r {uf} --range 0:3", "build r")
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(len(out) == 11 and out[3].get("count") == 2 and out[7].get("count") == 48 and "error" not in out[8]
              and "inside a UTF-8 character" in out[10].get("error", {}).get("message", ""), f"percent ranges: {out}")
        # output that cannot be written fails the run (as cat does): a full disk, a closed stdout
        with open("/dev/full", "w") as full:
            p = subprocess.run([BIN, "--home", tmp, "-c", ":show"], stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=30)
        check(p.returncode == 1 and "cannot write the output" in p.stderr, f"output to /dev/full: {p.returncode} {p.stderr}")
        p = subprocess.run([BIN, "--home", tmp, "-c", ":show"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        check(p.returncode == 0 and not p.stderr, f"output to /dev/null: {p.returncode} {p.stderr}")
        # dups --write: a link is followed (the link kept), a FIFO or directory is refused before the work
        wdir = os.path.join(tmp, "w")
        os.makedirs(wdir)
        target, link, fifo = (os.path.join(wdir, n) for n in ("target.jsonl", "link.jsonl", "fifo"))
        open(target, "w").close()
        os.symlink(target, link)
        os.mkfifo(fifo)
        p = run(tmp, "load ts", f"dups --min-len 200 --write {link}", f"dups --min-len 200 --write {fifo}",
                f"dups --min-len 200 --write {wdir}")
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(len(out) == 4 and "error" not in out[1] and os.path.islink(link) and os.path.getsize(target) > 0 and
              all("not a regular file" in o.get("error", {}).get("message", "") for o in out[2:]) and
              stat.S_ISFIFO(os.stat(fifo).st_mode), f"dups --write targets: {out}")
        # 'text' quoted as a shell would: counted with its quotes, and the shell says so
        p = run(tmp, "load ts", "count 'Romeo'", 'count "\'Romeo\'"')
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(p.returncode == 0 and out[1].get("query") == "'Romeo'" and p.stderr.count("single quotes are part of") == 1,
              f"single quotes: {out[1:]} {p.stderr}")
        # an invalid escape before a byte that begins no character: named by its value, JSON stays UTF-8
        p = subprocess.run([BIN, "--home", tmp, "--json", "-d", "ts", "-c", b'count "a\\\xffb"'], capture_output=True,
                           timeout=60)
        try:
            msg = json.loads(p.stdout.decode("utf-8"))["error"]["message"]
        except (ValueError, KeyError, UnicodeDecodeError) as e:
            msg = repr(e)
        check(p.returncode == 1 and "byte 0xff" in msg, f"escape before 0xff: {msg} {p.stdout[:200]!r}")
        # no home at all cannot start (1); an empty --home is a bad argument (2)
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_DATA_HOME", "INFINIGRAM_HOME")}
        p = subprocess.run([BIN, "-c", ":show"], capture_output=True, text=True, timeout=30, env=env)
        check(p.returncode == 1 and "no home directory" in p.stderr, f"no home: {p.returncode} {p.stderr}")
        p = subprocess.run([BIN, "--home", "", "-c", ":show"], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and "--home: an empty path" in p.stderr, f"--home '': {p.returncode} {p.stderr}")
        # a value given to a switch names the option as written; a short one in a group alone
        for arg, said in (("--json=1", '"--json=1"'), ("-zj", '"-z"')):
            p = subprocess.run([BIN, "--home", tmp, arg, "-c", ":show"], capture_output=True, text=True, timeout=30)
            check(p.returncode == 2 and said in p.stderr, f"{arg}: {p.returncode} {p.stderr}")
        # a percentage end inside the file's last character moves to the end of the file
        lastc = os.path.join(tmp, "lastc.txt")
        with open(lastc, "w", encoding="utf-8") as f:
            f.write("ab \u0449")  # 5 bytes, the last character two of them: 90% is inside it
        p = run(tmp, "load ts", f"eval {lastc} --range 0:90%", f"eval {lastc} --range 90%:")
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(len(out) == 3 and "error" not in out[1] and out[1].get("bytes") == 5 and
              "selects no bytes" in out[2].get("error", {}).get("message", ""), f"percent end at the file's end: {out}")
        # a mistyped program option is answered with the near one
        p = subprocess.run([BIN, "--home", tmp, "--jsno", "-c", ":show"], capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and "did you mean --json?" in p.stderr, f"--jsno: {p.returncode} {p.stderr}")
        # an evaluation's figures are the same to the last bit whatever the number of threads
        # (blocks of positions are summed whole and added in order)
        got = []
        for threads in (1, 2, 7):
            p = run(tmp, "load ts", f"eval --interp 2 --threads {threads} {CORPUS} --range 90%:")
            e = json.loads(p.stdout.splitlines()[-1])
            got.append((e.get("perplexity"), e.get("bits_per_byte"), e.get("scored")))
        check(got[0][0] and got[0] == got[1] == got[2], f"eval by 1, 2 and 7 threads: {got}")
        # a script line holding a NUL byte is refused whole (it would end there, unseen); a
        # script that cannot be read (a directory) fails the run
        script = os.path.join(tmp, "nul.ig")
        with open(script, "wb") as f:
            f.write(b'load ts\ncount "o"\x00count "l"\ncount "zzq"\n')
        p = subprocess.run([BIN, "--home", tmp, "--json", "-f", script], capture_output=True, text=True, timeout=60)
        out = [json.loads(line) for line in p.stdout.splitlines()]
        check(p.returncode == 1 and len(out) == 3 and "NUL byte" in out[1]["error"]["message"] and out[2]["count"] == 0
              and ":2:" in p.stderr, f"a NUL in a script line: {out} {p.stderr}")
        p = subprocess.run([BIN, "--home", tmp, "-f", tmp], capture_output=True, text=True, timeout=60)
        check(p.returncode == 1 and "cannot be read" in p.stderr, f"-f DIRECTORY: {p.returncode} {p.stderr}")
        # serve: a name in --datasets that is no dataset stops it at once; --port 0 says the port
        # the system chose
        for names in ("nope", "ts,nope", ""):
            p = subprocess.run([BIN, "--home", tmp, "serve", "--port", "0", "--datasets", names], capture_output=True,
                               text=True, timeout=30)
            check(p.returncode == 1 and "--datasets" in p.stdout + p.stderr, f"serve --datasets {names!r}: {p.returncode} "
                  f"{p.stdout} {p.stderr}")
        srv = subprocess.Popen([BIN, "--home", tmp, "serve", "--port", "0"], stderr=subprocess.PIPE, text=True)
        try:
            line = srv.stderr.readline()
            m = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
            st = call(int(m.group(1)), "/v1/health")[0] if m and m.group(1) != "0" else None
            check(st == 200, f"serve --port 0 names its port: {line!r} {st}")
        finally:
            srv.terminate()
            srv.wait(timeout=10)
        # --home after serve is the program's home too
        port = free_port()
        srv = start_server([BIN, "serve", "--port", str(port), "--home", tmp], port, stderr=subprocess.DEVNULL)
        try:
            st, b, _ = call(port, "/v1/datasets")
            check(st == 200 and [d["name"] for d in json.loads(b)["datasets"]] == ["ts"], f"serve --home H: {st} {b[:200]}")
        finally:
            srv.terminate()
            srv.wait(timeout=10)
        # a sanitizer reserves terabytes of address space: the limits below are for plain builds
        libs = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout
        sanitized = "libasan" in libs or "libtsan" in libs or "libubsan" in libs
        ooms = 0
        for limit_mb in () if sanitized else (400, 200, 120, 90, 70, 60, 50, 45, 40):
            def limit(mb=limit_mb):
                resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
            p = subprocess.run([BIN, "--home", tmp, "-d", "ts", "--json", "--bail", "-c",
                                'count --positions 1000000 --width 40 "e"', "-c", 'count "x"'],
                               capture_output=True, text=True, preexec_fn=limit, timeout=120)
            check(p.returncode in (0, 1), "limit %d MB: exit status %d" % (limit_mb, p.returncode))
            lines = p.stdout.splitlines()
            try:
                out = [json.loads(l) for l in lines]
            except ValueError:
                out = None
            check(out is not None, "limit %d MB: every line is whole JSON: %r" % (limit_mb, p.stdout[-300:]))
            if not out:
                continue
            if "error" in out[0]:
                ooms += 1
                check(out[0]["error"]["code"] == "out_of_memory" and p.returncode == 1 and len(out) == 1,
                      "limit %d MB: out of memory fails the command and --bail stops: %s" % (limit_mb, lines))
            else:
                check(len(out[0].get("positions", [])) == out[0]["count"] and p.returncode == 0 and len(out) == 2,
                      "limit %d MB: the full answer: %s" % (limit_mb, p.stdout[:200]))
        check(sanitized or ooms > 0, "some limit ran out of memory (else the test proves nothing)")
        # dups lists at most 256 MiB of repeats and sources, refused before any is located
        p = run(tmp, "load ts", "dups --min-len 5 --top 1000000 --positions 1000", "dups --min-len 5 --top 1000 --positions 3")
        out = [json.loads(l) for l in p.stdout.splitlines()]
        check(len(out) == 3 and "--top: 287689 repeats with --positions 1000" in out[1].get("error", {}).get("message", "")
              and len(out[2].get("top", [])) == 1000,
              "dups: a listing over 256 MiB is refused naming --top, a smaller one made: " + p.stdout[-400:])
        # Ctrl-C in a script cancels the command running and ends the run, exit status 130:
        # during a long command (the next -c is not run) and while waiting for a piped line
        p = subprocess.Popen([BIN, "--home", tmp, "--json", "-d", "ts", "-c",
                              'generate --max 10000000 --no-stop-at-end "a"', "-c", 'count "the"'],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        lines = out.decode().splitlines()
        check(p.returncode == 130 and len(lines) == 1 and '"stop_reason":"cancelled"' in lines[0] and
              b"interrupted" in err, f"SIGINT during a -c command: {p.returncode} {lines[-1:]} {err[-200:]}")
        p = subprocess.Popen([BIN, "--home", tmp, "--json", "-d", "ts"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(b'count "the"\n')
        p.stdin.flush()
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        time.sleep(0.5)
        with contextlib.suppress(BrokenPipeError):
            p.stdin.write(b'count "and"\n')
            p.stdin.flush()
        out, err = p.communicate(timeout=30)
        check(p.returncode == 130 and len(out.decode().splitlines()) == 1,
              f"SIGINT while a piped script waits for a line: {p.returncode} {out[-200:]} {err[-200:]}")
        # file names are their makers' bytes: an escape sequence in one never reaches the
        # terminal, in a warning, an error or :dataset info (shown as ^[ instead)
        odd = os.path.join(tmp, "odd-names")
        os.makedirs(odd)
        with open(os.path.join(odd, "good.txt"), "w") as f:
            f.write("ok\n")
        with open(os.path.join(odd, "\x1b]0;PWNED\x07\x1b[2Jbad.bin"), "wb") as f:
            f.write(b"bin\0ary")
        with open(os.path.join(odd, "\x1b[31mred\x9b.txt"), "wb") as f:
            f.write(b"\xff")
        for strict in ("", " --strict"):
            h = os.path.join(tmp, "odd-home" + strict.strip())
            p = subprocess.run([BIN, "--home", h, "-c", f":dataset add odd {odd}{strict}", "-c", "build odd", "-c",
                                ":dataset info odd", "-c", ":dataset list"], capture_output=True, timeout=60)
            both = p.stdout + p.stderr
            check(b"\x1b" not in both and b"\x07" not in both and (b"^[]0;PWNED^G" in both or b"^[[31mred" in both),
                  f"controls in file names are shown, not sent{strict}: {both[-400:]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
