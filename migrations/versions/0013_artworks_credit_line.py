"""artworks: a credit_line column beside provenance

Revision ID: 0013
Revises: 0008
Create Date: 2026-11-26

Museums print two texts about where a work comes from: its credit line (how it came to the
collection: "Presented by ... 1922") and its provenance (the owners before). Both were held in
``provenance``; the credit line now has its own column. Additive: rows written by older code get
an empty credit line until the next import of their museum fills it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("credit_line", sa.Text(), server_default="", nullable=False))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.drop_column("credit_line")
