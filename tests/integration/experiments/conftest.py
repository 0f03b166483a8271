"""Fixtures of the experiment tests: a team of their own on the deployed stack."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from service.settings import Settings
from tests.integration.experiments.helpers import publish_tolerant, team_client
from tests.support import ManagedProcess


@pytest.fixture(scope="module")
def team(
    live_server: str, pg_settings: Settings, background_worker: ManagedProcess
) -> Iterator[httpx.Client]:
    """A new tenant's client on the live server, with math@1.1.0 published and a background
    worker (for this module) running."""
    publish_tolerant(live_server)
    with team_client(live_server, pg_settings) as client:
        yield client
