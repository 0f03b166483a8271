"""The dashboard at /ui: runs, a run's charts and health, decisions, one decision.

Server-rendered pages, no script: the content security policy forbids every script, and
templates escape every value, so hostile model output shows as text and nothing else.
"""

from __future__ import annotations

import uuid
from datetime import UTC
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Form, Path, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles

from service.auth.service import Principal
from service.db.dependencies import SessionDep
from service.decisions.export import MEDIA_TYPES, DecisionExport, export_body
from service.decisions.filters import encode_cursor
from service.decisions.labels import LabelService
from service.decisions.run_endpoints import health_budgets
from service.decisions.run_schemas import RunWarning
from service.decisions.runs import RunService
from service.decisions.service import AuditService
from service.dependencies import SettingsDep
from service.errors import Forbidden, NotFound, RateLimited, Unauthorized
from service.ui.auth import (
    COOKIE,
    SignInRequired,
    Viewer,
    check_form_token,
    sign_in,
)
from service.ui.charts import line_chart, stacked_bars
from service.ui.experiment_pages import router as experiment_router
from service.ui.filter_form import (
    FIELDS,
    MAX_DURATION_MS,
    FilterForm,
    read_cursor,
    read_form,
)
from service.ui.render import HERE, SECURITY_HEADERS
from service.ui.render import page as _page
from service.ui.text import highlight, utc_text
from service.validation import MAX_STEP, NO_NUL_PATTERN, FilterTime
from service.verifiers.base import STATUSES

router = APIRouter(prefix="/ui", include_in_schema=False)

STATUS_CLASSES = {status: f"s-{status}" for status in STATUSES}
PAGE_SIZE = 50
# A run id as the API takes it (GET /v1/runs/{run_id}): a NUL reached Postgres as a 500.
RunIdPath = Annotated[str, Path(max_length=256, pattern=NO_NUL_PATTERN)]
# The decisions a health warning counts, as filters of the decision list (with the run's id).
WARNING_FILTERS = {
    "timeout_rate": {"status": "timeout"},
    "error_rate": {"status": "error"},
    "flagged_rate": {"flagged": "true"},
    "possibly_correct_rejected": {"status": "incorrect"},
}


def _warning_link(run_id: str, warning: RunWarning) -> str:
    query = {"run_id": run_id, **WARNING_FILTERS.get(warning.kind, {})}
    if warning.step is not None and warning.kind == "version_changed":
        query["step_from"] = str(warning.step)
    elif warning.step is not None and warning.kind not in WARNING_FILTERS:
        query["step"] = str(warning.step)
    return "/ui/decisions?" + urlencode(query)


def _safe_next(target: str | None) -> str:
    # Only this dashboard's own pages: never an open redirect to another site.
    if target and target.startswith("/ui/") and not target.startswith("/ui//"):
        return target
    return "/ui/runs"


@router.get("")
def home() -> RedirectResponse:
    return RedirectResponse("/ui/runs", status_code=303)


@router.get("/login")
def login_page(request: Request, next: str | None = None, reason: str | None = None) -> Response:
    return _page(request, "login.html", next=_safe_next(next), reason=reason)


@router.post("/login")
def login(
    request: Request, key: Annotated[str, Form(max_length=512)], next: Annotated[str, Form()] = ""
) -> Response:
    try:
        sign_in(request, key.strip())
    except (Unauthorized, Forbidden) as exc:
        return _page(request, "login.html", 401, next=_safe_next(next), reason=exc.message)
    except RateLimited as exc:  # this key's id failed its checks lately: try again later
        refused = _page(request, "login.html", 429, next=_safe_next(next), reason=exc.message)
        refused.headers.update(exc.headers())
        return refused
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(
        COOKIE,
        key.strip(),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/ui",
    )
    return response


@router.post("/logout")
def logout(request: Request, token: Annotated[str, Form()] = "") -> Response:
    check_form_token(request, token)
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.get("/runs")
def runs_page(
    request: Request, session: SessionDep, viewer: Viewer, before: FilterTime | None = None
) -> Response:
    page = RunService(session, viewer.tenant_id).list_runs(PAGE_SIZE, before)
    older = None
    if page.next_before is not None:
        # With its zone, as ``before`` takes it (SQLite hands times back without one).
        moment = page.next_before
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        older = "/ui/runs?" + urlencode({"before": moment.isoformat()})
    return _page(request, "runs.html", page=page, older=older, viewer=viewer)


