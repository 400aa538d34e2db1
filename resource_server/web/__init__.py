"""The human side of the catalog: the front door, the API docs and server-rendered pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon

from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.routes import CollectionRoute, PlainRoute
from resource_server.web import catalog, front, images

# Every path the pages answer (the proxy and ``serve all`` send them all to this server).
PAGE_PATHS = (
    "/",
    "/docs",
    "/docs/assets/{name}",
    "/static/{name}",
    "/search",
    "/images/{folder}/{name}",
    *(path for kind in catalog.KINDS.values() for path in (kind.list_path, kind.item_path)),
)


def add_pages(
    app: falcon.App,
    stores: Stores,
    settings: ResourceSettings,
    routes: Sequence[CollectionRoute | PlainRoute],
) -> None:
    """Register the front door, the docs, the static files and the catalog pages."""
    args: tuple[Any, ...] = (stores, settings)
    app.add_route("/", front.FrontDoor(*args, routes=routes))
    app.add_route("/docs", front.Docs(*args))
    app.add_route("/docs/assets/{name}", front.DocsAsset(*args))
    app.add_route("/static/{name}", front.Static(*args))
    app.add_route("/search", catalog.SearchPage(*args))
    app.add_route("/images/{folder}/{name}", images.ImageFile(*args))
    for kind in catalog.KINDS.values():
        app.add_route(kind.list_path, catalog.ListPage(*args, kind=kind))
        app.add_route(kind.item_path, catalog.ItemPage(*args, kind=kind))
