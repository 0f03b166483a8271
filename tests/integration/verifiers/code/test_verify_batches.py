"""All tests of one submission in one sandboxed run, through each real backend: each test
with its own limits and output, a crash or timeout recorded for its test and the tests after
it continued in a fresh run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.sandbox.base import RunResult, RunSpec
from service.verifiers.code import verify
from service.verifiers.code.execute import execute, session_files
from service.verifiers.code.ground_truth import parse_ground_truth
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")


def _asserts(count: int) -> dict[str, Any]:
    tests = [f"assert f({i}) == {i * i}" for i in range(count)]
    return {"language": "python", "mode": "assert", "tests": tests, "time_limit_s": 1}


class CountingSession:
    """The real session, counting its runs."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.runs = inner, 0

    def run(self, spec: RunSpec) -> RunResult:
        self.runs += 1
        result: RunResult = self.inner.run(spec)
        return result


@pytest.fixture
def run_counted(each_sandbox: Any) -> Iterator[Any]:
    def run(program: str, ground_truth: dict[str, Any], stop: bool = False) -> Any:
        problem = parse_ground_truth(ground_truth)
        files = session_files(problem, program, each_sandbox.name)
        with each_sandbox.session(files, language="python") as session:
            counting = CountingSession(session)
            execution = execute(counting, problem, stop_at_failure=stop)
        return counting.runs, [t.status for t in execution.tests], execution

    yield run


def test_seven_asserts_take_one_run(run_counted: Any) -> None:
    runs, statuses, _ = run_counted("def f(x):\n    return x * x\n", _asserts(7))
    assert (runs, statuses) == (1, ["accepted"] * 7)


def test_function_and_stdio_tests_take_one_run(run_counted: Any) -> None:
    function = {
        "language": "python",
        "mode": "function",
        "fn_name": "f",
        "tests": [{"args": [i], "expected": i * i} for i in range(5)],
    }
    runs, statuses, _ = run_counted("def f(x):\n    return x * x\n", function)
    assert (runs, statuses) == (1, ["accepted"] * 5)
    stdio = {
        "language": "python",
        "tests": [{"stdin": f"{i}\n", "stdout": f"{i * i}\n"} for i in range(5)],
    }
    runs, statuses, _ = run_counted("x = int(input())\nprint(x * x)\n", stdio)
    assert (runs, statuses) == (1, ["accepted"] * 5)


def test_a_suite_of_a_thousand_function_tests_is_judged_in_one_run(run_counted: Any) -> None:
    # HumanEval+'s size: every test judged, and one wrong value among them found.
    tests = [
        {"args": [list(range(i % 37, -1, -1))], "expected": list(range(i % 37 + 1))}
        for i in range(1200)
    ]
    function = {"language": "python", "mode": "function", "fn_name": "f", "tests": tests}
    runs, statuses, _ = run_counted("def f(xs):\n    return sorted(xs)\n", function)
    assert (runs, statuses) == (1, ["accepted"] * 1200)
    # Wrong only on lists of 30 or more (tests 29..36, 66..73, ...): found there, and only there.
    wrong = "def f(xs):\n    return sorted(xs)[:29] if len(xs) < 30 else sorted(xs)[1:]\n"
    runs, statuses, _ = run_counted(wrong, function)
    failed = [i for i, status in enumerate(statuses) if status != "accepted"]
    assert runs == 1 and failed == [i for i in range(1200) if i % 37 >= 29]
    assert {statuses[i] for i in failed} == {"wrong answer"}


CRASH_AT_2 = "import os\ndef f(x):\n    if x == 2:\n        os._exit(3)\n    return x * x\n"
LOOP_AT_2 = "def f(x):\n    while x == 2:\n        pass\n    return x * x\n"
SEGV_AT_2 = (
    "import ctypes\ndef f(x):\n    if x == 2:\n        ctypes.string_at(0)\n    return x * x\n"
)


@pytest.mark.parametrize(
    ("program", "status"),
    [(CRASH_AT_2, "runtime error"), (LOOP_AT_2, "time limit"), (SEGV_AT_2, "runtime error")],
    ids=["exit", "loop", "segfault"],
)
def test_a_failing_test_is_recorded_and_the_rest_go_on_in_a_fresh_run(
    run_counted: Any, program: str, status: str
) -> None:
    runs, statuses, _ = run_counted(program, _asserts(5))
    assert statuses == ["accepted", "accepted", status, "accepted", "accepted"]
    assert runs == 2


