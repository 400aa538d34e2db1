"""``grant_type=authorization_code``: Authlib's grant around our single-use, digested codes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError, InvalidScopeError
from authlib.oauth2.rfc7636 import CodeChallenge

from auth_server.codes import S256, S256_CHALLENGE, PendingCode, find_code, issue_code, spend_code
from auth_server.context import services
from auth_server.oauth import parse_scope
from auth_server.oidc import is_openid
from auth_server.server import request_db
from auth_server.token_params import TOKEN_METHODS
from auth_server.web import signed_in_at
from common.models import User
from common.tokens import generate_secret


class S256CodeChallenge(CodeChallenge):
    """PKCE with S256 only (``plain`` protects nothing a TLS leak would not reveal)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = [S256]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        """Check the challenge; refuse a missing or other method, and public clients without."""
        super().validate_code_challenge(grant, redirect_uri)
        data = grant.request.payload.data
        challenge = data.get("code_challenge")
        if challenge is None:
            if grant.request.client.public:
                raise InvalidRequestError(description="A public client must send a code_challenge.")
            return
        # A missing method means "plain" (RFC 7636 4.3), which is not accepted.
        if data.get("code_challenge_method") != S256:
            raise InvalidRequestError(description="Only code_challenge_method=S256 is supported.")
        if not S256_CHALLENGE.match(challenge):
            raise InvalidRequestError(description="code_challenge is not a S256 challenge.")


class CodeGrant(grants.AuthorizationCodeGrant):
    """Codes bound to client, redirect URI and PKCE challenge; redeemed once, atomically."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS

    def generate_authorization_code(self) -> str:
        """Return a new code with 256 bits of entropy."""
        return generate_secret()

    def save_authorization_code(self, code: str, request: Any) -> None:
        """Store the code's digest with what it is bound to (at the user's approval)."""
        data = request.payload.data
        svc = services()
        # OpenID Connect: the ID token repeats the nonce, and says when the user signed in.
        started = signed_in_at() if is_openid(request.scope) else None
        auth_time = datetime.fromtimestamp(started, UTC) if started is not None else None
        with svc.stores.sessions() as db, db.begin():
            issue_code(
                db,
                application=request.client.app,
                user=request.user,
                redirect_uri=data["redirect_uri"],
                scope=request.scope or "",
                code_challenge=data.get("code_challenge"),
                code_challenge_method=data.get("code_challenge_method"),
                ttl=svc.settings.code_ttl,
                value=code,
                nonce=data.get("nonce") if auth_time is not None else None,
                auth_time=auth_time,
            )

    def validate_token_request(self) -> None:
        """Require the redirect_uri, then let Authlib check the code; refuse a wider scope."""
        if not self.request.payload.redirect_uri:
            description = "The redirect_uri of the authorization request is required."
            raise InvalidRequestError(description=description)
        super().validate_token_request()
        code: PendingCode = self.request.authorization_code
        wanted = parse_scope(self.request.payload.scope)
        if wanted is not None:
            # A token never gets more than the user consented to.
            if set(wanted.split()) - set(code.scope.split()):
                raise InvalidScopeError(description="The scope exceeds what the user granted.")
            code.scope = wanted

    def query_authorization_code(self, code: str, client: Any) -> PendingCode | None:
        """Return the client's live, unused code (a used one is a replay: its tokens expire)."""
        svc = services()
        return find_code(
            request_db(self.request),
            svc.stores.tokens,
            code=code,
            application_id=client.app.id,
            max_age=svc.settings.code_ttl,
        )

    def authenticate_user(self, authorization_code: PendingCode) -> User:
        """Spend the code (one conditional UPDATE) and return its enabled user.

        The token is inserted and committed in the same transaction (``save_token``); any
        error before that rolls the redemption back, so the client may retry.
        """
        db = request_db(self.request)
        spend_code(db, services().stores.tokens, authorization_code)
        user = db.get(User, authorization_code.user_id)
        if user is None or not user.enabled:
            raise InvalidGrantError(description="The user account is disabled.")
        return user

    def delete_authorization_code(self, authorization_code: PendingCode) -> None:
        """Nothing left to do: the code was spent in the transaction that issued the token."""
