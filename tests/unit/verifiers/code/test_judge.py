"""Host-side comparison rules."""

from __future__ import annotations

import math
import signal
from collections import OrderedDict, deque

import pytest

from service.sandbox.base import Limits, RunResult
from service.verifiers.code.judge import (
    _NUMBER,
    MEMORY_LIMIT,
    OUTPUT_LIMIT,
    RUNTIME_ERROR,
    TIME_LIMIT,
    approx_equal,
    compare_stdout,
    json_equal,
    run_failure,
)


def test_trailing_whitespace_and_blank_lines_are_ignored() -> None:
    assert compare_stdout(b"1 2  \r\n3\n\n\n", "1 2\n3", None) is None


def test_everything_else_must_match_exactly() -> None:
    assert compare_stdout(b"YES\n", "yes\n", None) == "line 1 differs"
    assert compare_stdout(b" 1\n", "1\n", None) == "line 1 differs"
    assert compare_stdout(b"1  2\n", "1 2\n", None) == "line 1 differs"
    assert compare_stdout(b"2 1\n", "1 2\n", None) == "line 1 differs"


def test_the_number_of_lines_must_match() -> None:
    assert compare_stdout(b"1\n", "1\n2\n", None) == "expected 2 line(s), got 1"
    assert compare_stdout(b"1\n2\n", "1\n", None) == "expected 1 line(s), got 2"
    assert compare_stdout(b"", "1\n", None) == "expected 1 line(s), got 0"


def test_float_tolerance_only_when_set() -> None:
    assert compare_stdout(b"0.3333\n", "0.33333333\n", None) == "line 1 differs"
    assert compare_stdout(b"0.3333 x\n", "0.33333333 x\n", 1e-3) is None
    assert compare_stdout(b"0.34\n", "0.33333333\n", 1e-3) == "line 1 differs"
    assert compare_stdout(b"1000.5\n", "1000\n", 1e-3) is None  # relative to the expected


def test_output_that_is_not_utf8_or_has_nul_is_wrong() -> None:
    assert compare_stdout(b"\xff\n", "1\n", None) == "output is not valid UTF-8"
    assert compare_stdout(b"1\x00\n", "1\n", None) == "line 1 differs"


def test_json_equality_is_strict_about_types() -> None:
    assert json_equal([1, 2.0, {"a": None}], [1, 2, {"a": None}], None)
    assert not json_equal(True, 1, None)
    assert not json_equal(1, True, None)
    assert not json_equal("1", 1, None)
    assert not json_equal([1, 2], [2, 1], None)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}, None)
    assert json_equal(0.1 + 0.2, 0.3, 1e-9) and not json_equal(0.1 + 0.2, 0.3, None)
    assert not json_equal(float("nan"), float("nan"), 1e-9)


def test_python_equality_for_asserts_keeps_python_semantics() -> None:
    assert approx_equal((1, 2), (1, 2), None) and not approx_equal((1, 2), [1, 2], None)
    assert approx_equal({1, 2}, frozenset({1, 2}), None)
    assert approx_equal([0.1 + 0.2], [0.3], 1e-9) and not approx_equal([0.1 + 0.2], [0.3], None)


def _result(**fields: object) -> RunResult:
    base: dict[str, object] = {
        "exit_code": 0,
        "term_signal": None,
        "cpu_s": 0.01,
        "wall_s": 0.02,
        "stdout": b"",
        "stderr": b"",
        "result": b"",
    }
    return RunResult(**{**base, **fields})  # type: ignore[arg-type]


def test_run_failures_are_classified() -> None:
    limits = Limits(cpu_s=1.0)
    assert run_failure(_result(), limits) is None
    assert run_failure(_result(cpu_s=1.2, term_signal=24, exit_code=None), limits)[0] == TIME_LIMIT  # type: ignore[index]
    assert run_failure(_result(killed="wall", term_signal=9), limits)[0] == TIME_LIMIT  # type: ignore[index]
    assert run_failure(_result(killed="stdout_limit"), limits)[0] == OUTPUT_LIMIT  # type: ignore[index]
    assert run_failure(_result(memory_exceeded=True, term_signal=9), limits)[0] == MEMORY_LIMIT  # type: ignore[index]
    assert run_failure(_result(exit_code=3), limits) == (RUNTIME_ERROR, "exit code 3")
    assert run_failure(_result(term_signal=11, exit_code=None), limits)[0] == RUNTIME_ERROR  # type: ignore[index]


@pytest.mark.parametrize(
    "stderr",
    [
        b"MemoryError\n",
        b"Traceback (most recent call last):\n  ...\nMemoryError: out of memory\n",
        b"terminate called after throwing an instance of 'std::bad_alloc'\n",
        b"virtual memory exhausted: Cannot allocate memory\n",
    ],
)
@pytest.mark.parametrize(("exit_code", "term_signal"), [(1, None), (None, 6), (None, 9)])
def test_a_limit_is_never_read_from_what_the_program_wrote(
    stderr: bytes, exit_code: int | None, term_signal: int | None
) -> None:
    # Any program can print these or raise MemoryError itself: a run that says it ran out of
    # memory, where neither the kernel (an OOM kill) nor the harness says so, is a runtime error.
    result = _result(exit_code=exit_code, term_signal=term_signal, stderr=stderr)
    assert run_failure(result, Limits(cpu_s=1.0))[0] == RUNTIME_ERROR  # type: ignore[index]


