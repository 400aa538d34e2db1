"""``grant_type=password`` (RFC 6749 4.3) and the reference API's ``grant_type=credentials``.

Both are Authlib's resource owner password grant; ``credentials`` names the username ``email``.
Attempts are throttled per client IP and per account before any hashing. An unknown email costs
the same argon2 verify as a wrong password and gets the same answer, and so does the right
password of an unconfirmed account where mail confirms addresses (``auth_server/ownership.py``).
"""

from __future__ import annotations

import threading
from typing import Any

from argon2 import PasswordHasher
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError
from flask import request

from auth_server.accounts import find_user_by_email, verify_password
from auth_server.audit import audit
from auth_server.context import services
from auth_server.oauth import SlowDownError
from auth_server.ownership import password_may_sign_in
from auth_server.server import request_db
from auth_server.throttles import login_throttle
from auth_server.token_params import TOKEN_METHODS
from common.models import User

BAD_CREDENTIALS = "The email or password is incorrect."
_dummy_hashes: dict[tuple[int, int, int], str] = {}
_dummy_lock = threading.Lock()


def dummy_hash(hasher: PasswordHasher) -> str:
    """Return a hash with the hasher's parameters, verified when the email is unknown."""
    key = (hasher.time_cost, hasher.memory_cost, hasher.parallelism)
    with _dummy_lock:
        if key not in _dummy_hashes:
            _dummy_hashes[key] = hasher.hash("not the password of anyone")
        return _dummy_hashes[key]


class PasswordGrant(grants.ResourceOwnerPasswordCredentialsGrant):
    """The standard password grant: ``username`` is the account's email address."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    # Which methods a request may use is the server's to decide (Server.get_token_grant).
    TOKEN_ENDPOINT_HTTP_METHODS = TOKEN_METHODS
    USERNAME = "username"

    def authenticate_token_endpoint_client(self) -> Any:
        """Authenticate the client (Authlib), then name missing fields in this grant's words."""
        client = super().authenticate_token_endpoint_client()
        form = self.request.form
        if not form.get(self.USERNAME) or not form.get("password"):
            raise InvalidRequestError(
                description=f"The {self.USERNAME} and password parameters are required."
            )
        form["username"] = form[self.USERNAME]
        return client

    def authenticate_user(self, username: str, password: str) -> User:
        """Check an email and password (argon2id); raise invalid_grant (or slow_down)."""
        svc = services()
        ip = request.remote_addr or ""
        grant = self.GRANT_TYPE
        email = username.strip()
        throttle = login_throttle()
        attempt = throttle.attempt(ip=ip, account=email)
        if attempt.wait is not None:
            audit("signin.throttled", grant=grant, ip=ip, retry_after=attempt.wait)
            raise SlowDownError(attempt.wait)
        db = request_db(self.request)
        with throttle.unless_unchecked(attempt):
            user = find_user_by_email(db, email)
        stored = user.password_hash if user is not None and user.password_hash else None
        ok = verify_password(svc.hasher, stored or dummy_hash(svc.hasher), password)
        # An unconfirmed account's right password counts as a wrong one where mail confirms
        # addresses (``auth_server/ownership.py``): it may be a squatter's.
        unconfirmed = user is not None and ok and not password_may_sign_in(user)
        if user is None or stored is None or not ok or unconfirmed:
            audit(
                "signin.failed",
                grant=grant,
                reason="unknown_email"
                if user is None
                else "unconfirmed"
                if unconfirmed
                else "wrong_password",
                user_id=user.id if user is not None else None,
                application_id=self.request.client.app.id if self.request.client else None,
                ip=ip,
            )
            raise InvalidGrantError(description=BAD_CREDENTIALS)
        if not user.enabled:
            audit("signin.failed", grant=grant, reason="disabled", user_id=user.id, ip=ip)
            raise InvalidGrantError(description="This account is disabled.")
        throttle.forgive(attempt)  # one budget with the sign-in page: failures alone use it
        if svc.hasher.check_needs_rehash(stored):
            # Stronger parameters were configured since this password was set; committed with
            # the token.
            user.password_hash = svc.hasher.hash(password)
        return user


class CredentialsGrant(PasswordGrant):
    """The reference API's xAuth grant: ``email`` and ``password``."""

    GRANT_TYPE = "credentials"
    USERNAME = "email"
