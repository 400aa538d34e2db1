"""The OAuth 2 authorization server: Authlib's Flask server with our grants, clients and tokens.

What is ours: requests read from a query string, a form or a JSON body (the reference API took
all three); one client authentication method per request; opaque tokens hashed at rest and
published to Redis; RFC 6749's response shape (integer ``expires_in``) unless the application was
registered for the reference API's (``expires_in`` as a timestamp); ``token_type`` always; the
audit log; errors as ``{error, error_description[, state]}``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6749.errors import InvalidClientError, InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc9207 import IssuerParameter
from flask import Flask, Request, current_app, g, request
from sqlalchemy.orm import Session

from auth_server.audit import audit
from auth_server.clients import OAuthClient, query_client
from auth_server.context import bare_request, current_request, issuer, services
from auth_server.grace_pairs import GracePairs
from auth_server.inputs import is_clean
from auth_server.oauth import BEARER, error_response, parse_scope, token_ttl
from auth_server.params import FORM, JSON, form_pairs, json_body, request_params
from auth_server.refresh import (
    Presented,
    Renewed,
    discard_renewed,
    issue_beside,
    short_lived,
    wants_refresh,
)
from auth_server.token_params import OAUTH_PARAMS, PASSWORD_GRANTS
from common.api.constants import BAD_CLIENT
from common.api.errors import APIError
from common.ids import format_ts
from common.redis_exchange import exchange_of
from common.tokens import TOKENS

EXTENSION_KEY = "artcat.oauth_server"
# A stand-in for Authlib's per-request https check: TLS is the deployment's business (PUBLIC_URL
# https, HSTS at the proxy). Behind a TLS-terminating proxy this app sees plain http, so the check
# would refuse every request there.
_TRANSPORT_CHECKED_ELSEWHERE = "https://transport.invalid/"
# Parameters named in error descriptions; any other name is user-controlled text.
KNOWN_PARAMS = OAUTH_PARAMS
# The mark of a token description that comes with a refresh token (dropped by save_token).
WITH_REFRESH = "with_refresh_token"


def _refuse_json_non_strings(req: Request) -> None:
    """Refuse a JSON body whose OAuth parameter is not a string (never coerced to text).

    ``request_params`` turns ``{"client_id": true}`` into the text "True"; every OAuth parameter
    is a string (RFC 6749 appendix A), so another JSON type is a malformed request.
    """
    mimetype = req.mimetype or ""
    if mimetype != JSON and not mimetype.endswith("+json"):
        return
    body = json_body(req)
    if not isinstance(body, dict):
        return
    for name in sorted(KNOWN_PARAMS & body.keys()):
        if not isinstance(body[name], str):
            raise InvalidRequestError(description=f"The {name} parameter must be a string.")


class Payload(OAuth2Payload):
    """The parameters of a request: query string, then form or JSON body (the body wins)."""

    def __init__(self, data: dict[str, str], datalist: dict[str, list[str]]) -> None:
        self._data = data
        self._datalist = datalist

    @property
    def data(self) -> dict[str, str]:
        """Return one value per parameter."""
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        """Return every value of every parameter (to refuse repeated ones)."""
        return self._datalist


class OAuthRequest(OAuth2Request):
    """An OAuth request read the reference API's way; empty parameters count as absent."""

    def __init__(self, req: Request) -> None:
        super().__init__(req.method, _TRANSPORT_CHECKED_ELSEWHERE)
        self.http = req
        # Set here, not given: Authlib's ``headers or {}`` would count the headers, which reads
        # every key of the WSGI environ.
        self.headers = req.headers
        try:
            raw = request_params(req)
        except APIError as ex:
            raise InvalidRequestError(description=ex.message) from None
        _refuse_json_non_strings(req)
        state = raw.get("state")
        if state and is_clean(state):
            g.oauth_state = state  # echoed in the error body, whatever goes wrong next
        data: dict[str, str] = {}
        for name, value in raw.items():
            if not is_clean(value) or not is_clean(name, 200):
                what = f"The {name} parameter" if name in KNOWN_PARAMS else "A parameter"
                raise InvalidRequestError(description=f"{what} is malformed.")
            if value != "":  # RFC 6749 3.1: a parameter without a value is an omitted one
                data[name] = value
        datalist: dict[str, list[str]] = {}
        for name, values in req.args.lists():
            datalist.setdefault(name, []).extend(v for v in values if v != "")
        if (req.mimetype or "") == FORM:  # only a form body fills ``request.form``
            for name, value in form_pairs(req):
                found = datalist.setdefault(name, [])
                if value != "":
                    found.append(value)
        self.payload = Payload(data, datalist)
        self._form = data

    @property
    def uri(self) -> str:
        """Return the request's URL, built when asked only (a token request never asks, and
        building it costs a tenth of a refresh)."""
        return self.http.url

    @uri.setter
    def uri(self, _placeholder: str) -> None:
        """Ignore the stand-in URL given to Authlib's constructor."""

    @property
    def args(self) -> Any:
        """Return the query string."""
        return self.http.args

    @property
    def form(self) -> dict[str, str]:
        """Return every parameter (Authlib's grants read the token request from here)."""
        return self._form


