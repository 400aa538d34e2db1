"""``/api/openapi.json``: the OpenAPI 3.1 document of both services."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon

from resource_server.openapi import build_document
from resource_server.resources.base import Resource
from resource_server.routes import CollectionRoute, PlainRoute


class OpenAPI(Resource):
    """The document, built once per server URL from the route declarations."""

    auth = "none"

    def __init__(self, *args: Any, routes: Sequence[CollectionRoute | PlainRoute]) -> None:
        super().__init__(*args)
        self.routes = routes
        self._cache: dict[str, dict[str, Any]] = {}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Serve the document."""
        server = self.urls(req).base
        document = self._cache.get(server)
        if document is None:
            document = build_document(self.routes, server)
            # Hosts come from the request: keep a few, so hostile Host headers cannot grow it.
            if len(self._cache) < 8:
                self._cache[server] = document
        resp.media = document
