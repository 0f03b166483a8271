"""HTTP routes of replays; the rules live in ReplayService, the work on the workers."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from service.auth.dependencies import AuditReader, VerifierAdmin
from service.db.dependencies import SessionDep
from service.dependencies import SettingsDep
from service.errors import ERROR_RESPONSES
from service.experiments.replays import TABLE_CURSOR_PATTERN, ReplayKicker, ReplayService
from service.experiments.report import CURSOR_PATTERN
from service.experiments.schemas import ReplayIn, ReplayOut, ReplayTable, Report

router = APIRouter(prefix="/v1/replays", tags=["replays"], responses=ERROR_RESPONSES)

PageLimit = Annotated[int, Query(ge=1, le=1000)]


def _kicker(request: Request) -> ReplayKicker:
    kicker: ReplayKicker = request.app.state.background
    return kicker


@router.post("", response_model=ReplayOut, status_code=status.HTTP_202_ACCEPTED)
def create_replay(
    body: ReplayIn,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    caller: VerifierAdmin,
) -> ReplayOut:
    """Re-score the logged decisions a filter names with one or more versions, on the
    workers; follow its progress with GET /v1/replays/{id}."""
    created = ReplayService(session, caller.tenant_id, settings.operator_tenant).create(
        body, caller, settings.replay_max_decisions
    )
    # Committed before the workers are told: they read the row.
    session.commit()
    _kicker(request).kick_replay(created.id)
    return created


@router.get("", response_model=list[ReplayOut])
def list_replays(
    session: SessionDep, settings: SettingsDep, caller: AuditReader, limit: PageLimit = 100
) -> list[ReplayOut]:
    """Your replays, newest first, with their progress."""
    return ReplayService(session, caller.tenant_id, settings.operator_tenant).find(limit)


@router.get("/{replay_id}", response_model=ReplayOut)
def get_replay(
    replay_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    caller: AuditReader,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> ReplayOut:
    """Progress (done/total, rate, ETA, state); once done, one report per target (the logged
    decision as control, the target as treatment) and the first page of the table."""
    return ReplayService(session, caller.tenant_id, settings.operator_tenant).get(replay_id, limit)


@router.get("/{replay_id}/report", response_model=Report)
def replay_report(
    replay_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    caller: AuditReader,
    target: Annotated[int, Query(ge=0, le=64)] = 0,
    cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
    limit: PageLimit = 50,
) -> Report:
    """One target's report so far; its disagreements page with next_cursor."""
    return ReplayService(session, caller.tenant_id, settings.operator_tenant).report(
        replay_id, target, cursor, limit
    )


@router.get("/{replay_id}/table", response_model=ReplayTable)
def replay_table(
    replay_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    caller: AuditReader,
    cursor: Annotated[str | None, Query(pattern=TABLE_CURSOR_PATTERN)] = None,
    limit: PageLimit = 100,
) -> ReplayTable:
    """Each source decision across the replay's versions (status and reward), paged."""
    return ReplayService(session, caller.tenant_id, settings.operator_tenant).table(
        replay_id, cursor, limit
    )


@router.delete("/{replay_id}", response_model=ReplayOut)
def cancel_replay(
    replay_id: uuid.UUID, session: SessionDep, settings: SettingsDep, caller: VerifierAdmin
) -> ReplayOut:
    """Cancel a replay: no further item is re-scored; what was is kept."""
    return ReplayService(session, caller.tenant_id, settings.operator_tenant).cancel(replay_id)
