"""Pin the full route table of the auth server."""

from auth_server.app import create_app
from common.settings import AuthSettings
from common.stores import Stores

EXPECTED = {
    "/api/tokens/xapp_token": {"POST"},
    "/healthz": {"GET"},
    "/readyz": {"GET"},
    "/oauth2/access_token": {"GET", "POST"},
    "/oauth2/revoke": {"POST"},
    "/oauth2/introspect": {"POST"},
    "/.well-known/oauth-authorization-server": {"GET"},
    "/api/tokens/access_token": {"DELETE"},
    "/api/applications": {"GET", "POST"},
    "/api/applications/<app_id>": {"GET", "PUT", "DELETE"},
    "/oauth2/authorize": {"GET", "POST"},
    "/account": {"GET"},
    "/account/sign_in": {"GET", "POST"},
    "/account/sign_up": {"GET", "POST"},
    "/account/sign_out": {"GET", "POST"},
    "/account/password/forgot": {"GET", "POST"},
    "/account/password/reset/<token>": {"GET", "POST"},
    "/account/password/change": {"GET", "POST"},
    "/account/email/verify": {"GET", "POST"},
    "/account/email/resend": {"POST"},
    "/account/authorizations": {"GET"},
    "/account/authorizations/<application_id>/revoke": {"POST"},
    "/account/applications": {"GET", "POST"},
    "/account/applications/<application_id>/rotate": {"POST"},
    "/account/static/<path:filename>": {"GET"},
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
