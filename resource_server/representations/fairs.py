"""The fair representation; ``status`` comes from the dates at the request's time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.hal import Urls, image_links, link
from resource_server.representations.values import stamp
from resource_server.schedule import status_of


def fair(f: Any, urls: Urls, now: datetime, web_url: str = "") -> dict[str, Any]:
    """Render a fair with its dates, status and shows link."""
    links = image_links(f.image_url, f.image_versions or [], ("square", "wide"))
    links["self"] = {"href": f"{urls.root}/fairs/{f.id}"}
    if web_url:
        links["permalink"] = link(f"{web_url}/fair/{f.slug}")
    links["shows"] = {"href": f"{urls.root}/shows?fair_id={f.id}"}
    return {
        "id": f.id,
        "created_at": stamp(f.created_at),
        "updated_at": stamp(f.updated_at),
        "name": f.name,
        "about": f.about,
        "tagline": f.tagline,
        "city": f.city,
        "start_at": stamp(f.start_at),
        "end_at": stamp(f.end_at),
        "status": status_of(f.start_at, f.end_at, now),
        "image_versions": list(f.image_versions or []),
        "_links": links,
    }
