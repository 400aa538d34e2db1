"""The catalog's HTML pages (``resource_server.web``), tagged ``pages``: /docs hides them at
first. The authorization server describes its own pages."""

from __future__ import annotations

from common.openapi.parts import ERROR_RESPONSES, Op, op, page

PAGES: list[tuple[str, str, str]] = [
    # The front door also answers the API root document to a client that asks for JSON.
    ("/", "front", "The front door (HTML; the API root for Accept: application/json)"),
    ("/docs", "docs", "The API docs (Swagger UI)"),
    ("/docs/assets/{name}", "docs_asset", "A file of Swagger UI (its OAuth redirect page too)"),
    ("/static/{name}", "static", "The pages' stylesheet and script"),
    ("/search", "search", "Search the catalog (a results page)"),
    ("/artists", "artists", "Artists (a page)"),
    ("/artist/{key}", "artist", "An artist, by id or slug (a page)"),
    ("/artworks", "artworks", "Artworks (a page)"),
    ("/artwork/{key}", "artwork", "An artwork, by id or slug (a page)"),
    ("/genes", "genes", "Genes (a page)"),
    ("/gene/{key}", "gene", "A gene, by id or slug (a page)"),
    ("/partners", "partners", "Partners (a page)"),
    ("/partner/{key}", "partner", "A partner, by id or slug (a page)"),
    ("/profiles", "profiles", "Profiles (a page)"),
    ("/profile/{key}", "profile", "A profile, by id or handle (a page)"),
    ("/shows", "shows", "Shows (a page)"),
    ("/show/{key}", "show", "A show, by id or slug (a page)"),
]

CATALOG_PAGES: dict[tuple[str, str], Op] = {
    (path, "get"): page(op_id, summary, "get") for path, op_id, summary in PAGES
}

# The instance's own images (resource_server.web.images): a version of a mirrored or demo
# image (JPEG, cached for good), or an artwork's placeholder (SVG).
_BINARY = {"schema": {"type": "string", "format": "binary"}}
IMAGE_RESPONSES: dict[str, Op] = {
    "200": {
        "description": "The image (ETag; Cache-Control immutable but for a placeholder)",
        "content": {"image/jpeg": _BINARY, "image/svg+xml": _BINARY},
    },
    "304": {"description": "Not modified: If-None-Match named the image's ETag"},
    "400": ERROR_RESPONSES["400"],
    "404": ERROR_RESPONSES["404"],
    "503": ERROR_RESPONSES["503"],
}
CATALOG_PAGES[("/images/{folder}/{name}", "get")] = op(
    "page_image_get",
    "A version of an image the instance serves: /images/<folder>/<version>.jpg (GET)",
    IMAGE_RESPONSES,
    tags=["catalog"],
)
