"""The parameters of the OAuth endpoints (``/oauth2/authorize``, ``/oauth2/access_token``,
``/oauth2/revoke``, ``/oauth2/introspect``), named in one place: the server reads and checks
them, and its OpenAPI description lists them.

Each parameter has a kind: ``"credential"`` (a client credential or a token: never blank),
``"text"``, or the tuple of values it may take.
"""

from __future__ import annotations

# The query parameters of the browser sign-in (``/oauth2/authorize``).
AUTHORIZE_PARAMS = (
    "client_id",
    "redirect_uri",
    "response_type",
    "state",
    "scope",
    "code_challenge",
    "code_challenge_method",
    # OpenID Connect (with scope=openid).
    "nonce",
    "prompt",
    "max_age",
)
Kind = str | tuple[str, ...]
CREDENTIAL: Kind = "credential"
TEXT: Kind = "text"

GRANT_TYPES = (
    "authorization_code",
    "client_credentials",
    "credentials",
    "oauth_token",
    "password",
    "urn:ietf:params:oauth:grant-type:device_code",  # RFC 8628
    "refresh_token",
)
# The grants that carry a user's password: never by GET (their every parameter would be in a URL).
PASSWORD_GRANTS = ("credentials", "password")
# The methods of the token endpoint: the reference API answered GET as well as POST
# (URL_CREDENTIALS=refuse takes POST only).
TOKEN_METHODS = ["GET", "POST"]
OAUTH_PROVIDERS = ("facebook", "twitter")
CLIENT_PARAMS: dict[str, Kind] = {"client_id": CREDENTIAL, "client_secret": CREDENTIAL}
# A token request: the grant type, then what each grant reads.
TOKEN_PARAMS: dict[str, Kind] = {
    **CLIENT_PARAMS,
    "grant_type": GRANT_TYPES,
    "code": TEXT,
    "redirect_uri": TEXT,
    "code_verifier": TEXT,
    "device_code": CREDENTIAL,
    "email": TEXT,
    "username": TEXT,
    "password": TEXT,
    "oauth_provider": OAUTH_PROVIDERS,
    "oauth_token": TEXT,
    "oauth_token_secret": TEXT,
    "refresh_token": CREDENTIAL,
    "scope": TEXT,
    "state": TEXT,
}
# A revocation (RFC 7009) or introspection (RFC 7662) request.
TOKEN_HINT_PARAMS: dict[str, Kind] = {
    **CLIENT_PARAMS,
    "token": CREDENTIAL,
    "token_type_hint": TEXT,
}
# Every parameter the OAuth endpoints read: error descriptions may name these (any other name
# is user-controlled text).
OAUTH_PARAMS = frozenset({*TOKEN_PARAMS, *TOKEN_HINT_PARAMS, *AUTHORIZE_PARAMS})
