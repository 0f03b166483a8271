"""Model text on a page: split around the extracted answer so the template can mark it; the
template escapes every part (model output is untrusted, so nothing here is markup)."""

from __future__ import annotations

from datetime import UTC, datetime

MAX_SHOWN_CHARS = 200_000


def highlight(text: str, needle: str | None) -> list[tuple[str, bool]]:
    """``text`` as (part, is_the_answer) pieces: the last occurrence of ``needle`` is marked
    (final answers come last); everything else is plain."""
    text = text[:MAX_SHOWN_CHARS]
    if not needle or needle not in text:
        return [(text, False)]
    at = text.rfind(needle)
    pieces = [(text[:at], False), (needle, True), (text[at + len(needle) :], False)]
    return [(part, marked) for part, marked in pieces if part]


def utc_text(moment: datetime) -> str:
    """A stored time as the filters take it, in UTC (SQLite hands it back without its zone)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
