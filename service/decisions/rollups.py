"""Run rollups, computed from decision rows: what each chunk's write adds to its run's totals,
per step and version, and per step series; and the latency quantiles read back from them.

Every figure of a run summary is a count, a sum, a sum of squares or an extreme, so the rollups
of two chunks merge by adding (and taking the lesser or greater) in any order. Latency
quantiles are the exception: they come from a log-scale histogram whose buckets keep their
lowest and highest value (exact while a bucket holds one or two values; otherwise within one
bucket, 2^(1/4) ≈ 19% wide). The migration that built the first rollups (0007) applies the
same rules in SQL.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from service.db.models import NO_STEP

LATENCY_FLOOR_MS = 2.0**-10
BUCKETS_PER_DOUBLING = 4
SERIES_KEY_CHARS = 256

# The kinds of per-step series (run_series_rollups.kind).
STATUS, COMPONENT, LATENCY, GROUP = "status", "component", "latency", "group"


def latency_bucket(duration_ms: float) -> int:
    """The histogram bucket of a verification time (the same as the migration's SQL)."""
    return math.floor(
        math.log(max(duration_ms, LATENCY_FLOOR_MS)) / math.log(2) * BUCKETS_PER_DOUBLING
    )


@dataclass(slots=True)
class _Series:
    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    low: float | None = None
    high: float | None = None

    def observe(self, value: float) -> None:
        """A value: counted, summed, squared, and kept if extreme."""
        self.n += 1
        self.total += value
        self.squares += value * value
        self._extremes(value)

    def tally(self, hit: bool, value: float) -> None:
        """A group member: counted, its hit summed, its value kept if extreme."""
        self.n += 1
        self.total += 1.0 if hit else 0.0
        self._extremes(value)

    def _extremes(self, value: float) -> None:
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)


@dataclass(slots=True)
class _Step:
    verifier_name: str
    verifier_version: str
    first_seen: datetime
    last_seen: datetime
    decisions: int = 0
    scored: int = 0
    reward_sum: float = 0.0
    reward_squares: float = 0.0
    cached: int = 0
    flagged: int = 0
    duration_sum: float = 0.0
    chars_sum: int = 0
    chars_max: int = 0


@dataclass(slots=True)
class _Run:
    first_seen: datetime
    last_seen: datetime
    decisions: int = 0
    scored: int = 0
    reward_sum: float = 0.0
    first_step: int | None = None
    last_step: int | None = None


@dataclass(slots=True)
class RollupDeltas:
    """What a set of new decisions adds to the rollups, as rows keyed like their tables (in key
    order: concurrent writers then lock the rows they share in one order, never deadlocking)."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    series: list[dict[str, Any]] = field(default_factory=list)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def rollup_deltas(rows: Iterable[Mapping[str, Any]]) -> RollupDeltas:
    """The rollup rows that the given (newly inserted) decision rows add; rows of no run add
    nothing (there is no run to summarise)."""
    runs: dict[tuple[str, str], _Run] = {}
    steps: dict[tuple[str, str, int, str], _Step] = {}
    series: dict[tuple[str, str, int, str, str], _Series] = {}
    for row in rows:
        run_id = row["run_id"]
        if run_id is None:
            continue
        tenant, created, reward = row["tenant_id"], row["created_at"], row["reward"]
        step = NO_STEP if row["step"] is None else int(row["step"])
        _add_to_run(runs.setdefault((tenant, run_id), _Run(created, created)), row)
        at = steps.get((tenant, run_id, step, row["version_hash"]))
        if at is None:
            at = _Step(row["verifier_name"], row["verifier_version"], created, created)
            steps[(tenant, run_id, step, row["version_hash"])] = at
        _add_to_step(at, row)

        at_step = (tenant, run_id, step)
        _series(series, at_step, STATUS, row["status"]).n += 1
        duration = float(row["duration_ms"])
        _series(series, at_step, LATENCY, str(latency_bucket(duration))).observe(duration)
        for name, value in (row["components"] or {}).items():
            number = _number(value)
            if number is not None:
                _series(series, at_step, COMPONENT, str(name)).observe(number)
        if row["group_id"] is not None and reward is not None:
            hit = row["status"] == "correct"
            _series(series, at_step, GROUP, row["group_id"]).tally(hit, float(reward))
    return RollupDeltas(
        runs=[{"tenant_id": t, "run_id": r, **_fields(v)} for (t, r), v in sorted(runs.items())],
        steps=[
            {"tenant_id": t, "run_id": r, "step": s, "version_hash": h, **_fields(v)}
            for (t, r, s, h), v in sorted(steps.items())
        ],
        series=[
            {"tenant_id": t, "run_id": r, "step": s, "kind": k, "key": key, **_fields(v)}
            for (t, r, s, k, key), v in sorted(series.items())
        ],
    )


def _series(
    series: dict[tuple[str, str, int, str, str], _Series],
    at_step: tuple[str, str, int],
    kind: str,
    key: str,
) -> _Series:
    full_key = (*at_step, kind, key[:SERIES_KEY_CHARS])
    found = series.get(full_key)
    if found is None:  # not setdefault: that would build a _Series on every call
        found = series[full_key] = _Series()
    return found


def _fields(value: _Run | _Step | _Series) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__slots__}


def _add_to_run(run: _Run, row: Mapping[str, Any]) -> None:
    created, reward, step = row["created_at"], row["reward"], row["step"]
    run.decisions += 1
    if reward is not None:
        run.scored += 1
        run.reward_sum += float(reward)
    if step is not None:
        run.first_step = step if run.first_step is None else min(run.first_step, step)
        run.last_step = step if run.last_step is None else max(run.last_step, step)
    run.first_seen, run.last_seen = min(run.first_seen, created), max(run.last_seen, created)


def _add_to_step(step: _Step, row: Mapping[str, Any]) -> None:
    created, reward = row["created_at"], row["reward"]
    step.decisions += 1
    if reward is not None:
        step.scored += 1
        step.reward_sum += float(reward)
        step.reward_squares += float(reward) * float(reward)
    step.cached += bool(row["cached"])
    step.flagged += bool(row.get("flagged"))
    step.duration_sum += float(row["duration_ms"])
    chars = int(row["completion_chars"])
    step.chars_sum += chars
    step.chars_max = max(step.chars_max, chars)
    step.first_seen, step.last_seen = min(step.first_seen, created), max(step.last_seen, created)


def histogram_quantiles(
    buckets: Sequence[tuple[int, int, float, float]], total: int, qs: Sequence[float]
) -> list[float | None]:
    """Quantiles (as Postgres's percentile_cont) of ``total`` values known by histogram buckets,
    each ``(first rank, count, lowest, highest)``; only the buckets holding the ranks a quantile
    falls between are needed. A value's rank is placed linearly between its bucket's lowest and
    highest, so buckets of one or two values are exact."""
    if not total:
        return [None for _ in qs]

    def value_at(rank: int) -> float:
        for first, n, low, high in buckets:
            if first <= rank < first + n:
                return low if n == 1 else low + (high - low) * (rank - first) / (n - 1)
        raise ValueError(f"no bucket holds rank {rank} of {total}")

    found: list[float | None] = []
    for q in qs:
        position = q * (total - 1)
        below = math.floor(position)
        low, high = value_at(below), value_at(min(below + 1, total - 1))
        found.append(low + (high - low) * (position - below))
    return found
