"""Pin the full route table of the auth server, its endpoint names, and its description of
its own routes (one blueprint per view module, each route with its operations)."""

from __future__ import annotations

import pytest
from flask import Flask, url_for
from openapi_spec_validator import validate

from auth_server.app import BLUEPRINTS, create_app, describe
from auth_server.views.described import Described, openapi_path
from common.openapi import AUTH_PART, part_json, stored_part
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
    "/.well-known/openid-configuration": {"GET"},
    "/oauth2/jwks": {"GET"},
    "/oauth2/userinfo": {"GET", "POST"},
    "/oauth2/openapi.json": {"GET"},
    "/api/tokens/access_token": {"DELETE"},
    "/api/applications": {"GET", "POST"},
    "/api/applications/<app_id>": {"GET", "PUT", "DELETE"},
    "/oauth2/authorize": {"GET", "POST"},
    "/oauth2/register": {"POST"},
    "/oauth2/register/<client_id>": {"GET", "PUT", "DELETE"},
    "/oauth2/logout": {"GET", "POST"},
    "/oauth2/callback": {"GET"},
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
    # The device flow (RFC 8628).
    "/oauth2/device_authorization": {"POST"},
    "/activate": {"GET", "POST"},
    "/account/devices/<grant_id>/revoke": {"POST"},
}


def app() -> Flask:
    stores = Stores(engine=None, sessions=None, redis=None, tokens=None)  # type: ignore[arg-type]
    return create_app(AuthSettings(secret_key="x"), stores)


def test_route_table() -> None:
    routes = {
        r.rule: set(r.methods or ()) - {"HEAD", "OPTIONS"}
        for r in app().url_map.iter_rules()
        if r.endpoint != "static"
    }
    assert routes == EXPECTED


def test_every_route_is_a_view_module_blueprint() -> None:
    blueprints = {bp.name for bp in BLUEPRINTS}
    assert len(blueprints) == len(BLUEPRINTS)
    for rule in app().url_map.iter_rules():
        if rule.endpoint != "static":
            assert rule.endpoint.split(".")[0] in blueprints, rule


@pytest.mark.parametrize(
    ("endpoint", "path"),
    [
        ("session.sign_in", "/account/sign_in"),
        ("session.sign_out", "/account/sign_out"),
        ("account.home", "/account"),
        ("account.static", "/account/static/site.css"),
        ("password.reset", "/account/password/reset/t"),
        ("verify.verify_email", "/account/email/verify"),
        ("authorize.authorize", "/oauth2/authorize"),
        ("oauth.access_token", "/oauth2/access_token"),
        ("applications.item", "/api/applications/a"),
    ],
)
def test_endpoint_names(endpoint: str, path: str) -> None:
    flask_app = app()
    with flask_app.test_request_context():
        values = {"filename": "site.css"} if "static" in endpoint else {}
        if endpoint == "password.reset":
            values = {"token": "t"}
        if endpoint == "applications.item":
            values = {"app_id": "a"}
        assert url_for(endpoint, **values) == path


def test_the_description_is_of_the_routes_served() -> None:
    served = {
        (openapi_path(r.rule), method.lower())
        for r in app().url_map.iter_rules()
        if r.endpoint != "static"
        for method in r.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }
    described = {(path, method) for path, item in describe()["paths"].items() for method in item}
    assert described == served


def test_the_description_is_valid_and_tagged() -> None:
    part = describe()
    validate({**part, "servers": [{"url": "http://127.0.0.1"}]})
    for path, item in part["paths"].items():
        for method, op in item.items():
            assert method != "head", path
            assert len(op["tags"]) == 1, (method, path)
            pages = ("/oauth2/authorize", "/activate", "/oauth2/logout", "/oauth2/callback")
            page = path.startswith("/account") or path in pages
            assert (op["tags"] == ["pages"]) == page, (method, path, op["tags"])


def test_a_described_route_serves_exactly_its_operations() -> None:
    bp = Described("check", __name__, tag="tokens")
    view = type("V", (), {"methods": {"GET", "POST"}})
    with pytest.raises(ValueError, match="served"):
        bp.declare("/x", view, get={"responses": {}})  # type: ignore[arg-type]


def test_the_stored_part_is_the_servers_description() -> None:
    # The catalog serves the whole document from the part written at build time: after a
    # change to the auth server's routes or their operations, run `make openapi`.
    assert stored_part(AUTH_PART) == describe(), "run `make openapi`"
    assert part_json(describe()) == part_json(stored_part(AUTH_PART))
