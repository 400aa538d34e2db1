"""Forgotten passwords: a signed, time-limited, single-use reset link sent by email.

The link carries the user id and a keyed fingerprint of the current password hash, signed with
the secret key: it stops working after ``password_reset_ttl`` seconds or as soon as the password
changes (so it works once). The forgotten-password page answers the same whether or not the email
has an account, and sends the mail in the background so that timing does not tell either.
"""

from __future__ import annotations

import hmac
from typing import Any

from flask import current_app, flash, redirect, request, url_for
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from auth_server.accounts import (
    end_sessions,
    find_user_by_email,
    normalise_email,
    verify_password,
)
from auth_server.audit import audit
from auth_server.context import services
from auth_server.devices import trusted_device
from auth_server.forms import (
    ChangePasswordForm,
    ForgotPasswordForm,
    ResetPasswordForm,
    valid_with_password,
)
from auth_server.mail import Mailer
from auth_server.ownership import take_over_with_password
from auth_server.revocation import revoke_all
from auth_server.throttles import login_throttle
from auth_server.views.described import Described, pages
from auth_server.web import (
    current_user,
    end_session,
    error_page,
    is_read,
    page,
    password_fingerprint,
    sign_in_redirect,
    start_session,
)
from common.models import Token, User

SALT = "artcat.password-reset"
# One reset email per account per this many seconds: the page must not become a mail cannon.
RESEND_INTERVAL = 60
WRONG_CURRENT = "The current password is incorrect."
TOO_MANY = "Too many attempts. Wait a few minutes, then try again."
EXPIRED_TITLE = "This link no longer works"
EXPIRED_MESSAGE = (
    "Password reset links work once and only for a limited time. "
    "Ask for a new link on the forgotten password page."
)


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(services().settings.secret_key, salt=SALT)


def _mailer() -> Mailer:
    mailer: Mailer = current_app.extensions["artcat.mailer"]
    return mailer


def reset_token(user: User) -> str:
    """Return a reset token for the user's current password."""
    return _serializer().dumps({"u": user.id, "f": password_fingerprint(user.password_hash)})


def user_for_token(db: Session, token: str) -> User | None:
    """Return the user a reset token is valid for, or None (bad, expired or already used)."""
    try:
        data: Any = _serializer().loads(token, max_age=services().settings.password_reset_ttl)
    except BadSignature:  # includes SignatureExpired
        return None
    if not isinstance(data, dict) or not isinstance(data.get("u"), str):
        return None
    user = db.get(User, data["u"])
    if user is None or not user.enabled:
        return None
    if not hmac.compare_digest(str(data.get("f", "")), password_fingerprint(user.password_hash)):
        return None
    return user


def _first_request_lately(user: User) -> bool:
    stores = services().stores
    key = f"{services().settings.redis_prefix}:pwreset:{user.id}"
    return bool(stores.redis.set(key, b"1", nx=True, ex=RESEND_INTERVAL))


def _reset_email(user: User, link: str) -> str:
    minutes = services().settings.password_reset_ttl // 60
    return (
        f"Hello {user.name},\n\n"
        "Someone asked to reset the password of your account. If it was you, open this link "
        f"within {minutes} minutes to choose a new password:\n\n{link}\n\n"
        "If it was not you, ignore this message: your password stays as it is.\n"
    )


def forgot_password() -> Response:
    """Ask for an email address (GET) and send a reset link when it has an account (POST)."""
    mailer = _mailer()
    if not mailer.enabled:
        return page("forgot.html", form=None, email_disabled=True)
    form = ForgotPasswordForm()
    if is_read():
        return page("forgot.html", form=form)
    if not form.validate():
        return page("forgot.html", 400, form=form)
    email = normalise_email(form.email.data or "")
    with services().stores.sessions() as db:
        user = find_user_by_email(db, email)
        sent = False
        if user is not None and user.enabled and _first_request_lately(user):
            base = services().settings.public_url.rstrip("/")
            link = base + url_for("password.reset", token=reset_token(user))
            mailer.send_later(user.email, "Reset your password", _reset_email(user, link))
            sent = True
        audit(
            "password_reset.requested",
            user_id=user.id if user is not None else None,
            sent=sent,
            ip=request.remote_addr,
        )
    return page(
        "forgot_sent.html", email=email, ttl_minutes=services().settings.password_reset_ttl // 60
    )


