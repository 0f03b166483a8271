"""Labels, canary cases and the promotion gate: a regressing version cannot become stable
unless someone forces it, with a reason that is kept."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.auth.service import AuthService
from service.db.session import session_scope
from service.settings import Settings


def bearer(settings: Settings, tenant: str, scopes: list[str]) -> dict[str, str]:
    with session_scope(settings) as session:
        _, key = AuthService(session).create_key(tenant, scopes)
    return {"Authorization": f"Bearer {key}"}


def decide(client: TestClient, items: list[dict[str, Any]], verifier: str = "math") -> list[Any]:
    response = client.post("/v1/rewards", json={"verifier": verifier, "items": items})
    assert response.status_code == 200, response.text
    return list(response.json()["results"])


@pytest.fixture(scope="module")
def labelled(embedded_client: TestClient) -> dict[str, str]:
    """Two decisions of math@1.0.0, labelled by a person: both verdicts were right."""
    close = {"completion": "pi is about \\boxed{3.1416}", "ground_truth": "\\pi"}
    half = {"completion": "so \\boxed{0.5}", "ground_truth": "\\frac{1}{2}"}
    close_result, half_result = decide(embedded_client, [close, half])
    assert (close_result["status"], half_result["status"]) == ("incorrect", "correct")
    for result, verdict in ((close_result, "incorrect"), (half_result, "correct")):
        response = embedded_client.post(
            f"/v1/decisions/{result['decision_id']}/labels",
            json={"verdict": verdict, "note": "checked by hand"},
        )
        assert response.status_code == 201, response.text
    return {"close": close_result["decision_id"], "half": half_result["decision_id"]}


def publish(client: TestClient, version: str, config: dict[str, Any]) -> None:
    body = {"version": version, "kind": "math", "config": config}
    response = client.post("/v1/verifiers/math/versions", json=body)
    assert response.status_code == 201, response.text


def test_a_label_holds_for_the_input_and_is_readable(
    embedded_client: TestClient, labelled: dict[str, str]
) -> None:
    labels = embedded_client.get(f"/v1/decisions/{labelled['close']}/labels").json()
    assert [(label["verdict"], label["note"]) for label in labels] == [
        ("incorrect", "checked by hand")
    ]
    # The same input judged again (another request, same version) carries the same label.
    (again,) = decide(
        embedded_client, [{"completion": "pi is about \\boxed{3.1416}", "ground_truth": "\\pi"}]
    )
    relabel = embedded_client.get(f"/v1/decisions/{again['decision_id']}/labels").json()
    assert [label["verdict"] for label in relabel] == ["incorrect"]


def test_labels_need_their_scope_and_stay_in_their_tenant(
    embedded_client: TestClient, embedded_settings: Settings, labelled: dict[str, str]
) -> None:
    reader = bearer(embedded_settings, "default", ["audit:read"])
    path = f"/v1/decisions/{labelled['half']}/labels"
    assert (
        embedded_client.post(path, json={"verdict": "correct"}, headers=reader).status_code == 403
    )
    stranger = bearer(
        embedded_settings, f"other-{uuid.uuid4().hex[:6]}", ["labels:write", "audit:read"]
    )
    assert (
        embedded_client.post(path, json={"verdict": "correct"}, headers=stranger).status_code == 404
    )
    assert embedded_client.get(path, headers=stranger).status_code == 404
    bad = embedded_client.post(path, json={"verdict": "maybe"})
    assert bad.status_code == 422


def test_canary_cases_belong_to_the_verifiers_owner(
    embedded_client: TestClient, embedded_settings: Settings
) -> None:
    cases = {"cases": [{"completion": "\\boxed{7}", "ground_truth": "7", "verdict": "correct"}]}
    assert embedded_client.post("/v1/verifiers/math/cases", json=cases).status_code == 201
    stranger = bearer(embedded_settings, f"other-{uuid.uuid4().hex[:6]}", ["verifiers:admin"])
    response = embedded_client.post("/v1/verifiers/math/cases", json=cases, headers=stranger)
    assert response.status_code == 403
    listed = embedded_client.get("/v1/verifiers/math/cases").json()
    assert [c["completion"] for c in listed] == ["\\boxed{7}"]


def test_a_regressing_version_is_refused_naming_the_contradicted_case(
    embedded_client: TestClient, labelled: dict[str, str]
) -> None:
    # 1% tolerance accepts 3.1416 for pi: the person said that answer is wrong.
    publish(embedded_client, "2.0.0", {"rel_tol": 0.01})
    response = embedded_client.put("/v1/verifiers/math/aliases/stable", json={"version": "2.0.0"})
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "promotion_refused"
    gate = error["details"]["gate"]
    assert gate["passed"] is False and gate["cases"] == 3  # two labels and one canary
    (contradicted,) = gate["contradicted"]
    assert contradicted["source"] == "label" and contradicted["ref"] == labelled["close"]
    assert (contradicted["expected"], contradicted["status"]) == ("incorrect", "correct")
    # Nothing moved: math still resolves to 1.0.0.
    (result,) = decide(embedded_client, [{"completion": "\\boxed{2}", "ground_truth": "2"}])
    assert result["version"] == "1.0.0"


def test_forcing_needs_a_reason_and_is_recorded(embedded_client: TestClient) -> None:
    publish(embedded_client, "2.0.2", {"rel_tol": 0.02})
    no_reason = embedded_client.put(
        "/v1/verifiers/math/aliases/stable", json={"version": "2.0.2", "force": True}
    )
    assert no_reason.status_code == 422
    forced = embedded_client.put(
        "/v1/verifiers/math/aliases/stable",
        json={"version": "2.0.2", "force": True, "reason": "experiment with tolerance"},
    )
    assert forced.status_code == 200, forced.text
    assert forced.json()["forced"] is True and forced.json()["gate"]["passed"] is False
    (move, *_) = embedded_client.get("/v1/verifiers/math/history").json()
    assert (move["to_version"], move["forced"], move["reason"]) == (
        "2.0.2",
        True,
        "experiment with tolerance",
    )


def test_a_version_that_agrees_with_every_case_is_promoted(embedded_client: TestClient) -> None:
    publish(embedded_client, "2.1.0", {})
    response = embedded_client.put(
        "/v1/verifiers/math/aliases/stable", json={"version": "2.1.0", "reason": "same checks"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["forced"] is False and body["gate"]["passed"] is True
    assert body["gate"]["contradicted"] == []
    (move, *_) = embedded_client.get("/v1/verifiers/math/history").json()
    assert (move["from_version"], move["to_version"], move["forced"]) == ("2.0.2", "2.1.0", False)
    (result,) = decide(embedded_client, [{"completion": "\\boxed{2}", "ground_truth": "2"}])
    assert result["version"] == "2.1.0"
