"""Attacks on time and processes: each ends in its limit and leaves nothing running."""

from __future__ import annotations

import signal

from service.sandbox.base import Limits
from tests.integration.sandbox.conftest import Sandboxed


def test_the_guard_probe_sees_only_the_sandbox(pid_namespace_confirmed: bool) -> None:
    assert pid_namespace_confirmed


def test_busy_loop_is_stopped_by_the_cpu_limit(sandbox: Sandboxed) -> None:
    # A wall clock far away: on a loaded machine a second of CPU can take seconds of wall time.
    result = sandbox.run("while True:\n    pass\n", cpu_s=0.5, wall_s=30.0)
    assert result.exceeded_time(Limits(cpu_s=0.5))
    assert result.cpu_s >= 0.45  # measured outside the program (rusage; the container's cgroup)
    assert result.term_signal in (signal.SIGXCPU, signal.SIGKILL)
    assert result.killed != "wall"  # the CPU limit fired, not the wall clock
    assert result.wall_s < 30.0


def test_sleeping_forever_is_stopped_by_the_wall_clock(sandbox: Sandboxed) -> None:
    result = sandbox.run("import time\ntime.sleep(3600)\n", wall_s=1.0)
    assert result.killed == "wall" and result.term_signal == signal.SIGKILL
    assert 1.0 <= result.wall_s < 1.8


def test_ignoring_sigterm_does_not_help(sandbox: Sandboxed) -> None:
    source = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    result = sandbox.run(source, wall_s=0.8)
    assert result.killed == "wall" and result.term_signal == signal.SIGKILL


def test_fork_bomb_hits_the_process_limit_and_dies_whole(dangerous: Sandboxed) -> None:
    source = (
        "import os\ncount = 0\nwhile True:\n    try:\n        os.fork()\n"
        "        count += 1\n    except OSError:\n        pass\n"
    )
    result = dangerous.run(source, wall_s=1.0, processes=16)
    assert result.killed == "wall"
    assert dangerous.backend.leftover_processes() == []


def test_thread_bomb_is_refused_new_threads(dangerous: Sandboxed) -> None:
    source = (
        "import threading, time\nn = 0\ntry:\n    while True:\n"
        "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "        n += 1\nexcept RuntimeError:\n    print('refused after', n, flush=True)\n"
    )
    result = dangerous.run(source, processes=16)
    assert result.stdout.startswith(b"refused after")
    assert int(result.stdout.split()[-1]) < 16


def test_double_fork_daemon_does_not_outlive_the_run(dangerous: Sandboxed) -> None:
    source = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        time.sleep(3600)\n    os._exit(0)\nprint('parent done')\n"
    )
    result = dangerous.run(source)
    assert result.stdout == b"parent done\n" and result.exit_code == 0
    # The daemon (and its exited parent, if not yet reaped) die as soon as the program ends.
    assert result.survivors_killed >= 1


def test_killing_everything_reaches_only_the_program_itself(dangerous: Sandboxed) -> None:
    source = (
        "import os\ntry:\n    os.kill(-1, 9)\nexcept OSError as e:\n    print(type(e).__name__)\n"
        "print('alive')\n"
    )
    result = dangerous.run(source)
    # Nothing else of its uid exists; what started it is root and immune: locally the server
    # (PID 1) and the run template, in a container Docker's init, the supervisor and its run
    # template. The kernel answers success, not ESRCH, once another process it may not signal
    # exists.
    assert result.stdout == b"alive\n" and result.exit_code == 0


def test_killing_the_parent_is_not_permitted(dangerous: Sandboxed) -> None:
    source = (
        "import os\nfor pid in (os.getppid(), 1):\n    try:\n        os.kill(pid, 9)\n"
        "        print('sent')\n    except OSError as e:\n        print(type(e).__name__)\n"
    )
    result = dangerous.run(source)
    # Its parent is the run template (root) on both backends; PID 1 is the local server or
    # Docker's init.
    assert result.stdout == b"PermissionError\nPermissionError\n"


def test_exits_before_anything_runs_are_plain_exits(sandbox: Sandboxed) -> None:
    for source, code in (
        ("import sys\nsys.exit(0)\nprint('x')", 0),
        ("import os\nos._exit(3)", 3),
        ("quit()", 0),
        ("raise SystemExit('bye')", 1),
        ("import os\nos.execv('/bin/true', ['true'])", 0),
    ):
        result = sandbox.run(source)
        assert (result.exit_code, result.stdout) == (code, b""), source


HIDDEN_DAEMON = """
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/<pid> now shows root's
    time.sleep(3600)
print("left one behind")
"""
COUNT_MINE = """
import os
mine = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/status") as status:
            uid = [line.split()[1] for line in status if line.startswith("Uid:")][0]
    except OSError:
        continue
    if int(uid) == os.getuid() and int(pid) not in (os.getpid(), os.getppid()):
        mine.append(pid)
print(len(mine))
"""


def test_a_hidden_daemon_does_not_reach_the_next_test(dangerous: Sandboxed) -> None:
    left, counted = dangerous.runs([HIDDEN_DAEMON, COUNT_MINE])  # one session
    assert left.stdout == b"left one behind\n"
    assert counted.stdout == b"0\n"
