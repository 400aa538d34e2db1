"""Image queries: a show's installation shots, and any image by id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select

from common.models import Image
from resource_server.queries.listing import Listing
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of the images of the show named by the filters."""
    return select_rows(Image).where(Image.show_id == filters["show_id"])


IMAGES = Listing(Image, filtered)
