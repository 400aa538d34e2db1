"""The artwork representation, with its editions embedded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from common.hal import Urls, image_links
from common.models import Artwork
from resource_server.representations.editions import dimensions, edition
from resource_server.representations.values import by_position, stamp

# The artwork columns copied as they are, in the document's order (read by position).
_HEAD = ("id", "slug", "created_at", "updated_at", "image_url", "image_versions", "partner_id")
_FIRST = ("title", "category", "medium", "date")
_THEN = (
    "published",
    "website",
    "signature",
    "series",
    "provenance",
    "literature",
    "exhibition_history",
    "collecting_institution",
    "additional_information",
    "image_rights",
    "blurb",
    "unique",
    "cultural_maker",
    "iconicity",
    "can_inquire",
    "can_acquire",
    "can_share",
    "sale_message",
    "sold",
)
_head, _first, _then = (by_position(Artwork, *n) for n in (_HEAD, _FIRST, _THEN))
_dimensions = by_position(Artwork, "dimensions")  # one name: the value itself


def artwork(a: Any, editions: Sequence[Any], urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artwork (a row of the artworks' columns, ``select_rows(Artwork)`` first) with
    its embedded editions."""
    root = urls.root
    i, slug, created, updated, image_url, versions, partner_id = _head(a)
    links = image_links(image_url, versions or [], ("medium",))
    if partner_id:
        links["partner"] = {"href": f"{root}/partners/{partner_id}"}
    links["self"] = {"href": f"{root}/artworks/{i}"}
    # Our own artwork page unless WEB_URL names another website.
    links["permalink"] = {"href": f"{web_url or urls.base}/artwork/{slug}"}
    links["genes"] = {"href": f"{root}/genes?artwork_id={i}"}
    links["artists"] = {"href": f"{root}/artists?artwork_id={i}"}
    links["similar_artworks"] = {"href": f"{root}/artworks?similar_to_artwork_id={i}"}
    links["sale_artworks"] = {"href": f"{root}/sale_artworks?artwork_id={i}"}
    # Users with the artwork in a public collection (a user-token route).
    links["collection_users"] = {"href": f"{root}/users?collected_artwork_id={i}"}
    doc = {"id": i, "slug": slug, "created_at": stamp(created), "updated_at": stamp(updated)}
    doc.update(zip(_FIRST, _first(a), strict=True))
    doc["dimensions"] = dimensions(_dimensions(a))
    doc.update(zip(_THEN, _then(a), strict=True))
    doc["image_versions"] = list(versions or [])
    doc["_links"] = links
    doc["_embedded"] = {"editions": [edition(e, urls) for e in editions]}
    return doc
