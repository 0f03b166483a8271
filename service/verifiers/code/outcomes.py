"""One test's outcome, judged on the host from what the sandbox reported for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.sandbox.base import Limits, RunResult

from .asserts import AssertTest, HostCheckError, decode_operand, evaluate
from .ground_truth import CodeProblem, FunctionTest, StdioTest, Test
from .harness import plain
from .judge import (
    ACCEPTED,
    RUNTIME_ERROR,
    WRONG_ANSWER,
    compare_stdout,
    json_equal,
    run_failure,
)

# Not a verdict on the program: the test asks to send the solution what plain data cannot
# carry (a lambda, an object of the test's own); the item is an error, never a 0.0.
HARNESS_LIMIT = "harness limit"
_STDERR_HEAD = 300
_NO_RESULT = "no result: the program ended before the test ran"


def printable(text: str) -> str:
    """``text`` as the verdict's details may hold it (they go to JSON and the database): a lone
    surrogate, which a solution can put in a message or a name and UTF-8 cannot encode, as its
    escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(slots=True)
class TestOutcome:
    index: int
    status: str
    reason: str | None = None
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    stderr: str = ""
    stdout_head: str = ""
    judged: str | None = None

    def __post_init__(self) -> None:
        # Every text of an outcome passes here: the harness's reports are the sandbox's word.
        if self.reason is not None:
            self.reason = printable(self.reason)
        self.stderr, self.stdout_head = printable(self.stderr), printable(self.stdout_head)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "status": self.status,
            "time_ms": round(self.wall_ms, 2),
            "cpu_ms": round(self.cpu_ms, 2),
        }
        for key in ("reason", "stderr", "stdout_head", "judged"):
            value = getattr(self, key)
            if value:
                data[key] = value
        return data


@dataclass(frozen=True, slots=True)
class Record:
    """What the harness reported for one test: the run it was, as a RunResult of its own,
    and the harness's report of it (None when the test did not get that far)."""

    index: int
    result: RunResult
    report: dict[str, Any] | None


def _head(data: bytes, size: int) -> str:
    return data[:size].decode("utf-8", "replace")


def outcome_of(index: int, result: RunResult, status: str, reason: str | None) -> TestOutcome:
    return TestOutcome(
        index=index,
        status=status,
        reason=reason,
        wall_ms=result.wall_s * 1000.0,
        cpu_ms=result.cpu_s * 1000.0,
        stderr=_head(result.stderr, _STDERR_HEAD),
        stdout_head=_head(result.stdout, 120) if status != ACCEPTED else "",
    )


def test_limits(problem: CodeProblem, expected_bytes: int = 0) -> Limits:
    """Per-test limits: CPU time decides; the wall clock (2x + 1 s) only catches sleepers."""
    limit = problem.time_limit_s
    return Limits(
        cpu_s=limit,
        wall_s=2 * limit + 1.0,
        memory_mb=problem.memory_mb,
        stdout_bytes=max(1 << 20, 2 * expected_bytes + 4096),
        result_bytes=4 << 20,
        # Judges ignore stderr: debug lines past its cap do not end a compiled program's test
        # (a Python test's stderr is kept the same way by the harness).
        stderr_keeps_tail=True,
    )


def expected_bytes(test: Test) -> int:
    return len(test.stdout.encode()) if isinstance(test, StdioTest) else 0


def judge_record(problem: CodeProblem, test: Test, record: Record) -> TestOutcome:
    """The test's outcome: the run's own failure first, then the comparison."""
    index, result, report = record.index, record.result, record.report or {}
    if "harness_limit" in report:
        return TestOutcome(index, HARNESS_LIMIT, str(report["harness_limit"])[:300])
    limits = test_limits(problem, expected_bytes(test))
    if isinstance(test, StdioTest):
        return judge_stdio(problem, test, index, result, limits)
    failure = run_failure(result, limits)
    if isinstance(test, FunctionTest):
        outcome = _function(problem, test, index, result, report, failure)
    elif test.operands is not None:
        outcome = _assert_on_host(problem, test, index, result, report, failure)
        outcome.judged = "host"
    else:
        outcome = _assert_in_sandbox(index, result, report, failure)
        outcome.judged = "sandbox"
    return outcome


