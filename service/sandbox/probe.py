"""The isolation probe: a program run inside a fresh sandbox whose report the host checks.

It runs as the sandboxed user, exactly like a solution, and looks outward: which processes
it can see, whether it can reach the database, broker or the internet, read host files or
write anywhere. Any finding means the backend refuses to run untrusted code.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from service.sandbox.base import Limits, ProbeReport, RunResult, RunSpec, SandboxError

PROJECT_DIR = str(Path(__file__).resolve().parents[2])
# A failed probe is tried again only this often: refusing must stay cheap.
RETRY_S = 30.0
# /proc/self/ns/pid of a process in the host's own PID namespace (PROC_PID_INIT_INO).
HOST_PID_NAMESPACE = "pid:[4026531836]"

PROBE_SOURCE = r"""
import json, os, socket, sys
forbidden = json.loads(sys.argv[1])
out = {"pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid()}
out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
out["pidns"] = os.readlink("/proc/self/ns/pid")
try:
    with open("/proc/1/cmdline", "rb") as handle:
        init = handle.read()
except OSError:
    init = b""
out["init"] = init.replace(b"\0", b" ").decode("utf-8", "replace").strip()
def reach(host, port):
    try:
        socket.create_connection((host, port), timeout=0.3).close()
        return True
    except OSError:
        return False
targets = [("127.0.0.1", 5432), ("127.0.0.1", 6379), ("1.1.1.1", 53)]
out["reachable"] = [f"{h}:{p}" for h, p in targets if reach(h, p)]
def readable(path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").close()
        return True
    except OSError:
        return False
out["readable"] = [p for p in forbidden if readable(p)]
out["writable"] = [p for p in ("/", "/usr", "/etc", "/work", "/proc/sys") if os.access(p, os.W_OK)]
with open("/proc/self/status") as handle:
    out["cap_eff"] = [l.split()[1] for l in handle if l.startswith("CapEff")][0]
print(json.dumps(out))
"""


def forbidden_paths(bound: Iterable[str]) -> list[str]:
    """Host paths a sandboxed program must not read (ancestors of bound paths excepted)."""
    candidates = [
        PROJECT_DIR,
        "/root",
        "/home",
        "/etc/shadow",
        "/var/run",
        "/run",
        "/var/run/docker.sock",
        "/proc/1/environ",
        "/sys/fs/cgroup",
    ]
    bound = list(bound)
    return [p for p in candidates if not any(b.startswith(p.rstrip("/") + "/") for b in bound)]


def probe_spec(forbidden: list[str]) -> tuple[dict[str, bytes], RunSpec]:
    """The probe's files and run, as any backend starts it."""
    argv = ("python3", "-I", "-S", "/work/probe.py", json.dumps(forbidden))
    return {"probe.py": PROBE_SOURCE.encode()}, RunSpec(argv, limits=Limits(cpu_s=5, wall_s=10))


def check_probe_run(
    result: RunResult, sandbox_uid: int, kind: str = "local"
) -> tuple[list[str], dict[str, Any]]:
    """Problems of a finished probe run (its exit, then its report) and the facts it gave."""
    if result.exit_code != 0:
        return [f"probe failed: {result.stderr[-500:]!r}"], {}
    return check_probe_output(result.stdout, sandbox_uid, kind)


def check_probe_output(
    stdout: bytes, sandbox_uid: int, kind: str = "local"
) -> tuple[list[str], dict[str, Any]]:
    """Problems found in the probe's report (empty: isolated) and the facts it reported.

    ``local``: the program is in a PID namespace of its own and sees only itself (not its
    server, PID 1, whose command line it cannot read). ``docker``: PID 1 is Docker's init;
    besides it the container holds its supervisor, the run template and the probe."""
    try:
        facts: dict[str, Any] = json.loads(stdout)
    except ValueError:
        return [f"probe printed no report: {stdout[:200]!r}"], {}
    problems = []
    if kind == "local":
        if facts.get("pidns", HOST_PID_NAMESPACE) == HOST_PID_NAMESPACE:
            problems.append("program is not in a PID namespace of its own")
        if set(facts["pids"]) != {facts["pid"]}:
            problems.append(f"sandbox sees processes outside itself: {facts['pids'][:20]}")
        if facts.get("init"):
            problems.append(f"program reads its server's command line: {facts['init'][:80]!r}")
    else:
        if 1 not in facts["pids"] or len(facts["pids"]) > 4:
            problems.append(f"container sees processes outside itself: {facts['pids'][:20]}")
        if "docker-init" not in facts.get("init", ""):
            problems.append(f"pid 1 of the container is not Docker's init: {facts.get('init')!r}")
    if facts["uid"] != sandbox_uid or facts["uid"] == 0:
        problems.append(f"program runs as uid {facts['uid']}, not {sandbox_uid}")
    if facts["cap_eff"].strip("0"):
        problems.append(f"program holds capabilities {facts['cap_eff']}")
    for key, what in (("reachable", "reaches"), ("readable", "reads"), ("writable", "writes")):
        if facts[key]:
            problems.append(f"program {what} {facts[key]}")
    return problems, facts


class ProbeCache:
    """A backend's last probe report, in the process that made the backend.

    A backend cannot cross fork: its server or containers belong to the process that started
    them. A failed probe is retried only every ``RETRY_S`` seconds."""

    def __init__(self) -> None:
        self.owner_pid = os.getpid()
        self._report: ProbeReport | None = None
        self._failed_at = 0.0

    def owned(self) -> bool:
        return os.getpid() == self.owner_pid

    def check_owner(self) -> None:
        if not self.owned():
            raise SandboxError("a sandbox backend cannot be shared across fork")

    def due(self, *, again_after_success: bool = False) -> bool:
        """Whether to start and probe now: never probed, a failure old enough, or (when the
        backend's server went away since) a success."""
        if self._report is None:
            return True
        if self._report.ok:
            return again_after_success
        return time.monotonic() - self._failed_at > RETRY_S

    def record(self, report: ProbeReport) -> ProbeReport:
        self._report = report
        if not report.ok:
            self._failed_at = time.monotonic()
        return report

    @property
    def last(self) -> ProbeReport:
        if self._report is None:
            raise SandboxError("the sandbox was never probed")
        return self._report
