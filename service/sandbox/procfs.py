"""What the host reads from /proc about processes, for both backends."""

from __future__ import annotations

import contextlib
from pathlib import Path


def process_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid``: the start time tells a live process from a reused pid."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], fields[19]
    except (OSError, IndexError):
        return None


def parent_pid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def process_start(pid: int) -> str | None:
    stat = process_stat(pid)
    return None if stat is None else stat[1]


def pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def cgroup_entries(pid: int | str = "self") -> list[tuple[str, str]]:
    """(controllers, path) of each hierarchy ``pid`` belongs to; controllers is "" on v2."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        entries.append((controllers, path))
    return entries


def processes_of_uids(uids: set[int]) -> list[int]:
    """Host pids whose real uid is one of ``uids`` (evidence that nothing outlived a run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) in uids:
                            found.append(int(entry.name))
                        break
    return found
