"""The report's aggregates, computed in the database: a comparison reads a few rows per status
pair and one per group, never every decision (bench/experiments.py times 100k decisions).

Every comparison row (a shadow decision, a split assignment, a replay result) carries a copy of
the control's group and verdict, taken when it was written, so the aggregates read one narrow
table: the decisions' rows, whose completions make them wide, are read only for the page of
disagreements shown (joining 100k of them three times took most of two seconds).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, case, func, select, text
from sqlalchemy.sql import Subquery

from service.db.models import Decision, ExperimentAssignment, ReplayResult, ShadowDecision
from service.db.repository import Repository
from service.decisions.repository import LATENCY_QUANTILES, quantiles
from service.experiments.assignment import ARMS
from service.experiments.stats import EPSILON, GroupPair, Moments

EXCERPT_CHARS = 240


@dataclass(frozen=True, slots=True)
class StatusCell:
    """Items with this (control, treatment) status pair, and their rewards' sums."""

    control_status: str
    treatment_status: str
    items: int
    control: Moments
    treatment: Moments
    delta: Moments


@dataclass(frozen=True, slots=True)
class ArmCell:
    arm: str
    status: str
    rewards: Moments
    items: int


def _count_if(condition: Any) -> Any:
    return func.sum(case((condition, 1), else_=0))


def _sign(value: Any) -> Any:
    return case((value > EPSILON, 1), (value < -EPSILON, -1), else_=0)


def _moments(values: Any) -> tuple[Any, Any, Any]:
    return func.count(values), func.sum(values), func.sum(values * values)


# Memory a report's sorts may take in Postgres (this transaction only): the GRPO query sorts
# every item by group, and the default 4 MB sent 100k items' sort to disk (0.39 s → 0.1 s).
REPORT_WORK_MEM = "64MB"


