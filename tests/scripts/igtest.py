"""What the Python test scripts share: pass/fail counting, a free loopback port, an HTTP
call that returns status and body whatever the status, and a server started on a home
and waited for."""
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

passed = failed = 0


def check(cond, what):
    global passed, failed
    passed, failed = passed + bool(cond), failed + (not cond)
    if not cond:
        print("FAIL:", what, flush=True)


def summary():
    """Prints the closing line and returns the exit status."""
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def shell(binary, home, *cmds, json_out=True, timeout=120, env=None):
    """Runs the shell on `home` with each of cmds as a -c (JSON Lines output unless told
    otherwise, the fake clock on) and returns the CompletedProcess."""
    args = [binary, "--home", home] + (["--json"] if json_out else [])
    for c in cmds:
        args += ["-c", c]
    e = dict(os.environ, INFINIGRAM_FAKE_CLOCK="1")
    e.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=e, timeout=timeout)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def call(port, path, body=None, method=None, raw=None, timeout=30, headers=None):
    """(status, body text, seconds) of one request; body is sent as JSON, raw as bytes."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers or {})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            st, b = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        st, b = e.code, e.read().decode()
    return st, b, time.monotonic() - t0


def start_server(argv, port, **popen):
    """Starts `argv` (an infinigram serve command line) and waits until port accepts."""
    srv = subprocess.Popen(argv, **popen)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return srv


def swap_for_stream(path, kind):
    """Replaces the file at path by a FIFO (kind "fifo") or a link to /dev/zero ("zero"): a
    file that never starts or never ends, as a hostile or careless user leaves one."""
    os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)
