"""Pin the full route table of the auth server."""

from auth_server.app import create_app
from common.settings import AuthSettings
from common.stores import Stores

EXPECTED = {
    "/api/tokens/xapp_token": {"POST"},
    "/healthz": {"GET"},
    "/readyz": {"GET"},
}


def test_route_table() -> None:
    stores = Stores(engine=None, sessions=None, redis=None, tokens=None)  # type: ignore[arg-type]
    app = create_app(AuthSettings(secret_key="x"), stores)
    routes = {
        r.rule: set(r.methods or ()) - {"HEAD", "OPTIONS"}
        for r in app.url_map.iter_rules()
        if r.endpoint != "static"
    }
    assert routes == EXPECTED
