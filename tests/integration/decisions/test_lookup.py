"""The chunk runner's one read (``DecisionLog.lookup``): stored decisions by id and cached
verdicts by key, on both stores, with either list empty (the statement is built once, its IN
lists bound at each call)."""

from __future__ import annotations

import uuid

from service.db.session import read_scope, session_scope
from service.decisions.log import DecisionLog
from service.settings import Settings
from service.verifiers.base import Verdict
from tests.integration.decisions.helpers import cache_entry, decision_row


def test_lookup_finds_stored_decisions_and_cached_verdicts(store: Settings) -> None:
    row = decision_row(None, None, details={"extracted": "7", "why": "\\frac{1}{2}"})
    entry = cache_entry(False, {"extracted": None})
    key = entry["cache_key"]
    with session_scope(store) as session:
        DecisionLog(session).record([row], [entry])
    missing_id, missing_key = uuid.uuid4(), "f" * 64

    with read_scope(store) as session:
        log = DecisionLog(session)
        stored, cached = log.lookup([row["id"], missing_id], [key, missing_key, key])
        only_cached = log.lookup([], [key])
        only_stored = log.lookup([row["id"]], [])
        nothing = log.lookup([missing_id], [missing_key])

    assert set(stored) == {row["id"]}
    verdict = stored[row["id"]]
    assert (verdict.reward, verdict.status, verdict.cached, verdict.duration_ms) == (
        1.0,
        "correct",
        False,
        1.5,
    )
    assert verdict.details == {"extracted": "7", "why": "\\frac{1}{2}"}
    assert cached == {key: Verdict(0.0, "incorrect", {"accuracy": 0.0}, {"extracted": None})}
    assert only_cached == ({}, cached)
    assert set(only_stored[0]) == {row["id"]} and only_stored[1] == {}
    assert nothing == ({}, {})
