"""The start-up probe and the server's lifecycle: no isolation, no runs."""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest

from service.sandbox import SandboxError, make_backend
from service.sandbox.base import Limits, RunSpec
from service.sandbox.local import LocalBackend
from service.sandbox.probe import check_probe_output

ISOLATED = {
    "pid": 2,
    "uid": 1234567,
    "pids": [1, 2],
    "init_is_server": True,
    "reachable": [],
    "readable": [],
    "writable": [],
    "cap_eff": "0000000000000000",
}


def test_the_probe_report_of_this_machine(backend: LocalBackend) -> None:
    report = backend.probe()
    assert report.ok and report.backend == "local"
    assert report.facts["pids"] == [1, 2] and report.facts["uid"] == backend.sandbox_uid
    assert report.facts["memory_limit"] in ("cgroup", "rlimit_as")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"pids": [1, 2, 77, 4242]}, "sees processes outside itself"),
        ({"init_is_server": False}, "pid 1 of the sandbox is not its server"),
        ({"uid": 0}, "runs as uid 0"),
        ({"cap_eff": "000001ffffffffff"}, "holds capabilities"),
        ({"reachable": ["127.0.0.1:5432"]}, "reaches"),
        ({"readable": ["/etc/shadow"]}, "reads"),
        ({"writable": ["/usr"]}, "writes"),
    ],
)
def test_any_leak_fails_the_probe(change: dict[str, object], problem: str) -> None:
    problems, _ = check_probe_output(json.dumps({**ISOLATED, **change}).encode(), 1234567)
    assert any(problem in found for found in problems), problems
    assert check_probe_output(json.dumps(ISOLATED).encode(), 1234567)[0] == []


def test_unknown_or_unbuilt_backends_refuse() -> None:
    for name in ("docker", "chroot"):
        backend = make_backend(name)
        assert not backend.probe().ok


def test_a_server_killed_mid_run_is_an_error_then_replaced() -> None:
    backend = LocalBackend()
    try:
        assert backend.probe().ok
        first = backend.server_pid()
        assert first is not None
        timer = threading.Timer(0.3, os.kill, (first, signal.SIGKILL))
        with backend.session({"s.py": b"import time\ntime.sleep(5)"}) as session:
            timer.start()
            with pytest.raises(SandboxError):
                session.run(RunSpec(("python3", "-I", "-S", "/work/s.py"), limits=Limits()))
        assert backend.leftover_processes() == []
        with backend.session({"s.py": b"print('again')"}) as session:
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/s.py")))
        assert result.stdout == b"again\n" and backend.server_pid() not in (None, first)
    finally:
        backend.close()
    assert backend.cgroups.processes() == []


def test_closing_removes_the_cgroups() -> None:
    backend = LocalBackend()
    assert backend.probe().ok
    groups = [g for g in (backend.cgroups.memory, backend.cgroups.pids) if g is not None]
    backend.close()
    assert all(not group.exists() for group in groups)
