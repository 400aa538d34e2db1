"""artist sources: one person, every source identifier; search name keys

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base
from sqlalchemy.dialects import postgresql


revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table('artist_sources',
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('source_id', sa.String(length=200), nullable=False),
    sa.Column('artist_id', sa.String(length=24), nullable=False),
    sa.Column('fields', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.ForeignKeyConstraint(['artist_id'], ['artists.id'], name=op.f('fk_artist_sources_artist_id_artists'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('source', 'source_id', name=op.f('pk_artist_sources'))
    )
    with op.batch_alter_table('artist_sources', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_artist_sources_artist_id'), ['artist_id'], unique=False)

    op.create_table('search_names',
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('resource_id', sa.String(length=24), nullable=False),
    sa.PrimaryKeyConstraint('key', 'resource_id', name=op.f('pk_search_names'))
    )



def downgrade() -> None:
    """Revert this migration."""
    op.drop_table('search_names')
    with op.batch_alter_table('artist_sources', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_artist_sources_artist_id'))

    op.drop_table('artist_sources')
