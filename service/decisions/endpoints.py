"""Audit routes: read every decision the service made, page by page or as one export.

Every filter is checked before it reaches SQL (NUL bytes, lengths, ranges, RFC 3339 times,
finite numbers): a bad one is a 422 naming it, never a database error.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from service.auth.dependencies import AuditReader
from service.db.dependencies import SessionDep
from service.decisions.export import MEDIA_TYPES, DecisionExport, export_body
from service.decisions.filters import (
    CURSOR_PATTERN,
    DecisionFilters,
    decode_cursor,
    encode_cursor,
)
from service.decisions.schemas import DecisionOut, DecisionPage, Stats, StatsRow
from service.decisions.service import AuditService
from service.dependencies import SettingsDep
from service.errors import ERROR_RESPONSES
from service.validation import MAX_STEP, NO_NUL_PATTERN, VERSION_MAX_CHARS, FilterTime
from service.verifiers.base import Status

router = APIRouter(prefix="/v1/decisions", tags=["audit"], responses=ERROR_RESPONSES)

# Filters as long as the columns they compare with, without NUL (Postgres refuses it in text).
RunIdFilter = Annotated[str | None, Query(max_length=256, pattern=NO_NUL_PATTERN)]
VerifierFilter = Annotated[str | None, Query(max_length=128, pattern=NO_NUL_PATTERN)]
VersionFilter = Annotated[str | None, Query(max_length=VERSION_MAX_CHARS, pattern=NO_NUL_PATTERN)]
GroupIdFilter = Annotated[str | None, Query(max_length=256, pattern=NO_NUL_PATTERN)]
RequestIdFilter = Annotated[str | None, Query(max_length=128, pattern=NO_NUL_PATTERN)]
StepFilter = Annotated[int | None, Query(ge=0, le=MAX_STEP)]
TimeFilter = Annotated[
    FilterTime | None, Query(description="RFC 3339 with an offset, e.g. 2026-01-31T12:00:00Z.")
]
# Verification times in milliseconds: finite, up to a day.
DurationFilter = Annotated[float | None, Query(ge=0, le=86_400_000, allow_inf_nan=False)]
CursorParam = Annotated[
    str | None,
    Query(pattern=CURSOR_PATTERN, description="next_cursor of the previous page."),
]


def decision_filters(
    run_id: RunIdFilter = None,
    step: StepFilter = None,
    step_from: Annotated[
        int | None, Query(ge=0, le=MAX_STEP, description="Steps from this one (inclusive).")
    ] = None,
    step_to: Annotated[
        int | None, Query(ge=0, le=MAX_STEP, description="Steps up to this one (inclusive).")
    ] = None,
    verifier: VerifierFilter = None,
    version: VersionFilter = None,
    status: Status | None = None,
    group_id: GroupIdFilter = None,
    request_id: RequestIdFilter = None,
    created_after: TimeFilter = None,
    created_before: TimeFilter = None,
    flagged: Annotated[
        bool | None,
        Query(description="Flagged (an answer in the prompt, a hack pattern in a program)."),
    ] = None,
    cached: Annotated[bool | None, Query(description="Answered from the verdict cache.")] = None,
    labelled: Annotated[
        bool | None,
        Query(description="A person labelled this input (completion and ground truth)."),
    ] = None,
    disagrees_with_label: Annotated[
        bool | None,
        Query(
            description="true: labelled, and the label says the opposite of the decision's "
            "correct or incorrect; false: every other decision."
        ),
    ] = None,
    min_duration_ms: DurationFilter = None,
    max_duration_ms: DurationFilter = None,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=256,
            pattern=NO_NUL_PATTERN,
            description="Text in the extracted answer: case-insensitive, taken literally.",
        ),
    ] = None,
) -> DecisionFilters:
    return DecisionFilters(
        run_id=run_id,
        step=step,
        step_from=step_from,
        step_to=step_to,
        verifier=verifier,
        version=version,
        status=status,
        group_id=group_id,
        request_id=request_id,
        created_after=created_after,
        created_before=created_before,
        flagged=flagged,
        cached=cached,
        labelled=labelled,
        disagrees_with_label=disagrees_with_label,
        min_duration_ms=min_duration_ms,
        max_duration_ms=max_duration_ms,
        q=q,
    )


Filters = Annotated[DecisionFilters, Depends(decision_filters)]


@router.get("", response_model=DecisionPage)
def list_decisions(
    session: SessionDep,
    caller: AuditReader,
    filters: Filters,
    cursor: CursorParam = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> DecisionPage:
    """List decisions, newest first, filtered; follow next_cursor for the next page."""
    after = decode_cursor(cursor) if cursor else None
    rows = AuditService(session, caller.tenant_id).matching(filters, after=after, limit=limit)
    next_cursor = encode_cursor(rows[-1].created_at, rows[-1].id) if len(rows) == limit else None
    return DecisionPage(
        decisions=[DecisionOut.model_validate(row) for row in rows], next_cursor=next_cursor
    )


EXPORT_DESCRIPTION = """\
Every decision the filters match (the same filters as the list), newest first, streamed:
`format=ndjson` (default) writes one JSON object per line, `format=csv` a header and one row per
decision, JSON fields as JSON text.

