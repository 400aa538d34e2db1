"""The artist representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links
from resource_server.representations.values import ts


def artist(a: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artist (a row of the artists' columns) with every documented field and link."""
    root, i = urls.root, a.id
    links = image_links(a.image_url, a.image_versions, ("four_thirds", "square"))
    links["self"] = {"href": f"{root}/artists/{i}"}
    # Our own artist page unless WEB_URL names another website.
    links["permalink"] = {"href": f"{web_url or urls.base}/artist/{a.slug}"}
    links["artworks"] = {"href": f"{root}/artworks?artist_id={i}"}
    links["published_artworks"] = {"href": f"{root}/artworks?artist_id={i}&published=true"}
    links["similar_artists"] = {"href": f"{root}/artists?similar_to_artist_id={i}"}
    links["similar_contemporary_artists"] = {
        "href": f"{root}/artists?similar_to_artist_id={i}&similarity_type=contemporary"
    }
    links["genes"] = {"href": f"{root}/genes?artist_id={i}"}
    return {
        "id": i,
        "slug": a.slug,
        "created_at": ts(a.created_at),
        "updated_at": ts(a.updated_at),
        "name": a.name,
        "sortable_name": a.sortable_name,
        "gender": a.gender,
        "biography": a.biography,
        "birthday": a.birthday,
        "deathday": a.deathday,
        "hometown": a.hometown,
        "location": a.location,
        "nationality": a.nationality,
        "target_supply": a.target_supply,
        "image_versions": list(a.image_versions or []),
        "_links": links,
    }
