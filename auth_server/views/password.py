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

from auth_server.accounts import find_user_by_email, normalise_email
from auth_server.audit import audit
from auth_server.context import services
from auth_server.forms import ForgotPasswordForm, ResetPasswordForm, password_problem
from auth_server.mail import Mailer
from auth_server.web import end_session, error_page, is_read, page, password_fingerprint
from common.models import Token, User

SALT = "artcat.password-reset"
# One reset email per account per this many seconds: the page must not become a mail cannon.
RESEND_INTERVAL = 60
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
            link = base + url_for("account_password_reset", token=reset_token(user))
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
            forgot = (url_for("account_password_forgot"), "Ask for a new link")
            return error_page(400, EXPIRED_TITLE, EXPIRED_MESSAGE, forgot)
        form = ResetPasswordForm()
        if is_read():
            return page("reset.html", form=form, token=token)
        valid = form.validate()
        problem = password_problem(form.password.data or "", email=user.email, name=user.name)
        if problem and not form.password.errors:
            form.password.errors = [problem]
            valid = False
        if not valid:
            return page("reset.html", 400, form=form, token=token)
        user.password_hash = svc.hasher.hash(form.password.data or "")
        # Whoever knew the old password may hold tokens made with it: they all stop now.
        rows = svc.stores.tokens.expire_where(db, Token.user_id == user.id, Token.kind == "access")
        user_id = user.id
        db.commit()
    svc.stores.tokens.tombstone(rows)
    audit("password.reset", user_id=user_id, tokens_expired=len(rows), ip=request.remote_addr)
    end_session()
    flash("Your password has been changed. Sign in with the new password.")
    return redirect(url_for("account_sign_in"))
