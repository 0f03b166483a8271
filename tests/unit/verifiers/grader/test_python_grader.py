"""Python graders: what a sandbox run means, and the service's failures kept apart from the
grader's. The sandbox itself is exercised in tests/integration/graders."""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest

from service.sandbox import SandboxUnavailable, use_backend
from service.verifiers.grader.driver import check_value
from service.verifiers.grader.python_grader import LIMITS, judge_run, run_python_grader
from tests.unit.verifiers.grader.sandbox_fakes import FakeSandbox, run_result


def test_a_float_on_the_result_channel_is_the_score() -> None:
    run = judge_run(run_result(result=b'{"value": 0.25}', stdout=b'{"value": 1.0}'), LIMITS)
    assert run.value == 0.25
    assert run.runtime_error is None and run.server_error_type is None


def test_an_exception_is_a_runtime_error_with_the_traceback() -> None:
    traceback = b'Traceback (most recent call last):\n  File "/work/grader.py"\nKeyError: x\n'
    run = judge_run(run_result(exit_code=1, stderr=traceback), LIMITS)
    assert run.value is None
    assert run.runtime_error is not None and "KeyError: x" in run.runtime_error
    assert "exited with code 1" in run.runtime_error
    assert not run.timed_out


def test_running_out_of_time_is_a_runtime_error_marked_as_a_timeout() -> None:
    run = judge_run(run_result(exit_code=None, term_signal=signal.SIGKILL, killed="wall"), LIMITS)
    assert run.timed_out and run.runtime_error is not None and "time limit" in run.runtime_error
    run = judge_run(run_result(cpu_s=LIMITS.cpu_s + 1), LIMITS)
    assert run.timed_out


def test_memory_output_and_signals_are_runtime_errors() -> None:
    assert "memory" in str(judge_run(run_result(memory_exceeded=True), LIMITS).runtime_error)
    assert "output" in str(judge_run(run_result(killed="stdout_limit"), LIMITS).runtime_error)
    killed = judge_run(run_result(exit_code=None, term_signal=signal.SIGSEGV), LIMITS)
    assert "signal" in str(killed.runtime_error)


def test_a_value_that_is_not_a_float_is_a_runtime_error() -> None:
    report = json.dumps({"invalid_result": "grade() returned str, not a float"}).encode()
    run = judge_run(run_result(result=report), LIMITS)
    assert run.runtime_error == "grade() returned str, not a float"


def test_no_result_at_all_is_a_runtime_error() -> None:
    assert judge_run(run_result(), LIMITS).runtime_error == "grade() returned no result"
    assert judge_run(run_result(result=b"garbage"), LIMITS).runtime_error is not None
    too_deep = judge_run(run_result(result=b"[" * 100_000), LIMITS)
    assert too_deep.runtime_error is not None and too_deep.server_error_type is None


@pytest.mark.parametrize(
    ("value", "number", "problem"),
    [
        (0.5, 0.5, None),
        (1, 1.0, None),
        (True, None, "grade() returned bool, not a float"),
        ("0.5", None, "grade() returned str, not a float"),
        (None, None, "grade() returned NoneType, not a float"),
        (float("nan"), None, "grade() returned nan, not a finite float"),
        (10**400, None, "grade() returned an integer too large for a float"),
    ],
)
def test_the_driver_accepts_finite_numbers_only(
    value: Any, number: float | None, problem: str | None
) -> None:
    assert check_value(value) == (number, problem)


def test_the_source_driver_and_inputs_go_into_the_sandbox() -> None:
    backend = FakeSandbox(run_result(result=b'{"value": 1.0}'))
    with use_backend(backend):  # type: ignore[arg-type]
        run = run_python_grader("def grade(s, i):\n  return 1.0\n", {"output_text": "x"}, {"a": 1})
    assert run.value == 1.0
    assert backend.files["grader.py"] == b"def grade(s, i):\n  return 1.0\n"
    assert b"def main" in backend.files["driver.py"]
    (spec,) = backend.specs
    assert spec.argv == ("python3", "-I", "-S", "/work/driver.py")
    assert json.loads(spec.stdin) == {"sample": {"output_text": "x"}, "item": {"a": 1}}


def test_an_unavailable_sandbox_is_a_server_error_never_a_runtime_error() -> None:
    backend = FakeSandbox(refuse=SandboxUnavailable("no user namespaces"))
    with use_backend(backend):  # type: ignore[arg-type]
        run = run_python_grader("def grade(s, i):\n  return 1.0\n", {}, {})
    assert run.server_error_type == "SandboxUnavailable"
    assert run.server_error == "no user namespaces"
    assert run.runtime_error is None and run.value is None
