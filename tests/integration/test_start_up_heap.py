"""What start-up made is frozen while the app runs: full collections under load no longer walk
it (a pause of 70-150 ms every few seconds in the API process before)."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient

from service.app import create_app
from service.settings import Settings
from tests.support import AUTH


def test_the_start_up_heap_is_frozen_while_the_app_runs(embedded_settings: Settings) -> None:
    before = gc.get_freeze_count()  # 0, unless another app of this process is running
    with TestClient(create_app(embedded_settings), headers=AUTH) as client:
        assert client.get("/healthz").status_code == 200
        # The routes, schemas and modules of the app are among the frozen objects.
        assert gc.get_freeze_count() > 10_000
    # Undone at shutdown: the next app of the process (tests) starts as this one did.
    assert gc.get_freeze_count() == before
