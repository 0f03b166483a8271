"""SQLite's write path for decisions, cache entries and run rollups goes around SQLAlchemy's
statement machinery (``service.db.repository.SqliteRows``): what it stores must be what
SQLAlchemy's own insert or upsert stores, value for value, and it must tell exactly which rows
were new."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import select, text

from service.db.models import Decision, VerdictCache
from service.db.repository import SqliteRows, insert_ignoring_conflicts, sqlite_rows
from service.db.session import dispose_engines, session_scope
from service.decisions.repository import DecisionRepository, VerdictCacheRepository
from service.decisions.rollups import rollup_deltas
from service.decisions.run_repository import ROLLUPS, RunRepository, _upsert
from tests.integration.decisions.helpers import cache_entry, decision_row
from tests.support import embedded_settings_in


def _odd_rows() -> list[dict[str, Any]]:
    """Rows with every kind of value a column holds: nulls, a JSON null, a JSON string, text
    with quotes and backslashes, non-ASCII, floats, flags."""
    rows = [
        decision_row("run", 3, index=0),
        decision_row(
            None,
            None,
            index=1,
            ground_truth=None,
            completion="\\boxed{\\frac{1}{2}} 'quoted' \"double\" é ∑",
            details={"reason": "x", "nested": {"list": [1, 2.5, None, True]}},
            metadata={"k": "v"},
        ),
        decision_row("run", 0, index=2, reward=None, status="error", flagged=True, cached=True),
    ]
    rows[1]["metadata"] = None
    return rows


def _stored(session: Any, table: str, key: str, keys: list[Any]) -> dict[Any, dict[str, Any]]:
    """Raw stored values by key, without the columns that must differ (key, request)."""
    rows = session.execute(text(f'SELECT * FROM "{table}"')).all()
    return {
        row._mapping[key]: {
            name: value for name, value in row._mapping.items() if name not in (key, "request_id")
        }
        for row in rows
        if row._mapping[key] in keys
    }


def test_what_is_stored_is_what_sqlalchemys_insert_stores(tmp_path: Path) -> None:
    settings = embedded_settings_in(tmp_path)
    try:
        ours = _odd_rows()
        theirs = [dict(r, id=uuid.uuid4(), request_id=f"{r['request_id']}-2") for r in ours]
        ours_cache = [cache_entry(True, {"a": [1, None]}), cache_entry(False, {})]
        theirs_cache = [dict(entry, cache_key=uuid.uuid4().hex * 2) for entry in ours_cache]
        with session_scope(settings) as session:
            assert DecisionRepository(session).insert_many(ours) == ours
            VerdictCacheRepository(session).store(ours_cache)
            connection = session.connection()
            connection.execute(insert_ignoring_conflicts(Decision, "sqlite"), theirs)
            connection.execute(insert_ignoring_conflicts(VerdictCache, "sqlite"), theirs_cache)
        with session_scope(settings) as session:
            dialect = session.get_bind().dialect
            uuid_of = Decision.__table__.c.id.type._cached_bind_processor(dialect)
            mine = _stored(session, "decisions", "id", [uuid_of(r["id"]) for r in ours])
            reference = _stored(session, "decisions", "id", [uuid_of(r["id"]) for r in theirs])
            assert len(mine) == len(reference) == 3
            for a, b in zip(ours, theirs, strict=True):
                # Every column but the id: byte for byte the same stored values.
                assert mine[uuid_of(a["id"])] == reference[uuid_of(b["id"])]
            keys = [e["cache_key"] for e in ours_cache + theirs_cache]
            cache = _stored(session, "verdict_cache", "cache_key", keys)
            for a, b in zip(ours_cache, theirs_cache, strict=True):
                assert cache[a["cache_key"]] == cache[b["cache_key"]]
            # And read back through the model, the values are the rows' own.
            loaded = session.scalars(select(Decision).where(Decision.id == ours[1]["id"])).one()
            assert (loaded.ground_truth, loaded.item_metadata) == (None, None)
            assert (
                loaded.details == ours[1]["details"] and loaded.completion == ours[1]["completion"]
            )
            assert loaded.created_at == ours[1]["created_at"]
    finally:
        dispose_engines()


def test_only_the_new_rows_are_reported_inserted_across_statements(tmp_path: Path) -> None:
    settings = embedded_settings_in(tmp_path)
    try:
        with session_scope(settings) as session:
            writer = sqlite_rows(Decision, session)
            assert isinstance(writer, SqliteRows)
            count = writer.per_statement + 70  # more than one statement's worth of parameters
            rows = [decision_row("big", 1, index=i) for i in range(count)]
            stored_first = rows[writer.per_statement - 5 : writer.per_statement + 5]
            assert DecisionRepository(session).insert_many(stored_first) == stored_first
            inserted = DecisionRepository(session).insert_many(rows)
            assert inserted == [row for row in rows if row not in stored_first]
            assert DecisionRepository(session).insert_many(rows) == []
            total = session.execute(text("SELECT count(*) FROM decisions")).scalar_one()
            assert total == count
    finally:
        dispose_engines()


def test_rollups_added_through_the_driver_are_what_sqlalchemys_upsert_stores(
    tmp_path: Path,
) -> None:
    # Two chunks of the same run (the second merges into the rows the first created): once
    # through RunRepository.add, once through Core's executemany of the same upserts.
    settings = embedded_settings_in(tmp_path)
    first = [
        decision_row("ours", 1, index=0, group_id="g", components={"accuracy": 1.0, "f": 0.5}),
        decision_row("ours", 2, index=1, reward=None, status="error", flagged=True, cached=True),
    ]
    second = [
        decision_row("ours", 1, index=2, group_id="g", reward=0.0, status="incorrect"),
        decision_row("ours", 3, index=3, duration_ms=250.0, completion="x" * 5000),
    ]
    try:
        for chunk in (first, second):
            with session_scope(settings) as session:
                RunRepository(session).add(rollup_deltas(chunk))
                connection = session.connection()
                theirs = rollup_deltas(dict(row, run_id="theirs") for row in chunk)
                for model, field, _ in ROLLUPS:
                    connection.execute(_upsert(model, "sqlite"), getattr(theirs, field))
        with session_scope(settings) as session:
            for model, _, _ in ROLLUPS:
                table = model.__table__.name  # type: ignore[attr-defined]
                rows = session.execute(text(f'SELECT * FROM "{table}"')).all()
                stored = {
                    run: sorted(
                        tuple(v for k, v in row._mapping.items() if k != "run_id")
                        for row in rows
                        if row._mapping["run_id"] == run
                    )
                    for run in ("ours", "theirs")
                }
                assert stored["ours"] and stored["ours"] == stored["theirs"], table
    finally:
        dispose_engines()
