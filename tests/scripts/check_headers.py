#!/usr/bin/env python3
"""Each public header compiles on its own (self-contained), with -Wall -Wextra -Werror, as C
and as C++ with its declarations in C linkage;
each opens with a paragraph on its module; and every public options struct (ig_*_opts,
ig_*_options) has `reserved` room for growth and a defaults function taking it."""
import glob
import os
import subprocess
import sys

cc, include = sys.argv[1], sys.argv[2]
passed = failed = 0
for h in sorted(glob.glob(os.path.join(include, "infinigram", "*.h"))):
    src = '#include "infinigram/%s"\nint main(void) { return 0; }\n' % os.path.basename(h)
    p = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", include, "-x", "c", "-"],
                       input=src, capture_output=True, text=True)
    if p.returncode == 0:
        passed += 1
    else:
        failed += 1
        print("FAIL:", h, p.stderr)
# and as C++: C linkage declared, nothing C++ rejects (a C++ caller could not link before)
import re
import shutil
cxx = shutil.which("c++") or shutil.which("g++")
for h in sorted(glob.glob(os.path.join(include, "infinigram", "*.h"))) if cxx else []:
    src = '#include "infinigram/%s"\nint main() { return 0; }\n' % os.path.basename(h)
    body = open(h, encoding="utf-8").read()
    p = subprocess.run([cxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", include, "-x", "c++", "-"],
                       input=src, capture_output=True, text=True)
    ok = p.returncode == 0 and ("IG_BEGIN_DECLS" in body or not re.search(r"\bIG_API\b", body))
    passed, failed = passed + ok, failed + (not ok)
    if not ok:
        print("FAIL: as C++:", h, p.stderr or "declarations outside IG_BEGIN_DECLS/IG_END_DECLS")
import re
text = ""
for h in sorted(glob.glob(os.path.join(include, "infinigram", "*.h"))):
    body = open(h, encoding="utf-8").read()
    text += body
    ok = body.startswith("/*\n * ") and len(body.split("*/", 1)[0]) > 120
    passed, failed = passed + ok, failed + (not ok)
    if not ok:
        print("FAIL:", h, "does not open with a paragraph on its module")
structs = re.findall(r"typedef struct (ig_\w+_(?:opts|options)) \{(.*?)\n\} \1;", text, re.S)
for name, body in structs:
    ok = re.search(r"\breserved\[\d+\]", body) is not None
    ok = ok and re.search(r"IG_API void ig_\w+_defaults?\(%s \*" % name, text) is not None
    passed, failed = passed + ok, failed + (not ok)
    if not ok:
        print("FAIL:", name, "needs reserved room and a defaults function")
# who owns what: a prototype that returns a pointer, or hands one back through a pointer to
# a pointer, says so in its comment (malloc'd / owned / the caller's / static / valid until…)
owners = re.compile(r"malloc|owned|owns|caller|free|static|NULL-safe|valid until|a row of|into the", re.I)
for m in re.finditer(r"((?:/\*\*(?:(?!\*/).)*\*/\s*)?)IG_API\s+([^;{(]*?)\(([^;]*?)\);", text, re.S):
    comment, ret, params = m.groups()
    if "*" not in ret and "**" not in params:
        continue
    ok = bool(owners.search(comment + ret + params))
    passed, failed = passed + ok, failed + (not ok)
    if not ok:
        print("FAIL: no ownership stated for", ret.split()[-1].lstrip("*"))
if len(structs) < 10:
    print("FAIL: too few options structs found:", len(structs))
    failed += 1
print(f"headers: {passed} passed, {failed} failed")
sys.exit(1 if failed or passed < 5 else 0)
