"""Two stock OpenID Connect relying parties, unmodified, sign their users in with artcat over
real HTTP: Authlib's OIDC client (a Flask app configured from the discovery document) and the
npm library openid-client (an OpenID-certified RP, run by Node.js from tests/rp). Each does
discovery, the code flow with PKCE and a nonce, validates the ID token against the JWKS
(signature, iss, aud, nonce, expiry) and calls userinfo; the test plays the browser. With an
application registered for refresh tokens and a post-logout URI, each also refreshes (a new pair
and a new ID token the library validates), sees the old refresh token's reuse refused and its
family revoked, and signs the user out (RP-initiated logout, back with its state)."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from authlib.integrations.base_client import OAuthError
from flask import jsonify
from sqlalchemy.orm import Session, sessionmaker

from common.settings import Settings
from tests.functional.authorize_support import ACCOUNT_REDIRECT_URIS, HTTPS_CB, approve
from tests.functional.oidc_support import SCOPE, artcat_site, ask_for
from tests.functional.registration_support import AFTER_LOGOUT
from tests.pages import Account, make_account, query, sign_in
from tests.servers import LiveServer

RP_DIR = Path(__file__).resolve().parents[1] / "rp"
RP_SCRIPT = RP_DIR / "openid_client_rp.mjs"
NPM_TIMEOUT = 300

pytestmark = pytest.mark.usefixtures("fresh_keys")


@pytest.fixture(scope="session")
def node() -> str:
    """Node.js with openid-client installed in tests/rp (``npm ci`` when it is not yet)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are not installed: the openid-client relying party needs them")
    # One installer at a time (pytest-xdist's workers share the folder).
    with (RP_DIR / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (RP_DIR / "node_modules" / "openid-client" / "package.json").is_file():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=RP_DIR,
                check=False,
                timeout=NPM_TIMEOUT,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci in {RP_DIR} failed:\n{done.stdout}\n{done.stderr}")
    return node


@pytest.fixture
def offline_account(
    clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings
) -> Account:
    """A user whose application is registered for refresh tokens and a post-logout URI."""
    return make_account(
        sessions,
        base_settings,
        name="Ada Owner",
        redirect_uris=ACCOUNT_REDIRECT_URIS,
        app_fields={"refresh_tokens": True, "post_logout_redirect_uris": [AFTER_LOGOUT]},
    )


@pytest.fixture
def offline_browser(
    no_grace_server: LiveServer, offline_account: Account
) -> Iterator[requests.Session]:
    """The offline application's user, signed in on the no-grace server."""
    with requests.Session() as web:
        assert sign_in(web, no_grace_server.url, offline_account.email).status_code == 302
        yield web


@pytest.fixture
def browser(http_auth_server: LiveServer, account: Account) -> Iterator[requests.Session]:
    """The application's user, signed in on the auth server in a browser-like session."""
    with requests.Session() as web:
        assert sign_in(web, http_auth_server.url, account.email).status_code == 302
        yield web


def authlib_refresh(client: Any, session: dict[str, Any]) -> dict[str, Any]:
    """Refresh (the new ID token validated by the library), then reuse the old refresh token
    and call userinfo with the new access token: both as the server answered."""
    old = session["token"]
    fresh = client.fetch_access_token(
        grant_type="refresh_token", refresh_token=old["refresh_token"]
    )
    # Signature against the JWKS, iss, aud, exp and at_hash; no nonce (OIDC Core 12.2).
    claims = client.parse_id_token(fresh, nonce=None)
    session["token"] = fresh
    worked = dict(client.userinfo(token=fresh))  # before the reuse
    try:
        client.fetch_access_token(grant_type="refresh_token", refresh_token=old["refresh_token"])
        reuse = None
    except OAuthError as ex:
        reuse = ex.error
    userinfo = client.load_server_metadata()["userinfo_endpoint"]
    return {
        "claims": dict(claims) if claims is not None else None,
        "scope": fresh.get("scope"),
        "new_access_token": fresh["access_token"] != old["access_token"],
        "new_refresh_token": fresh.get("refresh_token") not in (None, old["refresh_token"]),
        "userinfo": worked,
        "reuse": reuse,
        "userinfo_after_reuse": client.get(userinfo, token=fresh).status_code,
    }


def authlib_logout(client: Any, session: dict[str, Any]) -> dict[str, Any]:
    """Start the RP-initiated logout: where the library sends the browser (with a state)."""
    sent = client.logout_redirect(
        post_logout_redirect_uri=AFTER_LOGOUT, id_token_hint=session["token"]["id_token"]
    )
    return {"url": sent.headers["Location"]}


# What the Authlib relying party does once signed in, by name (as the openid-client script's
# STEPS): each gets the library's client and the sign-in's session (its latest token).
AUTHLIB_STEPS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "userinfo": lambda client, session: dict(client.userinfo(token=session["token"])),
    "refresh": authlib_refresh,
    "logout": authlib_logout,
}