def test_all_or_nothing_stops_at_the_first_failure(run_counted: Any) -> None:
    runs, statuses, _ = run_counted(LOOP_AT_2, _asserts(5), stop=True)
    assert (runs, statuses) == (1, ["accepted", "accepted", "time limit"])


def test_each_test_has_its_own_clock_and_output() -> None:
    program = (
        "import time\ndef f(x):\n    print('called with', x)\n    if x == 1:\n"
        "        end = time.process_time() + 0.4\n        while time.process_time() < end:\n"
        "            pass\n    return x * x if x != 2 else -1\n"
    )
    verdict = verify(fenced(program), _asserts(3), {"reward": "fraction"})
    tests = verdict.details["tests"]
    assert [t["status"] for t in tests] == ["accepted", "accepted", "wrong answer"]
    # The CPU the second test burnt is its own, not the first's or the third's.
    assert tests[1]["cpu_ms"] >= 300 and tests[0]["cpu_ms"] < 300 and tests[2]["cpu_ms"] < 300
    assert tests[2]["stdout_head"] == "called with 2\n"


def test_a_timeout_in_one_stdio_test_leaves_the_others_alone() -> None:
    stdio = {
        "language": "python",
        "time_limit_s": 0.5,
        "tests": [{"stdin": f"{i}\n", "stdout": f"{i * i}\n"} for i in range(4)],
    }
    program = "x = int(input())\nwhile x == 1:\n    pass\nprint(x * x)\n"
    verdict = verify(fenced(program), stdio, {"reward": "fraction"})
    statuses = [t["status"] for t in verdict.details["tests"]]
    assert statuses == ["accepted", "time limit", "accepted", "accepted"]


def test_a_memory_error_of_one_test_is_that_tests_runtime_error() -> None:
    program = "def f(x):\n    if x == 1:\n        b = bytearray(400 * 2**20)\n    return x * x\n"
    verdict = verify(fenced(program), {**_asserts(3), "memory_mb": 128}, {"reward": "fraction"})
    statuses = [t["status"] for t in verdict.details["tests"]]
    assert statuses == ["accepted", "runtime error", "accepted"]


def test_a_result_too_big_for_the_harness_is_that_tests_memory_limit() -> None:
    # A million strings (plain data's most values, with their list): a few megabytes in the
    # solution, which holds one string, and more than the test's 64 MB once the driver holds
    # each as an object of its own. The driver's own MemoryError is a fact, reported in a field
    # of its record (never a line of text).
    program = "def f(x):\n    if x == 1:\n        return ['abcdefghij'] * 999_999\n"
    program += "    return x * x\n"
    verdict = verify(fenced(program), {**_asserts(3), "memory_mb": 64}, {"reward": "fraction"})
    statuses = [t["status"] for t in verdict.details["tests"]]
    assert statuses == ["accepted", "memory limit", "accepted"], verdict.details


def test_a_solution_that_does_not_load_fails_every_test_at_once(run_counted: Any) -> None:
    runs, statuses, execution = run_counted("def f(x):\n    return x *\n", _asserts(4))
    assert (runs, statuses) == (1, ["runtime error"] * 4)
    assert "SyntaxError" in execution.tests[3].stderr


def test_what_the_test_cannot_send_is_an_error_not_a_zero() -> None:
    ground_truth = {"language": "python", "mode": "assert", "tests": ["assert f(lambda: 1) == 1"]}
    verdict = verify(fenced("def f(g):\n    return 1\n"), ground_truth, {})
    assert (verdict.status, verdict.reward) == ("error", None)
    assert "cannot be run" in verdict.details["reason"]


def test_output_past_its_cap_is_an_output_limit_for_that_test() -> None:
    program = "import sys\ndef f(x):\n    if x == 1:\n        sys.stdout.write('3' * (3 << 20))\n"
    program += "    return x * x\n"
    verdict = verify(fenced(program), _asserts(3), {"reward": "fraction"})
    statuses = [t["status"] for t in verdict.details["tests"]]
    assert statuses == ["accepted", "output limit", "accepted"]


def test_an_exception_of_the_solution_is_a_runtime_error_saying_where() -> None:
    program = "def f(x):\n    raise ValueError('nope')\n"
    ground_truth = {**_asserts(1), "tests": ["assert f(1) == 1", "for i in [1]:\n    f(i)"]}
    verdict = verify(fenced(program), ground_truth, {"reward": "fraction"})
    for test in verdict.details["tests"]:
        assert test["status"] == "runtime error"
        assert "ValueError: nope" in test["stderr"] and "solution.py line 2" in test["stderr"]
        assert "rlvr_harness" not in test["stderr"]
