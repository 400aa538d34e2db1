"""Dynamic client registration and RP-initiated logout in the tests: initial access tokens,
registering a client, and running the code + PKCE flow with it."""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from typing import Any

import requests
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from auth_server.registration import issue_initial_token
from tests.functional.authorize_support import HTTPS_CB, approve, authorize_url
from tests.pages import query
from tests.servers import forget_sign_in_throttle

REGISTER = "/oauth2/register"
LOGOUT = "/oauth2/logout"
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 appendix B
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=")
AFTER_LOGOUT = "https://client.example/signed-out"
# A public (native or browser) client: no secret, PKCE, the code flow, a sign-out callback.
PUBLIC_CLIENT: dict[str, Any] = {
    "client_name": "Registered Viewer",
    "redirect_uris": [HTTPS_CB],
    "post_logout_redirect_uris": [AFTER_LOGOUT],
    "token_endpoint_auth_method": "none",
    "grant_types": ["authorization_code"],
    "response_types": ["code"],
    "contacts": ["dev@client.example"],
    "client_uri": "https://client.example/",
}


def initial_token(
    sessions: sessionmaker[Session], *, uses: int = 1, expires: timedelta = timedelta(days=1)
) -> str:
    """Issue an initial access token as ``artcat apps registration-token`` does."""
    with sessions() as s, s.begin():
        _, value = issue_initial_token(s, uses=uses, expires_in=expires)
    return value


def bearer(token: str) -> dict[str, str]:
    """Return an Authorization header of a Bearer token."""
    return {"Authorization": f"Bearer {token}"}


def register(
    base: str, token: str | None, metadata: dict[str, Any] | None = None
) -> requests.Response:
    """POST a registration (RFC 7591) with an initial access token (None: none)."""
    headers = bearer(token) if token is not None else {}
    body = PUBLIC_CLIENT if metadata is None else metadata
    return requests.post(f"{base}{REGISTER}", json=body, headers=headers, timeout=10)


def forget_registrations(redis: Redis, prefix: str) -> None:
    """Forget the registrations counted per address (and the sign-in attempts) of the run."""
    forget_sign_in_throttle(redis, prefix)


def code_with_pkce(web: requests.Session, base: str, client_id: str, **extra: str) -> str:
    """Run the consent page as the signed-in user; return the code (S256 challenge)."""
    url = authorize_url(
        base,
        client_id=client_id,
        redirect_uri=HTTPS_CB,
        response_type="code",
        code_challenge=CHALLENGE.decode(),
        code_challenge_method="S256",
        state="st",
        **extra,
    )
    return query(approve(web, base, url))["code"]


def redeem(base: str, client_id: str, code: str) -> requests.Response:
    """Exchange a code as a public client (its id and the PKCE verifier, no secret)."""
    return requests.post(
        f"{base}/oauth2/access_token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": HTTPS_CB,
            "client_id": client_id,
            "code_verifier": VERIFIER,
        },
        timeout=10,
    )
