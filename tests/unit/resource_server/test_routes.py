"""Pin the full route table of the resource server."""

import falcon.inspect
from redis import Redis

from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.app import create_app

EXPECTED = {
    "/api": {"GET", "HEAD"},
    "/api/status": {"GET", "HEAD"},
    "/api/openapi.json": {"GET", "HEAD"},
    "/healthz": {"GET", "HEAD"},
    "/readyz": {"GET", "HEAD"},
    "/api/artists": {"GET", "HEAD"},
    "/api/artists/{id}": {"GET", "HEAD"},
    "/api/artworks": {"GET", "HEAD"},
    "/api/artworks/{id}": {"GET", "HEAD"},
    "/api/editions": {"GET", "HEAD"},
    "/api/editions/{id}": {"GET", "HEAD"},
    "/api/genes": {"GET", "HEAD"},
    "/api/genes/{id}": {"GET", "HEAD"},
    "/api/shows": {"GET", "HEAD"},
    "/api/shows/{id}": {"GET", "HEAD"},
    "/api/partners": {"GET", "HEAD"},
    "/api/partners/{id}": {"GET", "HEAD"},
    "/api/sales": {"GET", "HEAD"},
    "/api/sales/{id}": {"GET", "HEAD"},
    "/api/sale_artworks": {"GET", "HEAD"},
    "/api/sale_artworks/{id}": {"GET", "HEAD"},
    "/api/fairs": {"GET", "HEAD"},
    "/api/fairs/{id}": {"GET", "HEAD"},
    "/api/profiles": {"GET", "HEAD"},
    "/api/profiles/{id}": {"GET", "HEAD"},
    "/api/images": {"GET", "HEAD"},
    "/api/images/{id}": {"GET", "HEAD"},
    "/api/users": {"GET", "HEAD"},
    "/api/users/{id}": {"GET", "HEAD"},
    "/api/current_user": {"GET", "HEAD"},
    "/api/user_details/{id}": {"GET", "HEAD"},
    "/api/collections": {"GET", "HEAD", "POST"},
    "/api/collections/{id}": {"GET", "HEAD", "PUT"},
    "/api/collection_items": {"GET", "HEAD", "POST"},
    "/api/collection_items/{id}": {"GET", "HEAD", "PUT", "DELETE"},
    "/api/bidders": {"GET", "HEAD"},
    "/api/bidders/{id}": {"GET", "HEAD"},
    "/api/search": {"GET", "HEAD"},
}
# The pages for people (resource_server.web), outside /api.
PAGES = {
    path: {"GET", "HEAD"}
    for path in ("/", "/docs", "/docs/assets/{name}", "/static/{name}", "/search",
                 "/artists", "/artist/{key}", "/artworks", "/artwork/{key}", "/genes",
                 "/gene/{key}", "/partners", "/partner/{key}", "/profiles", "/profile/{key}",
                 "/shows", "/show/{key}", "/images/{folder}/{name}")
}  # fmt: skip


def test_route_table(tmp_path: object) -> None:
    # Building the app connects nothing: a Redis client connects on first use.
    stores = Stores(engine=None, sessions=None, redis=Redis(), tokens=None)  # type: ignore[arg-type]
    app = create_app(ResourceSettings(secret_key="x"), stores)
    routes = {
        r.path: {m.method for m in r.methods if not m.internal and m.method != "OPTIONS"}
        for r in falcon.inspect.inspect_routes(app)
    }
    assert routes == {**EXPECTED, **PAGES}
