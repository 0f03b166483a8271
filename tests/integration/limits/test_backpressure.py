"""Past its capacity the deployed service says so at once: 503 or 429 with Retry-After, and a
/readyz that answers within about a second and names the queue no worker consumes.

Before: requests queued without bound, six stuck requests held every thread of the API and
/readyz hung behind them, and /readyz said ready while no worker consumed anything.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.integration.limits.helpers import (
    InFlight,
    math_items,
    post_rewards,
    private_broker,
    sleeper_items,
    start_server_without_workers,
    wait_for_inflight,
)
from tests.support import (
    AUTH,
    service_env,
    start_worker,
    wait_until,
)

pytestmark = pytest.mark.slow

# "/readyz must answer within ~1 s always": the bound, with slack for a busy machine.
READYZ_BOUND_S = 2.5


def _readyz(base_url: str) -> httpx.Response:
    started = time.monotonic()
    response = httpx.get(f"{base_url}/readyz", timeout=READYZ_BOUND_S)
    assert time.monotonic() - started < READYZ_BOUND_S
    return response


def test_past_capacity_requests_are_refused_at_once_and_readyz_stays_honest(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    env = service_env(
        RLVR_DATABASE_URL=pg_url,
        RLVR_BROKER_URL=private_broker(redis_url, 11),
        RLVR_MAX_INFLIGHT_ITEMS="12",
        RLVR_MAX_CONCURRENT_REQUESTS_PER_KEY="10",
        # Requests wait for the worker that comes later, as during a worker's restart.
        RLVR_WORKER_WAIT_S="600",
    )
    server, base_url = start_server_without_workers(env, tmp_path / "api.log")
    worker = None
    try:
        ready = _readyz(base_url)
        assert ready.status_code == 503 and ready.headers["Retry-After"]
        assert ready.json()["checks"]["cpu queue"] is False
        assert "no worker consumes the sandbox queue" in ready.json()["problems"]

        # Eight one-item requests wait for a worker: more than the API has threads to spare.
        one_item = {"verifier": "math", "items": math_items(1)}
        stuck = [post_rewards(base_url, one_item) for _ in range(8)]
        wait_for_inflight(base_url, 8)
        assert _readyz(base_url).status_code == 503
        assert httpx.get(f"{base_url}/v1/verifiers", headers=AUTH, timeout=10).status_code == 200

        # Five more items would pass the 12 in flight: shed now, not queued.
        shed = post_rewards(base_url, {"verifier": "math", "items": math_items(5)}).result(30)
        assert shed.status_code == 503, shed.text
        assert shed.json()["error"]["code"] == "overloaded"
        assert int(shed.headers["Retry-After"]) >= 1

        # The key's requests in flight are counted in Redis: the eleventh is refused.
        stuck += [post_rewards(base_url, one_item) for _ in range(2)]
        wait_for_inflight(base_url, 10)
        refused = post_rewards(base_url, one_item).result(30)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "too_many_concurrent_requests"
        assert refused.headers["Retry-After"] == "1"

        # A worker comes: everything that waited is served, and the service is ready.
        worker = start_worker(env, tmp_path / "worker.log", concurrency=1)
        for request in stuck:
            response = request.result(timeout_s=120)
            assert response.status_code == 200, response.text
        wait_until(lambda: _readyz(base_url).status_code == 200, 30, "/readyz 200")
        served = post_rewards(base_url, {"verifier": "math", "items": math_items(5)}).result(60)
        assert served.status_code == 200, served.text

        # A worker that stops leaves its queues without a consumer: not ready again.
        worker.stop()
        worker = None
        wait_until(lambda: _readyz(base_url).status_code == 503, 30, "/readyz 503")
        assert "no worker consumes the cpu queue" in _readyz(base_url).json()["problems"]
    finally:
        server.stop()
        if worker is not None:
            worker.stop()


def test_readyz_answers_while_requests_wait_on_busy_workers(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Requests stuck behind busy workers hold no thread of the API: /readyz still answers."""
    env = service_env(RLVR_DATABASE_URL=pg_url, RLVR_BROKER_URL=private_broker(redis_url, 10))
    worker = start_worker(env, tmp_path / "worker.log", concurrency=1)
    server, base_url = start_server_without_workers(env, tmp_path / "api.log")
    try:
        wait_until(lambda: _readyz(base_url).status_code == 200, 30, "/readyz 200")
        waiting: list[InFlight] = [
            post_rewards(
                base_url, {"verifier": "code", "items": sleeper_items(1, 1.5, 1, f"busy-{i}")}
            )
            for i in range(8)
        ]
        wait_for_inflight(base_url, 8)
        for _ in range(3):
            assert _readyz(base_url).status_code == 200
        for request in waiting:
            assert request.result(timeout_s=120).status_code == 200
    finally:
        server.stop()
        worker.stop()
