"""What the capacity tests share: slow code items, a private broker, rows counted in Postgres."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import redis
from sqlalchemy import func, select

from service.db.models import Decision
from service.db.session import session_scope
from service.settings import Settings
from tests.support import AUTH, ManagedProcess, free_port, wait_until


def sleeper_items(
    count: int, sleep_s: float, tests: int = 1, tag: str = ""
) -> list[dict[str, Any]]:
    """Code items whose every test sleeps ``sleep_s`` (under the 1 s CPU limit, inside the
    3 s wall clock), each distinct so that no verdict comes from the cache."""
    problem = {
        "language": "python",
        "mode": "stdio",
        "time_limit_s": 1,
        "tests": [{"stdin": "", "stdout": "ok\n"}] * tests,
    }
    return [
        {
            "id": f"sleeper-{tag}{i}",
            "completion": (
                f"```python\nimport time\ntime.sleep({sleep_s})\nprint('ok')  # {tag}{i}\n```"
            ),
            "ground_truth": problem,
        }
        for i in range(count)
    ]


def math_items(count: int) -> list[dict[str, Any]]:
    return [{"completion": f"\\boxed{{{i}}}", "ground_truth": str(i)} for i in range(count)]


def private_broker(redis_url: str, db: int) -> str:
    """A Redis database of its own (queues of a stack no other test's workers consume)."""
    url = f"{redis_url.rsplit('/', 1)[0]}/{db}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The parent pid is the 2nd field after the parenthesised command name.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def decision_counts(settings: Settings, run_id: str) -> dict[int, int]:
    """Rows in the decision log per item index of a run."""
    with session_scope(settings) as session:
        query = (
            select(Decision.item_index, func.count())
            .where(Decision.run_id == run_id)
            .group_by(Decision.item_index)
        )
        return {int(index): int(count) for index, count in session.execute(query)}


class InFlight:
    """A request sent on a thread of its own: ``done`` once it has an answer."""

    def __init__(self, send: Callable[[], httpx.Response]) -> None:
        self.response: httpx.Response | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(send,), daemon=True)
        self._thread.start()

    def _run(self, send: Callable[[], httpx.Response]) -> None:
        try:
            self.response = send()
        except BaseException as exc:
            self.error = exc

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self, timeout_s: float) -> httpx.Response:
        self._thread.join(timeout_s)
        if self.error is not None:
            raise self.error
        assert self.response is not None, f"no answer within {timeout_s} s"
        return self.response


def post_rewards(base_url: str, body: dict[str, Any], timeout_s: float = 120) -> InFlight:
    return InFlight(
        lambda: httpx.post(f"{base_url}/v1/rewards", json=body, headers=AUTH, timeout=timeout_s)
    )


def inflight_items(base_url: str) -> float:
    """The API process's rlvr_inflight_items gauge, from /metrics."""
    return gauge(httpx.get(f"{base_url}/metrics", timeout=5).text)


def gauge(metrics: str, name: str = "rlvr_inflight_items") -> float:
    for line in metrics.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    return 0.0


def wait_for_inflight(base_url: str, items: int, timeout_s: float = 30) -> None:
    wait_until(lambda: inflight_items(base_url) >= items, timeout_s, f"{items} items in flight")


def start_server_without_workers(env: dict[str, str], log: Path) -> tuple[ManagedProcess, str]:
    """The HTTP API alone (``/healthz`` up; ``/readyz`` may say no worker consumes)."""
    port = free_port()
    server = ManagedProcess(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)], env, log
    )
    base_url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return not server.alive()

    wait_until(up, 90, "the HTTP server to start")
    assert server.alive(), server.log_tail()
    return server, base_url
