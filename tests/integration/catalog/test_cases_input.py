"""Canary cases on both stores: a ground truth no store can keep (NaN, 1e400) is a 422 naming
the case and the field, never a 500 DataError, and nothing of the upload is kept; a NUL (legal
JSON) is kept as U+FFFD, as the decision log keeps it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.db.session import dispose_engines
from tests.support import AUTH, embedded_settings_in


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    if request.param == "sqlite":
        settings = embedded_settings_in(tmp_path_factory.mktemp("cases"), local_workers=1)
    else:
        settings = request.getfixturevalue("pg_settings")
    with TestClient(create_app(settings), headers=AUTH) as client:
        yield client
    dispose_engines()


@pytest.fixture
def verifier(api: TestClient) -> str:
    name = f"cases-{uuid.uuid4().hex[:10]}"
    body = {"version": "1.0.0", "kind": "math", "config": {}}
    response = api.post(f"/v1/verifiers/{name}/versions", json=body)
    assert response.status_code == 201, response.text
    return name


def _upload(api: TestClient, name: str, second_ground_truth: str) -> object:
    # Raw text: NaN and 1e400 are what a client's JSON encoder may write.
    body = (
        '{"cases": [{"completion": "\\\\boxed{4}", "ground_truth": "4", "verdict": "correct"},'
        f'{{"completion": "\\\\boxed{{5}}", "ground_truth": {second_ground_truth}, '
        '"verdict": "correct"}]}'
    )
    return api.post(
        f"/v1/verifiers/{name}/cases",
        content=body.encode(),
        headers={"content-type": "application/json"},
    )


@pytest.mark.parametrize(
    ("ground_truth", "named", "what"),
    [
        ("NaN", "cases.1.ground_truth", "not a finite number"),
        ('{"answer": 1e400}', "ground_truth.answer", "not a finite number"),
        ('["5", -Infinity]', "ground_truth[1]", "not a finite number"),
    ],
)
def test_an_unstorable_ground_truth_is_a_422_naming_it(
    api: TestClient, verifier: str, ground_truth: str, named: str, what: str
) -> None:
    response = _upload(api, verifier, ground_truth)
    assert response.status_code == 422, response.text  # type: ignore[attr-defined]
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert named in error["message"] and what in error["message"], error
    assert api.get(f"/v1/verifiers/{verifier}/cases").json() == []
    # The same upload with a ground truth that can be kept: both cases are kept.
    fixed = _upload(api, verifier, '"5"')
    assert fixed.status_code == 201, fixed.text  # type: ignore[attr-defined]
    assert len(api.get(f"/v1/verifiers/{verifier}/cases").json()) == 2


def test_a_nul_in_a_ground_truth_is_kept_as_a_replacement_character(
    api: TestClient, verifier: str
) -> None:
    response = _upload(api, verifier, '{"a\\u0000": ["5\\u0000"]}')
    assert response.status_code == 201, response.text  # type: ignore[attr-defined]
    kept = [case["ground_truth"] for case in api.get(f"/v1/verifiers/{verifier}/cases").json()]
    assert {"a\ufffd": ["5\ufffd"]} in kept
