"""HSTS behind https: every response of both services tells browsers to stay on https.

Attack: without ``Strict-Transport-Security`` a network attacker can strip https from a user's
next visit (an http link, a typed address) and read or change what follows. When PUBLIC_URL is
https every response, errors and operator endpoints included, must carry the header.
"""

from __future__ import annotations

import pytest

from common.settings import AuthSettings, ResourceSettings
from common.stores import Stores
from tests.functional.security.https_support import call, https_auth, https_resource
from tests.servers import LiveServer

HSTS = "max-age=31536000; includeSubDomains"
AUTH_REQUESTS = [
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/account/sign_in"),
    ("GET", "/account"),  # a redirect to the sign-in page
    ("POST", "/oauth2/access_token"),  # an OAuth error
    ("POST", "/api/tokens/xapp_token"),
    ("GET", "/api/applications"),  # 401
    ("GET", "/no/such/page"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
]
RESOURCE_REQUESTS = [
    ("GET", "/api"),
    ("GET", "/api/artists"),  # 401
    ("GET", "/api/artists?size=x"),
    ("GET", "/api/no_such_thing"),
    ("OPTIONS", "/api/artists"),
    ("GET", "/api/openapi.json"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
]


def sts_of(live: LiveServer, requests_: list[tuple[str, str]]) -> dict[str, str | None]:
    """Return each request's Strict-Transport-Security header (None when absent)."""
    out = {}
    for method, path in requests_:
        r = call(method, live.url + path, allow_redirects=False)
        assert r.status_code < 500, (path, r.status_code)
        out[f"{method} {path} {r.status_code}"] = r.headers.get("Strict-Transport-Security")
    return out


def test_every_auth_response_carries_hsts(auth_settings: AuthSettings, stores: Stores) -> None:
    with https_auth(auth_settings, stores) as live:
        seen = sts_of(live, AUTH_REQUESTS)
    assert set(seen.values()) == {HSTS}, seen


def test_every_resource_response_carries_hsts(
    resource_settings: ResourceSettings, stores: Stores
) -> None:
    with https_resource(resource_settings, stores) as live:
        seen = sts_of(live, RESOURCE_REQUESTS)
    assert set(seen.values()) == {HSTS}, seen


def test_max_age_is_a_setting_and_zero_turns_it_off(
    auth_settings: AuthSettings, resource_settings: ResourceSettings, stores: Stores
) -> None:
    with https_auth(auth_settings, stores, hsts_max_age=600) as live:
        r = call("GET", live.url + "/account/sign_in")
    assert r.headers["Strict-Transport-Security"] == "max-age=600; includeSubDomains"
    with https_resource(resource_settings, stores, hsts_max_age=0) as live:
        assert "Strict-Transport-Security" not in call("GET", live.url + "/api").headers


@pytest.mark.parametrize("path", ["/api", "/account/sign_in"])
def test_no_hsts_on_plain_http(combined_server: LiveServer, path: str) -> None:
    r = call("GET", combined_server.url + path)
    assert r.status_code == 200 and "Strict-Transport-Security" not in r.headers
