"""The edition representation (and the dimensions format it shares with artworks)."""

from __future__ import annotations

from typing import Any

from common.dimensions import unknown
from common.hal import Urls
from resource_server.representations.values import stamp

# Shared by every document without dimensions: serialised, never changed.
UNKNOWN = unknown()


def dimensions(value: dict[str, Any] | None) -> dict[str, Any]:
    """Return stored dimensions, or the all-null form when none are stored."""
    return value if value and "in" in value and "cm" in value else UNKNOWN


def edition(e: Any, urls: Urls) -> dict[str, Any]:
    """Render an edition of an artwork (a row of the editions' columns)."""
    root = urls.root
    return {
        "id": e.id,
        "created_at": stamp(e.created_at),
        "updated_at": stamp(e.updated_at),
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
            "self": {"href": f"{root}/editions/{e.id}?artwork_id={e.artwork_id}"},
            "artwork": {"href": f"{root}/artworks/{e.artwork_id}"},
        },
    }