def judge_stdio(
    problem: CodeProblem, test: StdioTest, index: int, result: RunResult, limits: Limits
) -> TestOutcome:
    """A stdio test's outcome (a Python test of a batch run, or a C++ run of its own): the
    run's own failure first, then its output against the expected."""
    failure = run_failure(result, limits)
    if failure is not None:
        return outcome_of(index, result, *failure)
    reason = compare_stdout(
        result.stdout, test.stdout, problem.float_tolerance, problem.ignore_case
    )
    return outcome_of(index, result, ACCEPTED if reason is None else WRONG_ANSWER, reason)


def _failed(
    index: int, result: RunResult, report: dict[str, Any], failure: tuple[str, str] | None
) -> TestOutcome | None:
    """A value that was not plain data is a wrong answer, whatever the test code did after;
    then the run's own failure (a limit, a crash)."""
    if "invalid_result" in report and (failure is None or failure[0] == RUNTIME_ERROR):
        return outcome_of(index, result, WRONG_ANSWER, str(report["invalid_result"])[:200])
    if failure is not None:
        return outcome_of(index, result, *failure)
    return None


def _function(
    problem: CodeProblem,
    test: FunctionTest,
    index: int,
    result: RunResult,
    report: dict[str, Any],
    failure: tuple[str, str] | None,
) -> TestOutcome:
    failed = _failed(index, result, report, failure)
    if failed is not None:
        return failed
    if "value" not in report:
        return outcome_of(index, result, WRONG_ANSWER, _NO_RESULT)
    try:
        value = plain.decode(report["value"])
    except (ValueError, TypeError, RecursionError):
        return outcome_of(index, result, WRONG_ANSWER, "malformed result")
    # The comparison happens here, on JSON data: no object of the program takes part.
    want, tolerance = test.expected, problem.float_tolerance
    same = json_equal(value, want, tolerance) or (
        # APPS and TACO's rule for their call-based tests, asked for by the ground truth.
        problem.unwrap_expected
        and type(want) is list
        and len(want) == 1
        and json_equal(value, want[0], tolerance)
    )
    return outcome_of(index, result, ACCEPTED if same else WRONG_ANSWER, None if same else "value")


def _assert_on_host(
    problem: CodeProblem,
    test: AssertTest,
    index: int,
    result: RunResult,
    report: dict[str, Any],
    failure: tuple[str, str] | None,
) -> TestOutcome:
    assert test.operands is not None and test.check is not None
    failed = _failed(index, result, report, failure)
    if failed is not None:
        return failed
    if not isinstance(report.get("values"), list):
        return outcome_of(index, result, WRONG_ANSWER, _NO_RESULT)
    try:
        values = [decode_operand(value) for value in report["values"]]
        holds = len(values) == len(test.operands) and evaluate(
            test.check, values, problem.float_tolerance
        )
    except HostCheckError as exc:
        return outcome_of(index, result, RUNTIME_ERROR, str(exc)[:200])
    except (ValueError, TypeError, KeyError, RecursionError):
        return outcome_of(index, result, WRONG_ANSWER, "malformed result")
    return outcome_of(
        index, result, ACCEPTED if holds else WRONG_ANSWER, None if holds else "assert"
    )


def _assert_in_sandbox(
    index: int, result: RunResult, report: dict[str, Any], failure: tuple[str, str] | None
) -> TestOutcome:
    if report.get("assertion_failed") and (failure is None or failure[0] == RUNTIME_ERROR):
        return outcome_of(index, result, WRONG_ANSWER, "assert")
    failed = _failed(index, result, report, failure)
    if failed is not None:
        return failed
    done = report.get("done") is True
    return outcome_of(
        index, result, ACCEPTED if done else WRONG_ANSWER, None if done else _NO_RESULT
    )
