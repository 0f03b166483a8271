"""What input must look like before it reaches the database: shared patterns, the walk that finds
values no store can keep, and the timestamp types of filters and views.

Postgres refuses NUL in text and JSONB, ``NaN``/``Infinity`` in JSONB (Python's ``json`` parses
both, and ``1e400`` becomes ``inf``), lone UTF-16 surrogates in UTF-8, and integers beyond 64
bits. Each is refused here with a 4xx naming the field, never found later as a 500 or as a 503
that a well-behaved client retries forever (SECURITY.md, findings 4 and 13).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, BeforeValidator, Field

# A NUL-free string: every identifier and filter that reaches SQL as text.
NO_NUL_PATTERN = r"^[^\x00]*$"
NAME_PATTERN = r"^[a-z][a-z0-9_.-]{0,63}$"
VERSION_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?$"
VERSION_MAX_CHARS = 64  # verifier_versions.version, verifier_aliases.version
# Aliases never start with a digit, so "name@1.2.0" and "name@stable" cannot be confused.
ALIAS_PATTERN = r"^[a-z][a-z0-9_-]{0,63}$"
# "name", "name@1.2.0" or "name@alias".
REFERENCE_PATTERN = (
    r"^[a-z][a-z0-9_.-]{0,63}"
    r"(?:@(?:[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?|[a-z][a-z0-9_-]{0,63}))?$"
)
REFERENCE_MAX_CHARS = 64 + 1 + VERSION_MAX_CHARS
# Steps are stored in a 64-bit column; the cap is JSON's largest exact integer (JavaScript's
# MAX_SAFE_INTEGER), so a client that reads numbers as doubles never sees a step change.
MAX_STEP = 2**53 - 1

# ASGI, spelled out: this module stays below the web framework.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable_value(value: Any, path: str, *, allow_nul: bool = True) -> str | None:
    """Where a JSON value holds something no store keeps, and what it is; None if nothing.

    Lone surrogates ("\\ud800" is legal JSON, not UTF-8) and non-finite numbers always; NUL
    only when ``allow_nul`` is False (the decision log replaces it in model output, but a
    verifier's config is stored as sent)."""
    # Almost every value is fine: a walk that builds no paths says so in a fraction of the time
    # (seven values per reward item); only a value it doubts is walked again to name the place.
    if _storable(value, allow_nul):
        return None
    return _first_unstorable(value, path, allow_nul)


# Types in which there is nothing to find.
_PLAIN_TYPES = frozenset((int, bool, type(None)))


def _storable(value: Any, allow_nul: bool) -> bool:
    """True when ``value`` holds nothing ``unstorable_value`` would name. Types it does not know
    (subclasses too) count as doubtful: the naming walk decides for them."""
    kind = type(value)
    if kind is str:
        return (value.isascii() or _LONE_SURROGATE.search(value) is None) and (
            allow_nul or "\x00" not in value
        )
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return _all_storable(value, allow_nul) and _all_storable(value.values(), allow_nul)
    if kind is list:
        return _all_storable(value, allow_nul)
    return kind in _PLAIN_TYPES


def _all_storable(values: Iterable[Any], allow_nul: bool) -> bool:
    for value in values:
        kind = type(value)
        # The common leaves are settled here, without a call: ASCII has no surrogates.
        if kind in _PLAIN_TYPES or (
            kind is str and value.isascii() and (allow_nul or "\x00" not in value)
        ):
            continue
        if not _storable(value, allow_nul):
            return False
    return True


def _first_unstorable(value: Any, path: str, allow_nul: bool) -> str | None:
    """The walk that names the place: the first unstorable thing in order, keys before their
    values."""
    if isinstance(value, str):
        if _LONE_SURROGATE.search(value):
            return f"{path} contains an unpaired UTF-16 surrogate"
        if not allow_nul and "\x00" in value:
            return f"{path} contains a NUL character"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is not a finite number"
    if isinstance(value, dict):
        for key, inner in value.items():
            found = _first_unstorable(key, f"{path} key", allow_nul) or _first_unstorable(
                inner, f"{path}.{key}", allow_nul
            )
            if found:
                return found
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            found = _first_unstorable(inner, f"{path}[{index}]", allow_nul)
            if found:
                return found
    return None


def without_nul(value: Any) -> Any:
    """A JSON value with every NUL (in strings and keys) replaced by U+FFFD: legal JSON that
    Postgres cannot store, kept as the decision log keeps model output.

    A value without NUL is returned as it is, not copied (a walk that only looks is twice as
    fast as one that copies, and this runs on every stored verdict): callers never change it.

    orjson's text is asked first, in a tenth of the walk's time: a value it writes (plain types
    only: it refuses subclasses here) without the escape ``\u0000`` holds no NUL. The walk decides
    the rest (a NUL, or what orjson does not write: a key that is not a string, an integer
    beyond 64 bits, a lone surrogate)."""
    if type(value) is str:
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    try:
        if b"\\u0000" not in orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS):
            return value
    except TypeError:
        pass
    return value if _nul_free(value) else _nul_replaced(value)