def reset_password(token: str) -> Response:
    """Show the new-password form (GET) or set the new password (POST) for a valid link."""
    svc = services()
    with svc.stores.sessions() as db:
        user = user_for_token(db, token)
        if user is None:
            forgot = (url_for("password.forgot"), "Ask for a new link")
            return error_page(400, EXPIRED_TITLE, EXPIRED_MESSAGE, forgot)
        form = ResetPasswordForm()
        if is_read():
            return page("reset.html", form=form, token=token)
        if not valid_with_password(form, form.password, email=user.email, name=user.name):
            return page("reset.html", 400, form=form, token=token)
        # The link came by email: following it proves the address, as a confirmation link
        # does, and ends whatever anyone got from the account before (ownership.take_over).
        take_over_with_password(db, user, form.password.data or "", "password.reset")
    end_session()
    flash("Your password has been changed. Sign in with the new password.")
    return redirect(url_for("session.sign_in"))


def _end_what_the_old_password_gave(db: Session, user: User) -> list[Token]:
    """End the user's sessions, access tokens and pending codes (a change of password).

    Whoever knew the old password may hold any of these. (The social links stay: only someone
    who already holds the password can make one. A reset ends those too: ``take_over``.)
    Returns the expired token rows: tombstone them after the commit.
    """
    end_sessions(db, user)
    return revoke_all(db, services().stores.tokens, user_id=user.id, kind="access")


def change_password() -> Response:
    """Show the change-password form (GET) or check the current password and set a new one.

    The current password is checked like a sign-in (the same throttle, before any hashing).
    The change ends every session of the user (this browser gets a fresh one) and the user's
    access tokens and pending codes, as a reset does.
    """
    svc = services()
    with svc.stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("password.change"))
        form = ChangePasswordForm()
        if user.password_hash is None or is_read():
            return page("change_password.html", form=form, user=user)
        new = form.new_password.data or ""
        if not valid_with_password(form, form.new_password, email=user.email, name=user.name):
            return page("change_password.html", 400, form=form, user=user)
        ip = request.remote_addr or ""
        throttle = login_throttle()
        attempt = throttle.attempt(ip=ip, account=user.email, device=trusted_device(user.email))
        if attempt.wait is not None:
            audit("password.change_throttled", user_id=user.id, ip=ip, retry_after=attempt.wait)
            throttled = page("change_password.html", 429, form=form, user=user, form_error=TOO_MANY)
            throttled.headers["Retry-After"] = str(attempt.wait)
            return throttled
        if not verify_password(svc.hasher, user.password_hash, form.current_password.data or ""):
            audit("password.change_failed", user_id=user.id, ip=ip)
            form.current_password.errors = [WRONG_CURRENT]
            return page("change_password.html", 400, form=form, user=user)
        throttle.forgive(attempt)
        user.password_hash = svc.hasher.hash(new)
        rows = _end_what_the_old_password_gave(db, user)
        db.commit()
        start_session(user)  # this browser stays signed in, in the new generation
        user_id = user.id
    svc.stores.tokens.tombstone(rows)
    audit("password.changed", user_id=user_id, tokens_expired=len(rows), ip=ip)
    flash("Your password has been changed. Every other session of your account has ended.")
    return redirect(url_for("account.home"))


bp = Described("password", __name__, tag="pages")
bp.declare(
    "/account/password/forgot",
    forgot_password,
    endpoint="forgot",
    **pages("forgot_password", "Ask for a password reset email", "get", "post"),
)
bp.declare(
    "/account/password/reset/<token>",
    reset_password,
    endpoint="reset",
    **pages("reset_password", "Set a new password", "get", "post"),
)
bp.declare(
    "/account/password/change",
    change_password,
    endpoint="change",
    **pages("change_password", "Change the password", "get", "post"),
)
