"""Indexes for the audit filters, and run rollups built from the decisions already logged.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:30:00

The rollups (per run, per step and version, per step series) are kept up to date by the
service as it writes each chunk's decisions; here they are built once from the existing log,
with the same rules (service/decisions/rollups.py).
"""

import math
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NO_STEP = -1
LATENCY_FLOOR_MS = 2.0**-10
BUCKETS_PER_DOUBLING = 4


def upgrade() -> None:
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_decisions_tenant_id_run_id_created_at"),
            ["tenant_id", "run_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(
            "ix_decisions_flagged_tenant_id_created_at",
            ["tenant_id", "created_at"],
            unique=False,
            postgresql_where=sa.text("flagged"),
            sqlite_where=sa.text("flagged"),
        )
        batch_op.create_index(
            batch_op.f("ix_decisions_tenant_id_verifier_name_completion_hash"),
            ["tenant_id", "verifier_name", "completion_hash"],
            unique=False,
        )
    if op.get_bind().dialect.name == "postgresql":
        _trigram_index()
    op.create_table(
        "run_rollups",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=256), nullable=False),
        sa.Column("decisions", sa.BigInteger(), nullable=False),
        sa.Column("scored", sa.BigInteger(), nullable=False),
        sa.Column("reward_sum", sa.Float(), nullable=False),
        sa.Column("first_step", sa.BigInteger(), nullable=True),
        sa.Column("last_step", sa.BigInteger(), nullable=True),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "run_id", name=op.f("pk_run_rollups")),
    )
    with op.batch_alter_table("run_rollups", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_run_rollups_tenant_id_last_seen"),
            ["tenant_id", "last_seen"],
            unique=False,
        )
    op.create_table(
        "run_step_rollups",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=256), nullable=False),
        sa.Column("step", sa.BigInteger(), nullable=False),
        sa.Column("version_hash", sa.String(length=64), nullable=False),
        sa.Column("verifier_name", sa.String(length=128), nullable=False),
        sa.Column("verifier_version", sa.String(length=64), nullable=False),
        sa.Column("decisions", sa.BigInteger(), nullable=False),
        sa.Column("scored", sa.BigInteger(), nullable=False),
        sa.Column("reward_sum", sa.Float(), nullable=False),
        sa.Column("reward_squares", sa.Float(), nullable=False),
        sa.Column("cached", sa.BigInteger(), nullable=False),
        sa.Column("flagged", sa.BigInteger(), nullable=False),
        sa.Column("duration_sum", sa.Float(), nullable=False),
        sa.Column("chars_sum", sa.BigInteger(), nullable=False),
        sa.Column("chars_max", sa.BigInteger(), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "run_id", "step", "version_hash", name=op.f("pk_run_step_rollups")
        ),
    )
    op.create_table(
        "run_series_rollups",
        sa.Column("tenant_id", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=256), nullable=False),
        sa.Column("step", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=256), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("total", sa.Float(), nullable=False),
        sa.Column("squares", sa.Float(), nullable=False),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint(
            "tenant_id", "run_id", "step", "kind", "key", name=op.f("pk_run_series_rollups")
        ),
    )
    _build_rollups()


# ?q= (free text in the extracted answer) as an index lookup instead of a scan of the run. It
# needs the pg_trgm extension (trusted: a database owner may create it); where it cannot be
# had, the filter still works, by scanning (and the schema differs from the models by this
# index alone).
TRIGRAM_INDEX = "ix_decisions_extracted_trgm"


def _trigram_index() -> None:
    bind = op.get_bind()
    available = "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'"
    if bind.exec_driver_sql(available).first() is None:
        return
    try:
        with bind.begin_nested():
            bind.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except sa.exc.DBAPIError:  # not allowed here: the filter scans instead
        return
    op.execute(
        f"CREATE INDEX {TRIGRAM_INDEX} ON decisions "
        "USING gin ((details ->> 'extracted') gin_trgm_ops)"
    )


def _latency_bucket(duration_ms: float) -> int:
    return math.floor(
        math.log(max(duration_ms, LATENCY_FLOOR_MS)) / math.log(2) * BUCKETS_PER_DOUBLING
    )


