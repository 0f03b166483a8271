"""cgroups as the host sees them: the local sandbox's own groups, a container's accounting.

Local: cgroup v1 memory and pids limits for one sandbox, when this host lets us create them.
Without them the sandbox still bounds memory with RLIMIT_AS and processes with RLIMIT_NPROC
(per run, under a uid of its own); the probe reports which enforcement is in place.
cgroup v2 is not used yet: a v2 child group needs the parent's subtree_control delegated,
which a worker inside a container rarely has.

Docker: the CPU time and OOM kills of a container, read from its group (v1 or v2) on the
host, which the program inside cannot touch.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

from service.sandbox.procfs import cgroup_entries, pid_alive

_ROOT = Path("/sys/fs/cgroup")
_TAG = re.compile(r"^rlvr-sbx-(\d+)-\d+$")
# Memory a sandbox's own processes (its server, or a container's supervisor and template) and
# the page cache of its files may use beyond the program's limit.
CGROUP_HEADROOM = 64 << 20


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in a v1 hierarchy holding ``controller``."""
    for controllers, path in cgroup_entries():
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


def _remove_stale(parent: Path) -> None:
    """Empty groups left by a worker that was killed: rmdir them (fails harmlessly if busy)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _TAG.match(entry.name)
            if match and not pid_alive(int(match.group(1))):
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


@dataclass(slots=True)
class CgroupAccounting:
    """A container's CPU and memory accounting files on the host (v1 or v2), if visible."""

    cpu_file: Path | None = None
    oom_file: Path | None = None

    @classmethod
    def of_pid(cls, pid: int) -> CgroupAccounting:
        found = cls()
        for controllers, path in cgroup_entries(pid):
            relative = path.lstrip("/")
            names = controllers.split(",")
            if "cpuacct" in names and (_ROOT / "cpuacct" / relative / "cpuacct.usage").exists():
                found.cpu_file = _ROOT / "cpuacct" / relative / "cpuacct.usage"
            if "memory" in names and (_ROOT / "memory" / relative / "memory.oom_control").exists():
                found.oom_file = _ROOT / "memory" / relative / "memory.oom_control"
            if controllers == "" and (_ROOT / relative / "cpu.stat").exists():  # cgroup v2
                found.cpu_file = found.cpu_file or _ROOT / relative / "cpu.stat"
                found.oom_file = found.oom_file or _ROOT / relative / "memory.events"
        return found

    def cpu_seconds(self) -> float | None:
        if self.cpu_file is None:
            return None
        if self.cpu_file.name == "cpuacct.usage":
            try:
                return int(self.cpu_file.read_text()) / 1e9
            except (OSError, ValueError):
                return None
        usec = counter(self.cpu_file, "usage_usec")
        return None if usec is None else usec / 1e6

    def oom_kills(self) -> int:
        return 0 if self.oom_file is None else counter(self.oom_file, "oom_kill") or 0
