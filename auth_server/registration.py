"""Dynamic client registration: RFC 7591 (``POST /oauth2/register``) and RFC 7592 (read, update
and delete at ``/oauth2/register/<client_id>``), on Authlib's endpoints.

Registering needs an initial access token the operator issued (``artcat apps registration-token``,
``CLIENT_REGISTRATION=token``, the default), nothing (``open``), or is off. Each token is known
by its digest, valid until it expires and for a number of registrations, each use spent in the
transaction that creates the client. A registered client is an application of no owner, with
RFC 6749 token responses, registered for refresh tokens when its ``grant_types`` include
``refresh_token``; its registration access token (digest stored) reads, replaces and
deletes its registration. Deleting disables the application (every token and code ends at once,
as ``artcat apps disable`` does) and forgets the registration.

Metadata is checked by ``auth_server.client_metadata`` (the rules of the command line and the
developer page); ``token_endpoint_auth_method`` ``none`` makes a public client (no secret; PKCE
required). Other metadata (``jwks``, ``software_id``...) is ignored, as RFC 7591 2 lets a server
do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from authlib.oauth2.rfc6749 import JsonPayload, JsonRequest, TokenMixin
from authlib.oauth2.rfc6749.errors import AccessDeniedError
from authlib.oauth2.rfc6750 import InvalidTokenError
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError
from authlib.oauth2.rfc7592 import ClientConfigurationEndpoint
from flask import request as flask_request
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from auth_server.accounts import create_application, new_client_id
from auth_server.audit import audit
from auth_server.client_metadata import REFRESH, URL_FIELDS, Metadata, server_metadata
from auth_server.clients import GRANT_ROLE, OAuthClient, query_client
from auth_server.context import issuer, services
from auth_server.disabling import set_application_enabled
from auth_server.inputs import is_clean
from auth_server.keys import ES256
from auth_server.params import json_body
from common.api.errors import AuthError
from common.bearer import bearer_credential
from common.ids import new_id, utcnow
from common.models import Application, ClientRegistration, InitialAccessToken
from common.tokens import digest, generate_secret

REGISTER_PATH = "/oauth2/register"
OPEN, TOKEN, OFF = "open", "token", "off"
# Kept in the registration row (the application's own columns hold the rest).
EXTRA_FIELDS = (
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "contacts",
    *URL_FIELDS,
)


def registration_uri(client_id: str) -> str:
    """Return a client's ``registration_client_uri``."""
    return f"{issuer()}{REGISTER_PATH}/{client_id}"


class Payload(JsonPayload):
    """The request's JSON object (anything else is invalid metadata, never a 500)."""

    @property
    def data(self) -> dict[str, Any]:
        """Return the JSON body, which must be an object."""
        body = json_body(flask_request)
        if not isinstance(body, dict):
            raise InvalidClientMetadataError(description="The body must be a JSON object.")
        return body

    @property
    def state(self) -> None:
        """Return None: registration requests carry no state (errors read it)."""
        return None


def json_request() -> JsonRequest:
    """Return the current request as Authlib's endpoints read a JSON request."""
    req = JsonRequest(flask_request.method, flask_request.url, flask_request.headers)
    req.payload = Payload()
    return req


def presented_token() -> str:
    """Return the request's Bearer token, or refuse it (401 invalid_token)."""
    try:
        token = bearer_credential(flask_request.headers.get("Authorization"))
    except AuthError:
        token = None
    if not token or not is_clean(token, 512):
        raise InvalidTokenError(description="Send the token as Authorization: Bearer.")
    return token


@dataclass
class Initial:
    """The credential of a registration: an initial access token's row id (None: open)."""

    token_id: str | None


@dataclass
class Registered:
    """A client just registered, with its registration access token (shown once)."""

    client: OAuthClient
    access_token: str


def apply_metadata(app: Application, metadata: dict[str, Any]) -> None:
    """Write registered metadata to the application's own columns."""
    app.name = metadata.get("client_name") or app.name
    app.redirect_uris = list(metadata.get("redirect_uris", []))
    app.post_logout_redirect_uris = list(metadata.get("post_logout_redirect_uris", []))
    alg = metadata.get("id_token_signed_response_alg")
    # The default is stored as no choice, so that it follows the server's.
    app.id_token_signed_response_alg = None if alg in (None, ES256) else alg
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")  # RFC 7591 2
    app.public_client = method == "none"
    app.token_endpoint_auth_method = None if app.public_client else method
    # Enforced at the token endpoint by the ``grant:`` roles (``auth_server.clients``).
    app.roles = [f"{GRANT_ROLE}{grant}" for grant in metadata["grant_types"]]
    # Registered for refresh tokens (``offline_access`` then brings one) exactly when it asked
    # for the grant; dropped by an update, the grant stops working for its families too.
    app.refresh_tokens = REFRESH in metadata["grant_types"]


