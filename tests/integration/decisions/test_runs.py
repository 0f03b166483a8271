"""Audit of a whole run: a synthetic run whose health degrades midway, read back per step."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.auth.service import AuthService
from service.db.session import session_scope
from service.settings import Settings
from tests.support import AUTH, embedded_settings_in

STEPS = 12
GROUPS = 3
SIZE = 4


@pytest.fixture(scope="module")
def app_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return embedded_settings_in(tmp_path_factory.mktemp("runs"), health_window_steps=4)


@pytest.fixture(scope="module")
def client(app_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(app_settings), headers=AUTH) as test_client:
        yield test_client


def _completion(step: int, correct: bool, answer: int) -> str:
    # Late steps ramble: the completion grows while the reward does not.
    filler = "Let me think about this again. " * (1 if step < 6 else 40)
    return f"{filler}So the answer is \\boxed{{{answer if correct else answer + 1}}}."


def _items(step: int) -> list[dict[str, Any]]:
    """Early steps: mixed groups (signal). Late steps: every group all wrong (no signal)."""
    items = []
    for group in range(GROUPS):
        answer = 100 * (group + 1) + step
        for member in range(SIZE):
            correct = step < 6 and member % 2 == 0
            items.append(
                {
                    "group_id": f"s{step}-g{group}",
                    "prompt": f"Compute the value for case {group}.",
                    "completion": _completion(step, correct, answer),
                    "ground_truth": str(answer),
                }
            )
    return items


@pytest.fixture(scope="module")
def run_id(client: TestClient) -> str:
    """Steps 0-5 with math@1.0.0, steps 6-11 with a republished math@1.0.1."""
    published = client.post(
        "/v1/verifiers/math/versions", json={"version": "1.0.1", "kind": "math", "config": {}}
    )
    assert published.status_code == 201, published.text
    run = f"health-{uuid.uuid4().hex[:8]}"
    for step in range(STEPS):
        verifier = "math@1.0.0" if step < 6 else "math@1.0.1"
        body = {"verifier": verifier, "run_id": run, "step": step, "items": _items(step)}
        response = client.post("/v1/rewards", json=body)
        assert response.status_code == 200, response.text
    return run


def test_the_run_is_listed(client: TestClient, run_id: str) -> None:
    runs = client.get("/v1/runs").json()["runs"]
    (run,) = [r for r in runs if r["run_id"] == run_id]
    assert run["decisions"] == STEPS * GROUPS * SIZE
    assert (run["first_step"], run["last_step"]) == (0, STEPS - 1)


def test_each_step_is_summarised(client: TestClient, run_id: str) -> None:
    detail = client.get(f"/v1/runs/{run_id}").json()
    assert detail["decisions"] == STEPS * GROUPS * SIZE
    steps = detail["steps"]
    assert [s["step"] for s in steps] == list(range(STEPS))
    early, late = steps[0], steps[-1]
    assert early["decisions"] == GROUPS * SIZE and early["scored"] == GROUPS * SIZE
    assert early["reward"]["mean"] == pytest.approx(0.5)
    assert early["reward"]["std"] == pytest.approx(0.5)
    assert early["components"]["accuracy"]["mean"] == pytest.approx(0.5)
    assert early["statuses"] == {"correct": 6, "incorrect": 6}
    assert early["groups"] == {
        "groups": GROUPS,
        "solved_none": 0,
        "solved_some": GROUPS,
        "solved_all": 0,
        "all_same": 0,
        "all_same_fraction": 0.0,
    }
    assert late["reward"]["mean"] == 0.0
    assert late["groups"]["solved_none"] == GROUPS and late["groups"]["all_same"] == GROUPS
    assert late["completion_chars_mean"] > 10 * early["completion_chars_mean"]
    assert late["latency_ms"]["p50"] is not None
    assert late["latency_ms"]["p50"] <= late["latency_ms"]["p95"] <= late["latency_ms"]["p99"]
    versions = [(v["version"], v["first_step"], v["last_step"]) for v in detail["versions"]]
    assert versions == [("1.0.0", 0, 5), ("1.0.1", 6, STEPS - 1)]


def test_health_warns_as_the_run_degrades(client: TestClient, run_id: str) -> None:
    health = client.get(f"/v1/runs/{run_id}/health").json()
    assert health["status"] == "warning"
    kinds = {warning["kind"] for warning in health["warnings"]}
    assert {"all_same_groups", "length_without_reward", "version_changed"} <= kinds
    assert "timeout_rate" not in kinds and "error_rate" not in kinds
    changed = next(w for w in health["warnings"] if w["kind"] == "version_changed")
    assert changed["step"] == 6
    # Every rejected answer is the truth + 1: within 1% of it, so queued for review.
    review = health["review"]
    assert review["possibly_correct"] == STEPS * GROUPS * SIZE - 6 * 6
    assert "possibly_correct_rejected" in kinds
    metrics = client.get("/metrics").text
    assert f'kind="all_same_groups",run_id="{run_id}",tenant="default"}} 1.0' in metrics


def test_a_healthy_run_has_no_warnings(client: TestClient) -> None:
    run = f"fine-{uuid.uuid4().hex[:8]}"
    for step in range(3):
        items = [
            {"group_id": f"{step}-{g}", "completion": f"\\boxed{{{m}}}", "ground_truth": "0"}
            for g in range(2)
            for m in range(2)
        ]
        body = {"verifier": "math", "run_id": run, "step": step, "items": items}
        assert client.post("/v1/rewards", json=body).status_code == 200
    health = client.get(f"/v1/runs/{run}/health").json()
    assert health == {
        "run_id": run,
        "status": "ok",
        "window_steps": 3,
        "warnings": [],
        "review": {"possibly_correct": 0, "decision_ids": []},
    }


def test_another_tenants_run_is_not_found(
    client: TestClient, app_settings: Settings, run_id: str
) -> None:
    with session_scope(app_settings) as session:
        _, key = AuthService(session).create_key("other-team", ["audit:read"])
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get(f"/v1/runs/{run_id}", headers=headers).status_code == 404
    assert client.get(f"/v1/runs/{run_id}/health", headers=headers).status_code == 404
    runs = client.get("/v1/runs", headers=headers).json()["runs"]
    assert run_id not in {r["run_id"] for r in runs}


def test_an_unknown_run_is_404(client: TestClient, tmp_path: Path) -> None:
    response = client.get("/v1/runs/never-seen")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_run_with_an_empty_id_is_a_run_like_any_other(client: TestClient) -> None:
    body = {
        "verifier": "math",
        "run_id": "",
        "step": 0,
        "items": [{"completion": "\\boxed{1}", "ground_truth": "1"}],
    }
    assert client.post("/v1/rewards", json=body).status_code == 200
    assert "" in {run["run_id"] for run in client.get("/v1/runs").json()["runs"]}
    detail = client.get("/v1/runs/")
    assert detail.status_code == 200 and detail.json()["run_id"] == ""
    assert client.get("/v1/runs//health").status_code == 200
