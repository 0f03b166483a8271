"""A real local sandbox for the attack battery, and the guard that protects this machine.

Kill-everything attacks (``os.kill(-1, 9)``, fork bombs) run only after a probe in this same
test run has shown that a sandboxed program sees nothing but its own PID namespace: as root
without one, ``kill(-1)`` would take down the whole machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from service.sandbox.base import Limits, RunResult, RunSpec
from service.sandbox.local import LocalBackend

PROBE = """
import json, os
init = open("/proc/1/cmdline", "rb").read()
print(json.dumps({"pid": os.getpid(), "proc": os.listdir("/proc"), "init": init.decode()}))
"""


@pytest.fixture(scope="session")
def backend() -> Iterator[LocalBackend]:
    sandbox = LocalBackend()
    report = sandbox.probe()
    if not report.ok:
        pytest.skip(f"local sandbox unavailable here: {report.problems}")
    yield sandbox
    sandbox.close()


@dataclass
class Sandboxed:
    """Runs Python sources in the backend and checks that nothing of them survives."""

    backend: LocalBackend

    def run(self, source: str, stdin: bytes = b"", **limits: float) -> RunResult:
        defaults: dict[str, float] = {"cpu_s": 1.0, "wall_s": 2.0, "memory_mb": 128}
        with self.backend.session({"attack.py": source.encode()}) as session:
            spec = RunSpec(
                ("python3", "-I", "-S", "/work/attack.py"),
                stdin,
                Limits(**{**defaults, **limits}),  # type: ignore[arg-type]
            )
            return session.run(spec)

    def assert_nothing_survived(self) -> None:
        """No process of the sandbox user on the host; the cgroups hold only the server."""
        assert self.backend.leftover_processes() == []
        server = self.backend.server_pid()
        assert server is not None
        cgroup = self.backend.cgroups.processes()
        assert len(cgroup) <= 1, cgroup  # PID 1 of the sandbox (the server) at most
        # and the server still answers: the worker's sandbox survived the attack.
        assert self.run("print('still here')").stdout == b"still here\n"


@pytest.fixture(scope="session")
def pid_namespace_confirmed(backend: LocalBackend) -> bool:
    """The guard: a sandboxed program sees only PID 1 (its server) and itself."""
    with backend.session({"probe.py": PROBE.encode()}) as session:
        result = session.run(RunSpec(("python3", "-I", "-S", "/work/probe.py")))
    seen = json.loads(result.stdout)
    pids = {int(p) for p in seen["proc"] if p.isdigit()}
    return pids == {1, seen["pid"]} and "rlvr-sandbox-zygote" in seen["init"]


@pytest.fixture
def sandbox(backend: LocalBackend) -> Iterator[Sandboxed]:
    sandboxed = Sandboxed(backend)
    yield sandboxed
    sandboxed.assert_nothing_survived()


@pytest.fixture
def dangerous(sandbox: Sandboxed, pid_namespace_confirmed: bool) -> Sandboxed:
    """For attacks that would hurt this machine outside a PID namespace."""
    if not pid_namespace_confirmed:
        pytest.skip("the sandbox's PID namespace was not confirmed: refusing kill-all attacks")
    return sandbox
