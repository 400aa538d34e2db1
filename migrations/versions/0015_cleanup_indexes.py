"""indexes for the storage cleanup: revoked tokens, codes, refresh tokens and families, device
grants and initial access tokens by their expiry (or last use)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26

The background cleanup deletes tokens revoked (``expired_at``) and codes expired before a
cutoff, a batch at a time; without these indexes each batch would scan the whole table. On
PostgreSQL they are built CONCURRENTLY: the tables stay writable while the indexes build.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = (
    ("ix_tokens_expired_at", "tokens", "expired_at"),
    ("ix_authorization_codes_expires_at", "authorization_codes", "expires_at"),
    ("ix_refresh_tokens_expires_at", "refresh_tokens", "expires_at"),
    ("ix_refresh_families_used_at", "refresh_families", "used_at"),
    ("ix_device_authorizations_expires_at", "device_authorizations", "expires_at"),
    ("ix_initial_access_tokens_expires_at", "initial_access_tokens", "expires_at"),
)


def upgrade() -> None:
    """Apply this migration."""
    with op.get_context().autocommit_block():
        for name, table, column in INDEXES:
            op.create_index(
                name,
                table,
                [column],
                unique=False,
                postgresql_concurrently=True,
                if_not_exists=True,
            )


def downgrade() -> None:
    """Revert this migration."""
    with op.get_context().autocommit_block():
        for name, table, _column in INDEXES:
            op.drop_index(name, table_name=table, postgresql_concurrently=True, if_exists=True)
