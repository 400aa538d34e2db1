"""The gene representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, link
from resource_server.representations.values import fields, image_and_self, imaged


def gene(g: Any, urls: Urls, web_url: str = "") -> dict[str, Any]:
    """Render a gene with every documented field and link."""
    links = image_and_self(g, urls, "/genes")
    # Our own gene page unless WEB_URL names another website.
    links["permalink"] = link(f"{web_url or urls.base}/gene/{g.slug}")
    links.update(
        artworks={"href": f"{urls.root}/artworks?gene_id={g.id}"},
        published_artworks={"href": f"{urls.root}/artworks?gene_id={g.id}&published=true"},
        artists={"href": f"{urls.root}/artists?gene_id={g.id}"},
    )
    return imaged(g, links, fields(g, ("name", "display_name", "description")))
