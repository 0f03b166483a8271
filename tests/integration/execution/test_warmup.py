"""The embedded service listens while its worker pools warm up: /readyz answers 503 with
Retry-After at once instead of a closed port or a hang, and a reward request sent meanwhile
waits for its pool and is answered."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import httpx

from service.localstack import ManagedProcess, free_port, wait_until
from tests.support import AUTH, service_env


def test_readyz_is_a_fast_503_until_the_pools_are_warm(tmp_path: Path) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = service_env(RLVR_DATA_DIR=str(tmp_path), RLVR_LOCAL_WORKERS="2")
    command = [sys.executable, "-m", "service.cli"]
    subprocess.run([*command, "migrate"], env=env, check=True, capture_output=True)
    server = ManagedProcess(
        [*command, "serve", "--port", str(port)],
        env,
        tmp_path / "api.log",
    )
    try:

        def listening() -> bool:
            try:
                return httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200
            except httpx.TransportError:
                return not server.alive()

        wait_until(listening, 90, "the HTTP server to listen")
        assert server.alive(), server.log_tail()
        # A reward request sent during warm-up, answered once its pool is warm.
        answers: list[httpx.Response] = []
        sender = threading.Thread(
            target=lambda: answers.append(
                httpx.post(
                    f"{base_url}/v1/rewards",
                    json={
                        "verifier": "math",
                        "items": [{"completion": "\\boxed{2}", "ground_truth": "2"}],
                    },
                    headers=AUTH,
                    timeout=120,
                )
            )
        )
        sender.start()
        first = httpx.get(f"{base_url}/readyz", timeout=5)
        assert first.status_code == 503, first.text
        assert first.headers["Retry-After"]
        assert any("pool is starting" in problem for problem in first.json()["problems"])

        statuses: list[int] = []

        def ready() -> bool:
            statuses.append(httpx.get(f"{base_url}/readyz", timeout=5).status_code)
            return statuses[-1] == 200

        wait_until(ready, 120, "the pools to warm up")
        assert set(statuses) <= {200, 503}
        sender.join(120)
        assert answers and answers[0].status_code == 200, answers and answers[0].text
        assert answers[0].json()["results"][0]["reward"] == 1.0
    finally:
        server.stop()
