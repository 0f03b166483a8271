"""Times of day: read as minutes since midnight, never as ratios."""

from __future__ import annotations

import pytest

from service.verifiers.math import verify
from service.verifiers.math.clock import clocks_same, read_clock


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        ("2:30\\text{PM}", {870}),
        ("2:30 pm", {870}),
        ("10:30\\text{a.m.}", {630}),
        ("\\text{10:30 AM}", {630}),
        ("12:00\\text{AM}", {0}),
        ("12:30\\text{PM}", {750}),
        ("15:00", {900}),
        ("0:00", {0}),
        ("2:30", {150, 870}),  # no AM/PM: either half of the day
        ("12:30", {30, 750}),
    ],
)
def test_read_clock(text: str, readings: set[int]) -> None:
    clock = read_clock(text)
    assert clock is not None and clock.readings == readings


@pytest.mark.parametrize("text", ["1:2", "1:3:2", "2:60", "13:00\\text{PM}", "24:00", "x:y", "3"])
def test_not_a_clock_time(text: str) -> None:
    assert read_clock(text) is None


@pytest.mark.parametrize(
    ("g", "a", "same"),
    [
        ("1:15\\text{PM}", "2:30\\text{PM}", False),  # equal ratios, different times
        ("2:30\\text{PM}", "2:30\\text{AM}", False),
        ("2:30\\text{PM}", "2:30", True),
        ("15:00", "3:00\\text{PM}", True),
        ("1:15", "2:30", False),  # both clock-shaped: times, not ratios
        ("2:30\\text{PM}", "1/15", False),  # AM/PM asks for a time
        ("1:2", "2:4", None),  # ratios stay ratios
        ("3:2", "6:4", None),
    ],
)
def test_clocks_same(g: str, a: str, same: bool | None) -> None:
    assert clocks_same(g, a) is same


@pytest.mark.parametrize(
    ("completion", "ground_truth", "status"),
    [
        ("\\boxed{2:30 \\text{ PM}}", "1:15 \\text{ PM}", "incorrect"),
        ("\\boxed{11{:}30 \\text{ AM}}", "11:30 AM", "correct"),
        ("\\boxed{3:00 \\text{ PM}}", "15:00", "correct"),
        ("The train arrives at 11:30 AM.", "11:30 \\text{ AM}", "correct"),
        ("The train arrives at 11:30 PM.", "11:30 \\text{ AM}", "incorrect"),
        ("\\boxed{1:2}", "2:4", "correct"),
        ("\\boxed{1:3:2}", "1:2:3", "incorrect"),
    ],
)
def test_times_in_verdicts(completion: str, ground_truth: str, status: str) -> None:
    assert verify(completion, ground_truth, {}).status == status


def test_a_time_comparison_is_named_in_the_details() -> None:
    assert verify("\\boxed{3:00 \\text{ PM}}", "15:00", {}).details["method"] == "time"
