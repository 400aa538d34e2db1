"""Which artworks the API shows: one rule for every query, the catalog's and the search index's."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, or_, select

from common.models import Artwork


def visible_artwork(artwork: Any = Artwork) -> ColumnElement[bool]:
    """Return the one rule for which artworks the API shows: the published ones, to every caller.

    The reference API exposed "a subset of artworks"; an unpublished one is not in any list,
    cannot be read by id, added to a collection or found by search, and every entry that takes
    an artwork id answers for it as for a missing one (each query uses this). ``artwork`` is
    the artworks' table or an alias of it.
    """
    return artwork.published.is_(True)


def visible_artwork_ids() -> Select[Any]:
    """Return the ids of the visible artworks (for rows that hang off an artwork)."""
    return select(Artwork.id).where(visible_artwork())


def shown_with(artwork_id: Any) -> ColumnElement[bool]:
    """Return the rule for a row that may hang off an artwork (an image: a show's or an
    artwork's): shown when it has no artwork, or a visible one."""
    return or_(artwork_id.is_(None), artwork_id.in_(visible_artwork_ids()))
