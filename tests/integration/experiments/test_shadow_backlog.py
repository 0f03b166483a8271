"""A shadow backlog never delays or fails a reward: past its bound, shadow work is dropped and
counted. This module runs no background worker, so the shadow queue only fills."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from service.execution.routing import SHADOW_QUEUE
from service.settings import Settings
from tests.integration.experiments.helpers import (
    mixed_items,
    post_rewards,
    publish_tolerant,
    team_client,
)
from tests.support import ManagedProcess, start_server, wait_until

pytestmark = pytest.mark.slow
BACKLOG_CHUNKS = 2
CHUNK_ITEMS = 4  # one group of four per chunk


@pytest.fixture(scope="module")
def small_backlog_server(
    deployed_env: dict[str, str],
    redis_url: str,
    celery_worker: ManagedProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    queue = redis.Redis.from_url(redis_url)
    queue.delete(SHADOW_QUEUE)  # what earlier modules left unconsumed
    env = {
        **deployed_env,
        "RLVR_SHADOW_MAX_BACKLOG": str(BACKLOG_CHUNKS),
        "RLVR_CHUNK_SIZE": str(CHUNK_ITEMS),
    }
    log: Path = tmp_path_factory.mktemp("backlog") / "api.log"
    server, base_url = start_server(env, log)
    yield base_url
    server.stop()
    queue.delete(SHADOW_QUEUE)
    queue.close()


def shadow_metric(base_url: str, outcome: str) -> float:
    text = httpx.get(f"{base_url}/metrics").text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if (
                sample.name == "rlvr_shadow_items_total"
                and sample.labels.get("outcome") == outcome
                and sample.labels.get("verifier") == "math"
            ):
                return float(sample.value)
    return 0.0


def test_a_full_shadow_queue_drops_and_counts_without_failing_rewards(
    small_backlog_server: str, pg_settings: Settings
) -> None:
    publish_tolerant(small_backlog_server)
    run_id = f"backlog-{uuid.uuid4().hex[:8]}"
    with team_client(small_backlog_server, pg_settings) as team:
        created = team.post(
            "/v1/experiments",
            json={
                "name": "overflow",
                "verifier": "math",
                "control": "1.0.0",
                "treatment": "1.1.0",
                "mode": "shadow",
                "filter": {"run_id": run_id},
            },
        )
        assert created.status_code == 201, created.text
        experiment = created.json()["id"]
        total = 0
        for step in range(3):
            items = mixed_items(f"b{step}", 10)
            response = post_rewards(
                team, {"verifier": "math", "run_id": run_id, "step": step, "items": items}
            )
            # Every reward is the control's, whatever happened to the shadow work.
            assert {r["version"] for r in response["results"]} == {"1.0.0"}
            assert all(r["status"] in ("correct", "incorrect") for r in response["results"])
            total += len(items)

        def counted() -> bool:
            shadow = team.get(f"/v1/experiments/{experiment}").json()["shadow"]
            return bool(shadow["sent"] + shadow["dropped"] == total)

        wait_until(counted, 30, "every shadow item to be counted as sent or dropped")
        shadow = team.get(f"/v1/experiments/{experiment}").json()["shadow"]
        team.post(f"/v1/experiments/{experiment}/stop")
    # No worker consumes the shadow queue here: it holds its bound, the rest was dropped.
    assert shadow["sent"] == BACKLOG_CHUNKS * CHUNK_ITEMS
    assert shadow["dropped"] == total - BACKLOG_CHUNKS * CHUNK_ITEMS
    assert shadow_metric(small_backlog_server, "dropped") == shadow["dropped"]
    assert shadow_metric(small_backlog_server, "sent") == shadow["sent"]
