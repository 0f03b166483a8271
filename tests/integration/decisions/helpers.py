"""Decision rows written through the log's own write path (``DecisionLog.record``, what every
chunk calls), so a test can shape a run's decisions exactly: steps, versions, flags, durations,
extracted answers."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from service.db.session import session_scope
from service.decisions.log import DecisionLog
from service.settings import Settings

VERSION_HASHES = {"1.0.0": "a" * 64, "1.0.1": "b" * 64}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cache_entry(correct: bool, details: dict[str, Any]) -> dict[str, Any]:
    """A verdict-cache entry as execution writes it beside its decisions, under a new key."""
    reward = 1.0 if correct else 0.0
    return {
        "cache_key": uuid.uuid4().hex + uuid.uuid4().hex,
        "version_hash": "0" * 64,
        "created_at": datetime.now(UTC),
        "reward": reward,
        "status": "correct" if correct else "incorrect",
        "components": {"accuracy": reward},
        "details": details,
    }


def decision_row(
    run_id: str | None,
    step: int | None,
    *,
    index: int = 0,
    request_id: str | None = None,
    created_at: datetime | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """A decision row as execution writes it (service/execution/chunk.py), with ``overrides``."""
    completion = overrides.pop("completion", f"work {uuid.uuid4().hex} so \\boxed{{{index}}}")
    ground_truth = overrides.pop("ground_truth", str(index))
    version = overrides.pop("verifier_version", "1.0.0")
    details = overrides.pop("details", {"extracted": str(index), "reason": "compared"})
    row = {
        "id": uuid.uuid4(),
        "tenant_id": "default",
        "request_id": request_id or uuid.uuid4().hex,
        "item_index": index,
        "item_id": str(index),
        "group_id": None,
        "run_id": run_id,
        "step": step,
        "verifier_name": "math",
        "verifier_version": version,
        "version_hash": VERSION_HASHES[version],
        "prompt": "What is it?",
        "prompt_hash": digest("What is it?"),
        "completion": completion,
        "completion_hash": digest(completion),
        "completion_chars": len(completion),
        "ground_truth": ground_truth,
        "ground_truth_hash": digest(str(ground_truth)),
        "metadata": {},
        "reward": 1.0,
        "status": "correct",
        "components": {"accuracy": 1.0},
        "details": details,
        "cached": False,
        "duration_ms": 1.5,
        "flagged": False,
        "worker_id": "test:1",
        "created_at": created_at or datetime.now(UTC),
    }
    row.update(overrides)
    return row


def record(settings: Settings, rows: Sequence[dict[str, Any]]) -> None:
    """Write rows as one chunk does: decisions, their rollups, in one transaction."""
    with session_scope(settings) as session:
        DecisionLog(session).record(rows, [])


def spaced(count: int, start: datetime | None = None) -> list[datetime]:
    """``count`` creation times, oldest first, a millisecond apart."""
    origin = start or datetime.now(UTC) - timedelta(hours=1)
    return [origin + timedelta(milliseconds=i) for i in range(count)]
