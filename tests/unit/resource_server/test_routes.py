"""Pin the full route table of the resource server."""

import falcon.inspect
from redis import Redis

from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.app import create_app

EXPECTED = {
    "/api": {"GET", "HEAD"},
    "/api/status": {"GET", "HEAD"},
    "/healthz": {"GET", "HEAD"},
    "/readyz": {"GET", "HEAD"},
    "/api/artists": {"GET", "HEAD"},
    "/api/artists/{id}": {"GET", "HEAD"},
}


def test_route_table(tmp_path: object) -> None:
    # Building the app connects nothing: a Redis client connects on first use.
    stores = Stores(engine=None, sessions=None, redis=Redis(), tokens=None)  # type: ignore[arg-type]
    app = create_app(ResourceSettings(secret_key="x"), stores)
    routes = {
        r.path: {m.method for m in r.methods if not m.internal and m.method != "OPTIONS"}
        for r in falcon.inspect.inspect_routes(app)
    }
    assert routes == EXPECTED
