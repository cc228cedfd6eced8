"""Every shell example in README.md and in the man page's EXAMPLES runs, and the output
they show is what the program prints.

Examples are read from the files themselves:
  - transcript lines `infinigram[NAME]> COMMAND  # comment` run in order against a home
    that holds the bundled dataset; the lines after one, up to the next prompt, are its
    expected output. In expected output `…` stands for any text (a whole line of `…`: any
    number of lines), and times and rates (`0.14 s`, `8.0 MB/s`) may differ. A command
    shown without output must succeed. Commands that depend on the previous ones (explain
    after generate) see them: each command runs after the commands before it, in one
    process, and its output is what it added.
  - the first start (`$ share/bootstrap run` and its "Welcome" lines) is an interactive
    run of the program on a pseudo-terminal with an empty home;
  - lines of `sh` blocks run in bash (with `infinigram` on PATH, the home in
    INFINIGRAM_HOME, files they name made in the working directory, port 8080 replaced by
    a free one); a following `# {...}` line is the JSON they print (elapsed_ms aside);
  - a block of bare commands (the evaluation example) runs as one script, and the figure
    the text before it quotes must be in its output.
`share/bootstrap run|test` are the set-up commands themselves (what CI runs) and are not
run again here.

usage: examples_test.py INFINIGRAM README.md MAN_PAGE DATASETS_DIR
"""
import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, summary  # noqa: E402

BIN, README, MAN, DATASETS = (os.path.abspath(a) for a in sys.argv[1:5])
PROMPT = re.compile(r"^infinigram(\[[^\]]*\])?> (.*)$")
# Session state a later command may need (what is loaded, the last generation, the timer):
# replayed before each later command. Commands that change the home (add, build) are not.
REPLAYED = re.compile(r"^(load|generate|:timer|:format)\b")


def strip_comment(cmd):
    """`count "x"   # why` -> `count "x"` (a # after two spaces, outside quotes)."""
    inq = False
    for i, ch in enumerate(cmd):
        if ch == '"' and (i == 0 or cmd[i - 1] != "\\"):
            inq = not inq
        if ch == "#" and not inq and cmd[max(0, i - 2):i] == "  ":
            return cmd[:i].rstrip()
    return cmd.rstrip()


def pattern(expected_lines):
    """A regex for expected output: … is a wildcard, times and rates may differ."""
    parts = []
    for line in expected_lines:
        if line.strip() == "…":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        rx = ""
        for piece in re.split(r"(…|\d+(?:\.\d+)? (?:s|ms|MB/s)\b)", line):
            if piece == "…":
                rx += r".*?"
            elif re.fullmatch(r"\d+(?:\.\d+)? (?:s|ms|MB/s)", piece):
                rx += r"[\d.]+ " + re.escape(piece.split()[1])
            else:
                rx += re.escape(piece)
        parts.append(rx + r"\n")
    return re.compile("".join(parts) + r"\Z", re.S)


def blocks(text):
    """Fenced code blocks: (info string, lines, text before the block)."""
    out, cur, info, start = [], None, None, 0
    lines = text.split("\n")
    for i, l in enumerate(lines):
        if l.startswith("```"):
            if cur is None:
                cur, info, start = [], l[3:].strip(), i
            else:
                out.append((info, cur, "\n".join(lines[max(0, start - 6):start])))
                cur = None
        elif cur is not None:
            cur.append(l)
    return out


