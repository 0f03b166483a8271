"""The dashboard's run pages on both stores: a run id or a time bound no store can hold is a 422
naming it (a NUL reached Postgres as a 500), and "Older runs" pages through every run."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.db.session import dispose_engines
from service.settings import Settings
from tests.integration.decisions.helpers import decision_row, record
from tests.support import ADMIN_KEY, AUTH, embedded_settings_in

RUN_LINK = re.compile(r'href="/ui/runs/([^"?]+)"')
OLDER_LINK = re.compile(r'<a href="(/ui/runs\?before=[^"]+)">Older runs</a>')


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    if request.param == "sqlite":
        return embedded_settings_in(tmp_path_factory.mktemp("ui-runs"), local_workers=1)
    settings: Settings = request.getfixturevalue("pg_settings")
    return settings


@pytest.fixture(scope="module")
def ui(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store), headers=AUTH) as api:
        client = TestClient(api.app, follow_redirects=False)
        response = client.post("/ui/login", data={"key": ADMIN_KEY, "next": "/ui/runs"})
        assert response.status_code == 303, response.text
        yield client
    dispose_engines()


def assert_422_naming(response: object, field: str) -> None:
    assert getattr(response, "status_code", None) == 422, getattr(response, "text", response)
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] == "invalid_request" and field in error["message"], error


@pytest.mark.parametrize("run_id", ["a%00b", "%00", "x" * 257])
def test_a_run_id_no_run_can_have_is_a_422_naming_it(ui: TestClient, run_id: str) -> None:
    assert_422_naming(ui.get(f"/ui/runs/{run_id}"), "run_id")
    # The connection and the session stay usable.
    assert ui.get("/ui/runs").status_code == 200


@pytest.mark.parametrize("before", ["0.5", "1700000000", "2026-01-31T12:00:00", "\x00"])
def test_a_time_bound_without_a_zone_is_a_422_naming_it(ui: TestClient, before: str) -> None:
    # "0.5" was read as a Unix time: a bound the page never offers, silently accepted.
    assert_422_naming(ui.get("/ui/runs", params={"before": before}), "before")


def test_older_runs_pages_through_every_run(ui: TestClient, store: Settings) -> None:
    # 51 runs long ago (a page holds 50), each seen once, a minute apart; the list starts
    # below a bound after them, so runs other tests write do not matter.
    prefix = f"old-{uuid.uuid4().hex[:8]}"
    origin = datetime(2001, 1, 1, tzinfo=UTC) + timedelta(days=int(uuid.uuid4().int % 3000))
    runs = [f"{prefix}-{i:02d}" for i in range(51)]
    record(
        store,
        [
            decision_row(run_id, 1, index=i, created_at=origin + timedelta(minutes=i))
            for i, run_id in enumerate(runs)
        ],
    )
    bound = (origin + timedelta(hours=2)).isoformat()
    first = ui.get("/ui/runs", params={"before": bound})
    assert first.status_code == 200, first.text
    first_runs = [r for r in RUN_LINK.findall(first.text) if r.startswith(prefix)]
    assert first_runs == runs[::-1][:50]
    older = OLDER_LINK.search(first.text)
    assert older is not None
    second = ui.get(older.group(1).replace("&amp;", "&"))
    assert second.status_code == 200, second.text
    assert [r for r in RUN_LINK.findall(second.text) if r.startswith(prefix)] == runs[:1]
