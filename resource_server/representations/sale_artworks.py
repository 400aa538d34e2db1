"""The sale artwork (lot) representation."""

from __future__ import annotations

from typing import Any

from common.hal import Link, Urls
from resource_server.representations.values import stamp


def sale_artwork(lot: Any, urls: Urls) -> dict[str, Any]:
    """Render a sale artwork (a lot) with its estimates in cents and links to sale and artwork."""
    links: dict[str, Link] = {
        "self": {"href": f"{urls.root}/sale_artworks/{lot.id}"},
        "sale": {"href": f"{urls.root}/sales/{lot.sale_id}"},
        "artwork": {"href": f"{urls.root}/artworks/{lot.artwork_id}"},
    }
    return {
        "id": lot.id,
        "created_at": stamp(lot.created_at),
        "updated_at": stamp(lot.updated_at),
        "position": lot.position,
        "lot_number": lot.lot_number,
        "currency": lot.currency,
        "opening_bid_cents": lot.opening_bid_cents,
        "low_estimate_cents": lot.low_estimate_cents,
        "high_estimate_cents": lot.high_estimate_cents,
        "highest_bid_amount_cents": lot.highest_bid_amount_cents,
        "bidder_positions_count": lot.bidder_positions_count,
        "_links": links,
    }
