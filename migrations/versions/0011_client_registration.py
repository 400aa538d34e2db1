"""dynamic client registration, and the post-logout redirect URIs of applications

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26

Initial access tokens (issued by the operator) and the registrations of clients that
registered themselves (RFC 7591 and RFC 7592), both known by digests only; applications gain
the URIs an RP-initiated logout may send the user back to. Additive only.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlalchemy.dialects import postgresql

import common.models.base

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "initial_access_tokens",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("uses_left", sa.Integer(), nullable=False),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("expires_at", common.models.base.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_initial_access_tokens")),
        sa.UniqueConstraint("digest", name=op.f("uq_initial_access_tokens_digest")),
    )
    op.create_table(
        "client_registrations",
        sa.Column("application_id", sa.String(length=24), nullable=False),
        sa.Column("access_token_digest", sa.String(length=64), nullable=False),
        sa.Column("client_metadata", JSON, nullable=False),
        sa.Column("initial_token_id", sa.String(length=24), nullable=True),
        sa.Column("created_at", common.models.base.UTCDateTime(), nullable=False),
        sa.Column("updated_at", common.models.base.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["applications.id"],
            name=op.f("fk_client_registrations_application_id_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["initial_token_id"],
            ["initial_access_tokens.id"],
            name=op.f("fk_client_registrations_initial_token_id_initial_access_tokens"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("application_id", name=op.f("pk_client_registrations")),
        sa.UniqueConstraint(
            "access_token_digest", name=op.f("uq_client_registrations_access_token_digest")
        ),
    )
    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("post_logout_redirect_uris", JSON, nullable=True))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("applications", schema=None) as batch_op:
        batch_op.drop_column("post_logout_redirect_uris")
    op.drop_table("client_registrations")
    op.drop_table("initial_access_tokens")
