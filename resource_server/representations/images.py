"""The image representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, image_links, link
from common.ids import format_ts
from common.models import Image


def image(i: Image, urls: Urls) -> dict[str, Any]:
    """Render an image (an installation shot, a cover, an additional view)."""
    links = image_links(i.image_url, i.image_versions or [], ("medium250x165", "medium", "square"))
    links["self"] = link(urls.api(f"/images/{i.id}"))
    return {
        "id": i.id,
        "created_at": format_ts(i.created_at),
        "updated_at": format_ts(i.updated_at),
        "position": i.position,
        "default": i.default,
        "aspect_ratio": i.aspect_ratio,
        "original_height": i.original_height,
        "original_width": i.original_width,
        "image_versions": list(i.image_versions or []),
        "_links": links,
    }
