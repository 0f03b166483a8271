"""Run a python grader's ``grade(sample, item)`` in the sandbox and read its float.

The source and the driver go to /work, the inputs as JSON on stdin, the value comes back on
fd 3 (``driver.py``). Two kinds of failure are kept apart, as OpenAI's flags are:

- the grader's: it raised, ran out of time or memory, or returned something other than a
  finite float → ``runtime_error`` with the details (OpenAI then gives reward 0);
- the service's: the sandbox is unavailable or failed → ``server_error`` with its type
  (nothing was decided: the decision log records ``error`` with no reward).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from service.sandbox import Limits, RunResult, RunSpec, SandboxError, get_backend

from .outcome import clipped

log = logging.getLogger(__name__)

# ``python3 -I -S``: isolated mode, no site-packages (the sandbox's portable Python argv).
DRIVER_ARGV = ("python3", "-I", "-S", "/work/driver.py")
# OpenAI allows 2 minutes and 2 GB; a sandbox worker is not held that long here.
LIMITS = Limits(
    cpu_s=30.0,
    wall_s=60.0,
    memory_mb=1024,
    processes=16,
    stdout_bytes=1 << 20,
    stderr_bytes=64 << 10,
    result_bytes=64 << 10,
)
_TRACEBACK_CHARS = 4000


@dataclass(frozen=True, slots=True)
class PythonRun:
    value: float | None = None
    runtime_error: str | None = None
    timed_out: bool = False
    server_error_type: str | None = None
    server_error: str | None = None
    wall_ms: float = 0.0


@cache
def _driver_source() -> bytes:
    return (Path(__file__).parent / "driver.py").read_bytes()


def _report(result: RunResult) -> dict[str, Any] | None:
    try:
        report = json.loads(result.result)
    except (ValueError, RecursionError):
        return None
    return report if isinstance(report, dict) else None


def _stderr_tail(result: RunResult) -> str:
    text = result.stderr.decode("utf-8", "replace").strip()
    return text[-_TRACEBACK_CHARS:]


def judge_run(result: RunResult, limits: Limits) -> PythonRun:
    """What one sandbox run of the driver means (pure: no sandbox needed to test it)."""
    wall_ms = result.wall_s * 1000.0
    if result.exceeded_time(limits):
        reason = f"grade() exceeded the time limit ({limits.cpu_s:g} s CPU, {limits.wall_s:g} s)"
        return PythonRun(runtime_error=reason, timed_out=True, wall_ms=wall_ms)
    if result.memory_exceeded:
        reason = f"grade() exceeded the memory limit of {limits.memory_mb} MB"
        return PythonRun(runtime_error=reason, wall_ms=wall_ms)
    if result.exceeded_output:
        return PythonRun(runtime_error=f"output limit exceeded ({result.killed})", wall_ms=wall_ms)
    report = _report(result)
    if result.exit_code == 0 and report is not None:
        if "invalid_result" in report:
            return PythonRun(runtime_error=str(report["invalid_result"])[:500], wall_ms=wall_ms)
        value = report.get("value")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return PythonRun(value=float(value), wall_ms=wall_ms)
    tail = _stderr_tail(result)
    if result.term_signal is not None:
        ended = f"the grader was killed by signal {result.term_signal}"
    elif result.exit_code not in (0, None):
        ended = f"the grader exited with code {result.exit_code}"
    else:
        ended = "grade() returned no result"
    return PythonRun(runtime_error=clipped(f"{tail}\n{ended}" if tail else ended), wall_ms=wall_ms)


def run_python_grader(source: str, sample: Any, item: Any) -> PythonRun:
    """``grade(sample, item)`` of ``source``, run in this process's sandbox."""
    files = {"grader.py": source.encode("utf-8", "replace"), "driver.py": _driver_source()}
    stdin = json.dumps({"sample": sample, "item": item}).encode()
    try:
        backend = get_backend()
        with backend.session(files, language="python") as session:
            result = session.run(RunSpec(DRIVER_ARGV, stdin, LIMITS))
    except SandboxError as exc:
        # SandboxUnavailable included: never run unisolated, never call it the grader's fault.
        return PythonRun(server_error_type=type(exc).__name__, server_error=clipped(str(exc)))
    except Exception as exc:  # a bug of ours must cost this item an error, not the chunk
        log.exception("python grader run failed")
        return PythonRun(server_error_type=type(exc).__name__, server_error=clipped(str(exc)))
    return judge_run(result, LIMITS)
