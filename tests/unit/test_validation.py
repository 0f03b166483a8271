"""The input checks shared by every route: values no store keeps, filter times, body size."""

from __future__ import annotations

import asyncio
import json
import math
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from service.validation import (
    BodySizeLimit,
    FilterTime,
    UtcDateTime,
    json_chars,
    unstorable_value,
    without_nul,
)


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"a": [1, 2.5, "x"]}, None),
        ({"a": [1, math.nan]}, "gt.a[1] is not a finite number"),
        ([{"b": math.inf}], "gt[0].b is not a finite number"),
        ({"k": "\ud800"}, "gt.k contains an unpaired UTF-16 surrogate"),
        ({"\udfff": 1}, "gt key contains an unpaired UTF-16 surrogate"),
        ("NUL \x00 is model output", None),
    ],
)
def test_unstorable_value_names_where_it_is(value: Any, found: str | None) -> None:
    assert unstorable_value(value, "gt") == found


def test_without_nul_replaces_it_in_strings_and_keys_only() -> None:
    sent = {"a\x00": ["5\x00", 1.5, None, True, {"k": "\x00\x00"}], "b": "clean"}
    assert without_nul(sent) == {
        "a\ufffd": ["5\ufffd", 1.5, None, True, {"k": "\ufffd\ufffd"}],
        "b": "clean",
    }
    assert unstorable_value(without_nul(sent), "gt", allow_nul=False) is None


def test_nul_is_refused_where_it_would_be_stored_as_sent() -> None:
    assert unstorable_value({"x": ["a\x00"]}, "config", allow_nul=False) == (
        "config.x[0] contains a NUL character"
    )


class _Text(str):
    """A str subclass: the quick walk leaves such values to the walk that names the place."""


class _Number(float):
    pass


# What the quick walk must not miss (it says "nothing here" without building paths), each deep
# inside, in keys as in values, in the types it walks itself and in the ones it leaves alone.
@pytest.mark.parametrize(
    ("value", "allow_nul", "found"),
    [
        ({"a": [{"b": ("x", "y\x00")}]}, False, "gt.a[0].b[1] contains a NUL character"),
        ({"a": [{"b\x00": 1}]}, False, "gt.a[0] key contains a NUL character"),
        ({"a": [{"b\x00": 1}]}, True, None),
        (
            {"a": {"b": [1, True, None, (2.5, -math.inf)]}},
            True,
            "gt.a.b[3][1] is not a finite number",
        ),
        ({"a": [[[math.nan]]]}, True, "gt.a[0][0][0] is not a finite number"),
        ({"a": [_Number("inf")]}, True, "gt.a[0] is not a finite number"),
        ({"a": ["é", "plain", "😀 paired"]}, False, None),
        ({"a": ["é", "plain", "é \udc00"]}, True, "gt.a[2] contains an unpaired UTF-16 surrogate"),
        ({"a": {"é\ud83d": "v"}}, True, "gt.a key contains an unpaired UTF-16 surrogate"),
        ({"a": [_Text("\ud800")]}, True, "gt.a[0] contains an unpaired UTF-16 surrogate"),
        # The first in order is named: a key before its value, earlier entries before later.
        ({"k": 1, "x\ud800": math.inf}, True, "gt key contains an unpaired UTF-16 surrogate"),
        ({"a": math.inf, "b": "\x00"}, False, "gt.a is not a finite number"),
        ({"a": [1, {2, 3}, b"\x00", 10**30]}, False, None),
        ("\x00", False, "gt contains a NUL character"),
        (math.inf, True, "gt is not a finite number"),
    ],
)
def test_unstorable_value_finds_what_lies_deep(
    value: Any, allow_nul: bool, found: str | None
) -> None:
    assert unstorable_value(value, "gt", allow_nul=allow_nul) == found


def test_without_nul_returns_a_clean_value_itself() -> None:
    clean = {"a": ["5", 1.5, None, True, {"k": "é😀"}], "b": ("\x00",)}
    assert without_nul(clean) is clean  # a tuple is not walked: its NUL stays, as before


def test_without_nul_copies_when_a_nul_lies_deep() -> None:
    sent = {"a": [1, {"b": ["x", "y"]}], "c": [{"d\x00": "z"}]}
    assert without_nul(sent) == {"a": [1, {"b": ["x", "y"]}], "c": [{"d\ufffd": "z"}]}
    assert sent["c"] == [{"d\x00": "z"}]  # the value sent is left as it was