def _nul_free(value: Any) -> bool:
    """True when ``without_nul`` may return ``value`` itself: no NUL, in plain str, dict and
    list only (the copy makes plain dicts and lists of subclasses; it decides for those)."""
    kind = type(value)
    if kind is str:
        return "\x00" not in value
    if kind is dict:
        return _all_nul_free(value) and _all_nul_free(value.values())
    if kind is list:
        return _all_nul_free(value)
    return not isinstance(value, str | dict | list)


def _all_nul_free(values: Iterable[Any]) -> bool:
    for value in values:
        kind = type(value)
        if kind in _PLAIN_TYPES or (kind is str and "\x00" not in value):
            continue
        if not _nul_free(value):
            return False
    return True


def _nul_replaced(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {_nul_replaced(key): _nul_replaced(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_nul_replaced(inner) for inner in value]
    return value


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_chars(value: Any) -> int:
    """Characters of a JSON value's compact text: what a size cap on it measures."""
    return len(_COMPACT.encode(value))


# RFC 3339, as "format: date-time" says: a date, a time and an offset ("Z" or ±hh:mm).
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _rfc3339_text(value: Any) -> Any:
    # Without this, pydantic reads "0.5" as a Unix time: a filter the schema says is invalid.
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError("must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T12:00:00Z")
    return value


def _in_utc(value: datetime) -> datetime:
    # SQLite compares timestamps as UTC text, so every bound is moved to UTC; a bound beyond the
    # calendar once in UTC (year 1 at +01:00) lies before (or after) every row anyway.
    try:
        return value.astimezone(UTC)
    except OverflowError:
        limit = datetime.min if value.year == 1 else datetime.max
        return limit.replace(tzinfo=UTC)


def _json_integer(value: Any) -> Any:
    # JSON Schema's "integer": any number without a fraction (1000.0 too), never true/false
    # nor "7" (pydantic's lax int takes all three, its strict int refuses 1000.0).
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be an integer")
        return int(value)
    return value


def _assume_utc(value: datetime) -> datetime:
    # Every stored timestamp is UTC; SQLite hands it back without its zone.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# A training step in a request body: an integer as JSON Schema means it, within 64 bits.
# (Constraints before the validator, or the schema shows "ge"/"le" instead of min/max.)
JsonStep = Annotated[int, Field(ge=0, le=MAX_STEP), BeforeValidator(_json_integer)]
# A time bound of a filter: RFC 3339 text only, moved to UTC.
FilterTime = Annotated[datetime, BeforeValidator(_rfc3339_text), AfterValidator(_in_utc)]
# A stored timestamp as shown: always with its zone, as "format: date-time" promises.
UtcDateTime = Annotated[datetime, AfterValidator(_assume_utc)]


class BodySizeLimit:
    """ASGI middleware: a request body over ``max_body_bytes`` is answered 413 while it is read.

    A declared Content-Length over the limit is refused before a byte of the body is read;
    otherwise the bytes of ``http.request`` messages are counted as they arrive, and the first
    message past the limit ends the request: the app sees the client go away, the caller gets
    the 413. Without this a 100 MB body was buffered whole, four at once (SECURITY.md, 5).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(send, limit)
            return
        received = 0
        refused = started = False

        async def counted_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await _refuse(send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:  # the 413 is the answer; what the app says after it goes nowhere
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, guarded_send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "payload_too_large",
                "message": f"the request body is larger than {limit} bytes",
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the body is never read: the connection cannot carry another request.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
