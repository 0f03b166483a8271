"""Every query on experiments (``experiments``), their split assignments
(``experiment_assignments``) and their shadow decisions (``shadow_decisions``)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select, update

from service.db.base import utcnow
from service.db.models import Experiment, ExperimentAssignment, ShadowDecision
from service.db.repository import Repository


class ExperimentRepository(Repository):
    def add(self, experiment: Experiment) -> Experiment:
        self.session.add(experiment)
        self.session.flush()
        return experiment

    def get(self, experiment_id: uuid.UUID) -> Experiment | None:
        query = self._select(Experiment).where(Experiment.id == experiment_id)
        return self.session.scalars(query).first()

    def find(self, state: str | None, limit: int) -> list[Experiment]:
        """Newest first."""
        query = self._select(Experiment)
        if state is not None:
            query = query.where(Experiment.state == state)
        query = query.order_by(Experiment.created_at.desc(), Experiment.id.desc()).limit(limit)
        return list(self.session.scalars(query))

    def running(self, verifier: str | None = None) -> list[Experiment]:
        """Running experiments, oldest first (the oldest takes precedence)."""
        query = self._select(Experiment).where(Experiment.state == "running")
        if verifier is not None:
            query = query.where(Experiment.verifier_name == verifier)
        return list(self.session.scalars(query.order_by(Experiment.created_at, Experiment.id)))

    def lock_verifier(self, verifier: str) -> None:
        """Serialise experiment creation per tenant and verifier until the transaction ends, so
        two overlapping experiments cannot both pass the check (Postgres; the embedded SQLite
        database has one writer at a time)."""
        if self.session.get_bind().dialect.name == "postgresql":
            key = f"rlvr-experiments/{self.tenant_id}/{verifier}"
            self.session.execute(select(func.pg_advisory_xact_lock(func.hashtext(key))))

    def stop(self, experiment: Experiment) -> None:
        if experiment.state == "running":
            experiment.state, experiment.stopped_at = "stopped", utcnow()
            self.session.flush()

    def add_shadow_counts(self, counts: Mapping[uuid.UUID, tuple[int, int]]) -> None:
        """Add shadow items sent and dropped to each experiment's counters."""
        for experiment_id, (sent, dropped) in counts.items():
            statement = (
                update(Experiment)
                .where(Experiment.id == experiment_id)
                .values(
                    shadow_sent=Experiment.shadow_sent + sent,
                    shadow_dropped=Experiment.shadow_dropped + dropped,
                )
            )
            self.session.execute(statement)


class AssignmentRepository(Repository):
    def insert_many(self, rows: Sequence[dict[str, Any]]) -> None:
        """A retried request assigns the same decisions again: those rows are kept as they are."""
        self._insert_ignoring_conflicts(ExperimentAssignment, rows)


class ShadowDecisionRepository(Repository):
    def insert_many(self, rows: Sequence[dict[str, Any]]) -> None:
        self._insert_ignoring_conflicts(ShadowDecision, rows)
