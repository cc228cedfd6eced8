#!/usr/bin/env python3
"""A 100 MB single-line file, as one text document and as a `lines` document: builds,
and the counts and positions agree with Python's own scan."""
import json
import os
import subprocess
import sys
import tempfile

import igtest
from igtest import check

BIN = os.path.abspath(sys.argv[1])


with tempfile.TemporaryDirectory(prefix="iglarge") as tmp:
    path = os.path.join(tmp, "line.txt")
    unit = "the quick brown fox jumps over the lazy dog, said Zoë; "
    data = (unit * (100_000_000 // len(unit.encode()) + 1)).encode()[:100_000_000]
    while data and (data[-1] & 0xC0) == 0x80 or data[-1] >= 0xC0:
        data = data[:-1]
    with open(path, "wb") as f:
        f.write(data)
    home = os.path.join(tmp, "home")
    for fmt in ("text", "lines"):
        p = subprocess.run([BIN, "--home", home, "--json", "-c", f":dataset add big{fmt} {path} --format {fmt}",
                            "-c", f"build big{fmt}", "-c", f"load big{fmt}", "-c", 'count --positions 2 "lazy dog"',
                            "-c", 'count "Zo\\xc3\\xab;"'], capture_output=True, text=True, timeout=900)
        check(p.returncode == 0, f"{fmt}: build and query a 100 MB line: {p.stderr[-500:]}")
        if p.returncode:
            continue
        objs = [json.loads(l) for l in p.stdout.splitlines()]
        check(objs[1]["bytes"] == len(data) + 1 and objs[1]["documents"] == 1, f"{fmt}: sizes {objs[1]}")
        check(objs[3]["count"] == data.count(b"lazy dog"), f"{fmt}: count {objs[3]['count']}")
        first = data.find(b"lazy dog")
        check(objs[3]["positions"][0]["offset"] == first and objs[3]["positions"][0]["line"] == 1,
              f"{fmt}: first position {objs[3]['positions'][0]}")
        check(objs[3]["positions"][0]["column"] == len(data[:first].decode()) + 1, f"{fmt}: column in characters")
        check(objs[4]["count"] == data.count("Zoë;".encode()), f"{fmt}: multi-byte count")
print(f"large: {igtest.passed} passed, {igtest.failed} failed")
sys.exit(1 if igtest.failed else 0)