class ComparisonRepository(Repository):
    """Aggregates of one comparison; every query is limited to the repository's tenant."""

    def allow_large_sorts(self) -> None:
        if self._dialect() == "postgresql":
            self.session.execute(text(f"SET LOCAL work_mem = '{REPORT_WORK_MEM}'"))

    # -- paired comparisons: a subquery of source_id, request_id, group_id, c_* and t_*

    def shadow_pairs(self, experiment_id: uuid.UUID) -> Subquery:
        row = ShadowDecision
        control = (row.control_status, row.control_reward, row.control_duration_ms)
        return self._pairs(
            row,
            row.control_decision_id,
            (*control, row.control_cached),
            row.experiment_id == experiment_id,
        )

    def replay_pairs(self, replay_id: uuid.UUID, target: int) -> Subquery:
        row = ReplayResult
        control = (row.source_status, row.source_reward, row.source_duration_ms)
        return self._pairs(
            row,
            row.source_decision_id,
            (*control, row.source_cached),
            row.replay_id == replay_id,
            row.target == target,
            row.status.is_not(None),
        )

    def _pairs(
        self, row: Any, source_id: Any, control: tuple[Any, ...], *conditions: Any
    ) -> Subquery:
        """A comparison table's rows as (source_id, request_id, group_id, the control's
        c_status, c_reward, c_ms, c_cached, the treatment's t_* and t_details)."""
        fields = ("status", "reward", "ms", "cached")
        treatment = (row.status, row.reward, row.duration_ms, row.cached)
        return (
            self._select(row)
            .with_only_columns(
                source_id.label("source_id"),
                row.request_id,
                row.group_id,
                *(column.label(f"c_{name}") for column, name in zip(control, fields, strict=True)),
                *(
                    column.label(f"t_{name}")
                    for column, name in zip(treatment, fields, strict=True)
                ),
                row.details.label("t_details"),
            )
            .where(*conditions)
            .subquery("p")
        )

    def status_cells(self, pairs: Subquery) -> list[StatusCell]:
        c = pairs.c
        query = select(
            c.c_status,
            c.t_status,
            func.count(),
            *_moments(c.c_reward),
            *_moments(c.t_reward),
            *_moments(c.t_reward - c.c_reward),
        ).group_by(c.c_status, c.t_status)
        cells = []
        for row in self.session.execute(query):
            c_status, t_status, items, *sums = row
            moments = [
                Moments(int(sums[i] or 0), float(sums[i + 1] or 0), float(sums[i + 2] or 0))
                for i in (0, 3, 6)
            ]
            cells.append(StatusCell(c_status, t_status, int(items), *moments))
        return cells

    def paired_latency(self, pairs: Subquery) -> tuple[list[float | None], list[float | None]]:
        """p50, p95, p99 (ms) of the control's and the treatment's verifications that ran."""
        c = pairs.c
        return (
            self._quantiles(select(c.c_ms).where(c.c_cached.is_(False))),
            self._quantiles(select(c.t_ms).where(c.t_cached.is_(False))),
        )

    def paired_groups(self, pairs: Subquery) -> list[GroupPair]:
        """Each group (request, group id) of two or more items scored by both versions."""
        c = pairs.c
        group = (c.request_id, c.group_id)
        scored = (
            select(
                c.request_id,
                c.group_id,
                c.c_reward.label("rc"),
                c.t_reward.label("rt"),
                (c.c_status == "incorrect").label("c_incorrect"),
                (c.t_status == "incorrect").label("t_incorrect"),
                _sign(c.c_reward - func.avg(c.c_reward).over(partition_by=group)).label("sc"),
                _sign(c.t_reward - func.avg(c.t_reward).over(partition_by=group)).label("st"),
            )
            .where(c.group_id.is_not(None), c.c_reward.is_not(None), c.t_reward.is_not(None))
            .subquery("scored")
        )
        query = (
            select(
                func.count(),
                _count_if(scored.c.sc != scored.c.st),
                func.max(scored.c.rc) - func.min(scored.c.rc),
                func.max(scored.c.rt) - func.min(scored.c.rt),
                _count_if(scored.c.c_incorrect),
                _count_if(scored.c.t_incorrect),
            )
            .group_by(scored.c.request_id, scored.c.group_id)
            .having(func.count() > 1)
        )
        return [
            GroupPair(int(n), int(changes), float(spread_c), float(spread_t), int(ci), int(ti))
            for n, changes, spread_c, spread_t, ci, ti in self.session.execute(query)
        ]

    def disagreements(
        self, pairs: Subquery, after: uuid.UUID | None, limit: int
    ) -> list[dict[str, Any]]:
        """Items whose status differs, by control decision id, after the cursor; only these
        rows of the decision log are read (their extracted answer and completion's end)."""
        c = pairs.c
        if self._dialect() == "postgresql":
            excerpt = func.right(Decision.completion, EXCERPT_CHARS)
        else:
            excerpt = func.substr(Decision.completion, -EXCERPT_CHARS)
        query = (
            select(
                c.source_id,
                c.c_status,
                c.t_status,
                c.c_reward,
                c.t_reward,
                Decision.details["extracted"],
                c.t_details["extracted"],
                excerpt,
            )
            .select_from(pairs.join(Decision, Decision.id == c.source_id))
            .where(c.c_status != c.t_status)
        )
        if self.tenant_id is not None:
            query = query.where(Decision.tenant_id == self.tenant_id)
        if after is not None:
            query = query.where(c.source_id > after)
        query = query.order_by(c.source_id).limit(limit)
        names = (
            "decision_id",
            "control_status",
            "treatment_status",
            "control_reward",
            "treatment_reward",
            "control_extracted",
            "treatment_extracted",
            "completion_excerpt",
        )
        return [dict(zip(names, row, strict=True)) for row in self.session.execute(query)]

    # -- split comparisons

    def _assigned(self, experiment_id: uuid.UUID, *columns: Any) -> Select[Any]:
        return (
            self._select(ExperimentAssignment)
            .with_only_columns(*columns)
            .where(ExperimentAssignment.experiment_id == experiment_id)
        )

    def arm_cells(self, experiment_id: uuid.UUID) -> list[ArmCell]:
        row = ExperimentAssignment
        query = self._assigned(
            experiment_id, row.arm, row.status, func.count(), *_moments(row.reward)
        ).group_by(row.arm, row.status)
        return [
            ArmCell(arm, status, Moments(int(n), float(s or 0), float(sq or 0)), int(items))
            for arm, status, items, n, s, sq in self.session.execute(query)
        ]

    def arm_latency(self, experiment_id: uuid.UUID) -> dict[str, list[float | None]]:
        row = ExperimentAssignment
        return {
            arm: self._quantiles(
                self._assigned(experiment_id, row.duration_ms).where(
                    row.arm == arm, row.cached.is_(False)
                )
            )
            for arm in ARMS
        }

    def arm_groups(self, experiment_id: uuid.UUID) -> dict[str, tuple[int, int]]:
        """Per arm: groups of two or more scored items, and those whose rewards are all the
        same (no learning signal)."""
        row = ExperimentAssignment
        spread = (func.max(row.reward) - func.min(row.reward)).label("spread")
        groups = (
            self._assigned(experiment_id, row.arm.label("arm"), spread)
            .where(row.group_id.is_not(None), row.reward.is_not(None))
            .group_by(row.arm, row.request_id, row.group_id)
            .having(func.count() > 1)
            .subquery("groups")
        )
        query = select(groups.c.arm, func.count(), _count_if(groups.c.spread <= EPSILON)).group_by(
            groups.c.arm
        )
        return {name: (int(n), int(same or 0)) for name, n, same in self.session.execute(query)}

    # -- shared

    def _quantiles(self, durations: Select[Any]) -> list[float | None]:
        """p50, p95, p99 of a query's one column of durations."""
        column = durations.selected_columns[0]
        if self._dialect() == "postgresql":
            query = durations.with_only_columns(
                *(func.percentile_cont(q).within_group(column) for q in LATENCY_QUANTILES)
            )
            return [None if v is None else float(v) for v in self.session.execute(query).one()]
        # SQLite has no percentile function: the one column, read.
        values = [float(value) for value in self.session.scalars(durations)]
        return quantiles(values, LATENCY_QUANTILES)

    def _dialect(self) -> str:
        return self.session.get_bind().dialect.name
