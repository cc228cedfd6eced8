# gdb script for tests/bench/hops.sh: which source files of src/ a command crosses on its way
# to the engine. A breakpoint on every function of the program's own files records each file
# entered after the face received the command (TRACE_START, armed when its argument TRACE_ARG
# contains TRACE_MATCH); at the first suffix-array read (TRACE_SA) it adds the files on the
# stack and prints one line: "FILES N file...". Files of other libraries do not count.
import glob
import os

import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
root = os.environ["TRACE_ROOT"]  # the src/ folder the binary was built from
entered = []
armed = [False]


def rel(frame):
    sal = frame.find_sal()
    if not sal.symtab:
        return None
    path = os.path.relpath(sal.symtab.fullname(), root)
    return None if path.startswith("..") else path


class Enter(gdb.Breakpoint):
    def stop(self):
        if armed[0]:
            f = rel(gdb.selected_frame())
            if f and f not in entered:
                entered.append(f)
        return False


class Start(gdb.Breakpoint):
    def stop(self):
        try:
            arg = gdb.parse_and_eval(os.environ["TRACE_ARG"]).string()
        except gdb.error:
            arg = ""
        if os.environ["TRACE_MATCH"] in arg:
            armed[0] = True
        return False


class SuffixRead(gdb.Breakpoint):
    def stop(self):
        if not armed[0]:
            return False
        stack, f = [], gdb.newest_frame()
        while f:
            r = rel(f)
            if r:
                stack.append(r)
            f = f.older()
        files = sorted(set(stack) | set(entered))
        print("STACK " + " < ".join(stack))
        print("ENTERED " + " ".join(entered))
        print("FILES %d %s" % (len(files), " ".join(files)), flush=True)
        gdb.execute("kill")
        return True


# every function of the program's own files (gdb lists them by file)
current = None
for line in gdb.execute("info functions", to_string=True).splitlines():
    if line.startswith("File "):
        path = line[5:].rstrip(":")
        current = path if path.endswith(".c") else None  # rel() keeps only src/'s files
        continue
    number = line.split(":", 1)[0].strip()
    if current and number.isdigit():
        try:
            Enter("%s:%s" % (os.path.basename(current), number), internal=True)
        except gdb.error:
            pass
Start(os.environ["TRACE_START"], internal=True)
SuffixRead(os.environ.get("TRACE_SA", "ig_shard_sa"), internal=True)
gdb.execute("run")
