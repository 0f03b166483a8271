"""Every query on the run rollups (``run_rollups``, ``run_step_rollups``, ``run_series_rollups``):
added to as decisions are written, read by the runs list and a run's summary and health.

A summary reads a few rows per step of its run, never its decisions: it costs the same at a
thousand decisions as at a million (bench/audit_scale.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Float,
    Integer,
    and_,
    case,
    cast,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite

from service.db.base import Base
from service.db.models import NO_STEP, Decision, RunRollup, RunSeriesRollup, RunStepRollup
from service.db.repository import Repository, json_insert, json_rows_param, sqlite_rows
from service.decisions.rollups import GROUP, LATENCY, RollupDeltas


def _lesser(stored: Any, new: Any) -> ColumnElement[Any]:
    return case((and_(new.is_not(None), or_(stored.is_(None), new < stored)), new), else_=stored)


def _greater(stored: Any, new: Any) -> ColumnElement[Any]:
    return case((and_(new.is_not(None), or_(stored.is_(None), new > stored)), new), else_=stored)


# The columns that add up when two chunks' rollups of the same key merge.
RUN_SUMS = ("decisions", "scored", "reward_sum")
STEP_SUMS = (
    *RUN_SUMS,
    "reward_squares",
    "cached",
    "flagged",
    "duration_sum",
    "chars_sum",
)
SERIES_SUMS = ("n", "total", "squares")


def _merge_runs(t: Any, new: Any) -> dict[str, Any]:
    return {
        **{name: t.c[name] + new[name] for name in RUN_SUMS},
        "first_step": _lesser(t.c.first_step, new.first_step),
        "last_step": _greater(t.c.last_step, new.last_step),
        "first_seen": _lesser(t.c.first_seen, new.first_seen),
        "last_seen": _greater(t.c.last_seen, new.last_seen),
    }


def _merge_steps(t: Any, new: Any) -> dict[str, Any]:
    return {
        **{name: t.c[name] + new[name] for name in STEP_SUMS},
        "chars_max": _greater(t.c.chars_max, new.chars_max),
        "first_seen": _lesser(t.c.first_seen, new.first_seen),
        "last_seen": _greater(t.c.last_seen, new.last_seen),
    }


def _merge_series(t: Any, new: Any) -> dict[str, Any]:
    return {
        **{name: t.c[name] + new[name] for name in SERIES_SUMS},
        "low": _lesser(t.c.low, new.low),
        "high": _greater(t.c.high, new.high),
    }


# The rollup tables in the order every writer locks them (each one's rows in key order), with
# the RollupDeltas field that holds their rows, their parameters' prefix and how a key's
# stored row and a delta merge.
ROLLUPS: tuple[tuple[type[Base], str, Callable[[Any, Any], dict[str, Any]]], ...] = (
    (RunRollup, "runs", _merge_runs),
    (RunStepRollup, "steps", _merge_steps),
    (RunSeriesRollup, "series", _merge_series),
)


def _merging(
    statement: Any, model: type[Base], merged: Callable[[Any, Any], dict[str, Any]]
) -> Any:
    table = model.__table__
    return statement.on_conflict_do_update(
        index_elements=list(table.primary_key.columns),  # type: ignore[attr-defined]
        set_=merged(table, statement.excluded),
    )


@cache
def _upsert(model: type[Base], dialect: str) -> Any:
    """The upsert of one rollup table, executed with a list of rows; built once: building its
    merge expressions cost more CPU than the database spent running it (SQLite)."""
    merged = next(merge for m, _, merge in ROLLUPS if m is model)
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return _merging(insert(model.__table__), model, merged)  # type: ignore[arg-type]


def rollup_ctes(where: Any) -> list[Any]:
    """Postgres: each rollup table's upsert of its deltas given as JSON (``rollup_params``),
    while ``where`` holds, as CTEs of one statement. Each waits for the one before it (its
    condition reads the rows that one wrote), so the tables are locked in the same order as
    ``RunRepository.add`` locks them and concurrent writers cannot deadlock."""
    ctes: list[Any] = []
    for model, field, merged in ROLLUPS:
        gate = where
        if ctes:
            written = select(func.count()).select_from(ctes[-1]).scalar_subquery()
            gate = and_(where, written >= 0)
        statement = _merging(json_insert(model, field, gate), model, merged)
        key = next(iter(model.__table__.primary_key.columns))  # type: ignore[attr-defined]
        ctes.append(statement.returning(key).cte(f"{field}_rollups"))
    return ctes


def rollup_params(deltas: RollupDeltas) -> dict[str, Any]:
    """The parameters of ``rollup_ctes`` for these deltas."""
    params: dict[str, Any] = {}
    for model, field, _ in ROLLUPS:
        params.update(json_rows_param(model, field, getattr(deltas, field)))
    return params


class RunRepository(Repository):
    def add(self, deltas: RollupDeltas) -> None:
        """Add new decisions' deltas to the rollups (rows created on first sight)."""
        for model, field, _ in ROLLUPS:
            rows = getattr(deltas, field)
            if not rows:
                continue
            upsert = _upsert(model, self.dialect)
            if self.dialect == "sqlite":
                sqlite_rows(model, self.session).execute(self.session, upsert, rows)
            else:
                self.session.connection().execute(upsert, rows)

    def runs(self, limit: int, before: datetime | None = None) -> list[RunRollup]:
        """Runs seen, most recently active first."""
        query = self._select(RunRollup)
        if before is not None:
            query = query.where(RunRollup.last_seen < before)
        query = query.order_by(RunRollup.last_seen.desc(), RunRollup.run_id).limit(limit)
        return list(self.session.scalars(query))

    def step_rows(self, run_id: str) -> list[Any]:
        """Per step (over its versions): count, scored, reward sum and sum of squares, cached,
        flagged, duration sum, completion length sum and max, first seen."""
        r = RunStepRollup
        query = (
            self._select(r)
            .where(r.run_id == run_id)
            .with_only_columns(
                r.step,
                func.sum(r.decisions),
                func.sum(r.scored),
                func.sum(r.reward_sum),
                func.sum(r.reward_squares),
                func.sum(r.cached),
                func.sum(r.flagged),
                func.sum(r.duration_sum),
                func.sum(r.chars_sum),
                func.max(r.chars_max),
                func.min(r.first_seen),
            )
            .group_by(r.step)
            .order_by(r.step)
        )
        return list(self.session.execute(query))

    def series_rows(self, run_id: str, kinds: Sequence[str]) -> list[Any]:
        """The series of these kinds of every step: (step, kind, key, n, total, squares)."""
        s = RunSeriesRollup
        query = (
            self._select(s)
            .where(s.run_id == run_id, s.kind.in_(kinds))
            .with_only_columns(s.step, s.kind, s.key, s.n, s.total, s.squares)
        )
        return list(self.session.connection().execute(query).all())

    def group_rows(self, run_id: str) -> list[Any]:
        """Per step: groups, groups none of whose scored members is correct, groups all of
        whose are, and groups with one reward for every member."""
        s = RunSeriesRollup

        def count(condition: ColumnElement[bool]) -> Any:
            return func.sum(case((condition, 1), else_=0))

        query = (
            self._select(s)
            .where(s.run_id == run_id, s.kind == GROUP)
            .with_only_columns(
                s.step,
                func.count(),
                count(s.total == 0),
                count(and_(s.total > 0, s.total == s.n)),
                count(s.low == s.high),
            )
            .group_by(s.step)
        )
        return list(self.session.connection().execute(query).all())

    def latency_rows(self, run_id: str, qs: Sequence[float]) -> list[Any]:
        """Per step, the latency buckets holding the ranks that the quantiles ``qs`` fall
        between (a few of the dozens a step has), each as (step, first rank, n, lowest,
        highest, the step's count)."""
        s = RunSeriesRollup
        bucket = cast(s.key, Integer)
        ranked = (
            self._select(s)
            .where(s.run_id == run_id, s.kind == LATENCY)
            .with_only_columns(
                s.step,
                s.n,
                s.low,
                s.high,
                # Integers, not the numeric Postgres sums bigints into: cheaper to compare.
                (
                    cast(func.sum(s.n).over(partition_by=s.step, order_by=bucket), BigInteger) - s.n
                ).label("first"),
                cast(func.sum(s.n).over(partition_by=s.step), BigInteger).label("total"),
            )
            .subquery()
        )
        near = []
        for q in qs:
            # floor(q * (total - 1)) and the rank after it; one rank of slack either side, so
            # the database's rounding of the product can never leave a needed bucket out.
            rank = cast(literal(q, Float) * (ranked.c.total - 1), Integer)
            near.append(and_(ranked.c.first <= rank + 2, ranked.c.first + ranked.c.n >= rank))
        query = (
            select(
                ranked.c.step,
                ranked.c.first,
                ranked.c.n,
                ranked.c.low,
                ranked.c.high,
                ranked.c.total,
            )
            .where(or_(*near))
            .order_by(ranked.c.step, ranked.c.first)
        )
        return list(self.session.connection().execute(query).all())

    def step_window(
        self, run_id: str, step_from: int | None, step_to: int | None
    ) -> tuple[datetime, datetime] | None:
        """When the run's decisions of these steps were written (first, last); None if none."""
        r = RunStepRollup
        query = (
            self._select(r)
            .where(r.run_id == run_id, r.step >= (step_from or 0))
            .with_only_columns(func.min(r.first_seen), func.max(r.last_seen))
        )
        if step_to is not None:
            query = query.where(r.step <= step_to)
        first, last = self.session.execute(query).one()
        return None if first is None else (first, last)

    def version_rows(self, run_id: str) -> list[Any]:
        """Each verifier version the run used: its first and last step and how many items."""
        r = RunStepRollup
        step = case((r.step != NO_STEP, r.step))
        query = (
            self._select(r)
            .where(r.run_id == run_id)
            .with_only_columns(
                r.verifier_name,
                r.verifier_version,
                r.version_hash,
                func.min(step),
                func.max(step),
                func.sum(r.decisions),
            )
            .group_by(r.verifier_name, r.verifier_version, r.version_hash)
            .order_by(func.min(step), r.verifier_name, r.verifier_version)
        )
        return list(self.session.execute(query))

    def rejected_rows(self, run_id: str, limit: int) -> list[Any]:
        """The run's most recent rejected decisions: (id, extracted answer as text, ground
        truth) only."""
        extracted = Decision.details["extracted"].as_string()
        query = (
            self._select(Decision)
            .where(Decision.run_id == run_id, Decision.status == "incorrect")
            .with_only_columns(Decision.id, extracted, Decision.ground_truth)
            .order_by(Decision.created_at.desc())
            .limit(limit)
        )
        return list(self.session.execute(query))
