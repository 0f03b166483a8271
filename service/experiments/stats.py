"""The report's statistics, from the sums the database computes: pure functions.

Mean reward delta with a 95% confidence interval: paired (the same items, both versions:
shadow experiments and replays) or Welch's unpaired interval (a split experiment's arms decide
different groups). The effect on GRPO: how a group's advantages change when the other version
decides it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CONFIDENCE = 0.95
_Z_975 = 1.959963984540054
# Student's t, 97.5% quantile, for 1..30 degrees of freedom.
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
# Rewards are compared with this slack: a group mean is a float.
EPSILON = 1e-9


def t_quantile_975(df: float) -> float:
    """Student's t 97.5% quantile: the table up to 30 degrees of freedom (interpolated for
    Welch's fractional ones), the Cornish-Fisher expansion beyond (error < 1e-4)."""
    if df <= 1:
        return _T_975[0]
    if df < len(_T_975):
        low = math.floor(df)
        fraction = df - low
        return _T_975[low - 1] + (_T_975[low] - _T_975[low - 1]) * fraction
    z = _Z_975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


@dataclass(frozen=True, slots=True)
class Moments:
    """Count, sum and sum of squares of a sample (what SQL aggregates give)."""

    n: int
    total: float
    squares: float

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    @property
    def variance(self) -> float | None:
        """The sample variance (n - 1), never negative from rounding."""
        if self.n < 2:
            return None
        return max(0.0, (self.squares - self.total * self.total / self.n) / (self.n - 1))


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean difference (treatment - control) and its 95% confidence interval."""

    mean: float
    low: float | None
    high: float | None
    n: int
    method: str

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "confidence": CONFIDENCE,
            "method": self.method,
        }


def paired_delta(differences: Moments) -> Estimate | None:
    """Mean of per-item differences with a t interval; None without a pair."""
    mean, variance = differences.mean, differences.variance
    if mean is None:
        return None
    if variance is None:
        return Estimate(mean, None, None, differences.n, "paired")
    half = t_quantile_975(differences.n - 1) * math.sqrt(variance / differences.n)
    return Estimate(mean, mean - half, mean + half, differences.n, "paired")


def welch_delta(control: Moments, treatment: Moments) -> Estimate | None:
    """Difference of two independent means with Welch's interval; None if an arm is empty."""
    if control.mean is None or treatment.mean is None:
        return None
    mean = treatment.mean - control.mean
    n = control.n + treatment.n
    if control.variance is None or treatment.variance is None:
        return Estimate(mean, None, None, n, "welch")
    a, b = control.variance / control.n, treatment.variance / treatment.n
    if a + b == 0:
        return Estimate(mean, mean, mean, n, "welch")
    df = (a + b) ** 2 / (a * a / (control.n - 1) + b * b / (treatment.n - 1))
    half = t_quantile_975(df) * math.sqrt(a + b)
    return Estimate(mean, mean - half, mean + half, n, "welch")


def advantage_sign(reward: float, group_mean: float) -> int:
    """The sign of GRPO's (and Dr. GRPO's, and RLOO's) advantage of one item."""
    difference = reward - group_mean
    if difference > EPSILON:
        return 1
    if difference < -EPSILON:
        return -1
    return 0


@dataclass(frozen=True, slots=True)
class GroupPair:
    """One group as both versions decided it (items scored by both)."""

    size: int
    # Items whose advantage sign differs between the versions.
    sign_changes: int
    control_spread: float
    treatment_spread: float
    control_incorrect: int
    treatment_incorrect: int

    @property
    def control_all_same(self) -> bool:
        return self.control_spread <= EPSILON

    @property
    def treatment_all_same(self) -> bool:
        return self.treatment_spread <= EPSILON


@dataclass(slots=True)
class GrpoEffect:
    """What the treatment does to a set of groups' learning signal, against the control."""

    groups: int = 0
    sign_changed: int = 0
    # All-same (no signal) for one version, mixed for the other.
    gains_signal: int = 0
    loses_signal: int = 0
    all_incorrect_to_mixed: int = 0
    mixed_to_all_incorrect: int = 0
    # Changed sign for any item, or flipped all-same: the groups whose update changes.
    affected: int = 0

    def add(self, group: GroupPair) -> None:
        self.groups += 1
        changed = group.sign_changes > 0
        gains = group.control_all_same and not group.treatment_all_same
        loses = group.treatment_all_same and not group.control_all_same
        self.sign_changed += changed
        self.gains_signal += gains
        self.loses_signal += loses
        self.all_incorrect_to_mixed += gains and group.control_incorrect == group.size
        self.mixed_to_all_incorrect += loses and group.treatment_incorrect == group.size
        self.affected += changed or gains or loses

    def as_dict(self) -> dict[str, object]:
        def fraction(count: int) -> float | None:
            return count / self.groups if self.groups else None

        return {
            "groups": self.groups,
            "affected": self.affected,
            "affected_fraction": fraction(self.affected),
            "sign_changed": self.sign_changed,
            "sign_changed_fraction": fraction(self.sign_changed),
            "gains_signal": self.gains_signal,
            "loses_signal": self.loses_signal,
            "all_incorrect_to_mixed": self.all_incorrect_to_mixed,
            "mixed_to_all_incorrect": self.mixed_to_all_incorrect,
        }


def grpo_effect(groups: list[GroupPair]) -> GrpoEffect:
    effect = GrpoEffect()
    for group in groups:
        effect.add(group)
    return effect
