"""One submission's session in a container, and how a run in it becomes a RunResult.

A run is one request to the container's supervisor (``server/supervisor.py``), no engine call:
the supervisor's pristine template forks a child that reads the job, drops to the program's
uid under its limits and the seccomp filter, and runs the program; the supervisor feeds its
stdin, reads its output under the caps and keeps its wall clock; the template reaps and kills
everything the run left and cleans up as the program's uid, after counting the run's CPU time
(its processes' resource use, whoever reaped them), so cleaning up is never the test's time.

The host believes nothing the program writes: a set-up failure reaches it only through a pipe
that closes when the program starts, and the program's bytes travel inside the supervisor's
reply. It keeps its own clock and caps too: a reply must come within the run's wall clock and
a grace (else the host kills every process of the program's uid through an exec of its own,
and the run counts as over its time), and may not be larger than the caps allow. OOM kills
come from the container's cgroup on the host, which the program cannot touch.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import Any, NoReturn

from service.sandbox.base import Limits, RunResult, RunSpec, SandboxError
from service.sandbox.docker.containers import Container, Engine

# How long after its wall clock a run's reply may take (the supervisor's own kill and
# clean-up, a loaded machine), and again after the host's own kill.
GRACE_S = 5.0
# Sessions opening and closing (files into /work, emptying it).
_SESSION_S = 30.0
_SMALL_REPLY = 64 << 10


class DockerSession:
    """One submission's files in a container's /work; runs execute one at a time."""

    def __init__(self, engine: Engine, container: Container) -> None:
        self.engine, self.container = engine, container

    def run(self, spec: RunSpec) -> RunResult:
        limits = spec.limits
        engine, container = self.engine, self.container
        if container.broken is not None:
            raise SandboxError(f"the sandbox container cannot run anything: {container.broken}")
        # The container's memory cgroup bounds the run as a whole (all its processes and its
        # files in /tmp); RLIMIT_AS bounds each process. Changed only when the limit changes.
        engine.set_memory(container, (limits.memory_mb + engine.tmp_mb) << 20)
        oom_before = container.cgroup.oom_kills()
        started = time.monotonic()
        reply, host_killed = self._request(_run_request(spec, limits), limits)
        if host_killed:  # the host's clock, not the supervisor's, decided
            reply["wall_s"] = max(float(reply["wall_s"]), time.monotonic() - started)
        if not reply.get("ok"):
            self._fail(f"the sandbox's supervisor refused the run: {reply.get('error')}")
        if reply.get("unclean"):
            # This run's result stands; the container serves nothing more.
            container.broken = str(reply["unclean"])
        if reply.get("setup_error"):
            raise SandboxError(f"sandbox could not start the program: {reply['setup_error']}")
        return _result(reply, limits, host_killed, container.cgroup.oom_kills() > oom_before)

    def _request(self, request: dict[str, Any], limits: Limits) -> tuple[dict[str, Any], bool]:
        """The supervisor's reply, within the run's wall clock and a grace; else the host ends
        the run itself (True: the host's clock stopped it)."""
        channel = self.container.supervisor()
        # base64 makes 4 bytes of 3, plus the reply's own fields.
        caps = limits.stdout_bytes + limits.stderr_bytes + limits.result_bytes
        max_reply = caps * 4 // 3 + _SMALL_REPLY
        try:
            channel.send(request)
            reply = channel.receive(time.monotonic() + limits.wall_s + GRACE_S, max_reply)
            if reply is not None:
                return reply, False
            self.engine.kill_programs(self.container)
            reply = channel.receive(time.monotonic() + GRACE_S, max_reply)
        except SandboxError as exc:
            self._fail(str(exc))
        if reply is None:
            channel.fail("no reply after the host's kill")
            self._fail("the sandbox's supervisor stopped answering")
        return reply, True

    def _fail(self, reason: str) -> NoReturn:
        """The sandbox failed (never the program): this container serves nothing more."""
        container = self.container
        container.broken = container.broken or reason
        if not self.engine.running(container):
            raise SandboxError("the sandbox container stopped during the run")
        raise SandboxError(reason)

    # -- the session's files -------------------------------------------------------------------

    def open(self, files: Mapping[str, bytes]) -> None:
        """The session's files into the container's empty /work."""
        encoded = {name: base64.b64encode(data).decode() for name, data in files.items()}
        self._session_request({"op": "open", "files": encoded})

    def close(self) -> None:
        """/work emptied: nothing of this session stays in the container."""
        if self.container.broken is None:
            try:
                self._session_request({"op": "close"})
            except SandboxError as exc:
                self.container.broken = self.container.broken or str(exc)

    def _session_request(self, request: dict[str, Any]) -> None:
        try:
            reply = self.container.supervisor().request(request, _SESSION_S, _SMALL_REPLY)
        except SandboxError as exc:
            self.container.broken = self.container.broken or str(exc)
            raise
        if not reply.get("ok"):
            self.container.broken = self.container.broken or str(reply.get("error"))
            raise SandboxError(f"sandbox {request['op']} failed: {reply.get('error')}")


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
        "stdout_cap": limits.stdout_bytes,
        "stderr_cap": limits.stderr_bytes,
        "stderr_keeps_tail": limits.stderr_keeps_tail,
        "result_cap": limits.result_bytes,
    }


def _result(reply: dict[str, Any], limits: Limits, host_killed: bool, oom: bool) -> RunResult:
    outputs = {}
    killed = "wall" if host_killed else reply.get("killed")
    for name, cap in (
        ("stdout", limits.stdout_bytes),
        ("stderr", limits.stderr_bytes),
        ("result", limits.result_bytes),
    ):
        data = base64.b64decode(reply[name])
        if len(data) > cap:  # the host's own cap, whatever the supervisor did
            data, killed = data[:cap], killed or f"{name}_limit"
        outputs[name] = data
    return RunResult(
        exit_code=reply["exit_code"],
        term_signal=reply["signal"],
        cpu_s=float(reply["cpu_s"]),
        wall_s=float(reply["wall_s"]),
        stdout=outputs["stdout"],
        stderr=outputs["stderr"],
        result=outputs["result"],
        killed=killed,
        memory_exceeded=oom,
        survivors_killed=int(reply["survivors_killed"]),
        max_rss_kb=int(reply["max_rss_kb"]),
    )