Each line (each CSV row) starts with `cursor`, the position of its decision. A client that loses
the connection asks again with `cursor=` set to the last cursor it read whole (a line cut short
is discarded) and the export goes on after it; `cursor=` also takes a list page's `next_cursor`.
`limit` bounds the decisions sent: when that many arrived, more may follow from the last cursor.

The service reads the log in pages as it sends, at constant memory whatever the size. Cells are
sent as stored: CSV meant for a spreadsheet should be opened as text, since model output may
start with `=`."""


@router.get(
    "/export",
    response_class=StreamingResponse,
    description=EXPORT_DESCRIPTION,
    responses={
        200: {
            "description": "The decisions, as NDJSON or CSV, each line with its cursor.",
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    },
)
def export_decisions(
    caller: AuditReader,
    settings: SettingsDep,
    filters: Filters,
    export_format: Annotated[Literal["ndjson", "csv"], Query(alias="format")] = "ndjson",
    cursor: CursorParam = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_STEP)] = None,
) -> StreamingResponse:
    """Export the decisions the filters match as NDJSON or CSV, resumable by cursor."""
    export = DecisionExport(
        settings,
        caller.tenant_id,
        filters,
        decode_cursor(cursor) if cursor else None,
        limit,
    )
    body = export_body(export, export_format)
    headers = {}
    if export_format == "csv":
        headers["Content-Disposition"] = 'attachment; filename="decisions.csv"'
    return StreamingResponse(body, media_type=MEDIA_TYPES[export_format], headers=headers)


stats_router = APIRouter(prefix="/v1/stats", tags=["audit"], responses=ERROR_RESPONSES)


@stats_router.get("", response_model=Stats)
def decision_stats(
    session: SessionDep,
    caller: AuditReader,
    run_id: RunIdFilter = None,
    verifier: VerifierFilter = None,
    created_after: TimeFilter = None,
    created_before: TimeFilter = None,
) -> Stats:
    """Decision counts, mean reward, cache hits and mean duration per version and status."""
    rows = AuditService(session, caller.tenant_id).stats(
        run_id=run_id,
        verifier=verifier,
        created_after=created_after,
        created_before=created_before,
    )
    return Stats(total=sum(row["count"] for row in rows), rows=[StatsRow(**row) for row in rows])


@router.get("/{decision_id}", response_model=DecisionOut)
def get_decision(decision_id: uuid.UUID, session: SessionDep, caller: AuditReader) -> DecisionOut:
    """One decision: what was extracted, why, by which verifier version, how long it took."""
    return DecisionOut.model_validate(AuditService(session, caller.tenant_id).get(decision_id))
