"""What a caller may ask of the decision log: the filters shared by the list, the export and the
dashboard, and the cursor that resumes a page or an export where the last one stopped."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from service.errors import InvalidRequest

# A decision's place in the newest-first order: (created_at, id).
Position = tuple[datetime, uuid.UUID]


@dataclass(frozen=True, slots=True)
class DecisionFilters:
    """Every filter is optional; the set ones all hold (AND). Values are checked by the routes
    (lengths, ranges, no NUL) before they get here; a range whose ends are the wrong way round
    is valid and matches nothing (the schema cannot say otherwise, so neither does the API)."""

    run_id: str | None = None
    step: int | None = None
    step_from: int | None = None
    step_to: int | None = None
    verifier: str | None = None
    version: str | None = None
    status: str | None = None
    group_id: str | None = None
    request_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    # An answer written in the prompt, or a hack pattern in a program.
    flagged: bool | None = None
    cached: bool | None = None
    # A person labelled the decision's input (completion and ground truth, for its verifier).
    labelled: bool | None = None
    # True: a label exists and says the opposite of the decision's correct/incorrect.
    disagrees_with_label: bool | None = None
    min_duration_ms: float | None = None
    max_duration_ms: float | None = None
    # Case-insensitive substring of the extracted answer (taken literally: % and _ too).
    q: str | None = None


# A cursor is a position as text: created_at in microseconds since the epoch, and the id.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CURSOR_PATTERN = r"^[0-9]{1,17}-[0-9a-f]{32}$"


def encode_cursor(created_at: datetime, decision_id: uuid.UUID) -> str:
    if created_at.tzinfo is None:  # SQLite hands stored UTC times back without their zone
        created_at = created_at.replace(tzinfo=UTC)
    since = created_at - _EPOCH  # integer arithmetic: the export writes one cursor a line
    micros = (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
    return f"{micros}-{decision_id.hex}"


def decode_cursor(cursor: str) -> Position:
    micros, _, decision_id = cursor.partition("-")
    try:
        return _EPOCH + timedelta(microseconds=int(micros)), uuid.UUID(hex=decision_id)
    except (ValueError, OverflowError) as exc:  # only a cursor past the pattern gets here
        raise InvalidRequest("cursor: malformed", code="invalid_cursor") from exc
