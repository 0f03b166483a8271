"""A service with a run whose model text is hostile: the dashboard must show it as text."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.db.migrate import upgrade
from service.settings import Settings
from tests.support import ADMIN_KEY, AUTH, TEST_TIMEOUT_S

# Each tries to run script, load a style or escape its element if a page forgets to escape.
HOSTILE = [
    "<script>alert('xss')</script>",
    '"><img src=x onerror=alert(1)>',
    "</pre><style>body{display:none}</style>",
    "{{ 7*7 }} {% raw %}",
    "javascript:alert(1)",
]


# A decision's link on a list page: its id.
DECISION_LINK = re.compile(r'href="/ui/decisions/([0-9a-f-]{36})"')


def hostile_items(step: int) -> list[dict[str, Any]]:
    items = []
    for i, attack in enumerate(HOSTILE):
        items.append(
            {
                "id": f"{step}-{i}",
                "group_id": f"g{step}",
                "prompt": f"Solve {attack}",
                "completion": f"{attack} so the answer is \\boxed{{{i}}}",
                "ground_truth": attack if i == 0 else str(i + step % 2),
                "metadata": {"note": attack},
            }
        )
    return items


@pytest.fixture(scope="module")
def ui_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("ui"),
        local_workers=1,
        verify_timeout_s=TEST_TIMEOUT_S,
        bootstrap_admin_key=ADMIN_KEY,
    )
    upgrade(settings.sqlalchemy_url)
    return settings


@pytest.fixture(scope="module")
def api(ui_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(ui_settings), headers=AUTH) as client:
        yield client


@pytest.fixture(scope="module")
def hostile_run(api: TestClient) -> str:
    run_id = f"ui-<b>{uuid.uuid4().hex[:6]}</b>"
    for step in range(3):
        body = {"verifier": "math", "run_id": run_id, "step": step, "items": hostile_items(step)}
        response = api.post("/v1/rewards", json=body)
        assert response.status_code == 200, response.text
    return run_id
