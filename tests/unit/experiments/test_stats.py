"""The report's statistics: intervals from sums, and GRPO's view of a changed verdict."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from service.experiments.stats import (
    GroupPair,
    Moments,
    advantage_sign,
    grpo_effect,
    paired_delta,
    t_quantile_975,
    welch_delta,
)


def moments(values: list[float]) -> Moments:
    return Moments(len(values), sum(values), sum(v * v for v in values))


def test_moments_give_the_sample_mean_and_variance() -> None:
    rng = random.Random(3)
    values = [rng.uniform(-1, 2) for _ in range(57)]
    found = moments(values)
    assert found.mean == pytest.approx(statistics.fmean(values))
    assert found.variance == pytest.approx(statistics.variance(values))
    assert Moments(0, 0.0, 0.0).mean is None
    assert Moments(1, 0.5, 0.25).variance is None


@pytest.mark.parametrize(
    ("df", "published"),
    # Student's t 97.5% quantiles from the standard tables.
    [(1, 12.706), (2, 4.303), (9, 2.262), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980)],
)
def test_t_quantiles_match_the_published_table(df: int, published: float) -> None:
    assert t_quantile_975(df) == pytest.approx(published, abs=1.5e-3)


def test_t_quantile_decreases_towards_the_normal_one() -> None:
    values = [t_quantile_975(df / 2) for df in range(2, 2000)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(1.96, abs=3e-3)
    assert t_quantile_975(1e6) == pytest.approx(1.95996, abs=1e-4)


def test_a_paired_interval_is_the_t_interval_of_the_differences() -> None:
    rng = random.Random(7)
    control = [float(rng.random() < 0.4) for _ in range(200)]
    treatment = [c if rng.random() < 0.8 else 1.0 - c for c in control]
    differences = [t - c for c, t in zip(control, treatment, strict=True)]
    estimate = paired_delta(moments(differences))
    assert estimate is not None
    mean = statistics.fmean(differences)
    half = t_quantile_975(199) * statistics.stdev(differences) / math.sqrt(200)
    assert estimate.mean == pytest.approx(mean)
    assert (estimate.low, estimate.high) == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert estimate.method == "paired" and estimate.n == 200


def test_identical_versions_have_a_zero_width_interval_at_zero() -> None:
    estimate = paired_delta(moments([0.0] * 40))
    assert estimate is not None
    assert (estimate.mean, estimate.low, estimate.high) == (0.0, 0.0, 0.0)


def test_one_pair_has_a_mean_but_no_interval_and_none_has_neither() -> None:
    single = paired_delta(moments([1.0]))
    assert single is not None and single.mean == 1.0 and single.low is None
    assert paired_delta(moments([])) is None


def test_welchs_interval_for_two_independent_arms() -> None:
    rng = random.Random(11)
    control = [float(rng.random() < 0.3) for _ in range(120)]
    treatment = [float(rng.random() < 0.6) for _ in range(45)]
    estimate = welch_delta(moments(control), moments(treatment))
    assert estimate is not None
    a = statistics.variance(control) / len(control)
    b = statistics.variance(treatment) / len(treatment)
    df = (a + b) ** 2 / (a * a / (len(control) - 1) + b * b / (len(treatment) - 1))
    mean = statistics.fmean(treatment) - statistics.fmean(control)
    half = t_quantile_975(df) * math.sqrt(a + b)
    assert estimate.mean == pytest.approx(mean)
    assert estimate.low == pytest.approx(mean - half)
    assert estimate.high == pytest.approx(mean + half)
    assert estimate.method == "welch" and estimate.n == 165
    assert welch_delta(moments([]), moments(treatment)) is None


def test_an_advantage_sign_ignores_float_noise() -> None:
    rewards = [0.1, 0.2, 0.3]
    mean = sum(rewards) / 3
    assert [advantage_sign(r, mean) for r in rewards] == [-1, 0, 1]
    assert advantage_sign(1.0, 1.0 + 1e-12) == 0


def _pair(control: list[float], treatment: list[float]) -> GroupPair:
    """A group as the report's SQL summarises it, computed here from the rewards."""
    mc, mt = statistics.fmean(control), statistics.fmean(treatment)
    changes = sum(
        advantage_sign(c, mc) != advantage_sign(t, mt)
        for c, t in zip(control, treatment, strict=True)
    )
    return GroupPair(
        size=len(control),
        sign_changes=changes,
        control_spread=max(control) - min(control),
        treatment_spread=max(treatment) - min(treatment),
        control_incorrect=sum(c == 0.0 for c in control),
        treatment_incorrect=sum(t == 0.0 for t in treatment),
    )


def test_grpo_effect_counts_flips_and_sign_changes() -> None:
    groups = [
        _pair([0, 0, 0, 0], [0, 1, 0, 0]),  # all incorrect → mixed: gains signal
        _pair([1, 0, 1, 0], [0, 0, 0, 0]),  # mixed → all incorrect: loses signal
        _pair([1, 0, 0, 0], [1, 0, 0, 0]),  # unchanged
        _pair([1, 0, 0, 0], [1, 1, 0, 0]),  # item 2's advantage turns positive
        _pair([1, 1, 1, 1], [1, 1, 1, 1]),  # all correct both times
        _pair([1, 1, 1, 1], [1, 0, 1, 1]),  # all correct → mixed: gains, not from incorrect
    ]
    effect = grpo_effect(groups).as_dict()
    assert effect["groups"] == 6
    assert (effect["gains_signal"], effect["loses_signal"]) == (2, 1)
    assert (effect["all_incorrect_to_mixed"], effect["mixed_to_all_incorrect"]) == (1, 1)
    assert effect["sign_changed"] == 4
    assert effect["affected"] == 4 and effect["affected_fraction"] == pytest.approx(4 / 6)


def test_grpo_effect_of_nothing_has_no_fractions() -> None:
    effect = grpo_effect([]).as_dict()
    assert effect["groups"] == 0 and effect["affected_fraction"] is None
