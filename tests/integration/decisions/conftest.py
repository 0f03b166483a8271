"""The audit API on both stores: the embedded SQLite file and the suite's Postgres database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.db.session import dispose_engines
from service.settings import Settings
from tests.support import AUTH, embedded_settings_in


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings of a service on either store (Postgres: the suite's migrated database)."""
    if request.param == "sqlite":
        return embedded_settings_in(tmp_path_factory.mktemp("audit-sqlite"))
    settings: Settings = request.getfixturevalue("pg_settings")
    return settings


@pytest.fixture(scope="module")
def audit_client(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store), headers=AUTH) as test_client:
        yield test_client
    dispose_engines()