def _build_rollups() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bucket = (
            f"floor(ln(greatest(duration_ms, {LATENCY_FLOOR_MS!r})) / ln(2) "
            f"* {BUCKETS_PER_DOUBLING})::bigint::text"
        )
        each, value = "jsonb_each_text(d.components) AS c", "(c.value)::float"
    else:
        # SQLite may be built without math functions: the bucket is computed by Python.
        driver = bind.connection.driver_connection
        driver.create_function("rlvr_latency_bucket", 1, _latency_bucket, deterministic=True)
        bucket = "CAST(rlvr_latency_bucket(duration_ms) AS TEXT)"
        each, value = "json_each(d.components) AS c", "CAST(c.value AS REAL)"
    step = f"coalesce(step, {NO_STEP})"
    of_runs = "FROM decisions WHERE run_id IS NOT NULL"
    series = "INSERT INTO run_series_rollups (tenant_id, run_id, step, kind, key, n, total, "
    series += "squares, low, high) "
    statements = [
        "INSERT INTO run_rollups (tenant_id, run_id, decisions, scored, reward_sum, first_step, "
        "last_step, first_seen, last_seen) SELECT tenant_id, run_id, count(*), count(reward), "
        "coalesce(sum(reward), 0), min(step), max(step), min(created_at), max(created_at) "
        f"{of_runs} GROUP BY tenant_id, run_id",
        "INSERT INTO run_step_rollups (tenant_id, run_id, step, version_hash, verifier_name, "
        "verifier_version, decisions, scored, reward_sum, reward_squares, cached, flagged, "
        "duration_sum, chars_sum, chars_max, first_seen, last_seen) "
        f"SELECT tenant_id, run_id, {step}, version_hash, min(verifier_name), "
        "min(verifier_version), count(*), count(reward), coalesce(sum(reward), 0), "
        "coalesce(sum(reward * reward), 0), sum(CASE WHEN cached THEN 1 ELSE 0 END), "
        "sum(CASE WHEN flagged THEN 1 ELSE 0 END), sum(duration_ms), sum(completion_chars), "
        "max(completion_chars), min(created_at), max(created_at) "
        f"{of_runs} GROUP BY tenant_id, run_id, {step}, version_hash",
        f"{series}SELECT tenant_id, run_id, {step}, 'status', status, count(*), 0, 0, NULL, NULL "
        f"{of_runs} GROUP BY tenant_id, run_id, {step}, status",
        f"{series}SELECT tenant_id, run_id, {step}, 'group', group_id, count(*), "
        "sum(CASE WHEN status = 'correct' THEN 1 ELSE 0 END), 0, min(reward), max(reward) "
        f"{of_runs} AND group_id IS NOT NULL AND reward IS NOT NULL "
        f"GROUP BY tenant_id, run_id, {step}, group_id",
        f"{series}SELECT tenant_id, run_id, {step}, 'latency', {bucket}, count(*), "
        "sum(duration_ms), sum(duration_ms * duration_ms), min(duration_ms), max(duration_ms) "
        f"{of_runs} GROUP BY tenant_id, run_id, {step}, {bucket}",
        f"{series}SELECT d.tenant_id, d.run_id, coalesce(d.step, {NO_STEP}), 'component', "
        f"substr(c.key, 1, 256), count(*), sum({value}), sum({value} * {value}), "
        f"min({value}), max({value}) FROM decisions AS d, {each} WHERE d.run_id IS NOT NULL "
        f"GROUP BY d.tenant_id, d.run_id, coalesce(d.step, {NO_STEP}), substr(c.key, 1, 256)",
    ]
    for statement in statements:
        op.execute(sa.text(statement))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {TRIGRAM_INDEX}")
    op.drop_table("run_series_rollups")
    op.drop_table("run_step_rollups")
    with op.batch_alter_table("run_rollups", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_rollups_tenant_id_last_seen"))
    op.drop_table("run_rollups")
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decisions_tenant_id_verifier_name_completion_hash"))
        batch_op.drop_index("ix_decisions_flagged_tenant_id_created_at")
        batch_op.drop_index(batch_op.f("ix_decisions_tenant_id_run_id_created_at"))
