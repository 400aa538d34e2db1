"""The artist representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links, link
from common.ids import format_ts
from common.models import Artist


def artist(a: Artist, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render an artist with every documented field and link."""
    links = image_links(a.image_url, a.image_versions, ("four_thirds", "square"))
    links["self"] = link(urls.api(f"/artists/{a.id}"))
    # Our own artist page unless WEB_URL names another website.
    links["permalink"] = link(f"{web_url or urls.base}/artist/{a.slug}")
    links.update(
        artworks=link(urls.api("/artworks", {"artist_id": a.id})),
        published_artworks=link(urls.api("/artworks", {"artist_id": a.id, "published": True})),
        similar_artists=link(urls.api("/artists", {"similar_to_artist_id": a.id})),
        similar_contemporary_artists=link(
            urls.api("/artists", {"similar_to_artist_id": a.id, "similarity_type": "contemporary"})
        ),
        genes=link(urls.api("/genes", {"artist_id": a.id})),
    )
    return {
        "id": a.id,
        "slug": a.slug,
        "created_at": format_ts(a.created_at),
        "updated_at": format_ts(a.updated_at),
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
