"""RFC 8414 authorization server metadata at ``/.well-known/oauth-authorization-server``, and
the server's OpenAPI description of its own routes at ``/oauth2/openapi.json``."""

from __future__ import annotations

from typing import Any

from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oidc.discovery import OpenIDProviderMetadata
from flask import Response, current_app, jsonify

from auth_server.context import issuer, services
from auth_server.grants import GRANT_TYPES
from auth_server.keys import ALGORITHMS
from auth_server.logout import LOGOUT_PATH
from auth_server.oauth import OIDC_SCOPES
from auth_server.oidc import CLAIMS
from auth_server.registration import OFF, REGISTER_PATH
from auth_server.views.described import Described
from auth_server.views.openid import JWKS_PATH, USERINFO_PATH
from common.api.constants import SUPPORTED_SCOPES
from common.openapi import compose
from common.openapi.parts import json_response, op

SECRET_METHODS = ["client_secret_basic", "client_secret_post"]
# "none": public clients (no secret, PKCE required) at the token and revocation endpoints.
CLIENT_AUTH_METHODS = [*SECRET_METHODS, "none"]


def server_metadata(base: str, *, registration: bool = False) -> AuthorizationServerMetadata:
    """Return the metadata document of a server whose issuer is ``base`` (``registration``:
    it offers dynamic client registration)."""
    doc: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth2/authorize",
        "token_endpoint": f"{base}/oauth2/access_token",
        "revocation_endpoint": f"{base}/oauth2/revoke",
        "introspection_endpoint": f"{base}/oauth2/introspect",
        # RFC 8628: the device flow (its grant type is in grant_types_supported).
        "device_authorization_endpoint": f"{base}/oauth2/device_authorization",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        # credentials and oauth_token are the reference API's own (non-RFC) grant types.
        "grant_types_supported": list(GRANT_TYPES),
        "scopes_supported": sorted(SUPPORTED_SCOPES),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "introspection_endpoint_auth_methods_supported": SECRET_METHODS,
        # RFC 9207: authorization responses carry iss (mix-up attack defence).
        "authorization_response_iss_parameter_supported": True,
    }
    if registration:
        doc["registration_endpoint"] = f"{base}{REGISTER_PATH}"  # RFC 7591
    return AuthorizationServerMetadata(doc)


def openid_metadata(base: str, *, registration: bool = False) -> OpenIDProviderMetadata:
    """Return the OpenID Connect discovery document: exactly what this server supports."""
    doc: dict[str, Any] = {
        **server_metadata(base, registration=registration),
        "userinfo_endpoint": f"{base}{USERINFO_PATH}",
        "jwks_uri": f"{base}{JWKS_PATH}",
        "scopes_supported": sorted({*SUPPORTED_SCOPES, *OIDC_SCOPES}),
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": list(ALGORITHMS),
        "claims_supported": list(CLAIMS),
        "prompt_values_supported": ["none", "login", "consent"],
        "claims_parameter_supported": False,
        "request_parameter_supported": False,
        "request_uri_parameter_supported": False,
        # RP-Initiated Logout 1.0.
        "end_session_endpoint": f"{base}{LOGOUT_PATH}",
    }
    return OpenIDProviderMetadata(doc)


def _registration() -> bool:
    return services().settings.client_registration != OFF


def openid_configuration() -> Response:
    """Describe this server as an OpenID Provider (OpenID Connect Discovery 1.0)."""
    resp = jsonify(dict(openid_metadata(issuer(), registration=_registration())))
    resp.headers["Cache-Control"] = "public, max-age=3600"
    return resp


def metadata() -> Response:
    """Describe the endpoints, grants, scopes and PKCE methods of this server."""
    resp = jsonify(dict(server_metadata(issuer(), registration=_registration())))
    resp.headers["Cache-Control"] = "public, max-age=3600"
    return resp


def description() -> Response:
    """Describe this server's routes (its part of the API's document) in OpenAPI 3.1."""
    return jsonify(compose([current_app.extensions["artcat.openapi"]], issuer()))


# Where the part is served when the services run apart (the proxy sends /oauth2/ here).
DESCRIPTION_PATH = "/oauth2/openapi.json"

bp = Described("discovery", __name__, tag="OAuth")
bp.declare(
    "/.well-known/oauth-authorization-server",
    metadata,
    get=op(
        "server_metadata",
        "Authorization server metadata (RFC 8414)",
        {
            "200": json_response(
                {"type": "object", "required": ["issuer", "token_endpoint"]}, "Metadata"
            )
        },
    ),
)
bp.declare(
    "/.well-known/openid-configuration",
    openid_configuration,
    get=op(
        "openid_configuration",
        "OpenID Provider metadata (OpenID Connect Discovery 1.0)",
        {"200": json_response({"type": "object", "required": ["issuer", "jwks_uri"]}, "Metadata")},
    ),
)
bp.declare(
    DESCRIPTION_PATH,
    description,
    get=op(
        "get_auth_openapi",
        "The authorization server's part of this document",
        {"200": json_response({"type": "object"}, "OpenAPI 3.1")},
        tags=["service"],
    ),
)
