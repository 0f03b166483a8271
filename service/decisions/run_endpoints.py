"""Audit of whole runs: the runs seen, one run step by step, and its health."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from service.auth.dependencies import AuditReader
from service.db.dependencies import SessionDep
from service.decisions.run_schemas import RunDetail, RunHealth, RunPage
from service.decisions.runs import HealthBudgets, RunService
from service.dependencies import SettingsDep
from service.errors import ERROR_RESPONSES
from service.metrics import observe_run_health
from service.settings import Settings
from service.validation import FilterTime

router = APIRouter(prefix="/v1/runs", tags=["audit"], responses=ERROR_RESPONSES)

# A run id may hold "/" (trainers name runs like paths): matched as a path, health first.
RunId = Annotated[str, Path(max_length=256, pattern=r"^[^\x00]*$")]


def health_budgets(settings: Settings) -> HealthBudgets:
    return HealthBudgets(
        window_steps=settings.health_window_steps,
        max_timeout_rate=settings.health_max_timeout_rate,
        max_error_rate=settings.health_max_error_rate,
        max_all_same_fraction=settings.health_max_all_same_fraction,
        max_length_growth=settings.health_max_length_growth,
        max_flagged_rate=settings.health_max_flagged_rate,
        close_rel_tol=settings.health_close_rel_tol,
    )


@router.get("", response_model=RunPage)
def list_runs(
    session: SessionDep,
    caller: AuditReader,
    before: FilterTime | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> RunPage:
    """The runs seen, most recently active first; pass next_before as before for more."""
    return RunService(session, caller.tenant_id).list_runs(limit, before)


@router.get("/{run_id:path}/health", response_model=RunHealth)
def get_run_health(
    run_id: RunId, session: SessionDep, settings: SettingsDep, caller: AuditReader
) -> RunHealth:
    """Warnings from the run's recent steps: timeouts, errors, all-same groups, length without
    reward, a version change, flags, and rejected answers that look correct."""
    health = RunService(session, caller.tenant_id).health(run_id, health_budgets(settings))
    kinds = [warning.kind for warning in health.warnings]
    observe_run_health(caller.tenant_id, run_id, kinds, settings.run_health_gauge_runs)
    return health


@router.get("/{run_id:path}", response_model=RunDetail)
def get_run(run_id: RunId, session: SessionDep, caller: AuditReader) -> Response:
    """One run step by step: rewards per component, statuses, group signal, latency, lengths,
    cache hits, and the verifier versions it used."""
    detail = RunService(session, caller.tenant_id).detail(run_id)
    # Built and checked once already: sent as it is, not validated again (a run has a few
    # hundred steps, and the summary's time budget is a second at a million decisions).
    return Response(detail.model_dump_json(), media_type="application/json")
