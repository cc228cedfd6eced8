"""Command-line details that a golden transcript (stdin, one line a command) cannot show.

  - the lines of one -c argument are separate commands, as in a script file, never joined
    into one query;

usage: cli_test.py INFINIGRAM CORPUS.txt
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, shell, summary  # noqa: E402

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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
