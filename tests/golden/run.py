#!/usr/bin/env python3
"""Golden transcript runner: feeds each case's input to the infinigram binary and
compares stdout, stderr and the exit status byte for byte with the expected text.

File format (tests/golden/*.ig):

    # comments before the first case
    === case name
    $ args --json -d demo        optional: extra program arguments (shell-split)
    $ sh touch {TMP}/a.txt       optional: shell setup run before the case
    $ env NAME=VALUE             optional: extra environment
    input line 1                 commands, fed on stdin
    --- stdout
    expected stdout
    --- stderr
    expected stderr
    --- status 0

All cases of a file share one home directory (so a file is a session story) and one
scratch directory. Placeholders {HOME} {TMP} {DATA} {DATASETS} are substituted in
input, setup and args, and put back into the actual output before comparing; random
index directory ids become -ID. `run.py --update FILE` rewrites the expectations.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(path):
    cases, cur, section = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line.startswith("=== "):
            cur = {"name": line[4:], "args": [], "sh": [], "env": {}, "input": [],
                   "stdout": [], "stderr": [], "status": 0}
            cases.append(cur)
            section = "input"
        elif cur is None:
            continue
        elif line.startswith("--- stdout"):
            section = "stdout"
        elif line.startswith("--- stderr"):
            section = "stderr"
        elif line.startswith("--- status "):
            cur["status"] = int(line.split()[2])
            section = None
        elif section == "input" and line.startswith("$ args "):
            cur["args"] += shlex.split(line[7:])
        elif section == "input" and line.startswith("$ sh "):
            cur["sh"].append(line[5:])
        elif section == "input" and line.startswith("$ env "):
            k, _, v = line[6:].partition("=")
            cur["env"][k] = v
        elif section:
            cur[section].append(line)
    return cases


def main():
    args = sys.argv[1:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    binary = os.path.abspath(args[args.index("--bin") + 1])
    files = [a for i, a in enumerate(args) if a != "--bin" and (i == 0 or args[i - 1] != "--bin")]
    passed = failed = 0
    for path in files:
        cases = parse(path)
        with tempfile.TemporaryDirectory(prefix="iggold") as tmp:
            home, scratch = os.path.join(tmp, "home"), os.path.join(tmp, "tmp")
            os.mkdir(scratch)
            subst = {"{HOME}": home, "{TMP}": scratch, "{DATA}": os.path.join(HERE, "data"),
                     "{DATASETS}": os.path.abspath(os.path.join(HERE, "..", "..", "datasets"))}

            def fill(s):
                for k, v in subst.items():
                    s = s.replace(k, v)
                return s

            def unfill(s):
                for k, v in sorted(subst.items(), key=lambda kv: -len(kv[1])):
                    s = s.replace(v, k)
                return re.sub(r"(indexes/[^/\s\"]+)-[0-9a-f]{16}", r"\1-ID", s)

            for case in cases:
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C",
                       "HOME": "/nonexistent", "INFINIGRAM_FAKE_CLOCK": "1",
                       "INFINIGRAM_DATASETS": subst["{DATASETS}"]}
                env.update({k: fill(v) for k, v in case["env"].items()})
                for cmd in case["sh"]:
                    subprocess.run(fill(cmd), shell=True, check=True, cwd=scratch, env=env)
                stdin = "".join(fill(l) + "\n" for l in case["input"])
                p = subprocess.run([binary, "--home", home] + [fill(a) for a in case["args"]],
                                   input=stdin.encode(), capture_output=True, cwd=scratch, env=env,
                                   timeout=600)
                out = unfill(p.stdout.decode("utf-8", "backslashreplace"))
                err = unfill(fix_carets(p.stderr.decode("utf-8", "backslashreplace"), unfill))
                exp_out = "".join(l + "\n" for l in case["stdout"])
                exp_err = "".join(l + "\n" for l in case["stderr"])
                ok = out == exp_out and err == exp_err and p.returncode == case["status"]
                if update:
                    case["stdout"] = out.split("\n")[:-1] if out else []
                    case["stderr"] = err.split("\n")[:-1] if err else []
                    if out and not out.endswith("\n"):
                        case["stdout"] = out.split("\n")
                    case["status"] = p.returncode
                if ok:
                    passed += 1
                else:
                    failed += 1
                    if not update:
                        print(f"FAIL {os.path.basename(path)}: {case['name']}")
                        if out != exp_out:
                            print("  stdout expected:\n" + indent(exp_out) + "  got:\n" + indent(out))
                        if err != exp_err:
                            print("  stderr expected:\n" + indent(exp_err) + "  got:\n" + indent(err))
                        if p.returncode != case["status"]:
                            print(f"  status expected {case['status']}, got {p.returncode}")
        if update:
            write(path, cases)
    print(f"golden: {passed} passed, {failed} failed")
    return 0 if failed == 0 or update else 1


def fix_carets(text, unfill):
    """A caret under an echoed command line points at a column of the real line; move
    it to the same place in the placeholder form, so expectations do not depend on
    where the test runs."""
    lines = text.split("\n")
    for i in range(1, len(lines)):
        m = re.fullmatch(r"( *)\^", lines[i])
        if m and lines[i - 1].startswith("  "):
            col = len(m.group(1))
            lines[i] = " " * len(unfill(lines[i - 1][:col])) + "^"
    return "\n".join(lines)


def indent(s):
    return "".join("    | " + l + "\n" for l in s.split("\n")[:-1]) if s else "    (empty)\n"


def write(path, cases):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head = text.split("\n=== ")[0] if not text.startswith("=== ") else ""
    out = [head.rstrip("\n")] if head else []
    for c in cases:
        block = ["=== " + c["name"]]
        block += ["$ args " + shlex.join(c["args"])] if c["args"] else []
        block += ["$ env " + k + "=" + v for k, v in c["env"].items()]
        block += ["$ sh " + s for s in c["sh"]]
        block += c["input"]
        block += ["--- stdout"] + c["stdout"] + ["--- stderr"] + c["stderr"]
        block += ["--- status %d" % c["status"]]
        out.append("\n".join(block))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main())
