"""HTTP routes of experiments; the rules live in ExperimentService."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from service.auth.dependencies import AuditReader, VerifierAdmin
from service.db.dependencies import SessionDep
from service.dependencies import SettingsDep
from service.errors import ERROR_RESPONSES
from service.experiments.report import CURSOR_PATTERN
from service.experiments.schemas import (
    ExperimentIn,
    ExperimentOut,
    ExperimentReport,
    ExperimentState,
)
from service.experiments.service import ExperimentService

router = APIRouter(prefix="/v1/experiments", tags=["experiments"], responses=ERROR_RESPONSES)

CursorParam = Annotated[
    str | None, Query(pattern=CURSOR_PATTERN, description="next_cursor of the previous page.")
]
PageLimit = Annotated[int, Query(ge=1, le=1000)]


def _forget(request: Request, tenant_id: str) -> None:
    # This process sees the change at once; other API processes within a second.
    forget = getattr(request.app.state, "forget_experiments", None)
    if forget is not None:
        forget(tenant_id)


@router.post("", response_model=ExperimentOut, status_code=status.HTTP_201_CREATED)
def create_experiment(
    body: ExperimentIn,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    caller: VerifierAdmin,
) -> ExperimentOut:
    """Start a shadow or split experiment of two versions of a verifier on your traffic."""
    created = ExperimentService(session, caller.tenant_id, settings.operator_tenant).create(
        body, caller
    )
    session.commit()
    _forget(request, caller.tenant_id)
    return created


@router.get("", response_model=list[ExperimentOut])
def list_experiments(
    session: SessionDep,
    settings: SettingsDep,
    caller: AuditReader,
    state: ExperimentState | None = None,
    limit: PageLimit = 100,
) -> list[ExperimentOut]:
    """Your experiments, newest first."""
    return ExperimentService(session, caller.tenant_id, settings.operator_tenant).find(state, limit)


@router.get("/{experiment_id}", response_model=ExperimentOut)
def get_experiment(
    experiment_id: uuid.UUID, session: SessionDep, settings: SettingsDep, caller: AuditReader
) -> ExperimentOut:
    """One experiment, with its shadow counters (items sent to the shadow queue, dropped)."""
    return ExperimentService(session, caller.tenant_id, settings.operator_tenant).get(experiment_id)


@router.post("/{experiment_id}/stop", response_model=ExperimentOut)
def stop_experiment(
    experiment_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    caller: VerifierAdmin,
) -> ExperimentOut:
    """Stop an experiment: its traffic goes back to the control alone."""
    stopped = ExperimentService(session, caller.tenant_id, settings.operator_tenant).stop(
        experiment_id
    )
    session.commit()
    _forget(request, caller.tenant_id)
    return stopped


@router.get("/{experiment_id}/report", response_model=ExperimentReport)
def experiment_report(
    experiment_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    caller: AuditReader,
    cursor: CursorParam = None,
    limit: PageLimit = 50,
) -> ExperimentReport:
    """Items per arm, agreement, status confusion, reward delta with its 95% interval, the
    effect on GRPO's advantages, latency and failure rates per arm, and the disagreements
    (pageable: follow next_cursor)."""
    return ExperimentService(session, caller.tenant_id, settings.operator_tenant).report(
        experiment_id, cursor, limit
    )
