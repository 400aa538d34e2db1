"""The session cookie is Secure whenever PUBLIC_URL is https, without a setting to remember.

Attack: a deployment behind https that forgot SESSION_COOKIE_SECURE would let a network
attacker read the session cookie from any plain-http request the browser is lured into. The
sign-in page's Set-Cookie must carry ``Secure`` as soon as PUBLIC_URL is https.
"""

from __future__ import annotations

import pytest
import requests

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.security.https_support import call, https_auth
from tests.servers import LiveServer

SIGN_IN = "/account/sign_in"


def session_cookie(response: requests.Response) -> str:
    """Return the Set-Cookie header of the session cookie."""
    cookie = response.headers.get("Set-Cookie", "")
    assert cookie.startswith("session="), response.headers
    return cookie


def attributes(cookie: str) -> set[str]:
    """Return the attribute names of a Set-Cookie value, lowercased."""
    return {part.split("=")[0].strip().lower() for part in cookie.split(";")[1:]}


def test_sign_in_cookie_is_secure_when_public_url_is_https(
    auth_settings: AuthSettings, stores: Stores
) -> None:
    with https_auth(auth_settings, stores) as live:
        r = call("GET", live.url + SIGN_IN)
    assert r.status_code == 200
    assert {"secure", "httponly", "samesite"} <= attributes(session_cookie(r))


def test_sign_in_cookie_is_not_secure_on_plain_http(auth_server: LiveServer) -> None:
    r = call("GET", auth_server.url + SIGN_IN)
    assert "secure" not in attributes(session_cookie(r))


def test_an_explicit_false_still_wins_and_is_warned_about(
    auth_settings: AuthSettings, stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    with https_auth(auth_settings, stores, session_cookie_secure=False) as live:
        r = call("GET", live.url + SIGN_IN)
    assert "secure" not in attributes(session_cookie(r))
    assert "SESSION_COOKIE_SECURE=false although PUBLIC_URL is https" in caplog.text
