"""Values no store keeps — non-finite numbers, NUL in filters and names, steps beyond 64 bits,
over-long versions — are a 4xx naming the field on Postgres and SQLite alike: never a 500, never
a 503 that a client would retry forever. Fixed, the same request succeeds."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import AUTH

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgres"])
def api(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The embedded app (SQLite, in process) or the deployed shape over HTTP (Postgres)."""
    if request.param == "sqlite":
        yield request.getfixturevalue("embedded_client")
        return
    base_url = request.getfixturevalue("live_server")
    with httpx.Client(base_url=base_url, headers=AUTH, timeout=120) as client:
        yield client


def assert_422_naming(response: Any, *fragments: str) -> None:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request", error
    for fragment in fragments:
        assert fragment in error["message"], error


def logged(api: Any, run_id: str) -> int:
    response = api.get("/v1/decisions", params={"run_id": run_id})
    assert response.status_code == 200, response.text
    return len(response.json()["decisions"])


def _body(run_id: str, second_ground_truth: str, metadata: str = "{}") -> bytes:
    # Raw text: NaN, Infinity and 1e400 are what a client's JSON encoder may write.
    return (
        f'{{"verifier": "math", "run_id": "{run_id}", "items": ['
        '{"completion": "\\\\boxed{4}", "ground_truth": "4"},'
        f'{{"completion": "\\\\boxed{{5}}", "ground_truth": {second_ground_truth}, '
        f'"metadata": {metadata}}}]}}'
    ).encode()


@pytest.mark.parametrize(
    ("ground_truth", "metadata", "named"),
    [
        ("NaN", "{}", "items[1].ground_truth"),
        ('{"answer": "5", "tolerance": Infinity}', "{}", "items[1].ground_truth.tolerance"),
        ('"5"', '{"score": -Infinity}', "items[1].metadata.score"),
        ('"5"', '{"nested": [1, 1e400]}', "items[1].metadata.nested[1]"),
    ],
)
def test_a_non_finite_number_refuses_the_request_naming_it(
    api: Any, ground_truth: str, metadata: str, named: str
) -> None:
    run_id = f"poison-{uuid.uuid4()}"
    headers = {"content-type": "application/json"}
    refused = api.post(
        "/v1/rewards", content=_body(run_id, ground_truth, metadata), headers=headers
    )
    assert_422_naming(refused, named, "finite")
    assert "retry-after" not in refused.headers
    assert logged(api, run_id) == 0
    # The same request without the bad number: both items are verified.
    fixed = api.post("/v1/rewards", content=_body(run_id, '"5"'), headers=headers)
    assert fixed.status_code == 200, fixed.text
    assert [r["status"] for r in fixed.json()["results"]] == ["correct", "correct"]
    assert logged(api, run_id) == 2


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("/v1/decisions", {"run_id": "a\x00b"}, "run_id"),
        ("/v1/decisions", {"verifier": "ma\x00th"}, "verifier"),
        ("/v1/decisions", {"version": "1.0.0\x00"}, "version"),
        ("/v1/decisions", {"version": "1." * 40}, "version"),
        ("/v1/decisions", {"group_id": "\x00"}, "group_id"),
        ("/v1/decisions", {"request_id": "r\x00"}, "request_id"),
        ("/v1/decisions", {"step": "99999999999999999999"}, "step"),
        ("/v1/decisions", {"step": "-1"}, "step"),
        ("/v1/decisions", {"created_before": "0.5"}, "created_before"),
        ("/v1/decisions", {"created_after": "2026-01-01T00:00:00"}, "created_after"),
        ("/v1/decisions", {"cursor": "not-a-cursor"}, "cursor"),
        ("/v1/stats", {"run_id": "a\x00b"}, "run_id"),
        ("/v1/stats", {"verifier": "x" * 200}, "verifier"),
        ("/v1/stats", {"created_after": "1700000000"}, "created_after"),
        ("/v1/verifiers/ma%00th", {}, "name"),
        ("/v1/verifiers/ma%00th/history", {}, "name"),
    ],
)
def test_a_bad_filter_or_name_is_422_naming_it(
    api: Any, path: str, params: dict[str, str], named: str
) -> None:
    assert_422_naming(api.get(path, params=params), named)


