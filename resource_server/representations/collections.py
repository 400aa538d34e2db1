"""The collection and collection item representations."""

from __future__ import annotations

from typing import Any

from common.hal import Urls, link
from common.ids import format_ts
from common.models import Collection, CollectionItem


def collection(c: Collection, urls: Urls) -> dict[str, Any]:
    """Render a collection with its links to its owner, artworks and items."""
    scope = {"collection_id": c.id, "user_id": c.user_id}
    return {
        "id": c.id,
        "created_at": format_ts(c.created_at),
        "updated_at": format_ts(c.updated_at),
        "name": c.name,
        "description": c.description,
        "default": c.default,
        "private": c.private,
        "_links": {
            "self": link(urls.api(f"/collections/{c.id}")),
            "user": link(urls.api(f"/users/{c.user_id}")),
            "artworks": link(urls.api("/artworks", scope)),
            "collection_items": link(urls.api("/collection_items", scope)),
        },
    }


def collection_item(i: CollectionItem, user_id: str, urls: Urls) -> dict[str, Any]:
    """Render an item of a collection owned by ``user_id``."""
    scope = {"collection_id": i.collection_id, "user_id": user_id}
    return {
        "id": i.id,
        "created_at": format_ts(i.created_at),
        "updated_at": format_ts(i.updated_at),
        "position": i.position,
        "_links": {
            "self": link(urls.api(f"/collection_items/{i.id}", scope)),
            "user": link(urls.api(f"/users/{user_id}")),
            "collection": link(urls.api(f"/collections/{i.collection_id}")),
            "artwork": link(urls.api(f"/artworks/{i.artwork_id}")),
        },
    }