def authlib_sign_in(
    base: str,
    account: Account,
    web: requests.Session,
    steps: Sequence[str] = ("userinfo",),
    scope: str = SCOPE,
) -> dict[str, Any]:
    """Sign in with a Flask site using Authlib's OIDC client, configured from the discovery
    document only: its redirect, the consent (``web`` plays the browser), its callback, which
    checks the ID token against the JWKS and then runs ``steps``. A logout step ends with the
    browser sent to the end-session endpoint, and back to the site, which checks the state."""
    site, oauth = artcat_site("authlib_relying_party", base, account, scope)

    @site.route("/login")
    def login() -> Any:
        return oauth.artcat.authorize_redirect(HTTPS_CB)

    @site.route("/callback")
    def callback() -> Any:
        token = oauth.artcat.authorize_access_token()  # the ID token checked here
        out = {
            "claims": dict(token["userinfo"]),
            "token_type": token["token_type"],
            "has_refresh_token": "refresh_token" in token,
        }
        session = {"token": token}
        for name in steps:
            out[name] = AUTHLIB_STEPS[name](oauth.artcat, session)
        return jsonify(out)

    @site.route(urlsplit(AFTER_LOGOUT).path)
    def signed_out() -> Any:
        return jsonify(oauth.artcat.validate_logout_response())  # the state it sent

    browser = site.test_client()
    start = browser.get("/login")
    assert start.status_code == 302, start.text
    callback_url = approve(web, base, start.headers["Location"])
    back = browser.get("/callback?" + urlsplit(callback_url).query)
    assert back.status_code == 200, back.text
    answer: dict[str, Any] = back.get_json()
    if "logout" in steps:
        returned = follow_logout(web, answer["logout"]["url"])
        came_back = browser.get(urlsplit(AFTER_LOGOUT).path + "?" + urlsplit(returned).query)
        answer["logout"]["returned"] = returned
        answer["logout"]["validated"] = came_back.status_code == 200
        answer["logout"]["state_data"] = came_back.get_json(silent=True)
    return answer


def follow_logout(web: requests.Session, url: str) -> str:
    """Send the browser to an end-session URL; return where the server sends it back."""
    out = web.get(url, allow_redirects=False)
    assert out.status_code == 302, out.text
    return str(out.headers["Location"])


