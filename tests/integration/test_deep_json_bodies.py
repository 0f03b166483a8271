"""JSON bodies nested deeper than the parser goes: a 400 on every JSON route naming where the
body goes too deep, not FastAPI's "There was an error parsing the body". Nesting the parser
takes but a model refuses stays a 422 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

JSON = {"content-type": "application/json"}
OPENERS = {"list": (b"[", b"]"), "object": (b'{"a": ', b"}")}

# A body per route with the nested value in one field (%s), and the path the answer names.
ROUTES = [
    (
        "/v1/rewards",
        b'{"verifier": "math", "items": [{"completion": "1", "ground_truth": "1"}, '
        b'{"completion": "1", "ground_truth": "1", "metadata": {"x": %s}}]}',
        "items.1.metadata.x.",
    ),
    ("/compat/openrlhf", b'{"query": ["q"], "prompts": ["p"], "labels": %s}', "labels."),
    (
        "/v1/fine_tuning/alpha/graders/run",
        b'{"grader": {"type": "string_check"}, "model_sample": "a", "item": {"x": %s}}',
        "item.x.",
    ),
    (
        "/compat/nemo-gym/math/verify",
        b'{"responses_create_params": {"input": "q"}, "trace": %s}',
        "trace.",
    ),
]


def _nested(kind: str, depth: int) -> bytes:
    opener, closer = OPENERS[kind]
    return opener * depth + b"1" + closer * depth


def _post(client: Any, route: str, body: bytes) -> Any:
    return client.post(route, content=body, headers=JSON)


def _too_deep_at(response: Any) -> str:
    """The path the 400 names, without the truncation mark."""
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    prefix = "the body is nested too deep to parse: more than 500 levels at "
    assert error["message"].startswith(prefix), error["message"]
    return str(error["message"].removeprefix(prefix).rstrip("…"))


@pytest.mark.parametrize(("route", "template", "where"), ROUTES)
@pytest.mark.parametrize("kind", OPENERS)
def test_nesting_past_the_parser_is_a_400_naming_where(
    embedded_client: Any, route: str, template: bytes, where: str, kind: str
) -> None:
    step = "0." if kind == "list" else "a."
    for depth in (1000, 5000, 100_000):
        path = _too_deep_at(_post(embedded_client, route, template % _nested(kind, depth)))
        assert path.startswith(where + step * 3), path


def test_nesting_pydantic_refuses_is_still_a_422_naming_the_field(embedded_client: Any) -> None:
    for kind, depth in (("list", 300), ("object", 300), ("list", 600), ("object", 600)):
        body = ROUTES[0][1] % _nested(kind, depth)
        response = _post(embedded_client, "/v1/rewards", body)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["message"].startswith("items.1.metadata.x.")


def test_a_body_of_brackets_only_is_named_from_its_top(embedded_client: Any) -> None:
    response = _post(embedded_client, "/v1/rewards", b"[" * 10_000_000)
    assert _too_deep_at(response).startswith("0.0.0.")


def test_a_syntax_error_before_any_depth_still_says_so(embedded_client: Any) -> None:
    response = _post(embedded_client, "/v1/rewards", b'{"items": [1 2' + b"[" * 5000)
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"verifier": "math", "items": [{"completion": "\xff", "ground_truth": "1"}]}', "utf-8"),
        (
            b'{"verifier": "math", "items": [{"completion": "1", "ground_truth": %s}]}'
            % (b"9" * 5000),
            "integer",
        ),
    ],
)
def test_bytes_json_cannot_decode_are_a_400_saying_why(
    embedded_client: Any, body: bytes, says: str
) -> None:
    response = _post(embedded_client, "/v1/rewards", body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    assert error["message"].startswith("the body is not valid JSON: ")
    assert says in error["message"].lower(), error["message"]
