"""RFC 8628 on Authlib: the device authorization endpoint and the device code grant.

The endpoint stores a pending grant (``auth_server.device_flow``) and answers its codes; the
grant answers each poll ``authorization_pending``, ``slow_down`` (polled before the interval,
which then grows by 5 seconds), ``expired_token``, ``access_denied``, or the token: the same
access token the code flow issues, with an ID token when ``openid`` was granted. A device code
is redeemed once; another client's, or an unknown one, is ``invalid_grant``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import OAuth2Request
from authlib.oauth2.rfc6749.errors import (
    AccessDeniedError,
    InvalidGrantError,
    UnauthorizedClientError,
)
from authlib.oauth2.rfc8628 import (
    DEVICE_CODE_GRANT_TYPE,
    AuthorizationPendingError,
    DeviceAuthorizationEndpoint,
    DeviceCodeGrant,
    DeviceCredentialMixin,
    ExpiredTokenError,
    SlowDownError,
)
from flask import request as flask_request
from sqlalchemy.orm import Session

from auth_server import device_flow
from auth_server.audit import audit
from auth_server.clients import OAuthClient
from auth_server.context import issuer, services
from auth_server.device_throttles import DEVICE_START
from auth_server.oauth import SlowDownError as TooManyAttempts
from auth_server.oauth import parse_scope
from auth_server.oidc import ArtcatOpenIDCode
from auth_server.server import request_db
from auth_server.throttles import throttle
from auth_server.token_params import TOKEN_METHODS
from common.ids import utcnow
from common.models import DeviceAuthorization, User
from common.models.device import APPROVED, PENDING, USED
from common.tokens import generate_secret

ACTIVATE_PATH = "/activate"
INVALID_DEVICE_CODE = "The device_code is invalid, was issued to another client, or was used."


class DeviceCredential(DeviceCredentialMixin):
    """A stored device grant, as Authlib's grant reads it."""

    def __init__(self, row: DeviceAuthorization, client_id: str) -> None:
        self.row = row
        self.client_id = client_id

    def get_client_id(self) -> str:
        """Return the client id the device code was issued to."""
        return self.client_id

    def get_scope(self) -> str:
        """Return the scope the device asked for (and the user approved)."""
        return self.row.scope

    def get_user_code(self) -> str:
        """Return the grant's id: the clear user code is never kept, and the id names it."""
        return self.row.id

    def is_expired(self) -> bool:
        """Tell whether the codes outlived their lifetime."""
        return self.row.expires_at <= utcnow()

    def issued(self, db: Session, token_id: str) -> None:
        """Link the grant to the token it bought (in the transaction that issues it)."""
        device_flow.link_token(db, self.row.id, token_id)

    def auth_time(self) -> int | None:
        """Return when the approving user signed in (Unix seconds)."""
        at: datetime | None = self.row.auth_time
        return int(at.timestamp()) if at is not None else None


class DeviceEndpoint(DeviceAuthorizationEndpoint):
    """``POST /oauth2/device_authorization``: a device code and a user code for a client."""

    @property
    def EXPIRES_IN(self) -> int:  # noqa: N802 - the name Authlib reads
        """Return the lifetime of the codes (DEVICE_CODE_TTL)."""
        return services().settings.device_code_ttl

    @property
    def INTERVAL(self) -> int:  # noqa: N802 - the name Authlib reads
        """Return the seconds a device waits between polls (DEVICE_POLL_INTERVAL)."""
        return services().settings.device_poll_interval

    def authenticate_client(self, request: OAuth2Request) -> OAuthClient:
        """Count the request per client IP; authenticate as at the token endpoint; check the
        client may use the grant."""
        wait = throttle(DEVICE_START).hit(flask_request.remote_addr or "")
        if wait is not None:
            audit("device.throttled", retry_after=wait, ip=flask_request.remote_addr)
            raise TooManyAttempts(wait)
        client: OAuthClient = super().authenticate_client(request)
        if not client.check_grant_type(DEVICE_CODE_GRANT_TYPE):
            raise UnauthorizedClientError(description="This application may not use this grant.")
        return client

    def generate_user_code(self) -> str:
        """Return a code of 8 unambiguous characters, shown as XXXX-XXXX."""
        return device_flow.new_user_code()

    def get_verification_uri(self) -> str:
        """Return the page where the user enters the code."""
        return f"{issuer()}{ACTIVATE_PATH}"

    def generate_device_code(self) -> str:
        """Return a device code with 256 bits of entropy."""
        return generate_secret()

    def save_device_credential(
        self, client_id: str, scope: str | None, data: dict[str, Any]
    ) -> None:
        """Store the grant's digests (the answer gives the clear codes, once)."""
        client = self.server.query_client(client_id)
        db = request_db(None)  # this request's transaction (the endpoint has no request here)
        user_code = device_flow.start(
            db, client.app, parse_scope(scope) or "", data["device_code"], data["user_code"]
        )
        db.commit()
        if user_code != data["user_code"]:  # drawn again: it was a live code already
            data["user_code"] = user_code
            data["verification_uri_complete"] = add_params_to_uri(
                data["verification_uri"], [("user_code", user_code)]
            )


