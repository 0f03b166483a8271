"""The contract every verifier implements: a pure function from strings and data to a Verdict.

Nothing in ``service.verifiers`` may import FastAPI, Celery or SQLAlchemy: the same function
runs in a Celery worker, in the embedded local pool and in tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Literal, Protocol

Status = Literal["correct", "incorrect", "partial", "unparseable", "timeout", "error", "invalid"]

STATUSES: tuple[Status, ...] = (
    "correct",
    "incorrect",
    "partial",
    "unparseable",
    "timeout",
    "error",
    "invalid",
)

# A failure of the service or of the ground truth must never reach the policy as 0.0.
NULL_REWARD_STATUSES: frozenset[str] = frozenset({"error", "invalid"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one verification. ``details`` holds JSON-safe values only."""

    reward: float | None
    status: Status
    components: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status in NULL_REWARD_STATUSES:
            if self.reward is not None:
                raise ValueError(f"status {self.status!r} must carry reward None")
        elif self.reward is None:
            raise ValueError(f"status {self.status!r} needs a numeric reward")
        # NaN or an infinity is no reward a trainer can use, nor one the log can store: the
        # verifier that made it failed (verdict_for turns this into an `error`, reward None).
        if self.reward is not None and not math.isfinite(self.reward):
            raise ValueError(f"reward {self.reward!r} is not a finite number")
        for name, value in self.components.items():
            if not math.isfinite(value):
                raise ValueError(f"component {name!r} is {value!r}, not a finite number")

    def to_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "status": self.status,
            "components": dict(self.components),
            "details": dict(self.details),
        }


class InvalidGroundTruth(ValueError):
    """The ground truth or the verifier configuration cannot be used: status ``invalid``."""


class VerifyFunction(Protocol):
    def __call__(
        self,
        completion: str,
        ground_truth: Any,
        config: Mapping[str, Any],
        prompt: str | None = None,
    ) -> Verdict: ...


def merge_config(config: Mapping[str, Any] | None, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults overlaid by ``config``; a non-mapping or an unknown key is InvalidGroundTruth."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise InvalidGroundTruth("config must be a mapping")
    unknown = sorted(str(key)[:60] for key in config if key not in defaults)
    if unknown:
        raise InvalidGroundTruth(f"unknown config key(s): {', '.join(unknown)}")
    return {**defaults, **config}


def installed_versions(distributions: tuple[str, ...]) -> dict[str, str]:
    """Installed versions of the distributions that decide a kind's verdicts (for its hash)."""
    versions = {}
    for name in distributions:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "missing"
    return versions
