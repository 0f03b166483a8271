"""The pristine template every run is forked from.

A run forked from the server itself inherits the server's whole heap: freed buffers of earlier
requests (another session's files, an earlier test's hidden input, base64 or decoded) stay in
it as they were, and a program that makes itself dumpable could read them back from
``/proc/self/mem``. So the server forks one template right after start-up, before it has read
any request, and every run is forked from that template instead. The template never sees a
job: it is handed the run's descriptors and forks; the child alone reads its job (argv,
limits) from a pipe. It is also the runs' reaper (a child subreaper: what a program leaves
behind is reparented to it), so it reports each run's exit status and resource use, and kills
and reaps whatever outlived the run.

How the run's processes are killed depends on where the template is (``Reaper``): the local
server's template is root in a PID namespace of its own, and ``kill(-1)`` reaches everything
but the server (PID 1) and itself; the docker supervisor's template holds no ``CAP_KILL`` and
kills through a helper that takes the program's uid (``server/reaper.py``), which also cleans
up after the run as that uid. The template reads nothing a program wrote: only exit statuses,
resource use and its helpers' exit statuses.
"""

from __future__ import annotations

import _signal
import contextlib
import json
import os
import resource
import select
import signal
import socket
from typing import Any, Protocol

from .rootfs import PR_SET_PDEATHSIG, check, libc

PR_SET_CHILD_SUBREAPER = 36
_FDS = 6  # stdin, stdout, stderr, result, set-up status, job
# How often the server repeats its kill request until the run's end is reported.
_KILL_EVERY_S = 0.1


class Reaper(Protocol):
    """How the template ends a run's processes and cleans up after them."""

    def kill(self) -> None:
        """Send SIGKILL to every process of the run (safe in a signal handler)."""
        ...

    def helper(self, pid: int) -> bool:
        """Whether ``pid`` (just reaped) was one of the reaper's own helpers; forgets it."""
        ...

    def pending(self) -> bool:
        """Whether a kill is still under way (a helper not reaped yet)."""
        ...

    def clean(self) -> str | None:
        """After every process of the run is gone: what could not be cleaned up, or None."""
        ...


class NamespaceReaper:
    """The local template: root in the run's PID namespace, whose PID 1 is the server."""

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)

    def helper(self, pid: int) -> bool:
        return False

    def pending(self) -> bool:
        return False

    def clean(self) -> str | None:
        return None  # the server gives each run a fresh /tmp


class Template:
    """The server's handle on its template (a child process of the server).

    One round trip per run: the server sends the run's descriptors, the template forks, waits
    for the run, kills and reaps what it left and sends the outcome, unasked; the server polls
    ``fileno()`` for it. SIGUSR1 asks the template to kill the run early (over a limit)."""

    def __init__(self, start_child: Any, reaper: Reaper | None = None) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            ours.close()
            _serve(theirs, start_child, reaper or NamespaceReaper())  # never returns
        theirs.close()
        self.pid, self.sock = pid, ours

    def fileno(self) -> int:
        return self.sock.fileno()

    def start_run(self, fds: list[int]) -> None:
        """Fork a new run holding ``fds`` (in the order of ``_FDS``)."""
        socket.send_fds(self.sock, [b"fork"], fds)

    def outcome(self) -> dict[str, Any]:
        """The run's end (once ``fileno()`` is readable): its wait status, CPU seconds, peak
        RSS, how many processes it left behind and whether its left-overs were cleaned up."""
        data = self.sock.recv(4096)
        if not data:
            raise OSError("the sandbox's run template is gone")
        reply: dict[str, Any] = json.loads(data)
        return reply

    def kill_run(self) -> dict[str, Any]:
        """Kill the run and everything it started; its outcome."""
        while True:
            os.kill(self.pid, signal.SIGUSR1)
            readable, _, _ = select.select([self.sock], [], [], _KILL_EVERY_S)
            if readable:
                return self.outcome()


def kill_all(reaper: Reaper) -> int:
    """Kill every process of the run and reap them all (the template is their subreaper, so
    none is left once it has no child); how many there were."""
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:  # some are alive: kill them, then wait for the next to end
                if not reaper.pending():
                    reaper.kill()
                pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return reaped
        if not reaper.helper(pid):
            reaped += 1


_killed = False
_running = False
_reaper: Reaper = NamespaceReaper()


def _kill_request(signum: int, frame: Any) -> None:
    # Interrupts the template's wait for the run (which then resumes and returns at once). A
    # request that comes after the run ended (the server repeats it until it hears the end) is
    # dropped: a helper started then could still be killing when the next run starts.
    global _killed
    if _running:
        _killed = True
        _reaper.kill()


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _serve(sock: socket.socket, start_child: Any, reaper: Reaper) -> None:
    global _killed, _running, _reaper
    _reaper = reaper
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
    check(libc.prctl(PR_SET_CHILD_SUBREAPER, 1), "subreaper")
    signal.signal(signal.SIGUSR1, _kill_request)
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 64, _FDS)
        if not message:  # the server is gone: so is the namespace
            os._exit(0)
        if message != b"fork" or len(fds) != _FDS:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"error": "unexpected request"}).encode())
            continue
        _killed = False
        # Every process of the run ends up reaped here, however it was orphaned: the CPU time
        # of all of them (daemons, unreaped children) is the run's, not only its first's.
        cpu_before = _children_cpu_s()
        pid = os.fork()
        if pid == 0:
            # The C function: the module's wrapper would turn the old handler (a function)
            # into an enum by raising and catching a ValueError, all copy-on-write faults.
            _signal.signal(signal.SIGUSR1, _signal.SIG_DFL)
            sock.close()
            start_child(fds)  # raises RunPython, execs or exits
            os._exit(127)
        _running = True
        for fd in fds:
            os.close(fd)
        _, status, usage = os.wait4(pid, 0)
        # What the program left (daemons, a double fork) dies now, so the pipes those
        # processes hold close; its count is reported only for a program that ended by itself.
        survivors = kill_all(reaper)
        _running = False
        reply: dict[str, Any] = {
            "status": status,
            "cpu_s": max(0.0, _children_cpu_s() - cpu_before),
            "max_rss_kb": usage.ru_maxrss,
            "survivors": 0 if _killed else survivors,
        }
        # Cleaning up is the sandbox's time: after the CPU was counted.
        unclean = reaper.clean()
        if unclean is not None:
            reply["unclean"] = unclean
        sock.send(json.dumps(reply).encode())
