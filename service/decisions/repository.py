"""Every query on the decision log (``decisions``) and on its verdict cache (``verdict_cache``)."""

from __future__ import annotations

import operator
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ColumnElement,
    Float,
    Integer,
    Select,
    String,
    Text,
    Uuid,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    not_,
    null,
    or_,
    select,
    tuple_,
)
from sqlalchemy.orm import aliased

from service.contract import RecordedVerdict
from service.db.models import Decision, Label, VerdictCache
from service.db.repository import Repository, json_insert, sqlite_rows
from service.decisions.filters import DecisionFilters, Position

# The columns of a decision that hold its verdict, as the API answers with them.
VERDICT_FIELDS = tuple(RecordedVerdict.model_fields)
# A span of creation times, first and last included.
Window = tuple[datetime, datetime]
# A row of named columns, by position (a DBAPI row or SQLAlchemy's Row).
PlainRow = Sequence[Any]


class DecisionRepository(Repository):
    def insert_many(self, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """SQLite's write of decision rows (Postgres writes through ``bulk_insert``): rows that
        exist already (a redelivered chunk, a retried request) are left as stored; returns the
        rows actually inserted."""
        if not rows:
            return []
        return sqlite_rows(Decision, self.session).insert_returning(self.session, rows, "id")

    @staticmethod
    def verdicts_of() -> Select[Any]:
        """(id, no cache key, the verdict's fields) of the decisions whose ids are the expanding
        parameter ``ids``: what a stored decision answers with (a redelivered chunk, a retried
        request). No tenant filter: a decision id derives from its tenant. Build it once."""
        d = Decision.__table__.c
        return select(
            d.id, cast(null(), String).label("cache_key"), *(d[name] for name in VERDICT_FIELDS)
        ).where(d.id.in_(bindparam("ids", expanding=True)))

    @staticmethod
    def bulk_insert() -> Any:
        """Postgres: decision rows given as JSON (``json_rows_param(Decision, "d", rows)``),
        existing ones left as they are, returning the ids inserted. Built once per call."""
        return (
            json_insert(Decision, "d").on_conflict_do_nothing().returning(Decision.__table__.c.id)
        )

    def get(self, decision_id: uuid.UUID) -> Decision | None:
        query = self._select(Decision).where(Decision.id == decision_id)
        return self.session.scalars(query).first()

    def find(
        self,
        filters: DecisionFilters,
        *,
        after: Position | None = None,
        limit: int = 100,
        written: Window | None = None,
    ) -> list[Decision]:
        """Newest first; ``after`` is the (created_at, id) of the last row seen; ``written``
        bounds created_at (inclusive) where the caller knows more than the planner can."""
        return list(self.session.scalars(self._page(filters, after, limit, written)))

    def find_rows(
        self,
        filters: DecisionFilters,
        columns: Sequence[str],
        *,
        after: Position | None = None,
        limit: int = 1000,
        written: Window | None = None,
    ) -> list[PlainRow]:
        """As ``find``, as plain rows of the named columns in that order, JSON columns as their
        JSON text: what the export sends, read without building ORM objects or parsing JSON it
        would encode again."""
        table = Decision.__table__.c
        wanted = [
            cast(table[name], Text).label(name)
            if isinstance(table[name].type, JSON)
            else table[name]
            for name in columns
        ]
        query = self._page(filters, after, limit, written).with_only_columns(*wanted)
        result = self.session.connection().execute(query)
        if self.session.get_bind().dialect.name == "postgresql":
            # psycopg hands back these columns' Python types already (UUID, aware datetime,
            # bool); the rows as fetched skip SQLAlchemy's per-row work, a quarter of a read.
            rows = list(result.cursor.fetchall())
            result.close()
            return rows
        # One fetch of the whole page (iterating fetches a row at a time, 40% slower).
        return list(result.all())

    def _page(
        self, f: DecisionFilters, after: Position | None, limit: int, written: Window | None
    ) -> Select[Any]:
        query = self._select(Decision)
        if written is not None:
            query = query.where(Decision.created_at.between(*written))
        equal: dict[Any, Any] = {
            Decision.run_id: f.run_id,
            Decision.step: f.step,
            Decision.verifier_name: f.verifier,
            Decision.verifier_version: f.version,
            Decision.status: f.status,
            Decision.group_id: f.group_id,
            Decision.request_id: f.request_id,
            Decision.cached: f.cached,
        }
        for column, value in equal.items():
            if value is not None:
                query = query.where(column == value)
        bounds: tuple[tuple[Any, Callable[[Any, Any], Any], Any], ...] = (
            (Decision.step, operator.ge, f.step_from),
            (Decision.step, operator.le, f.step_to),
            (Decision.created_at, operator.ge, f.created_after),
            (Decision.created_at, operator.lt, f.created_before),
            (Decision.duration_ms, operator.ge, f.min_duration_ms),
            (Decision.duration_ms, operator.le, f.max_duration_ms),
        )
        for column, compare, bound in bounds:
            if bound is not None:
                query = query.where(compare(column, bound))
        if f.flagged is not None:
            # The bare column, as the partial index on flagged decisions states it.
            query = query.where(Decision.flagged if f.flagged else not_(Decision.flagged))
        if f.q is not None:
            # ILIKE on Postgres (where a trigram index may serve it), lower() LIKE elsewhere;
            # the text is taken literally: its % _ and \ are escaped.
            literal_q = f.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            query = query.where(self._extracted().ilike(f"%{literal_q}%", escape="\\"))
        if f.labelled is not None:
            labelled = self._on_labelled_input()
            query = query.where(labelled if f.labelled else not_(labelled))
        if f.disagrees_with_label is not None:
            disagrees = self._on_labelled_input(contradicted=True)
            query = query.where(disagrees if f.disagrees_with_label else not_(disagrees))
        if after is not None:
            created, last_id = after
            # The first bound is what an index range can use; the second breaks ties by id.
            query = query.where(
                Decision.created_at <= created,
                or_(
                    Decision.created_at < created,
                    and_(Decision.created_at == created, Decision.id < last_id),
                ),
            )
        return query.order_by(Decision.created_at.desc(), Decision.id.desc()).limit(limit)

    def _extracted(self) -> ColumnElement[str]:
        """The extracted answer as text. On Postgres spelled as the trigram index of migration
        0007 is (the key a literal, not a parameter): a prepared statement's generic plan
        matches an index expression only if it is the same text."""
        if self.session.get_bind().dialect.name == "postgresql":
            return Decision.details.op("->>", return_type=Text)(literal_column("'extracted'"))
        return Decision.details["extracted"].as_string()

    def _on_labelled_input(self, *, contradicted: bool = False) -> ColumnElement[bool]:
        """The decision's input (tenant, verifier, completion and ground truth: those of the
        labelled decision) has a label; ``contradicted``: one whose verdict is the opposite of
        the decision's correct or incorrect.

        An uncorrelated IN over the labels' inputs, not a correlated EXISTS: the database reads
        the (few) labels once and finds their decisions by index (planned as a join), where an
        EXISTS with the decision's status in it was planned as a scan of the whole run."""
        labelled = aliased(Decision)
        matched: list[Any] = [
            Decision.tenant_id,
            Decision.verifier_name,
            Decision.completion_hash,
            Decision.ground_truth_hash,
        ]
        inputs: list[Any] = [
            Label.tenant_id,
            Label.verifier_name,
            labelled.completion_hash,
            labelled.ground_truth_hash,
        ]
        if contradicted:
            matched.append(Decision.status)
            inputs.append(case((Label.verdict == "correct", "incorrect"), else_="correct"))
        labels = self._select(Label).with_only_columns(*inputs)
        labels = labels.join(labelled, labelled.id == Label.decision_id)
        return tuple_(*matched).in_(labels)

    def stats(
        self,
        *,
        run_id: str | None = None,
        verifier: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Counts, mean reward, cache hits and mean duration per verifier version and status."""
        query = (
            self._select(Decision)
            .with_only_columns(
                Decision.verifier_name,
                Decision.verifier_version,
                Decision.status,
                func.count(),
                func.avg(Decision.reward),
                func.sum(func.cast(Decision.cached, Integer)),
                func.avg(Decision.duration_ms),
            )
            .group_by(Decision.verifier_name, Decision.verifier_version, Decision.status)
        )
        if run_id is not None:
            query = query.where(Decision.run_id == run_id)
        if verifier is not None:
            query = query.where(Decision.verifier_name == verifier)
        if created_after is not None:
            query = query.where(Decision.created_at >= created_after)
        if created_before is not None:
            query = query.where(Decision.created_at < created_before)
        rows = self.session.execute(
            query.order_by(Decision.verifier_name, Decision.verifier_version, Decision.status)
        )
        return [
            {
                "verifier": name,
                "version": version,
                "status": status,
                "count": int(count),
                "mean_reward": None if mean is None else float(mean),
                "cached": int(cached or 0),
                "mean_duration_ms": float(duration or 0.0),
            }
            for name, version, status, count, mean, cached, duration in rows
        ]


class VerdictCacheRepository(Repository):
    @staticmethod
    def verdicts_of() -> Select[Any]:
        """(no id, cache key, the verdict's fields) of the cached verdicts whose keys are the
        expanding parameter ``keys``, as ``DecisionRepository.verdicts_of`` has them (a verdict
        from the cache is cached). No tenant filter: a cache key hashes its tenant. Build it
        once."""
        c = VerdictCache.__table__.c
        return select(
            cast(null(), Uuid).label("id"),
            c.cache_key,
            c.reward,
            c.status,
            c.components,
            c.details,
            literal(True, Boolean).label("cached"),
            literal(0.0, Float).label("duration_ms"),
        ).where(c.cache_key.in_(bindparam("keys", expanding=True)))

    @staticmethod
    def bulk_insert() -> Any:
        """Postgres: cache entries given as JSON (``json_rows_param(VerdictCache, "c", …)``),
        existing keys left as they are."""
        return json_insert(VerdictCache, "c").on_conflict_do_nothing()

    def lookup(self, keys: Iterable[str]) -> dict[str, VerdictCache]:
        wanted = list(set(keys))
        if not wanted:
            return {}
        query = self._select(VerdictCache).where(VerdictCache.cache_key.in_(wanted))
        return {row.cache_key: row for row in self.session.scalars(query)}

    def store(self, entries: Sequence[dict[str, Any]]) -> None:
        """SQLite's write of new cache entries (Postgres writes through ``bulk_insert``)."""
        if entries:
            sqlite_rows(VerdictCache, self.session).insert(self.session, entries)


LATENCY_QUANTILES = (0.5, 0.95, 0.99)


def quantiles(values: list[float], qs: tuple[float, ...]) -> list[float | None]:
    """Linear-interpolated quantiles (Postgres's percentile_cont) of unsorted values."""
    if not values:
        return [None for _ in qs]
    ordered = sorted(values)
    found: list[float | None] = []
    for q in qs:
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        found.append(ordered[low] + (ordered[high] - ordered[low]) * (position - low))
    return found


class LabelRepository(Repository):
    """Every query on labels (``labels``): one label per tenant, verifier and input."""

    def upsert(self, row: dict[str, Any]) -> Label:
        query = self._select(Label).where(
            Label.tenant_id == row["tenant_id"],
            Label.verifier_name == row["verifier_name"],
            Label.input_key == row["input_key"],
        )
        label = self.session.scalars(query).first()
        if label is None:
            label = Label(**row)
            self.session.add(label)
        else:
            for key, value in row.items():
                setattr(label, key, value)
        self.session.flush()
        return label

    def for_input(self, verifier_name: str, input_key: str) -> Label | None:
        query = self._select(Label).where(
            Label.verifier_name == verifier_name, Label.input_key == input_key
        )
        return self.session.scalars(query).first()

    def for_verifier(self, verifier_name: str, limit: int) -> list[tuple[Label, Decision]]:
        """The verifier's labels with the decision each was made on (its stored input)."""
        query = (
            self._select(Label)
            .add_columns(Decision)
            .join(Decision, Decision.id == Label.decision_id)
            .where(Label.verifier_name == verifier_name)
            .order_by(Label.id)
            .limit(limit)
        )
        return [(label, decision) for label, decision in self.session.execute(query)]
