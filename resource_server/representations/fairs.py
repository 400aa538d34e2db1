"""The fair representation; ``status`` comes from the dates at the request's time."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.hal import Urls, link
from resource_server.representations.values import fields, image_and_self, imaged, schedule

_PLAIN = ("name", "about", "tagline", "city")


def fair(f: Any, urls: Urls, now: datetime, web_url: str = "") -> dict[str, Any]:
    """Render a fair with its dates, status and shows link."""
    links = image_and_self(f, urls, "/fairs", ("square", "wide"))
    if web_url:
        links["permalink"] = link(f"{web_url}/fair/{f.slug}")
    links["shows"] = {"href": f"{urls.root}/shows?fair_id={f.id}"}
    return imaged(f, links, fields(f, _PLAIN), schedule(f, now))