def _extra(metadata: dict[str, Any]) -> dict[str, Any]:
    """Return the metadata the registration row keeps."""
    return {k: metadata[k] for k in EXTRA_FIELDS if k in metadata}


def _spend(db: Session, token_id: str) -> None:
    """Spend one use of an initial access token, or refuse it (spent or expired meanwhile)."""
    spent = db.execute(
        update(InitialAccessToken)
        .where(
            InitialAccessToken.id == token_id,
            InitialAccessToken.uses_left > 0,
            InitialAccessToken.expires_at > utcnow(),
        )
        .values(uses_left=InitialAccessToken.uses_left - 1)
        .execution_options(synchronize_session=False)
    )
    if getattr(spent, "rowcount", 0) != 1:
        raise InvalidTokenError(description="The initial access token is invalid or used up.")


class JsonEndpoint:
    """What the registration (RFC 7591) and configuration (RFC 7592) endpoints share."""

    def create_endpoint_request(self, request: Any) -> JsonRequest:
        """Read the JSON body (of a POST or PUT)."""
        return json_request()

    def get_server_metadata(self) -> dict[str, Any]:
        """Return what a registration may ask for."""
        return server_metadata()


class Registration(JsonEndpoint, ClientRegistrationEndpoint):
    """RFC 7591: register a client (201 with its id, secret and registration access token)."""

    def __init__(self, server: Any = None) -> None:
        super().__init__(server, claims_classes=[Metadata])

    def authenticate_token(self, request: Any) -> Initial:
        """Take an initial access token with a use left (or nothing, when registration is open)."""
        if services().settings.client_registration == OPEN:
            return Initial(None)
        value = presented_token()
        with services().stores.reads() as db:
            row = db.scalar(
                select(InitialAccessToken).where(InitialAccessToken.digest == digest(value))
            )
        if row is None or row.uses_left < 1 or row.expires_at <= utcnow():
            audit("client.registration_refused", ip=flask_request.remote_addr)
            raise InvalidTokenError(description="The initial access token is invalid or used up.")
        return Initial(row.id)

    def generate_client_id(self, request: Any) -> str:
        """Return a client id of the usual form."""
        return new_client_id()

    def generate_client_secret(self, request: Any) -> str:
        """Return a 256-bit secret (stored as a digest only)."""
        return generate_secret()

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        """Return the client's id and secret; a public client gets no secret."""
        info: dict[str, Any] = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
    ) -> Registered:
        """Create the application and its registration; spend the initial token's use."""
        credential: Initial = request.credential
        access_token = generate_secret()
        client_id = client_info["client_id"]
        with services().stores.sessions() as db, db.begin():
            if credential.token_id is not None:
                _spend(db, credential.token_id)
            new = create_application(
                db,
                name=client_metadata.get("client_name") or client_id,
                owner=None,
                client_id=client_id,
                client_secret=client_info.get("client_secret"),
                standard_token_response=True,
            )
            apply_metadata(new.application, client_metadata)
            now = utcnow()
            db.add(
                ClientRegistration(
                    application_id=new.application.id,
                    access_token_digest=digest(access_token),
                    client_metadata=_extra(client_metadata),
                    initial_token_id=credential.token_id,
                    created_at=now,
                    updated_at=now,
                )
            )
            db.flush()
            db.expunge(new.application)
        audit(
            "client.registered",
            application_id=new.application.id,
            initial_token_id=credential.token_id,
            ip=flask_request.remote_addr,
        )
        return Registered(OAuthClient(new.application), access_token)

    def generate_client_registration_info(self, client: Registered, request: Any) -> dict[str, str]:
        """Return where and with what token the client manages its registration (RFC 7592)."""
        return {
            "registration_client_uri": registration_uri(client.client.get_client_id()),
            "registration_access_token": client.access_token,
        }


class RegistrationAccess(TokenMixin):
    """A registration access token, valid for its own client only."""

    def __init__(self, application_id: str, value: str) -> None:
        self.application_id = application_id
        self.value = value

    def check_client(self, client: OAuthClient) -> bool:
        """Tell whether the token is this client's."""
        return client.app.id == self.application_id


def _url_client_id() -> str:
    return str((flask_request.view_args or {}).get("client_id", ""))


