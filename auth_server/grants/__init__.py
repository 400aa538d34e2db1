"""The grants of the token endpoint, as Authlib grant classes registered on the server."""

from __future__ import annotations

from typing import Any

from auth_server.grants.authorization_code import CodeGrant, S256CodeChallenge
from auth_server.grants.client_credentials import XappGrant
from auth_server.grants.credentials import CredentialsGrant, PasswordGrant
from auth_server.grants.device_code import DeviceGrant, DeviceOpenID
from auth_server.grants.oauth_token import SocialGrant
from auth_server.grants.refresh_token import OpenIDRefresh, RefreshGrant
from auth_server.oidc import ArtcatOpenIDCode
from auth_server.token_params import GRANT_TYPES


def registered() -> list[tuple[type[Any], list[Any] | None]]:
    """Return every grant class with its extensions, as ``register_grant`` takes them."""
    return [
        # PKCE (S256 only) when the client sends a challenge; required of public clients.
        # OpenID Connect: an ID token beside the access token when the scope has openid.
        (CodeGrant, [S256CodeChallenge(required=True), ArtcatOpenIDCode()]),
        (CredentialsGrant, None),
        (PasswordGrant, None),
        (SocialGrant, None),
        (XappGrant, None),
        # RFC 8628: a device polls for its user's approval (an ID token too with openid).
        (DeviceGrant, [DeviceOpenID()]),
        # Rotating refresh tokens; an openid family gets a new ID token.
        (RefreshGrant, [OpenIDRefresh()]),
    ]


__all__ = ["GRANT_TYPES", "registered"]
