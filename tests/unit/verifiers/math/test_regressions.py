"""Regression files: look-alikes that must stay wrong, and fixed false negatives that must stay
right (false_positive_pairs.json, fixed_false_negatives.json next to this file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.verifiers.math import validate_config, verify

HERE = Path(__file__).resolve().parent
REQUIRED_KEYS = {"completion", "ground_truth", "config", "note"}


def load(name: str) -> list[dict[str, Any]]:
    with (HERE / name).open(encoding="utf-8") as fh:
        cases: list[dict[str, Any]] = json.load(fh)
    return cases


FALSE_POSITIVES = load("false_positive_pairs.json")
FIXED_FALSE_NEGATIVES = load("fixed_false_negatives.json")


def case_id(case: dict[str, Any]) -> str:
    return str(case["note"])[:60]


@pytest.mark.parametrize(
    "cases", [FALSE_POSITIVES, FIXED_FALSE_NEGATIVES], ids=["false-positives", "false-negatives"]
)
def test_regression_file_shape(cases: list[dict[str, Any]]) -> None:
    assert len(cases) >= 20
    for case in cases:
        assert REQUIRED_KEYS <= set(case) <= REQUIRED_KEYS | {"method"}
        validate_config(case["config"])
    notes = [c["note"] for c in cases]
    pairs = [(c["completion"], c["ground_truth"], json.dumps(c["config"])) for c in cases]
    assert len(set(pairs)) == len(pairs) and all(notes)


@pytest.mark.parametrize("case", FALSE_POSITIVES, ids=case_id)
def test_look_alike_is_judged_incorrect(case: dict[str, Any]) -> None:
    verdict = verify(case["completion"], case["ground_truth"], case["config"])
    assert verdict.status == "incorrect", verdict.details


@pytest.mark.parametrize("case", FIXED_FALSE_NEGATIVES, ids=case_id)
def test_fixed_false_negative_is_judged_correct(case: dict[str, Any]) -> None:
    verdict = verify(case["completion"], case["ground_truth"], case["config"])
    assert verdict.status == "correct", verdict.details
    if "method" in case:
        assert verdict.details["method"] == case["method"]


def test_the_conventions_are_what_fixes_their_cases() -> None:
    """A case that needs a configured convention is wrong under the default config."""
    configured = [c for c in FIXED_FALSE_NEGATIVES if c["config"]]
    assert configured
    for case in configured:
        assert verify(case["completion"], case["ground_truth"], {}).status == "incorrect"
