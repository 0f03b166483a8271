"""The chunk write stores JSON values as given: a null ground truth (format-only verifiers, a
label the trainer did not have) is JSON null, not a row the log refuses with its whole chunk;
metadata, components and details come back as written, NUL-free text included."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.db.models import VerdictCache
from service.db.session import session_scope
from service.decisions.log import DecisionLog
from service.settings import Settings
from tests.integration.decisions.helpers import cache_entry, decision_row

VALUES: list[Any] = [None, 0, 1.5, "4", [1, [2, None]], {"a": None, "b": ["\\frac{1}{2}"]}, True]


@pytest.mark.parametrize("ground_truth", VALUES)
def test_any_json_ground_truth_is_stored_as_given(
    audit_client: TestClient, store: Settings, ground_truth: Any
) -> None:
    run_id = f"json-{uuid.uuid4().hex[:8]}"
    rows = [
        decision_row(run_id, 0, index=0, ground_truth=ground_truth),
        decision_row(run_id, 0, index=1, metadata={"note": None, "k": [1, "é"]}),
    ]
    entry = cache_entry(True, {"extracted": None, "why": "\\boxed{x}"})
    key = entry["cache_key"]
    with session_scope(store) as session:
        DecisionLog(session).record(rows, [entry])
    found = {
        d["item_index"]: d
        for d in audit_client.get("/v1/decisions", params={"run_id": run_id}).json()["decisions"]
    }
    assert set(found) == {0, 1}
    assert found[0]["ground_truth"] == ground_truth
    assert found[1]["metadata"] == {"note": None, "k": [1, "é"]}
    with session_scope(store) as session:
        cached = session.get(VerdictCache, key)
        assert cached is not None
        assert cached.details == {"extracted": None, "why": "\\boxed{x}"}
        assert cached.components == {"accuracy": 1.0}
