"""The decision log as execution uses it: what is stored already, which verdicts are cached, and
one write per chunk for its decisions, their runs' rollups and new cache entries."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from service.contract import RecordedVerdict
from service.decisions.repository import DecisionRepository, VerdictCacheRepository
from service.decisions.rollups import rollup_deltas
from service.decisions.run_repository import RunRepository
from service.verifiers.base import Verdict

_VERDICT_FIELDS = tuple(RecordedVerdict.model_fields)


class DecisionLog:
    def __init__(self, session: Session) -> None:
        self.decisions = DecisionRepository(session)
        self.cache = VerdictCacheRepository(session)
        self.runs = RunRepository(session)

    def stored(self, ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, RecordedVerdict]:
        """Decisions logged already (a redelivered chunk, a retried request), as stored."""
        return {
            row.id: RecordedVerdict.model_construct(
                **{name: getattr(row, name) for name in _VERDICT_FIELDS}
            )
            for row in self.decisions.get_many(ids)
        }

    def cached_verdicts(self, keys: Iterable[str]) -> dict[str, Verdict]:
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
        inserted = self.decisions.insert_many(rows)
        self.runs.add(rollup_deltas(inserted))
        self.cache.store(cache_entries)
