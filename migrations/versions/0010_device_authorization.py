"""device authorizations (RFC 8628)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26

A new table only (additive): the device codes and user codes of the device flow, as digests.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base


revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "device_authorizations",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("device_code_digest", sa.String(length=64), nullable=False),
        sa.Column("user_code_digest", sa.String(length=64), nullable=False),
        sa.Column("application_id", sa.String(length=24), nullable=False),
        sa.Column("scope", sa.String(length=200), nullable=False),
        sa.Column("user_id", sa.String(length=24), nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("expires_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("last_polled_at", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("interval", sa.Integer(), nullable=False),
        sa.Column("decided_at", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("auth_time", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("used_at", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("token_id", sa.String(length=24), nullable=True),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name=op.f("fk_device_authorizations_application_id_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["tokens.id"],
            name=op.f("fk_device_authorizations_token_id_tokens"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_device_authorizations_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_device_authorizations")),
        sa.UniqueConstraint(
            "device_code_digest", name=op.f("uq_device_authorizations_device_code_digest")
        ),
    )
    with op.batch_alter_table("device_authorizations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_device_authorizations_application_id"), ["application_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_device_authorizations_token_id"), ["token_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_device_authorizations_user_code_digest_status"),
            ["user_code_digest", "status"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_device_authorizations_user_id"), ["user_id"], unique=False
        )


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("device_authorizations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_device_authorizations_user_id"))
        batch_op.drop_index(batch_op.f("ix_device_authorizations_user_code_digest_status"))
        batch_op.drop_index(batch_op.f("ix_device_authorizations_token_id"))
        batch_op.drop_index(batch_op.f("ix_device_authorizations_application_id"))

    op.drop_table("device_authorizations")