def openid_client(node: str, request: dict[str, Any]) -> dict[str, Any]:
    """Run one step of the openid-client relying party; return its JSON answer."""
    done = subprocess.run(
        [node, str(RP_SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == 0) == ("error" not in answer), done.stderr
    return answer


def node_sign_in(
    node: str,
    base: str,
    account: Account,
    web: requests.Session,
    steps: Sequence[str] = ("userinfo",),
    scope: str = SCOPE,
    **tamper: str,
) -> dict[str, Any]:
    """Sign in with openid-client: its authorization URL, the consent (``web`` plays the
    browser), its code exchange and ID token check, then ``steps`` (``tamper``: what the
    script is told to expect instead of what it sent, to see it refuse). A logout step ends
    with the browser sent to the end-session URL the script built; where it is sent back is
    the step's ``returned``."""
    config = {
        "issuer": base,
        "client_id": account.client_id,
        "client_secret": account.client_secret,
        "redirect_uri": HTTPS_CB,
        "scope": scope,
        "post_logout_redirect_uri": AFTER_LOGOUT,
    }
    started = openid_client(node, {**config, "step": "start"})
    url = started.pop("authorization_url")
    assert url.startswith(f"{base}/oauth2/authorize?")
    assert "code_challenge_method=S256" in url and f"nonce={started['nonce']}" in url
    callback = approve(web, base, url)
    assert callback.startswith(HTTPS_CB + "?")
    answer = openid_client(
        node,
        {
            **config,
            **started,
            **tamper,
            "step": "finish",
            "callback_url": callback,
            "steps": list(steps),
        },
    )
    if "logout" in answer:
        answer["logout"]["returned"] = follow_logout(web, answer["logout"]["url"])
    return answer


def expected_claims(account: Account) -> dict[str, Any]:
    """The user's claims both the ID token and userinfo carry for ``openid profile email``."""
    return {
        "sub": account.user_id,
        "name": account.name,
        "email": account.email,
        "email_verified": False,
    }


@pytest.mark.parametrize("alg", [None, "RS256"])
def test_authlib_signs_its_user_in_over_http(
    http_auth_server: LiveServer,
    account: Account,
    browser: requests.Session,
    sessions: sessionmaker[Session],
    alg: str | None,
) -> None:
    base = http_auth_server.url
    ask_for(sessions, account, alg)
    got = authlib_sign_in(base, account, browser, steps=["userinfo"])
    # Authlib checked the signature against the JWKS, iss, aud, exp, nonce and at_hash.
    claims = got["claims"]
    assert claims["iss"] == base and claims["aud"] == [account.client_id]
    assert claims["nonce"] and claims["exp"] > claims["iat"]
    want = expected_claims(account)
    assert {k: claims[k] for k in want} == want
    assert {k: got["userinfo"][k] for k in want} == want
    assert got["token_type"].lower() == "bearer"


@pytest.mark.parametrize(("alg", "shown"), [(None, "ES256"), ("RS256", "RS256")])
def test_openid_client_signs_its_user_in_over_http(
    node: str,
    http_auth_server: LiveServer,
    account: Account,
    browser: requests.Session,
    sessions: sessionmaker[Session],
    alg: str | None,
    shown: str,
) -> None:
    base = http_auth_server.url
    ask_for(sessions, account, alg)
    got = node_sign_in(node, base, account, browser, steps=["userinfo"])
    assert got["id_token_header"]["alg"] == shown
    jwks = requests.get(f"{base}/oauth2/jwks", timeout=10).json()["keys"]
    assert got["id_token_header"]["kid"] in {k["kid"] for k in jwks}
    claims = got["claims"]
    assert claims["iss"] == base and claims["aud"] in (account.client_id, [account.client_id])
    want = expected_claims(account)
    assert {k: claims[k] for k in want} == want
    assert {k: got["userinfo"][k] for k in want} == want
    assert got["token"]["token_type"].lower() == "bearer"
    assert set(got["token"]["scope"].split()) == set(SCOPE.split())


def test_openid_client_refuses_an_id_token_of_another_sign_in(
    node: str, http_auth_server: LiveServer, account: Account, browser: requests.Session
) -> None:
    """The RP really checks: a nonce other than the one it sent is refused, as is a state."""
    base = http_auth_server.url
    got = node_sign_in(node, base, account, browser, nonce="another-sign-in")
    assert got["error"]["code"] == "OAUTH_JWT_CLAIM_COMPARISON_FAILED", got
    assert got["error"]["claim"] == "nonce"
    got = node_sign_in(node, base, account, browser, state="another-state")
    assert got["error"]["code"] == "OAUTH_INVALID_RESPONSE", got


OFFLINE_SCOPE = f"{SCOPE} offline_access"
RP_STEPS = ["userinfo", "refresh", "logout"]


def signs_in(base: str, cookies: requests.cookies.RequestsCookieJar) -> bool:
    """Tell whether a browser holding ``cookies`` is signed in (the account page opens)."""
    with requests.Session() as replay:
        replay.cookies.update(cookies)
        r = replay.get(f"{base}/account", allow_redirects=False)
    assert r.status_code in (200, 302), r.text
    return r.status_code == 200


def assert_refreshed_then_revoked(refreshed: dict[str, Any], first: dict[str, Any]) -> None:
    """A new pair and a new ID token of the same sign-in; the old refresh token's reuse
    refused, and the family revoked with it (the new access token stops at userinfo)."""
    assert refreshed["new_access_token"] and refreshed["new_refresh_token"]
    claims = refreshed["claims"]
    for name in ("sub", "iss", "aud", "auth_time"):
        assert claims[name] == first[name], name
    assert "nonce" not in claims  # OIDC Core 12.2
    assert set(refreshed["scope"].split()) == set(OFFLINE_SCOPE.split())
    assert refreshed["userinfo"]["sub"] == first["sub"]  # the new access token worked


def assert_signed_out(
    base: str, returned: str, state: str, cookies: requests.cookies.RequestsCookieJar
) -> None:
    """Sent back to the registered URI with the state; the session's cookie signs in no more."""
    assert returned.startswith(AFTER_LOGOUT + "?"), returned
    assert query(returned) == {"state": state}
    assert not signs_in(base, cookies)


def test_authlib_refreshes_and_signs_its_user_out(
    no_grace_server: LiveServer, offline_account: Account, offline_browser: requests.Session
) -> None:
    base = no_grace_server.url
    cookies = offline_browser.cookies.copy()
    assert signs_in(base, cookies)
    got = authlib_sign_in(base, offline_account, offline_browser, RP_STEPS, OFFLINE_SCOPE)
    assert got["has_refresh_token"]
    refreshed = got["refresh"]
    assert_refreshed_then_revoked(refreshed, got["claims"])
    assert refreshed["reuse"] == "invalid_grant"
    assert refreshed["userinfo_after_reuse"] == 401
    out = got["logout"]
    state = query(out["url"])["state"]
    assert query(out["url"])["id_token_hint"]
    assert_signed_out(base, out["returned"], state, cookies)
    # Authlib's site took the state it sent back (and forgot it).
    assert out["validated"] and out["state_data"] == {"post_logout_redirect_uri": AFTER_LOGOUT}


def test_openid_client_refreshes_and_signs_its_user_out(
    node: str,
    no_grace_server: LiveServer,
    offline_account: Account,
    offline_browser: requests.Session,
) -> None:
    base = no_grace_server.url
    cookies = offline_browser.cookies.copy()
    assert signs_in(base, cookies)
    got = node_sign_in(node, base, offline_account, offline_browser, RP_STEPS, OFFLINE_SCOPE)
    assert got["token"]["has_refresh_token"]
    refreshed = got["refresh"]
    assert_refreshed_then_revoked(refreshed, got["claims"])
    assert refreshed["id_token_header"]["alg"] == got["id_token_header"]["alg"]
    assert refreshed["reuse"]["refused"] and refreshed["reuse"]["error"] == "invalid_grant"
    after = refreshed["userinfo_after_reuse"]
    assert after["refused"] and after["status"] == 401, after
    out = got["logout"]
    sent = query(out["url"])
    assert sent["client_id"] == offline_account.client_id and sent["id_token_hint"]
    assert sent["post_logout_redirect_uri"] == AFTER_LOGOUT and sent["state"] == out["state"]
    assert_signed_out(base, out["returned"], out["state"], cookies)
