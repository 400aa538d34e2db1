"""indexes for the pages' orders: name, date and recently added, on artists, artworks, genes,
partners and shows

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26

The list pages for people sort by name (A-Z), by date and by the time a row was added, and
page by keyset on (key, id). Each order has an index on exactly the expression it sorts on
(``lower(name)``, ``coalesce(year, 9999)``...), so a page, however deep, is one index seek on
PostgreSQL and SQLite; the artworks' indexes lead with ``published``, as every public list
filters on it. Only indexes are added: the code before this migration runs unchanged.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (index name, table, its columns and expressions)
INDEXES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("ix_artists_page_name", "artists", ("lower(sortable_name)", "id")),
    ("ix_artists_page_date", "artists", ("coalesce(birth_year, 9999)", "id")),
    ("ix_artists_page_recent", "artists", ("created_at", "id")),
    ("ix_artworks_page_date", "artworks", ("published", "coalesce(year_start, 9999)", "id")),
    ("ix_artworks_page_name", "artworks", ("published", "lower(substr(title, 1, 200))", "id")),
    ("ix_artworks_page_recent", "artworks", ("published", "created_at", "id")),
    # A partner's page (a museum's tens of thousands of works) in its default order, by date.
    (
        "ix_artworks_page_partner_date",
        "artworks",
        ("partner_id", "published", "coalesce(year_start, 9999)", "id"),
    ),
    ("ix_genes_page_name", "genes", ("lower(name)", "id")),
    ("ix_genes_page_recent", "genes", ("created_at", "id")),
    ("ix_partners_page_name", "partners", ("lower(name)", "id")),
    ("ix_partners_page_recent", "partners", ("created_at", "id")),
    ("ix_shows_page_name", "shows", ("lower(name)", "id")),
    ("ix_shows_page_recent", "shows", ("created_at", "id")),
)


def _part(text: str) -> sa.TextClause | str:
    return sa.text(text) if "(" in text else text


def upgrade() -> None:
    """Apply this migration."""
    for name, table, parts in INDEXES:
        op.create_index(name, table, [_part(p) for p in parts], unique=False)


def downgrade() -> None:
    """Revert this migration."""
    for name, table, _parts in reversed(INDEXES):
        op.drop_index(name, table_name=table)
