"""A full service refuses work before it reads the body: 503 + Retry-After from the request line
alone, on a connection that stays usable, while /healthz and audit reads are answered.

Before: a request past the limits was read, parsed, authenticated and counted in Redis before
it was shed; at twice the capacity the refusals took as much of the API as the work it kept.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import h11
import httpx
import pytest

from tests.integration.limits.helpers import (
    math_items,
    post_rewards,
    private_broker,
    start_server_without_workers,
    wait_for_inflight,
)
from tests.support import ADMIN_KEY, AUTH, service_env

pytestmark = pytest.mark.slow

# A Redis database no worker of the suite consumes: what is published here waits.
BROKER_DB = 9


class _Connection:
    """One HTTP/1.1 connection driven by hand, so the test decides when the body is sent."""

    def __init__(self, base_url: str) -> None:
        host, port = base_url.removeprefix("http://").split(":")
        self.host = f"{host}:{port}"
        # A deadline on every read: a server that waits for the body never answers.
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.http = h11.Connection(h11.CLIENT)

    def send(self, *events: h11.Event) -> None:
        for event in events:
            data = self.http.send(event)
            if data:
                self.sock.sendall(data)

    def response(self) -> tuple[h11.Response, bytes]:
        head, body = None, b""
        while True:
            event = self.http.next_event()
            if event is h11.NEED_DATA:
                self.http.receive_data(self.sock.recv(65536))
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                return head, body

    def announce(self, body: bytes) -> None:
        """Send a rewards request's head announcing ``body``, and not the body."""
        self.send(
            h11.Request(
                method="POST",
                target="/v1/rewards",
                headers=[
                    ("Host", self.host),
                    ("Authorization", f"Bearer {ADMIN_KEY}"),
                    ("Content-Type", "application/json"),
                    ("Content-Length", str(len(body))),
                ],
            )
        )

    def close(self) -> None:
        self.sock.close()


def test_a_full_service_refuses_work_before_reading_its_body_and_stays_usable(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    env = service_env(
        RLVR_DATABASE_URL=pg_url,
        RLVR_BROKER_URL=private_broker(redis_url, BROKER_DB),
        RLVR_MAX_INFLIGHT_ITEMS="2",
        # No worker consumes: the stuck request waits for one instead of a fast 503.
        RLVR_WORKER_WAIT_S="600",
    )
    server, base_url = start_server_without_workers(env, tmp_path / "api.log")
    connection = None
    try:
        # Two items wait for a worker that never comes: the service is full.
        stuck = post_rewards(base_url, {"verifier": "math", "items": math_items(2)})
        wait_for_inflight(base_url, 2)

        # Headers only: the body is announced and not sent. The answer comes all the same.
        body = json.dumps({"verifier": "math", "items": math_items(1)}).encode()
        connection = _Connection(base_url)
        connection.announce(body)
        head, payload = connection.response()
        assert head.status_code == 503
        headers = {name.decode(): value.decode() for name, value in head.headers}
        assert int(headers["retry-after"]) >= 1
        assert headers.get("connection", "keep-alive") != "close"
        error = json.loads(payload)["error"]
        assert error["code"] == "overloaded" and "RLVR_MAX_INFLIGHT_ITEMS" in error["message"]

        # The body arrives late and is discarded; the same connection serves the next request.
        connection.send(h11.Data(data=body), h11.EndOfMessage())
        connection.http.start_next_cycle()
        connection.send(
            h11.Request(method="GET", target="/healthz", headers=[("Host", connection.host)]),
            h11.EndOfMessage(),
        )
        head, _ = connection.response()
        assert head.status_code == 200

        # A client that sends its body with the request reads the 503, not a reset.
        with httpx.Client(base_url=base_url, headers=AUTH, timeout=30) as client:
            for _ in range(3):
                shed = client.post("/v1/rewards", json={"verifier": "math", "items": math_items(1)})
                assert shed.status_code == 503, shed.text
                assert shed.json()["error"]["code"] == "overloaded"
                assert int(shed.headers["Retry-After"]) >= 1
            # Never gated: health, audit reads, metrics.
            assert client.get("/healthz").status_code == 200
            assert client.get("/v1/decisions", params={"limit": 5}).status_code == 200
            metrics = client.get("/metrics").text
        assert 'rlvr_limited_requests_total{limit="gate_inflight_items"}' in metrics
        assert not stuck.done  # still waiting for its worker: it was not disturbed
    finally:
        if connection is not None:
            connection.close()
        server.stop()


def test_a_key_past_its_requests_in_flight_is_refused_before_its_next_body_is_read(
    pg_url: str, redis_url: str, tmp_path: Path
) -> None:
    env = service_env(
        RLVR_DATABASE_URL=pg_url,
        RLVR_BROKER_URL=private_broker(redis_url, BROKER_DB),
        RLVR_MAX_CONCURRENT_REQUESTS_PER_KEY="1",
        RLVR_WORKER_WAIT_S="600",
    )
    server, base_url = start_server_without_workers(env, tmp_path / "api.log")
    connection = None
    try:
        # The key's one request in flight waits for a worker that never comes.
        stuck = post_rewards(base_url, {"verifier": "math", "items": math_items(1)})
        wait_for_inflight(base_url, 1)
        request = {"verifier": "math", "items": math_items(1)}
        with httpx.Client(base_url=base_url, headers=AUTH, timeout=30) as client:
            # Its next request is read, checked and refused by the key's limit...
            refused = client.post("/v1/rewards", json=request)
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "too_many_concurrent_requests"

        # ...and from then on refused from its headers alone, the body never sent.
        connection = _Connection(base_url)
        connection.announce(json.dumps(request).encode())
        head, payload = connection.response()
        assert head.status_code == 429
        headers = {name.decode(): value.decode() for name, value in head.headers}
        assert int(headers["retry-after"]) >= 1
        assert json.loads(payload)["error"]["code"] == "too_many_concurrent_requests"

        with httpx.Client(base_url=base_url, timeout=30) as client:
            # A key the service has not verified is not refused in that key's name: it is
            # checked as always (and this one is wrong).
            forged = client.post(
                "/v1/rewards", json=request, headers={"Authorization": f"Bearer {ADMIN_KEY}x"}
            )
            assert forged.status_code == 401, forged.text
            metrics = client.get("/metrics", headers=AUTH).text
        assert 'rlvr_limited_requests_total{limit="gate_key_concurrency"} 1.0' in metrics
        assert not stuck.done
    finally:
        if connection is not None:
            connection.close()
        server.stop()
