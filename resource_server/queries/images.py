"""Image queries: a show's installation shots, and any image by id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.orm import Session

from common.api.keyset import PageResult, sample_one
from common.api.paging import PageParams
from common.models import Image
from resource_server.queries.lookup import find
from resource_server.queries.paging import page_by_id
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any]) -> Select[Any]:
    """Return the select of the images of the show named by the filters."""
    return select_rows(Image).where(Image.show_id == filters["show_id"])


def list_images(session: Session, filters: dict[str, Any], page: PageParams) -> PageResult:
    """Return one page of a show's images, ordered by id."""
    return page_by_id(session, filtered(filters), Image.id, page)


def sample_image(session: Session, filters: dict[str, Any]) -> Row[Any] | None:
    """Return a random image of the show."""
    result: Row[Any] | None = sample_one(session, filtered(filters), Image.id)
    return result


def find_image(session: Session, image_id: str) -> Row[Any] | None:
    """Return an image by id."""
    row: Row[Any] | None = find(session, Image, image_id)[0]
    return row
