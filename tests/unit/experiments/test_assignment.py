"""Which arm decides a unit of a split experiment, and which traffic an experiment takes."""

from __future__ import annotations

import uuid

import pytest

from service.experiments.assignment import arm_for, filter_matches, filters_overlap, unit_key


def test_a_group_has_one_arm_whatever_request_or_item_it_comes_in() -> None:
    experiment = str(uuid.uuid4())
    arms = {
        arm_for(experiment, unit_key(f"request-{r}", "group-7", index), 0.5)
        for r in range(20)
        for index in range(16)
    }
    assert len(arms) == 1


def test_items_without_a_group_are_units_of_their_own() -> None:
    assert unit_key("r", None, 0) != unit_key("r", None, 1)
    assert unit_key("r", None, 3) != unit_key("s", None, 3)
    # A group named like an item key is still a group.
    assert unit_key("r", "item\x00r\x000", 0) != unit_key("r", None, 0)


@pytest.mark.parametrize("split", [0.1, 0.5, 0.9])
def test_the_treatments_share_of_units_follows_the_split(split: float) -> None:
    experiment = str(uuid.uuid4())
    units = 20_000
    treated = sum(
        arm_for(experiment, unit_key("r", f"g{i}", 0), split) == "treatment" for i in range(units)
    )
    # Binomial: four standard deviations either side.
    spread = 4 * (units * split * (1 - split)) ** 0.5
    assert abs(treated - units * split) < spread


def test_two_experiments_split_independently() -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    keys = [unit_key("r", f"g{i}", 0) for i in range(4000)]
    same = sum(arm_for(first, k, 0.5) == arm_for(second, k, 0.5) for k in keys)
    assert 1800 < same < 2200


def test_filters() -> None:
    assert filter_matches(None, "run-1") and filter_matches(None, None)
    assert filter_matches("run-1", "run-1") and not filter_matches("run-1", "run-2")
    assert not filter_matches("run-1", None)
    assert filters_overlap(None, "run-1") and filters_overlap("run-1", "run-1")
    assert not filters_overlap("run-1", "run-2")
