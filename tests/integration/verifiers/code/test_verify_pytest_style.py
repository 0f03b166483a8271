"""Assert tests written as a pytest module (KodCode's form: ``from solution import f``, then
``def test_...():`` functions pytest collects), through each real sandbox backend.

Before code 1.7.1 such a test only defined its functions, so every answer passed. The harness
now runs what pytest would collect (``test*`` functions and ``Test*`` classes the test defines,
each ``parametrize`` case, the module's own fixtures), and ``import pytest`` in test code gets a
stand-in with ``raises``, ``approx``, ``mark``, ``param``, ``fixture``, ``skip`` and ``fail``.
pytest's own fixtures (``capsys``, ``tmp_path``...) are the ground truth's limit: an error with
no reward, never a wrong answer or a pass."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

MODULE = """
import pytest
from solution import pair_sum

def test_found():
    assert pair_sum([1, 2, 3, 9], 5) is True

@pytest.mark.parametrize(
    "numbers, target, want",
    [([1, 2], 3, True), ([1, 2], 4, False), pytest.param([], 0, False, id="empty")],
)
def test_table(numbers, target, want):
    assert pair_sum(numbers, target) is want

def test_raises():
    with pytest.raises(TypeError, match="numbers"):
        pair_sum(None, 1)

def test_mean_is_close():
    assert pair_sum([0.1, 0.2], 0.3) == pytest.approx(True)

@pytest.fixture
def pair():
    yield [4, 5]

def test_fixture(pair):
    assert pair_sum(pair, 9)

class TestSmall:
    def setup_method(self, method):
        self.one = [1]

    def test_one_number(self):
        assert not pair_sum(self.one, 2)

@pytest.mark.skip(reason="not graded")
def test_skipped():
    assert False

@pytest.mark.xfail
def test_expected_to_fail():
    assert pair_sum([1], 1) == "no"
"""

RIGHT = """
def pair_sum(numbers, target):
    if numbers is None:
        raise TypeError("numbers must be a list")
    seen = set()
    for x in numbers:
        if abs(target - x) < 1e-9 or any(abs(target - x - s) < 1e-9 for s in seen):
            if x != target:
                return True
        seen.add(x)
    return False
"""


def ground_truth(test: str = MODULE, **extra: Any) -> dict[str, Any]:
    return {"language": "python", "mode": "assert", "tests": [test], **extra}


def test_a_right_answer_passes_what_pytest_would_collect() -> None:
    verdict = verify(fenced(RIGHT), ground_truth(), {})
    assert verdict.status == "correct", verdict.details
    assert verdict.reward == 1.0


@pytest.mark.parametrize(
    "wrong",
    [
        "def pair_sum(numbers, target):\n    return True\n",  # passed before 1.7.1
        RIGHT.replace("raise TypeError", "raise ValueError"),
        RIGHT.replace('"numbers must be a list"', '"bad input"'),  # raises' match
        RIGHT.replace("    return False\n", "    return len(numbers) == 2\n"),  # one case
        RIGHT + "\n_real = pair_sum\n\ndef pair_sum(n, t):\n    return n == [1] or _real(n, t)\n",
    ],
    ids=["constant", "other-exception", "message", "one-parametrized-case", "class-case"],
)
def test_a_wrong_answer_fails(wrong: str) -> None:
    verdict = verify(fenced(wrong), ground_truth(), {})
    assert verdict.status == "incorrect", verdict.details
    assert verdict.reward == 0.0
    # An exception pytest.raises does not expect goes on, as in pytest: a runtime error.
    assert verdict.details["tests"][0]["status"] in ("wrong answer", "runtime error")


def test_an_always_equal_answer_is_wrong_against_approx() -> None:
    hack = """
class Anything:
    def __eq__(self, other):
        return True

def pair_sum(numbers, target):
    if numbers is None:
        raise TypeError("numbers")
    return Anything()
"""
    verdict = verify(fenced(hack), ground_truth(), {})
    assert verdict.status == "incorrect", verdict.details


def test_a_solutions_own_test_functions_are_not_run() -> None:
    # Only what the test defines is collected: a solution's test_ and Test names are not.
    test = "from solution import pair_sum, test_always\n\ndef test_real():\n"
    test += "    assert pair_sum([1, 2], 3)\n"
    fails = "def test_always():\n    raise AssertionError('never run')\n\n"
    assert verify(fenced(RIGHT + fails), ground_truth(test), {}).status == "correct"


def test_a_loop_forever_in_a_test_function_is_a_time_limit() -> None:
    slow = "def pair_sum(numbers, target):\n    while True:\n        pass\n"
    verdict = verify(fenced(slow), ground_truth(time_limit_s=1), {})
    assert verdict.status == "timeout", verdict.details


def test_pytests_own_fixtures_are_the_ground_truths_limit() -> None:
    test = "from solution import pair_sum\n\ndef test_prints(capsys):\n    pair_sum([1], 1)\n"
    verdict = verify(fenced(RIGHT), ground_truth(test), {})
    assert verdict.status == "error", verdict.details
    assert verdict.reward is None
    assert "capsys" in verdict.details["reason"]


def test_a_test_named_helper_the_test_calls_itself_is_not_collected() -> None:
    # ``test_with(f)`` takes an argument pytest could not give: the test's own helper.
    test = "def test_with(f):\n    assert f([1, 2], 3) is True\n\ntest_with(pair_sum)\n"
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    wrong = "def pair_sum(numbers, target):\n    return False\n"
    assert verify(fenced(wrong), ground_truth(test), {}).status == "incorrect"


def test_a_module_whose_tests_never_run_reaches_nothing() -> None:
    # Imported and never called: the solution was not reached, whatever it is.
    test = "from solution import pair_sum\n\ndef test_with(f):\n    assert f([1, 2], 3)\n"
    verdict = verify(fenced(RIGHT), ground_truth(test), {})
    assert verdict.status == "error", verdict.details
    assert "never reached the solution" in verdict.details["reason"]


def test_marks_hold_as_in_pytest() -> None:
    # A string condition is evaluated (with sys, os, platform); a strict xfail that passes
    # fails; a failing xfail is forgiven.
    test = """
import pytest
from solution import pair_sum

@pytest.mark.skipif("sys.platform == 'win32'", reason="not there")
def test_runs_here():
    assert pair_sum([1, 2], 3)

@pytest.mark.skipif("sys.platform != 'win32'", reason="not here")
def test_skipped_here():
    assert pair_sum([1, 2], 99)

@pytest.mark.xfail(strict=True)
def test_fails_as_expected():
    assert pair_sum([1, 2], 99)
"""
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    always = "def pair_sum(numbers, target):\n    return True\n"
    assert verify(fenced(always), ground_truth(test), {}).status == "incorrect"
    never = "def pair_sum(numbers, target):\n    return False\n"
    assert verify(fenced(never), ground_truth(test), {}).status == "incorrect"
