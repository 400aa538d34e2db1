"""Two stock OpenID Connect relying parties, unmodified, sign their users in with artcat over
real HTTP: Authlib's OIDC client (a Flask app configured from the discovery document) and the
npm library openid-client (an OpenID-certified RP, run by Node.js from tests/rp). Each does
discovery, the code flow with PKCE and a nonce, validates the ID token against the JWKS
(signature, iss, aud, nonce, expiry) and calls userinfo; the test plays the browser."""

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
from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify
from sqlalchemy.orm import Session, sessionmaker

from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.authorize_support import HTTPS_CB, approve
from tests.functional.conftest import LiveServer
from tests.functional.oidc_support import DISCOVERY, SCOPE, ask_for, forget_cached_keys
from tests.pages import Account, sign_in

RP_DIR = Path(__file__).resolve().parents[1] / "rp"
RP_SCRIPT = RP_DIR / "openid_client_rp.mjs"
NPM_TIMEOUT = 300


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


@pytest.fixture(autouse=True)
def fresh_keys(clean_db: Any, stores: Stores, auth_settings: AuthSettings) -> None:
    """Each test starts from an empty key table, as the servers then learn."""
    forget_cached_keys(stores, auth_settings)


@pytest.fixture
def browser(http_auth_server: LiveServer, account: Account) -> Iterator[requests.Session]:
    """The application's user, signed in on the auth server in a browser-like session."""
    with requests.Session() as web:
        assert sign_in(web, http_auth_server.url, account.email).status_code == 302
        yield web


# What the Authlib relying party does once signed in, by name (refresh and logout are added
# here, and to the openid-client script's STEPS, when the server offers them).
AUTHLIB_STEPS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "userinfo": lambda client, token: dict(client.userinfo(token=token)),
}


def authlib_sign_in(
    base: str, account: Account, web: requests.Session, steps: Sequence[str] = ("userinfo",)
) -> dict[str, Any]:
    """Sign in with a Flask site using Authlib's OIDC client, configured from the discovery
    document only: its redirect, the consent (``web`` plays the browser), its callback, which
    checks the ID token against the JWKS and then runs ``steps``."""
    site = Flask("authlib_relying_party")
    site.secret_key = "the relying party's own secret"
    oauth = OAuth(site)
    oauth.register(
        "artcat",
        client_id=account.client_id,
        client_secret=account.client_secret,
        server_metadata_url=f"{base}{DISCOVERY}",
        client_kwargs={"scope": SCOPE, "code_challenge_method": "S256"},
    )

    @site.route("/login")
    def login() -> Any:
        return oauth.artcat.authorize_redirect(HTTPS_CB)

    @site.route("/callback")
    def callback() -> Any:
        token = oauth.artcat.authorize_access_token()  # the ID token checked here
        out = {"claims": dict(token["userinfo"]), "token_type": token["token_type"]}
        for name in steps:
            out[name] = AUTHLIB_STEPS[name](oauth.artcat, token)
        return jsonify(out)

    browser = site.test_client()
    start = browser.get("/login")
    assert start.status_code == 302, start.text
    callback_url = approve(web, base, start.headers["Location"])
    back = browser.get("/callback?" + urlsplit(callback_url).query)
    assert back.status_code == 200, back.text
    answer: dict[str, Any] = back.get_json()
    return answer


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
    **tamper: str,
) -> dict[str, Any]:
    """Sign in with openid-client: its authorization URL, the consent (``web`` plays the
    browser), its code exchange and ID token check, then ``steps`` (``tamper``: what the
    script is told to expect instead of what it sent, to see it refuse)."""
    config = {
        "issuer": base,
        "client_id": account.client_id,
        "client_secret": account.client_secret,
        "redirect_uri": HTTPS_CB,
        "scope": SCOPE,
    }
    started = openid_client(node, {**config, "step": "start"})
    url = started.pop("authorization_url")
    assert url.startswith(f"{base}/oauth2/authorize?")
    assert "code_challenge_method=S256" in url and f"nonce={started['nonce']}" in url
    callback = approve(web, base, url)
    assert callback.startswith(HTTPS_CB + "?")
    return openid_client(
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
