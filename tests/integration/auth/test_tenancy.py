"""Keys, scopes and tenants: nobody reads or changes a team's rewards but that team."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.auth.keys import SCOPES
from service.auth.service import AuthService
from service.db.base import utcnow
from service.db.session import session_scope
from service.settings import Settings
from tests.support import wait_until

MATH_ITEM = {"completion": "so \\boxed{4}", "ground_truth": "4"}


def make_key(settings: Settings, tenant: str, scopes: list[str], **options: Any) -> str:
    with session_scope(settings) as session:
        _, key = AuthService(session).create_key(tenant, scopes, **options)
    return key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def anonymous(embedded_client: Any) -> Iterator[TestClient]:
    """The same running app, called without any key."""
    yield TestClient(embedded_client.app)


@pytest.fixture(scope="module")
def team_a(embedded_settings: Settings) -> dict[str, str]:
    return bearer(make_key(embedded_settings, f"team-a-{uuid.uuid4().hex[:6]}", list(SCOPES)))


@pytest.fixture(scope="module")
def team_b(embedded_settings: Settings) -> dict[str, str]:
    return bearer(make_key(embedded_settings, f"team-b-{uuid.uuid4().hex[:6]}", list(SCOPES)))


def rewards(client: Any, headers: dict[str, str], **body: Any) -> Any:
    payload = {"verifier": "math", "items": [MATH_ITEM], **body}
    return client.post("/v1/rewards", json=payload, headers=headers)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/rewards"),
        ("GET", "/v1/decisions"),
        ("GET", f"/v1/decisions/{uuid.uuid4()}"),
        ("GET", "/v1/stats"),
        ("GET", "/v1/verifiers"),
        ("GET", "/v1/verifiers/math/history"),
        ("POST", "/v1/verifiers/mine/versions"),
        ("PUT", "/v1/verifiers/math/aliases/stable"),
        ("POST", "/compat/openrlhf"),
        ("POST", "/compat/nemo-gym/verify"),
    ],
)
def test_every_api_route_needs_a_key(anonymous: TestClient, method: str, path: str) -> None:
    response = anonymous.request(method, path, json={})
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_health_routes_stay_open(anonymous: TestClient) -> None:
    assert anonymous.get("/healthz").status_code == 200
    # /readyz answers without a key: 503 while the pools warm up, then 200.
    wait_until(lambda: anonymous.get("/readyz").status_code == 200, 120, "/readyz to answer 200")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer rlvr_000000000000_" + "x" * 43,
        "Bearer not-a-key-of-anyone-at-all-here",
        "Basic dXNlcjpwYXNz",
        "Bearer " + "k" * 300,
    ],
)
def test_a_wrong_key_is_401(anonymous: TestClient, header: str) -> None:
    response = rewards(anonymous, {"Authorization": header})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_a_key_without_the_scope_is_403(anonymous: TestClient, embedded_settings: Settings) -> None:
    reader = bearer(make_key(embedded_settings, "readers", ["audit:read"]))
    response = rewards(anonymous, reader)
    assert response.status_code == 403
    assert "rewards:write" in response.json()["error"]["message"]
    assert anonymous.get("/v1/decisions", headers=reader).status_code == 200
    writer = bearer(make_key(embedded_settings, "writers", ["rewards:write"]))
    assert rewards(anonymous, writer).status_code == 200
    assert anonymous.get("/v1/decisions", headers=writer).status_code == 403
    response = anonymous.put(
        "/v1/verifiers/math/aliases/canary", json={"version": "1.0.0"}, headers=writer
    )
    assert response.status_code == 403


def test_a_tenant_sees_only_its_own_decisions(
    anonymous: TestClient, team_a: dict[str, str], team_b: dict[str, str]
) -> None:
    run_id = f"private-{uuid.uuid4()}"
    response = rewards(anonymous, team_a, run_id=run_id)
    assert response.status_code == 200
    decision_id = response.json()["results"][0]["decision_id"]
    assert anonymous.get(f"/v1/decisions/{decision_id}", headers=team_a).status_code == 200

    other = anonymous.get(f"/v1/decisions/{decision_id}", headers=team_b)
    assert other.status_code == 404
    listed = anonymous.get("/v1/decisions", params={"run_id": run_id}, headers=team_b).json()
    assert listed["decisions"] == []
    stats = anonymous.get("/v1/stats", params={"run_id": run_id}, headers=team_b).json()
    assert stats["total"] == 0
    mine = anonymous.get("/v1/decisions", params={"run_id": run_id}, headers=team_a).json()
    assert [d["id"] for d in mine["decisions"]] == [decision_id]


def test_idempotency_keys_belong_to_their_tenant(
    anonymous: TestClient, team_a: dict[str, str], team_b: dict[str, str]
) -> None:
    key = f"shared-{uuid.uuid4()}"
    item = {"completion": f"{key} gives \\boxed{{4}}", "ground_truth": "4"}
    first = rewards(anonymous, {**team_a, "Idempotency-Key": key}, items=[item])
    second = rewards(anonymous, {**team_b, "Idempotency-Key": key}, items=[item])
    assert first.status_code == second.status_code == 200, second.text
    assert first.json()["results"][0]["decision_id"] != second.json()["results"][0]["decision_id"]
    # Team B's request was decided for B: not answered from A's decisions or A's verdict cache.
    assert second.json()["results"][0]["cached"] is False
    again = rewards(anonymous, {**team_b}, items=[item])
    assert again.json()["results"][0]["cached"] is True


def test_only_the_owner_changes_a_verifier(
    anonymous: TestClient, embedded_settings: Settings
) -> None:
    owner_key = bearer(make_key(embedded_settings, "owner", ["verifiers:admin", "audit:read"]))
    other_key = bearer(make_key(embedded_settings, "stranger", ["verifiers:admin"]))
    name = f"team-math-{uuid.uuid4().hex[:6]}"
    version = {"version": "1.0.0", "kind": "math", "config": {}}
    created = anonymous.post(f"/v1/verifiers/{name}/versions", json=version, headers=owner_key)
    assert created.status_code == 201, created.text
    more = {**version, "version": "1.1.0"}
    taken = anonymous.post(f"/v1/verifiers/{name}/versions", json=more, headers=other_key)
    assert taken.status_code == 403
    move = {"version": "1.0.0", "reason": "try it"}
    path = f"/v1/verifiers/{name}/aliases/stable"
    assert anonymous.put(path, json=move, headers=other_key).status_code == 403
    # Built-in verifiers belong to the operator's tenant alone.
    builtin_move = anonymous.put(
        "/v1/verifiers/math/aliases/stable", json={"version": "1.0.0"}, headers=owner_key
    )
    assert builtin_move.status_code == 403
    builtin_publish = anonymous.post(
        "/v1/verifiers/math/versions", json={**version, "version": "9.0.0"}, headers=owner_key
    )
    assert builtin_publish.status_code == 403

    assert anonymous.put(path, json=move, headers=owner_key).status_code == 200
    history = anonymous.get(f"/v1/verifiers/{name}/history", headers=other_key)
    assert history.status_code == 200
    (entry,) = history.json()
    assert entry["alias"] == "stable" and entry["to_version"] == "1.0.0"
    assert entry["from_version"] is None and entry["reason"] == "try it"
    assert entry["tenant_id"] == "owner"


def test_the_operator_moves_a_builtin_alias_and_the_move_is_kept(
    embedded_client: Any,
) -> None:
    response = embedded_client.put(
        "/v1/verifiers/format/aliases/canary", json={"version": "1.0.0", "reason": "canary"}
    )
    assert response.status_code == 200
    history = embedded_client.get("/v1/verifiers/format/history").json()
    assert history[0]["alias"] == "canary" and history[0]["reason"] == "canary"
    assert history[0]["tenant_id"] == "default" and history[0]["key_id"] == "bootstrap"


def test_a_revoked_key_stops_working(anonymous: TestClient, embedded_settings: Settings) -> None:
    with session_scope(embedded_settings) as session:
        row, key = AuthService(session).create_key("revokers", ["rewards:write"])
    assert rewards(anonymous, bearer(key)).status_code == 200
    with session_scope(embedded_settings) as session:
        AuthService(session).revoke(row.id)
    # Each API process remembers a verified key for a few seconds.
    wait_until(lambda: rewards(anonymous, bearer(key)).status_code == 401, 15, "the revocation")


def test_an_expired_key_is_401(anonymous: TestClient, embedded_settings: Settings) -> None:
    past = utcnow() - timedelta(seconds=1)
    key = make_key(embedded_settings, "expired", ["rewards:write"], expires_at=past)
    response = rewards(anonymous, bearer(key))
    assert response.status_code == 401
    assert "expired" in response.json()["error"]["message"]
