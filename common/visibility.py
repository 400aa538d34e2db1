"""Which artworks the API shows: one rule for every query, the catalog's and the search index's."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, select

from common.models import Artwork


def visible_artwork() -> ColumnElement[bool]:
    """Return the one rule for which artworks the API shows: the published ones, to every caller.

    The reference API exposed "a subset of artworks"; an unpublished one is not in any list,
    cannot be read by id, added to a collection or found by search (each query uses this).
    """
    return Artwork.published.is_(True)


def visible_artwork_ids() -> Select[Any]:
    """Return the ids of the visible artworks (for rows that hang off an artwork)."""
    return select(Artwork.id).where(visible_artwork())
