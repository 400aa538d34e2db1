"""The image representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links
from resource_server.representations.values import stamp


def image(i: Any, urls: Urls) -> dict[str, Any]:
    """Render an image (an installation shot, a cover, an additional view)."""
    links = image_links(i.image_url, i.image_versions or [], ("medium250x165", "medium", "square"))
    links["self"] = {"href": f"{urls.root}/images/{i.id}"}
    return {
        "id": i.id,
        "created_at": stamp(i.created_at),
        "updated_at": stamp(i.updated_at),
        "position": i.position,
        "default": i.default,
        "aspect_ratio": i.aspect_ratio,
        "original_height": i.original_height,
        "original_width": i.original_width,
        "image_versions": list(i.image_versions or []),
        "_links": links,
    }
