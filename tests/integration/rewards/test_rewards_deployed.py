"""The deployed shape over real HTTP: uvicorn → Redis → Celery workers → Postgres."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import func, select

from service.db.models import Decision
from service.db.session import session_scope
from service.execution.chunk import run_chunk
from service.execution.liveness import REGISTRY
from service.rewards.planning import pack_chunks, plan_request, verifier_references
from service.rewards.schemas import RewardsRequest
from service.rewards.service import RewardService
from service.settings import Settings
from tests.support import ADMIN_KEY, AUTH, service_env, start_server, start_worker, wait_until

pytestmark = pytest.mark.slow


def count_decisions(settings: Settings, **filters: Any) -> int:
    with session_scope(settings) as session:
        query = select(func.count()).select_from(Decision)
        for name, value in filters.items():
            query = query.where(getattr(Decision, name) == value)
        return int(session.scalar(query) or 0)


def test_a_full_batch_of_4096_items_is_verified_and_logged(
    live_server: str, pg_settings: Settings
) -> None:
    run_id = f"big-{uuid.uuid4()}"
    items = []
    for g in range(256):
        for i in range(16):
            answer = (g * 16 + i) % 7
            items.append(
                {
                    "id": f"{g}-{i}",
                    "group_id": f"q{g}",
                    "prompt": f"What is {g} mod 7?",
                    "completion": f"Working... the answer is \\boxed{{{answer}}}.",
                    "ground_truth": str(g % 7),
                }
            )
    response = httpx.post(
        f"{live_server}/v1/rewards",
        json={"verifier": "math", "run_id": run_id, "step": 0, "items": items},
        headers=AUTH,
        timeout=300,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["results"]) == 4096 and len(body["groups"]) == 256
    for item, result in zip(items, body["results"], strict=True):
        expected = (
            "correct"
            if item["completion"].endswith(f"{{{item['ground_truth']}}}.")
            else "incorrect"
        )
        assert result["id"] == item["id"] and result["status"] == expected
    assert count_decisions(pg_settings, run_id=run_id) == 4096


def test_idempotent_retry_over_http_logs_once(live_server: str, pg_settings: Settings) -> None:
    key = f"http-retry-{uuid.uuid4()}"
    body = {
        "verifier": "math",
        "items": [{"completion": f"\\boxed{{{i}}}", "ground_truth": "1"} for i in range(40)],
    }
    headers = {"Idempotency-Key": key, **AUTH}
    first = httpx.post(f"{live_server}/v1/rewards", json=body, headers=headers, timeout=60)
    second = httpx.post(f"{live_server}/v1/rewards", json=body, headers=headers, timeout=60)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert count_decisions(pg_settings, request_id=key) == 40


def test_a_redelivered_chunk_logs_nothing_twice(pg_settings: Settings) -> None:
    """What acks_late redelivery does to a chunk: run it again; rows and answers unchanged."""
    request = RewardsRequest.model_validate(
        {
            "verifier": "math",
            "items": [
                {"group_id": "g", "completion": c, "ground_truth": "12"}
                for c in ["\\boxed{12}", "\\boxed{13}", "\\boxed{12}"]
            ],
        }
    )
    service = RewardService(pg_settings, executor=None)  # type: ignore[arg-type]
    request_id = f"redelivery-{uuid.uuid4()}"
    specs = service.resolver.resolve_many(verifier_references(request))
    plan = plan_request(request, "default", request_id, specs, pg_settings)
    (chunk,) = pack_chunks(request, plan, pg_settings, {})
    first = run_chunk(chunk, pg_settings)
    second = run_chunk(chunk, pg_settings)
    assert first == second
    assert [r.status for r in first] == ["correct", "incorrect", "correct"]
    assert count_decisions(pg_settings, request_id=request_id) == 3


def test_broker_down_is_503_with_retry_after(pg_url: str, unused_port: int) -> None:
    from fastapi.testclient import TestClient

    from service.app import create_app

    settings = Settings(
        database_url=pg_url,
        broker_url=f"redis://127.0.0.1:{unused_port}/0",
        bootstrap_admin_key=ADMIN_KEY,
    )
    with TestClient(create_app(settings), headers=AUTH) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.headers["Retry-After"]
        assert ready.json()["checks"] == {"database": True, "broker": False}
        assert "broker" in ready.json()["problems"][0]
        response = client.post(
            "/v1/rewards",
            json={"verifier": "math", "items": [{"completion": "\\boxed{1}", "ground_truth": "1"}]},
        )
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"]
        assert response.json()["error"]["code"] == "dependency_unavailable"


def test_database_down_is_503(unused_port: int, redis_url: str) -> None:
    from fastapi.testclient import TestClient

    from service.app import create_app

    url = f"postgresql+psycopg://root@127.0.0.1:{unused_port}/nothing"
    settings = Settings(database_url=url, broker_url=redis_url, bootstrap_admin_key=ADMIN_KEY)
    with TestClient(create_app(settings), headers=AUTH) as client:
        assert client.get("/readyz").status_code == 503
        response = client.get("/v1/decisions")
        assert response.status_code == 503 and response.headers["Retry-After"]


def _children(pid: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The parent pid is the 2nd field after the parenthesised command name.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(entry.name))
    return children


def _pool_processes(worker_pid: int, redis_url: str) -> list[int]:
    """The pool processes of a worker: the children of its Celery main process, which is the
    worker itself or, when `rlvr worker` runs a consumer per queue, each of its children (the
    main processes are the ones in the worker registry)."""
    client = redis.Redis.from_url(redis_url)
    try:
        registered = {json.loads(info)["pid"] for info in client.hvals(REGISTRY)}
    finally:
        client.close()
    mains = [pid for pid in [worker_pid, *_children(worker_pid)] if pid in registered]
    return [child for main in mains for child in _children(main)]


def test_each_worker_registers_its_pool_processes(celery_worker: Any, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        infos = [json.loads(info) for info in client.hvals(REGISTRY)]
    finally:
        client.close()
    mains = {celery_worker.proc.pid, *_children(celery_worker.proc.pid)}
    ours = [info for info in infos if info["pid"] in mains]
    assert ours, "the worker is not in the registry"
    for info in ours:
        # What the API cuts a large request by: one chunk per pool process.
        assert info["processes"] == len(_children(info["pid"])) >= 1


def _fraction(i: int) -> str:
    return f"\\frac{{{i}}}{{{i % 13 + 1}}}"


def test_worker_processes_killed_mid_request_lose_nothing(
    live_server: str, celery_worker: Any, pg_settings: Settings, redis_url: str
) -> None:
    """acks_late + reject_on_worker_lost: chunks in flight are redelivered, logged once."""
    run_id = f"killed-{uuid.uuid4()}"
    items = [
        {
            "group_id": f"q{i // 16}",
            "completion": f"Reasoning {i} ... so the answer is \\boxed{{{_fraction(i)}}}",
            "ground_truth": _fraction(i),
        }
        for i in range(4096)
    ]
    outcome: dict[str, Any] = {}

    def send() -> None:
        outcome["response"] = httpx.post(
            f"{live_server}/v1/rewards",
            json={"verifier": "math", "run_id": run_id, "items": items},
            headers=AUTH,
            timeout=300,
        )

    sender = threading.Thread(target=send)
    sender.start()
    # Kill the pool processes once the first chunks are being logged, i.e. mid-request.
    wait_until(lambda: count_decisions(pg_settings, run_id=run_id) > 0, 60, "first decisions")
    pool = _pool_processes(celery_worker.proc.pid, redis_url)
    assert pool, "the worker has no pool processes"
    for pid in pool:
        os.kill(pid, signal.SIGKILL)
    sender.join(300)

    response = outcome["response"]
    assert response.status_code == 200, response.text
    statuses = {r["status"] for r in response.json()["results"]}
    assert statuses == {"correct"}
    assert count_decisions(pg_settings, run_id=run_id) == 4096
    assert celery_worker.alive()


def _start_redis(port: int, directory: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    wait_until(lambda: _pings(client), 20, "a private Redis")
    return process


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def test_service_answers_503_while_redis_is_down_and_recovers(
    pg_url: str, unused_port: int, tmp_path: Path
) -> None:
    """A broker outage is a 503 with Retry-After, never a reward; service heals when it returns."""
    env = service_env(
        RLVR_DATABASE_URL=pg_url, RLVR_BROKER_URL=f"redis://127.0.0.1:{unused_port}/0"
    )
    redis_server = _start_redis(unused_port, tmp_path)
    worker = start_worker(env, tmp_path / "worker.log", concurrency=1)
    server, base_url = start_server(env, tmp_path / "api.log")
    body = {"verifier": "math", "items": [{"completion": "\\boxed{7}", "ground_truth": "7"}]}
    try:
        assert (
            httpx.post(f"{base_url}/v1/rewards", json=body, headers=AUTH, timeout=30).status_code
            == 200
        )
        redis_server.kill()
        redis_server.wait(10)
        down = httpx.post(f"{base_url}/v1/rewards", json=body, headers=AUTH, timeout=30)
        assert down.status_code == 503, down.text
        assert down.headers["Retry-After"]
        assert httpx.get(f"{base_url}/readyz", timeout=30).status_code == 503

        redis_server = _start_redis(unused_port, tmp_path)

        def served() -> bool:
            response = httpx.post(f"{base_url}/v1/rewards", json=body, headers=AUTH, timeout=30)
            return response.status_code == 200 and response.json()["results"][0]["reward"] == 1.0

        wait_until(served, 60, "the service to recover after Redis came back")
    finally:
        server.stop()
        worker.stop()
        redis_server.kill()
        redis_server.wait(10)


def test_nul_bytes_are_verified_and_stored(live_server: str, pg_settings: Settings) -> None:
    """NUL is legal model output; Postgres text and JSONB cannot hold it, so it is replaced."""
    run_id = f"nul-{uuid.uuid4()}"
    items = [
        {
            "id": "a\x00b",
            "prompt": "p\x00",
            "completion": "noise \x00\x00 so \\boxed{12}",
            "ground_truth": "12",
            "metadata": {"k\x00": "v\x00"},
        }
    ]
    response = httpx.post(
        f"{live_server}/v1/rewards",
        json={"verifier": "math", "run_id": run_id, "items": items},
        headers=AUTH,
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["status"] == "correct"
    with session_scope(pg_settings) as session:
        row = session.scalars(select(Decision).where(Decision.run_id == run_id)).one()
    assert row.completion == "noise \ufffd\ufffd so \\boxed{12}"
    assert row.item_id == "a\ufffdb" and row.item_metadata == {"k\ufffd": "v\ufffd"}