def shell_run(env, cwd, cmds):
    return subprocess.run([BIN, "-c", "\n".join(cmds)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)


def with_loads(steps):
    """The prompt names the loaded dataset: `load NAME` goes before a step whose prompt
    names another dataset than the one loaded by then."""
    plan, loaded = [], None
    for ds, cmd, exp in steps:
        if ds and ds != loaded:
            plan.append((ds, "load " + ds, []))
            loaded = ds
        plan.append((ds, cmd, exp))
        m = re.match(r"load (\S+)", cmd)
        if m:
            loaded = m.group(1)
    return plan


def run_transcript(env, cwd, steps, where):
    """steps: [(dataset, command, expected lines)]: each command after those before it."""
    done = []
    for dataset, cmd, expected in steps:
        base = shell_run(env, cwd, done) if done else None
        p = shell_run(env, cwd, done + [cmd])
        before = base.stdout if base else ""
        out = p.stdout[len(before):] if p.stdout.startswith(before) else p.stdout
        ok = p.returncode == 0 and "error:" not in p.stderr[len(base.stderr) if base else 0:]
        check(ok, "%s: `%s` succeeds: %s" % (where, cmd, p.stderr[-500:]))
        if expected:
            check(pattern(expected).match(out), "%s: `%s` prints what is shown:\n--- shown\n%s\n--- printed\n%s"
                  % (where, cmd, "\n".join(expected), out))
        if REPLAYED.match(cmd):
            done.append(cmd)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bootstrap_screen(env, cwd):
    """The first interactive start on an empty home, as a terminal shows it."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(BIN, [BIN], dict(env, TERM="dumb", NO_COLOR="1"))
    out, end = b"", time.time() + 60
    while time.time() < end and b"> " not in out.split(b"Try:")[-1]:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    os.write(fd, b":quit\n")
    time.sleep(0.3)
    try:
        os.kill(pid, 9)
    except OSError:
        pass
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace").replace("\r\n", "\n")


def fixtures(cwd, home_env):
    """Files the examples name: the shipped samples (datasets/ as from the repository's root),
    a Bible excerpt, a notes folder."""
    os.symlink(DATASETS, os.path.join(cwd, "datasets"))
    with open(os.path.join(cwd, "bible.txt"), "w") as f:
        f.write("In the beginning God created the heaven and the earth.\n"
                "And the LORD God formed man of the dust of the ground.\n"
                "The LORD is my shepherd; I shall not want.\n")
    for d in (os.path.join(cwd, "notes"), os.path.join(home_env["HOME"], "notes")):
        os.makedirs(os.path.join(d, "2026"), exist_ok=True)
        with open(os.path.join(d, "todo.txt"), "w") as f:
            f.write("read the paper on suffix arrays\n")
        with open(os.path.join(d, "2026", "ideas.md"), "w") as f:
            f.write("# ideas\ncount what Romeo says\n")


def readme_examples(env, cwd):
    text = open(README, encoding="utf-8").read()
    bs = blocks(text)
    check(len(bs) >= 4, "README has its example blocks")
    for info, lines, before in bs:
        if any(PROMPT.match(l) for l in lines):
            # the first start, then the transcript
            pre = []
            for l in lines:
                if PROMPT.match(l):
                    break
                pre.append(l)
            if pre and pre[0].startswith("$ "):
                check(pre[0] in ("$ share/bootstrap run", "$ infinigram"), "first start shown: " + pre[0])
                # as the terminal shows it: a carriage return and erase-line start the line again
                screen = "\n".join(l.split("\r")[-1].replace("\x1b[K", "") for l in bootstrap_screen(env, cwd).split("\n"))
                shown = [l for l in pre[1:] if l.strip()]
                got = [l for l in screen.split("\n") if l.startswith(("Welcome", "built "))]
                check(pattern(shown).match("\n".join(got) + "\n"),
                      "first start prints what README shows:\n%s\n--- printed\n%s" % ("\n".join(shown), screen))
            steps, cur = [], None
            for l in lines[len(pre):]:
                m = PROMPT.match(l)
                if m:
                    cur = [(m.group(1) or "")[1:-1], strip_comment(m.group(2)), []]
                    steps.append(cur)
                elif cur is not None:
                    cur[2].append(l)
            for s in steps:
                while s[2] and not s[2][-1].strip():
                    s[2].pop()
            run_transcript(env, cwd, with_loads(steps), "README")
        elif info == "sh":
            sh_block(env, cwd, lines, "README")
        elif lines and all(l.strip() for l in lines):
            # bare commands: a script; the figure quoted just before must be in its output
            p = shell_run(env, os.path.dirname(README), lines)  # paths in it are the repository's
            check(p.returncode == 0, "README script %s succeeds: %s" % (lines[0], p.stderr[-500:]))
            for fig in re.findall(r"perplexity (\d+\.\d+)", before):
                check(fig in p.stdout, "README script prints the quoted %s: %s" % (fig, p.stdout[-500:]))


def sh_block(env, cwd, lines, where):
    port = str(free_port())
    server = None
    try:
        i = 0
        while i < len(lines):
            l = lines[i].strip()
            i += 1
            if not l or l.startswith("#"):
                continue
            cmd = strip_comment(l).replace("8080", port)
            if cmd.startswith("share/bootstrap"):
                continue  # the set-up commands: what CI itself runs
            expected = None
            if i < len(lines) and lines[i].startswith("# {"):
                expected = json.loads(lines[i][2:])
                i += 1
            if re.match(r"infinigram( .*)? serve\b", cmd):
                server = subprocess.Popen(["bash", "-c", "exec " + cmd], env=env, cwd=cwd,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for _ in range(100):
                    try:
                        urllib.request.urlopen("http://127.0.0.1:%s/v1/health" % port, timeout=1)
                        break
                    except Exception:
                        time.sleep(0.1)
                continue
            if cmd.startswith("curl "):
                cmd = cmd.replace("curl -s", "curl -sS --fail-with-body")
            p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
            check(p.returncode == 0, "%s: `%s` succeeds: %s %s" % (where, cmd, p.stderr[-300:], p.stdout[-300:]))
            if cmd.startswith("curl "):
                try:
                    json.loads(p.stdout)
                    check(True, "")
                except ValueError:
                    check(False, "%s: `%s` answers JSON: %s" % (where, cmd, p.stdout[:300]))
            if expected is not None:
                try:
                    got = json.loads(p.stdout)
                except ValueError:
                    got = None
                for k in ("elapsed_ms",):
                    expected.pop(k, None)
                    if isinstance(got, dict):
                        got.pop(k, None)
                check(got == expected, "%s: `%s` prints %s, not %s" % (where, cmd, expected, got))
    finally:
        if server:
            server.terminate()
            server.wait(timeout=10)


def man_examples(env, cwd):
    roff = open(MAN, encoding="utf-8").read()
    m = re.search(r"^\.SH EXAMPLES\n\.nf\n(.*?)^\.fi", roff, re.S | re.M)
    check(m is not None, "the man page has EXAMPLES")
    if not m:
        return
    lines = [l.replace("\\-", "-").replace("\\e", "\\") for l in m.group(1).split("\n")]
    steps, shell_lines = [], []
    for l in lines:
        pm = PROMPT.match(l)
        if pm:
            steps.append(((pm.group(1) or "")[1:-1], strip_comment(pm.group(2)), []))
        elif l.strip() and l.strip() != "infinigram":
            shell_lines.append(l)
    run_transcript(env, cwd, with_loads(steps), "man")
    sh_block(env, cwd, shell_lines, "man")


def main():
    tmp = tempfile.mkdtemp(prefix="ig-examples-")
    try:
        cwd = os.path.join(tmp, "work")
        os.makedirs(cwd)
        env = dict(os.environ, INFINIGRAM_HOME=os.path.join(tmp, "home"), HOME=os.path.join(tmp, "user"),
                   INFINIGRAM_DATASETS=DATASETS, NO_COLOR="1",
                   PATH=os.path.dirname(BIN) + ":" + os.environ.get("PATH", ""))
        os.makedirs(env["HOME"])
        fixtures(cwd, env)
        readme_examples(env, cwd)
        # the man page's examples on a home of their own (they add kjv and notes again)
        env2 = dict(env, INFINIGRAM_HOME=os.path.join(tmp, "home2"))
        subprocess.run([BIN, "-c", ":dataset add shakespeare " + os.path.join(DATASETS, "tinyshakespeare.txt"),
                        "-c", "build shakespeare"], env=env2, capture_output=True, check=True)
        man_examples(env2, cwd)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
