"""``grant_type=credentials`` (the reference API's xAuth): email and password for a token.

Attempts are throttled per client IP and per account before any hashing. An unknown email costs
the same argon2 verify as a wrong password and gets the same answer.
"""

from __future__ import annotations

import threading

from argon2 import PasswordHasher
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError

from auth_server.accounts import find_user_by_email, verify_password
from auth_server.audit import audit
from auth_server.grants.base import Granted, GrantRequest, issue_access
from auth_server.oauth import SlowDownError
from auth_server.throttle import login_throttle
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


def credentials_grant(req: GrantRequest) -> Granted:
    """Check an email and password (argon2id) and issue an access token."""
    email = req.params.get("email", "").strip()
    password = req.params.get("password", "")
    if not email or not password:
        raise InvalidRequestError(description="The email and password parameters are required.")
    svc = req.svc
    wait = login_throttle().hit(ip=req.ip, account=email)
    if wait is not None:
        audit("signin.throttled", grant="credentials", ip=req.ip, retry_after=wait)
        raise SlowDownError(wait)
    with svc.stores.reads() as session:
        user = find_user_by_email(session, email)
    stored = user.password_hash if user is not None and user.password_hash else None
    ok = verify_password(svc.hasher, stored or dummy_hash(svc.hasher), password)
    if user is None or stored is None or not ok:
        audit(
            "signin.failed",
            grant="credentials",
            reason="unknown_email" if user is None else "wrong_password",
            user_id=user.id if user is not None else None,
            application_id=req.application.id,
            ip=req.ip,
        )
        raise InvalidGrantError(description=BAD_CREDENTIALS)
    if not user.enabled:
        audit("signin.failed", grant="credentials", reason="disabled", user_id=user.id, ip=req.ip)
        raise InvalidGrantError(description="This account is disabled.")
    with svc.stores.sessions() as session, session.begin():
        if svc.hasher.check_needs_rehash(stored):
            # Stronger parameters were configured since this password was set.
            session.get_one(User, user.id).password_hash = svc.hasher.hash(password)
        return issue_access(session, req, user_id=user.id, scope=req.scope or "")
