"""The host's side of a container's supervisor (``service/sandbox/server/supervisor.py``).

The supervisor is the container's main process, ``python3 -I -S -B -c BOOT``; the host attaches
to the container before starting it and keeps that stream as the channel. Its first frame is
the supervisor's own code (this project's ``service/sandbox/server`` sources, loaded from
memory: nothing is baked into the runner image, so an image cannot hold a stale supervisor)
and its config; the supervisor answers "ready". Then one request, one reply: 4-byte length +
JSON frames on the container's stdin and stdout, which Docker multiplexes (8-byte headers) on
the way back. Nothing a program writes reaches this stream: its stdout and stderr are pipes
the supervisor reads, and its bytes travel base64 inside a reply.

Where the engine runs on this machine, the frames bypass it: the host listens on a unix socket
in a directory of its own (mode 0700), bound read-only into the container, and the boot frame
names it. The supervisor connects once, before it reads any request, and then speaks on that
socket; the host accepts exactly that one connection, from uid 0 and (where it can see the
host's processes) from a child of the container's init, and removes the socket at once, so
nothing started later can reach it. Each round trip then costs two socket writes instead of
Docker's relay (the engine and the container's shim copy every frame: ~0.17 ms of their CPU a
round trip, three round trips a submission). A supervisor that cannot connect (the engine sees
another filesystem) says so and stays on the attach stream, which still carries its stderr.

The host keeps its own clock (a deadline on every reply) and its own caps (a frame larger
than the request allows breaks the channel); a channel that failed once is never used again.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import socket
import struct
import tempfile
import time
from functools import cache
from importlib import resources
from typing import Any

from service.sandbox.base import SandboxError

# The supervisor's code, by module name in the container (no file of it is written there).
PACKAGE = "sandbox_server"
_MODULES = (
    *("wire", "rootfs", "seccomp", "warm", "template", "reaper", "runner", "pyfast"),
    "supervisor",
)
# Read at start-up from the container's stdin: a loader and the sources (frame 1). Nothing
# on a command line can be seen by a program other than this text.
BOOT = """import json, os, struct
def take(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            os._exit(3)
        data += chunk
    return data
boot = json.loads(take(struct.unpack(">I", take(4))[0]))
exec(boot["loader"], {"__name__": "boot", "boot": boot})
"""
_LOADER = """import importlib.abc, importlib.util, sys
sources = boot["sources"]
class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name not in sources:
            return None
        return importlib.util.spec_from_loader(name, self, is_package="." not in name)
    def exec_module(self, module):
        name = module.__name__
        tail = "/__init__.py" if "." not in name else ".py"
        module.__file__ = "/supervisor/" + name.replace(".", "/") + tail
        exec(compile(sources[name], module.__file__, "exec"), module.__dict__)
sys.meta_path.insert(0, Finder())
importlib.import_module(boot["main"]).boot(boot["config"])
"""
_HEADER = struct.Struct(">BxxxI")
_STDERR_TAIL = 8192
# Where the host's socket directory is bound in the container, and the socket's name in it.
SOCKET_DIR = "/run/rlvr-channel"
SOCKET_NAME = "supervisor.sock"
_PEERCRED = struct.Struct("3i")  # pid, uid, gid


@cache
def supervisor_sources() -> dict[str, str]:
    """The supervisor's modules, by their name in the container."""
    server = resources.files("service.sandbox.server")
    sources = {PACKAGE: server.joinpath("__init__.py").read_text()}
    for name in _MODULES:
        sources[f"{PACKAGE}.{name}"] = server.joinpath(f"{name}.py").read_text()
    return sources


def boot_frame(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "loader": _LOADER,
        "sources": supervisor_sources(),
        "main": f"{PACKAGE}.supervisor",
        "config": config,
    }


class SocketListener:
    """The host's end of a container's direct channel, until the supervisor has connected."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="rlvr-channel-")  # 0700, this process's uid
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.bind(os.path.join(self.directory, SOCKET_NAME))
            self.sock.listen(1)
        except OSError:
            self.close()
            raise

    def accept(self) -> tuple[socket.socket, int, int]:
        """The connection, with its peer's pid (0 if not visible here) and uid; the socket
        file is gone once this returns."""
        conn, _ = self.sock.accept()
        self.close()
        pid, uid, _ = _PEERCRED.unpack(
            conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
        )
        return conn, pid, uid

    def close(self) -> None:
        self.sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class Channel:
    """One container's channel: frames to its supervisor and back, on its attach stream or,
    once ``adopt`` was called, on a socket of their own (the attach stream then carries only
    the supervisor's stderr)."""

    def __init__(self, attached: Any) -> None:
        self._attached = attached
        self.attach_sock: socket.socket = getattr(attached, "_sock", attached)
        self.sock = self.attach_sock  # where frames travel
        self._raw = bytearray()  # Docker's multiplexed stream, not yet split
        self._stdout = bytearray()  # the supervisor's frames
        self._stderr = bytearray()  # its own errors (a traceback), the last few KB
        self.broken: str | None = None

    @property
    def direct(self) -> bool:
        return self.sock is not self.attach_sock

    def adopt(self, sock: socket.socket) -> None:
        """Frames travel on ``sock`` from now on (nothing of them may be pending)."""
        if self._stdout:
            self.fail("frames on both streams")
            raise SandboxError("the sandbox's supervisor wrote frames on its attach stream")
        sock.setblocking(False)
        self.sock = sock

    def await_connection(self, listener: SocketListener, deadline: float) -> bool:
        """Wait until the supervisor connects to ``listener`` (True) or answers on the attach
        stream instead (False: it could not reach the socket)."""
        while not self._stdout:
            left = deadline - time.monotonic()
            if left <= 0:
                self.fail("no connection in time")
                raise SandboxError("the sandbox's supervisor neither connected nor answered")
            readable, _, _ = select.select([listener.sock, self.attach_sock], [], [], left)
            if listener.sock in readable:
                return True
            if readable:
                self._read_attach()
        return False

    def request(self, payload: dict[str, Any], timeout_s: float, max_reply: int) -> dict[str, Any]:
        """Send ``payload`` and wait for the reply; SandboxError if there is none in time."""
        self.send(payload, timeout_s)
        reply = self.receive(time.monotonic() + timeout_s, max_reply)
        if reply is None:
            self.fail("no reply in time")
            raise SandboxError(f"the sandbox's supervisor did not answer in {timeout_s:.0f} s")
        return reply

    def send(self, payload: dict[str, Any], timeout_s: float = 60.0) -> None:
        if self.broken is not None:
            raise SandboxError(f"the sandbox's supervisor channel failed earlier: {self.broken}")
        data = json.dumps(payload).encode()
        try:
            self.sock.settimeout(timeout_s)
            self.sock.sendall(struct.pack(">I", len(data)) + data)
        except OSError as exc:
            self.fail(f"send: {exc}")
            raise SandboxError(f"the sandbox's supervisor is gone: {exc}") from exc

    def receive(self, deadline: float, max_reply: int) -> dict[str, Any] | None:
        """The next frame, or None at ``deadline`` (the channel stays usable then)."""
        if self.broken is not None:
            raise SandboxError(f"the sandbox's supervisor channel failed earlier: {self.broken}")
        while True:
            frame = self._frame(max_reply)
            if frame is not None:
                try:
                    reply: dict[str, Any] = json.loads(frame)
                except ValueError as exc:
                    self.fail("a malformed frame")
                    raise SandboxError("the sandbox's supervisor sent a malformed reply") from exc
                return reply
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not self.direct:
                readable, _, _ = select.select([self.sock], [], [], left)
                if readable:
                    self._read_attach()
                continue
            readable, _, _ = select.select([self.sock, self.attach_sock], [], [], left)
            if self.attach_sock in readable:
                self._read_attach()  # its stderr; a frame there is out of step
                if self._stdout:
                    self.fail("a frame on the attach stream")
                    raise SandboxError("the sandbox's supervisor wrote on its attach stream")
            if self.sock in readable:
                chunk = self._recv(self.sock)
                if chunk is not None:
                    self._stdout += chunk

    def _recv(self, sock: socket.socket) -> bytes | None:
        """Bytes from ``sock``, None if it had none after all; SandboxError at its end."""
        try:
            sock.setblocking(False)
            chunk = sock.recv(1 << 20)
        except BlockingIOError:
            return None
        except OSError as exc:
            chunk, reason = b"", str(exc)
        else:
            reason = "end of stream"
        if not chunk:
            self.fail(reason)
            raise SandboxError(f"the sandbox's supervisor is gone: {self.stderr_tail()}")
        return chunk

    def _read_attach(self) -> None:
        chunk = self._recv(self.attach_sock)
        if chunk is not None:
            self._split(chunk)

    def _split(self, chunk: bytes) -> None:
        """Docker's 8-byte headers: stream 1 is the supervisor's frames, 2 its stderr."""
        self._raw += chunk
        while len(self._raw) >= _HEADER.size:
            kind, size = _HEADER.unpack_from(self._raw)
            if len(self._raw) < _HEADER.size + size:
                return
            payload = self._raw[_HEADER.size : _HEADER.size + size]
            del self._raw[: _HEADER.size + size]
            if kind == 1:
                self._stdout += payload
            elif kind == 2:
                self._stderr += payload
                del self._stderr[:-_STDERR_TAIL]

    def _frame(self, max_reply: int) -> bytes | None:
        if len(self._stdout) < 4:
            return None
        (size,) = struct.unpack_from(">I", self._stdout)
        if size > max_reply:
            self.fail(f"a reply of {size} bytes")
            raise SandboxError(f"the sandbox's supervisor sent {size} bytes (at most {max_reply})")
        if len(self._stdout) < 4 + size:
            return None
        frame = bytes(self._stdout[4 : 4 + size])
        del self._stdout[: 4 + size]
        return frame

    def fail(self, reason: str) -> None:
        """Never use this channel again (its stream may be out of step)."""
        if self.broken is None:
            self.broken = reason

    def stderr_tail(self) -> str:
        return self._stderr[-1000:].decode("utf-8", "replace").strip()

    def close(self) -> None:
        self.fail("closed")
        with contextlib.suppress(OSError):
            self._attached.close()
            self.attach_sock.close()
            self.sock.close()
