"""OpenID Connect RP-Initiated Logout 1.0 on Authlib's end-session endpoint.

An ``id_token_hint`` must be an ID token this server signed (an expired one too: a hint names a
user, it grants nothing); a ``client_id`` beside it must be in its audience. The user is sent
back only to a ``post_logout_redirect_uri`` the client registered, exactly (with ``state``), and
only when the hint came with it or the user confirmed the sign-out on this server's own form.
Signing out ends every session of the user, as the sign-out page does.
"""

from __future__ import annotations

from typing import Any

from authlib.oidc.rpinitiated import EndSessionEndpoint, EndSessionRequest
from flask import g
from joserfc.jwk import KeySetSerialization

from auth_server.clients import OAuthClient
from auth_server.keys import ALGORITHMS
from auth_server.oidc import keyring
from auth_server.web import sign_out_everywhere

LOGOUT_PATH = "/oauth2/logout"
# Set by the view when the user confirmed the sign-out on the CSRF-protected form.
CONFIRMED = "logout_confirmed"


class EndSession(EndSessionEndpoint):
    """End the user's sessions; send them back to a registered URI, or say they are out."""

    def get_server_jwks(self) -> KeySetSerialization:
        """Return every published key (retired ones too: an old ID token is still a hint)."""
        return keyring().jwks()

    def get_algorithms(self) -> list[str]:
        """Return the algorithms this server signs ID tokens with (never none or HMAC)."""
        return list(ALGORITHMS)

    def resolve_client_from_id_token_claims(self, id_token_claims: dict[str, Any]) -> Any:
        """Return the client of a hint's audience (ours name exactly one client, in a list)."""
        aud = id_token_claims.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud
        if isinstance(audiences, list) and len(audiences) == 1 and isinstance(audiences[0], str):
            return self.server.query_client(audiences[0])
        return None

    def is_post_logout_redirect_uri_legitimate(
        self, request: Any, post_logout_redirect_uri: str, client: Any, logout_hint: str | None
    ) -> bool:
        """Without a hint, send the user back only once they confirmed on this server."""
        return bool(g.get(CONFIRMED))

    def end_session(self, end_session_request: EndSessionRequest) -> None:
        """Sign the user out everywhere, as the sign-out page does."""
        sign_out_everywhere()


def hinted_subject(req: EndSessionRequest) -> str | None:
    """Return the ``sub`` of the request's verified hint, if any."""
    sub = (req.id_token_claims or {}).get("sub")
    return sub if isinstance(sub, str) else None


def client_of(req: EndSessionRequest) -> OAuthClient | None:
    """Return the request's client, when it names an enabled one."""
    client = req.client
    return client if isinstance(client, OAuthClient) else None
