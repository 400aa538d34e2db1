"""``/oauth2/register``: dynamic client registration (RFC 7591), and each registration's own
URI for reading, replacing and deleting it (RFC 7592). See ``auth_server.registration``."""

from __future__ import annotations

from flask import Response, request

from auth_server.context import services
from auth_server.oauth import SlowDownError
from auth_server.registration import OFF, REGISTER_PATH, RegistrationOff
from auth_server.server import authorization_server
from auth_server.throttles import CLIENT_REGISTRATION, throttle
from auth_server.views.described import OAUTH_ERRORS, Described
from common.openapi.parts import INT, STR, STRINGS, Op, Schema, json_response, obj, op, ref


def _offered() -> None:
    if services().settings.client_registration == OFF:
        raise RegistrationOff()


def register() -> Response:
    """RFC 7591: register a client; 201 with its credentials and registration access token."""
    _offered()
    wait = throttle(CLIENT_REGISTRATION).hit(request.remote_addr or "")
    if wait is not None:
        raise SlowDownError(wait)
    response: Response = authorization_server().create_endpoint_response("client_registration")
    return challenged(response)


def configuration(client_id: str) -> Response:
    """RFC 7592: read, replace or delete the registration (its registration access token)."""
    _offered()
    response: Response = authorization_server().create_endpoint_response("client_configuration")
    return challenged(response)


def challenged(response: Response) -> Response:
    """Name the scheme of a refused token (RFC 6750 3)."""
    if response.status_code == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="artcat", error="invalid_token"'
    return response


METADATA: dict[str, Schema] = {
    "redirect_uris": STRINGS,
    "post_logout_redirect_uris": STRINGS,
    "token_endpoint_auth_method": {
        "type": "string",
        "enum": ["client_secret_basic", "client_secret_post", "none"],
    },
    "grant_types": STRINGS,
    "response_types": STRINGS,
    "client_name": STR,
    "client_uri": STR,
    "logo_uri": STR,
    "policy_uri": STR,
    "tos_uri": STR,
    "contacts": STRINGS,
    "id_token_signed_response_alg": {"type": "string", "enum": ["ES256", "RS256"]},
}
CLIENT_INFORMATION = obj(
    {"client_id": STR, "registration_client_uri": STR, "registration_access_token": STR},
    {
        **METADATA,
        "client_secret": STR,
        "client_id_issued_at": INT,
        "client_secret_expires_at": INT,
    },
)


def json_body(schema: Schema) -> Op:
    """Return a JSON request body (registration takes JSON only, RFC 7591 3.1)."""
    return {"required": True, "content": {"application/json": {"schema": schema}}}


REGISTRATION_ERRORS: dict[str, Op] = {
    **OAUTH_ERRORS,
    "400": json_response(ref("OAuthError"), "invalid_redirect_uri, invalid_client_metadata"),
    "401": json_response(ref("OAuthError"), "invalid_token: no valid token"),
    "403": json_response(ref("OAuthError"), "Registration is off (CLIENT_REGISTRATION=off)"),
}
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
CLIENT_ID = {"name": "client_id", "in": "path", "required": True, "schema": STR}

bp = Described("registration", __name__, tag="OAuth")
bp.declare(
    REGISTER_PATH,
    register,
    post=op(
        "register_client",
        "Register a client (RFC 7591)",
        {"201": json_response(CLIENT_INFORMATION, "Registered"), **REGISTRATION_ERRORS},
        description=(
            "With CLIENT_REGISTRATION=token (the default), send an initial access token from "
            "`artcat apps registration-token` as a Bearer token."
        ),
        requestBody=json_body({"type": "object", "properties": METADATA}),
    ),
)
bp.declare(
    f"{REGISTER_PATH}/<client_id>",
    configuration,
    get=op(
        "read_client_registration",
        "Read a client's registration (RFC 7592)",
        {"200": json_response(CLIENT_INFORMATION, "The registration"), **REGISTRATION_ERRORS},
        security=BEARER,
        parameters=[CLIENT_ID],
    ),
    put=op(
        "update_client_registration",
        "Replace a client's registered metadata (RFC 7592)",
        {"200": json_response(CLIENT_INFORMATION, "Updated"), **REGISTRATION_ERRORS},
        security=BEARER,
        parameters=[CLIENT_ID],
        requestBody=json_body(
            {"type": "object", "required": ["client_id"], "properties": METADATA}
        ),
    ),
    delete=op(
        "delete_client_registration",
        "Delete a client's registration: the client is disabled, its tokens end (RFC 7592)",
        {"204": {"description": "Deleted"}, **REGISTRATION_ERRORS},
        security=BEARER,
        parameters=[CLIENT_ID],
    ),
)
