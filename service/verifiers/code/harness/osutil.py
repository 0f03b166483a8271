"""What the harness needs of the kernel beyond the standard library's wrappers."""

from __future__ import annotations

import _signal
import contextlib
import ctypes
import functools
import os
import signal
import struct
from typing import Any

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
# Signals a solution could send the driver to disturb it; only SIGKILL and SIGSTOP remain,
# and either can only cost the solution its own verdict.
_IGNORED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGTRAP")
_DEFAULT = (*_IGNORED, "SIGXCPU", "SIGALRM", "SIGCHLD")


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    """``prctl(option, value)``; OSError if the kernel refuses."""
    if _libc().prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl({option}) failed: {os.strerror(errno)}")


def set_handler(signum: int, handler: Any) -> None:
    """``signal.signal`` without its enum conversions, whose objects a freshly forked process
    would write to (copy-on-write faults; where the old handler is a function, a ValueError
    raised and caught as well). ``handler``: a function, ``_signal.SIG_IGN`` or
    ``_signal.SIG_DFL`` (not the ``signal`` module's enum members, which it refuses)."""
    _signal.signal(signum, handler)


def harden_driver() -> None:
    """The driver: not dumpable (no /proc/<pid>/mem, fd or ptrace access for its siblings),
    the reaper of whatever its children leave, and deaf to catchable signals."""
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    for name in _IGNORED:
        set_handler(getattr(signal, name), _signal.SIG_IGN)


def reset_child_signals() -> None:
    """In a forked child about to run Python code of the solution: the dispositions a fresh
    interpreter starts with."""
    for name in _DEFAULT:
        set_handler(getattr(signal, name), _signal.SIG_DFL)
    set_handler(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGPIPE", "SIGXFSZ"):  # as the interpreter sets them at start-up
        set_handler(getattr(signal, name), _signal.SIG_IGN)


# A seccomp filter (``struct sock_filter``: code, jump if true, jump if false, k) that lets a
# process start threads but no process: fork and vfork EPERM, clone without CLONE_THREAD EPERM,
# clone3 ENOSYS (libc falls back to clone, whose flags can be read). x86_64 only, as the run's
# own filter; that filter already ends other ABIs.
_ONLY_THREADS = (
    (0x20, 0, 0, 4),  # 0: the architecture
    (0x15, 0, 7, 0xC000003E),  # 1: not x86_64 -> 9 allow
    (0x20, 0, 0, 0),  # 2: the syscall number
    (0x15, 6, 0, 57),  # 3: fork -> 10 EPERM
    (0x15, 5, 0, 58),  # 4: vfork -> 10 EPERM
    (0x15, 5, 0, 435),  # 5: clone3 -> 11 ENOSYS
    (0x15, 0, 2, 56),  # 6: not clone -> 9 allow
    (0x20, 0, 0, 16),  # 7: clone's flags, the low half of its first argument
    (0x45, 0, 1, 0x00010000),  # 8: CLONE_THREAD -> 9 allow, else -> 10 EPERM
    (0x06, 0, 0, 0x7FFF0000),  # 9: allow
    (0x06, 0, 0, 0x00050000 | 1),  # 10: EPERM
    (0x06, 0, 0, 0x00050000 | 38),  # 11: ENOSYS
)


_FILTER = ctypes.create_string_buffer(
    b"".join(struct.pack("<HBBI", *instruction) for instruction in _ONLY_THREADS)
)
_PROGRAM = struct.pack("=H6xQ", len(_ONLY_THREADS), ctypes.addressof(_FILTER))  # sock_fprog


def forbid_new_processes() -> None:
    """From now on this process (and its threads) may start no process: the CPU time of a
    function-mode solution is its own process's, which a child doing the work would escape."""
    if os.uname().machine != "x86_64":
        return
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) or libc.prctl(
        _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PROGRAM, 0, 0
    ):
        errno = ctypes.get_errno()
        raise OSError(errno, f"seccomp filter refused: {os.strerror(errno)}")


def cpu_clock(pid: int) -> int | None:
    """The CPU-time clock of process ``pid`` (a child: readable even when it is not dumpable,
    where /proc is not), for ``time.clock_gettime``; None if the kernel refuses."""
    clock = ctypes.c_int()
    if _libc().clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
        return None
    return clock.value


def _children(parent: int) -> list[int]:
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2 :].split()
            if len(fields) > 1 and fields[1] == str(parent).encode():
                found.append(int(name))
    return found


def kill_strays(keep: set[int]) -> float:
    """Kill and reap every child of this process but ``keep`` (what earlier runs left and
    this subreaper inherited); the CPU seconds they had used."""
    cpu = 0.0
    for _ in range(100):
        strays = [pid for pid in _children(os.getpid()) if pid not in keep]
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in strays:
            with contextlib.suppress(ChildProcessError):
                _, _, usage = os.wait4(pid, 0)
                cpu += usage.ru_utime + usage.ru_stime
    return cpu


def kill_tree(pid: int) -> None:
    """SIGKILL a child and its process group (it leads one)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# Resolved at import: a warm server imports the harness before it forks its run template, so
# every driver and solution process starts with libc's handle, its functions and the filter
# ready (building them took the driver's hardening step ~120 page faults; now ~40).
for _name in ("prctl", "clock_getcpuclockid"):
    getattr(_libc(), _name)
