"""security: session generation, verified emails, first-party and public clients

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base


revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_generation', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('email_verified_at', common.models.base.UTCDateTime(), nullable=True))

    with op.batch_alter_table('applications', schema=None) as batch_op:
        batch_op.add_column(sa.Column('first_party', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column('public_client', sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table('applications', schema=None) as batch_op:
        batch_op.drop_column('public_client')
        batch_op.drop_column('first_party')

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('email_verified_at')
        batch_op.drop_column('session_generation')
