"""Real services for the suite: a fresh Postgres database, a Redis database, Celery workers and
an HTTP server in their own processes. Nothing is mocked."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.db.migrate import upgrade
from service.db.session import dispose_engines
from service.settings import Settings
from tests.support import (
    ADMIN_KEY,
    AUTH,
    PG_TEST_DB,
    REDIS_URL,
    TEST_TIMEOUT_S,
    ManagedProcess,
    embedded_settings_in,
    free_port,
    recreate_database,
    service_env,
    start_background_worker,
    start_server,
    start_worker,
)

# The trainer client and its adapters read their key from here, as a training job would.
os.environ["RLVR_API_KEY"] = ADMIN_KEY


@pytest.fixture
def unused_port() -> int:
    """A local port with nothing listening: a dependency that is down."""
    return free_port()


@pytest.fixture(scope="session")
def pg_url() -> str:
    """A fresh Postgres database, migrated to head."""
    url = recreate_database(PG_TEST_DB)
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def redis_url() -> str:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    return REDIS_URL


@pytest.fixture(scope="session")
def deployed_env(pg_url: str, redis_url: str) -> dict[str, str]:
    return service_env(RLVR_DATABASE_URL=pg_url, RLVR_BROKER_URL=redis_url)


@pytest.fixture(scope="session")
def celery_worker(
    deployed_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagedProcess]:
    """Real Celery worker processes on the cpu and sandbox queues."""
    worker = start_worker(deployed_env, tmp_path_factory.mktemp("worker") / "worker.log")
    yield worker
    worker.stop()


@pytest.fixture(scope="module")
def background_worker(
    deployed_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagedProcess]:
    """A real background worker (the shadow and replay queues, niced). Per module: a test of
    what happens without one (a shadow backlog) runs in a module that does not ask for it."""
    worker = start_background_worker(
        deployed_env, tmp_path_factory.mktemp("background") / "background.log"
    )
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def live_server(
    deployed_env: dict[str, str],
    celery_worker: ManagedProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """The deployed shape over real HTTP: uvicorn → Redis → Celery workers → Postgres."""
    server, base_url = start_server(deployed_env, tmp_path_factory.mktemp("server") / "api.log")
    yield base_url
    server.stop()


@pytest.fixture(scope="session")
def pg_settings(pg_url: str, redis_url: str) -> Settings:
    return Settings(
        database_url=pg_url,
        broker_url=redis_url,
        verify_timeout_s=TEST_TIMEOUT_S,
        bootstrap_admin_key=ADMIN_KEY,
    )


@pytest.fixture(scope="module")
def embedded_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """The embedded mode: SQLite file, local worker pool, no broker (one per test module:
    starting a warm pool costs seconds, so tests identify their own rows by request id)."""
    yield embedded_settings_in(tmp_path_factory.mktemp("embedded"))
    dispose_engines()


@pytest.fixture(scope="module")
def embedded_client(embedded_settings: Settings) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from service.app import create_app

    with TestClient(create_app(embedded_settings), headers=AUTH) as client:
        yield client
