"""The decision log: every verified item, every verifier version that decided, the verdict cache."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    false,
    literal_column,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from service.db.base import Base, JSONType, utcnow

HASH_LEN = 64  # sha256 hex
TENANT_LEN = 64
# Rows written before tenants existed belong to the operator's tenant of this name.
DEFAULT_TENANT = "default"


class Tenant(Base):
    """A team: its keys, and the decisions and requests made with them, belong to it."""

    __tablename__ = "tenants"

    id: Mapped[str] = mapped_column(String(TENANT_LEN), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiKey(Base):
    """A bearer key, stored as a scrypt hash; the key itself is shown once, when created."""

    __tablename__ = "api_keys"

    # Public part of the key (``rlvr_<id>_<secret>``), used to find its row.
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id"))
    name: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list[str]] = mapped_column(JSONType)
    secret_hash: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column()


class VerifierOwner(Base):
    """The tenant whose ``verifiers:admin`` keys publish versions of a name and move its
    aliases; built-in names belong to the operator's tenant and have no row."""

    __tablename__ = "verifier_owners"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AliasMove(Base):
    """Every move of an alias: who moved it, from where, to where, when and why."""

    __tablename__ = "alias_moves"
    __table_args__ = (Index(None, "name", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    alias: Mapped[str] = mapped_column(String(64))
    from_version: Mapped[str | None] = mapped_column(String(64))
    to_version: Mapped[str] = mapped_column(String(64))
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    key_id: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    # Moved past a failing promotion gate on purpose (with its reason).
    forced: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class VerifierVersion(Base):
    """A verifier version that has decided anything: what it was, so a decision can be replayed."""

    __tablename__ = "verifier_versions"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    version: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(64))
    code_version: Mapped[str] = mapped_column(String(64))
    config: Mapped[dict[str, Any]] = mapped_column(JSONType)
    library_versions: Mapped[dict[str, str]] = mapped_column(JSONType)
    group_shaping: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    version_hash: Mapped[str] = mapped_column(String(HASH_LEN), unique=True)
    # False for built-in versions recorded when they first decide; True for versions
    # published through the API, which resolve from this table.
    published: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The tenant that published it (None for built-in versions).
    published_by: Mapped[str | None] = mapped_column(String(TENANT_LEN))
    description: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class VerifierAlias(Base):
    """A movable name for a version (``stable``, ``canary``); built-in aliases are defaults."""

    __tablename__ = "verifier_aliases"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    alias: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Decision(Base):
    """One verified item of one request, as decided by one verifier version."""

    __tablename__ = "decisions"
    __table_args__ = (
        # A redelivered task or a retried request never logs an item twice.
        UniqueConstraint("tenant_id", "request_id", "item_index", "version_hash"),
        # Pages newest first walk one of these backwards: a tenant's log, a run's, a step's.
        Index(None, "tenant_id", "created_at"),
        Index(None, "tenant_id", "run_id", "created_at"),
        Index(None, "tenant_id", "run_id", "step"),
        # Flagged decisions are rare: without their own (small) index, ?flagged=true reads the
        # whole log newest first to fill a page.
        Index(
            "ix_decisions_flagged_tenant_id_created_at",
            "tenant_id",
            "created_at",
            postgresql_where=text("flagged"),
            sqlite_where=text("flagged"),
        ),
        # Labels are keyed by input: ?labelled= finds the decisions on a labelled completion.
        Index(None, "tenant_id", "verifier_name", "completion_hash"),
        # ?q= (free text in the extracted answer) by trigrams, on Postgres where the pg_trgm
        # extension can be had (migration 0007 creates it only then); elsewhere a scan.
        Index(
            "ix_decisions_extracted_trgm",
            literal_column("details")
            .op("->>", return_type=Text)(literal_column("'extracted'"))
            .label("extracted"),
            postgresql_using="gin",
            postgresql_ops={"extracted": "gin_trgm_ops"},
        ).ddl_if(dialect="postgresql"),
        Index(None, "verifier_name", "verifier_version", "status"),
        Index(None, "group_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN), server_default=DEFAULT_TENANT)
    request_id: Mapped[str] = mapped_column(String(128))
    item_index: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[str] = mapped_column(String(256))
    group_id: Mapped[str | None] = mapped_column(String(256))
    run_id: Mapped[str | None] = mapped_column(String(256))
    step: Mapped[int | None] = mapped_column(BigInteger().with_variant(Integer, "sqlite"))
    verifier_name: Mapped[str] = mapped_column(String(128))
    verifier_version: Mapped[str] = mapped_column(String(64))
    version_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    prompt: Mapped[str | None] = mapped_column(Text)
    prompt_hash: Mapped[str | None] = mapped_column(String(HASH_LEN))
    completion: Mapped[str] = mapped_column(Text)
    completion_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    completion_chars: Mapped[int] = mapped_column(Integer)
    ground_truth: Mapped[Any] = mapped_column(JSONType)
    ground_truth_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    item_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType)
    reward: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    components: Mapped[dict[str, float]] = mapped_column(JSONType)
    details: Mapped[dict[str, Any]] = mapped_column(JSONType)
    cached: Mapped[bool] = mapped_column(Boolean)
    duration_ms: Mapped[float] = mapped_column(Float)
    # An answer written in the prompt, or a static hack pattern in a program: for audit.
    flagged: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    worker_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# Rollups of the decision log, kept up to date as each chunk's decisions are written (only the
# rows actually inserted count, so a redelivered chunk adds nothing): a run's summary and the
# runs list read these, a few rows per step, instead of every decision (bench/audit_scale.py).
# Steps are optional in requests; decisions without one roll up under NO_STEP.
NO_STEP = -1


class RunRollup(Base):
    """A run's totals: the runs list reads one row per run."""

    __tablename__ = "run_rollups"
    __table_args__ = (
        PrimaryKeyConstraint("tenant_id", "run_id"),
        Index(None, "tenant_id", "last_seen"),
    )

    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    run_id: Mapped[str] = mapped_column(String(256))
    decisions: Mapped[int] = mapped_column(BigInteger)
    scored: Mapped[int] = mapped_column(BigInteger)
    reward_sum: Mapped[float] = mapped_column(Float)
    first_step: Mapped[int | None] = mapped_column(BigInteger)
    last_step: Mapped[int | None] = mapped_column(BigInteger)
    first_seen: Mapped[datetime] = mapped_column()
    last_seen: Mapped[datetime] = mapped_column()


class RunStepRollup(Base):
    """One step of a run as judged by one verifier version: counts, sums and extremes."""

    __tablename__ = "run_step_rollups"
    __table_args__ = (PrimaryKeyConstraint("tenant_id", "run_id", "step", "version_hash"),)

    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    run_id: Mapped[str] = mapped_column(String(256))
    step: Mapped[int] = mapped_column(BigInteger)
    version_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    verifier_name: Mapped[str] = mapped_column(String(128))
    verifier_version: Mapped[str] = mapped_column(String(64))
    decisions: Mapped[int] = mapped_column(BigInteger)
    scored: Mapped[int] = mapped_column(BigInteger)
    reward_sum: Mapped[float] = mapped_column(Float)
    reward_squares: Mapped[float] = mapped_column(Float)
    cached: Mapped[int] = mapped_column(BigInteger)
    flagged: Mapped[int] = mapped_column(BigInteger)
    duration_sum: Mapped[float] = mapped_column(Float)
    chars_sum: Mapped[int] = mapped_column(BigInteger)
    chars_max: Mapped[int] = mapped_column(BigInteger)
    first_seen: Mapped[datetime] = mapped_column()
    last_seen: Mapped[datetime] = mapped_column()


class RunSeriesRollup(Base):
    """A named series of one step of a run (``kind``: a status, a reward component, a latency
    bucket or a group) with its count, sum, sum of squares and extremes."""

    __tablename__ = "run_series_rollups"
    __table_args__ = (PrimaryKeyConstraint("tenant_id", "run_id", "step", "kind", "key"),)

    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    run_id: Mapped[str] = mapped_column(String(256))
    step: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(256))
    n: Mapped[int] = mapped_column(BigInteger)
    total: Mapped[float] = mapped_column(Float)
    squares: Mapped[float] = mapped_column(Float)
    low: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)