class Configuration(JsonEndpoint, ClientConfigurationEndpoint):
    """RFC 7592: read (GET), replace (PUT) or delete (DELETE) one's own registration."""

    def __init__(self, server: Any = None) -> None:
        super().__init__(server, claims_classes=[Metadata])

    def authenticate_token(self, request: Any) -> RegistrationAccess:
        """Take the registration access token of the client the URI names (401 otherwise:
        another client's token is refused as an unknown one, telling nothing of either)."""
        value = presented_token()
        with services().stores.reads() as db:
            row = db.execute(
                select(ClientRegistration.application_id, Application.client_id)
                .join(Application, Application.id == ClientRegistration.application_id)
                .where(ClientRegistration.access_token_digest == digest(value))
            ).first()
        if row is None or row.client_id != _url_client_id():
            audit("client.registration_access_refused", ip=flask_request.remote_addr)
            raise InvalidTokenError(description="The registration access token is invalid.")
        return RegistrationAccess(row.application_id, value)

    def authenticate_client(self, request: Any) -> OAuthClient | None:
        """Return the enabled client the URI names."""
        client_id = _url_client_id()
        return query_client(client_id) if is_clean(client_id, 64) else None

    def revoke_access_token(self, *_args: Any) -> None:
        """Keep the registration of a disabled client: the operator may enable it again."""

    def check_permission(self, client: OAuthClient, request: Any) -> bool:
        """A client's registration token may read, replace and delete its registration."""
        return True

    def introspect_client(self, client: OAuthClient) -> dict[str, Any]:
        """Return the client's registered metadata."""
        app = client.app
        with services().stores.reads() as db:
            reg = db.get(ClientRegistration, app.id)
            extra = dict(reg.client_metadata) if reg is not None else {}
        body: dict[str, Any] = {
            "client_id": app.client_id,
            "client_id_issued_at": int(app.created_at.timestamp()),
        }
        if not app.public_client:
            body["client_secret_expires_at"] = 0
        body["client_name"] = app.name
        body.update(extra)
        body["redirect_uris"] = list(app.redirect_uris or [])
        body["post_logout_redirect_uris"] = list(app.post_logout_redirect_uris or [])
        body["id_token_signed_response_alg"] = app.id_token_signed_response_alg or ES256
        return body

    def generate_client_registration_info(
        self, client: OAuthClient, request: Any
    ) -> dict[str, str]:
        """Return the registration's URI and the token presented."""
        token: RegistrationAccess = request.credential
        return {
            "registration_client_uri": registration_uri(client.get_client_id()),
            "registration_access_token": token.value,
        }

    def update_client(
        self, client: OAuthClient, client_metadata: dict[str, Any], request: Any
    ) -> OAuthClient:
        """Replace the registered metadata (what a PUT omits is dropped, RFC 7592 2.2)."""
        public = client_metadata.get("token_endpoint_auth_method") == "none"
        if public != client.public:
            raise InvalidClientMetadataError(
                description="token_endpoint_auth_method cannot change between none and a "
                "secret: register a new client."
            )
        with services().stores.sessions() as db, db.begin():
            app = db.get_one(Application, client.app.id)
            apply_metadata(app, client_metadata)
            db.execute(
                update(ClientRegistration)
                .where(ClientRegistration.application_id == app.id)
                .values(
                    client_metadata=_extra(client_metadata),
                    updated_at=utcnow(),
                )
            )
            db.flush()
            db.refresh(app)
            db.expunge(app)
        audit("client.registration_updated", application_id=app.id, ip=flask_request.remote_addr)
        return OAuthClient(app)

    def delete_client(self, client: OAuthClient, request: Any) -> None:
        """Disable the client (its tokens and codes end at once) and forget its registration."""
        stores = services().stores
        set_application_enabled(stores, client.get_client_id(), enabled=False, via="registration")
        with stores.sessions() as db, db.begin():
            db.execute(
                delete(ClientRegistration).where(ClientRegistration.application_id == client.app.id)
            )
        audit("client.registration_deleted", application_id=client.app.id)


class RegistrationOff(AccessDeniedError):
    """Registration is off on this server (403)."""

    status_code = 403
    description = "Client registration is not offered here."


def issue_initial_token(
    db: Session, *, uses: int, expires_in: timedelta
) -> tuple[InitialAccessToken, str]:
    """Issue an initial access token (the caller commits); return its row and clear value."""
    if uses < 1:
        raise ValueError("uses must be at least 1")
    value = generate_secret()
    now = utcnow()
    row = InitialAccessToken(
        id=new_id(),
        digest=digest(value),
        uses_left=uses,
        created_at=now,
        expires_at=now + expires_in,
    )
    db.add(row)
    db.flush()
    return row, value
