"""Dashboard pages of experiments and replays: their reports, disagreements side by side.

Read-only, like the audit pages (``audit:read``); every value is escaped by the templates, so
completions and extracted answers show as text.
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from service.db.dependencies import SessionDep
from service.dependencies import SettingsDep
from service.errors import NotFound
from service.experiments.replays import ReplayService
from service.experiments.report import CURSOR_PATTERN
from service.experiments.service import ExperimentService
from service.ui.auth import Viewer
from service.ui.render import page as render_page

router = APIRouter(prefix="/ui", include_in_schema=False)
PAGE_SIZE = 50
_CURSOR = re.compile(CURSOR_PATTERN)


def _id(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise NotFound(f"no such {what}") from exc


def _cursor(value: str | None) -> str | None:
    # A hand-edited cursor is ignored, not an error page.
    return value if value and _CURSOR.fullmatch(value) else None


@router.get("/experiments")
def experiments_page(
    request: Request, session: SessionDep, settings: SettingsDep, viewer: Viewer
) -> Response:
    experiments = ExperimentService(session, viewer.tenant_id, settings.operator_tenant)
    replays = ReplayService(session, viewer.tenant_id, settings.operator_tenant)
    return render_page(
        request,
        "experiments.html",
        experiments=experiments.find(None, PAGE_SIZE),
        replays=replays.find(PAGE_SIZE),
        viewer=viewer,
    )


@router.get("/experiments/{experiment_id}")
def experiment_page(
    request: Request,
    experiment_id: str,
    session: SessionDep,
    settings: SettingsDep,
    viewer: Viewer,
    after: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    service = ExperimentService(session, viewer.tenant_id, settings.operator_tenant)
    report = service.report(_id(experiment_id, "experiment"), _cursor(after), PAGE_SIZE)
    next_link = (
        f"/ui/experiments/{report.experiment.id}?after={report.next_cursor}"
        if report.next_cursor
        else None
    )
    return render_page(
        request,
        "experiment.html",
        experiment=report.experiment,
        reports=[("", report, next_link)],
        viewer=viewer,
    )


@router.get("/replays/{replay_id}")
def replay_page(
    request: Request,
    replay_id: str,
    session: SessionDep,
    settings: SettingsDep,
    viewer: Viewer,
    target: Annotated[int, Query(ge=0, le=64)] = 0,
    after: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    service = ReplayService(session, viewer.tenant_id, settings.operator_tenant)
    wanted = _id(replay_id, "replay")
    replay = service.get(wanted, 1)
    reports = []
    for index, described in enumerate(replay.targets):
        cursor = _cursor(after) if index == target else None
        report = service.report(wanted, index, cursor, PAGE_SIZE)
        next_link = (
            f"/ui/replays/{wanted}?target={index}&after={report.next_cursor}"
            if report.next_cursor
            else None
        )
        reports.append((described.reference, report, next_link))
    return render_page(request, "replay.html", replay=replay, reports=reports, viewer=viewer)
