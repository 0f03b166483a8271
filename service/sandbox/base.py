"""The one interface every sandbox backend implements (local namespaces, docker containers).

A *session* holds one program's files in ``/work`` (read-only to the program unless a run
asks for it to be writable, as a compile step does); each *run* executes one argv inside it
with fresh limits, a fresh ``/tmp`` and nothing left alive afterwards. The argv
``python3 -I -S <script>`` is the portable way to run Python: isolated mode, no
site-packages, but with site's ``exit()``/``quit()`` builtins. A backend may serve it from a
warm interpreter as long as the program cannot tell the difference.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

WORK_DIR = "/work"


class SandboxError(RuntimeError):
    """The sandbox failed (not the program): the verdict is ``error``, never a 0.0 reward."""


class SandboxUnavailable(SandboxError):
    """The backend's start-up probe failed: nothing may run, isolated or not."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds of one run. CPU time decides "time limit"; the wall clock catches sleepers."""

    cpu_s: float = 2.0
    wall_s: float = 5.0
    memory_mb: int = 256
    processes: int = 32
    file_size_mb: int = 16
    open_files: int = 64
    stack_mb: int = 64
    tmp_mb: int = 64
    stdout_bytes: int = 1 << 20
    stderr_bytes: int = 64 << 10
    result_bytes: int = 1 << 20
    # Stderr past its cap ends the run ("stderr_limit"), unless this is set: then its head and
    # last 4 KB are kept within the cap, the rest is dropped, and the run goes on (a program's
    # debug lines there are no reason to stop it; a flood runs into the wall clock).
    stderr_keeps_tail: bool = False


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One execution inside a session."""

    argv: tuple[str, ...]
    stdin: bytes = b""
    limits: Limits = field(default_factory=Limits)
    work_writable: bool = False


@dataclass(frozen=True, slots=True)
class RunResult:
    """What happened; ``result`` is the program's fd 3 (the drivers' private channel)."""

    exit_code: int | None
    term_signal: int | None
    cpu_s: float
    wall_s: float
    stdout: bytes
    stderr: bytes
    result: bytes
    # "wall" (wall clock), "stdout_limit" / "stderr_limit" / "result_limit" (output cap)
    killed: str | None = None
    memory_exceeded: bool = False
    survivors_killed: int = 0
    max_rss_kb: int = 0

    def exceeded_time(self, limits: Limits) -> bool:
        """CPU over the limit, killed by RLIMIT_CPU, or stopped by the wall clock."""
        return (
            self.killed == "wall" or self.cpu_s > limits.cpu_s or self.term_signal == signal.SIGXCPU
        )

    @property
    def exceeded_output(self) -> bool:
        return self.killed is not None and self.killed.endswith("_limit")


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The start-up check: may this backend run untrusted code, and how is it bounded?"""

    backend: str
    ok: bool
    problems: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "ok": self.ok,
            "problems": list(self.problems),
            "facts": dict(self.facts),
        }


class SandboxSession(Protocol):
    def run(self, spec: RunSpec) -> RunResult: ...


class SandboxBackend(Protocol):
    name: str

    def probe(self) -> ProbeReport:
        """Start (if needed) and check the isolation; never raises."""
        ...

    def session(
        self,
        files: Mapping[str, bytes],
        language: str | None = None,
        warm_files: Mapping[str, str] | None = None,
    ) -> AbstractContextManager[SandboxSession]:
        """Files go to /work; raises SandboxUnavailable if the probe failed. ``language`` may
        choose where the program runs (docker: that language's image and pool). A file that
        ``warm_files`` names (→ a warm code digest) is left out when the server holds that
        warm code (``warm_code.session_files``)."""
        ...

    def close(self) -> None: ...