def test_without_nul_finds_it_where_orjson_cannot_write_the_value() -> None:
    # Keys that are not strings, integers beyond 64 bits and lone surrogates are walked.
    assert without_nul({1: "a\x00"}) == {1: "a\ufffd"}
    assert without_nul({"n": 2**70, "s": "b\x00"}) == {"n": 2**70, "s": "b\ufffd"}
    assert without_nul(["\ud800\x00"]) == ["\ud800\ufffd"]
    clean = {"n": 2**70, "s": "\ud800"}
    assert without_nul(clean) is clean


def test_an_escaped_nul_written_as_text_is_no_nul() -> None:
    sent = {"text": "a literal \\u0000 is six characters"}
    assert without_nul(sent) is sent


def test_without_nul_gives_plain_containers_as_before() -> None:
    sent = OrderedDict(a=_Rows([_Text("x")]))
    kept = without_nul(sent)
    assert kept == sent and type(kept) is dict and type(kept["a"]) is list
    assert type(kept["a"][0]) is _Text  # a string without NUL is the string sent


class _Rows(list[Any]):
    pass


def test_json_chars_is_the_compact_json_length() -> None:
    value = {"a": [1, "é", None, True], "b": {"c": 2.5}}
    assert json_chars(value) == len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-31T12:00:00Z", datetime(2026, 1, 31, 12, tzinfo=UTC)),
        ("2026-01-31T13:00:00.5+01:00", datetime(2026, 1, 31, 12, 0, 0, 500000, tzinfo=UTC)),
        ("0001-01-01T00:00:00+01:00", datetime.min.replace(tzinfo=UTC)),
    ],
)
def test_filter_times_are_rfc3339_moved_to_utc(text: str, expected: datetime) -> None:
    assert TypeAdapter(FilterTime).validate_python(text) == expected


@pytest.mark.parametrize("text", ["0.5", "1700000000", "2026-01-31T12:00:00", "2026-01-31"])
def test_filter_times_refuse_what_the_schema_calls_invalid(text: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(FilterTime).validate_python(text)


def test_stored_times_without_a_zone_are_shown_as_utc() -> None:
    shown = TypeAdapter(UtcDateTime).validate_python(datetime(2026, 1, 31, 12))
    assert shown.tzinfo is UTC


class _Recorder:
    """An app that reads its whole body and answers 200, counting what it saw."""

    def __init__(self) -> None:
        self.called = False
        self.body = b""
        self.saw_disconnect = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.saw_disconnect = True
                break
            self.body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _run(
    limit: int, chunks: list[bytes], content_length: int | None
) -> tuple[_Recorder, list[dict[str, Any]], int]:
    app = _Recorder()
    headers = [] if content_length is None else [(b"content-length", str(content_length).encode())]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    pending = [
        {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
        for index, chunk in enumerate(chunks)
    ]
    reads = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(BodySizeLimit(app, max_body_bytes=limit)(scope, receive, send))
    return app, sent, reads


def _answer(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    start, body = sent[0], sent[1]
    return start["status"], json.loads(body["body"]), dict(start["headers"])


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    app, sent, reads = _run(100, [b"x" * 50] * 4, content_length=200)
    assert not app.called and reads == 0
    status, body, headers = _answer(sent)
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    assert headers[b"connection"] == b"close"


def test_an_undeclared_body_is_refused_at_the_first_chunk_past_the_limit() -> None:
    app, sent, reads = _run(100, [b"x" * 60] * 10, content_length=None)
    # Two chunks read (120 bytes > 100), the other eight never asked for.
    assert reads == 2 and app.saw_disconnect
    assert len(sent) == 2  # the 413 alone: what the app answered after it went nowhere
    status, body, _ = _answer(sent)
    assert status == 413 and "100 bytes" in body["error"]["message"]


def test_a_lying_content_length_is_still_counted() -> None:
    _, sent, _ = _run(100, [b"x" * 60] * 3, content_length=10)
    assert _answer(sent)[0] == 413


def test_a_body_within_the_limit_reaches_the_app_whole() -> None:
    app, sent, _ = _run(100, [b"x" * 50, b"y" * 50], content_length=100)
    assert app.body == b"x" * 50 + b"y" * 50
    assert sent[0]["status"] == 200


def test_other_scopes_pass_through() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    async def nothing() -> dict[str, Any]:
        return {}

    async def ignore(message: Any) -> None:
        return None

    asyncio.run(BodySizeLimit(app, max_body_bytes=1)({"type": "lifespan"}, nothing, ignore))
    assert seen == ["lifespan"]
