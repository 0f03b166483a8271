"""Run the service's own processes on this machine (API server, Celery worker) and wait for
them: the test suite and the benches start the real stack through this one module."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]


PG_ADMIN_DSN = "postgresql://root@127.0.0.1:5432/postgres"


def recreate_database(name: str, admin_dsn: str = PG_ADMIN_DSN) -> str:
    """Postgres database ``name`` dropped (its sessions ended) and created empty; its URL."""
    import psycopg  # the service's extra; not every environment that starts processes has it

    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    host = admin_dsn.removeprefix("postgresql://").rsplit("/", 1)[0]
    return f"postgresql+psycopg://{host}/{name}"


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Wait on a condition with a deadline (no fixed sleeps for synchronisation)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def service_env(**overrides: str) -> dict[str, str]:
    """This process's environment without any RLVR_* setting, plus ``overrides``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLVR_")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides)
    return env


class ManagedProcess:
    """A child in its own process group, logging to a file, stopped with everything it started."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115  (closed in stop)
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=REPO_ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 20) -> None:
        if self.alive():
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout_s)
        self._log.close()


def start_worker(env: dict[str, str], log_path: Path, concurrency: int = 2) -> ManagedProcess:
    """A Celery worker on the cpu and sandbox queues, once it says it is ready."""
    worker = ManagedProcess(
        [
            sys.executable,
            "-m",
            "service.cli",
            "worker",
            "--queues",
            "cpu,sandbox",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"local-{os.getpid()}-{time.time_ns()}@%h",
        ],
        env,
        log_path,
    )
    marker = "ready."
    wait_until(
        lambda: marker in worker.log_path.read_text(errors="replace") or not worker.alive(),
        90,
        "the Celery worker to start",
    )
    if not worker.alive():
        raise AssertionError(f"worker died:\n{worker.log_tail()}")
    return worker


def start_server(
    env: dict[str, str], log_path: Path, timeout_s: float = 90
) -> tuple[ManagedProcess, str]:
    """The HTTP API on a free port, once /readyz answers 200; returns it and its base URL."""
    port = free_port()
    server = ManagedProcess(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)], env, log_path
    )
    base_url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if not server.alive():
            return True
        try:
            return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(ready, timeout_s, "the HTTP server to become ready")
    if not server.alive():
        raise AssertionError(f"server died:\n{server.log_tail()}")
    return server, base_url