def test_sigxcpu_is_a_time_limit_only_with_the_cpu_time_spent() -> None:
    # RLIMIT_CPU sends SIGXCPU once the CPU time is spent; a program can send it to itself (or
    # to the harness) at once.
    limits = Limits(cpu_s=1.0)
    sent = _result(term_signal=signal.SIGXCPU, exit_code=None, cpu_s=0.05)
    assert run_failure(sent, limits)[0] == RUNTIME_ERROR  # type: ignore[index]
    spent = _result(term_signal=signal.SIGXCPU, exit_code=None, cpu_s=1.0)
    assert run_failure(spent, limits)[0] == TIME_LIMIT  # type: ignore[index]
    # The kernel's signal at its clock's limit, as the process's charged time read it: a busy
    # loop's SIGXCPU read 0.976 s (it was a runtime error, a wrong answer, once).
    read_low = _result(term_signal=signal.SIGXCPU, exit_code=None, cpu_s=0.976)
    assert run_failure(read_low, limits)[0] == TIME_LIMIT  # type: ignore[index]
    half = _result(term_signal=signal.SIGXCPU, exit_code=None, cpu_s=0.5)
    assert run_failure(half, limits)[0] == RUNTIME_ERROR  # type: ignore[index]


def test_ints_past_a_floats_range_are_compared_exactly_never_converted() -> None:
    # float(10**400) raises OverflowError: a wrong answer, not a verifier failure.
    assert not json_equal(10**400, 0.75, 1e-6)
    assert not approx_equal(10**400, 0.75, 1e-6)
    assert not json_equal(10**400, float("inf"), 1e-6)
    assert not json_equal(float("nan"), 10**400, 1e-6)
    assert json_equal(10**400 + 1, 10**400, 1e-6)  # relative to the expected value
    assert not json_equal(10**400 * 2, 10**400, 1e-6)
    assert json_equal([10**400], [10**400], 1e-6)


def test_an_infinity_is_close_only_to_the_same_infinity() -> None:
    # |x - inf| <= tolerance * inf holds for every finite x: no number may pass for inf.
    inf, nan = float("inf"), float("nan")
    assert not json_equal(0, inf, 1e-6) and not json_equal(12345, -inf, 1e-6)
    assert not approx_equal(0, inf, 1e-6) and not approx_equal([7], [inf], 1e-6)
    assert not json_equal(inf, 0, 1e-6) and not json_equal(-inf, inf, 1e-6)
    assert not json_equal(nan, 1.0, 1.0) and not approx_equal(1.0, nan, 1.0)
    assert json_equal(inf, inf, 1e-6) and approx_equal(-inf, -inf, 1e-6)


def test_stdout_numbers_past_a_floats_range_are_compared_in_decimal() -> None:
    big = "1" + "0" * 400
    assert compare_stdout(b"0\n", big + "\n", 1e-6) == "line 1 differs"
    assert compare_stdout(b"42\n", str(math.factorial(300)) + "\n", 1e-6) == "line 1 differs"
    assert compare_stdout(b"Case #1: 7\n", "Case #1: 3" + "7" * 330, 1e-6) == "line 1 differs"
    assert compare_stdout(b"-1\n", "-1e400\n", 1e-6) == "line 1 differs"
    assert compare_stdout(b"0 yes\n", big + " YES\n", 1e-6, ignore_case=True) is not None
    assert compare_stdout(("2" + "0" * 400).encode(), big, 1e-6) == "line 1 differs"
    assert compare_stdout(b"1e99999999999999999999\n", "1e400\n", 1e-6) == "line 1 differs"
    # Within the tolerance they still pass, relative to the expected value or absolutely.
    assert compare_stdout((big + "1").encode(), big + "0", 1e-6) is None
    assert compare_stdout(b"1.0000001e400\n", "1e400\n", 1e-6) is None
    assert compare_stdout(b"1e400\n", big + "\n", 1e-6) is None
    assert compare_stdout(b"0\n", "1e-400\n", 1e-6) is None


def test_a_long_run_of_digits_is_read_in_linear_time() -> None:
    # The number pattern split a run of digits in every way before failing on the letter after
    # it: quadratic, 15 s for 30,000 digits, hours at the 1 MB output cap, outside any limit.
    token = "1" * 200_000 + "x"
    assert compare_stdout(token.encode(), "1" * 200_000 + "2", 1e-6) == "line 1 differs"
    assert compare_stdout(token.encode() + b" 1", "3 1", 1e-6) == "line 1 differs"
    assert _NUMBER.fullmatch(token) is None and _NUMBER.fullmatch(token[:-1] + ".5e-3")


def test_the_standard_containers_compare_as_python_has_it_under_a_tolerance() -> None:
    ordered = OrderedDict(a=1.0, b=2.0)
    assert not approx_equal(OrderedDict(b=2.0, a=1.0), ordered, 1e-6)
    assert approx_equal(OrderedDict(a=1.0000001, b=2.0), ordered, 1e-6)
    assert approx_equal(deque([0.1 + 0.2]), deque([0.3]), 1e-9)
    assert not approx_equal(deque([1]), [1], 1e-9)
