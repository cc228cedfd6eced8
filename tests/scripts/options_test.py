"""The meson options work on the meson this machine has (Debian 12: 1.0.1, which reads
meson_options.txt but not meson.options): a build configured with -Dtests=false has no
test program, and the options tests and fuzz are known to meson.

usage: options_test.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, summary  # noqa: E402

SRC = sys.argv[1]


def main():
    tmp = tempfile.mkdtemp(prefix="ig-options-")
    try:
        b = os.path.join(tmp, "b")
        p = subprocess.run(["meson", "setup", b, SRC, "-Dtests=false"], capture_output=True, text=True)
        check(p.returncode == 0, "meson setup -Dtests=false: " + (p.stdout + p.stderr)[-600:])
        if p.returncode == 0:
            t = subprocess.run(["meson", "introspect", "--targets", b], capture_output=True, text=True)
            names = [x["name"] for x in json.loads(t.stdout)] if t.returncode == 0 else []
            check("infinigram" in names and "infinigram" in " ".join(names), f"the program is a target: {names[:8]}")
            tests = [n for n in names if n.startswith(("test_", "fuzz_", "bench_"))]
            check(not tests, f"no test, fuzz or bench program with tests=false: {tests}")
            o = subprocess.run(["meson", "introspect", "--buildoptions", b], capture_output=True, text=True)
            opts = {x["name"]: x["value"] for x in json.loads(o.stdout)} if o.returncode == 0 else {}
            check(opts.get("tests") is False and opts.get("fuzz") is False, "options tests and fuzz known")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
