"""The artwork representation, with its editions embedded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from common.hal import Urls, image_links
from common.models import Artwork
from resource_server.representations.editions import dimensions, edition
from resource_server.representations.values import by_position, stamp

# Every column a document shows, in one read of the row (by position): the document is then
# one dict literal, a third cheaper than filling it field group by field group.
_columns = by_position(
    Artwork,
    *("id", "slug", "created_at", "updated_at", "image_url", "image_versions", "partner_id"),
    *("title", "category", "medium", "date", "dimensions", "published", "website", "signature"),
    *("series", "provenance", "literature", "exhibition_history", "collecting_institution"),
    *("additional_information", "image_rights", "blurb", "unique", "cultural_maker"),
    *("iconicity", "can_inquire", "can_acquire", "can_share", "sale_message", "sold"),
    "credit_line",
)


def artwork(a: Any, editions: Sequence[Any], urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artwork (a row of the artworks' columns, ``select_rows(Artwork)`` first) with
    its embedded editions."""
    root = urls.root
    (
        i,
        slug,
        created,
        updated,
        image_url,
        versions,
        partner_id,
        title,
        category,
        medium,
        date,
        dims,
        published,
        website,
        signature,
        series,
        provenance,
        literature,
        exhibition_history,
        collecting_institution,
        additional_information,
        image_rights,
        blurb,
        unique,
        cultural_maker,
        iconicity,
        can_inquire,
        can_acquire,
        can_share,
        sale_message,
        sold,
        credit_line,
    ) = _columns(a)
    links = image_links(image_url, versions or [], ("medium",), urls.base)
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
    return {
        "id": i,
        "slug": slug,
        "created_at": stamp(created),
        "updated_at": stamp(updated),
        "title": title,
        "category": category,
        "medium": medium,
        "date": date,
        "dimensions": dimensions(dims),
        "published": published,
        "website": website,
        "signature": signature,
        "series": series,
        "provenance": provenance,
        "literature": literature,
        "exhibition_history": exhibition_history,
        "collecting_institution": collecting_institution,
        "additional_information": additional_information,
        "image_rights": image_rights,
        "blurb": blurb,
        "unique": unique,
        "cultural_maker": cultural_maker,
        "iconicity": iconicity,
        "can_inquire": can_inquire,
        "can_acquire": can_acquire,
        "can_share": can_share,
        "sale_message": sale_message,
        "sold": sold,
        "credit_line": credit_line,  # not in the reference API: the museum's credit line
        "image_versions": list(versions or []),
        "_links": links,
        "_embedded": {"editions": [edition(e, urls) for e in editions]},
    }
