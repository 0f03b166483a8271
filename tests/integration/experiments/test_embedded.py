"""The embedded mode (SQLite, local pools, no broker): shadow work on the niced background
process, a replay on the same, and the same reports."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.settings import Settings
from tests.integration.experiments.helpers import TOLERANT, mixed_items
from tests.support import ADMIN_KEY, wait_until

pytestmark = pytest.mark.slow


def rewards(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/rewards", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_shadow_and_replay_in_the_embedded_mode(
    embedded_client: TestClient, embedded_settings: Settings
) -> None:
    assert embedded_client.post("/v1/verifiers/math/versions", json=TOLERANT).status_code == 201
    run_id = f"embedded-{uuid.uuid4().hex[:8]}"
    created = embedded_client.post(
        "/v1/experiments",
        json={
            "name": "embedded",
            "verifier": "math",
            "control": "1.0.0",
            "treatment": "1.1.0",
            "mode": "shadow",
            "filter": {"run_id": run_id},
        },
    )
    assert created.status_code == 201, created.text
    experiment = created.json()["id"]
    # Model output is hostile: the dashboard shows it as text.
    hostile = "<script>alert('shadow')</script><b>bold</b> so \\boxed{201}"
    items = [
        *mixed_items("e", 8),
        {"group_id": "e-hostile", "completion": hostile, "ground_truth": "200"},
        {"group_id": "e-hostile", "completion": "so \\boxed{250}", "ground_truth": "200"},
    ]
    response = rewards(embedded_client, {"verifier": "math", "run_id": run_id, "items": items})
    assert {r["version"] for r in response["results"]} == {"1.0.0"}

    def report() -> dict[str, Any]:
        return dict(embedded_client.get(f"/v1/experiments/{experiment}/report").json())

    wait_until(lambda: report()["treatment"]["items"] == len(items), 120, "the shadow work")
    embedded_client.post(f"/v1/experiments/{experiment}/stop")
    shadow = report()
    # 201 and 202 for 200 turn correct: 1 + 2 + 2 items per four groups, and the hostile one.
    assert shadow["confusion"]["incorrect"]["correct"] == 11
    assert shadow["grpo"]["groups"] == 9 and shadow["grpo"]["all_incorrect_to_mixed"] == 3

    created = embedded_client.post(
        "/v1/replays", json={"filter": {"run_id": run_id}, "target": "math@1.1.0"}
    )
    assert created.status_code == 202, created.text
    replay_id = created.json()["id"]

    def replay() -> dict[str, Any]:
        return dict(embedded_client.get(f"/v1/replays/{replay_id}").json())

    wait_until(lambda: replay()["state"] == "done", 120, "the replay")
    (replayed,) = replay()["reports"]
    # The replay re-decides what the shadow decided: the same comparison.
    for key in ("confusion", "agreement_rate", "grpo"):
        assert replayed[key] == shadow[key]
    assert replayed["reward_delta"]["mean"] == pytest.approx(shadow["reward_delta"]["mean"])

    # The dashboard shows both reports, the disagreements side by side, escaped.
    signed_in = embedded_client.post("/ui/login", data={"key": ADMIN_KEY, "next": "/ui/runs"})
    assert signed_in.status_code in (200, 303)
    listing = embedded_client.get("/ui/experiments")
    assert listing.status_code == 200 and f"/ui/experiments/{experiment}" in listing.text
    assert f"/ui/replays/{replay_id}" in listing.text
    for page in (f"/ui/experiments/{experiment}", f"/ui/replays/{replay_id}"):
        shown = embedded_client.get(page)
        assert shown.status_code == 200, shown.text
        assert "&lt;script&gt;alert(&#39;shadow&#39;)&lt;/script&gt;" in shown.text
        assert "<script>" not in shown.text and "<b>bold</b>" not in shown.text
        assert "Disagreements" in shown.text
    assert embedded_client.get("/ui/experiments/not-an-id").status_code == 404
