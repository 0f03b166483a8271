"""The docker backend's direct channel: frames to a container's supervisor on a unix socket
bound into the container, not through the engine (``service/sandbox/docker/channel.py``).

The socket is the host's way into the supervisor: a program must not find it, reach it or
hold it; the host must accept only the supervisor on it; and a supervisor that cannot reach
it must still serve, on the attach stream."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from service.sandbox.base import RunSpec
from service.sandbox.docker import DockerBackend
from service.sandbox.docker import containers as containers_module
from service.sandbox.docker.channel import SOCKET_DIR, SOCKET_NAME
from service.sandbox.docker.containers import Container, Engine, _supervisor_peer
from tests.support import open_sandbox

# Everything a program could try on the channel: the directory, the socket by name, every unix
# socket the kernel lists, and the descriptors it was born with.
REACH = f"""
import json, os, socket
out = {{}}
try:
    out["listdir"] = os.listdir({SOCKET_DIR!r})
except OSError as exc:
    out["listdir"] = type(exc).__name__
paths = [{SOCKET_DIR + "/" + SOCKET_NAME!r}]
try:
    for line in open("/proc/net/unix").read().splitlines()[1:]:
        parts = line.split()
        if len(parts) > 7 and parts[7].startswith("/"):
            paths.append(parts[7])
except OSError:
    pass
connected = []
for path in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        connected.append(path)
    except OSError:
        pass
    finally:
        s.close()
out["connected"] = connected
sockets = []
for fd in range(64):
    try:
        if os.readlink(f"/proc/self/fd/{{fd}}").startswith("socket:"):
            sockets.append(fd)
    except OSError:
        pass
out["socket_fds"] = sockets
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def docker_backend() -> Iterator[Any]:
    backend = open_sandbox("docker")
    yield backend
    backend.close()


def _run(backend: Any, source: str) -> dict[str, Any]:
    with backend.session({"reach.py": source.encode()}) as session:
        result = session.run(RunSpec(("python3", "-I", "-S", "/work/reach.py")))
    assert result.exit_code == 0, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_frames_travel_on_the_socket_by_default(docker_backend: Any) -> None:
    report = docker_backend.probe()
    assert report.ok
    assert report.facts["channel"] == "socket"
    # Warm containers answer on their sockets too, session after session.
    for _ in range(3):
        with docker_backend.session({"a.py": b"print(6 * 7)"}) as session:
            assert session.container.ready["channel"] == "socket"
            assert session.container.supervisor().direct
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/a.py")))
        assert result.stdout == b"42\n"


def test_a_program_cannot_find_reach_or_hold_the_channel(docker_backend: Any) -> None:
    out = _run(docker_backend, REACH)
    # The directory is the host's (0700) and the socket was removed once the supervisor
    # connected: nothing to list, nothing to connect to, no socket among its descriptors.
    assert out["listdir"] in ("PermissionError", [])
    assert out["connected"] == []
    assert out["socket_fds"] == []


def test_no_socket_directory_is_left_on_the_host(docker_backend: Any) -> None:
    assert docker_backend.wait_idle(60)
    engine = Engine(memory_mb=256, cpus=1.0, pids_max=64, tmp_mb=16, work_mb=16)
    before = _channel_dirs()
    container = engine.create(docker_backend.image)
    try:
        assert container.ready["channel"] == "socket"
        assert _channel_dirs() - before == set()
    finally:
        engine.remove(container)


def test_attach_only_when_configured(docker_backend: Any) -> None:
    backend = DockerBackend(image=docker_backend.image, pool_size=0, channel="attach")
    try:
        report = backend.probe()
        assert report.ok, report.problems
        assert report.facts["channel"] == "attach"
        with backend.session({"a.py": b"print('attached')"}) as session:
            assert not session.container.supervisor().direct
            result = session.run(RunSpec(("python3", "-I", "-S", "/work/a.py")))
        assert result.stdout == b"attached\n"
    finally:
        backend.close()


def test_a_supervisor_that_cannot_reach_the_socket_serves_on_the_attach_stream(
    docker_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The boot frame names a socket that is not there (as when the engine sees another
    # filesystem than this worker).
    monkeypatch.setattr(containers_module, "SOCKET_NAME", "elsewhere.sock")
    engine = Engine(memory_mb=256, cpus=1.0, pids_max=64, tmp_mb=16, work_mb=16)
    container = engine.create(docker_backend.image)
    try:
        assert container.ready["channel"].startswith("attach (FileNotFoundError")
        assert not container.supervisor().direct
        reply = container.supervisor().request({"op": "close"}, 10, 1 << 16)
        assert reply == {"ok": True}
    finally:
        engine.remove(container)


def test_only_the_containers_supervisor_is_accepted_on_the_socket() -> None:
    me = os.getpid()
    supervisor_of = Container("c", 1 << 30, host_pid=os.getppid(), init_started="1")
    assert _supervisor_peer(supervisor_of, me, 0)
    # Another uid, a process that is not the init's child, an unknown pid.
    assert not _supervisor_peer(supervisor_of, me, 1000)
    assert not _supervisor_peer(Container("c", 1 << 30, host_pid=1, init_started="1"), me, 0)
    assert not _supervisor_peer(supervisor_of, 0, 0)
    # Where the host's processes are not visible, the directory's mode is the guard: root only.
    hidden = Container("c", 1 << 30, host_pid=os.getppid(), init_started=None)
    assert _supervisor_peer(hidden, 0, 0)
    assert not _supervisor_peer(hidden, 0, 1000)


def _channel_dirs() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("rlvr-channel-")}
