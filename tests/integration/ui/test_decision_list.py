"""The dashboard's decision list on both stores: every filter of the audit API from a form, bad
values named on a 422 page, pages that keep the filters, links from the run page, downloads."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.auth.service import AuthService
from service.db.session import dispose_engines, session_scope
from service.settings import Settings
from service.ui.filter_form import FIELDS
from service.validation import MAX_STEP
from tests.integration.decisions.helpers import decision_row, record
from tests.support import ADMIN_KEY, AUTH, embedded_settings_in

from .conftest import DECISION_LINK

# Extracted answers a naive LIKE would misread, and one to find by any case.
EXTRACTED = {3: "50%", 4: "5_0", 5: "X = Forty", 6: "500"}
EVERY_FIELD_EMPTY = {f.name: "" for f in FIELDS}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    if request.param == "sqlite":
        return embedded_settings_in(tmp_path_factory.mktemp("ui-list"), local_workers=1)
    settings: Settings = request.getfixturevalue("pg_settings")
    return settings


@pytest.fixture(scope="module")
def api(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store), headers=AUTH) as client:
        yield client
    dispose_engines()


def signed_in(api: TestClient, key: str = ADMIN_KEY) -> TestClient:
    client = TestClient(api.app, follow_redirects=False)
    response = client.post("/ui/login", data={"key": key, "next": "/ui/runs"})
    assert response.status_code == 303, response.text
    return client


@pytest.fixture(scope="module")
def ui(api: TestClient) -> TestClient:
    return signed_in(api)


class Run:
    """A run of ten decisions, item i at step i, a minute apart; ``ids`` maps ids to items."""

    def __init__(self, run_id: str, times: list[datetime], ids: dict[str, int]) -> None:
        self.run_id, self.times, self.ids = run_id, times, ids

    def items(self, ui: TestClient, **params: Any) -> set[int]:
        """The items of this run the list shows with ``params`` (the run's id always set: other
        modules' decisions share the database)."""
        response = ui.get("/ui/decisions", params={**params, "run_id": self.run_id})
        assert response.status_code == 200, response.text
        return {self.ids[found] for found in DECISION_LINK.findall(response.text)}


@pytest.fixture(scope="module")
def run(store: Settings, api: TestClient) -> Run:
    """Items 0-9: steps 0-9, durations 1-10 ms, even ones cached and correct, 7 flagged, 9 on
    version 1.0.1, groups of four, two requests. Labels: 2 "incorrect" (the verifier said
    correct: contradicted), 8 "correct" (agrees)."""
    run_id = f"list-{uuid.uuid4().hex[:8]}"
    origin = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    times = [origin + timedelta(minutes=i) for i in range(10)]
    rows = [
        decision_row(
            run_id,
            i,
            index=i,
            created_at=times[i],
            request_id=f"{run_id}-req-{'a' if i < 6 else 'b'}",
            group_id=f"g{i // 4}",
            verifier_version="1.0.1" if i == 9 else "1.0.0",
            duration_ms=float(i + 1),
            cached=i % 2 == 0,
            flagged=i == 7,
            status="correct" if i % 2 == 0 else "incorrect",
            reward=1.0 if i % 2 == 0 else 0.0,
            details={"extracted": EXTRACTED.get(i, str(i * 11)), "reason": "compared"},
        )
        for i in range(10)
    ]
    record(store, rows)
    for i, verdict in ((2, "incorrect"), (8, "correct")):
        response = api.post(f"/v1/decisions/{rows[i]['id']}/labels", json={"verdict": verdict})
        assert response.status_code == 201, response.text
    return Run(run_id, times, {str(row["id"]): i for i, row in enumerate(rows)})


def test_empty_fields_filter_nothing(ui: TestClient, run: Run) -> None:
    # What a form sends when only the run was typed in: every other field as "".
    assert run.items(ui, **{**EVERY_FIELD_EMPTY, "run_id": run.run_id}) == set(range(10))


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"step": "4"}, {4}),
        ({"step_from": "3", "step_to": "5"}, {3, 4, 5}),
        ({"step_from": "8"}, {8, 9}),
        ({"step_to": " 1 "}, {0, 1}),
        ({"step_from": "5", "step_to": "4"}, set()),
        ({"verifier": "math", "version": "1.0.1"}, {9}),
        ({"verifier": "other"}, set()),
        ({"status": "incorrect"}, {1, 3, 5, 7, 9}),
        ({"group_id": "g1"}, {4, 5, 6, 7}),
        ({"flagged": "true"}, {7}),
        ({"flagged": "false"}, set(range(10)) - {7}),
        ({"cached": "true"}, {0, 2, 4, 6, 8}),
        ({"cached": "no"}, {1, 3, 5, 7, 9}),
        ({"labelled": "true"}, {2, 8}),
        ({"labelled": "false"}, set(range(10)) - {2, 8}),
        ({"disagrees_with_label": "true"}, {2}),
        ({"disagrees_with_label": "false"}, set(range(10)) - {2}),
        ({"labelled": "true", "disagrees_with_label": "false"}, {8}),
        ({"min_duration_ms": "3", "max_duration_ms": "5.5"}, {2, 3, 4}),
        ({"min_duration_ms": "9.5"}, {9}),
        ({"q": "fORTY"}, {5}),
        ({"q": "50"}, {3, 6}),
        ({"q": "%"}, {3}),
        ({"q": "_"}, {4}),
        ({"q": "' OR 1=1 --"}, set()),
        ({"flagged": "false", "cached": "false", "step_from": "5"}, {5, 9}),
    ],
)
def test_each_filter_narrows_the_list(
    ui: TestClient, run: Run, params: dict[str, str], expected: set[int]
) -> None:
    assert run.items(ui, **{**EVERY_FIELD_EMPTY, **params}) == expected


