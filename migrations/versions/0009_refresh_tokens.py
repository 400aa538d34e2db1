"""refresh tokens: their families, the tokens, and the applications registered for them

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

Additive: two new tables, and an applications column that defaults to false (the code before
this one neither reads nor writes any of them).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import common.models.base

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "refresh_families",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("application_id", sa.String(length=24), nullable=False),
        sa.Column("user_id", sa.String(length=24), nullable=False),
        sa.Column("scope", sa.String(length=200), nullable=False),
        sa.Column("auth_time", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("used_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("revoked_at", common.models.base.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name=op.f("fk_refresh_families_application_id_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_refresh_families_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_refresh_families")),
    )
    with op.batch_alter_table("refresh_families", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_refresh_families_application_id"), ["application_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_refresh_families_user_id"), ["user_id"], unique=False)

    op.create_table(
        "refresh_tokens",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("family_id", sa.String(length=24), nullable=False),
        sa.Column("application_id", sa.String(length=24), nullable=False),
        sa.Column("access_token_id", sa.String(length=24), nullable=True),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("expires_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("rotated_at", common.models.base.UTCDateTime(), nullable=True),
        sa.Column("revoked_at", common.models.base.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["access_token_id"],
            ["tokens.id"],
            name=op.f("fk_refresh_tokens_access_token_id_tokens"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name=op.f("fk_refresh_tokens_application_id_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["family_id"],
            ["refresh_families.id"],
            name=op.f("fk_refresh_tokens_family_id_refresh_families"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_refresh_tokens")),
        sa.UniqueConstraint("digest", name=op.f("uq_refresh_tokens_digest")),
    )
    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_refresh_tokens_access_token_id"), ["access_token_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_refresh_tokens_family_id"), ["family_id"], unique=False
        )

    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("refresh_tokens", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.drop_column("refresh_tokens")

    with op.batch_alter_table("refresh_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_refresh_tokens_family_id"))
        batch_op.drop_index(batch_op.f("ix_refresh_tokens_access_token_id"))

    op.drop_table("refresh_tokens")
    with op.batch_alter_table("refresh_families", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_refresh_families_user_id"))
        batch_op.drop_index(batch_op.f("ix_refresh_families_application_id"))

    op.drop_table("refresh_families")
