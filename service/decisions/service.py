"""Reading the decision log on behalf of a tenant (the audit routes, the export and the
dashboard): every query they make goes through here to the tenant's repository."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from service.db.models import Decision
from service.decisions.filters import DecisionFilters, Position
from service.decisions.repository import DecisionRepository, PlainRow, Window
from service.decisions.run_repository import RunRepository
from service.errors import NotFound


class AuditService:
    def __init__(self, session: Session, tenant_id: str) -> None:
        self.decisions = DecisionRepository(session, tenant_id)
        self.runs = RunRepository(session, tenant_id)

    def _written(self, filters: DecisionFilters) -> tuple[bool, Window | None]:
        """Whether anything can match, and when the decisions of a step range of a run were
        written: a run's steps follow each other in time, but the database cannot know that, and
        walked the whole run newest first to reach an early range. The run's rollups say when
        its steps were written, so the walk starts and ends there."""
        if filters.run_id is None or (filters.step_from is None and filters.step_to is None):
            return True, None
        window = self.runs.step_window(filters.run_id, filters.step_from, filters.step_to)
        return window is not None, window

    def get(self, decision_id: uuid.UUID) -> Decision:
        row = self.decisions.get(decision_id)
        if row is None:
            raise NotFound(f"no decision {decision_id}")
        return row

    def find(
        self, *, after: Position | None = None, limit: int = 100, **filters: Any
    ) -> list[Decision]:
        """Newest first; ``after`` is the (created_at, id) of the last decision seen; filters
        by name (the fields of ``DecisionFilters``)."""
        return self.matching(DecisionFilters(**filters), after=after, limit=limit)

    def matching(
        self, filters: DecisionFilters, *, after: Position | None = None, limit: int = 100
    ) -> list[Decision]:
        any_match, written = self._written(filters)
        if not any_match:
            return []
        return self.decisions.find(filters, after=after, limit=limit, written=written)

    def find_rows(
        self,
        filters: DecisionFilters,
        columns: Sequence[str],
        *,
        after: Position | None,
        limit: int,
    ) -> list[PlainRow]:
        """As ``find``, as plain rows of the named columns (JSON ones as text): what the export
        reads, a batch at a time."""
        any_match, written = self._written(filters)
        if not any_match:
            return []
        return self.decisions.find_rows(filters, columns, after=after, limit=limit, written=written)

    def stats(
        self,
        *,
        run_id: str | None = None,
        verifier: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Counts, mean reward, cache hits and mean duration per verifier version and status."""
        return self.decisions.stats(
            run_id=run_id,
            verifier=verifier,
            created_after=created_after,
            created_before=created_before,
        )