def test_request_and_time_filters(ui: TestClient, run: Run) -> None:
    assert run.items(ui, request_id=f"{run.run_id}-req-b") == {6, 7, 8, 9}
    after, before = run.times[5], run.times[7]
    zoned = {
        "created_after": after.isoformat().replace("+00:00", "Z"),
        "created_before": before.isoformat(),
    }
    assert run.items(ui, **zoned) == {5, 6}
    # Without an offset (as a person types it, seconds optional): UTC.
    plain = {
        "created_after": after.strftime("%Y-%m-%dT%H:%M"),
        "created_before": before.strftime("%Y-%m-%d %H:%M:%S"),
    }
    assert run.items(ui, **plain) == {5, 6}
    shifted = (after + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
    assert run.items(ui, created_after=shifted) == {5, 6, 7, 8, 9}


def test_the_form_keeps_what_was_asked(ui: TestClient, run: Run) -> None:
    page = ui.get(
        "/ui/decisions",
        params={
            "run_id": run.run_id,
            "step_from": "2",
            "flagged": "yes",
            "labelled": "false",
            "status": "correct",
            "q": "5",
            "min_duration_ms": "1.5",
        },
    ).text
    assert f'name="run_id" id="f-run_id" maxlength="256" value="{run.run_id}"' in page
    assert 'name="step_from" id="f-step_from" type="number"' in page and 'value="2"' in page
    assert 'value="1.5"' in page and 'name="q" id="f-q" maxlength="256" value="5"' in page
    flagged = page.split('id="f-flagged"', 1)[1].split("</select>", 1)[0]
    assert '<option value="true" selected>' in flagged
    labelled = page.split('id="f-labelled"', 1)[1].split("</select>", 1)[0]
    assert '<option value="false" selected>' in labelled
    cached = page.split('id="f-cached"', 1)[1].split("</select>", 1)[0]
    assert "selected" not in cached
    assert '<option value="correct" selected>' in page


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("step", "abc"),
        ("step", "-1"),
        ("step", "1.5"),
        ("step_from", str(MAX_STEP + 1)),
        ("step_to", "9" * 400),
        ("step", "\u0663"),  # a digit to Python's int(), not to the column
        ("min_duration_ms", "nan"),
        ("max_duration_ms", "1e400"),
        ("max_duration_ms", "-3"),
        ("min_duration_ms", "86400001"),
        ("created_after", "yesterday"),
        ("created_before", "2026-02-30T00:00:00Z"),
        ("created_after", "1700000000"),
        ("flagged", "maybe"),
        ("disagrees_with_label", "2"),
        ("status", "bogus"),
        ("run_id", "a\x00b"),
        ("q", "x\x00"),
        ("q", "x" * 257),
        ("version", "v" * 65),
        ("request_id", "r" * 129),
        ("verifier", "\x00"),
        ("group_id", "g" * 257),
        ("cursor", "123-zz"),
        ("cursor", f"{'9' * 18}-{'0' * 32}"),
    ],
)
def test_a_bad_value_is_named_on_a_422_page(
    ui: TestClient, run: Run, field: str, value: str
) -> None:
    response = ui.get("/ui/decisions", params={"run_id": run.run_id, field: value})
    assert response.status_code == 422, (field, value)
    assert f'<li data-field="{field}">' in response.text
    assert 'id="decisions"' not in response.text  # nothing listed for a selection not made
    assert 'id="filters"' in response.text and "\x00" not in response.text
    assert "<script" not in response.text.lower()


