#!/usr/bin/env python3
"""Each public header compiles on its own (self-contained), with -Wall -Wextra -Werror."""
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
print(f"headers: {passed} passed, {failed} failed")
sys.exit(1 if failed or passed < 5 else 0)
