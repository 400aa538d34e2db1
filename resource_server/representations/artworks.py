"""The artwork representation, with its editions embedded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from common.hal import Urls, image_links
from resource_server.representations.editions import dimensions, edition
from resource_server.representations.values import ts


def artwork(a: Any, editions: Sequence[Any], urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artwork (a row of the artworks' columns) with its embedded editions."""
    root, i = urls.root, a.id
    links = image_links(a.image_url, a.image_versions or [], ("medium",))
    if a.partner_id:
        links["partner"] = {"href": f"{root}/partners/{a.partner_id}"}
    links["self"] = {"href": f"{root}/artworks/{i}"}
    # Our own artwork page unless WEB_URL names another website.
    links["permalink"] = {"href": f"{web_url or urls.base}/artwork/{a.slug}"}
    links["genes"] = {"href": f"{root}/genes?artwork_id={i}"}
    links["artists"] = {"href": f"{root}/artists?artwork_id={i}"}
    links["similar_artworks"] = {"href": f"{root}/artworks?similar_to_artwork_id={i}"}
    links["sale_artworks"] = {"href": f"{root}/sale_artworks?artwork_id={i}"}
    # Users with the artwork in a public collection (a user-token route).
    links["collection_users"] = {"href": f"{root}/users?collected_artwork_id={i}"}
    return {
        "id": i,
        "slug": a.slug,
        "created_at": ts(a.created_at),
        "updated_at": ts(a.updated_at),
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
