"""How the docker supervisor's template ends a run and cleans up after it, as the program's uid.

The template is root without ``CAP_KILL``, ``CAP_DAC_OVERRIDE`` or ``CAP_FOWNER``: it can
neither signal the program's processes nor open the directories a program made unreadable.
So it forks a helper that takes the program's uid for each of these: one that sends SIGKILL to
every process of that uid (``kill(-1)`` spares the caller and PID 1, and reaches nothing of
root: Docker's init, the supervisor and the template), and, once every process of the run is
gone, one that empties ``/tmp``, ``/dev/shm`` and ``/dev/mqueue``, removes the run's SysV IPC
objects and empties the directories it made in ``/work`` (a compile step's). Only the helper
reads what the program left (file names, IPC keys): the template learns its exit status.

Most runs leave nothing, and the template tells so without reading a name: a tmpfs directory's
size grows by a fixed amount with every entry (checked at start-up; without that, the helper
always runs), the kernel counts the IPC namespace's SysV objects, /work is only writable by the
program during a compile step, and POSIX message queues cannot be made at all (every run's
RLIMIT_MSGQUEUE is 0).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
from collections.abc import Iterator

from .rootfs import libc

# Wiped after every run; the tmpfs inode caps bound how long that can take.
SCRATCH_DIRS = ("/tmp", "/dev/shm", "/dev/mqueue")
# Whose emptiness the template reads from their size (tmpfs).
SIZED_DIRS = ("/tmp", "/dev/shm")
WORK_DIR = "/work"
_IPC_RMID = 0
_SYSV = ("shm", "msg", "sem")
# (call, command, index of the count of objects in use in the int array it fills):
# SHM_INFO's used_ids, MSG_INFO's msgpool, SEM_INFO's semusz.
_SHM_INFO, _MSG_INFO, _SEM_INFO = 14, 12, 19


def become(uid: int) -> None:
    """Drop every privilege for ``uid`` (and its own gid), for good."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def empty_sizes() -> dict[str, int] | None:
    """The size of each of ``SIZED_DIRS`` while empty, if an entry changes it (tmpfs); None if
    emptiness cannot be read from sizes here. Run once at start-up, as root, before any job."""
    sizes = {}
    for path in SIZED_DIRS:
        empty = os.stat(path).st_size
        probe = os.path.join(path, ".size-probe")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        grown = os.stat(path).st_size
        os.unlink(probe)
        if grown == empty or os.stat(path).st_size != empty or os.listdir(path):
            return None
        sizes[path] = empty
    return sizes


class ProgramReaper:
    """The template's ``Reaper`` where the program's uid is the only handle on its processes.
    ``empty``: see ``empty_sizes``."""

    def __init__(self, uid: int, empty: dict[str, int] | None = None) -> None:
        self.uid, self.empty = uid, empty
        self._helpers: set[int] = set()

    def kill(self) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                become(self.uid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        self._helpers.add(pid)

    def helper(self, pid: int) -> bool:
        if pid in self._helpers:
            self._helpers.discard(pid)
            return True
        return False

    def pending(self) -> bool:
        return bool(self._helpers)

    def clean(self) -> str | None:
        if self._nothing_left():
            return None
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                become(self.uid)
                code = 0 if clean_as_program(self.uid) else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return "a run's files or IPC objects could not be removed"
        return None

    def _nothing_left(self) -> bool:
        """Whether the run certainly left nothing, read without a name or a key."""
        if self.empty is None or os.stat(WORK_DIR).st_mode & 0o002:  # a compile step's /work
            return False
        if any(os.stat(path).st_size != size for path, size in self.empty.items()):
            return False
        return sysv_objects() == 0


def sysv_objects() -> int:
    """How many SysV objects the IPC namespace holds (the kernel's counts, no keys)."""
    info = (ctypes.c_int * 64)()
    count = 0
    for call, command, index in (
        (libc.shmctl, _SHM_INFO, 0),
        (libc.msgctl, _MSG_INFO, 0),
        (lambda i, c, b: libc.semctl(i, 0, c, b), _SEM_INFO, 7),
    ):
        ctypes.memset(info, 0, ctypes.sizeof(info))
        if call(0, command, info) < 0:
            return -1  # unknown: the helper looks
        count += info[index]
    return count


def clean_as_program(uid: int) -> bool:
    """In the helper: remove what the run left; True if nothing is left."""
    clean = True
    for top in SCRATCH_DIRS:
        if os.path.isdir(top):
            clean = _empty(top) and clean
            clean = not os.listdir(top) and clean
    clean = _clean_work(uid) and clean
    return _remove_ipc() and clean


def _clean_work(uid: int) -> bool:
    """The program's entries in /work (a compile step's): directories emptied, files made
    readable for the supervisor, which then takes them back as root."""
    clean = True
    for entry in os.scandir(WORK_DIR):
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != uid:
                continue
            if stat.S_ISDIR(info.st_mode):
                os.chmod(entry.path, 0o700)
                clean = _empty(entry.path) and clean
            elif stat.S_ISREG(info.st_mode):
                os.chmod(entry.path, stat.S_IMODE(info.st_mode) | 0o444)
        except OSError:
            clean = False
    return clean


def _empty(path: str) -> bool:
    """Remove everything under the directory ``path``, however deep or unreadable it was made
    (by descriptor: no path grows past PATH_MAX); False if something stayed."""
    clean = True
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    stack: list[tuple[int, Iterator[str], str | None]] = [(top, iter(os.listdir(top)), None)]
    while stack:
        fd, names, name_in_parent = stack[-1]
        name = next(names, None)
        if name is None:
            stack.pop()
            os.close(fd)
            if stack and name_in_parent is not None:
                try:
                    os.rmdir(name_in_parent, dir_fd=stack[-1][0])
                except OSError:
                    clean = False
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(name, dir_fd=fd)
                continue
            os.chmod(name, 0o700, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            stack.append((child, iter(os.listdir(child)), name))
        except OSError:
            clean = False
    return clean


def _remove_ipc() -> bool:
    """Every SysV shared memory segment, message queue and semaphore set of the container's
    IPC namespace (only programs make them); False if one stayed."""
    calls = {
        "shm": lambda ident: libc.shmctl(ident, _IPC_RMID, None),
        "msg": lambda ident: libc.msgctl(ident, _IPC_RMID, None),
        "sem": lambda ident: libc.semctl(ident, 0, _IPC_RMID),
    }
    for kind in _SYSV:
        for ident in _ipc_ids(kind):
            calls[kind](ctypes.c_int(ident))
    return not any(_ipc_ids(kind) for kind in _SYSV)


def _ipc_ids(kind: str) -> list[int]:
    try:
        with open(f"/proc/sysvipc/{kind}") as table:
            rows = table.read().splitlines()[1:]
    except OSError:
        return []
    return [int(row.split()[1]) for row in rows if row.split()]
