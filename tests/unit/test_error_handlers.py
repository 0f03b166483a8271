"""The service's answers to failures it did not raise itself: a database that is down or a pool
with no connection free is a 503 with Retry-After (retry later), never a 500."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from service.app import install_error_handlers


def _client_raising(exc: Exception) -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    def boom() -> None:
        raise exc

    return TestClient(app, raise_server_exceptions=False)


def test_a_pool_with_no_connection_free_is_a_503_with_retry_after() -> None:
    response = _client_raising(
        PoolTimeout("QueuePool limit of size 10 overflow 20 reached, connection timed out")
    ).get("/boom")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    assert response.json()["error"]["code"] == "overloaded"


def test_a_database_that_is_down_is_a_503_with_retry_after() -> None:
    response = _client_raising(OperationalError("SELECT 1", {}, Exception("refused"))).get("/boom")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "dependency_unavailable"
    assert "Retry-After" in response.headers


def test_anything_else_is_a_500_naming_only_the_kind_of_error() -> None:
    response = _client_raising(RuntimeError("secret detail")).get("/boom")
    assert response.status_code == 500
    assert "secret detail" not in response.text
