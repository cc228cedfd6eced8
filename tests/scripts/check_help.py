#!/usr/bin/env python3
"""Every command listed by `infinigram --help` has non-empty `:help NAME` text, a man
page entry, every long option in the program's --help appears in the man page, and the
page carries the sections the program generates byte for byte (no escape lost on the way)."""
import re
import subprocess
import sys
import tempfile

binary, man = sys.argv[1], sys.argv[2]
failed = passed = 0
helptext = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
commands = re.findall(r"^  (:?[a-z]+)\s", helptext.split("\ncommands")[1], re.M)
mantext = open(man, encoding="utf-8").read()
with tempfile.TemporaryDirectory() as home:
    for c in commands:
        p = subprocess.run([binary, "--home", home, "-c", ":help " + c], capture_output=True, text=True)
        ok = p.returncode == 0 and len(p.stdout.strip()) > 40 and ".B " + c.replace("-", "\\-") in mantext
        passed, failed = passed + ok, failed + (not ok)
        if not ok:
            print(f"FAIL: command {c}: :help status {p.returncode}, man entry present: {'.B ' + c in mantext}")
# a command's synopsis (the first line of `COMMAND --help`) names every option it takes;
# [MODEL OPTIONS] stands for the model options the page lists together
MODEL = {"--infgram", "--n", "--alpha", "--weighted", "--min-len", "--max-len", "--beta", "--interp", "--sbi",
         "--max-context"}
for c in commands:
    if c.startswith(":"):
        continue
    p = subprocess.run([binary, c, "--help"], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode or not lines:
        continue
    synopsis = lines[0]
    opts = {m.group(1) for m in re.finditer(r"^    (--[a-z][a-z0-9-]*)[ \n]", p.stdout, re.M)}
    if "[MODEL OPTIONS]" in synopsis:
        opts -= MODEL
    missing = sorted(o for o in opts if not re.search(re.escape(o) + r"(?![a-z0-9-])", synopsis))
    passed, failed = passed + (not missing), failed + (not not missing)
    if missing:
        print(f"FAIL: the synopsis of {c} omits {' '.join(missing)}: {synopsis}")
for opt in set(re.findall(r"--[a-z][a-z-]*", helptext)):
    ok = opt.replace("-", "\\-") in mantext
    passed, failed = passed + ok, failed + (not ok)
    if not ok:
        print(f"FAIL: option {opt} missing from the man page")
dump = subprocess.run([binary, "--help-dump=man"], capture_output=True, text=True, check=True).stdout.strip("\n")
ok = dump in mantext and "\\fB" in dump
passed, failed = passed + ok, failed + (not ok)
if not ok:
    print("FAIL: the man page does not carry --help-dump=man as the program prints it (regenerate with man/gen.sh)")
bad = [i for i, ch in enumerate(mantext) if ord(ch) < 32 and ch not in "\n\t"]
passed, failed = passed + (not bad), failed + (not not bad)
if bad:
    print(f"FAIL: control character {ord(mantext[bad[0]]):#04x} at offset {bad[0]} of the man page")
if len(commands) < 5:
    print("FAIL: --help lists too few commands")
    failed += 1
print(f"help: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
