"""Image queries: a show's installation shots, an artwork's additional views, any image by id.

An image of a hidden (unpublished) artwork is shown nowhere: not listed, not read by id.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select

from common.models import Image
from common.visibility import shown_with
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows

# Every image that may be shown: built once (the item lookup's base).
SHOWN = select_rows(Image).where(shown_with(Image.artwork_id))


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of the images of the show or artwork named by the filters."""
    stmt = SHOWN
    if "show_id" in filters:
        stmt = stmt.where(Image.show_id == filters["show_id"])
    if "artwork_id" in filters:
        stmt = stmt.where(Image.artwork_id == filters["artwork_id"])
    return stmt


IMAGES = Listing(Image, filtered, base=SHOWN)
