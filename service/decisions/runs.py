"""Whole runs: the runs seen, a run step by step, and its health (the stop conditions
practitioners write in their runbooks, computed by the service that sees every reward)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from service.db.models import NO_STEP
from service.decisions.repository import LATENCY_QUANTILES
from service.decisions.rollups import COMPONENT, STATUS, histogram_quantiles
from service.decisions.run_repository import RunRepository
from service.decisions.run_schemas import (
    GroupSignal,
    Latency,
    Moments,
    Review,
    RunDetail,
    RunHealth,
    RunOut,
    RunPage,
    RunWarning,
    StepPoint,
    VersionUse,
)
from service.errors import NotFound
from service.verifiers.base import STATUSES

# Rejected decisions read for the possibly-correct review (the most recent ones).
REVIEW_SCAN = 5000
REVIEW_LIST = 50


@dataclass(frozen=True, slots=True)
class HealthBudgets:
    window_steps: int = 10
    max_timeout_rate: float = 0.05
    max_error_rate: float = 0.01
    max_all_same_fraction: float = 0.8
    max_length_growth: float = 0.25
    max_flagged_rate: float = 0.02
    close_rel_tol: float = 0.01


def _moments(count: int, total: float | None, squares: float | None) -> Moments:
    if not count or total is None or squares is None:
        return Moments.model_construct(mean=None, std=None)
    mean = total / count
    std = math.sqrt(max(0.0, squares / count - mean * mean))
    return Moments.model_construct(mean=mean, std=std)


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class RunService:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.runs = RunRepository(session, tenant_id)

    def list_runs(self, limit: int, before: datetime | None) -> RunPage:
        runs = [
            RunOut(
                run_id=row.run_id,
                decisions=row.decisions,
                first_step=row.first_step,
                last_step=row.last_step,
                mean_reward=row.reward_sum / row.scored if row.scored else None,
                first_seen=row.first_seen,
                last_seen=row.last_seen,
            )
            for row in self.runs.runs(limit, before)
        ]
        next_before = runs[-1].last_seen if len(runs) == limit else None
        return RunPage(runs=runs, next_before=next_before)

    def detail(self, run_id: str) -> RunDetail:
        step_rows = self.runs.step_rows(run_id)
        if not step_rows:
            raise NotFound(f"no run {run_id!r}")
        series = _StepSeries.of(self.runs, run_id)
        # Steps in order; decisions sent without a step come last.
        step_rows.sort(key=lambda row: (row[0] == NO_STEP, row[0]))
        steps = [_step(row, series) for row in step_rows]
        versions = [
            VersionUse(
                verifier=name,
                version=version,
                version_hash=version_hash,
                first_step=first,
                last_step=last,
                decisions=count,
            )
            for name, version, version_hash, first, last, count in self.runs.version_rows(run_id)
        ]
        total = sum(step.decisions for step in steps)
        return RunDetail(run_id=run_id, decisions=total, steps=steps, versions=versions)

    def health(self, run_id: str, budgets: HealthBudgets) -> RunHealth:
        detail = self.detail(run_id)
        steps = [step for step in detail.steps if step.step is not None] or detail.steps
        window = steps[-budgets.window_steps :]
        before = steps[-2 * budgets.window_steps : -budgets.window_steps]
        warnings = [
            *_rate_warnings(window, budgets),
            *_length_warning(window, before, budgets),
            *_version_warning(detail.versions),
        ]
        review = self._review(run_id, budgets.close_rel_tol)
        if review.possibly_correct:
            warnings.append(
                RunWarning(
                    kind="possibly_correct_rejected",
                    message=f"{review.possibly_correct} rejected answers are numerically close "
                    "to the ground truth: review them (the checker may be too strict)",
                    value=float(review.possibly_correct),
                )
            )
        return RunHealth(
            run_id=run_id,
            status="warning" if warnings else "ok",
            window_steps=len(window),
            warnings=warnings,
            review=review,
        )

    def _review(self, run_id: str, rel_tol: float) -> Review:
        close = []
        for decision_id, extracted, ground_truth in self.runs.rejected_rows(run_id, REVIEW_SCAN):
            if _numerically_close(extracted, ground_truth, rel_tol):
                close.append(str(decision_id))
        return Review(possibly_correct=len(close), decision_ids=close[:REVIEW_LIST])


@dataclass(slots=True)
class _StepSeries:
    """A run's per-step series, by step: statuses, component moments, the latency buckets
    its quantiles need (with the step's count), and its group signal."""

    statuses: dict[int, dict[str, int]]
    components: dict[int, dict[str, Moments]]
    latency: dict[int, tuple[int, list[tuple[int, int, float, float]]]]
    groups: dict[int, GroupSignal]

    @classmethod
    def of(cls, runs: RunRepository, run_id: str) -> _StepSeries:
        found = cls(defaultdict(dict), defaultdict(dict), {}, {})
        for step, kind, key, n, total, squares in runs.series_rows(run_id, (STATUS, COMPONENT)):
            if kind == STATUS:
                found.statuses[step][key] = int(n)
            else:
                found.components[step][key] = _moments(int(n), total, squares)
        for step, first, n, low, high, total in runs.latency_rows(run_id, LATENCY_QUANTILES):
            _, buckets = found.latency.setdefault(step, (int(total), []))
            buckets.append((int(first), int(n), float(low), float(high)))
        for step, groups, none, every, same in runs.group_rows(run_id):
            groups, none, every, same = int(groups), int(none), int(every), int(same)
            found.groups[step] = GroupSignal.model_construct(
                groups=groups,
                solved_none=none,
                solved_some=groups - none - every,
                solved_all=every,
                all_same=same,
                all_same_fraction=_rate(same, groups),
            )
        return found

    def latency_of(self, step: int) -> Latency:
        total, buckets = self.latency.get(step, (0, []))
        p50, p95, p99 = histogram_quantiles(buckets, total, LATENCY_QUANTILES)
        return Latency.model_construct(p50=p50, p95=p95, p99=p99)

    def groups_of(self, step: int) -> GroupSignal:
        return self.groups.get(step) or GroupSignal.model_construct(
            groups=0,
            solved_none=0,
            solved_some=0,
            solved_all=0,
            all_same=0,
            all_same_fraction=None,
        )


def _step(row: Any, series: _StepSeries) -> StepPoint:
    # Built with model_construct throughout: the values are computed here from typed columns,
    # and validating a run's hundreds of steps field by field cost more than reading them.
    step, count, scored, total, squares, cached, flagged, duration, chars, chars_max = row[:10]
    count, scored = int(count), int(scored)
    statuses = {status: series.statuses[step].get(status, 0) for status in STATUSES}
    return StepPoint.model_construct(
        step=None if step == NO_STEP else step,
        decisions=count,
        scored=scored,
        reward=_moments(scored, total, squares),
        components=series.components.get(step, {}),
        statuses={status: n for status, n in statuses.items() if n},
        timeout_rate=_rate(statuses["timeout"], count),
        error_rate=_rate(statuses["error"], count),
        flagged_rate=_rate(int(flagged or 0), count),
        cache_hit_rate=_rate(int(cached or 0), count),
        groups=series.groups_of(step),
        latency_ms=series.latency_of(step),
        mean_duration_ms=float(duration) / count if count else None,
        completion_chars_mean=float(chars) / count if count else None,
        completion_chars_max=None if chars_max is None else int(chars_max),
        first_seen=row[10],
    )


def _window_rate(window: list[StepPoint], attribute: str) -> float:
    count = sum(step.decisions for step in window)
    part = sum(getattr(step, attribute) * step.decisions for step in window)
    return part / count if count else 0.0


def _rate_warnings(window: list[StepPoint], budgets: HealthBudgets) -> list[RunWarning]:
    warnings = []
    checks = (
        ("timeout_rate", "timeout_rate", budgets.max_timeout_rate, "items timed out"),
        ("error_rate", "error_rate", budgets.max_error_rate, "items failed in the service"),
        (
            "flagged_rate",
            "flagged_rate",
            budgets.max_flagged_rate,
            "items were flagged (answer in the prompt or a hack pattern)",
        ),
    )
    for kind, attribute, budget, what in checks:
        value = _window_rate(window, attribute)
        if value > budget:
            warnings.append(
                RunWarning(
                    kind=kind,  # type: ignore[arg-type]
                    message=f"{value:.1%} of the last {len(window)} steps' {what}; "
                    f"budget {budget:.1%}",
                    value=value,
                    threshold=budget,
                    step=window[-1].step,
                )
            )
    groups = sum(step.groups.groups for step in window)
    same = sum(step.groups.all_same for step in window)
    if groups and _rate(same, groups) > budgets.max_all_same_fraction:
        value = _rate(same, groups)
        warnings.append(
            RunWarning(
                kind="all_same_groups",
                message=f"{value:.0%} of recent groups have one reward for every member: "
                "they carry no GRPO signal",
                value=value,
                threshold=budgets.max_all_same_fraction,
                step=window[-1].step,
            )
        )
    return warnings


def _mean_of(steps: list[StepPoint], value: str) -> float | None:
    pairs = [(getattr(step, value), step.decisions) for step in steps]
    pairs = [(v, n) for v, n in pairs if v is not None]
    weight = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / weight if weight else None


def _length_warning(
    window: list[StepPoint], before: list[StepPoint], budgets: HealthBudgets
) -> list[RunWarning]:
    if not window or not before:
        return []
    length_now, length_before = (_mean_of(s, "completion_chars_mean") for s in (window, before))
    rewards_now = [s.reward.mean for s in window if s.reward.mean is not None]
    rewards_before = [s.reward.mean for s in before if s.reward.mean is not None]
    if not length_now or not length_before or not rewards_now or not rewards_before:
        return []
    growth = length_now / length_before - 1
    reward_gain = sum(rewards_now) / len(rewards_now) - sum(rewards_before) / len(rewards_before)
    if growth > budgets.max_length_growth and reward_gain <= 0.01:
        return [
            RunWarning(
                kind="length_without_reward",
                message=f"completions grew {growth:.0%} over the last {len(window)} steps while "
                f"the mean reward changed by {reward_gain:+.3f}",
                value=growth,
                threshold=budgets.max_length_growth,
                step=window[-1].step,
            )
        ]
    return []


def _version_warning(versions: list[VersionUse]) -> list[RunWarning]:
    by_verifier: dict[str, list[VersionUse]] = defaultdict(list)
    for use in versions:
        by_verifier[use.verifier].append(use)
    warnings = []
    for name, uses in by_verifier.items():
        if len(uses) > 1:
            changed_at = uses[1].first_step
            listed = ", ".join(f"{u.version} (steps {u.first_step}–{u.last_step})" for u in uses)
            warnings.append(
                RunWarning(
                    kind="version_changed",
                    message=f"{name} changed version mid-run: {listed}; rewards before and after "
                    "are not on one scale",
                    step=changed_at,
                )
            )
    return warnings


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(",", "").removesuffix("%").strip("$ ")
        if not text or len(text) > 40:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _numerically_close(extracted: Any, ground_truth: Any, rel_tol: float) -> bool:
    """A rejected answer within ``rel_tol`` of the ground truth (but not equal to it)."""
    answer, truth = _number(extracted), _number(ground_truth)
    if answer is None or truth is None or answer == truth:
        return False
    return math.isclose(answer, truth, rel_tol=rel_tol, abs_tol=1e-9)
