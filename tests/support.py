"""Helpers shared by the tests: sandboxes that skip or fail by the environment, and the real
service processes (from ``service.localstack``) with the suite's short verification bounds."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from service import localstack
from service.localstack import (
    ManagedProcess,
    free_port,
    start_server,
    start_worker,
    wait_until,
)

__all__ = [
    "ADMIN_KEY",
    "AUTH",
    "REQUIRE_DOCKER",
    "TEST_TIMEOUT_S",
    "ManagedProcess",
    "free_port",
    "open_sandbox",
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
