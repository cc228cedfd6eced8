"""Bash completion, driven in a real bash.

  - the committed share/bash-completion/infinigram is what the program writes now
    (`--help-dump=bash`), and it parses (`bash -n`);
  - `--list-datasets` prints the catalog's names, one per line (nothing for an empty one);
  - through the completion function, as bash calls it (COMP_WORDS/COMP_CWORD): program
    options, `serve` and every one of its options, every shell command name after -c,
    dataset names after -d and serve --datasets (from the --home the line names), the
    --help-dump values;
  - in an interactive bash on a pseudo-terminal: TAB completes a dataset name.

usage: completion_test.py INFINIGRAM COMPLETION_FILE CORPUS.txt
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, summary  # noqa: E402

BIN, SCRIPT, CORPUS = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]


def complete(words, home_dir):
    """COMPREPLY for the line `words` (the last word is being completed)."""
    line = " ".join("'%s'" % w for w in words)
    prog = (
        'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _infinigram; '
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    env = dict(os.environ, PATH=os.path.dirname(BIN) + ":" + os.environ.get("PATH", ""))
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash", SCRIPT] + words,
                       capture_output=True, text=True, env=env, timeout=30)
    check(p.returncode == 0, "completion of %s ran: %s" % (line, p.stderr))
    return [w for w in p.stdout.split("\n") if w]


def interactive_tab(home):
    """Types `infinigram --home 'HOME' -d twa<TAB>`, then the home with backslashes and
    `-d tw<TAB><TAB>`, into an interactive bash; returns the screen."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PATH"] = os.path.dirname(BIN) + ":" + os.environ.get("PATH", "")
        os.environ["PS1"] = "$ "
        os.environ["INPUTRC"] = "/dev/null"
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
    out = b""

    def read_for(seconds):
        nonlocal out
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    return

    os.write(fd, ("source '%s'\n" % SCRIPT).encode())
    read_for(1.0)
    os.write(fd, ("infinigram --home '%s' -d twa\t" % home).encode())
    read_for(1.5)
    os.write(fd, b"\x03")
    read_for(0.3)
    os.write(fd, ("infinigram --home %s -d tw\t\t" % home.replace(" ", "\\ ")).encode())
    read_for(1.5)
    os.write(fd, b"\x03exit\n")
    read_for(0.5)
    try:
        os.kill(pid, 9)
    except OSError:
        pass
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace")