def test_filters_at_their_limits_are_served(api: Any) -> None:
    params = {
        "run_id": "r" * 256,
        "step": str(2**53 - 1),
        "created_after": "0001-01-01T00:00:00+01:00",
        "created_before": "9999-12-31T23:59:59-01:00",
    }
    response = api.get("/v1/decisions", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["decisions"] == []


@pytest.mark.parametrize(
    ("method", "path", "body", "named"),
    [
        ("post", "/v1/rewards", {"verifier": "math\x00", "items": [{}]}, "verifier"),
        ("post", "/v1/rewards", {"verifier": "math", "run_id": "a\x00", "items": []}, "run_id"),
        (
            "post",
            "/v1/verifiers/{name}/versions",
            {"version": "1.0.0", "kind": "math", "description": "nul\x00"},
            "description",
        ),
        (
            "post",
            "/v1/verifiers/{name}/versions",
            {"version": "1.0.0+" + "b" * 80, "kind": "math"},
            "version",
        ),
        (
            "post",
            "/v1/verifiers/{name}/versions",
            {
                "version": "1.0.0",
                "kind": "composite",
                "config": {"components": [{"name": "a\x00"}]},
            },
            "config.components[0].name",
        ),
        (
            "put",
            "/v1/verifiers/{name}/aliases/stable",
            {"version": "1.0.0+" + "b" * 80},
            "version",
        ),
        (
            "put",
            "/v1/verifiers/{name}/aliases/stable",
            {"version": "1.0.0", "reason": "because\x00"},
            "reason",
        ),
    ],
)
def test_nul_and_over_long_values_in_bodies_are_422_naming_them(
    api: Any, method: str, path: str, body: dict[str, Any], named: str
) -> None:
    path = path.format(name=f"poison-{uuid.uuid4().hex[:8]}")
    assert_422_naming(getattr(api, method)(path, json=body), named)


def test_non_finite_numbers_in_a_published_config_are_422(api: Any) -> None:
    path = f"/v1/verifiers/poison-{uuid.uuid4().hex[:8]}/versions"
    body = b'{"version": "1.0.0", "kind": "math", "config": {"rel_tol": NaN}}'
    response = api.post(path, content=body, headers={"content-type": "application/json"})
    assert_422_naming(response, "config.rel_tol", "finite")


def test_compat_routes_refuse_what_they_cannot_store_or_echo(api: Any) -> None:
    headers = {"content-type": "application/json"}
    openrlhf = b'{"query": ["\\\\boxed{4}"], "labels": [1e400]}'
    response = api.post("/compat/openrlhf", content=openrlhf, headers=headers)
    assert_422_naming(response, "labels[0]", "finite")
    # NeMo-Gym turns any error status into a crash of its rollout collection: a sample it
    # cannot store is a masked 200 naming the value, and what cannot be echoed is left out.
    nemo = {"response": {"output_text": "4", "score": float("nan")}, "expected_answer": "4"}
    response = api.post("/compat/nemo-gym/math/verify", content=json.dumps(nemo), headers=headers)
    assert response.status_code == 200, response.text
    masked = response.json()
    assert masked["mask_sample"] is True and masked["reward"] == 0.0
    assert "response.score" in masked["failure_reason"] and "finite" in masked["failure_reason"]
    assert "response" not in masked and masked["expected_answer"] == "4"
    response = api.post(
        "/compat/openrlhf",
        params={"verifier": "math\x00"},
        json={"query": ["\\boxed{4}"], "labels": ["4"]},
    )
    assert_422_naming(response, "verifier")
