"""The export: every decision a filter matches, newest first, as NDJSON or CSV, streamed at
constant memory and resumable from any line.

The log is read in keyset pages of ``EXPORT_BATCH`` rows, each in its own short session (the
request's session is closed before a streamed body is sent, and a long export must not hold a
transaction open); the next page is read while one is formatted and sent. Every line carries
the cursor of its decision: a client that lost the connection asks again with ``cursor=`` the
last one it read whole, and the export goes on after it.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy.exc import OperationalError

from service.db.session import session_scope
from service.decisions.filters import DecisionFilters, Position, encode_cursor
from service.decisions.repository import PlainRow
from service.decisions.schemas import DecisionOut
from service.decisions.service import AuditService
from service.errors import DependencyUnavailable
from service.settings import Settings

log = logging.getLogger(__name__)

EXPORT_BATCH = 1000
# The fields of a decision as GET /v1/decisions/{id} shows them, in its order.
FIELDS = tuple(DecisionOut.model_fields)
JSON_FIELDS = frozenset({"ground_truth", "metadata", "components", "details"})
MEDIA_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}


class DecisionExport:
    """The pages of one export: at most ``limit`` decisions (all if None) after ``after``."""

    def __init__(
        self,
        settings: Settings,
        tenant_id: str,
        filters: DecisionFilters,
        after: Position | None,
        limit: int | None,
        batch: int = EXPORT_BATCH,
    ) -> None:
        self.settings = settings
        self.tenant_id = tenant_id
        self.filters = filters
        self.after = after
        self.limit = limit
        self.batch = batch

    def _read(self, after: Position | None, size: int) -> list[PlainRow]:
        with session_scope(self.settings) as session:
            audit = AuditService(session, self.tenant_id)
            return audit.find_rows(self.filters, FIELDS, after=after, limit=size)

    def _size(self, left: int | None) -> int:
        return self.batch if left is None else min(self.batch, left)

    def pages(self) -> Iterator[list[PlainRow]]:
        """The pages in order. The next page is read (by the database, on another core) while
        this one is formatted and sent: two pages at most are held, whatever the export's size."""
        if self.limit is not None and self.limit <= 0:
            return
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlvr-export")
        try:
            after, left = self.after, self.limit
            size = self._size(left)
            ahead: Future[list[PlainRow]] | None = reader.submit(self._read, after, size)
            while ahead is not None:
                rows = ahead.result()
                ahead = None
                if left is not None:
                    left -= len(rows)
                if len(rows) == size and (left is None or left > 0):
                    last = rows[-1]
                    after = (last[_TIME_AT], last[_ID_AT])
                    size = self._size(left)
                    ahead = reader.submit(self._read, after, size)
                if rows:
                    yield rows
        finally:
            # A client that went away: a read under way finishes on its own and is dropped.
            reader.shutdown(wait=False, cancel_futures=True)


def _text_time(value: datetime) -> str:
    # As the JSON views show it: RFC 3339 in UTC with a Z.
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


_ID_AT, _TIME_AT = FIELDS.index("id"), FIELDS.index("created_at")
_JSON_AT = tuple(FIELDS.index(name) for name in sorted(JSON_FIELDS))


def _values(row: PlainRow, json_text: Callable[[str], Any]) -> list[Any]:
    """A row's values in FIELDS order, JSON fields as ``json_text`` makes of their text."""
    values = list(row)
    for index in _JSON_AT:
        if values[index] is not None:
            values[index] = json_text(values[index])
    return values


def ndjson_lines(pages: Iterable[list[PlainRow]]) -> Iterator[bytes]:
    """One JSON object per line: ``cursor`` then the decision's fields (JSON fields as the
    database's own JSON text, sent as it is: no parse and re-encode per row; ids and times
    written by orjson as the JSON views write them)."""
    for page in pages:
        lines = []
        for row in page:
            values = _values(row, orjson.Fragment)
            record = {"cursor": encode_cursor(values[_TIME_AT], values[_ID_AT])}
            record.update(zip(FIELDS, values, strict=True))
            lines.append(orjson.dumps(record, option=orjson.OPT_UTC_Z))
        lines.append(b"")
        yield b"\n".join(lines)


# RFC 4180 as Python's csv module writes it by default (QUOTE_MINIMAL): a field holding a quote,
# a comma or a line break is quoted, its quotes doubled. Written here because the csv module
# spent 80 µs a row on 2 KB completions (bench/audit_scale.py); these are C-speed string scans.
_NEEDS_QUOTES = re.compile(r'[",\r\n]')


def _csv_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else str(value)
    if _NEEDS_QUOTES.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_lines(pages: Iterable[list[PlainRow]]) -> Iterator[bytes]:
    """A header, then one row per decision: ``cursor`` then the decision's fields, JSON fields
    as JSON text. Cells are written as stored (model output is not altered for spreadsheets)."""
    header = ",".join(("cursor", *FIELDS)) + "\n"
    for page in pages:
        lines = [header] if header else []
        header = ""
        for row in page:
            values = _values(row, str)
            created_at, decision_id = values[_TIME_AT], values[_ID_AT]
            values[_ID_AT], values[_TIME_AT] = str(decision_id), _text_time(created_at)
            values.insert(0, encode_cursor(created_at, decision_id))
            lines.append(",".join([_csv_field(value) for value in values]) + "\n")
        yield "".join(lines).encode()
    if header:  # no decision matched: the header alone
        yield header.encode()


def logged(lines: Iterator[bytes]) -> Iterator[bytes]:
    """The export's body; a failure after the first byte can only end the stream early, so it
    is logged (the client resumes from the last cursor it read)."""
    try:
        yield from lines
    except Exception:
        log.exception("export ended early")
        raise


def export_body(export: DecisionExport, export_format: str) -> Iterator[bytes]:
    """The body of an export as ``export_format`` ("ndjson" or "csv"), its first page already
    read: a database that does not answer is a DependencyUnavailable (503) raised here, before
    the answer starts, not a stream cut short."""
    pages = export.pages()
    try:
        first = list(itertools.islice(pages, 1))
    except OperationalError as exc:
        raise DependencyUnavailable("database", type(exc).__name__) from exc
    lines = ndjson_lines if export_format == "ndjson" else csv_lines
    return logged(lines(itertools.chain(first, pages)))
