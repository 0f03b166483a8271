"""Audit views of the decision log."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.contract import RecordedVerdict
from service.validation import UtcDateTime


class DecisionOut(RecordedVerdict):
    """One logged decision: the item, its context, the version that decided, and the verdict."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    request_id: str
    item_index: int
    item_id: str
    group_id: str | None
    run_id: str | None
    step: int | None
    verifier_name: str
    verifier_version: str
    version_hash: str
    prompt: str | None
    prompt_hash: str | None
    completion: str
    completion_hash: str
    completion_chars: int
    ground_truth: Any
    ground_truth_hash: str
    metadata: dict[str, Any] = Field(validation_alias="item_metadata")
    # An answer written in the prompt, or a hack pattern in a program (details say which).
    flagged: bool
    worker_id: str
    created_at: UtcDateTime


class DecisionPage(BaseModel):
    decisions: list[DecisionOut]
    next_cursor: str | None


class StatsRow(BaseModel):
    verifier: str
    version: str
    status: str
    count: int
    mean_reward: float | None
    cached: int
    mean_duration_ms: float


class Stats(BaseModel):
    total: int
    rows: list[StatsRow]
