"""The partner representation."""

from __future__ import annotations

from typing import Any

from common.hal import Link, Urls, link
from resource_server.representations.values import stamp


def partner(p: Any, handle: str | None, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render a partner; ``handle`` is its profile's, when it has one."""
    links: dict[str, Link] = {"self": {"href": f"{urls.root}/partners/{p.id}"}}
    if handle:
        links["profile"] = {"href": f"{urls.root}/profiles/{handle}"}
    links.update(
        artworks={"href": f"{urls.root}/artworks?partner_id={p.id}"},
        artists={"href": f"{urls.root}/artists?partner_id={p.id}"},
        published_artworks={"href": f"{urls.root}/artworks?partner_id={p.id}&published=true"},
        shows={"href": f"{urls.root}/shows?partner_id={p.id}"},
    )
    if web_url:
        links["permalink"] = link(
            f"{web_url}/{handle}" if handle else f"{web_url}/partner/{p.slug}"
        )
    else:  # our own partner page (profiles have no page here)
        links["permalink"] = link(f"{urls.base}/partner/{p.slug}")
    if p.website:
        links["website"] = link(p.website)
    return {
        "id": p.id,
        "slug": p.slug,
        "created_at": stamp(p.created_at),
        "updated_at": stamp(p.updated_at),
        "type": p.type,
        "name": p.name,
        "email": p.email,
        "region": p.region,
        "enforce_on_platform_transactions": p.enforce_on_platform_transactions,
        "_links": links,
    }
