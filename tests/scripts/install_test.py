"""The library as others get it: `meson install --destdir` into a staging directory, then
a small C program compiled and linked with nothing but pkg-config's flags against the staged
files — statically (`--static`, the archive) and dynamically (the shared library, found at
run time through its soname) — and run: it builds an index of two inline documents and
counts a string through the public API. The shared library's soname carries the major
version of version.h, and it exports exactly the IG_API functions and variables the public
headers declare: `ig_` names only, nothing internal (`nm -D`).

usage: install_test.py BUILD_DIR CC
"""
import glob
import os
import re
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

# The same from C++: the headers declare C linkage (a C++ caller linked against mangled names).
PROGRAM_CXX = r'''
#include <cstdio>
#include <cstring>
#include <infinigram/infinigram.h>

int main(int argc, char **argv)
{
    const char *text = "the cat sat on the mat";
    ig_source src = {};
    src.kind = IG_SOURCE_INLINE;
    src.text = text;
    src.text_len = std::strlen(text);
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = 1;
    ig_build_result res;
    ig_error err;
    ig_index *idx = nullptr;
    if (argc < 2 || ig_build_index(argv[1], &src, 1, nullptr, &bo, nullptr, nullptr, nullptr, &res, &err) ||
        ig_index_open(&idx, argv[1], &err)) {
        std::fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ig_build_result_free(&res);
    std::printf("%llu\n", (unsigned long long)ig_count(idx, (const uint8_t *)"the", 3));
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
        for h in ("infinigram.h", "version.h", "error.h", "index.h", "build.h", "query.h", "model.h", "generate.h",
                  "explain.h", "catalog.h", "text.h", "fields.h", "contam.h", "dups.h"):
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
        libdir = os.path.dirname(glob.glob(os.path.join(staged_prefix, "**", "libinfinigram.a"), recursive=True)[0])
        # static: the archive named explicitly in place of -linfinigram
        sflags = [("-l:libinfinigram.a" if w == "-linfinigram" else w) for w in flags.stdout.split()]
        dflags = subprocess.run(["pkg-config", f"--define-variable=prefix={staged_prefix}", "--cflags", "--libs",
                                 "infinigram"], capture_output=True, text=True, env=env)
        check(dflags.returncode == 0 and "-linfinigram" in dflags.stdout, "pkg-config (shared): " + dflags.stderr)
        for kind, fl in (("static", sflags), ("shared", dflags.stdout.split())):
            exe = os.path.join(tmp, "prog-" + kind)
            c = subprocess.run([CC, "-std=gnu11", src, "-o", exe] + fl, capture_output=True, text=True)
            check(c.returncode == 0, f"{kind}: compile and link with pkg-config's flags only: " + c.stderr[-800:])
            if c.returncode:
                continue
            renv = dict(os.environ, LD_LIBRARY_PATH=libdir)
            needed = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True).stdout
            check(("libinfinigram.so." in needed) == (kind == "shared"), f"{kind}: NEEDED entries: {needed[-600:]}")
            r = subprocess.run([exe, os.path.join(tmp, "index-" + kind)], capture_output=True, text=True, env=renv)
            check(r.returncode == 0 and r.stdout.split() == ["2", "4"], f"{kind}: the program runs: {r.stdout} {r.stderr}")
        cxx = shutil.which("c++") or shutil.which("g++")
        if cxx:
            src_cxx, exe = os.path.join(tmp, "prog.cc"), os.path.join(tmp, "prog-cxx")
            with open(src_cxx, "w") as f:
                f.write(PROGRAM_CXX)
            c = subprocess.run([cxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", src_cxx, "-o", exe] + dflags.stdout.split(),
                               capture_output=True, text=True)
            check(c.returncode == 0, "C++: compile and link with pkg-config's flags only: " + c.stderr[-800:])
            if c.returncode == 0:
                r = subprocess.run([exe, os.path.join(tmp, "index-cxx")], capture_output=True, text=True,
                                   env=dict(os.environ, LD_LIBRARY_PATH=libdir))
                check(r.returncode == 0 and r.stdout.split() == ["2"], f"C++: the program runs: {r.stdout} {r.stderr}")
        # the shared library's name and exports
        version = open(os.path.join(staged_prefix, "include", "infinigram", "version.h")).read()
        major = re.search(r"#define IG_API_VERSION_MAJOR (\d+)", version).group(1)
        sos = glob.glob(os.path.join(libdir, "libinfinigram.so.*.*.*"))
        check(len(sos) == 1, f"one shared library: {sos}")
        if sos:
            soname = subprocess.run(["objdump", "-p", sos[0]], capture_output=True, text=True).stdout
            check(re.search(r"SONAME\s+libinfinigram\.so\.%s\n" % major, soname), "soname libinfinigram.so." + major)
            dyn = subprocess.run(["nm", "-D", "--defined-only", sos[0]], capture_output=True, text=True).stdout.split("\n")
            exported = sorted({l.split()[-1] for l in dyn if l.strip()})
            headers = "".join(open(h).read() for h in glob.glob(os.path.join(staged_prefix, "include", "infinigram", "*.h")))
            declared = set()
            for decl in re.findall(r"IG_API\b[^;{]*", headers):  # the name before the parameter list or the ;
                m = re.findall(r"\b(ig_[A-Za-z0-9_]+)\s*(?:\(|\[|$)", decl.strip())
                if m:
                    declared.add(m[0])
            check(len(exported) > 100, f"the shared library exports the API ({len(exported)} symbols)")
            stray = [x for x in exported if not x.startswith("ig_") or x not in declared]
            check(not stray, f"exported but not public API: {stray[:20]}")
            missing = sorted(declared - set(exported))
            check(not missing, f"declared IG_API but not exported: {missing[:20]}")
        # no public header names an internal symbol of the library
        internal = subprocess.run(["nm", "--defined-only", os.path.join(libdir, "libinfinigram.a")],
                                  capture_output=True, text=True).stdout
        hidden = {l.split()[-1] for l in internal.split("\n") if re.match(r"^\S+ [TDBR] ", l)} - set(exported if sos else [])
        leaked = sorted(x for x in hidden if re.search(r"\b%s\b" % re.escape(x), headers))
        check(not leaked, f"public headers name internal symbols: {leaked[:20]}")
        check(not [x for x in hidden if x.startswith("ig_")], "internal symbols use an internal prefix: %s"
              % sorted(x for x in hidden if x.startswith("ig_"))[:20])
        # a program linking the archive meets no name of ours outside ig_ / igi_
        stray = sorted(x for x in hidden if not x.startswith(("ig_", "igi_")))
        check(not stray, f"the archive's global names all start with ig_ or igi_: {stray[:20]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