def test_every_bad_value_is_named_at_once(ui: TestClient, run: Run) -> None:
    params = {"run_id": run.run_id, "step": "x", "cached": "perhaps", "q": "y" * 300}
    page = ui.get("/ui/decisions", params=params).text
    named = re.findall(r'<li data-field="([a-z_]+)">', page)
    assert named == ["step", "cached", "q"]
    assert 'class="invalid">step' in page


def test_hostile_filter_values_are_shown_as_text(ui: TestClient, run: Run) -> None:
    attack = '"><script>alert(1)</script><b>'
    for params, status in (({"q": attack}, 200), ({"q": attack, "step": attack}, 422)):
        response = ui.get("/ui/decisions", params={"run_id": run.run_id, **params})
        assert response.status_code == status
        body = response.text.split("</head>", 1)[1]
        assert "<script" not in body and "<b>" not in body
        assert 'value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;"' in body


@pytest.fixture(scope="module")
def long_run(store: Settings) -> tuple[str, set[str]]:
    """200 decisions, ten a step, the even ones flagged; the ids of the flagged ones from step 1
    on whose answer holds "ans": 63 of them, more than a page."""
    run_id = f"paged-{uuid.uuid4().hex[:8]}"
    origin = datetime.now(UTC) - timedelta(minutes=30)
    rows = [
        decision_row(
            run_id,
            i // 10,
            index=i,
            created_at=origin + timedelta(seconds=i),
            flagged=i % 2 == 0,
            details={"extracted": f"ans {i}" if i % 3 else f"other {i}", "reason": "compared"},
        )
        for i in range(200)
    ]
    record(store, rows)
    wanted = {str(r["id"]) for i, r in enumerate(rows) if i >= 10 and i % 2 == 0 and i % 3}
    return run_id, wanted


def test_the_next_page_keeps_every_filter(ui: TestClient, long_run: tuple[str, set[str]]) -> None:
    run_id, wanted = long_run
    params = {**EVERY_FIELD_EMPTY, "run_id": run_id, "flagged": "true", "step_from": "1"}
    params["q"] = "ANS"
    seen: list[str] = []
    page = ui.get("/ui/decisions", params=params)
    pages = 0
    while True:
        pages += 1
        assert page.status_code == 200
        seen += DECISION_LINK.findall(page.text)
        found = re.search(r'id="next-page" href="([^"]+)"', page.text)
        if not found:
            break
        link = found.group(1).replace("&amp;", "&")
        query = parse_qs(urlsplit(link).query)
        assert {name: values[0] for name, values in query.items() if name != "cursor"} == {
            "run_id": run_id,
            "flagged": "true",
            "step_from": "1",
            "q": "ANS",
        }
        page = ui.get(link)
        assert 'id="first-page"' in page.text
    assert len(wanted) > 50 and pages == 2
    assert len(seen) == len(set(seen)) and set(seen) == wanted


