"""Run summaries come from rollups kept as decisions are written: they say what the decisions
say (checked against the rows themselves), count a redelivered chunk once, and the migration
that introduced them builds the same rollups from an existing log."""

from __future__ import annotations

import statistics
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from fastapi.testclient import TestClient
from sqlalchemy import select

from service.db.migrate import alembic_config, upgrade
from service.db.models import RunRollup, RunSeriesRollup, RunStepRollup
from service.db.session import dispose_engines, session_scope
from service.settings import Settings
from tests.integration.decisions.helpers import decision_row, record, spaced
from tests.support import PG_TEST_DB, embedded_settings_in, recreate_database

STATUS_CYCLE = ("correct", "incorrect", "correct", "timeout", "error", "incorrect", "correct")


def run_rows(run_id: str) -> list[dict[str, Any]]:
    """Steps 0-5 and some rows without a step; a version change at step 3; groups of four;
    every status; durations 2^(i/2) ms, one per latency bucket, so quantiles are exact."""
    rows = []
    times = spaced(60)
    for i in range(60):
        step = None if i >= 54 else i // 9
        status = STATUS_CYCLE[i % len(STATUS_CYCLE)]
        reward = None if status == "error" else (1.0 if status == "correct" else 0.25 * (i % 3))
        rows.append(
            decision_row(
                run_id,
                step,
                index=i,
                created_at=times[i],
                verifier_version="1.0.0" if step is not None and step < 3 else "1.0.1",
                group_id=None if i % 9 == 8 else f"s{step}-g{i % 9 // 4}",
                status=status,
                reward=reward,
                components={} if reward is None else {"accuracy": reward, "format": 0.5},
                cached=i % 4 == 0,
                flagged=i % 11 == 0,
                duration_ms=2 ** ((i % 30) / 2),
                completion="x" * (10 + i),
            )
        )
    return rows


def expected_step(rows: list[dict[str, Any]]) -> dict[str, Any]:
    count = len(rows)
    rewards = [r["reward"] for r in rows if r["reward"] is not None]
    durations = [r["duration_ms"] for r in rows]
    statuses = Counter(r["status"] for r in rows)
    cuts = statistics.quantiles(durations, n=100, method="inclusive")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["group_id"] is not None and r["reward"] is not None:
            groups[r["group_id"]].append(r)
    corrects = [sum(m["status"] == "correct" for m in g) for g in groups.values()]
    return {
        "decisions": count,
        "scored": len(rewards),
        "reward": pytest.approx(
            {"mean": statistics.fmean(rewards), "std": statistics.pstdev(rewards)}
        ),
        "statuses": dict(statuses),
        "timeout_rate": pytest.approx(statuses["timeout"] / count),
        "error_rate": pytest.approx(statuses["error"] / count),
        "flagged_rate": pytest.approx(sum(r["flagged"] for r in rows) / count),
        "cache_hit_rate": pytest.approx(sum(r["cached"] for r in rows) / count),
        "latency_ms": pytest.approx(
            {"p50": statistics.median(durations), "p95": cuts[94], "p99": cuts[98]}
        ),
        "mean_duration_ms": pytest.approx(statistics.fmean(durations)),
        "completion_chars_max": max(r["completion_chars"] for r in rows),
        "groups": {
            "groups": len(groups),
            "solved_none": corrects.count(0),
            "solved_all": sum(c == len(g) for c, g in zip(corrects, groups.values(), strict=True)),
            "solved_some": sum(
                0 < c < len(g) for c, g in zip(corrects, groups.values(), strict=True)
            ),
            "all_same": sum(
                len({m["reward"] for m in g}) == 1
                for g in groups.values()  # one reward for all
            ),
        },
    }


def summary_of(step: dict[str, Any]) -> dict[str, Any]:
    shown = {
        key: step[key]
        for key in (
            "decisions",
            "scored",
            "reward",
            "statuses",
            "timeout_rate",
            "error_rate",
            "flagged_rate",
            "cache_hit_rate",
            "latency_ms",
            "mean_duration_ms",
            "completion_chars_max",
        )
    }
    shown["groups"] = {k: v for k, v in step["groups"].items() if k != "all_same_fraction"}
    return shown


