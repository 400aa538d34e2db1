"""``/api/openapi.json``: the OpenAPI 3.1 document of both services, composed of their parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon

from resource_server.openapi import Mounted, build_document
from resource_server.resources.base import Resource


class OpenAPI(Resource):
    """The document, built once per server URL from the route table (and the authorization
    server's part, written at build time)."""

    auth = "none"

    def __init__(self, *args: Any, table: Sequence[Mounted]) -> None:
        super().__init__(*args)
        self.table = table
        self._cache: dict[str, dict[str, Any]] = {}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Serve the document."""
        server = self.urls(req).base
        document = self._cache.get(server)
        if document is None:
            document = build_document(self.table, server)
            # Hosts come from the request: keep a few, so hostile Host headers cannot grow it.
            if len(self._cache) < 8:
                self._cache[server] = document
        resp.media = document
