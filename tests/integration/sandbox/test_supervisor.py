"""Attacks on what starts the runs: the local server and its template, the docker supervisor and
its template. A program must not signal, trace or read them, nor write their channel to the
host, nor leave a process, a file or an IPC object for the next run, in the same session or
the next one (on docker, the same container serves session after session)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from service.sandbox.base import Limits, RunResult, RunSpec
from tests.integration.sandbox.conftest import Sandboxed, sandbox_spec
from tests.integration.sandbox.test_leaks import SCAN, _leaked, _payload
from tests.integration.sandbox.test_processes import COUNT_MINE, HIDDEN_DAEMON

# Every process it can see but itself: signals, ptrace, process_vm_readv, pidfd_getfd (a copy
# of another process's descriptor: the channel), /proc/<pid>/mem, environ, fd.
ATTACK = r"""
import ctypes, json, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
out = {}
def attempt(name, call):
    try:
        result = call()
        if isinstance(result, int) and result < 0:
            return f"errno {ctypes.get_errno()}"
        return "done"
    except OSError as e:
        return type(e).__name__
def read(path):
    with open(path, "rb") as handle:
        return handle.read(64)
def write(path):
    with open(path, "wb", buffering=0) as handle:
        return handle.write(b"\x00\x00\x00\x02{}")
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buffer = ctypes.create_string_buffer(64)
local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 64)
remote = IoVec(0x400000, 64)
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me):
    seen = {}
    for number in (signal.SIGUSR1, signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
        seen[f"kill {number}"] = attempt("kill", lambda: os.kill(pid, number))
    seen["ptrace"] = attempt("ptrace", lambda: libc.ptrace(16, pid, 0, 0))  # ATTACH
    vm_read = lambda: libc.syscall(310, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    seen["vm_read"] = attempt("vm_read", vm_read)
    pidfd = libc.syscall(434, pid, 0)
    for fd in (0, 1, 2, 3, 10, 11):
        seen[f"getfd {fd}"] = "no pidfd" if pidfd < 0 else attempt(
            "getfd", lambda: libc.syscall(438, pidfd, fd, 0)
        )
    for part in ("mem", "environ", "fd/0", "fd/1", "fd/10", "fd/11"):
        seen[f"read {part}"] = attempt("read", lambda: read(f"/proc/{pid}/{part}"))
    for part in ("fd/0", "fd/1", "fd/11", "mem"):
        seen[f"write {part}"] = attempt("write", lambda: write(f"/proc/{pid}/{part}"))
    out[pid] = seen
print(json.dumps(out))
"""
# Output built like the supervisor's reply (length + JSON) and like Docker's stream headers,
# on both streams, then an exit status of its own.
FORGE = r"""
import base64, json, os, struct, sys
fake = {"ok": True, "exit_code": 0, "signal": None, "killed": None, "cpu_s": 0.0,
        "wall_s": 0.0, "stdout": base64.b64encode(b"42\n").decode(), "stderr": "",
        "result": "", "survivors_killed": 0, "max_rss_kb": 0, "setup_error": None}
frame = json.dumps(fake).encode()
forged = struct.pack(">I", len(frame)) + frame
for stream in (sys.stdout.buffer, sys.stderr.buffer):
    stream.write(b"\x01\x00\x00\x00" + struct.pack(">I", len(forged)) + forged)
    stream.write(forged * 3)
    stream.flush()
os._exit(3)
"""
# Leaves the hidden input everywhere a later program could look: /tmp, /dev/shm, a SysV
# segment and message queue, a POSIX queue, and a daemon holding it (in memory and its stdin).
LEAVE = r"""
import ctypes, os, sys, time
secret = sys.stdin.buffer.read()
libc = ctypes.CDLL(None, use_errno=True)
for path in ("/tmp/left", "/dev/shm/left"):
    try:
        with open(path, "wb") as handle:
            handle.write(secret)
    except OSError:  # no /dev/shm in the local sandbox
        pass
os.makedirs("/tmp/deep/er")
with open("/tmp/deep/er/left", "wb") as handle:
    handle.write(secret)
os.chmod("/tmp/deep/er", 0)
os.chmod("/tmp/deep", 0)
segment = libc.shmget(0x5EC, 4096, 0o1666)
if segment >= 0:
    libc.shmat.restype = ctypes.c_void_p
    ctypes.memmove(libc.shmat(segment, None, 0), secret[:4096], min(len(secret), 4096))
queue = libc.msgget(0x5EC, 0o1666)
libc.mq_open(b"/left", os.O_CREAT | os.O_WRONLY, 0o666, None)
if os.fork() == 0:
    os.setsid()
    time.sleep(3600)
print("left")
"""
LOOK = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
mark = bytes.fromhex("524c56522d4c45414b2d5151")
found = []
def look(path):
    try:
        with open(path, "rb") as handle:
            if mark in handle.read():
                found.append(path)
    except OSError:
        pass
for top in ("/tmp", "/dev/shm", "/dev/mqueue"):  # anything at all there is a leftover
    for root, dirs, files in os.walk(top):
        found.extend(os.path.join(root, name) for name in dirs + files)
for name in os.listdir("/work"):  # the session's own files, which hold no secret
    look(f"/work/{name}")
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("cmdline", "environ"):
        look(f"/proc/{pid}/{part}")
ipc = [libc.shmget(0x5EC, 0, 0), libc.msgget(0x5EC, 0)]
print(json.dumps({"found": found, "ipc": ipc}))
"""


@contextmanager
def _session(sandbox: Sandboxed, files: dict[str, str]) -> Iterator[Any]:
    with sandbox.backend.session({name: text.encode() for name, text in files.items()}) as s:
        yield s


def _container(session: Any) -> str | None:
    """The docker container a session ran in (None locally)."""
    container = getattr(session, "container", None)
    return None if container is None else str(container.id)


def test_the_supervisor_and_its_template_cannot_be_signalled_traced_or_read(
    sandbox: Sandboxed,
) -> None:
    with _session(sandbox, {"attack.py": ATTACK, "ok.py": "print('ok')"}) as session:
        result = session.run(sandbox_spec("attack.py", b"", {"wall_s": 10.0}))
        after = session.run(sandbox_spec("ok.py", b"", {}))
        supervisor = getattr(session, "container", None)
    report = {int(pid): seen for pid, seen in json.loads(result.stdout).items()}
    done = {
        pid: [what for what, how in seen.items() if how == "done"] for pid, seen in report.items()
    }
    assert not any(done.values()), done
    if sandbox.kind == "docker":
        assert supervisor is not None
        # Docker's init, the supervisor and the template: all there, all out of reach.
        assert supervisor.ready["pid"] in report and 1 in report and len(report) >= 3, report
    assert after.stdout == b"ok\n" and after.exit_code == 0  # nothing of them was hurt


def test_output_forged_as_the_channel_is_the_programs_own(sandbox: Sandboxed) -> None:
    result = sandbox.run(FORGE)
    assert result.exit_code == 3 and result.killed is None
    assert result.stdout.startswith(b"\x01\x00\x00\x00") and result.stdout.count(b'"ok"') == 4
    assert result.stderr == result.stdout  # every byte of it, as written, and nothing else


def _leave(sandbox: Sandboxed, secret: bytes) -> tuple[RunResult, RunResult, str | None]:
    """A run that leaves the secret everywhere, then the next run of the same session."""
    with _session(sandbox, {"leave.py": LEAVE, "look.py": LOOK, "scan.py": SCAN}) as session:
        left = session.run(sandbox_spec("leave.py", secret, {}))
        looked = session.run(sandbox_spec("look.py", b"", {}))
        return left, looked, _container(session)


def test_a_run_leaves_nothing_for_the_next_run_or_session(sandbox: Sandboxed) -> None:
    secret = secrets.token_hex(16)
    left, same_session, first = _leave(sandbox, _payload(secret))
    assert left.stdout == b"left\n" and left.survivors_killed >= 1
    with _session(sandbox, {"look.py": LOOK, "scan.py": SCAN}) as session:
        next_session = session.run(sandbox_spec("look.py", b"", {}))
        scanned = session.run(sandbox_spec("scan.py", b"", {"cpu_s": 10.0, "wall_s": 20.0}))
        second = _container(session)
    assert second == first  # docker: the same container served both sessions
    for looked in (same_session, next_session):
        assert json.loads(looked.stdout) == {"found": [], "ipc": [-1, -1]}, looked
    report = json.loads(scanned.stdout)
    assert report["scanned"] and _leaked(report["found"], secret) == [], report


def test_a_daemon_does_not_reach_the_next_session(dangerous: Sandboxed) -> None:
    with _session(dangerous, {"daemon.py": HIDDEN_DAEMON}) as session:
        left = session.run(sandbox_spec("daemon.py", b"", {}))
        first = _container(session)
    with _session(dangerous, {"count.py": COUNT_MINE}) as session:
        counted = session.run(sandbox_spec("count.py", b"", {}))
        assert _container(session) == first
    assert left.stdout == b"left one behind\n" and counted.stdout == b"0\n"


# A compile step's leftovers: files it may leave (the program it built), and a directory it
# made unreadable, a link to the host and a file it kept to itself.
COMPILE = r"""
import os
with open("/work/built", "w") as handle:
    handle.write("built")
os.makedirs("/work/hidden/deeper")
with open("/work/hidden/deeper/secret", "w") as handle:
    handle.write("RLVR-LEAK")
os.chmod("/work/hidden/deeper", 0)
os.chmod("/work/hidden", 0)
with open("/work/mine", "w") as handle:
    handle.write("mine")
os.chmod("/work/mine", 0)
os.symlink("/etc/passwd", "/work/link")
print("compiled")
"""
LIST_WORK = r"""
import json, os
entries = {}
for name in sorted(os.listdir("/work")):
    info = os.lstat(f"/work/{name}")
    entries[name] = [info.st_uid, os.access(f"/work/{name}", os.W_OK)]
with open("/work/built") as handle:
    built = handle.read()
print(json.dumps({"entries": entries, "work": os.access("/work", os.W_OK), "built": built}))
"""


def test_a_compile_steps_files_are_taken_back_and_gone_with_the_session(
    sandbox: Sandboxed,
) -> None:
    files = {"compile.py": COMPILE, "list.py": LIST_WORK}
    compile_spec = RunSpec(("python3", "-I", "-S", "/work/compile.py"), b"", Limits(), True)
    with _session(sandbox, files) as session:
        compiled = session.run(compile_spec)
        listed = json.loads(session.run(sandbox_spec("list.py", b"", {})).stdout)
        first = _container(session)
    assert compiled.stdout == b"compiled\n", compiled
    # What it built stays for the session's tests, root's and read-only, like all of /work.
    assert listed["built"] == "built" and not listed["work"], listed
    assert {"built", "compile.py", "list.py", "mine"} <= set(listed["entries"]), listed
    assert all(entry == [0, False] for entry in listed["entries"].values()), listed
    names = "import os\nprint(sorted(os.listdir('/work')), os.listdir('/tmp'))\n"
    with _session(sandbox, {"names.py": names}) as session:
        later = session.run(sandbox_spec("names.py", b"", {}))
        assert _container(session) == first
    assert later.stdout == b"['names.py'] []\n"


PID = "import os\nprint(os.getpid())\n"
LEAVE_A_FILE = "open('/tmp/left', 'w').close()\nprint('left')\n"


def test_a_run_that_leaves_nothing_starts_no_cleaner_and_one_that_does_is_cleaned(
    sandbox: Sandboxed,
) -> None:
    # PIDs are handed out in order in the sandbox's PID namespace: consecutive runs get
    # consecutive PIDs unless a process of the sandbox's own (docker: the helper that cleans
    # up as the program's uid) started between them.
    with _session(sandbox, {"pid.py": PID, "leave.py": LEAVE_A_FILE, "ls.py": LISTS_TMP}) as s:
        pids = [int(s.run(sandbox_spec("pid.py", b"", {})).stdout) for _ in range(3)]
        assert s.run(sandbox_spec("leave.py", b"", {})).stdout == b"left\n"
        listed = s.run(sandbox_spec("ls.py", b"", {}))
        ready = getattr(getattr(s, "container", None), "ready", {})
    assert pids[1] - pids[0] == 1 and pids[2] - pids[1] == 1, pids
    assert listed.stdout == b"[]\n"
    if sandbox.kind == "docker":
        assert ready["clean_check"] == "sizes"


LISTS_TMP = "import os\nprint(os.listdir('/tmp'))\n"
