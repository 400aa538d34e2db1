"""The artist representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links
from common.models import ARTIST_DESCRIPTION, Artist
from resource_server.representations.values import by_position, stamp

# The artist columns, in the document's order (read by position: ``by_position``).
_HEAD = ("id", "slug", "created_at", "updated_at", "image_url", "image_versions")
_PLAIN = (*ARTIST_DESCRIPTION, "target_supply")
_head, _plain = by_position(Artist, *_HEAD), by_position(Artist, *_PLAIN)


def artist(a: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artist (a row of the artists' columns) with every documented field and link."""
    root = urls.root
    i, slug, created, updated, image_url, versions = _head(a)
    links = image_links(image_url, versions, ("four_thirds", "square"), urls.base)
    links["self"] = {"href": f"{root}/artists/{i}"}
    # Our own artist page unless WEB_URL names another website.
    links["permalink"] = {"href": f"{web_url or urls.base}/artist/{slug}"}
    links["artworks"] = {"href": f"{root}/artworks?artist_id={i}"}
    links["published_artworks"] = {"href": f"{root}/artworks?artist_id={i}&published=true"}
    links["similar_artists"] = {"href": f"{root}/artists?similar_to_artist_id={i}"}
    links["similar_contemporary_artists"] = {
        "href": f"{root}/artists?similar_to_artist_id={i}&similarity_type=contemporary"
    }
    links["genes"] = {"href": f"{root}/genes?artist_id={i}"}
    doc = {"id": i, "slug": slug, "created_at": stamp(created), "updated_at": stamp(updated)}
    doc.update(zip(_PLAIN, _plain(a), strict=True))
    doc["image_versions"] = list(versions or [])
    doc["_links"] = links
    return doc