def main():
    # the committed copy is current
    gen = subprocess.run([BIN, "--help-dump=bash"], capture_output=True, text=True)
    check(gen.returncode == 0, "--help-dump=bash: " + gen.stderr)
    with open(SCRIPT) as f:
        check(f.read() == gen.stdout, "%s is stale: run `infinigram --help-dump=bash > %s`" % (SCRIPT, SCRIPT))
    p = subprocess.run(["bash", "-n", SCRIPT], capture_output=True, text=True)
    check(p.returncode == 0, "bash -n: " + p.stderr)
    bad = subprocess.run([BIN, "--help-dump=zsh"], capture_output=True, text=True)
    check(bad.returncode == 2 and "bash" in bad.stderr, "--help-dump=zsh refused: " + bad.stderr)

    tmp = tempfile.mkdtemp(prefix="ig-compl-")
    try:
        home = os.path.join(tmp, "home with space")
        p = subprocess.run([BIN, "--home", home, "--list-datasets"], capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout == "", "empty catalog lists nothing: %r %r" % (p.stdout, p.stderr))
        p = subprocess.run([BIN, "--home", home, "-c", ":dataset add twain " + CORPUS, "-c",
                            ":dataset add tweed --text \"a b c\"", "-c", ":dataset add other --text x"],
                           capture_output=True, text=True)
        check(p.returncode == 0, "datasets added: " + p.stderr)
        p = subprocess.run([BIN, "--home", home, "--list-datasets"], capture_output=True, text=True)
        check(p.returncode == 0 and sorted(p.stdout.split()) == ["other", "twain", "tweed"],
              "--list-datasets: %r" % p.stdout)

        got = complete(["infinigram", "--home", home, "-d", "tw"], home)
        check(sorted(got) == ["twain", "tweed"], "-d completes dataset names: %s" % got)
        got = complete(["infinigram", "--home", home, "--dataset", ""], home)
        check(sorted(got) == ["other", "twain", "tweed"], "--dataset completes all names: %s" % got)
        got = complete(["infinigram", "--home", home, "serve", "--datasets", "o"], home)
        check(got == ["other"], "serve --datasets completes names: %s" % got)
        got = complete(["infinigram", "--js"], home)
        check(got == ["--json"], "program option: %s" % got)
        got = complete(["infinigram", "-"], home)
        for want in ["--home", "--dataset", "-c", "-f", "--list-datasets", "--help-dump=", "--version"]:
            check(want in got, "program options include %s: %s" % (want, got))
        got = complete(["infinigram", "se"], home)
        check(got == ["serve"], "serve: %s" % got)
        got = complete(["infinigram", "--help-dump", "=", ""], home)
        check(sorted(got) == ["bash", "man"], "--help-dump values: %s" % got)

        # every command and every serve option, as the program's help lists them
        helptext = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
        commands = [l.split()[0] for l in helptext.split("\ncommands", 1)[1].split(":\n", 1)[1].splitlines() if l.strip()]
        got = complete(["infinigram", "-c", ""], home)
        check(sorted(got) == sorted(commands) and len(commands) > 10, "-c completes every command: %s" % got)
        serve_help = subprocess.run([BIN, "--home", home, "-c", ":help serve"], capture_output=True,
                                    text=True).stdout
        serve_opts = sorted({m.group(1) for m in (re.match(r"^    (--[a-z][a-z-]*)(?:\s|$)", l)
                                                   for l in serve_help.split("\n")) if m})
        got = complete(["infinigram", "serve", "--"], home)
        check(sorted(got) == serve_opts and serve_opts, "serve options %s: %s" % (serve_opts, got))

        # --home=DIR, which bash splits into --home, =, DIR
        got = complete(["infinigram", "--home", "=", home, "-d", "tw"], home)
        check(sorted(got) == ["twain", "tweed"], "--home=DIR then -d: %s" % got)
        # a missing home has no names, and asking does not create it
        missing = os.path.join(tmp, "no", "such home")
        p = subprocess.run([BIN, "--home", missing, "--list-datasets"], capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout == "" and not os.path.exists(os.path.join(tmp, "no")),
              "--list-datasets on a missing home: %r %r, created: %s" % (p.stdout, p.stderr,
                                                                        os.path.exists(os.path.join(tmp, "no"))))
        got = complete(["infinigram", "--home", missing, "-d", ""], home)
        check(got == [] and not os.path.exists(os.path.join(tmp, "no")), "completing on a missing home: %s" % got)
        # a catalog edited by hand: a name holding shell code is never run, nor listed
        marker = os.path.join(tmp, "pwned")
        import sqlite3
        db = sqlite3.connect(os.path.join(home, "catalog.db"))
        for evil in ("$(touch %s)" % marker, "`touch %s`" % marker, "tw\nline"):
            db.execute("insert into datasets(name,status,created,updated,format) values(?,'registered',0,0,'text')",
                       (evil,))
        db.commit()
        db.close()
        p = subprocess.run([BIN, "--home", home, "--list-datasets"], capture_output=True, text=True)
        check(p.returncode == 0 and sorted(p.stdout.split("\n")) == ["", "other", "twain", "tweed"],
              "--list-datasets skips invalid names: %r" % p.stdout)
        for pre in ("", "$", "`", "tw"):
            got = complete(["infinigram", "--home", home, "-d", pre], home)
            check(all(g in ("other", "twain", "tweed") for g in got), "-d %r offers valid names only: %s" % (pre, got))
        check(not os.path.exists(marker), "no code in a dataset name ran")

        screen = interactive_tab(home)
        check("-d twain " in screen, "TAB completes a unique name (quoted home): %r" % screen[-400:])
        check("tweed" in screen, "TAB TAB lists the names (home with backslashes): %r" % screen[-400:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
