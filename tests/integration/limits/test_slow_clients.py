"""Connections that send a request slower than any client would are closed, so a few of them
cannot hold every connection the server allows ("slowloris").

Before: uvicorn timed a connection out only while idle after a response. Connections that sent
nothing, half a request head, or a body a byte at a time stayed open for ever; past
``RLVR_MAX_CONNECTIONS`` of them every request was answered 503 by uvicorn itself.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.localstack import start_server
from tests.support import AUTH, embedded_settings_in, service_env

pytestmark = pytest.mark.slow

HEAD_TIMEOUT_S = 1.0
BODY_TIMEOUT_S = 2.0


def _open(base_url: str, first_bytes: bytes) -> socket.socket:
    host, port = base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    if first_bytes:
        sock.sendall(first_bytes)
    return sock


def _read_until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started, received = time.monotonic(), b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic() - started


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    embedded_settings_in(tmp_path / "data")  # its database, migrated
    env = service_env(
        RLVR_DATA_DIR=str(tmp_path / "data"),
        RLVR_LOCAL_WORKERS="1",
        RLVR_MAX_CONNECTIONS="16",
        RLVR_REQUEST_HEAD_TIMEOUT_S=str(HEAD_TIMEOUT_S),
        RLVR_REQUEST_BODY_TIMEOUT_S=str(BODY_TIMEOUT_S),
    )
    process, base_url = start_server(env, tmp_path / "api.log")
    yield base_url
    process.stop()


def test_a_connection_that_never_finishes_its_head_gets_a_408_and_is_closed(server: str) -> None:
    for first_bytes in (b"", b"POST /v1/rewards HTTP/1.1\r\nHost: x\r\n"):
        sock = _open(server, first_bytes)
        try:
            received, took = _read_until_closed(sock)
        finally:
            sock.close()
        assert received.startswith(b"HTTP/1.1 408 "), received
        head, _, body = received.partition(b"\r\n\r\n")
        assert b"connection: close" in head
        assert json.loads(body)["error"]["code"] == "request_timeout"
        assert took < HEAD_TIMEOUT_S + 10


def test_a_body_slower_than_its_deadline_closes_the_connection(server: str) -> None:
    head = (
        b"POST /v1/rewards HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: " + AUTH["Authorization"].encode() + b"\r\n"
        b"Content-Length: 1000\r\n\r\n{"
    )
    sock = _open(server, head)
    try:
        received, took = _read_until_closed(sock)  # one byte of a thousand, then nothing
    finally:
        sock.close()
    assert received == b""  # the application never answered a request it never read
    assert took < BODY_TIMEOUT_S + 10


def test_slow_connections_past_the_connection_limit_do_not_keep_the_service_from_others(
    server: str,
) -> None:
    slow = [_open(server, b"GET /healthz HTTP/1.1\r\n") for _ in range(24)]  # 16 allowed
    try:
        with httpx.Client(base_url=server, headers=AUTH, timeout=30) as client:
            deadline = time.monotonic() + HEAD_TIMEOUT_S + 20
            while (answer := client.get("/healthz")).status_code != 200:
                assert time.monotonic() < deadline, answer.text  # the slow ones never left
                time.sleep(0.2)
            request = {
                "verifier": "math",
                "items": [{"completion": "\\boxed{2}", "ground_truth": "2"}],
            }
            rewarded = client.post("/v1/rewards", json=request)
            assert rewarded.status_code == 200, rewarded.text
            assert rewarded.json()["results"][0]["reward"] == 1.0
            metrics = client.get("/metrics").text
        assert 'rlvr_limited_requests_total{limit="request_head_timeout"}' in metrics
    finally:
        for sock in slow:
            sock.close()


def test_a_request_sent_promptly_on_a_kept_alive_connection_is_unaffected(server: str) -> None:
    with httpx.Client(base_url=server, headers=AUTH, timeout=30) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
            time.sleep(HEAD_TIMEOUT_S + 0.5)  # idle between requests: the keep-alive's time
        request = {"verifier": "math", "items": [{"completion": "\\boxed{3}", "ground_truth": "3"}]}
        assert client.post("/v1/rewards", json=request).status_code == 200


def test_a_request_head_over_its_limit_is_refused_431_while_large_bodies_pass(server: str) -> None:
    for head in (
        b"GET /" + b"a" * (1 << 20),  # a megabyte-long request line, never ended
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: " + b"b" * (200 << 10) + b"\r\n\r\n",
    ):
        sock = _open(server, b"")
        received = b""
        try:
            # The server closes with the rest unread, which may reset the connection before
            # its answer is read: then only the count below says what happened.
            with contextlib.suppress(OSError):
                sock.sendall(head)
            with contextlib.suppress(ConnectionResetError):
                received, _ = _read_until_closed(sock)
        finally:
            sock.close()
        assert received == b"" or received.startswith(b"HTTP/1.1 431 "), received[:200]
    with httpx.Client(base_url=server, headers=AUTH, timeout=60) as client:
        metrics = client.get("/metrics").text
    assert 'rlvr_limited_requests_total{limit="request_head_too_large"} 2.0' in metrics


def test_large_heads_and_bodies_a_client_sends_pass(server: str) -> None:
    # Heads of every size a client sends, and bodies of megabytes, on one kept-alive connection.
    items = [
        {"completion": f"\\boxed{{{i}}} " + "x" * 2000, "ground_truth": str(i)} for i in range(600)
    ]
    with httpx.Client(
        base_url=server, headers={**AUTH, "X-Trace": "t" * 8000}, timeout=60
    ) as client:
        for _ in range(2):
            answer = client.post("/v1/rewards", json={"verifier": "math", "items": items})
            assert answer.status_code == 200, answer.text[:500]
            assert [result["reward"] for result in answer.json()["results"]] == [1.0] * 600
