"""Shadow and split experiments on a deployed stack: real HTTP, Postgres, Redis, the reward
workers and the background worker. Every report figure is checked against the database."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from service.settings import Settings
from tests.integration.experiments.helpers import (
    assigned,
    expected_paired_report,
    mixed_items,
    post_rewards,
    shadow_pairs,
    team_client,
)
from tests.support import wait_until

pytestmark = pytest.mark.slow


def start(client: httpx.Client, **body: Any) -> dict[str, Any]:
    payload = {"name": "tolerance", "verifier": "math", "control": "1.0.0", "treatment": "1.1.0"}
    response = client.post("/v1/experiments", json={**payload, **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_an_experiment_is_checked_before_it_starts(team: httpx.Client) -> None:
    base = {"name": "x", "verifier": "math", "control": "1.0.0", "mode": "split"}
    missing = team.post("/v1/experiments", json={**base, "treatment": "9.9.9"})
    assert missing.status_code == 422
    assert missing.json()["error"]["message"].startswith("treatment:")
    same = team.post("/v1/experiments", json={**base, "treatment": "1.0.0"})
    assert same.status_code == 422 and same.json()["error"]["code"] == "same_version"
    for split in (0, 1, 1.5, -0.1):
        bad = team.post("/v1/experiments", json={**base, "treatment": "1.1.0", "split": split})
        assert bad.status_code == 422 and "split" in bad.json()["error"]["message"]
    unknown = team.post("/v1/experiments", json={**base, "treatment": "1.1.0", "mode": "both"})
    assert unknown.status_code == 422 and "mode" in unknown.json()["error"]["message"]
    stray = team.post("/v1/experiments", json={**base, "treatment": "1.1.0", "filter": {"step": 3}})
    assert stray.status_code == 422 and "filter" in stray.json()["error"]["message"]


def test_overlapping_experiments_are_refused_until_the_first_stops(team: httpx.Client) -> None:
    run_id = f"overlap-{uuid.uuid4().hex[:8]}"
    first = start(team, mode="shadow", filter={"run_id": run_id})
    again = team.post(
        "/v1/experiments",
        json={
            "name": "b",
            "verifier": "math",
            "control": "1.0.0",
            "treatment": "1.1.0",
            "mode": "split",
        },
    )  # no filter: every run, this one included
    assert again.status_code == 409, again.text
    assert again.json()["error"]["details"]["experiment_id"] == first["id"]
    other_run = start(team, mode="split", filter={"run_id": f"{run_id}-other"})
    assert team.post(f"/v1/experiments/{other_run['id']}/stop").json()["state"] == "stopped"
    stopped = team.post(f"/v1/experiments/{first['id']}/stop").json()
    assert stopped["state"] == "stopped" and stopped["stopped_at"] is not None
    listed = team.get("/v1/experiments", params={"state": "running"}).json()
    assert first["id"] not in {e["id"] for e in listed}


def test_experiments_belong_to_their_tenant_and_need_their_scopes(
    team: httpx.Client, live_server: str, pg_settings: Settings
) -> None:
    mine = start(team, mode="shadow", filter={"run_id": f"tenancy-{uuid.uuid4().hex[:8]}"})
    try:
        with team_client(live_server, pg_settings) as stranger:
            assert stranger.get(f"/v1/experiments/{mine['id']}").status_code == 404
            assert stranger.get(f"/v1/experiments/{mine['id']}/report").status_code == 404
            assert stranger.post(f"/v1/experiments/{mine['id']}/stop").status_code == 404
            assert mine["id"] not in {e["id"] for e in stranger.get("/v1/experiments").json()}
        with team_client(live_server, pg_settings, ["audit:read"]) as reader:
            body = {
                "name": "r",
                "verifier": "math",
                "control": "1.0.0",
                "treatment": "1.1.0",
                "mode": "shadow",
            }
            assert reader.post("/v1/experiments", json=body).status_code == 403
    finally:
        team.post(f"/v1/experiments/{mine['id']}/stop")


def test_split_sends_whole_groups_to_one_arm_and_reports_what_was_logged(
    team: httpx.Client, pg_settings: Settings
) -> None:
    run_id = f"split-{uuid.uuid4().hex[:8]}"
    experiment = start(team, mode="split", split=0.5, filter={"run_id": run_id})
    items = mixed_items("s", 48)
    # The same groups again in a later request (a new step): they keep their arm.
    first = post_rewards(team, {"verifier": "math", "run_id": run_id, "step": 1, "items": items})
    again = post_rewards(team, {"verifier": "math", "run_id": run_id, "step": 2, "items": items})
    # Outside the experiment: another run, and a pinned version in this run.
    outside = post_rewards(team, {"verifier": "math", "run_id": f"{run_id}-x", "items": items[:8]})
    pinned = post_rewards(
        team, {"verifier": "math@1.0.0", "run_id": run_id, "step": 3, "items": items[:8]}
    )
    team.post(f"/v1/experiments/{experiment['id']}/stop")
    assert {r["version"] for r in outside["results"] + pinned["results"]} == {"1.0.0"}

    arm_of_group: dict[str, set[str]] = {}
    for response in (first, again):
        for item, result in zip(items, response["results"], strict=True):
            arm_of_group.setdefault(item["group_id"], set()).add(result["version"])
    assert all(len(versions) == 1 for versions in arm_of_group.values())
    treated = sum(versions == {"1.1.0"} for versions in arm_of_group.values())
    assert 0 < treated < len(arm_of_group)

    rows = assigned(pg_settings, experiment["id"])
    assert len(rows) == 2 * len(items)
    arm_version = {"control": "1.0.0", "treatment": "1.1.0"}
    assert all(decision.verifier_version == arm_version[arm] for arm, decision in rows)
    by_group: dict[str, set[str]] = {}
    for arm, decision in rows:
        by_group.setdefault(decision.group_id or "", set()).add(arm)
    assert all(len(arms) == 1 for arms in by_group.values())

    report = team.get(f"/v1/experiments/{experiment['id']}/report").json()
    assert report["kind"] == "split" and report["paired"] is False
    for arm in ("control", "treatment"):
        logged = [d for a, d in rows if a == arm]
        assert report[arm]["items"] == len(logged)
        statuses: dict[str, int] = {}
        for decision in logged:
            statuses[decision.status] = statuses.get(decision.status, 0) + 1
        assert report[arm]["statuses"] == dict(sorted(statuses.items()))
        mean = sum(d.reward or 0.0 for d in logged) / len(logged)
        assert report[arm]["mean_reward"] == pytest.approx(mean)
        groups = {(d.request_id, d.group_id) for d in logged}
        assert report["grpo_by_arm"][arm]["groups"] == len(groups)
    delta = report["reward_delta"]
    expected = report["treatment"]["mean_reward"] - report["control"]["mean_reward"]
    assert delta["method"] == "welch" and delta["mean"] == pytest.approx(expected)
    assert delta["low"] < delta["mean"] < delta["high"]


def test_shadow_keeps_the_controls_rewards_and_links_the_treatments_verdicts(
    team: httpx.Client, pg_settings: Settings
) -> None:
    run_id = f"shadow-{uuid.uuid4().hex[:8]}"
    experiment = start(team, mode="shadow", filter={"run_id": run_id})
    items = mixed_items("h", 24)
    responses = [
        post_rewards(team, {"verifier": "math", "run_id": run_id, "step": s, "items": chunk})
        for s, chunk in enumerate((items[:48], items[48:]))
    ]
    results = [r for response in responses for r in response["results"]]
    # The trainer got 1.0.0's rewards, exactly: 201 for 200 is wrong under it.
    assert {r["version"] for r in results} == {"1.0.0"}
    exact = ["\\boxed{200}" in item["completion"] for item in items]
    assert [r["reward"] for r in results] == [1.0 if e else 0.0 for e in exact]

    wait_until(
        lambda: len(shadow_pairs(pg_settings, experiment["id"])) == len(items),
        60,
        "the treatment to decide every shadowed item",
    )
    team.post(f"/v1/experiments/{experiment['id']}/stop")
    pairs = shadow_pairs(pg_settings, experiment["id"])
    assert {decision.id for decision, _ in pairs} == {uuid.UUID(r["decision_id"]) for r in results}
    assert {shadow.verifier_version for _, shadow in pairs} == {"1.1.0"}

    report = team.get(f"/v1/experiments/{experiment['id']}/report", params={"limit": 5}).json()
    expected = expected_paired_report(pairs)
    assert report["kind"] == "shadow" and report["paired"] is True
    assert report["control"]["items"] == report["treatment"]["items"] == expected["items"]
    assert report["agreement_rate"] == pytest.approx(expected["agreement"])
    assert report["confusion"] == expected["confusion"]
    assert report["reward_delta"]["mean"] == pytest.approx(expected["mean_delta"])
    assert report["reward_delta"]["low"] <= expected["mean_delta"] <= report["reward_delta"]["high"]
    grpo = report["grpo"]
    assert grpo["groups"] == expected["groups"] == 24
    assert grpo["sign_changed"] == expected["sign_changed"]
    assert (grpo["gains_signal"], grpo["loses_signal"]) == (
        expected["gains_signal"],
        expected["loses_signal"],
    )
    assert grpo["all_incorrect_to_mixed"] == 6  # the second pattern, 6 of 24 groups
    for arm in ("control", "treatment"):
        latency = report[arm]["latency_ms"]
        assert 0 <= latency["p50"] <= latency["p95"] <= latency["p99"]
        assert report[arm]["timeout_rate"] == 0.0 and report[arm]["error_rate"] == 0.0
    # The API writes its counters every half second: all sent, none dropped.
    wait_until(
        lambda: (
            team.get(f"/v1/experiments/{experiment['id']}").json()["shadow"]
            == {"sent": len(items), "dropped": 0}
        ),
        30,
        "the shadow counters",
    )

    # Every disagreement once, page by page, each with both answers and an excerpt.
    seen: list[dict[str, Any]] = list(report["disagreements"])
    cursor = report["next_cursor"]
    while cursor:
        page = team.get(
            f"/v1/experiments/{experiment['id']}/report", params={"limit": 5, "cursor": cursor}
        ).json()
        seen.extend(page["disagreements"])
        cursor = page["next_cursor"]
    assert len(seen) == len({d["decision_id"] for d in seen}) == expected["disagreements"]
    for row in seen:
        assert (row["control_status"], row["treatment_status"]) == ("incorrect", "correct")
        # Within 1% of 200, not 200.
        assert row["control_extracted"] == row["treatment_extracted"] in ("201", "202")
        assert row["completion_excerpt"].endswith(f"\\boxed{{{row['control_extracted']}}}")
