"""Ground truths built from public suites' records (``service.verifiers.code.suites``)."""

from __future__ import annotations

from service.verifiers.code import suites
from service.verifiers.code.ground_truth import parse_ground_truth

PROMPT = '''import math


def poly(xs: list, x: float):
    """Evaluates polynomial with coefficients xs at point x."""
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def find_zero(xs: list):
    """ find_zero finds x such that poly(x) = 0. """
'''
TEST = "def check(candidate):\n    assert abs(poly([1, 2], candidate([1, 2]))) < 1e-4\n"


def test_the_prompts_helpers_come_before_the_check_and_the_entry_point_does_not() -> None:
    truth = suites.humaneval({"prompt": PROMPT, "test": TEST, "entry_point": "find_zero"})
    (test,) = truth["tests"]
    assert test.startswith("import math\n")
    assert "def poly(xs: list, x: float):" in test
    assert "def find_zero" not in test
    assert test.index("def poly") < test.index("def check") < test.index("check(find_zero)")
    compile(test, "test", "exec")
    # The solution gets them too, above its answer.
    assert truth["prelude"].startswith("import math\n") and "def find_zero" not in truth["prelude"]
    parse_ground_truth(truth)  # a valid ground truth as it is


def test_a_prompt_of_the_entry_point_alone_adds_nothing() -> None:
    prompt = 'def add(a, b):\n    """Add two numbers."""\n'
    truth = suites.humaneval(
        {"prompt": prompt, "test": "def check(c): pass\n", "entry_point": "add"}
    )
    assert truth["tests"] == ["def check(c): pass\n\ncheck(add)\n"]
    assert "prelude" not in truth


def test_a_prompt_that_does_not_parse_adds_nothing() -> None:
    assert suites.prompt_helpers("def broken(:\n", "broken") == ""
