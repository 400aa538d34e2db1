"""The image representation."""

from __future__ import annotations

from typing import Any

from common.hal import Urls
from resource_server.representations.values import fields, image_and_self, imaged

_PLAIN = ("position", "default", "aspect_ratio", "original_height", "original_width")


def image(i: Any, urls: Urls) -> dict[str, Any]:
    """Render an image (an installation shot, a cover, an additional view)."""
    links = image_and_self(i, urls, "/images", ("medium250x165", "medium", "square"))
    return imaged(i, links, fields(i, _PLAIN))
