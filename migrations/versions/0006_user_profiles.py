"""every user has a profile: backfill one for each user who has none

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from common.ids import new_id, utcnow

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000
# The handle comes from the user's id (as common.models.catalog.user_profile makes it).
PREFIX = "user-"

users = sa.table("users", sa.column("id", sa.String))
profiles = sa.table(
    "profiles",
    sa.column("id", sa.String),
    sa.column("handle", sa.String),
    sa.column("location", sa.String),
    sa.column("description", sa.Text),
    sa.column("owner_type", sa.String),
    sa.column("owner_id", sa.String),
    sa.column("image_versions", sa.JSON),
    sa.column("created_at", sa.DateTime),
    sa.column("updated_at", sa.DateTime),
)


def upgrade() -> None:
    """Give every user without a profile a bare one, in batches."""
    bind = op.get_bind()
    has_one = sa.select(profiles.c.owner_id).where(profiles.c.owner_type == "user")
    missing = sa.select(users.c.id).where(users.c.id.not_in(has_one)).order_by(users.c.id)
    after = ""
    while True:
        ids = list(bind.scalars(missing.where(users.c.id > after).limit(BATCH)))
        if not ids:
            return
        now = utcnow().replace(tzinfo=None)
        bind.execute(
            profiles.insert(),
            [
                {
                    "id": new_id(),
                    "handle": f"{PREFIX}{user_id}",
                    "location": "",
                    "description": "",
                    "owner_type": "user",
                    "owner_id": user_id,
                    "image_versions": [],
                    "created_at": now,
                    "updated_at": now,
                }
                for user_id in ids
            ],
        )
        after = ids[-1]


def downgrade() -> None:
    """Keep the profiles: they are rows like any other, and users may have edited theirs."""
