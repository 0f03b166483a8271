"""The worker registry in Redis: who is alive, what they consume, what a dead one held."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from service.execution.liveness import (
    HELD_GRACE_S,
    REGISTRY,
    QueueConsumers,
    WorkerPresence,
    alive_key,
    held_key,
    new_incarnation,
    queue_consumers,
    sweep_dead_workers,
)
from tests.integration.limits.helpers import private_broker

BROKER_DB = 8


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(private_broker(redis_url, BROKER_DB))
    yield connection
    connection.flushdb()
    connection.close()


def _presence(
    client: redis.Redis, queues: list[str], reserved: set[str], processes: int = 1
) -> WorkerPresence:
    return WorkerPresence(
        client,
        new_incarnation(),
        "w@host",
        queues,
        60.0,
        lambda tag: None,
        lambda: reserved,
        processes=processes,
    )


def _consumers(client: redis.Redis) -> dict[str, int]:
    return {queue: consumers.workers for queue, consumers in _read(client).items()}


def _read(client: redis.Redis) -> dict[str, QueueConsumers]:
    import redis.asyncio

    async def read() -> dict[str, QueueConsumers]:
        kwargs = client.connection_pool.connection_kwargs
        connection = redis.asyncio.Redis(host=kwargs["host"], port=kwargs["port"], db=BROKER_DB)
        try:
            return await queue_consumers(connection)
        finally:
            await connection.aclose()

    return asyncio.run(read())


def test_a_dead_workers_messages_are_handed_back_once(client: redis.Redis) -> None:
    alive = _presence(client, ["cpu"], set())
    dead = _presence(client, ["cpu", "sandbox"], set())
    for presence in (alive, dead):
        presence._beat()
    dead.hold("tag-1", "task-1")
    dead.hold("tag-2", "task-2")
    assert _consumers(client) == {"cpu": 2, "sandbox": 1}

    client.delete(alive_key(dead.incarnation))  # its heartbeat lapsed
    assert _consumers(client) == {"cpu": 1}
    restored: list[str] = []
    assert sweep_dead_workers(client, restored.append, alive.incarnation) == 2
    assert sorted(restored) == ["tag-1", "tag-2"]
    assert client.hkeys(REGISTRY) == [alive.incarnation.encode()]
    assert not client.exists(held_key(dead.incarnation))
    assert sweep_dead_workers(client, restored.append, alive.incarnation) == 0  # once


def test_the_registry_counts_each_queues_pool_processes(client: redis.Redis) -> None:
    _presence(client, ["cpu"], set(), processes=4)._beat()
    _presence(client, ["cpu", "sandbox"], set(), processes=2)._beat()
    # A worker registered by an older release, which did not say how many processes it has.
    client.hset(REGISTRY, "older", json.dumps({"hostname": "h", "pid": 1, "queues": ["cpu"]}))
    client.set(alive_key("older"), "1")
    assert _read(client) == {
        "cpu": QueueConsumers(workers=3, processes=7),
        "sandbox": QueueConsumers(workers=1, processes=2),
    }


def test_a_worker_that_beats_again_is_registered_again(client: redis.Redis) -> None:
    presence = _presence(client, ["sandbox"], set())
    presence._beat()
    client.delete(alive_key(presence.incarnation))
    sweep_dead_workers(client, lambda tag: None)
    assert _consumers(client) == {}
    presence._beat()
    assert _consumers(client) == {"sandbox": 1}


def test_held_messages_a_worker_finished_are_dropped(client: redis.Redis) -> None:
    reserved = {"running"}
    presence = _presence(client, ["cpu"], reserved)
    presence.hold("running", "t1")
    presence.hold("finished", "t2")
    presence.hold("just-received", "t3")
    old = time.time() - HELD_GRACE_S - 1
    for tag in ("running", "finished"):
        client.hset(held_key(presence.incarnation), tag, json.dumps({"task": tag, "at": old}))
    presence._prune_held()
    # A message received a moment ago may not be counted as reserved yet: it is kept.
    assert sorted(client.hkeys(held_key(presence.incarnation))) == [b"just-received", b"running"]


def test_a_clean_stop_leaves_nothing_to_sweep(client: redis.Redis) -> None:
    presence = _presence(client, ["cpu"], set())
    presence.start()
    presence.hold("tag", "task")
    presence.stop()
    assert client.hlen(REGISTRY) == 0 and not client.exists(held_key(presence.incarnation))


def test_a_request_for_a_queue_nobody_consumes_is_refused_at_once_and_not_published(
    client: redis.Redis,
) -> None:
    from service.catalog.builtin import resolve_builtin
    from service.contract import ChunkItem, ChunkRequest
    from service.errors import DependencyUnavailable
    from service.execution.executors import CeleryExecutor
    from service.settings import Settings

    kwargs = client.connection_pool.connection_kwargs
    url = f"redis://{kwargs['host']}:{kwargs['port']}/{BROKER_DB}"
    settings = Settings(
        database_url="sqlite:///unused.db", broker_url=url, request_timeout_s=1.0, worker_wait_s=0
    )
    item = ChunkItem(0, "0", None, None, "so \\boxed{4}", "4", {})
    chunk = ChunkRequest("default", "r", None, None, resolve_builtin("math"), 5.0, (item,))

    async def attempt(settings: Settings = settings) -> BaseException | None:
        executor = CeleryExecutor(settings)
        try:
            await executor.run_chunks([chunk])
        except DependencyUnavailable as exc:
            return exc
        finally:
            await executor.aclose()
        return None

    refused = asyncio.run(attempt())
    assert isinstance(refused, DependencyUnavailable)
    assert "no worker consumes the cpu queue" in refused.message
    assert refused.headers()["Retry-After"]
    assert client.llen("cpu") == 0  # nothing published for nobody

    # A worker on another queue only: still refused. One on the cpu queue: published (and,
    # with nobody actually running it here, the short request timeout ends the wait).
    _presence(client, ["sandbox"], set())._beat()
    assert "cpu queue" in asyncio.run(attempt()).message  # type: ignore[union-attr]
    _presence(client, ["cpu"], set())._beat()
    waited = asyncio.run(attempt())
    assert isinstance(waited, DependencyUnavailable) and "in time" in waited.message
    assert client.llen("cpu") == 1

    # A worker restarting: the request waits for it (up to RLVR_WORKER_WAIT_S), then publishes.
    client.flushdb()
    patient = settings.model_copy(update={"worker_wait_s": 60.0})
    later = threading.Timer(1.0, lambda: _presence(client, ["cpu"], set())._beat())
    later.start()
    try:
        waited = asyncio.run(attempt(patient))
    finally:
        later.join()
    assert isinstance(waited, DependencyUnavailable) and "in time" in waited.message
    assert client.llen("cpu") == 1


def test_the_executor_knows_the_live_workers_processes(client: redis.Redis) -> None:
    from service.execution.executors import CeleryExecutor
    from service.settings import Settings

    kwargs = client.connection_pool.connection_kwargs
    url = f"redis://{kwargs['host']}:{kwargs['port']}/{BROKER_DB}"
    settings = Settings(database_url="sqlite:///unused.db", broker_url=url, worker_wait_s=0)
    _presence(client, ["cpu"], set(), processes=3)._beat()
    _presence(client, ["cpu", "sandbox"], set(), processes=2)._beat()

    async def read() -> tuple[dict[str, int], dict[str, int]]:
        executor = CeleryExecutor(settings)
        try:
            before = executor.processes()  # nothing read yet: packing keeps the chunk size
            await executor._wait_for_consumers({"cpu"})
            return before, executor.processes()
        finally:
            await executor.aclose()

    assert asyncio.run(read()) == ({}, {"cpu": 5, "sandbox": 2})
