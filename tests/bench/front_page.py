#!/usr/bin/env python3
"""Checks the benchmark front page against the dated record: every number on
BENCHMARKS.md must appear, written the same way, in tests/bench/HISTORY.md, so the front
page can only quote figures that were measured and recorded there.

    python3 tests/bench/front_page.py [FRONT_PAGE [HISTORY]]

A number is a run of digits with its decimal or comma parts ("0.871", "9,938,221") and
any space-separated groups of three ("1 115 394"), not preceded by a letter (so "p99",
"v1" and "K=2"'s name are not numbers, but the 2 is). Words of 7 to 40 hexadecimal digits
are commit ids: each must appear in HISTORY.md or name a commit of this repository.
Prints every number that is missing, with its line, and exits with status 1 if any is."""
import os
import re
import subprocess
import sys

HEX = re.compile(r"(?<![\w])[0-9a-f]{7,40}(?![\w])")
NUM = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?: \d{3}(?![\d]))*(?:\.\d+)?")


def numbers(line):
    return [m.group(0) for m in NUM.finditer(line)]


def is_commit(root, word):
    r = subprocess.run(["git", "-C", root, "rev-parse", "--verify", "--quiet", word + "^{commit}"],
                       capture_output=True)
    return r.returncode == 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    front = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "BENCHMARKS.md")
    hist = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "HISTORY.md")
    history = open(hist, encoding="utf-8").read()
    hist_words = set(HEX.findall(history))
    hist_nums = set()
    for line in history.splitlines():
        hist_nums.update(numbers(HEX.sub(" ", line)))

    missing = 0
    checked = 0
    for no, line in enumerate(open(front, encoding="utf-8").read().splitlines(), 1):
        for word in HEX.findall(line):
            checked += 1
            if word not in hist_words and not is_commit(root, word):
                print(f"{front}:{no}: commit {word} is neither in {hist} nor a commit")
                missing += 1
        for num in numbers(HEX.sub(" ", line)):
            checked += 1
            if num not in hist_nums:
                print(f"{front}:{no}: {num!r} does not appear in {hist}")
                missing += 1
    print(f"{checked} numbers and commit ids checked, {missing} not found")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
