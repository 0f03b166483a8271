"""GET /v1/decisions filters: step ranges, flags, cache, duration, labels and free text, on both
stores; every bad filter is a 422 naming it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.auth.service import AuthService
from service.db.session import session_scope
from service.settings import Settings
from tests.integration.decisions.helpers import decision_row, record, spaced

# Extracted answers that a naive LIKE would misread.
EXTRACTED = {3: "50%", 4: "5_0", 5: "X = Forty", 6: "500"}


@pytest.fixture(scope="module")
def run(store: Settings, audit_client: TestClient) -> str:
    """Items 0-9 at steps 0-9; 10 and 11 judge item 2's input again (10: another version of
    the same verifier, 11: another verifier). Labels: 2 is "incorrect" (the verifier said
    correct), 8 "correct" (agrees), 9 "incorrect" (agrees: the verifier said incorrect)."""
    run_id = f"filters-{uuid.uuid4().hex[:8]}"
    times = spaced(12)
    rows = [
        decision_row(
            run_id,
            i,
            index=i,
            created_at=times[i],
            duration_ms=float(i + 1),
            cached=i % 2 == 0,
            flagged=i == 7,
            status="correct" if i % 2 == 0 else "incorrect",
            reward=1.0 if i % 2 == 0 else 0.0,
            details={"extracted": EXTRACTED.get(i, str(i * 11)), "reason": "compared"},
        )
        for i in range(10)
    ]
    same_input = {"completion": rows[2]["completion"], "ground_truth": rows[2]["ground_truth"]}
    rows.append(
        decision_row(
            run_id,
            10,
            index=10,
            created_at=times[10],
            verifier_version="1.0.1",
            duration_ms=100.0,
            **same_input,
        )
    )
    rows.append(
        decision_row(
            run_id,
            11,
            index=11,
            created_at=times[11],
            verifier_name="other",
            duration_ms=100.0,
            **same_input,
        )
    )
    record(store, rows)
    for i, verdict in ((2, "incorrect"), (8, "correct"), (9, "incorrect")):
        response = audit_client.post(
            f"/v1/decisions/{rows[i]['id']}/labels", json={"verdict": verdict}
        )
        assert response.status_code == 201, response.text
    return run_id


def items(client: TestClient, run_id: str, **filters: Any) -> set[int]:
    response = client.get("/v1/decisions", params={"run_id": run_id, **filters})
    assert response.status_code == 200, response.text
    return {int(d["item_id"]) for d in response.json()["decisions"]}


def test_step_ranges_are_inclusive(audit_client: TestClient, run: str) -> None:
    assert items(audit_client, run, step_from=3, step_to=5) == {3, 4, 5}
    assert items(audit_client, run, step_from=9) == {9, 10, 11}
    assert items(audit_client, run, step_to=1) == {0, 1}
    assert items(audit_client, run, step=4) == {4}
    assert items(audit_client, run, step=4, step_from=5) == set()
    # Ends the wrong way round: valid, and nothing matches.
    assert items(audit_client, run, step_from=5, step_to=4) == set()


def test_flagged_cached_and_duration(audit_client: TestClient, run: str) -> None:
    assert items(audit_client, run, flagged=True) == {7}
    assert items(audit_client, run, flagged=False) == set(range(12)) - {7}
    assert items(audit_client, run, cached=True) == {0, 2, 4, 6, 8}
    assert items(audit_client, run, cached=False) == {1, 3, 5, 7, 9, 10, 11}
    assert items(audit_client, run, min_duration_ms=3, max_duration_ms=5) == {2, 3, 4}
    assert items(audit_client, run, min_duration_ms=50) == {10, 11}
    assert items(audit_client, run, min_duration_ms=9, max_duration_ms=1) == set()
    decision = audit_client.get("/v1/decisions", params={"run_id": run, "flagged": True}).json()
    assert decision["decisions"][0]["flagged"] is True


def test_free_text_is_literal_and_case_insensitive(audit_client: TestClient, run: str) -> None:
    assert items(audit_client, run, q="%") == {3}
    assert items(audit_client, run, q="_") == {4}
    assert items(audit_client, run, q="50") == {3, 6}
    assert items(audit_client, run, q="fORTY") == {5}
    assert items(audit_client, run, q="\\") == set()
    assert items(audit_client, run, q="' OR 1=1 --") == set()


def test_labels_hold_for_the_input_of_one_verifier(audit_client: TestClient, run: str) -> None:
    assert items(audit_client, run, labelled=True) == {2, 8, 9, 10}
    assert items(audit_client, run, labelled=False) == {0, 1, 3, 4, 5, 6, 7, 11}


def test_disagreements_with_labels(audit_client: TestClient, run: str) -> None:
    assert items(audit_client, run, disagrees_with_label=True) == {2, 10}
    assert items(audit_client, run, disagrees_with_label=False) == set(range(12)) - {2, 10}
    assert items(audit_client, run, labelled=True, disagrees_with_label=False) == {8, 9}


def test_filtered_pages_follow_the_cursor_without_gaps(audit_client: TestClient, run: str) -> None:
    seen: list[int] = []
    params: dict[str, Any] = {"run_id": run, "labelled": False, "limit": 3}
    for _ in range(10):
        page = audit_client.get("/v1/decisions", params=params).json()
        seen.extend(int(d["item_id"]) for d in page["decisions"])
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert seen == [11, 7, 6, 5, 4, 3, 1, 0]  # newest first, each once


def test_another_tenant_sees_none_of_it(
    audit_client: TestClient, store: Settings, run: str
) -> None:
    with session_scope(store) as session:
        _, key = AuthService(session).create_key(f"other-{uuid.uuid4().hex[:6]}", ["audit:read"])
    headers = {"Authorization": f"Bearer {key}"}
    for filters in ({}, {"labelled": True}, {"q": "5"}, {"flagged": True}):
        listed = audit_client.get(
            "/v1/decisions", params={"run_id": run, **filters}, headers=headers
        )
        assert listed.status_code == 200 and listed.json()["decisions"] == []
        exported = audit_client.get(
            "/v1/decisions/export", params={"run_id": run, **filters}, headers=headers
        )
        assert exported.status_code == 200 and exported.text == ""


BAD_FILTERS = [
    ({"step_from": "-1"}, "step_from"),
    ({"step_to": str(2**53)}, "step_to"),
    ({"flagged": "maybe"}, "flagged"),
    ({"cached": "2"}, "cached"),
    ({"labelled": "sometimes"}, "labelled"),
    ({"disagrees_with_label": "x"}, "disagrees_with_label"),
    ({"min_duration_ms": "nan"}, "min_duration_ms"),
    ({"max_duration_ms": "inf"}, "max_duration_ms"),
    ({"min_duration_ms": "-1"}, "min_duration_ms"),
    ({"q": ""}, "q"),
    ({"q": "a\x00b"}, "q"),
    ({"q": "x" * 257}, "q"),
    ({"cursor": "1-xyz"}, "cursor"),
]


@pytest.mark.parametrize("path", ["/v1/decisions", "/v1/decisions/export"])
@pytest.mark.parametrize(("params", "named"), BAD_FILTERS)
def test_a_bad_filter_is_a_422_naming_it(
    audit_client: TestClient, path: str, params: dict[str, str], named: str
) -> None:
    response = audit_client.get(path, params=params)
    assert response.status_code == 422, response.text
    assert named in response.json()["error"]["message"]


def test_a_step_range_never_holds_decisions_without_a_step(
    audit_client: TestClient, store: Settings
) -> None:
    run_id = f"stepless-{uuid.uuid4().hex[:8]}"
    times = spaced(3)
    record(
        store,
        [decision_row(run_id, s, index=i, created_at=times[i]) for i, s in enumerate((None, 0, 1))],
    )
    assert items(audit_client, run_id, step_to=1) == {1, 2}
    assert items(audit_client, run_id, step_from=0) == {1, 2}
    assert items(audit_client, run_id, step_from=2) == set()
    assert items(audit_client, run_id) == {0, 1, 2}