class VerdictCache(Base):
    """Deterministic verdicts by (version, completion, ground truth): GRPO groups repeat."""

    __tablename__ = "verdict_cache"

    cache_key: Mapped[str] = mapped_column(String(HASH_LEN), primary_key=True)
    version_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    reward: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    components: Mapped[dict[str, float]] = mapped_column(JSONType)
    details: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RewardRequest(Base):
    """One accepted POST /v1/rewards; its body hash makes an Idempotency-Key safe to reuse."""

    __tablename__ = "reward_requests"
    __table_args__ = (PrimaryKeyConstraint("tenant_id", "request_id"),)

    # Idempotency keys are per tenant: one team's key never answers another's request.
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN), server_default=DEFAULT_TENANT)
    request_id: Mapped[str] = mapped_column(String(128))
    body_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    item_count: Mapped[int] = mapped_column(Integer)
    run_id: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The time (ms since the epoch) its decision ids begin with; a retry uses the same. None: a
    # request claimed before ids held a time, whose ids are name-based only.
    issued_ms: Mapped[int | None] = mapped_column(BigInteger)


class Label(Base):
    """A person's verdict on one input (completion + ground truth) of a verifier: it holds for
    every version that judges the same input, and the labelled inputs are the verifier's
    regression set."""

    __tablename__ = "labels"
    __table_args__ = (UniqueConstraint("tenant_id", "verifier_name", "input_key"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    verifier_name: Mapped[str] = mapped_column(String(128))
    # sha256 of the completion's and the ground truth's hashes: the input, whoever judged it.
    input_key: Mapped[str] = mapped_column(String(HASH_LEN))
    decision_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    verdict: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text)
    key_id: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class VerifierCase(Base):
    """A canary: an input and the verdict a verifier must give it, uploaded directly."""

    __tablename__ = "verifier_cases"
    __table_args__ = (Index(None, "tenant_id", "verifier_name"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    verifier_name: Mapped[str] = mapped_column(String(128))
    prompt: Mapped[str | None] = mapped_column(Text)
    completion: Mapped[str] = mapped_column(Text)
    ground_truth: Mapped[Any] = mapped_column(JSONType)
    verdict: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Experiment(Base):
    """A comparison of two versions of a verifier on one tenant's live traffic: ``shadow`` (the
    treatment also decides the control's items, off the hot path) or ``split`` (whole groups
    are sent to one arm or the other by a stable hash)."""

    __tablename__ = "experiments"
    __table_args__ = (Index(None, "tenant_id", "state", "verifier_name"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    name: Mapped[str] = mapped_column(String(128))
    verifier_name: Mapped[str] = mapped_column(String(128))
    control_version: Mapped[str] = mapped_column(String(64))
    control_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    treatment_version: Mapped[str] = mapped_column(String(64))
    treatment_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    mode: Mapped[str] = mapped_column(String(16))
    # The treatment's share of groups (split mode only).
    split: Mapped[float | None] = mapped_column(Float)
    # The traffic it applies to: one run, or (None) every request of the tenant.
    run_id: Mapped[str | None] = mapped_column(String(256))
    state: Mapped[str] = mapped_column(String(16))
    # Shadow items handed to the shadow queue, and those dropped because it was full.
    shadow_sent: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    shadow_dropped: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    key_id: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    stopped_at: Mapped[datetime | None] = mapped_column()


class ExperimentAssignment(Base):
    """The arm of a split experiment that decided a decision (the decision itself is in the log,
    with the arm's version: it is the reward the trainer got)."""

    __tablename__ = "experiment_assignments"
    __table_args__ = (PrimaryKeyConstraint("experiment_id", "decision_id"),)

    experiment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    decision_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    arm: Mapped[str] = mapped_column(String(16))
    # The decision's group and verdict as logged, copied here so that the report never reads
    # the decisions' (wide) rows.
    request_id: Mapped[str] = mapped_column(String(128))
    group_id: Mapped[str | None] = mapped_column(String(256))
    reward: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    cached: Mapped[bool] = mapped_column(Boolean)
    duration_ms: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ShadowDecision(Base):
    """The treatment's verdict on an item the control decided, linked to the control's decision.
    Kept apart from ``decisions``: no trainer received it, so no run summary may count it."""

    __tablename__ = "shadow_decisions"
    __table_args__ = (UniqueConstraint("experiment_id", "control_decision_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    experiment_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    control_decision_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    # The control's group and verdict as logged (what the trainer got), copied here so that
    # the report never reads the decisions' (wide) rows.
    request_id: Mapped[str] = mapped_column(String(128))
    group_id: Mapped[str | None] = mapped_column(String(256))
    control_reward: Mapped[float | None] = mapped_column(Float)
    control_status: Mapped[str] = mapped_column(String(16))
    control_cached: Mapped[bool] = mapped_column(Boolean)
    control_duration_ms: Mapped[float] = mapped_column(Float)
    verifier_name: Mapped[str] = mapped_column(String(128))
    verifier_version: Mapped[str] = mapped_column(String(64))
    version_hash: Mapped[str] = mapped_column(String(HASH_LEN))
    reward: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    components: Mapped[dict[str, float]] = mapped_column(JSONType)
    details: Mapped[dict[str, Any]] = mapped_column(JSONType)
    cached: Mapped[bool] = mapped_column(Boolean)
    duration_ms: Mapped[float] = mapped_column(Float)
    worker_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Replay(Base):
    """A background job that re-scores logged decisions with other versions."""

    __tablename__ = "replays"
    __table_args__ = (Index(None, "tenant_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    # The decisions it re-scores, as asked (run, verifier, version, steps, times, status).
    filter: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # The versions that re-score them: [{"reference", "name", "version", "version_hash"}].
    targets: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    # pending (its items not listed yet), running, done, cancelled, failed.
    state: Mapped[str] = mapped_column(String(16))
    total: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    done: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    key_id: Mapped[str] = mapped_column(String(32))
    # Whoever advances the replay holds it until then: one driver at a time.
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Last progress (or state change): a replay silent for long is re-kicked.
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()


class ReplayResult(Base):
    """One source decision re-scored by one target version of a replay; listed (with a null
    status) when the replay starts, filled in once, when decided."""

    __tablename__ = "replay_results"
    __table_args__ = (
        UniqueConstraint("replay_id", "source_decision_id", "target"),
        Index(None, "replay_id", "position"),
        # What is left to do: decided rows leave this index, so resuming reads only the rest.
        Index(
            "ix_replay_results_pending",
            "replay_id",
            "target",
            "position",
            postgresql_where=text("status IS NULL"),
            sqlite_where=text("status IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    replay_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_LEN))
    source_decision_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    # The target's index in the replay's targets.
    target: Mapped[int] = mapped_column(Integer)
    # Order of the source decisions (by request, group, item): a group's items are adjacent,
    # so a chunk always holds whole groups; the same for every target.
    position: Mapped[int] = mapped_column(BigInteger)
    group_no: Mapped[int] = mapped_column(BigInteger)
    # The source decision's group and verdict, copied when the items are listed.
    request_id: Mapped[str] = mapped_column(String(128))
    group_id: Mapped[str | None] = mapped_column(String(256))
    source_reward: Mapped[float | None] = mapped_column(Float)
    source_status: Mapped[str] = mapped_column(String(16))
    source_cached: Mapped[bool] = mapped_column(Boolean)
    source_duration_ms: Mapped[float] = mapped_column(Float)
    reward: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str | None] = mapped_column(String(16))
    components: Mapped[dict[str, float] | None] = mapped_column(JSONType)
    details: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    cached: Mapped[bool | None] = mapped_column(Boolean)
    duration_ms: Mapped[float | None] = mapped_column(Float)
    worker_id: Mapped[str | None] = mapped_column(String(128))
    decided_at: Mapped[datetime | None] = mapped_column()
