"""applications: the token endpoint authentication method a client registered

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26

A client that registered itself (RFC 7591) named how it authenticates at the token endpoint
(``client_secret_basic`` by default, or ``client_secret_post``); the server now holds it to that
method. Additive and nullable: applications made by ``artcat`` or the developer page, and those
registered before, keep both secret methods.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this migration."""
    op.add_column(
        "applications", sa.Column("token_endpoint_auth_method", sa.String(length=20), nullable=True)
    )


def downgrade() -> None:
    """Revert this migration."""
    op.drop_column("applications", "token_endpoint_auth_method")
