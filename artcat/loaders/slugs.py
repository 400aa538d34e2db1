"""Unique slugs per table that stay put across re-runs."""

from __future__ import annotations

from sqlalchemy import Connection, Table, select

# Characters of the row id appended to a slug that another row already has.
SUFFIX_LENGTH = 6


class SlugRegistry:
    """Hand out a unique slug per row id for one table, keeping the slug a row already has.

    The existing ``id -> slug`` pairs are read once, so deciding costs no query. A row keeps
    its stored slug (links stay valid); a new row gets its base slug unless another id holds it,
    then the base plus the start of its own id, which depends only on the data and the order it
    arrives in, so the same input always yields the same slugs.
    """

    def __init__(self, conn: Connection, table: Table) -> None:
        self.max_length = getattr(table.c.slug.type, "length", None) or 120
        self.by_id: dict[str, str] = {}
        self.by_slug: dict[str, str] = {}
        for row_id, slug in conn.execute(select(table.c.id, table.c.slug)):
            self.by_id[row_id] = slug
            self.by_slug[slug] = row_id

    def __contains__(self, row_id: object) -> bool:
        return row_id in self.by_id

    def slug_for(self, row_id: str, base: str) -> str:
        """Return the slug of ``row_id``, allocating one from ``base`` the first time."""
        known = self.by_id.get(row_id)
        if known is not None:
            return known
        base = base[: self.max_length].rstrip("-") or "untitled"
        slug = base
        length = SUFFIX_LENGTH
        while self.by_slug.get(slug, row_id) != row_id:
            if length > len(row_id):
                raise ValueError(f"no free slug for {row_id} from {base!r}")
            tail = f"-{row_id[:length]}"
            slug = base[: self.max_length - len(tail)].rstrip("-") + tail
            length += 2  # two ids sharing a prefix: take more of the id
        self.by_id[row_id] = slug
        self.by_slug[slug] = row_id
        return slug