def test_the_summary_says_what_the_decisions_say(audit_client: TestClient, store: Settings) -> None:
    run_id = f"rollup-{uuid.uuid4().hex[:8]}"
    rows = run_rows(run_id)
    record(store, rows[:25])
    record(store, rows[25:])  # two chunks: the rollups merge
    detail = audit_client.get(f"/v1/runs/{run_id}").json()
    assert detail["decisions"] == len(rows)
    by_step: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_step[row["step"]].append(row)
    assert [s["step"] for s in detail["steps"]] == [0, 1, 2, 3, 4, 5, None]
    for step in detail["steps"]:
        assert summary_of(step) == expected_step(by_step[step["step"]]), step["step"]
        components = step["components"]
        rewards = [r["reward"] for r in by_step[step["step"]] if r["reward"] is not None]
        assert components["accuracy"]["mean"] == pytest.approx(statistics.fmean(rewards))
        assert components["format"] == {"mean": 0.5, "std": pytest.approx(0.0, abs=1e-9)}
    versions = [
        (v["version"], v["first_step"], v["last_step"], v["decisions"]) for v in detail["versions"]
    ]
    assert versions == [("1.0.0", 0, 2, 27), ("1.0.1", 3, 5, 33)]
    (listed,) = [r for r in audit_client.get("/v1/runs").json()["runs"] if r["run_id"] == run_id]
    scored = [r["reward"] for r in rows if r["reward"] is not None]
    assert listed["decisions"] == 60 and (listed["first_step"], listed["last_step"]) == (0, 5)
    assert listed["mean_reward"] == pytest.approx(statistics.fmean(scored))


def test_a_redelivered_chunk_counts_once(audit_client: TestClient, store: Settings) -> None:
    run_id = f"redelivered-{uuid.uuid4().hex[:8]}"
    rows = run_rows(run_id)
    record(store, rows)
    before = audit_client.get(f"/v1/runs/{run_id}").json()
    record(store, rows[10:40])  # the same decisions again: stored already
    assert audit_client.get(f"/v1/runs/{run_id}").json() == before


def test_a_chunk_partly_stored_adds_only_its_new_rows(
    audit_client: TestClient, store: Settings
) -> None:
    # A chunk redelivered while its first delivery was writing finds some rows stored: on
    # Postgres the one-statement write then adds nothing and the new rows are added alone.
    run_id = f"partly-{uuid.uuid4().hex[:8]}"
    rows = run_rows(run_id)
    record(store, rows[:30])
    record(store, rows[20:])  # ten stored already, thirty new
    detail = audit_client.get(f"/v1/runs/{run_id}").json()
    assert detail["decisions"] == len(rows)
    by_step: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_step[row["step"]].append(row)
    for step in detail["steps"]:
        assert summary_of(step) == expected_step(by_step[step["step"]]), step["step"]


def rollups(url: str) -> dict[str, list[tuple[Any, ...]]]:
    settings = Settings(database_url=url, broker_url=None if url.startswith("sqlite") else "x")
    found = {}
    with session_scope(settings) as session:
        for model in (RunRollup, RunStepRollup, RunSeriesRollup):
            table = model.__table__
            query = select(table).order_by(*table.primary_key.columns)  # type: ignore[attr-defined]
            found[table.name] = [
                tuple(round(v, 9) if isinstance(v, float) else v for v in row)
                for row in session.execute(query)
            ]
    return found


def built_by_the_migration(url: str, settings: Settings) -> None:
    """Rollups kept while writing, then dropped and built again by migrating from 0006."""
    for run in range(2):
        rows = run_rows(f"migrated-{run}")
        record(settings, rows[:30])
        record(settings, rows[30:])
    kept = rollups(url)
    assert len(kept["run_rollups"]) == 2 and kept["run_series_rollups"]
    dispose_engines()
    command.downgrade(alembic_config(url), "0006")
    upgrade(url)
    dispose_engines()
    rebuilt = rollups(url)
    assert rebuilt == kept


def test_the_migration_builds_the_same_rollups_on_sqlite(tmp_path: Path) -> None:
    settings = embedded_settings_in(tmp_path)
    built_by_the_migration(settings.sqlalchemy_url, settings)


def test_the_migration_builds_the_same_rollups_on_postgres(redis_url: str) -> None:
    url = recreate_database(f"{PG_TEST_DB}_rollups")
    upgrade(url)
    built_by_the_migration(url, Settings(database_url=url, broker_url=redis_url))
