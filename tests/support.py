"""Helpers shared by the tests: sandboxes that skip or fail by the environment, the real
service processes (from ``service.localstack``) with the suite's short verification bounds, and
the stores they use (a migrated SQLite file, a fresh Postgres database)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from service import localstack
from service.db.migrate import upgrade
from service.localstack import (
    ManagedProcess,
    free_port,
    start_server,
    start_worker,
    wait_until,
)
from service.settings import Settings

__all__ = [
    "ADMIN_KEY",
    "AUTH",
    "PG_TEST_DB",
    "REDIS_URL",
    "REQUIRE_DOCKER",
    "TEST_TIMEOUT_S",
    "ManagedProcess",
    "embedded_settings_in",
    "free_port",
    "open_sandbox",
    "recreate_database",
    "service_env",
    "start_background_worker",
    "start_server",
    "start_worker",
    "wait_until",
]

# Short bounds keep pathological-input tests fast; production defaults are larger.
TEST_TIMEOUT_S = 2.0
# The operator's admin key of every service the suite starts (RLVR_BOOTSTRAP_ADMIN_KEY).
ADMIN_KEY = "rlvr-suite-admin-9f3c1e7a5b2d4c6e8a0b"
AUTH = {"Authorization": f"Bearer {ADMIN_KEY}"}
# Where the suite's stores live: one Postgres database and one Redis database per test run
# (each set apart when several runs share the servers).
PG_ADMIN_DSN = os.environ.get("RLVR_TEST_PG_ADMIN_DSN", "postgresql://root@127.0.0.1:5432/postgres")
PG_TEST_DB = os.environ.get("RLVR_TEST_PG_DB", "rlvr_test")
REDIS_URL = os.environ.get("RLVR_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


# CI sets this once it has provisioned a docker engine and the runner image: from then on a
# docker sandbox that does not come up is a failure, not a skip.
REQUIRE_DOCKER = os.environ.get("RLVR_TEST_REQUIRE_DOCKER") == "1"


def open_sandbox(kind: str, **options: Any) -> Any:
    """A probed sandbox backend of ``kind``; skips (or fails, where required) if unavailable."""
    import pytest

    if kind == "local":
        from service.sandbox.local import LocalBackend

        backend: Any = LocalBackend(**options)
    else:
        from service.sandbox.docker import DockerBackend

        backend = DockerBackend(**options)
    report = backend.probe()
    if not report.ok:
        backend.close()
        reason = f"{kind} sandbox unavailable here: {'; '.join(report.problems)}"
        if kind == "docker" and REQUIRE_DOCKER:
            pytest.fail(reason)
        pytest.skip(reason)
    return backend


def service_env(**overrides: str) -> dict[str, str]:
    """The environment of a service process started by a test: short verification bounds
    and the suite's admin key."""
    return localstack.service_env(
        RLVR_VERIFY_TIMEOUT_S=str(TEST_TIMEOUT_S),
        RLVR_BOOTSTRAP_ADMIN_KEY=ADMIN_KEY,
        **overrides,
    )


def start_background_worker(env: dict[str, str], log_path: Path) -> ManagedProcess:
    """A Celery worker on the background queues (shadow, replay): the niced consumer of
    ``RLVR_BACKGROUND_WORKERS`` processes that ``rlvr worker`` runs for them, once ready."""
    worker = ManagedProcess(
        [
            sys.executable,
            "-m",
            "service.cli",
            "worker",
            "--queues",
            "shadow,replay",
            "--hostname",
            f"background-{os.getpid()}-{time.time_ns()}@%h",
        ],
        env,
        log_path,
    )
    wait_until(
        lambda: "ready." in worker.log_path.read_text(errors="replace") or not worker.alive(),
        90,
        "the background worker to start",
    )
    if not worker.alive():
        raise AssertionError(f"background worker died:\n{worker.log_tail()}")
    return worker


def embedded_settings_in(directory: Path, **options: Any) -> Settings:
    """The settings of an embedded service (SQLite file under ``directory``, local pool of two
    workers, no broker) with the suite's bounds and admin key, its database migrated to head;
    ``options`` override any of them."""
    values: dict[str, Any] = {
        "data_dir": directory,
        "broker_url": None,
        "database_url": None,
        "local_workers": 2,
        "verify_timeout_s": TEST_TIMEOUT_S,
        "bootstrap_admin_key": ADMIN_KEY,
    }
    settings = Settings(**(values | options))
    upgrade(settings.sqlalchemy_url)
    return settings


def recreate_database(name: str) -> str:
    """Postgres database ``name`` dropped (its sessions ended) and created empty; its URL."""
    return localstack.recreate_database(name, PG_ADMIN_DSN)
