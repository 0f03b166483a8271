"""/metrics keeps the run-health series of the RLVR_RUN_HEALTH_GAUGE_RUNS runs checked last, not
of every run ever checked."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.db.session import dispose_engines
from tests.support import AUTH, embedded_settings_in


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = embedded_settings_in(tmp_path_factory.mktemp("gauges"), run_health_gauge_runs=2)
    with TestClient(create_app(settings), headers=AUTH) as test_client:
        yield test_client
    dispose_engines()


def test_metrics_hold_the_runs_checked_last(client: TestClient) -> None:
    runs = [f"gauged-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    for run in runs:
        body = {
            "verifier": "math",
            "run_id": run,
            "step": 0,
            "items": [{"completion": "\\boxed{1}", "ground_truth": "1"}],
        }
        assert client.post("/v1/rewards", json=body).status_code == 200
        assert client.get(f"/v1/runs/{run}/health").status_code == 200

    exposed = client.get("/metrics").text
    gauged = {run for run in runs if f'run_id="{run}"' in exposed}
    assert gauged == set(runs[-2:])
