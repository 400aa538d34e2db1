"""artworks: an index on (published, id) in place of the one on published

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

Every artwork list filters on published and orders by id; with an index on published alone,
SQLite read every published artwork and sorted them to return one page.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_artworks_published_id"), ["published", "id"], unique=False
        )
        batch_op.drop_index(batch_op.f("ix_artworks_published"))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("artworks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_artworks_published"), ["published"], unique=False)
        batch_op.drop_index(batch_op.f("ix_artworks_published_id"))
