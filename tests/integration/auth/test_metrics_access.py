"""/metrics names tenants and runs (the run-health gauges): unless it is public, only the
operator's keys read it — another tenant's `audit:read` key is refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.auth.keys import SCOPES
from service.db.session import dispose_engines
from tests.integration.auth.test_tenancy import bearer, make_key
from tests.support import AUTH, embedded_settings_in


@pytest.fixture(scope="module")
def private_metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = embedded_settings_in(Path(tmp_path_factory.mktemp("metrics")), metrics_public=False)
    with TestClient(create_app(settings)) as client:
        client.app.state.test_settings = settings  # type: ignore[attr-defined]
        yield client
    dispose_engines()


def test_private_metrics_need_an_operator_key(private_metrics: TestClient) -> None:
    settings = private_metrics.app.state.test_settings  # type: ignore[attr-defined]
    other = bearer(make_key(settings, f"team-{uuid.uuid4().hex[:6]}", list(SCOPES)))
    operator_reader = bearer(make_key(settings, settings.operator_tenant, ["audit:read"]))
    operator_writer = bearer(make_key(settings, settings.operator_tenant, ["rewards:write"]))

    assert private_metrics.get("/metrics").status_code == 401
    refused = private_metrics.get("/metrics", headers=other)
    assert refused.status_code == 403 and "operator" in refused.json()["error"]["message"]
    assert private_metrics.get("/metrics", headers=operator_writer).status_code == 403
    for headers in (AUTH, operator_reader):
        answered = private_metrics.get("/metrics", headers=headers)
        assert answered.status_code == 200 and "rlvr_" in answered.text


def test_public_metrics_answer_without_a_key(embedded_client: TestClient) -> None:
    assert TestClient(embedded_client.app).get("/metrics").status_code == 200
