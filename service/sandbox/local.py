"""The local backend: Linux namespaces, rlimits and cgroups around a warm fork server.

One server (a "zygote", see server/) per worker process, started on first use and probed
before anything untrusted runs. If namespaces are not available the probe fails and every
session raises SandboxUnavailable: code never runs unisolated.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from service.sandbox import warm_code
from service.sandbox.base import (
    Limits,
    ProbeReport,
    RunResult,
    RunSpec,
    SandboxError,
    SandboxUnavailable,
)
from service.sandbox.cgroups import CGROUP_HEADROOM, SandboxCgroups
from service.sandbox.config import SandboxConfig
from service.sandbox.probe import ProbeCache, check_probe_run, forbidden_paths, probe_spec
from service.sandbox.procfs import processes_of_uids
from service.sandbox.runtime_files import runtime_paths
from service.sandbox.server import wire

_SERVER_PARENT = str(Path(__file__).resolve().parent)
# Loaded from the project by root before pivot_root (never visible to programs), without
# writing bytecode into the project; `server` resolves to service/sandbox/server.
_BOOT = (
    f"import sys; sys.path.insert(0, {_SERVER_PARENT!r}); from server import main; "
    "del sys.path[0]; main.boot()"
)
_START_TIMEOUT_S = 20.0
_REPLY_MARGIN_S = 10.0
_MAX_FRAME = 64 << 20
_instances = itertools.count()


def sandbox_python(configured: str | None = None) -> str:
    """The interpreter that runs Python programs: the configured one or the system python3."""
    if configured:
        return configured
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return os.path.realpath(sys.executable)


class _Zygote:
    """The host's handle on one running fork server."""

    def __init__(self, python: str, uid: int, cgroups: SandboxCgroups, ro_paths: list[str]):
        self.warm_generation = warm_code.generation()
        offered = warm_code.boot_config()
        config = {
            "uid": uid,
            "cgroups": cgroups.directories,
            "ro_paths": ro_paths,
            "warm_code": offered,
        }
        # The server's own stderr (its crash reports) goes to a file read only on failure.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in kill)
        self.proc = subprocess.Popen(
            [python, "-I", "-S", "-B", "-c", _BOOT, wire.MARKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(wire.ENV),
            cwd="/",
            close_fds=True,
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin, self.proc.stdout.fileno()
        try:
            # The config is the first frame on the control pipe, never on the command line.
            self._write(config)
            self.ready: dict[str, Any] = self._read(_START_TIMEOUT_S)
            self.warm_digests = warm_code.held_digests(offered, self.ready)
        except BaseException:
            self.kill()
            raise

    def _read_exact(self, count: int, deadline: float) -> bytes:
        chunks, left = [], count
        while left:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SandboxError("the sandbox server stopped answering")
            readable, _, _ = select.select([self._out], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(self._out, min(left, 1 << 20))
            if not chunk:
                raise SandboxError(f"the sandbox server exited: {self.stderr_tail()}")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _read(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        (size,) = struct.unpack(">I", self._read_exact(4, deadline))
        if size > _MAX_FRAME:
            raise SandboxError(f"oversized reply from the sandbox server ({size} bytes)")
        reply: dict[str, Any] = json.loads(self._read_exact(size, deadline))
        return reply

    def _write(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self._in.write(struct.pack(">I", len(data)) + data)
            self._in.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SandboxError(f"the sandbox server is gone: {self.stderr_tail()}") from exc

    def request(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self._write(payload)
        reply = self._read(timeout_s)
        if not reply.get("ok", False):
            raise SandboxError(f"sandbox server refused {payload.get('op')}: {reply.get('error')}")
        return reply

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            self._stderr.seek(0)
            return self._stderr.read()[-1000:].decode("utf-8", "replace")
        return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        # Killing the keeper kills PID 1 (parent-death signal), which ends the namespace.
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self._in.close()
        self.proc.wait()
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]
        self._stderr.close()


class LocalSession:
    """A program's /work inside the running server; runs execute one at a time."""

    def __init__(self, backend: LocalBackend, zygote_handle: _Zygote) -> None:
        self._backend, self._zygote = backend, zygote_handle

    def run(self, spec: RunSpec) -> RunResult:
        """Run one argv with its limits; SandboxError if the sandbox (not the program) failed."""
        limits = spec.limits
        cgroups = self._backend.cgroups
        memory = limits.memory_mb << 20
        cgroups.set_memory_limit(memory + (limits.tmp_mb << 20) + CGROUP_HEADROOM)
        oom_before = cgroups.oom_kills()
        request = _run_request(spec, limits)
        try:
            reply = self._zygote.request(request, limits.wall_s + _REPLY_MARGIN_S)
        except SandboxError:
            self._backend.discard()
            raise
        if reply.get("setup_error"):
            raise SandboxError(f"sandbox could not start the program: {reply['setup_error']}")
        return RunResult(
            exit_code=reply["exit_code"],
            term_signal=reply["signal"],
            cpu_s=float(reply["cpu_s"]),
            wall_s=float(reply["wall_s"]),
            stdout=base64.b64decode(reply["stdout"]),
            stderr=base64.b64decode(reply["stderr"]),
            result=base64.b64decode(reply["result"]),
            killed=reply["killed"],
            memory_exceeded=cgroups.oom_kills() > oom_before,
            survivors_killed=int(reply["survivors_killed"]),
            max_rss_kb=int(reply["max_rss_kb"]),
        )


def _run_request(spec: RunSpec, limits: Limits) -> dict[str, Any]:
    return {
        "op": "run",
        "argv": list(spec.argv),
        "stdin": base64.b64encode(spec.stdin).decode(),
        "work_writable": spec.work_writable,
        "cpu_s": limits.cpu_s,
        "wall_s": limits.wall_s,
        "memory_bytes": limits.memory_mb << 20,
        "fsize_bytes": limits.file_size_mb << 20,
        "open_files": limits.open_files,
        "processes": limits.processes,
        "stack_bytes": limits.stack_mb << 20,
        "tmp_bytes": limits.tmp_mb << 20,
        "stdout_cap": limits.stdout_bytes,
        "stderr_cap": limits.stderr_bytes,
        "stderr_keeps_tail": limits.stderr_keeps_tail,
        "result_cap": limits.result_bytes,
    }


class LocalBackend:
    """Namespaces + rlimits + cgroups on this machine, through one warm server per process."""

    name = "local"

    def __init__(self, python: str | None = None, pids_max: int = 64, work_mb: int = 128):
        self.python = sandbox_python(python)
        self.pids_max, self.work_mb = pids_max, work_mb
        self.instance = next(_instances)
        # A uid of its own per sandbox: RLIMIT_NPROC counts only this sandbox's processes,
        # and no process outside can be signalled or ptraced by it.
        self.sandbox_uid = 1_000_000 + os.getpid() * 16 + self.instance % 16
        # Only the language runtimes' files, not all of the host's /usr.
        self.ro_paths = list(runtime_paths(self.python))
        self.cgroups = SandboxCgroups(None, None)
        self._zygote: _Zygote | None = None
        self._probes = ProbeCache()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: SandboxConfig) -> LocalBackend:
        return cls(python=config.python)

    # -- lifecycle ---------------------------------------------------------------------------

    def _start(self) -> ProbeReport:
        if shutil.which(self.python) is None and not os.access(self.python, os.X_OK):
            return ProbeReport(self.name, False, (f"no interpreter at {self.python}",))
        tag = f"rlvr-sbx-{os.getpid()}-{self.instance}"
        self.cgroups = SandboxCgroups.create(tag, self.pids_max)
        try:
            handle = _Zygote(self.python, self.sandbox_uid, self.cgroups, self.ro_paths)
        except (SandboxError, OSError, ValueError) as exc:
            self.cgroups.remove()
            return ProbeReport(self.name, False, (f"sandbox server did not start: {exc}",))
        ready = handle.ready
        problems = []
        if not ready.get("ready"):
            problems.append(f"sandbox set-up failed: {ready.get('error')}")
        elif ready["pid"] != 1 or ready["pids"] != [1] or ready["interfaces"] != ["lo"]:
            problems.append(f"namespaces not isolated: {ready}")
        facts: dict[str, Any] = {}
        self._zygote = handle
        if not problems:
            problems, facts = self._probe_program()
        if problems:
            self.discard()
            return ProbeReport(self.name, False, tuple(problems))
        facts.update(
            python=self.python,
            memory_limit="cgroup" if self.cgroups.memory else "rlimit_as",
            process_limit="cgroup" if self.cgroups.pids else "rlimit_nproc",
            seccomp=bool(ready.get("seccomp")),
            proc=ready.get("proc"),
            server_pid=handle.proc.pid,
            warm_code=ready.get("warm_code"),
        )
        return ProbeReport(self.name, True, (), facts)

    def _probe_program(self) -> tuple[list[str], dict[str, Any]]:
        files, spec = probe_spec(forbidden_paths(self.ro_paths))
        try:
            with self._session(files) as session:
                result = session.run(spec)
        except SandboxError as exc:
            return [f"probe did not run: {exc}"], {}
        return check_probe_run(result, self.sandbox_uid)

    def probe(self) -> ProbeReport:
        """Start the server if needed and return the (cached) isolation report."""
        with self._lock:
            return self._ensure()

    def _ensure(self) -> ProbeReport:
        self._probes.check_owner()
        if self._zygote is not None and not self._zygote.alive():
            self.discard()
        elif self._zygote is not None and self._zygote.warm_generation != warm_code.generation():
            # Code offered since the server started (``warm_code``): a new server has it.
            self.discard()
        if self._zygote is None and self._probes.due(again_after_success=True):
            # A server that died (or was discarded after a failure) is replaced, and the new
            # one is probed again before it runs anything.
            return self._probes.record(self._start())
        return self._probes.last

    def discard(self) -> None:
        """Kill the server (after a failure); the next session starts and probes a new one."""
        if self._zygote is not None:
            self._zygote.kill()
            self._zygote = None
        # PID 1 dies by its parent-death signal a moment after the keeper; a group can only
        # be removed once empty, so kill what is left in it and wait for that.
        deadline = time.monotonic() + 5.0
        while (pids := self.cgroups.processes()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        self.cgroups.remove()

    def close(self) -> None:
        with self._lock:
            if self._probes.owned():
                self.discard()

    # -- sessions ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(
        self,
        files: Mapping[str, bytes],
        language: str | None = None,
        warm_files: Mapping[str, str] | None = None,
    ) -> Iterator[LocalSession]:
        """A fresh /work holding ``files`` (less the ``warm_files`` its server's warm code
        stands for); raises SandboxUnavailable if isolation is missing. Every language runs on
        this machine's own toolchains here."""
        with self._lock:
            report = self._ensure()
            if not report.ok:
                raise SandboxUnavailable("; ".join(report.problems))
            with self._session(files, warm_files) as session:
                yield session

    @contextlib.contextmanager
    def _session(
        self, files: Mapping[str, bytes], warm_files: Mapping[str, str] | None = None
    ) -> Iterator[LocalSession]:
        handle = self._zygote
        if handle is None:
            raise SandboxError("the sandbox server is not running")
        files = warm_code.session_files(files, warm_files, handle.warm_digests)
        encoded = {name: base64.b64encode(data).decode() for name, data in files.items()}
        try:
            handle.request({"op": "open", "files": encoded, "work_bytes": self.work_mb << 20}, 10)
        except SandboxError:
            self.discard()
            raise
        try:
            yield LocalSession(self, handle)
        finally:
            if self._zygote is handle:
                try:
                    handle.request({"op": "close"}, 10)
                except SandboxError:
                    self.discard()

    # -- evidence for tests and audits ---------------------------------------------------------

    def server_pid(self) -> int | None:
        return self._zygote.proc.pid if self._zygote is not None else None

    def program_uids(self) -> set[int]:
        """Every uid a program of this backend ran as."""
        return {self.sandbox_uid}

    def leftover_processes(self) -> list[int]:
        """Host pids running as this sandbox's uid: empty whenever no run is in progress."""
        return processes_of_uids(self.program_uids())
