"""The time a reward request was first accepted, kept with its idempotency claim: its decision
ids begin with it, so a retry finds the ids its first attempt logged.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Requests claimed before this have none: their decision ids are name-based only.
    op.add_column("reward_requests", sa.Column("issued_ms", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("reward_requests", "issued_ms")
