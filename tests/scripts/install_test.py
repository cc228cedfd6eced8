"""The library as others get it: `meson install --destdir` into a staging directory, then
a small C program compiled and linked with nothing but `pkg-config --cflags --libs --static
infinigram` against the staged files, run: it builds an index of two inline documents and
counts a string through the public API.

usage: install_test.py BUILD_DIR CC
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from igtest import check, summary  # noqa: E402

BUILD, CC = sys.argv[1], sys.argv[2]
PROGRAM = r'''
#include <stdio.h>
#include <string.h>
#include <infinigram/infinigram.h>

int main(int argc, char **argv)
{
    const char *docs[2] = {"the cat sat on the mat", "the dog sat on the log"};
    ig_source src[2];
    for (int i = 0; i < 2; i++)
        src[i] = (ig_source){.kind = IG_SOURCE_INLINE, .text = docs[i], .text_len = strlen(docs[i])};
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    ig_error err;
    ig_index *idx = NULL;
    if (argc < 2 || ig_build_index(argv[1], src, 2, NULL, &bo, NULL, NULL, NULL, &res, &err) ||
        ig_index_open(&idx, argv[1], &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ig_build_result_free(&res);
    printf("%llu %llu\n", (unsigned long long)ig_count(idx, (const uint8_t *)"sat on the", 10),
           (unsigned long long)ig_count(idx, (const uint8_t *)"the", 3));
    ig_index_close(&idx);
    return 0;
}
'''


def main():
    if not shutil.which("pkg-config"):
        print("skipped: no pkg-config")
        return 77
    tmp = tempfile.mkdtemp(prefix="ig-install-")
    try:
        stage = os.path.join(tmp, "stage")
        p = subprocess.run(["meson", "install", "-C", BUILD, "--destdir", stage, "--no-rebuild", "--quiet"],
                           capture_output=True, text=True)
        check(p.returncode == 0, "meson install: " + p.stderr[-500:])
        pcs = glob.glob(os.path.join(stage, "**", "infinigram.pc"), recursive=True)
        check(len(pcs) == 1, f"infinigram.pc installed: {pcs}")
        if not pcs:
            return summary()
        pc = pcs[0]
        prefix = subprocess.run(["pkg-config", "--variable=prefix", pc], capture_output=True, text=True).stdout.strip()
        staged_prefix = stage + prefix
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pc))
        flags = subprocess.run(["pkg-config", f"--define-variable=prefix={staged_prefix}", "--cflags", "--libs",
                                "--static", "infinigram"], capture_output=True, text=True, env=env)
        check(flags.returncode == 0, "pkg-config: " + flags.stderr)
        for h in ("infinigram.h", "query.h", "fields.h", "modelops.h", "genops.h"):
            check(os.path.exists(os.path.join(staged_prefix, "include", "infinigram", h)), f"header {h} installed")
        check(glob.glob(os.path.join(stage, "**", "man1", "infinigram.1"), recursive=True), "man page installed")
        check(glob.glob(os.path.join(stage, "**", "bash-completion", "completions", "infinigram"), recursive=True),
              "bash completion installed")
        check(glob.glob(os.path.join(stage, "**", "infinigram", "datasets", "tinyshakespeare.txt"), recursive=True),
              "bundled dataset installed")
        check(glob.glob(os.path.join(stage, "**", "bin", "infinigram"), recursive=True), "program installed")
        src = os.path.join(tmp, "prog.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        exe = os.path.join(tmp, "prog")
        c = subprocess.run([CC, "-std=gnu11", src, "-o", exe] + flags.stdout.split(), capture_output=True, text=True)
        check(c.returncode == 0, "compile and link with pkg-config's flags only: " + c.stderr[-800:])
        if c.returncode == 0:
            r = subprocess.run([exe, os.path.join(tmp, "index")], capture_output=True, text=True)
            check(r.returncode == 0 and r.stdout.split() == ["2", "4"], f"the program runs: {r.stdout} {r.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
