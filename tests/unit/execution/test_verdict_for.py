"""A verifier that returns NaN or an infinity has failed: its item is an `error` with reward None
(never a number no trainer can use, and never a chunk the decision log refuses whole)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from service.execution.bounded import Call, verdict_for
from service.verifiers.base import Verdict
from service.verifiers.registry import VerifierKind, register_kind


def _kind(name: str, reward: float, components: dict[str, float]) -> None:
    def verify(completion: str, ground_truth: Any, config: Any, prompt: Any) -> Verdict:
        return Verdict(reward, "correct", components)

    register_kind(
        VerifierKind(
            kind=name,
            verify=verify,
            code_version="0",
            library_versions={},
            validate_config=lambda config: dict(config),
        )
    )


@pytest.mark.parametrize(
    ("reward", "components"),
    [
        (math.nan, {}),
        (math.inf, {}),
        (-math.inf, {}),
        (1.0, {"format": math.nan}),
        (1.0, {"accuracy": math.inf}),
    ],
)
def test_a_non_finite_reward_or_component_is_an_error_with_no_reward(
    reward: float, components: dict[str, float]
) -> None:
    name = f"test-non-finite-{reward}-{sorted(components)}"
    _kind(name, reward, components)
    verdict = verdict_for(Call(name, "answer", "truth", {}, None))
    assert verdict.status == "error"
    assert verdict.reward is None
    assert "finite" in verdict.details["traceback"]


def test_a_finite_reward_passes_as_it_is() -> None:
    _kind("test-finite", 0.25, {"accuracy": 0.25})
    verdict = verdict_for(Call("test-finite", "answer", "truth", {}, None))
    assert (verdict.status, verdict.reward, verdict.components) == (
        "correct",
        0.25,
        {"accuracy": 0.25},
    )
