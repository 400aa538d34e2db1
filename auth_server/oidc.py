"""OpenID Connect Core on the authorization code flow: Authlib's ``OpenIDCode`` extension with
our signing keys, our claims and our codes.

A code requested with the ``openid`` scope remembers the request's ``nonce`` and when the user
signed in; its token response then carries an ID token signed with the current key of the
application's algorithm (ES256 unless it asked for RS256), naming that key's ``kid``. Claims:
``sub`` (the user's id) always; ``name`` and ``updated_at`` with ``profile``; ``email`` and
``email_verified`` with ``email`` (verified only once the owner proved the address, see
``auth_server.ownership``; the undeliverable placeholder of a social account is never given).
"""

from __future__ import annotations

import time
from typing import Any

from authlib.oauth2.rfc6749 import OAuth2Request
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import current_app, g
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry
from sqlalchemy import select

from auth_server.clients import OAuthClient
from auth_server.context import issuer, services
from auth_server.keys import ALGORITHMS, ES256, ID_TOKEN_TTL, Key, KeyRing
from auth_server.oauth import OPENID
from auth_server.refresh import FamilyUser
from common.models import Application, AuthorizationCode, User

EXTENSION_KEY = "artcat.keys"
# The address a social account without a usable email is given: never shown as an email.
PLACEHOLDER_DOMAIN = "@users.invalid"
NONCE_MAX = 255
# The claims an ID token or the userinfo endpoint may carry (the discovery document lists them).
CLAIMS = (
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "at_hash",
    "amr",
    "name",
    "updated_at",
    "email",
    "email_verified",
)


def keyring() -> KeyRing:
    """Return the current app's signing keys (made on first use)."""
    ring: KeyRing | None = current_app.extensions.get(EXTENSION_KEY)
    if ring is None:
        svc = services()
        ring = current_app.extensions.setdefault(EXTENSION_KEY, KeyRing(svc.settings, svc.stores))
    return ring


def is_openid(scope: str | None) -> bool:
    """Tell whether a scope asks for OpenID Connect."""
    return OPENID in (scope or "").split()


def client_algorithm(client: OAuthClient) -> str:
    """Return the algorithm of the client's ID tokens (ES256 unless it registered another)."""
    alg = client.app.id_token_signed_response_alg
    return alg if alg in ALGORITHMS else ES256


def user_claims(user: User | FamilyUser, scope: str) -> UserInfo:
    """Return the claims about ``user`` that ``scope`` grants."""
    scopes = scope.split()
    claims: dict[str, Any] = {"sub": user.id}
    if "profile" in scopes:
        claims["name"] = user.name
        if user.updated_at is not None:
            claims["updated_at"] = int(user.updated_at.timestamp())
    if "email" in scopes and not user.email.endswith(PLACEHOLDER_DOMAIN):
        claims["email"] = user.email
        claims["email_verified"] = user.email_verified_at is not None
    return UserInfo(claims)


def hinted_subject(hint: str, client_id: str) -> str | None:
    """Return the ``sub`` of an ``id_token_hint``: an ID token this server signed for this
    client (expired or not: a hint names a user, it grants nothing); None for anything else.

    Only the published keys and their algorithms verify it: ``alg: none``, an HMAC keyed with
    a public key, or a changed signature or claim are all refused.
    """
    try:
        token = jwt.decode(
            hint,
            KeySet.import_key_set(keyring().jwks()),
            registry=JWSRegistry(algorithms=list(ALGORITHMS)),
        )
    except (JoseError, ValueError, TypeError, KeyError):
        return None
    claims = token.claims
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    sub = claims.get("sub")
    if claims.get("iss") != issuer() or client_id not in audiences or not isinstance(sub, str):
        return None
    return sub


class ArtcatOpenIDCode(OpenIDCode):
    """ID tokens for the code grant, signed with the current key of the client's algorithm."""

    def exists_nonce(self, nonce: str, request: OAuth2Request) -> bool:
        """Tell whether a code of this client already carried ``nonce`` (a replayed request)."""
        client_id = request.payload.client_id
        with services().stores.sessions() as db:
            found = db.scalar(
                select(AuthorizationCode.id)
                .join(Application, Application.id == AuthorizationCode.application_id)
                .where(AuthorizationCode.nonce == nonce, Application.client_id == client_id)
                .limit(1)
            )
        return found is not None

    def _key(self, client: OAuthClient) -> tuple[str, Key]:
        """Return the kid and key that sign this request's ID token (one per request)."""
        alg = client_algorithm(client)
        cached: dict[str, tuple[str, Key]] = g.setdefault("oidc_keys", {})
        if alg not in cached:
            cached[alg] = keyring().signing_key(alg)
        return cached[alg]

    def resolve_client_private_key(self, client: OAuthClient) -> Key:
        """Return the private key that signs the client's ID tokens now."""
        return self._key(client)[1]

    def get_client_algorithm(self, client: OAuthClient) -> str:
        """Return the client's algorithm (``id_token_signed_response_alg``, ES256 by default)."""
        return client_algorithm(client)

    def get_encode_header(self, client: OAuthClient) -> dict[str, str]:
        """Name the algorithm and the key, so that verifiers pick it from the JWKS."""
        return {"alg": client_algorithm(client), "kid": self._key(client)[0], "typ": "JWT"}

    def get_client_claims(self, client: OAuthClient) -> dict[str, Any]:
        """Return the issuer, audience and lifetime of the client's ID tokens."""
        now = int(time.time())
        return {
            "iss": issuer(),
            "aud": [client.get_client_id()],
            "iat": now,
            "exp": now + ID_TOKEN_TTL,
        }

    def generate_user_info(self, user: User | FamilyUser, scope: str) -> UserInfo:
        """Return the claims the token's scope grants."""
        return user_claims(user, scope)