def test_the_run_page_links_to_its_filtered_decisions(ui: TestClient, run: Run) -> None:
    page = ui.get(f"/ui/runs/{quote(run.run_id, safe='')}").text
    links = {
        name: link.replace("&amp;", "&")
        for name, link in re.findall(r'id="(run-[a-z]+)" href="([^"]+)"', page)
    }
    assert set(links) == {"run-decisions", "run-flagged", "run-contradicted"}
    for name, expected in (
        ("run-decisions", set(range(10))),
        ("run-flagged", {7}),
        ("run-contradicted", {2}),
    ):
        listed = ui.get(links[name]).text
        assert {run.ids[found] for found in DECISION_LINK.findall(listed)} == expected, name
    # One flagged decision in ten is over the flagged budget: the warning links to them.
    warning = page.split('data-kind="flagged_rate"', 1)[1].split("</li>", 1)[0]
    link = re.search(r'href="([^"]+)"', warning)
    assert link is not None
    listed = ui.get(link.group(1).replace("&amp;", "&")).text
    assert {run.ids[found] for found in DECISION_LINK.findall(listed)} == {7}
    step_link = f'href="/ui/decisions?run_id={quote(run.run_id)}&amp;step=4"'
    assert step_link in page


def test_the_selection_downloads_as_ndjson_and_csv(ui: TestClient, run: Run) -> None:
    page = ui.get("/ui/decisions", params={"run_id": run.run_id, "cached": "false", "step": ""})
    exports = dict(re.findall(r'id="export-([a-z]+)" href="([^"]+)"', page.text))
    assert set(exports) == {"ndjson", "csv"}
    ndjson = ui.get(exports["ndjson"].replace("&amp;", "&"))
    assert ndjson.status_code == 200
    assert ndjson.headers["content-type"].startswith("application/x-ndjson")
    assert ndjson.headers["content-disposition"] == 'attachment; filename="decisions.ndjson"'
    assert ndjson.headers["x-content-type-options"] == "nosniff"
    records = [json.loads(line) for line in ndjson.text.splitlines()]
    assert {run.ids[r["id"]] for r in records} == {1, 3, 5, 7, 9}
    assert all(r["cursor"] and r["run_id"] == run.run_id for r in records)
    table = ui.get(exports["csv"].replace("&amp;", "&"))
    assert table.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert {run.ids[r["id"]] for r in rows} == {1, 3, 5, 7, 9}


def test_downloads_need_a_sign_in_and_hold_the_viewers_tenant(
    api: TestClient, store: Settings, run: Run
) -> None:
    anonymous = TestClient(api.app, follow_redirects=False)
    # The API's own key in a header does not stand in for the dashboard's sign-in.
    refused = anonymous.get("/ui/decisions/export", params={"run_id": run.run_id}, headers=AUTH)
    assert refused.status_code == 303 and refused.headers["location"].startswith("/ui/login")
    with session_scope(store) as session:
        _, other = AuthService(session).create_key(f"t{uuid.uuid4().hex[:8]}", ["audit:read"])
    stranger = signed_in(api, other)
    assert stranger.get("/ui/decisions/export", params={"run_id": run.run_id}).text == ""
    assert run.items(stranger) == set()
    bad = signed_in(api).get("/ui/decisions/export", params={"format": "xml", "step": "-2"})
    assert bad.status_code == 422
    assert '<li data-field="format">' in bad.text and '<li data-field="step">' in bad.text
