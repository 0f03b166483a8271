"""The start-up probe and the server's lifecycle: no isolation, no runs."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from service.sandbox import SandboxConfig, SandboxError, SandboxUnavailable, make_backend
from service.sandbox.base import Limits, RunSpec
from service.sandbox.docker import LABEL, DockerBackend
from service.sandbox.local import LocalBackend
from service.sandbox.probe import check_probe_output
from tests.support import open_sandbox

ISOLATED = {
    "pid": 3,
    "uid": 1234567,
    "pids": [3],
    "pidns": "pid:[4026532517]",
    "init": "",
    "reachable": [],
    "readable": [],
    "writable": [],
    "cap_eff": "0000000000000000",
}


def test_the_probe_report_of_this_machine(backend: Any) -> None:
    report = backend.probe()
    assert report.ok and report.backend == backend.name
    assert report.facts["uid"] in backend.program_uids()
    if backend.name == "local":
        assert report.facts["pids"] == [report.facts["pid"]]  # itself; its server is hidden
        assert report.facts["memory_limit"] in ("cgroup", "rlimit_as")
        assert report.facts["proc"] == "pid_only"
    else:
        assert report.facts["init"].startswith("/sbin/docker-init")
        assert report.facts["image"] == backend.image and report.facts["memory_limit"] == "cgroup"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"pids": [1, 3, 77, 4242]}, "sees processes outside itself"),
        ({"pidns": "pid:[4026531836]"}, "not in a PID namespace of its own"),
        ({"init": "python3 -c ... rlvr-sandbox-zygote"}, "reads its server's command line"),
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


def test_unknown_backends_and_missing_images_refuse() -> None:
    backend = make_backend(SandboxConfig(backend="chroot"))  # type: ignore[arg-type]
    assert not backend.probe().ok
    missing = DockerBackend(image="rlvr-sandbox:no-such-image", pool_size=0)
    report = missing.probe()
    assert not report.ok and "rlvr-sandbox:no-such-image" in report.problems[0]
    with pytest.raises(SandboxUnavailable), missing.session({"a.py": b"print(1)"}):
        pass


def test_an_unreachable_docker_engine_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    report = DockerBackend(pool_size=0).probe()
    assert not report.ok and "docker engine" in report.problems[0]


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


def test_a_container_killed_mid_run_is_an_error_then_replaced() -> None:
    backend = open_sandbox("docker", pool_size=1)
    try:
        with backend.session({"s.py": b"import time\ntime.sleep(5)"}) as session:
            doomed = session.container.id
            killer = threading.Timer(0.5, backend.client().api.kill, (doomed,))
            killer.start()
            with pytest.raises(SandboxError):
                session.run(RunSpec(("python3", "-I", "-S", "/work/s.py"), limits=Limits()))
        killer.join()
        with backend.session({"s.py": b"print('again')"}) as session:
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/s.py")))
            assert session.container.id != doomed
        assert result.stdout == b"again\n"
        assert backend.wait_idle(60) and backend.leftover_processes() == []
    finally:
        backend.close()


def test_a_supervisor_that_stops_answering_is_ended_by_the_hosts_clock() -> None:
    """The host keeps its own clock: a run whose supervisor never answers (frozen here from the
    host) is stopped by the host, which fails the run as the sandbox's and retires the
    container; the next session runs in another one."""
    backend = open_sandbox("docker", pool_size=1)
    try:
        with backend.session({"s.py": b"import time\ntime.sleep(60)"}) as session:
            frozen = session.container
            init = frozen.host_pid
            children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
            supervisor = int(children[0])  # Docker's init has one child: the supervisor
            os.kill(supervisor, signal.SIGSTOP)
            started = time.monotonic()
            with pytest.raises(SandboxError, match="stopped answering"):
                session.run(RunSpec(("python3", "-I", "-S", "/work/s.py"), b"", Limits(wall_s=1)))
            assert time.monotonic() - started < 30
        with backend.session({"s.py": b"print('elsewhere')"}) as session:
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/s.py")))
            assert session.container.id != frozen.id
        assert result.stdout == b"elsewhere\n"
        assert backend.wait_idle(60) and backend.stray_containers() == []
        assert backend.leftover_processes() == []  # the host's own kill reached the program
    finally:
        backend.close()


def test_closing_removes_every_container_and_stale_ones_go_at_start() -> None:
    backend = open_sandbox("docker", pool_size=2)
    assert backend.wait_idle(60)
    client = backend.client()
    # A container left by a worker that died: its owner label names a process that is gone.
    stale = client.containers.run(
        backend.image,
        ["sleep", "infinity"],
        detach=True,
        network_mode="none",
        labels={LABEL: "1", "rlvr.sandbox.owner": f"{os.uname().nodename}:999999999:0"},
    )
    ours = {container.id for container in backend._pools[backend.image]}
    assert len(ours) == 2
    backend.close()
    remaining = {info["Id"] for info in client.api.containers(all=True, filters={"label": LABEL})}
    assert not ours & remaining
    fresh = open_sandbox("docker", pool_size=0)
    try:
        deadline = time.monotonic() + 10
        while stale.id in {i["Id"] for i in client.api.containers(all=True)}:
            assert time.monotonic() < deadline, "the stale container was not removed"
            time.sleep(0.1)
    finally:
        fresh.close()


def test_a_language_runs_in_its_own_image_and_pool() -> None:
    base = open_sandbox("docker", pool_size=0)
    base.close()
    client = base.client()
    client.images.get(base.image).tag("rlvr-sandbox-alt", "test")
    images = {"cpp": "rlvr-sandbox-alt:test", "java": "rlvr-sandbox:no-such-image"}
    backend = DockerBackend(pool_size=1, images=images)
    try:
        assert backend.probe().ok
        spec = RunSpec(("python3", "-I", "-S", "/work/s.py"))
        seen = {}
        for language in ("python", "cpp"):
            with backend.session({"s.py": b"print('hi')"}, language=language) as session:
                assert session.run(spec).stdout == b"hi\n"
                seen[language] = client.api.inspect_container(session.container.id)["Config"]
        assert seen["python"]["Image"] == backend.image
        assert seen["cpp"]["Image"] == "rlvr-sandbox-alt:test"
        assert backend.wait_idle(60)
        assert set(backend._pools) == {backend.image, "rlvr-sandbox-alt:test"}
        # A language whose image is missing refuses; the others keep working.
        refused = pytest.raises(SandboxUnavailable, match="no-such-image")
        with refused, backend.session({"s.py": b""}, language="java"):
            pass
        with backend.session({"s.py": b"print('hi')"}, language="python") as session:
            assert session.run(spec).stdout == b"hi\n"
    finally:
        backend.close()
        client.images.remove("rlvr-sandbox-alt:test")


def test_pooled_containers_that_died_are_replaced_without_an_error() -> None:
    backend = open_sandbox("docker", pool_size=2)
    try:
        assert backend.wait_idle(60)
        client = backend.client()
        for container in backend._pools[backend.image]:  # as an engine restart would
            client.api.kill(container.id)
        with backend.session({"s.py": b"print('fresh')"}) as session:
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/s.py")))
        assert result.stdout == b"fresh\n"
        assert backend.wait_idle(60) and backend.stray_containers() == []
    finally:
        backend.close()


def test_a_missing_program_is_a_sandbox_error_on_both_backends(backend: Any) -> None:
    with backend.session({"a.py": b""}) as session, pytest.raises(SandboxError, match="start"):
        session.run(RunSpec(("no-such-program",)))


def test_only_the_sandbox_before_the_program_can_report_a_set_up_failure(backend: Any) -> None:
    """A set-up failure travels on a pipe that closes when the program starts, from the run's
    child before it drops its privileges: nothing the program writes, no exit status 125 and
    no attack on what started it may pass for one."""
    fake = (
        "import os, sys\nprint('setup no program python3', flush=True)\n"
        "sys.stderr.write('\\nsetup /tmp/x could not be removed\\n')\nos._exit(125)\n"
    )
    kill_parent = "import os\nprint('setup gone', flush=True)\nos.kill(os.getppid(), 9)\n"
    with backend.session({"fake.py": fake.encode(), "kill.py": kill_parent.encode()}) as s:
        faked = s.run(RunSpec(("python3", "-I", "-S", "/work/fake.py")))
        assert faked.exit_code == 125 and faked.stdout == b"setup no program python3\n"
        killed = s.run(RunSpec(("python3", "-I", "-S", "/work/kill.py")))
        assert killed.exit_code == 1 and killed.stdout == b"setup gone\n"
        assert b"PermissionError" in killed.stderr  # its parent is the run template, root
        with pytest.raises(SandboxError, match="no-such-program"):
            s.run(RunSpec(("no-such-program",)))
