"""signing keys, and the OpenID Connect fields of applications and codes

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

ID tokens are signed with keys kept in the database (private halves encrypted with the
instance's secret); codes remember the nonce and sign-in time the ID token repeats.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlalchemy.dialects import postgresql

import common.models.base

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "signing_keys",
        sa.Column("kid", sa.String(length=64), nullable=False),
        sa.Column("alg", sa.String(length=10), nullable=False),
        sa.Column(
            "public_jwk",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("private_encrypted", sa.Text(), nullable=False),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("activates_at", common.models.base.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("kid", name=op.f("pk_signing_keys")),
    )
    with op.batch_alter_table("signing_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_signing_keys_activates_at"), ["activates_at"], unique=False
        )

    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("id_token_signed_response_alg", sa.String(length=10), nullable=True)
        )

    with op.batch_alter_table("authorization_codes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("nonce", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("auth_time", common.models.base.UTCDateTime(), nullable=True))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("authorization_codes", schema=None) as batch_op:
        batch_op.drop_column("auth_time")
        batch_op.drop_column("nonce")

    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.drop_column("id_token_signed_response_alg")

    with op.batch_alter_table("signing_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signing_keys_activates_at"))

    op.drop_table("signing_keys")