@router.get("/runs/{run_id:path}")
def run_page(
    request: Request, run_id: RunIdPath, session: SessionDep, settings: SettingsDep, viewer: Viewer
) -> Response:
    runs = RunService(session, viewer.tenant_id)
    detail = runs.detail(run_id)
    health = runs.health(run_id, health_budgets(settings))
    steps = detail.steps
    labels = [step.step if step.step is not None else "–" for step in steps]
    reward_chart = line_chart(
        labels,
        [
            ("mean reward", "c-reward", [s.reward.mean for s in steps]),
            ("reward std", "c-std", [s.reward.std for s in steps]),
        ],
    )
    status_chart = stacked_bars(
        labels,
        [
            (status, STATUS_CLASSES[status], [s.statuses.get(status, 0) for s in steps])
            for status in STATUSES
            if any(s.statuses.get(status) for s in steps)
        ],
    )
    group_chart = stacked_bars(
        labels,
        [
            ("solved none", "g-none", [s.groups.solved_none for s in steps]),
            ("solved some", "g-some", [s.groups.solved_some for s in steps]),
            ("solved all", "g-all", [s.groups.solved_all for s in steps]),
        ],
    )
    length_chart = line_chart(
        labels, [("mean completion chars", "c-length", [s.completion_chars_mean for s in steps])]
    )
    return _page(
        request,
        "run.html",
        detail=detail,
        health=health,
        warnings=[(w, _warning_link(detail.run_id, w)) for w in health.warnings],
        charts=[
            ("Reward per step", reward_chart),
            ("Statuses per step", status_chart),
            ("Group signal per step (all-same groups teach nothing)", group_chart),
            ("Completion length per step", length_chart),
        ],
        viewer=viewer,
    )


def _decision_list(
    request: Request, viewer: Principal, form: FilterForm, status_code: int, **context: Any
) -> Response:
    return _page(
        request,
        "decisions.html",
        status_code,
        form=form,
        fields=FIELDS,
        statuses=STATUSES,
        max_step=MAX_STEP,
        max_duration_ms=MAX_DURATION_MS,
        utc_text=utc_text,
        viewer=viewer,
        **context,
    )


@router.get("/decisions")
def decisions_page(request: Request, session: SessionDep, viewer: Viewer) -> Response:
    # Read from the query string as sent (a form's empty fields are ""): a bad value is named on
    # the page, with the form as it was, not refused as JSON.
    form = read_form(request.query_params)
    after = read_cursor(form, request.query_params.get("cursor"))
    if form.errors:
        return _decision_list(request, viewer, form, 422, rows=[])
    rows = AuditService(session, viewer.tenant_id).matching(
        form.filters, after=after, limit=PAGE_SIZE
    )
    next_link = None
    if len(rows) == PAGE_SIZE:
        cursor = encode_cursor(rows[-1].created_at, rows[-1].id)
        next_link = "/ui/decisions?" + form.query(cursor=cursor)
    return _decision_list(
        request,
        viewer,
        form,
        200,
        rows=rows,
        next_link=next_link,
        first_link="/ui/decisions?" + form.query() if after else None,
        exports={fmt: "/ui/decisions/export?" + form.query(format=fmt) for fmt in MEDIA_TYPES},
    )


@router.get("/decisions/export")
def export_decisions(request: Request, settings: SettingsDep, viewer: Viewer) -> Response:
    """Download the decisions the list's filters match, as NDJSON or CSV."""
    form = read_form(request.query_params)
    export_format = request.query_params.get("format") or "ndjson"
    if export_format not in MEDIA_TYPES:
        form.errors.append(("format", "format", "must be ndjson or csv"))
    if form.errors:
        return _decision_list(request, viewer, form, 422, rows=[])
    export = DecisionExport(settings, viewer.tenant_id, form.filters, None, None)
    headers = {
        **SECURITY_HEADERS,
        "Content-Disposition": f'attachment; filename="decisions.{export_format}"',
    }
    return StreamingResponse(
        export_body(export, export_format),
        media_type=MEDIA_TYPES[export_format],
        headers=headers,
    )


@router.get("/decisions/{decision_id}")
def decision_page(
    request: Request, decision_id: str, session: SessionDep, viewer: Viewer
) -> Response:
    try:
        wanted = uuid.UUID(decision_id)
    except ValueError as exc:
        raise NotFound("no such decision") from exc
    row = AuditService(session, viewer.tenant_id).get(wanted)
    label = LabelService(session, viewer.tenant_id).label_of(wanted)
    details = row.details if isinstance(row.details, dict) else {}
    extracted = details.get("extracted")
    return _page(
        request,
        "decision.html",
        row=row,
        label=label,
        can_label="labels:write" in viewer.scopes,
        completion=highlight(row.completion, extracted if isinstance(extracted, str) else None),
        details=details,
        tests=details.get("tests") if isinstance(details.get("tests"), list) else [],
        viewer=viewer,
    )


@router.post("/decisions/{decision_id}/label")
def label_decision(
    request: Request,
    decision_id: str,
    session: SessionDep,
    viewer: Viewer,
    verdict: Annotated[str, Form(pattern="^(correct|incorrect)$")],
    token: Annotated[str, Form()] = "",
    note: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    check_form_token(request, token)
    if "labels:write" not in viewer.scopes:
        raise Forbidden("this key lacks the scope 'labels:write'")
    try:
        wanted = uuid.UUID(decision_id)
    except ValueError as exc:
        raise NotFound("no such decision") from exc
    text = note.replace("\x00", "").strip() or None
    LabelService(session, viewer.tenant_id).label(wanted, verdict, text, viewer)
    return RedirectResponse(f"/ui/decisions/{wanted}", status_code=303)


def install_dashboard(app: FastAPI) -> None:
    """The /ui pages, their stylesheet, and the redirect to sign in."""
    app.include_router(router)
    app.include_router(experiment_router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        query = urlencode({"next": target, "reason": exc.reason})
        return RedirectResponse(f"/ui/login?{query}", status_code=303)
