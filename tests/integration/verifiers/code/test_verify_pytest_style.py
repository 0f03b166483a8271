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
    test = "from solution import pair_sum\n\ndef check(f):\n    assert f([1, 2], 3)\n"
    verdict = verify(fenced(RIGHT), ground_truth(test), {})
    assert verdict.status == "error", verdict.details
    assert "never reached the solution" in verdict.details["reason"]


@pytest.mark.parametrize(
    "test, name",
    [
        # A fixture of no one's (a plugin's), or pytest's own: the test cannot be run here, and
        # leaving it out would let the tests beside it decide alone.
        ("def test_order(mocker):\n    assert pair_sum([1, 2], 3)\n", "mocker"),
        ("def test_many(subtests):\n    assert pair_sum([1, 2], 3)\n", "subtests"),
        ("def test_with(f):\n    assert f([1, 2], 3)\n", "f"),
    ],
    ids=["plugin", "builtin", "never-called-helper"],
)
def test_a_test_asking_for_an_unknown_fixture_is_the_ground_truths_limit(
    test: str, name: str
) -> None:
    test = (
        "from solution import pair_sum\n\n"
        "def test_plain():\n    assert pair_sum([], 0) is False\n\n" + test
    )
    for answer in (RIGHT, "def pair_sum(numbers, target):\n    return False\n"):
        verdict = verify(fenced(answer), ground_truth(test), {})
        if verdict.status == "incorrect":  # the plain test fails first for a wrong answer
            continue
        assert verdict.status == "error", verdict.details
        assert verdict.reward is None
        assert f"fixture {name!r}" in verdict.details["reason"]


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


SORT_RIGHT = "def sort_desc(xs):\n    return sorted(xs, reverse=True)\n"
SORT_WRONG = "def sort_desc(xs):\n    return sorted(xs)\n"
SORT_HEAD = "import pytest\nfrom solution import sort_desc\n\n"
# Each module holds a test pytest collects and runs that a wrong sort fails; before, the
# stand-in left each of them out, and the wrong answer passed.
SORT_MODULES = {
    "class-fixture": "class TestOrder:\n    @pytest.fixture\n    def data(self):\n"
    "        return [3, 1, 2]\n\n    def test_order(self, data):\n"
    "        assert sort_desc(data) == [3, 2, 1]\n",
    "fixture-name": "@pytest.fixture(name='data')\ndef data_fixture():\n    return [3, 1, 2]\n\n"
    "def test_order(data):\n    assert sort_desc(data) == [3, 2, 1]\n",
    "fixture-of-fixture": "@pytest.fixture\ndef base():\n    return [3, 1]\n\n"
    "@pytest.fixture\ndef data(base):\n    yield base + [2]\n\n"
    "def test_order(data):\n    assert sort_desc(data) == [3, 2, 1]\n",
    "inherited": "class Contract:\n    def test_order(self):\n"
    "        assert sort_desc([3, 1, 2]) == [3, 2, 1]\n\nclass TestSort(Contract):\n"
    "    def test_empty(self):\n        assert sort_desc([]) == []\n",
    "staticmethod": "class TestSort:\n    @staticmethod\n    def test_order():\n"
    "        assert sort_desc([3, 1, 2]) == [3, 2, 1]\n",
    "nested-class": "class TestSort:\n    class TestOrder:\n        def test_order(self):\n"
    "            assert sort_desc([3, 1, 2]) == [3, 2, 1]\n",
    "async": "async def test_order():\n    assert sort_desc([3, 1, 2]) == [3, 2, 1]\n",
    "xfail-condition-keyword": "import sys\n\n"
    "@pytest.mark.xfail(condition=sys.platform == 'win32', reason='windows only')\n"
    "def test_order():\n    assert sort_desc([3, 1, 2]) == [3, 2, 1]\n",
    "xfail-raises-other": "@pytest.mark.xfail(raises=TypeError)\ndef test_order():\n"
    "    assert sort_desc([3, 1, 2]) == [3, 2, 1]\n    sort_desc([1, 'a'])\n",
    "setup-method-without-argument": "class TestSort:\n    def setup_method(self):\n"
    "        self.data = [3, 1, 2]\n\n    def test_order(self):\n"
    "        assert sort_desc(self.data) == [3, 2, 1]\n",
    "setup-class-and-function": "class TestSort:\n    @classmethod\n    def setup_class(cls):\n"
    "        cls.data = [3, 1, 2]\n\n    def test_order(self):\n"
    "        assert sort_desc(self.data) == [3, 2, 1]\n\nDATA = []\n\n"
    "def setup_function(function):\n    DATA[:] = [2, 1]\n\ndef test_two():\n"
    "    assert sort_desc(DATA) == [2, 1]\n",
    "setup-module": "DATA = []\n\ndef setup_module(module):\n    DATA.extend([3, 1, 2])\n\n"
    "def test_order():\n    assert sort_desc(DATA) == [3, 2, 1]\n",
    "autouse-and-usefixtures": "DATA = []\n\n@pytest.fixture(autouse=True)\ndef fill():\n"
    "    DATA[:] = [3, 1, 2]\n    yield\n    DATA.clear()\n\n@pytest.fixture\ndef more():\n"
    "    DATA.append(0)\n\n@pytest.mark.usefixtures('more')\ndef test_order():\n"
    "    assert sort_desc(DATA) == [3, 2, 1, 0]\n",
    "argnames-list": "@pytest.mark.parametrize(['xs'], [([3, 1, 2],)])\ndef test_order(xs):\n"
    "    assert sort_desc(xs) == [3, 2, 1]\n",
    "param-marks": "@pytest.mark.parametrize('xs, want', [\n"
    "    pytest.param([1, 2], [1, 2], marks=pytest.mark.skip),\n"
    "    pytest.param([3, 1, 2], [3, 2, 1], marks=pytest.mark.xfail(raises=TypeError)),\n])\n"
    "def test_order(xs, want):\n    assert sort_desc(xs) == want\n",
}


@pytest.mark.parametrize("name", sorted(SORT_MODULES))
def test_what_pytest_runs_is_run(name: str) -> None:
    test = SORT_HEAD + SORT_MODULES[name]
    assert verify(fenced(SORT_RIGHT), ground_truth(test), {}).status == "correct"
    verdict = verify(fenced(SORT_WRONG), ground_truth(test), {})
    assert verdict.status == "incorrect", verdict.details


def test_approx_takes_the_standard_librarys_numbers() -> None:
    test = (
        "import pytest\nfrom fractions import Fraction\nfrom solution import half\n\n"
        "def test_half():\n    assert half(1) == pytest.approx(0.5)\n"
        "    assert half(1j) == pytest.approx(0.5j)\n"
        "    assert half(Fraction(1, 3)) == pytest.approx(1 / 6)\n"
    )
    right = "def half(x):\n    return x / 2\n"
    assert verify(fenced(right), ground_truth(test), {}).status == "correct"
    wrong = "def half(x):\n    return x / 2 + 1e-3\n"
    assert verify(fenced(wrong), ground_truth(test), {}).status == "incorrect"
