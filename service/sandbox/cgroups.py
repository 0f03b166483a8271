"""cgroup v1 memory and pids limits for one sandbox, when this host lets us create them.

Without them the sandbox still bounds memory with RLIMIT_AS and processes with RLIMIT_NPROC
(per run, under a uid of its own); the probe reports which enforcement is in place.
cgroup v2 is not used yet: a v2 child group needs the parent's subtree_control delegated,
which a worker inside a container rarely has.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_TAG = re.compile(r"^rlvr-sbx-(\d+)-\d+$")


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in a v1 hierarchy holding ``controller``."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def counter(path: Path, key: str) -> int | None:
    """A ``key value`` line of a cgroup stat file (memory.oom_control, memory.events,
    cpu.stat); None when the file or the key is missing."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return None


def _pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _remove_stale(parent: Path) -> None:
    """Empty groups left by a worker that was killed: rmdir them (fails harmlessly if busy)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _TAG.match(entry.name)
            if match and not _pid_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    entry.rmdir()


class SandboxCgroups:
    """The memory and pids groups of one sandbox (either may be missing)."""

    def __init__(self, memory: Path | None, pids: Path | None) -> None:
        self.memory, self.pids = memory, pids
        self._memory_limit: int | None = None

    @classmethod
    def create(cls, tag: str, pids_max: int) -> SandboxCgroups:
        groups: dict[str, Path | None] = {}
        for controller, probe_file in (("memory", "memory.limit_in_bytes"), ("pids", "pids.max")):
            groups[controller] = None
            own = _own_path(controller)
            if own is None:
                continue
            parent = _ROOT / controller / own.lstrip("/")
            _remove_stale(parent)
            directory = parent / tag
            try:
                directory.mkdir(exist_ok=True)
            except OSError:
                continue
            if (directory / probe_file).exists():
                groups[controller] = directory
            else:
                with contextlib.suppress(OSError):
                    directory.rmdir()
        created = cls(groups["memory"], groups["pids"])
        if created.pids is not None:
            try:
                (created.pids / "pids.max").write_text(str(pids_max))
            except OSError:
                created.pids = None
        return created

    @property
    def directories(self) -> list[str]:
        return [str(d) for d in (self.memory, self.pids) if d is not None]

    def set_memory_limit(self, limit_bytes: int) -> bool:
        """Set the group's limit; False if the kernel refused (RLIMIT_AS still applies)."""
        if self.memory is None:
            return False
        if self._memory_limit == limit_bytes:
            return True
        try:
            (self.memory / "memory.limit_in_bytes").write_text(str(limit_bytes))
        except OSError:
            self._memory_limit = None
            return False
        self._memory_limit = limit_bytes
        return True

    def oom_kills(self) -> int:
        """How many processes the kernel has killed for exceeding the group's memory."""
        if self.memory is None:
            return 0
        return counter(self.memory / "memory.oom_control", "oom_kill") or 0

    def processes(self) -> list[int]:
        """Host pids in the sandbox's groups: after a run, only the server itself."""
        found: set[int] = set()
        for directory in (self.memory, self.pids):
            if directory is not None:
                with contextlib.suppress(OSError):
                    text = (directory / "cgroup.procs").read_text()
                    found.update(int(pid) for pid in text.split())
        return sorted(found)

    def remove(self) -> None:
        for directory in (self.memory, self.pids):
            if directory is not None:
                with contextlib.suppress(OSError):
                    directory.rmdir()
