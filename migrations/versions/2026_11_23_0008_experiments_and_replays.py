"""Experiments (shadow and split) with their assignments and shadow decisions; replays and their
results.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 23:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSON_TYPE = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("verifier_name", sa.String(length=128), nullable=False),
        sa.Column("control_version", sa.String(length=64), nullable=False),
        sa.Column("control_hash", sa.String(length=64), nullable=False),
        sa.Column("treatment_version", sa.String(length=64), nullable=False),
        sa.Column("treatment_hash", sa.String(length=64), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("split", sa.Float(), nullable=True),
        sa.Column("run_id", sa.String(length=256), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("shadow_sent", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("shadow_dropped", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiments")),
    )
    with op.batch_alter_table("experiments", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_experiments_tenant_id_state_verifier_name"),
            ["tenant_id", "state", "verifier_name"],
            unique=False,
        )
    op.create_table(
        "experiment_assignments",
        sa.Column("experiment_id", sa.Uuid(), nullable=False),
        sa.Column("decision_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("arm", sa.String(length=16), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("group_id", sa.String(length=256), nullable=True),
        sa.Column("reward", sa.Float(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "experiment_id", "decision_id", name=op.f("pk_experiment_assignments")
        ),
    )
    op.create_table(
        "shadow_decisions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("experiment_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("control_decision_id", sa.Uuid(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("group_id", sa.String(length=256), nullable=True),
        sa.Column("control_reward", sa.Float(), nullable=True),
        sa.Column("control_status", sa.String(length=16), nullable=False),
        sa.Column("control_cached", sa.Boolean(), nullable=False),
        sa.Column("control_duration_ms", sa.Float(), nullable=False),
        sa.Column("verifier_name", sa.String(length=128), nullable=False),
        sa.Column("verifier_version", sa.String(length=64), nullable=False),
        sa.Column("version_hash", sa.String(length=64), nullable=False),
        sa.Column("reward", sa.Float(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("components", JSON_TYPE, nullable=False),
        sa.Column("details", JSON_TYPE, nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("worker_id", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shadow_decisions")),
        sa.UniqueConstraint(
            "experiment_id",
            "control_decision_id",
            name=op.f("uq_shadow_decisions_experiment_id_control_decision_id"),
        ),
    )
    op.create_table(
        "replays",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("filter", JSON_TYPE, nullable=False),
        sa.Column("targets", JSON_TYPE, nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("total", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("done", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_replays")),
    )
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_replays_tenant_id_created_at"), ["tenant_id", "created_at"], unique=False
        )
    op.create_table(
        "replay_results",
        sa.Column("id", BIG_ID, nullable=False),
        sa.Column("replay_id", sa.Uuid(), nullable=False),
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("source_decision_id", sa.Uuid(), nullable=False),
        sa.Column("target", sa.Integer(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("group_no", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("group_id", sa.String(length=256), nullable=True),
        sa.Column("source_reward", sa.Float(), nullable=True),
        sa.Column("source_status", sa.String(length=16), nullable=False),
        sa.Column("source_cached", sa.Boolean(), nullable=False),
        sa.Column("source_duration_ms", sa.Float(), nullable=False),
        sa.Column("reward", sa.Float(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("components", JSON_TYPE, nullable=True),
        sa.Column("details", JSON_TYPE, nullable=True),
        sa.Column("cached", sa.Boolean(), nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("worker_id", sa.String(length=128), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_replay_results")),
        sa.UniqueConstraint(
            "replay_id",
            "source_decision_id",
            "target",
            name=op.f("uq_replay_results_replay_id_source_decision_id_target"),
        ),
    )
    with op.batch_alter_table("replay_results", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_replay_results_replay_id_position"),
            ["replay_id", "position"],
            unique=False,
        )
        batch_op.create_index(
            "ix_replay_results_pending",
            ["replay_id", "target", "position"],
            unique=False,
            postgresql_where=sa.text("status IS NULL"),
            sqlite_where=sa.text("status IS NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("replay_results", schema=None) as batch_op:
        batch_op.drop_index("ix_replay_results_pending")
        batch_op.drop_index(batch_op.f("ix_replay_results_replay_id_position"))
    op.drop_table("replay_results")
    with op.batch_alter_table("replays", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_replays_tenant_id_created_at"))
    op.drop_table("replays")
    op.drop_table("shadow_decisions")
    op.drop_table("experiment_assignments")
    with op.batch_alter_table("experiments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_experiments_tenant_id_state_verifier_name"))
    op.drop_table("experiments")
