"""image_mirrors: the state of each artwork image copied into the instance's image store

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26

A new table only (additive): code that does not know it keeps working. `artcat images fetch`
fills it; the catalog reads its copies through the artworks' image URLs.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "image_mirrors",
        sa.Column("artwork_id", sa.String(length=24), nullable=False),
        sa.Column("source_url", sa.String(length=500), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=32), nullable=True),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("height", sa.Integer(), nullable=True),
        sa.Column("updated_at", common.models.base.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["artwork_id"],
            ["artworks.id"],
            name=op.f("fk_image_mirrors_artwork_id_artworks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("artwork_id", name=op.f("pk_image_mirrors")),
    )
    with op.batch_alter_table("image_mirrors", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_image_mirrors_status"), ["status"], unique=False)


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("image_mirrors", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_image_mirrors_status"))
    op.drop_table("image_mirrors")