def request_db(oauth_request: OAuth2Request) -> Session:
    """Return the database session of this request's transaction (closed after the request)."""
    db: Session | None = g.get("oauth_db")
    if db is None:
        db = services().stores.sessions()
        g.oauth_db = db
    return db


def grace_pairs() -> GracePairs:
    """Return the store of the pairs kept for the refresh grace period."""
    svc = services()
    return GracePairs(
        svc.stores.redis,
        prefix=svc.settings.redis_prefix,
        secret_key=svc.settings.secret_key,
        seconds=svc.settings.refresh_grace_period,
    )


def close_request_db(_exc: BaseException | None = None) -> None:
    """Close the request's database session, if it opened one (after the request)."""
    db: Session | None = g.pop("oauth_db", None)
    if db is not None:
        db.close()  # rolls back whatever a failed request left uncommitted


class Server(AuthorizationServer):
    """Authlib's Flask authorization server with our requests, clients, tokens and errors."""

    def create_oauth2_request(self, given: object) -> OAuthRequest:
        """Return the OAuth request given (``auth_server.token_path`` reads its own), else read
        the current Flask request."""
        if isinstance(given, OAuthRequest):
            return given
        return OAuthRequest(request)

    def get_token_grant(self, oauth_request: OAuth2Request) -> Any:
        """Find the grant; a request without grant_type, or by a method the endpoint does not
        take for it, is malformed, not unsupported.

        RFC 6749 3.2 asks for POST; the reference API also answered GET (every parameter in the
        URL), which URL_CREDENTIALS=accept keeps for every grant but those of a password.
        """
        method = oauth_request.method
        get = method == "GET" and services().settings.url_credentials_accepted
        if method != "POST" and not get:
            raise InvalidRequestError(description="Send token requests with POST.")
        grant_type = oauth_request.payload.grant_type
        if not grant_type:
            raise InvalidRequestError(description="The grant_type parameter is required.")
        if get and grant_type in PASSWORD_GRANTS:
            raise InvalidRequestError(
                description="Send password grants with POST: a password never goes in a URL."
            )
        return super().get_token_grant(oauth_request)

    def authenticate_client(
        self, oauth_request: OAuth2Request, methods: list[str], endpoint: str = "token"
    ) -> OAuthClient:
        """Authenticate with exactly one method (RFC 6749 2.3); audit every failure."""
        form = oauth_request.form
        basic = basic_credentials(oauth_request.headers.get("Authorization", ""))
        if basic is not None and (
            "client_secret" in form or form.get("client_id", basic[0]) != basic[0]
        ):
            raise InvalidRequestError(description="Use one client authentication method only.")
        try:
            if basic == ("", ""):
                raise InvalidClientError(description="The Basic credentials are malformed.")
            client: OAuthClient = super().authenticate_client(oauth_request, methods, endpoint)
        except InvalidClientError:
            client_id = (basic or (form.get("client_id", ""), ""))[0]
            audit("client.auth_failed", client_id=client_id[:64], ip=current_request().remote_addr)
            raise InvalidClientError(description=BAD_CLIENT, status_code=401) from None
        return client

    def validate_requested_scope(self, scope: str | None) -> None:
        """Refuse unknown scopes, and profile or email without openid (invalid_scope)."""
        parse_scope(scope)

    def generate_token(
        self,
        grant_type: str,
        client: OAuthClient,
        user: Any = None,
        scope: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        """Describe the token to issue (with a refresh token or not); ``save_token`` issues it."""
        scope = client.get_allowed_scope(scope)
        settings = services().settings
        xapp = user is None
        ttl = settings.xapp_token_ttl if xapp else token_ttl(settings, scope)
        if short_lived(client.app, user, grant_type):
            ttl = settings.refresh_access_token_ttl  # short-lived: refresh tokens renew them
        token: dict[str, Any] = {"token_type": BEARER, "expires_in": expires_in or ttl}
        if scope:
            token["scope"] = scope
        if include_refresh_token and wants_refresh(client.app, user, scope, grant_type):
            token[WITH_REFRESH] = True
        return token

    def save_token(self, token: dict[str, Any], oauth_request: OAuth2Request) -> None:
        """Issue the token in the request's transaction, publish it, commit, then shape the answer.

        It is published before the commit on purpose: an expiry that can see the row (a replayed
        code, a deleted application) runs after the commit, so its tombstone always lands after
        this record. Published after the commit, a plain SET could overwrite that tombstone.
        """
        svc = services()
        client: OAuthClient = oauth_request.client
        user = oauth_request.user
        code = oauth_request.authorization_code
        db = request_db(oauth_request)
        tokens = svc.stores.tokens
        kind = "access" if user is not None else "xapp"
        scope = token.get("scope", "")
        renewed = _written_by_rotation(oauth_request, token, kind, scope)
        refresh_token = None
        if renewed is not None:
            issued, refresh_token = renewed.access, renewed.refresh_value
        else:
            issued = tokens.new(
                kind=kind,
                application_id=client.app.id,
                user_id=user.id if user is not None else None,
                ttl=token["expires_in"],
                scope=scope,
                code_id=code.id if code is not None else None,
            )
            if token.get(WITH_REFRESH):
                ttl = svc.settings.refresh_token_ttl
                refresh_token = issue_beside(db, oauth_request, issued, ttl=ttl)
            else:
                db.execute(TOKENS.insert(), issued.values())
        if oauth_request.credential is not None:
            # A device grant (RFC 8628) remembers its token: revoking the grant expires it.
            oauth_request.credential.issued(db, issued.row.id)
        row = issued.row
        body: dict[str, Any] = {"access_token": issued.value, "token_type": BEARER}
        if client.app.standard_token_response:
            body["expires_in"] = token["expires_in"]
        else:
            body["expires_in"] = format_ts(row.expires_at)  # the reference API's timestamp
        if row.scope:
            body["scope"] = row.scope
        if oauth_request.payload.state:
            body["state"] = oauth_request.payload.state
        if refresh_token is not None:
            body["refresh_token"] = refresh_token
        # One round trip: the token's record, and the pair a refresh bought (before the commit:
        # a concurrent refresh that finds the token rotated finds the pair too, within the
        # grace period).
        rotated = oauth_request.refresh_token if refresh_token is not None else None
        commands = [tokens.publish_command(row)]
        if rotated is not None:
            commands.append(grace_pairs().command(rotated.digest, body))
        sent = [command for command in commands if command is not None]
        if sent:
            exchange_of(svc.stores.redis).run(sent)
        db.commit()
        audit(
            "token.issued",
            grant=oauth_request.payload.grant_type,
            token_id=row.id,
            application_id=row.application_id,
            user_id=row.user_id,
            scope=row.scope,
            expires_at=format_ts(row.expires_at),
            refresh=refresh_token is not None,
            ip=current_request().remote_addr,
        )
        token.clear()
        token.update(body)

    def handle_response(
        self, status_code: int, payload: Any, headers: list[tuple[str, str]]
    ) -> Any:
        """Answer: a Flask response, or (status, payload, headers) for a request answered before
        Flask (``auth_server.token_path`` renders it as Flask would)."""
        if bare_request.get() is not None:
            return status_code, payload, headers
        return super().handle_response(status_code, payload, headers)

    def handle_error_response(self, oauth_request: OAuth2Request, error: OAuth2Error) -> Any:
        """Answer an error: a redirect to a validated client URI, else our JSON body."""
        if error.redirect_uri:
            return super().handle_error_response(oauth_request, error)
        return self.handle_response(*error_response(error, oauth_request.payload.state))


def _written_by_rotation(
    oauth_request: OAuth2Request, token: dict[str, Any], kind: str, scope: str
) -> Renewed | None:
    """Return the pair the refresh's rotation wrote (``auth_server.refresh.Renewal``) when it
    is the token described, else None (and the pair written is taken back: this one is
    issued instead)."""
    presented = oauth_request.refresh_token
    if not isinstance(presented, Presented) or presented.renewed is None:
        return None
    renewed = presented.renewed
    row = renewed.access.row
    user = oauth_request.user
    if (
        token.get(WITH_REFRESH)
        and kind == row.kind
        and user is not None
        and user.id == row.user_id
        and scope == row.scope
        and token["expires_in"] == renewed.access_ttl
        and oauth_request.authorization_code is None
        and oauth_request.credential is None
    ):
        return renewed
    discard_renewed(request_db(oauth_request), renewed)
    return None


class Issuer(IssuerParameter):
    """RFC 9207: every authorization response names the issuer."""

    def get_issuer(self) -> str:
        """Return this server's issuer."""
        return issuer()


def basic_credentials(header: str) -> tuple[str, str] | None:
    """Return Basic credentials; ``("", "")`` when malformed; None for another scheme.

    Authlib's own parser lets undecodable bytes through as an exception (a 500).
    """
    if header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return "", ""
    client_id, sep, secret = decoded.partition(":")
    # RFC 6749 2.3.1: the id and secret are form-encoded before Basic encoding.
    client_id, secret = unquote(client_id), unquote(secret)
    if not sep or not client_id or not secret or not (is_clean(client_id) and is_clean(secret)):
        return "", ""
    return client_id, secret


def install(
    app: Flask,
    grants: Iterable[tuple[type[Any], list[Any] | None]],
    endpoints: Iterable[type[Any]],
) -> Server:
    """Create the server with these grants and endpoints, and keep it on the app."""
    server = Server(app, query_client=query_client)
    for grant, extensions in grants:
        server.register_grant(grant, extensions)
    for endpoint in endpoints:
        server.register_endpoint(endpoint)
    server.register_extension(Issuer())
    app.teardown_request(close_request_db)
    app.extensions[EXTENSION_KEY] = server
    return server


def authorization_server() -> Server:
    """Return the current app's authorization server."""
    server: Server = current_app.extensions[EXTENSION_KEY]
    return server
