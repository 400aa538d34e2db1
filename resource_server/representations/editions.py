"""The edition representation (and the dimensions format it shares with artworks)."""

from __future__ import annotations

from typing import Any

from common.dimensions import unknown
from common.hal import Urls, link
from common.ids import format_ts
from common.models import Edition


def dimensions(value: dict[str, Any] | None) -> dict[str, Any]:
    """Return stored dimensions, or the all-null form when none are stored."""
    return value if value and "in" in value and "cm" in value else unknown()


def edition(e: Edition, urls: Urls) -> dict[str, Any]:
    """Render an edition of an artwork."""
    return {
        "id": e.id,
        "created_at": format_ts(e.created_at),
        "updated_at": format_ts(e.updated_at),
        "dimensions": dimensions(e.dimensions),
        "editions": e.editions,
        "size": e.size,
        "available_editions": e.available_editions,
        "artist_proofs": e.artist_proofs,
        "prototypes": e.prototypes,
        "can_acquire": e.can_acquire,
        "sale_message": e.sale_message,
        "sold": e.sold,
        "_links": {
            "self": link(urls.api(f"/editions/{e.id}", {"artwork_id": e.artwork_id})),
            "artwork": link(urls.api(f"/artworks/{e.artwork_id}")),
        },
    }
