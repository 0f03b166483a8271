"""Experiments: the rules for starting, listing, stopping and reporting them."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from service.auth.service import Principal
from service.catalog.builtin import UnknownVerifier
from service.catalog.service import CatalogService
from service.db.models import Experiment
from service.errors import Conflict, InvalidRequest, NotFound
from service.experiments.assignment import filters_overlap
from service.experiments.report import ReportBuilder, decode_cursor
from service.experiments.repository import ExperimentRepository
from service.experiments.schemas import (
    ExperimentFilter,
    ExperimentIn,
    ExperimentOut,
    ExperimentReport,
    ShadowCounts,
)
from service.verifiers.registry import VerifierVersionSpec

DEFAULT_SPLIT = 0.5


def experiment_out(row: Experiment) -> ExperimentOut:
    return ExperimentOut(
        id=row.id,
        name=row.name,
        verifier=row.verifier_name,
        control=row.control_version,
        treatment=row.treatment_version,
        mode=row.mode,  # type: ignore[arg-type]
        split=row.split,
        filter=ExperimentFilter(run_id=row.run_id),
        state=row.state,  # type: ignore[arg-type]
        shadow=(
            ShadowCounts(sent=row.shadow_sent, dropped=row.shadow_dropped)
            if row.mode == "shadow"
            else None
        ),
        created_at=row.created_at,
        stopped_at=row.stopped_at,
    )


class ExperimentService:
    def __init__(self, session: Session, tenant_id: str, operator_tenant: str) -> None:
        self.session = session
        self.tenant_id = tenant_id
        self.experiments = ExperimentRepository(session, tenant_id)
        self.catalog = CatalogService(session, operator_tenant)

    def _version(self, field: str, name: str, version: str) -> VerifierVersionSpec:
        try:
            return self.catalog.resolve(f"{name}@{version}")
        except UnknownVerifier as exc:
            raise InvalidRequest(f"{field}: {exc}", code="unknown_version") from exc

    def create(self, body: ExperimentIn, caller: Principal) -> ExperimentOut:
        """Start an experiment: both versions exist, differ, and no running experiment of the
        tenant on that verifier takes the same traffic (409 naming it)."""
        control = self._version("control", body.verifier, body.control)
        treatment = self._version("treatment", body.verifier, body.treatment)
        if control.version_hash == treatment.version_hash:
            raise InvalidRequest(
                f"treatment: {body.verifier}@{body.treatment} is the same version as the control",
                code="same_version",
            )
        self.experiments.lock_verifier(body.verifier)
        for running in self.experiments.running(body.verifier):
            if filters_overlap(running.run_id, body.filter.run_id):
                raise Conflict(
                    f"filter: experiment {running.id} ({running.name!r}) already takes this "
                    f"traffic of {body.verifier}; stop it first",
                    code="experiment_overlaps",
                    experiment_id=str(running.id),
                )
        row = self.experiments.add(
            Experiment(
                id=uuid.uuid4(),
                tenant_id=self.tenant_id,
                name=body.name,
                verifier_name=body.verifier,
                control_version=control.version,
                control_hash=control.version_hash,
                treatment_version=treatment.version,
                treatment_hash=treatment.version_hash,
                mode=body.mode,
                split=(body.split or DEFAULT_SPLIT) if body.mode == "split" else None,
                run_id=body.filter.run_id,
                state="running",
                shadow_sent=0,
                shadow_dropped=0,
                key_id=caller.key_id,
            )
        )
        return experiment_out(row)

    def _get(self, experiment_id: uuid.UUID) -> Experiment:
        row = self.experiments.get(experiment_id)
        if row is None:
            raise NotFound(f"no experiment {experiment_id}")
        return row

    def get(self, experiment_id: uuid.UUID) -> ExperimentOut:
        return experiment_out(self._get(experiment_id))

    def find(self, state: str | None, limit: int) -> list[ExperimentOut]:
        return [experiment_out(row) for row in self.experiments.find(state, limit)]

    def stop(self, experiment_id: uuid.UUID) -> ExperimentOut:
        """Stop taking traffic (stopping a stopped experiment changes nothing)."""
        row = self._get(experiment_id)
        self.experiments.stop(row)
        return experiment_out(row)

    def report(self, experiment_id: uuid.UUID, cursor: str | None, limit: int) -> ExperimentReport:
        row = self._get(experiment_id)
        builder = ReportBuilder(self.session, self.tenant_id)
        versions = (row.control_version, row.treatment_version)
        if row.mode == "shadow":
            pairs = builder.comparisons.shadow_pairs(row.id)
            report = builder.paired("shadow", versions, pairs, decode_cursor(cursor), limit)
        else:
            report = builder.split(row.id, versions)
        return ExperimentReport(**dict(report), experiment=experiment_out(row))
