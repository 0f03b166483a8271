"""The decision log as execution uses it: what is stored already and which verdicts are cached
(one query), and one write per chunk for its decisions, their runs' rollups and new cache
entries (on Postgres one statement, put together here from each table's repository)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from sqlalchemy import Integer, bindparam, func, select, union_all
from sqlalchemy.orm import Session

from service.contract import RecordedVerdict
from service.db.models import Decision, VerdictCache
from service.db.repository import json_rows_param
from service.decisions.repository import (
    VERDICT_FIELDS,
    DecisionRepository,
    VerdictCacheRepository,
)
from service.decisions.rollups import rollup_deltas
from service.decisions.run_repository import RunRepository, rollup_ctes, rollup_params
from service.verifiers.base import Verdict

Stored = dict[uuid.UUID, RecordedVerdict]
Cached = dict[str, Verdict]


@cache
def _write_at_once() -> Any:
    """Postgres: a chunk's whole write as one statement (one round trip, one prepared plan):
    the decision rows, then, only if every one of them was new, what they add to the rollups,
    and the new cache entries. Returns the ids inserted."""
    inserted = DecisionRepository.bulk_insert().cte("inserted")
    every_row_new = select(func.count()).select_from(inserted).scalar_subquery() == bindparam(
        "expected", type_=Integer
    )
    cache_entries = VerdictCacheRepository.bulk_insert().cte("cache_entries")
    return select(inserted.c.id).add_cte(*rollup_ctes(every_row_new), cache_entries)


@cache
def _lookup_at_once() -> Any:
    """Decisions by id (parameter ``ids``) and cached verdicts by key (``keys``), one query.
    Built once: building it again for every chunk (the IN lists, the cache key of the
    statement) cost more than running it."""
    return union_all(DecisionRepository.verdicts_of(), VerdictCacheRepository.verdicts_of())


class DecisionLog:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.decisions = DecisionRepository(session)
        self.cache = VerdictCacheRepository(session)
        self.runs = RunRepository(session)

    def lookup(self, ids: Iterable[uuid.UUID], keys: Iterable[str]) -> tuple[Stored, Cached]:
        """Decisions logged already (a redelivered chunk, a retried request), as stored, and
        verdicts of this version on the same inputs, by cache key: one query for both."""
        wanted_ids, wanted_keys = list(ids), sorted(set(keys))
        if not wanted_ids and not wanted_keys:
            return {}, {}
        rows = self.session.connection().execute(
            _lookup_at_once(), {"ids": wanted_ids, "keys": wanted_keys}
        )
        stored: Stored = {}
        cached: Cached = {}
        for decision_id, key, *fields in rows:
            if decision_id is not None:
                stored[decision_id] = RecordedVerdict.model_construct(
                    **dict(zip(VERDICT_FIELDS, fields, strict=True))
                )
            else:
                reward, status, components, details = fields[:4]
                cached[key] = Verdict(reward, status, components, details)
        return stored, cached

    def cached_verdicts(self, keys: Iterable[str]) -> Cached:
        """Verdicts of this version on the same completion and ground truth, by cache key."""
        return {
            key: Verdict(row.reward, row.status, row.components, row.details)  # type: ignore[arg-type]
            for key, row in self.cache.lookup(keys).items()
        }

    def record(
        self, rows: Sequence[dict[str, Any]], cache_entries: Sequence[dict[str, Any]]
    ) -> None:
        """Decision rows (existing ones are left as they are), what the new ones add to their
        runs' rollups (in the same transaction: a summary never counts a row twice or misses
        one), and new verdict cache entries."""
        if not rows and not cache_entries:
            return
        # In key order: two chunks writing the same keys then wait for each other in one
        # order, never deadlocking.
        cache_entries = sorted(cache_entries, key=lambda entry: entry["cache_key"])
        if self.decisions.dialect == "postgresql":
            self._record_at_once(rows, cache_entries)
            return
        inserted = self.decisions.insert_many(rows)
        self.runs.add(rollup_deltas(inserted))
        self.cache.store(cache_entries)

    def _record_at_once(
        self, rows: Sequence[dict[str, Any]], cache_entries: Sequence[dict[str, Any]]
    ) -> None:
        # The rollups as if every row were new; the statement adds them only if so.
        params = {
            "expected": len(rows),
            **json_rows_param(Decision, "d", rows),
            **rollup_params(rollup_deltas(rows)),
            **json_rows_param(VerdictCache, "c", cache_entries),
        }
        inserted = set(self.session.connection().execute(_write_at_once(), params).scalars())
        if len(inserted) != len(rows):
            # Some rows existed (a chunk redelivered while its first delivery was writing): the
            # statement added nothing to the rollups; add what the new rows add.
            self.runs.add(rollup_deltas(row for row in rows if row["id"] in inserted))
