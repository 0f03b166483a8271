"""GET /v1/decisions/export: every matching decision as NDJSON or CSV, read in batches while it
streams (after the request's own session is gone), resumable from any line's cursor."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from service.db.session import get_engine
from service.decisions.export import EXPORT_BATCH
from service.settings import Settings
from tests.integration.decisions.helpers import decision_row, record, spaced

ROWS = 3 * EXPORT_BATCH + 500  # four batches


@pytest.fixture(scope="module")
def run(store: Settings) -> str:
    run_id = f"export-{uuid.uuid4().hex[:8]}"
    hostile = 'He said "no",\nthen\t\\boxed{=1+1}, 🙂 </script>'
    rows = [
        decision_row(
            run_id,
            i // 64,
            index=i,
            created_at=at,
            completion=hostile if i % 100 == 0 else f"answer {i}",
            group_id=f"g{i // 64}" if i % 2 else None,
            reward=None if i % 7 == 0 else 0.5,
            status="error" if i % 7 == 0 else "partial",
            metadata={"n": i, "nested": {"ok": True}},
        )
        for i, at in enumerate(spaced(ROWS))
    ]
    record(store, rows)
    return run_id


def ndjson(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/v1/decisions/export", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


@pytest.fixture
def statements(store: Settings) -> Iterator[list[str]]:
    """The SELECTs on the decision log this process sends while the test runs."""
    seen: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM decisions" in statement:
            seen.append(statement)

    engine = get_engine(store)
    event.listen(engine, "before_cursor_execute", before)
    yield seen
    event.remove(engine, "before_cursor_execute", before)


def test_every_decision_streams_in_batches_newest_first(
    audit_client: TestClient, run: str, statements: list[str]
) -> None:
    lines = ndjson(audit_client, run_id=run)
    assert [int(line["item_id"]) for line in lines] == list(reversed(range(ROWS)))
    # Read a batch at a time while streaming, never the whole result at once.
    assert len(statements) >= ROWS // EXPORT_BATCH + 1
    assert all("LIMIT" in statement for statement in statements)


def test_a_line_is_the_decision_as_the_api_shows_it(audit_client: TestClient, run: str) -> None:
    lines = ndjson(audit_client, run_id=run, limit=120)
    for line in (lines[0], lines[-1], *[x for x in lines if int(x["item_id"]) % 100 == 0]):
        shown = audit_client.get(f"/v1/decisions/{line['id']}").json()
        assert {k: v for k, v in line.items() if k != "cursor"} == shown
    assert list(lines[0]) == ["cursor", *shown]  # the same fields, in the same order


def test_a_lost_export_resumes_from_the_last_cursor(audit_client: TestClient, run: str) -> None:
    everything = [line["id"] for line in ndjson(audit_client, run_id=run)]
    seen: list[str] = []
    cursor = None
    with audit_client.stream("GET", "/v1/decisions/export", params={"run_id": run}) as response:
        for text in response.iter_lines():
            line = json.loads(text)
            seen.append(line["id"])
            cursor = line["cursor"]
            if len(seen) == 1234:
                break  # the connection is lost here
    rest = ndjson(audit_client, run_id=run, cursor=cursor)
    assert seen + [line["id"] for line in rest] == everything


def test_a_limit_bounds_the_export_and_the_last_cursor_goes_on(
    audit_client: TestClient, run: str
) -> None:
    first = ndjson(audit_client, run_id=run, limit=EXPORT_BATCH + 1)
    assert len(first) == EXPORT_BATCH + 1
    more = ndjson(audit_client, run_id=run, limit=5, cursor=first[-1]["cursor"])
    assert [int(x["item_id"]) for x in more] == [int(first[-1]["item_id"]) - i for i in range(1, 6)]
    # A list page's next_cursor resumes an export too.
    page = audit_client.get("/v1/decisions", params={"run_id": run, "limit": 10}).json()
    after_page = ndjson(audit_client, run_id=run, limit=1, cursor=page["next_cursor"])
    assert int(after_page[0]["item_id"]) == ROWS - 11


def test_filters_apply_to_the_export(audit_client: TestClient, run: str) -> None:
    filters = {"run_id": run, "step_from": 3, "step_to": 4, "status": "error"}
    exported = {line["id"] for line in ndjson(audit_client, **filters)}
    listed = audit_client.get("/v1/decisions", params={**filters, "limit": 1000}).json()
    assert exported == {d["id"] for d in listed["decisions"]}
    assert len(exported) == sum(1 for i in range(3 * 64, 5 * 64) if i % 7 == 0)


def test_csv_has_a_header_and_a_cursor_on_every_row(audit_client: TestClient, run: str) -> None:
    response = audit_client.get(
        "/v1/decisions/export", params={"run_id": run, "format": "csv", "limit": 300}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text, newline="")))
    assert len(rows) == 300
    expected = ndjson(audit_client, run_id=run, limit=300)
    for row, line in zip(rows, expected, strict=True):
        assert row["cursor"] == line["cursor"] and row["id"] == line["id"]
        assert row["completion"] == line["completion"]  # quotes, newlines, tabs intact
        assert json.loads(row["metadata"]) == line["metadata"]
        assert json.loads(row["details"]) == line["details"]
        assert row["reward"] == ("" if line["reward"] is None else str(line["reward"]))
        assert row["cached"] == "false" and row["group_id"] == (line["group_id"] or "")


def test_an_export_of_nothing(audit_client: TestClient) -> None:
    params = {"run_id": f"nothing-{uuid.uuid4().hex}"}
    assert audit_client.get("/v1/decisions/export", params=params).text == ""
    response = audit_client.get("/v1/decisions/export", params={**params, "format": "csv"})
    assert response.text.splitlines()[0].startswith("cursor,reward,status")
    assert len(response.text.splitlines()) == 1


@pytest.mark.parametrize(
    "params", [{"format": "xml"}, {"limit": "0"}, {"limit": str(2**53)}, {"cursor": "x"}]
)
def test_bad_export_parameters_are_422(audit_client: TestClient, params: dict[str, str]) -> None:
    response = audit_client.get("/v1/decisions/export", params=params)
    assert response.status_code == 422
    assert next(iter(params)) in response.json()["error"]["message"]
