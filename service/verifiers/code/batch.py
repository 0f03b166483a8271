"""One batched sandbox run of Python tests: the job the harness gets, what it reported.

The harness writes one JSON line per test to fd 3 (a stdio test's output goes to stdout, its
length in the line) and an ``end`` line when it stops by itself. A run that ends without one
(the harness killed, the run's wall clock) leaves the first unreported test to be charged
with what ended the run.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import signal
from dataclasses import dataclass
from typing import Any

from service.sandbox.base import Limits, RunResult, RunSpec, SandboxError, SandboxSession

from .bundle import BYTECODE_MISMATCH, DRIVER_ARGV, BytecodeMismatch
from .ground_truth import CodeProblem, FunctionTest, StdioTest, Test
from .judge import RUNTIME_ERROR, run_failure
from .outcomes import Record, TestOutcome, expected_bytes, outcome_of, test_limits

# What one run may report: beyond it the harness stops and a fresh run goes on (a single
# test always fits: the budget grows to its own caps).
RESULT_BUDGET = 16 << 20
STDOUT_BUDGET = 24 << 20
_SLACK = 64 << 10
# The harness and the solution are two processes where a run used to be one.
_HARNESS_PROCESSES = 2


@dataclass(frozen=True, slots=True)
class BatchRun:
    records: list[Record]
    # The first unreported test, charged with the run's own end (None: the harness said why
    # it stopped, or nothing is missing).
    missing: TestOutcome | None
    result: RunResult


def _spec(problem: CodeProblem, test: Test, index: int) -> dict[str, Any]:
    limits = test_limits(problem, expected_bytes(test))
    spec: dict[str, Any] = {
        "index": index,
        "cpu_s": limits.cpu_s,
        "wall_s": limits.wall_s,
        "stdout_cap": limits.stdout_bytes,
        "stderr_cap": limits.stderr_bytes,
        "result_cap": limits.result_bytes,
    }
    if isinstance(test, StdioTest):
        spec.update(kind="stdio", stdin=test.stdin)
    elif isinstance(test, FunctionTest):
        spec.update(kind="function", args=test.args)
    elif test.operands is not None:
        spec.update(kind="values", operands=list(test.operands), namespaces=test.namespaces)
    else:
        spec.update(kind="exec", source=test.source, namespaces=test.namespaces)
    return spec


def _framed(job: dict[str, Any]) -> bytes:
    data = json.dumps(job).encode()
    return f"{len(data)}\n".encode() + data


def run_limits(problem: CodeProblem, indices: list[int], left_s: float | None) -> Limits:
    """The run as a whole: the sum of its tests' clocks (each test keeps its own inside)."""
    per_test = [test_limits(problem, expected_bytes(problem.tests[i])) for i in indices]
    wall = sum(limits.wall_s for limits in per_test) + 1.0
    if left_s is not None:
        wall = max(1.0, min(wall, left_s))
    stdout = 0
    if problem.mode == "stdio":
        caps = [limits.stdout_bytes for limits in per_test]
        stdout = max(max(caps), min(sum(caps), STDOUT_BUDGET))
    return Limits(
        cpu_s=sum(limits.cpu_s for limits in per_test) + 1.0,
        wall_s=wall,
        memory_mb=problem.memory_mb,
        processes=Limits().processes + _HARNESS_PROCESSES,
        stdout_bytes=stdout + _SLACK,
        result_bytes=RESULT_BUDGET + _SLACK,
    )


def run_batch(
    session: SandboxSession,
    problem: CodeProblem,
    indices: list[int],
    stop_at_failure: bool,
    left_s: float | None,
) -> BatchRun:
    """Run ``indices`` (in order) in one sandbox run; SandboxError if the harness failed."""
    nonce = secrets.token_hex(16)
    limits = run_limits(problem, indices, left_s)
    job = {
        "nonce": nonce,
        "fn_name": problem.fn_name,
        "stop_at_failure": stop_at_failure,
        "result_budget": RESULT_BUDGET,
        "stdout_budget": limits.stdout_bytes - _SLACK,
        "tests": [_spec(problem, problem.tests[i], i) for i in indices],
    }
    spec = RunSpec((*DRIVER_ARGV, problem.mode), _framed(job), limits)
    result = session.run(spec)
    records, end = _parse(result, nonce, indices, problem.mode == "stdio")
    missing = None
    if len(records) < len(indices) and end is None:
        missing = _charge(indices[len(records)], result, limits)
    elif len(records) < len(indices) and (end == "done" or (not records and end != "abnormal")):
        raise SandboxError(f"the harness stopped ({end}) before reporting a test")
    return BatchRun(records, missing, result)


def _charge(index: int, result: RunResult, limits: Limits) -> TestOutcome:
    failure = run_failure(result, limits)
    if failure is None:
        raise SandboxError("the harness ended without reporting a test or saying why")
    status, reason = failure
    if status == RUNTIME_ERROR and result.term_signal is None:
        reason = f"the test's run ended: {reason}"
    return outcome_of(index, result, status, reason)


def _parse(
    result: RunResult, nonce: str, indices: list[int], stdio: bool
) -> tuple[list[Record], str | None]:
    records: list[Record] = []
    end: str | None = None
    stdout_at = 0
    lines = result.result.split(b"\n")[:-1]  # the last piece is empty or cut off
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            break
        if not isinstance(data, dict):
            raise SandboxError("the harness wrote something that is not a record")
        if data.get("setup_error") == BYTECODE_MISMATCH:
            raise BytecodeMismatch(BYTECODE_MISMATCH)
        for key in ("setup_error", "driver_error"):
            if key in data:
                raise SandboxError(f"the harness failed: {str(data[key])[-1000:]}")
        if data.get("nonce") != nonce:
            raise SandboxError("the harness wrote a record of another run")
        if "end" in data:
            end = str(data["end"])
            break
        if len(records) >= len(indices) or data.get("index") != indices[len(records)]:
            raise SandboxError("the harness reported tests out of order")
        try:
            record, stdout_at = _record(data, result, stdout_at, stdio)
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise SandboxError(f"the harness wrote a malformed record: {exc}") from exc
        records.append(record)
    return records, end


def _record(
    data: dict[str, Any], result: RunResult, stdout_at: int, stdio: bool
) -> tuple[Record, int]:
    length = int(data["stdout_len"])
    if stdio:
        stdout = result.stdout[stdout_at : stdout_at + length]
        if len(stdout) != length:
            raise ValueError("stdout shorter than reported")
        stdout_at += length
    else:
        stdout = base64.b64decode(data.get("stdout_head", ""))
    term_signal = data["signal"]
    report = data["report"]
    if report is not None and not isinstance(report, dict):
        raise TypeError("report is not an object")
    run = RunResult(
        exit_code=data["exit"],
        term_signal=term_signal,
        cpu_s=float(data["cpu"]),
        wall_s=float(data["wall"]),
        stdout=stdout,
        stderr=base64.b64decode(data["stderr"]),
        result=b"",
        killed=data["killed"],
        # The run's OOM kill belongs to the test whose process died of SIGKILL (the harness
        # ends a run right after such a test); the driver says in a field of its own when a
        # test did not fit in its memory. Never read from the test's stderr, which is the
        # solution's to write.
        memory_exceeded=(result.memory_exceeded and term_signal == signal.SIGKILL)
        or data.get("memory") is True,
    )
    return Record(int(data["index"]), run, report), stdout_at
