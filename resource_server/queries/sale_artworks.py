"""Sale artwork (lot) queries; the lots of unpublished sales exist only for Admin callers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, Select, exists
from sqlalchemy.orm import Session

from common.models import Artwork, Sale, SaleArtwork
from common.visibility import visible_artwork_ids
from resource_server.queries.listing import Listing
from resource_server.queries.lookup import find
from resource_server.queries.rows import select_rows


def filtered(filters: dict[str, Any], *, admin: bool) -> Select[Any]:
    """Return the select of sale artworks matching the filters (``published``: the artwork's).

    The lot of a hidden artwork is not shown (not listed, not read by id), to any caller.
    """
    stmt = select_rows(SaleArtwork).where(SaleArtwork.artwork_id.in_(visible_artwork_ids()))
    if "sale_id" in filters:
        stmt = stmt.where(SaleArtwork.sale_id == filters["sale_id"])
    if "artwork_id" in filters:
        stmt = stmt.where(SaleArtwork.artwork_id == filters["artwork_id"])
    if not admin:
        stmt = stmt.where(exists().where(Sale.id == SaleArtwork.sale_id, Sale.published.is_(True)))
    if "published" in filters:
        stmt = stmt.where(
            exists().where(
                Artwork.id == SaleArtwork.artwork_id, Artwork.published == filters["published"]
            )
        )
    return stmt


SALE_ARTWORKS = Listing(SaleArtwork, filtered)


def find_sale_artwork(session: Session, lot_id: str, *, admin: bool) -> Row[Any] | None:
    """Return a sale artwork by id (in a published sale unless Admin)."""
    row: Row[Any] | None = find(session, SaleArtwork, lot_id, base=_ANY[admin])[0]
    return row


# The lots of any sale (Admins), of published sales (everyone else): lookup bases, built once.
_ANY = {admin: filtered({}, admin=admin) for admin in (True, False)}
