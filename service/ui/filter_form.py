"""The decision list's filter form: every filter of ``GET /v1/decisions``, read from what a form
sends.

A form sends every field, the empty ones as "": an empty field is no filter. Any other value is
checked as the audit API checks it (lengths, ranges, finite numbers, RFC 3339 times, no NUL);
one that fails is named on a 422 page that keeps the form as sent, and never reaches SQL.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import TypeAdapter, ValidationError

from service.decisions.filters import (
    CURSOR_PATTERN,
    DecisionFilters,
    Position,
    decode_cursor,
)
from service.errors import InvalidRequest
from service.validation import MAX_STEP, VERSION_MAX_CHARS, FilterTime
from service.verifiers.base import STATUSES

Kind = Literal["text", "step", "duration", "time", "choice", "status"]

MAX_DURATION_MS = 86_400_000  # as the audit API: finite, up to a day
# Longer than any number or time a field takes: refused before it is parsed.
MAX_NUMBER_CHARS = 40
TRUE = frozenset({"true", "yes", "1", "on"})
FALSE = frozenset({"false", "no", "0", "off"})
_DIGITS = re.compile(r"[0-9]+")
_CURSOR = re.compile(CURSOR_PATTERN)
# A date and time without a zone, as people type them (seconds optional): read as UTC.
_LOCAL_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
)
_FILTER_TIME: TypeAdapter[datetime] = TypeAdapter(FilterTime)


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of the form: ``name`` is both the query parameter and the DecisionFilters
    field, as in the audit API, so a dashboard link and an API call read alike."""

    name: str
    label: str
    kind: Kind
    max_chars: int = MAX_NUMBER_CHARS


FIELDS: tuple[FormField, ...] = (
    FormField("run_id", "run", "text", 256),
    FormField("step", "step", "step"),
    FormField("step_from", "steps from", "step"),
    FormField("step_to", "steps to", "step"),
    FormField("verifier", "verifier", "text", 128),
    FormField("version", "version", "text", VERSION_MAX_CHARS),
    FormField("status", "status", "status"),
    FormField("group_id", "group", "text", 256),
    FormField("request_id", "request", "text", 128),
    FormField("created_after", "from time", "time"),
    FormField("created_before", "before time", "time"),
    FormField("flagged", "flagged", "choice"),
    FormField("cached", "cached", "choice"),
    FormField("labelled", "labelled", "choice"),
    FormField("disagrees_with_label", "contradicts its label", "choice"),
    FormField("min_duration_ms", "min ms", "duration"),
    FormField("max_duration_ms", "max ms", "duration"),
    FormField("q", "answer contains", "text", 256),
)


@dataclass(slots=True)
class FilterForm:
    """The form as read: what each field shows, what is wrong with which, and the filters."""

    values: dict[str, str] = field(default_factory=dict)
    # (parameter, label, what is wrong), in the form's order.
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    filters: DecisionFilters = field(default_factory=DecisionFilters)

    def error(self, form_field: FormField, message: str) -> None:
        self.errors.append((form_field.name, form_field.label, message))

    def query(self, **extra: str) -> str:
        """The set filters (and ``extra``) as a query string: what a link keeps."""
        pairs = [(name, value) for name, value in self.values.items() if value]
        return urlencode(pairs + list(extra.items()))


def _step(text: str) -> int:
    if not _DIGITS.fullmatch(text) or int(text) > MAX_STEP:
        raise ValueError(f"must be a whole number from 0 to {MAX_STEP}")
    return int(text)


def _duration(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= MAX_DURATION_MS:
        raise ValueError(f"must be a number of milliseconds from 0 to {MAX_DURATION_MS}")
    return value


def _time(text: str) -> datetime:
    if _LOCAL_TIME.fullmatch(text):
        text += ":00Z" if text.count(":") == 1 else "Z"
    try:
        return _FILTER_TIME.validate_python(text)
    except ValidationError as exc:
        raise ValueError(
            "must be a date and time such as 2026-01-31T12:00:00Z (UTC when no offset is given)"
        ) from exc


def _choice(text: str) -> bool:
    if text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise ValueError("must be yes or no (or empty for any)")


def _status(text: str) -> str:
    if text not in STATUSES:
        raise ValueError("must be one of " + ", ".join(STATUSES))
    return text


def _text(text: str) -> str:
    return text


PARSERS = {
    "text": _text,
    "step": _step,
    "duration": _duration,
    "time": _time,
    "choice": _choice,
    "status": _status,
}


def read_form(params: Mapping[str, str]) -> FilterForm:
    """The filters of a submitted form (or a link); every bad field is named in ``errors``."""
    form = FilterForm()
    chosen: dict[str, Any] = {}
    for form_field in FIELDS:
        raw = params.get(form_field.name) or ""
        # NUL is not kept even for display: an HTML page cannot carry it.
        form.values[form_field.name] = raw.replace("\x00", "\ufffd")
        text = raw if form_field.kind == "text" else raw.strip()
        if not text:
            continue
        if "\x00" in text:
            form.error(form_field, "contains a NUL character")
        elif len(text) > form_field.max_chars:
            form.error(form_field, f"is longer than {form_field.max_chars} characters")
        else:
            try:
                value = PARSERS[form_field.kind](text)
            except ValueError as exc:
                form.error(form_field, str(exc))
                continue
            chosen[form_field.name] = value
            if isinstance(value, bool):  # shown as the select's own option
                form.values[form_field.name] = "true" if value else "false"
    if not form.errors:
        form.filters = DecisionFilters(**chosen)
    return form


def read_cursor(form: FilterForm, cursor: str | None) -> Position | None:
    """Where a page resumes; a cursor that is not one is named in the form's errors."""
    if not cursor:
        return None
    message = "is not a cursor of this list: open the first page again"
    if not _CURSOR.fullmatch(cursor):
        form.errors.append(("cursor", "cursor", message))
        return None
    try:
        return decode_cursor(cursor)
    except InvalidRequest:
        form.errors.append(("cursor", "cursor", message))
        return None
