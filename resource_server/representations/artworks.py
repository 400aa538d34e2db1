"""The artwork representation, with its editions embedded."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links, link
from common.ids import format_ts
from common.models import Artwork, Edition
from resource_server.representations.editions import dimensions, edition


def artwork(a: Artwork, editions: list[Edition], urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artwork with every documented field and link, and its embedded editions."""
    links = image_links(a.image_url, a.image_versions or [], ("medium",))
    if a.partner_id:
        links["partner"] = link(urls.api(f"/partners/{a.partner_id}"))
    links["self"] = link(urls.api(f"/artworks/{a.id}"))
    # Our own artwork page unless WEB_URL names another website.
    links["permalink"] = link(f"{web_url or urls.base}/artwork/{a.slug}")
    links.update(
        genes=link(urls.api("/genes", {"artwork_id": a.id})),
        artists=link(urls.api("/artists", {"artwork_id": a.id})),
        similar_artworks=link(urls.api("/artworks", {"similar_to_artwork_id": a.id})),
        sale_artworks=link(urls.api("/sale_artworks", {"artwork_id": a.id})),
        # Users with the artwork in a public collection (a user-token route).
        collection_users=link(urls.api("/users", {"collected_artwork_id": a.id})),
    )
    return {
        "id": a.id,
        "slug": a.slug,
        "created_at": format_ts(a.created_at),
        "updated_at": format_ts(a.updated_at),
        "title": a.title,
        "category": a.category,
        "medium": a.medium,
        "date": a.date,
        "dimensions": dimensions(a.dimensions),
        "published": a.published,
        "website": a.website,
        "signature": a.signature,
        "series": a.series,
        "provenance": a.provenance,
        "literature": a.literature,
        "exhibition_history": a.exhibition_history,
        "collecting_institution": a.collecting_institution,
        "additional_information": a.additional_information,
        "image_rights": a.image_rights,
        "blurb": a.blurb,
        "unique": a.unique,
        "cultural_maker": a.cultural_maker,
        "iconicity": a.iconicity,
        "can_inquire": a.can_inquire,
        "can_acquire": a.can_acquire,
        "can_share": a.can_share,
        "sale_message": a.sale_message,
        "sold": a.sold,
        "image_versions": list(a.image_versions or []),
        "_links": links,
        "_embedded": {"editions": [edition(e, urls) for e in editions]},
    }
