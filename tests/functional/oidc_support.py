"""A stock relying party for the OpenID Connect tests: a Flask app using Authlib's OIDC client,
unmodified, configured from the discovery document only (as the README's example is); and
requests of the flow by hand (a grant consented and redeemed, a prompt=none request)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any
from urllib.parse import urlsplit

import requests
from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify, request
from flask.testing import FlaskClient
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from auth_server.keys import KeyRing, version_key
from common.models import Application
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.authorize_support import HTTPS_CB, approve, authorize_url
from tests.pages import Account, query

SCOPE = "openid profile email"
DISCOVERY = "/.well-known/openid-configuration"


def artcat_site(name: str, base: str, account: Account, scope: str) -> tuple[Flask, OAuth]:
    """Return a Flask app and its Authlib registry, whose ``artcat`` client (the account's
    application, with PKCE) is configured from the discovery document only."""
    site = Flask(name)
    site.secret_key = "the relying party's own secret"
    oauth = OAuth(site)
    oauth.register(
        "artcat",
        client_id=account.client_id,
        client_secret=account.client_secret,
        server_metadata_url=f"{base}{DISCOVERY}",
        client_kwargs={"scope": scope, "code_challenge_method": "S256"},
    )
    return site, oauth


def relying_party(base: str, account: Account, scope: str = SCOPE) -> FlaskClient:
    """Return a test client of a Flask app that signs its users in with artcat."""
    rp, oauth = artcat_site("relying_party", base, account, scope)

    @rp.route("/login")
    def login() -> Any:
        return oauth.artcat.authorize_redirect(HTTPS_CB, **request.args)

    @rp.route("/callback")
    def callback() -> Any:
        token = oauth.artcat.authorize_access_token()
        got = oauth.artcat.userinfo(token=token)
        endpoint = oauth.artcat.load_server_metadata()["userinfo_endpoint"]
        posted = oauth.artcat.post(endpoint, token=token)
        posted.raise_for_status()
        return jsonify(
            token=dict(token), claims=dict(token["userinfo"]), get=dict(got), post=posted.json()
        )

    return rp.test_client()


def sign_in_with_artcat(
    rp: FlaskClient, web: requests.Session, base: str, **params: str
) -> dict[str, Any]:
    """Run the relying party's sign-in: its redirect, the consent page, its callback."""
    start = rp.get("/login", query_string=params)
    assert start.status_code == 302, start.text
    location = approve(web, base, start.headers["Location"])
    back = rp.get("/callback?" + urlsplit(location).query)
    assert back.status_code == 200, back.text
    data: dict[str, Any] = back.get_json()
    return data


def ask_for(sessions: sessionmaker[Session], account: Account, alg: str | None) -> None:
    """Register the application's ID token algorithm (None: the server's default)."""
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.id == account.app_id)
            .values(id_token_signed_response_alg=alg)
        )


def forget_cached_keys(stores: Stores, settings: AuthSettings) -> None:
    """Tell the servers the keys changed (a test emptied the database under them)."""
    stores.redis.incr(version_key(settings.redis_prefix))


def keyring(stores: Stores, settings: AuthSettings) -> KeyRing:
    """Return the keys as an operator's command sees them."""
    return KeyRing(settings, stores)


def openid_url(base: str, account: Account, **extra: str) -> str:
    """Return an OpenID Connect authorize URL of the account's application (scope openid)."""
    return authorize_url(
        base,
        client_id=account.client_id,
        redirect_uri=HTTPS_CB,
        response_type="code",
        **{"scope": "openid", "state": "s-1", **extra},
    )


def silently(web: requests.Session, base: str, account: Account, **extra: str) -> dict[str, str]:
    """Ask with prompt=none; return the answer's parameters (a code, or an error)."""
    r = web.get(openid_url(base, account, prompt="none", **extra), allow_redirects=False)
    assert r.status_code == 302, r.text
    assert r.headers["Location"].startswith(HTTPS_CB + "?")
    return query(r.headers["Location"])


def redeem_code(base: str, account: Account, code: str) -> dict[str, Any]:
    """Exchange a code as the account's application; return the token response."""
    r = requests.post(
        f"{base}/oauth2/access_token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": HTTPS_CB},
        auth=(account.client_id, account.client_secret),
        timeout=10,
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def grant_and_redeem(
    web: requests.Session, base: str, account: Account, scope: str
) -> dict[str, Any]:
    """Consent on the page and redeem the code: the application then holds a live grant."""
    url = openid_url(base, account, nonce=secrets.token_urlsafe(8), scope=scope)
    code = query(approve(web, base, url))["code"]
    return redeem_code(base, account, code)


def jws_header(id_token: str) -> dict[str, Any]:
    """Return the protected header of a compact JWS without verifying it."""
    part = id_token.split(".")[0]
    return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))


def b64(data: bytes) -> str:
    """Return base64url without padding (JOSE's encoding)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forgeries(token: str, jwks: dict[str, Any], sub: str) -> list[str]:
    """Return altered copies of an ID token, each claiming to be ``sub``'s."""
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forged_body = b64(json.dumps({**claims, "sub": sub}).encode())
    kid = jws_header(token)["kid"]
    public = json.dumps(next(k for k in jwks["keys"] if k["kid"] == kid)).encode()
    none_head = b64(json.dumps({"alg": "none", "kid": kid}).encode())
    hs_head = b64(json.dumps({"alg": "HS256", "kid": kid}).encode())
    hs_sig = b64(hmac.new(public, f"{hs_head}.{forged_body}".encode(), hashlib.sha256).digest())
    return [
        f"{head}.{forged_body}.{sig}",  # the claims changed under the signature
        f"{head}.{body}.{b64(secrets.token_bytes(64))}",  # another signature
        f"{none_head}.{forged_body}.",  # alg none
        f"{hs_head}.{forged_body}.{hs_sig}",  # HS256 keyed with the public key
        "not.a.token",
    ]
