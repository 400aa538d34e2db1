"""artworks: a credit_line column beside provenance; demo_loads

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26

Museums print two texts about where a work comes from: its credit line (how it came to the
collection: "Presented by ... 1922") and its provenance (the owners before). Both were held in
``provenance``; the credit line now has its own column. Additive: rows written by older code get
an empty credit line until the next import of their museum fills it.

``demo_loads`` records the seed and size of each demo catalog loaded, so that ``artcat demo
remove`` can find every row it wrote (its ids derive from them), and when it was removed.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("credit_line", sa.Text(), server_default="", nullable=False))
    op.create_table(
        "demo_loads",
        sa.Column("seed", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("artworks", sa.Integer(), nullable=False),
        sa.Column("loaded_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("removed_at", common.models.base.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("seed", name=op.f("pk_demo_loads")),
    )


def downgrade() -> None:
    """Revert this migration."""
    op.drop_table("demo_loads")
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.drop_column("credit_line")
