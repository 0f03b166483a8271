"""The built-in r1_math@1.0.0: math accuracy on the answer + 0.1 x the R1 format."""

from __future__ import annotations

import pytest

from service.catalog.builtin import resolve_builtin
from service.verifiers.base import Verdict
from service.verifiers.math import verify as math_verify
from service.verifiers.registry import get_kind


def r1_math(completion: str, ground_truth: str) -> Verdict:
    spec = resolve_builtin("r1_math@1.0.0")
    return get_kind(spec.kind).verify(completion, ground_truth, dict(spec.config), None)


def test_builtin_resolves_to_the_r1_zero_composite() -> None:
    spec = resolve_builtin("r1_math")
    assert spec.kind == "composite"
    names = [(c["name"], c["kind"], c["weight"]) for c in spec.config["components"]]
    assert names == [("accuracy", "math", 1.0), ("format", "format", 0.1)]


def test_version_hash_pins_the_component_libraries() -> None:
    assert "math/sympy" in resolve_builtin("r1_math").library_versions


@pytest.mark.parametrize("name", ["ifeval@1.0.0", "format@1.0.0"])
def test_other_builtins_resolve(name: str) -> None:
    assert resolve_builtin(name).version == "1.0.0"


def test_right_and_well_formed_earns_the_maximum() -> None:
    verdict = r1_math("<think>7 * 7 = 49</think>\n<answer>49</answer>", "49")
    assert (verdict.status, verdict.reward) == ("correct", pytest.approx(1.1))
    assert verdict.components == {"accuracy": 1.0, "format": 1.0, "total": pytest.approx(1.1)}


def test_right_but_malformed_earns_accuracy_only() -> None:
    verdict = r1_math("The answer is \\boxed{49}.", "49")
    assert (verdict.status, verdict.reward) == ("partial", 1.0)


def test_wrong_but_well_formed_earns_the_format_bonus() -> None:
    verdict = r1_math("<think>guess</think><answer>48</answer>", "49")
    assert (verdict.status, verdict.reward) == ("partial", pytest.approx(0.1))


def test_boxed_numbers_in_the_reasoning_do_not_decide_the_answer() -> None:
    completion = "<think>maybe \\boxed{3}? no, \\boxed{4}</think>\n<answer>5</answer>"
    assert r1_math(completion, "5").components["accuracy"] == 1.0
    assert r1_math(completion, "4").components["accuracy"] == 0.0


def test_math_alone_takes_the_answer_after_the_reasoning() -> None:
    # Since math 1.7.0 the math verifier, too, takes what follows </think> when it states an
    # answer; a box tried inside the reasoning is not the answer (r1_math grades only that
    # text, as before).
    completion = "<think>try \\boxed{3}</think>\n5"
    assert math_verify(completion, "5", {}).status == "correct"
    assert math_verify(completion, "3", {}).status == "incorrect"
    assert r1_math(completion, "5").components["accuracy"] == 1.0
    # Closing words that only end with a number do not replace the reasoning's answer.
    assert math_verify("<think>so \\boxed{7}</think>\nSee step 2.", "7", {}).status == "correct"


def test_math_alone_uses_the_answer_block_despite_reasoning_boxes() -> None:
    completion = "<think>try \\boxed{3}</think>\n<answer>5</answer>"
    assert math_verify(completion, "5", {}).status == "correct"


def test_a_completion_cut_off_while_thinking_earns_nothing() -> None:
    verdict = r1_math("<think>the answer is \\boxed{49} but let me check", "49")
    assert (verdict.status, verdict.reward) == ("incorrect", 0.0)
