"""The gene representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links, link
from resource_server.representations.values import stamp


def gene(g: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render a gene with every documented field and link."""
    links = image_links(g.image_url, g.image_versions or [])
    links["self"] = {"href": f"{urls.root}/genes/{g.id}"}
    # Our own gene page unless WEB_URL names another website.
    links["permalink"] = link(f"{web_url or urls.base}/gene/{g.slug}")
    links.update(
        artworks={"href": f"{urls.root}/artworks?gene_id={g.id}"},
        published_artworks={"href": f"{urls.root}/artworks?gene_id={g.id}&published=true"},
        artists={"href": f"{urls.root}/artists?gene_id={g.id}"},
    )
    return {
        "id": g.id,
        "created_at": stamp(g.created_at),
        "updated_at": stamp(g.updated_at),
        "name": g.name,
        "display_name": g.display_name,
        "description": g.description,
        "image_versions": list(g.image_versions or []),
        "_links": links,
    }
