"""A background worker killed in the middle of a replay: the replay completes on another one,
each item decided once; a cancelled replay stays cancelled. This module starts its own
background workers."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import redis
from sqlalchemy import func, select

from service.db.models import ReplayResult
from service.db.session import session_scope
from service.execution.liveness import REGISTRY, held_key
from service.settings import Settings
from tests.integration.experiments.helpers import (
    mixed_items,
    post_rewards,
    publish_tolerant,
    team_client,
)
from tests.support import ManagedProcess, start_background_worker, wait_until

pytestmark = pytest.mark.slow


def holds_a_message(client: redis.Redis, pid: int) -> bool:
    for incarnation, info in client.hgetall(REGISTRY).items():
        if json.loads(info)["pid"] == pid and client.hlen(held_key(incarnation.decode())) > 0:
            return True
    return False


def test_a_replay_survives_a_killed_worker_and_a_cancel_holds(
    live_server: str,
    pg_settings: Settings,
    deployed_env: dict[str, str],
    redis_url: str,
    tmp_path: Path,
) -> None:
    publish_tolerant(live_server)
    run_id = f"lossy-{uuid.uuid4().hex[:8]}"
    with team_client(live_server, pg_settings) as team:
        for step in range(4):
            items = mixed_items(f"l{step}", 64)
            post_rewards(team, {"verifier": "math", "run_id": run_id, "step": step, "items": items})
        sources = 4 * 64 * 4

        # Cancelled before any worker saw it: nothing is ever decided.
        cancelled = team.post(
            "/v1/replays", json={"filter": {"run_id": run_id}, "target": "math@1.1.0"}
        ).json()
        gone = team.delete(f"/v1/replays/{cancelled['id']}").json()
        assert gone["state"] == "cancelled" and gone["progress"]["done"] == 0

        created = team.post(
            "/v1/replays",
            json={"filter": {"run_id": run_id}, "targets": ["math@1.1.0", "math@1.0.0"]},
        )
        assert created.status_code == 202, created.text
        replay_id = created.json()["id"]

        # Larger steps on the victim, so that it is killed holding one.
        victim_env = {**deployed_env, "RLVR_CHUNK_SIZE": "256"}
        victim = start_background_worker(victim_env, tmp_path / "victim.log")
        client = redis.Redis.from_url(redis_url)
        try:

            def busy() -> bool:
                progress = team.get(f"/v1/replays/{replay_id}").json()["progress"]
                return progress["done"] > 0 and holds_a_message(client, victim.proc.pid)

            wait_until(busy, 120, "the victim to hold a replay step after some progress")
            victim.stop(9)  # SIGKILL to its whole process group
            survivor: ManagedProcess = start_background_worker(
                deployed_env, tmp_path / "survivor.log"
            )
            try:

                def done() -> bool:
                    return team.get(f"/v1/replays/{replay_id}").json()["state"] == "done"

                wait_until(done, 180, "the replay to complete on the surviving worker")
            finally:
                survivor.stop()
        finally:
            victim.stop(9)
            client.close()

        replay = team.get(f"/v1/replays/{replay_id}").json()
        assert replay["progress"]["done"] == replay["progress"]["total"] == 2 * sources
        assert team.get(f"/v1/replays/{cancelled['id']}").json()["progress"]["done"] == 0

    with session_scope(pg_settings) as session:
        per_item = select(ReplayResult.source_decision_id, ReplayResult.target, func.count()).where(
            ReplayResult.replay_id == uuid.UUID(replay_id)
        )
        counts = list(
            session.execute(per_item.group_by(ReplayResult.source_decision_id, ReplayResult.target))
        )
        undecided = session.scalar(
            select(func.count())
            .select_from(ReplayResult)
            .where(ReplayResult.replay_id == uuid.UUID(replay_id), ReplayResult.status.is_(None))
        )
        cancelled_rows = session.scalar(
            select(func.count())
            .select_from(ReplayResult)
            .where(ReplayResult.replay_id == uuid.UUID(cancelled["id"]))
        )
    assert len(counts) == 2 * sources and {count for *_, count in counts} == {1}
    assert undecided == 0 and cancelled_rows == 0
