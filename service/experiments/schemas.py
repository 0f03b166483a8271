"""Request and response shapes of the experiment and replay routes."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.validation import (
    NAME_PATTERN,
    NO_NUL_PATTERN,
    REFERENCE_MAX_CHARS,
    REFERENCE_PATTERN,
    VERSION_MAX_CHARS,
    VERSION_PATTERN,
    FilterTime,
    JsonStep,
    UtcDateTime,
    unstorable_value,
)
from service.verifiers.base import Status

Mode = Literal["shadow", "split"]
ExperimentState = Literal["running", "stopped"]
ReplayState = Literal["pending", "running", "done", "cancelled", "failed"]
RunId = Field(default=None, min_length=1, max_length=256, pattern=NO_NUL_PATTERN)


class ExperimentFilter(BaseModel):
    """The traffic an experiment takes: one run's requests, or (empty) all of the tenant's."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = RunId


class ExperimentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=128, pattern=NO_NUL_PATTERN)
    verifier: str = Field(max_length=64, pattern=NAME_PATTERN, examples=["math"])
    control: str = Field(max_length=VERSION_MAX_CHARS, pattern=VERSION_PATTERN, examples=["1.0.0"])
    treatment: str = Field(
        max_length=VERSION_MAX_CHARS, pattern=VERSION_PATTERN, examples=["1.1.0"]
    )
    mode: Mode
    split: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        description="Split mode: the treatment's share of groups (default 0.5). Not used in "
        "shadow mode.",
    )
    filter: ExperimentFilter = Field(default_factory=ExperimentFilter)

    @model_validator(mode="after")
    def _storable(self) -> ExperimentIn:
        for name, value in (("name", self.name), ("filter.run_id", self.filter.run_id)):
            found = unstorable_value(value, name)
            if found:
                raise ValueError(found)
        return self


class ShadowCounts(BaseModel):
    sent: int
    dropped: int


class ExperimentOut(BaseModel):
    id: uuid.UUID
    name: str
    verifier: str
    control: str
    treatment: str
    mode: Mode
    split: float | None
    filter: ExperimentFilter
    state: ExperimentState
    shadow: ShadowCounts | None
    created_at: UtcDateTime
    stopped_at: UtcDateTime | None


class Latency(BaseModel):
    p50: float | None
    p95: float | None
    p99: float | None


class ArmReport(BaseModel):
    """One arm (a version) of a comparison."""

    version: str
    items: int
    statuses: dict[str, int]
    mean_reward: float | None
    timeout_rate: float | None
    error_rate: float | None
    # Of verifications that ran (verdict-cache hits are not timed).
    latency_ms: Latency


class RewardDelta(BaseModel):
    """Mean reward of the treatment minus the control's, with its 95% confidence interval."""

    mean: float
    low: float | None
    high: float | None
    n: int
    confidence: float
    method: Literal["paired", "welch"]


class GrpoEffectOut(BaseModel):
    """Paired comparisons: groups whose GRPO update changes under the treatment."""

    groups: int
    affected: int
    affected_fraction: float | None
    sign_changed: int
    sign_changed_fraction: float | None
    gains_signal: int
    loses_signal: int
    all_incorrect_to_mixed: int
    mixed_to_all_incorrect: int


class ArmSignal(BaseModel):
    """Split experiments: each arm's groups, and how many carried no signal (all the same)."""

    groups: int
    all_same: int
    all_same_fraction: float | None


class Disagreement(BaseModel):
    """One item the two versions judged differently (its status differs)."""

    decision_id: uuid.UUID
    control_status: str
    treatment_status: str
    control_reward: float | None
    treatment_reward: float | None
    control_extracted: Any
    treatment_extracted: Any
    # The completion's end, where its final answer usually is.
    completion_excerpt: str


class Report(BaseModel):
    """A comparison of two versions: a shadow or split experiment, or a replay target."""

    kind: Literal["shadow", "split", "replay"]
    paired: bool
    control: ArmReport
    treatment: ArmReport
    agreement_rate: float | None
    # control status → treatment status → items (paired comparisons).
    confusion: dict[str, dict[str, int]] | None
    reward_delta: RewardDelta | None
    grpo: GrpoEffectOut | None
    grpo_by_arm: dict[str, ArmSignal] | None
    disagreements: list[Disagreement]
    next_cursor: str | None


class ExperimentReport(Report):
    experiment: ExperimentOut


class ReplayFilter(BaseModel):
    """Which logged decisions a replay re-scores (all of them must hold)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = RunId
    verifier: str | None = Field(default=None, max_length=64, pattern=NAME_PATTERN)
    version: str | None = Field(default=None, max_length=VERSION_MAX_CHARS, pattern=VERSION_PATTERN)
    step_from: JsonStep | None = None
    step_to: JsonStep | None = None
    since: FilterTime | None = None
    until: FilterTime | None = None
    status: Status | None = None

    @model_validator(mode="after")
    def _storable(self) -> ReplayFilter:
        # A range the wrong way round matches nothing (a replay of 0 decisions, done at once),
        # as the decision list's filters do; it is not an error.
        found = unstorable_value(self.run_id, "filter.run_id")
        if found:
            raise ValueError(found)
        return self


Target = Field(
    default=None, max_length=REFERENCE_MAX_CHARS, pattern=REFERENCE_PATTERN, examples=["math@1.1.0"]
)


class ReplayIn(BaseModel):
    # "target", or a non-empty "targets": the rule JSON Schema can state.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["target"], "properties": {"target": {"type": "string"}}},
                {"required": ["targets"], "properties": {"targets": {"type": "array"}}},
            ]
        },
    )

    filter: ReplayFilter
    target: str | None = Target
    targets: (
        list[Annotated[str, Field(max_length=REFERENCE_MAX_CHARS, pattern=REFERENCE_PATTERN)]]
        | None
    ) = Field(
        default=None,
        min_length=1,
        max_length=8,
        description='Several versions re-score the same decisions: one table ("target" is '
        "one of them).",
    )

    @model_validator(mode="after")
    def _some_target(self) -> ReplayIn:
        if self.target is None and not self.targets:
            raise ValueError("set target or targets")
        return self

    def references(self) -> list[str]:
        """The targets in order, each once."""
        listed = ([self.target] if self.target else []) + list(self.targets or [])
        return list(dict.fromkeys(listed))


class ReplayTarget(BaseModel):
    reference: str
    name: str
    version: str
    version_hash: str


class ReplayProgress(BaseModel):
    done: int
    total: int
    # Re-scored items per second since the replay started, and the time left at that rate.
    rate_per_s: float | None
    eta_s: float | None


class ReplayCell(BaseModel):
    status: str | None
    reward: float | None


class ReplayRow(BaseModel):
    """One source decision across the replay's versions."""

    decision_id: uuid.UUID
    source: ReplayCell
    targets: list[ReplayCell]


class ReplayTable(BaseModel):
    columns: list[str]
    rows: list[ReplayRow]
    next_cursor: str | None


class ReplayOut(BaseModel):
    id: uuid.UUID
    state: ReplayState
    filter: dict[str, Any]
    targets: list[ReplayTarget]
    progress: ReplayProgress
    error: str | None
    created_at: UtcDateTime
    finished_at: UtcDateTime | None
    # When done: one report per target (source decision = control, target = treatment) and
    # the per-decision table across versions.
    reports: list[Report] | None = None
    table: ReplayTable | None = None


class ReplayCreated(BaseModel):
    id: uuid.UUID
    state: ReplayState
    total: int
