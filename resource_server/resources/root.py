"""``/api`` (the root: links and templates to every route) and ``/api/status``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon

from common.hal import Link, link
from common.health import readiness
from common.ids import format_ts, utcnow
from resource_server.resources.base import Resource
from resource_server.routes import CollectionRoute, PlainRoute


class Root(Resource):
    """The root document: the same for every caller, served without a token."""

    auth = "none"

    def __init__(self, *args: Any, routes: Sequence[CollectionRoute | PlainRoute]) -> None:
        super().__init__(*args)
        self.routes = routes

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Render the links to every route."""
        urls = self.urls(req)
        links: dict[str, Link] = {"self": link(urls.api(""))}
        for route in self.routes:
            links.update(route.links(urls))
        resp.media = {"_links": links}


class Healthz(Resource):
    """Liveness: the process answers."""

    auth = "none"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Say the process is alive."""
        resp.media = {"status": "ok"}


class Readyz(Resource):
    """Readiness: the database and Redis answer (503 otherwise)."""

    auth = "none"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Check the stores."""
        checks = readiness(self.stores)
        ready = all(v == "ok" for v in checks.values())
        resp.status = falcon.HTTP_200 if ready else falcon.HTTP_503
        resp.media = {"status": "ok" if ready else "unavailable", "checks": checks}


class Status(Resource):
    """The service status (no token needed)."""

    auth = "none"

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Report whether the stores answer."""
        status = "good"
        try:
            self.stores.redis.ping()
        except Exception:  # any Redis failure means degraded, never a 5xx here
            status = "major"
        resp.media = {
            "status": status,
            "updated_at": format_ts(utcnow()),
            "_links": {"self": link(self.urls(req).api("/status"))},
        }
