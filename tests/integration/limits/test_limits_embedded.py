"""Per-key rate and concurrency limits and sandbox budgets through POST /v1/rewards, in the
embedded mode (counts in the API process; the deployed shape keeps them in Redis)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.auth.service import AuthService
from service.db.session import dispose_engines, session_scope
from service.settings import Settings
from service.verifiers.code import budget_s
from tests.integration.limits.helpers import InFlight, gauge, math_items, sleeper_items
from tests.support import embedded_settings_in, wait_until

# One sleeper item's budget: its test's wall clock (3 s) plus the run's overhead.
ITEM_BUDGET_S = budget_s(sleeper_items(1, 0)[0]["ground_truth"])


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Settings]]:
    from fastapi.testclient import TestClient

    from service.app import create_app

    settings = embedded_settings_in(
        tmp_path_factory.mktemp("limited"),
        local_workers=1,
        sandbox_workers=1,
        rate_limit_rps=0.05,
        rate_limit_burst=3,
        max_concurrent_requests_per_key=1,
        max_sandbox_s_per_request=10 * ITEM_BUDGET_S,
        max_sandbox_s_per_tenant_per_minute=2.5 * ITEM_BUDGET_S,
    )
    with TestClient(create_app(settings)) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200, 120, "warm pools")
        yield client, settings
    dispose_engines()


def _key(settings: Settings, tenant: str) -> dict[str, str]:
    """A fresh key (its own rate and concurrency) of ``tenant``."""
    with session_scope(settings) as session:
        _, key = AuthService(session).create_key(tenant, ["rewards:write"], "limits test")
    return {"Authorization": f"Bearer {key}"}


def _admitted_soon(client: Any) -> Any:
    """A condition: one more request than now is in flight (past its key's limits)."""
    baseline = gauge(client.get("/metrics").text)
    return lambda: gauge(client.get("/metrics").text) > baseline


def _post(client: Any, headers: dict[str, str], items: list[dict[str, Any]], verifier: str) -> Any:
    return client.post("/v1/rewards", json={"verifier": verifier, "items": items}, headers=headers)


def test_a_key_past_its_rate_gets_429_with_retry_after(limited: tuple[Any, Settings]) -> None:
    client, settings = limited
    key, other = _key(settings, "rate-team"), _key(settings, "rate-team")
    for _ in range(3):  # the burst
        assert _post(client, key, math_items(1), "math").status_code == 200
    refused = _post(client, key, math_items(1), "math")
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 20  # a token every 20 s
    assert _post(client, other, math_items(1), "math").status_code == 200  # its own bucket


def test_a_key_past_its_requests_in_flight_gets_429(limited: tuple[Any, Settings]) -> None:
    client, settings = limited
    key = _key(settings, "concurrency-team")
    admitted = _admitted_soon(client)
    slow = InFlight(lambda: _post(client, key, sleeper_items(1, 2, 1, "in-flight"), "code"))
    wait_until(admitted, 30, "the slow request to be in flight")
    refused = _post(client, key, math_items(1), "math")
    assert not slow.done, "the slow request ended before a second one was sent"
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "too_many_concurrent_requests"
    assert refused.headers["Retry-After"] == "1"
    assert slow.result(timeout_s=60).status_code == 200
    assert _post(client, key, math_items(1), "math").status_code == 200  # the slot is free


def test_a_request_over_its_sandbox_budget_is_413_naming_the_item(
    limited: tuple[Any, Settings],
) -> None:
    client, settings = limited
    items = sleeper_items(2, 0, tests=1) + sleeper_items(1, 0, tests=40, tag="big")
    refused = _post(client, _key(settings, "request-budget"), items, "code")
    assert refused.status_code == 413, refused.text
    error = refused.json()["error"]
    assert error["code"] == "sandbox_budget_exceeded"
    assert "items[2].ground_truth" in error["message"]
    assert "RLVR_MAX_SANDBOX_S_PER_REQUEST" in error["message"]


def test_a_tenant_past_its_sandbox_minute_gets_429(limited: tuple[Any, Settings]) -> None:
    client, settings = limited
    admitted = _admitted_soon(client)
    first = _key(settings, "budget-team")
    running = InFlight(lambda: _post(client, first, sleeper_items(1, 2, 1, "budget"), "code"))
    wait_until(admitted, 30, "the first request to be in flight")

    def two_more_items() -> Any:
        # A fresh key each time: only the tenant's budget may refuse it. A request that got
        # in before the first reserved its budget used almost none of it and gave it back.
        return _post(client, _key(settings, "budget-team"), sleeper_items(2, 0), "code")

    # While the first holds one item's budget of the tenant's 2.5, two more items do not fit.
    responses: list[Any] = []
    wait_until(
        lambda: responses.append(two_more_items()) or responses[-1].status_code == 429,
        30,
        "the tenant's budget to refuse a request",
    )
    assert not running.done, "the first request ended before the tenant's budget refused one"
    refused = responses[-1]
    assert refused.json()["error"]["code"] == "sandbox_budget_exhausted", refused.text
    assert int(refused.headers["Retry-After"]) >= 1
    other_tenant = _post(client, _key(settings, "other-team"), sleeper_items(2, 0), "code")
    assert other_tenant.status_code == 200, other_tenant.text
    assert running.result(timeout_s=60).status_code == 200


def test_readyz_names_the_embedded_pools(limited: tuple[Any, Settings]) -> None:
    client, _ = limited
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").json()["checks"] == {
        "database": True,
        "cpu pool": True,
        "sandbox pool": True,
    }
