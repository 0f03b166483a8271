"""Replays on a deployed stack: a run re-scored across two versions, on the background worker;
the report and the table checked against the database."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from service.db.models import Decision, ReplayResult
from service.db.session import session_scope
from service.settings import Settings
from tests.integration.experiments.helpers import (
    expected_paired_report,
    mixed_items,
    post_rewards,
    team_client,
)
from tests.support import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logged_run(team: httpx.Client) -> str:
    """A run of two steps, decided by math (1.0.0)."""
    run_id = f"replayed-{uuid.uuid4().hex[:8]}"
    for step in (1, 2):
        items = mixed_items(f"r{step}", 20)
        post_rewards(team, {"verifier": "math", "run_id": run_id, "step": step, "items": items})
    return run_id


def finished(client: httpx.Client, replay_id: str) -> dict[str, Any]:
    def done() -> bool:
        state = client.get(f"/v1/replays/{replay_id}").json()["state"]
        return state not in ("pending", "running")

    wait_until(done, 120, "the replay to finish")
    return dict(client.get(f"/v1/replays/{replay_id}").json())


def test_a_replay_is_checked_before_it_is_accepted(team: httpx.Client, logged_run: str) -> None:
    bad_target = team.post(
        "/v1/replays",
        json={"filter": {"run_id": logged_run}, "targets": ["math@1.1.0", "math@7.0.0"]},
    )
    assert bad_target.status_code == 422
    assert bad_target.json()["error"]["message"].startswith("targets[1]:")
    steps = team.post(
        "/v1/replays",
        json={"filter": {"run_id": logged_run, "step_from": 3, "step_to": 1}, "target": "math"},
    )
    # A range the wrong way round matches nothing, as the decision filters: a replay of 0.
    assert steps.status_code == 202, steps.text
    assert team.get(f"/v1/replays/{steps.json()['id']}").json()["progress"]["total"] == 0
    no_target = team.post("/v1/replays", json={"filter": {"run_id": logged_run}})
    assert no_target.status_code == 422
    # Legal JSON, but not text any store keeps: sent as raw JSON (an escape, not a character).
    surrogate = team.post(
        "/v1/replays",
        content=b'{"filter": {"run_id": "run-\\ud800"}, "target": "math"}',
        headers={"Content-Type": "application/json"},
    )
    assert surrogate.status_code == 422 and "filter.run_id" in surrogate.json()["error"]["message"]


def test_a_filter_that_names_nothing_is_a_replay_of_nothing(team: httpx.Client) -> None:
    created = team.post("/v1/replays", json={"filter": {"run_id": "no-such-run"}, "target": "math"})
    assert created.status_code == 202, created.text
    assert created.json()["progress"]["total"] == 0
    replay = finished(team, created.json()["id"])
    assert replay["state"] == "done" and replay["progress"] == {
        "done": 0,
        "total": 0,
        "rate_per_s": None,
        "eta_s": 0.0,
    }
    (report,) = replay["reports"]
    assert report["control"]["items"] == 0 and report["reward_delta"] is None
    assert replay["table"]["rows"] == []


def test_a_run_replayed_across_two_versions_gives_one_table(
    team: httpx.Client, logged_run: str, pg_settings: Settings, live_server: str
) -> None:
    created = team.post(
        "/v1/replays",
        json={"filter": {"run_id": logged_run}, "targets": ["math@1.1.0", "math@1.0.0"]},
    )
    assert created.status_code == 202, created.text
    replay = finished(team, created.json()["id"])
    sources = 2 * 20 * 4
    assert replay["state"] == "done"
    assert replay["progress"]["done"] == replay["progress"]["total"] == 2 * sources
    assert replay["progress"]["eta_s"] == 0.0

    with session_scope(pg_settings) as session:
        rows = list(
            session.execute(
                select(Decision, ReplayResult)
                .join(ReplayResult, ReplayResult.source_decision_id == Decision.id)
                .where(ReplayResult.replay_id == uuid.UUID(replay["id"]))
            )
        )
        logged = session.scalar(
            select(func.count()).select_from(Decision).where(Decision.run_id == logged_run)
        )
    assert logged == sources and len(rows) == 2 * sources
    assert all(result.status is not None for _, result in rows)

    tolerant, same = replay["reports"]
    expected = expected_paired_report([(d, r) for d, r in rows if r.target == 0])
    assert tolerant["treatment"]["version"] == "1.1.0"
    assert tolerant["control"]["items"] == expected["items"] == sources
    assert tolerant["confusion"] == expected["confusion"]
    assert tolerant["agreement_rate"] == pytest.approx(expected["agreement"])
    assert tolerant["reward_delta"]["mean"] == pytest.approx(expected["mean_delta"])
    assert tolerant["grpo"]["sign_changed"] == expected["sign_changed"]
    assert tolerant["grpo"]["gains_signal"] == expected["gains_signal"]
    # The version that decided the run agrees with itself on every item.
    assert same["agreement_rate"] == 1.0 and same["reward_delta"]["mean"] == 0.0
    assert same["disagreements"] == [] and same["grpo"]["affected"] == 0

    # The table: every source decision once, with both targets' verdicts, page by page.
    table_rows: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 50, **({"cursor": cursor} if cursor else {})}
        page = team.get(f"/v1/replays/{replay['id']}/table", params=params).json()
        assert page["columns"] == ["source", "math@1.1.0", "math@1.0.0"]
        table_rows.extend(page["rows"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(table_rows) == len({row["decision_id"] for row in table_rows}) == sources
    by_source = {(str(d.id), r.target): r for d, r in rows}
    for row in table_rows:
        for target, cell in enumerate(row["targets"]):
            stored = by_source[(row["decision_id"], target)]
            assert (cell["status"], cell["reward"]) == (stored.status, stored.reward)
        assert row["source"]["status"] == row["targets"][1]["status"]

    with team_client(live_server, pg_settings) as stranger:
        assert stranger.get(f"/v1/replays/{replay['id']}").status_code == 404
        assert stranger.delete(f"/v1/replays/{replay['id']}").status_code == 404