class DeviceGrant(DeviceCodeGrant):
    """``grant_type=urn:ietf:params:oauth:grant-type:device_code``: poll for the user's answer."""

    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS

    def query_device_credential(self, device_code: str) -> DeviceCredential:
        """Return the client's grant of this device code; invalid_grant for any other."""
        client = self.request.client
        db = request_db(self.request)
        row = device_flow.find_by_device_code(db, device_code) if len(device_code) < 200 else None
        if row is None or client is None or row.application_id != client.app.id:
            raise InvalidGrantError(description=INVALID_DEVICE_CODE)
        if row.status == USED:
            device_flow.replayed(db, services().stores.tokens, row)
            raise InvalidGrantError(description=INVALID_DEVICE_CODE)
        return DeviceCredential(row, client.get_client_id())

    def validate_device_credential(self, credential: DeviceCredential) -> User:
        """Answer the poll (RFC 8628 3.5) through Authlib's hooks, each error described."""
        if credential.is_expired():
            raise ExpiredTokenError(description="The device code has expired: ask for a new one.")
        self.request.credential = credential  # what query_user_grant reads
        found = self.query_user_grant(credential.get_user_code())
        if found is not None:
            user, approved = found
            if not approved or user is None:
                raise AccessDeniedError(description="The user denied the request.")
            return user
        if self.should_slow_down(credential):
            interval = credential.row.interval + device_flow.SLOW_DOWN_STEP
            raise SlowDownError(description=f"Poll at most every {interval} seconds.")
        raise AuthorizationPendingError(description="The user has not answered yet.")

    def query_user_grant(self, user_code: str) -> tuple[User | None, bool] | None:
        """Return the user and their answer; spend an approved grant (with the token's commit).

        ``user_code`` is the grant's id (``DeviceCredential.get_user_code``).
        """
        credential: DeviceCredential = self.request.credential
        row = credential.row
        if row.status == PENDING:
            return None
        if row.status != APPROVED:
            return None, False  # denied, or revoked by the user before the device asked
        db = request_db(self.request)
        user = db.get(User, row.user_id) if row.user_id else None
        if user is None or not user.enabled:
            return None, False
        if not device_flow.spend(db, row.id):
            raise InvalidGrantError(description=INVALID_DEVICE_CODE)
        return user, True

    def should_slow_down(self, credential: DeviceCredential) -> bool:
        """Record the poll; tell whether it came before the interval."""
        return device_flow.polled(
            request_db(self.request), credential.row.id, credential.row.interval
        )

    def authenticate_token_endpoint_client(self) -> OAuthClient:
        """Authenticate the client, and keep it: the device code is looked up for it alone."""
        client: OAuthClient = super().authenticate_token_endpoint_client()
        self.request.client = client
        return client


class DeviceOpenID(ArtcatOpenIDCode):
    """ID tokens for the device grant: ``auth_time`` is when the approving user signed in."""

    def get_compatible_claims(self, request: OAuth2Request) -> dict[str, Any]:
        """Add when and how the user who approved at /activate signed in."""
        claims: dict[str, Any] = super().get_compatible_claims(request)
        credential = request.credential
        started = credential.auth_time() if isinstance(credential, DeviceCredential) else None
        if started is not None:
            claims["auth_time"] = started
            claims["amr"] = ["pwd"]
        return claims
