"""The front door (``/``), the API docs (``/docs``) and the files they load."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import falcon
from swagger_ui_bundle import swagger_ui_path

from resource_server.negotiation import HAL, vendor_types
from resource_server.resources.base import Resource
from resource_server.resources.root import Root
from resource_server.routes import CollectionRoute, PlainRoute
from resource_server.web.catalog import KINDS
from resource_server.web.render import DOCS_CSP, HERE, SECURITY_HEADERS, render

# The only Swagger UI files the docs page loads, and its OAuth redirect page (the "Authorize"
# button's flow comes back there); nothing else of the package is served.
DOCS_ASSETS = (
    "swagger-ui.css",
    "swagger-ui-bundle.js",
    "oauth2-redirect.html",
    "oauth2-redirect.js",
)
STATIC_FILES = ("site.css", "docs.js", "images.js")
REDIRECT_PAGE_CSP = "default-src 'none'; script-src 'self'; base-uri 'none'; frame-ancestors 'none'"
# Versioned by the package, so browsers may keep them for a day.
ASSET_CACHE = "public, max-age=86400"


def _send_file(resp: falcon.Response, path: Path) -> None:
    """Answer a file with its media type and the page security headers."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    resp.content_type = f"{kind}; charset=utf-8" if kind.startswith("text/") else kind
    if path.suffix == ".js":
        resp.content_type = "text/javascript; charset=utf-8"
    resp.data = path.read_bytes()
    resp.cache_control = [ASSET_CACHE]
    for name, value in SECURITY_HEADERS.items():
        resp.set_header(name, value)


class FrontDoor(Resource):
    """``/``: a page for people; the API root document for clients that ask for JSON."""

    auth = "none"
    per_address = True  # limited per client address (web.limit)

    def __init__(self, *args: Any, routes: Sequence[CollectionRoute | PlainRoute]) -> None:
        super().__init__(*args)
        self.root = Root(*args, routes=routes)
        self.json_types = ("application/json", HAL, *vendor_types(self.settings.vendor))

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer the page, or the root document when the client prefers JSON."""
        resp.vary = ["Accept"]
        preferred = req.client_prefers(["text/html", *self.json_types])
        if preferred in self.json_types:
            self.root.on_get(req, resp)
            return
        render(resp, "front.html", kinds=KINDS.values())


class Docs(Resource):
    """``/docs``: the OpenAPI document rendered by Swagger UI (its files served from here)."""

    auth = "none"
    per_address = True  # limited per client address (web.limit)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Answer the docs page."""
        render(resp, "docs.html", csp=DOCS_CSP)


class DocsAsset(Resource):
    """``/docs/assets/{name}``: Swagger UI's script, stylesheet and OAuth redirect page, from
    its package."""

    auth = "none"

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        """Answer one of the listed files (404 for anything else)."""
        if name not in DOCS_ASSETS:
            raise falcon.HTTPNotFound()
        _send_file(resp, Path(str(swagger_ui_path)) / name)
        if name.endswith(".html"):
            # The redirect page only runs its script (from here) and hands the code back to
            # the docs page that opened it.
            resp.set_header("Content-Security-Policy", REDIRECT_PAGE_CSP)


class Static(Resource):
    """``/static/{name}``: the pages' stylesheet and the docs' start-up script."""

    auth = "none"

    def on_get(self, req: falcon.Request, resp: falcon.Response, name: str) -> None:
        """Answer one of the listed files (404 for anything else)."""
        if name not in STATIC_FILES:
            raise falcon.HTTPNotFound()
        _send_file(resp, HERE / "static" / name)
