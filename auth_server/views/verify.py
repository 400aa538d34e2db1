"""Email confirmation: a signed, expiring, single-use link that proves the user reads the mail.

The link is bound to the user and to the address it was sent to (signed with the secret key and
a salt of its own, so no other signed value of the service passes for it), expires after
``email_verification_ttl`` seconds, and works once: it is refused as soon as the address is
verified. Its page asks for the account's password, typed twice (a POST with the CSRF token),
rather than acting on the GET, so a mail scanner fetching links neither uses it up nor signs
itself in. The token travels in the query (whose ``token`` value the access log redacts) and
then in the form body, never in a path, where the access log would keep it.

Whoever follows the link reads the mail: the account becomes theirs. Confirming sets the
password and ends everything issued before (``auth_server.ownership.take_over``): whoever typed
the address into the sign-up form first keeps nothing. Until then the account's password signs
nothing in. A password reset, which also proves the mailbox, confirms the address the same way.
Where the service sends no mail, no link is made and none is honoured.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, request, url_for
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import update
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from auth_server.audit import audit
from auth_server.context import services
from auth_server.forms import ConfirmEmailForm, valid_with_password
from auth_server.mail import Mailer
from auth_server.ownership import mail_confirms, take_over_with_password
from auth_server.views.described import Described, pages
from auth_server.web import (
    DEFAULT_NEXT,
    current_user,
    error_page,
    is_read,
    page,
    safe_next,
    sign_in_redirect,
    start_session,
)
from common.ids import utcnow
from common.models import User

SALT = "artcat.email-verify"
# One verification mail per account per this many seconds, and one "someone tried to sign up
# with your address" note per hour: the sign-up page must not become a mail cannon.
RESEND_INTERVAL = 60
NOTE_INTERVAL = 3600
EXPIRED_TITLE = "This link no longer works"
EXPIRED_MESSAGE = (
    "Confirmation links work once and only for a limited time. For a new link, sign up again "
    "with the same address."
)
NO_MAIL_MESSAGE = "This service sends no email, so it does not confirm addresses."


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(services().settings.secret_key, salt=SALT)


def _mailer() -> Mailer:
    mailer: Mailer = current_app.extensions["artcat.mailer"]
    return mailer


def _link(endpoint: str, **values: Any) -> str:
    """Return an absolute link for a message (the public URL; the request's only in development,
    where the message goes to the instance's outbox, never out)."""
    base = services().settings.public_url.rstrip("/") or request.host_url.rstrip("/")
    return base + url_for(endpoint, **values)


def verification_token(user: User, next_path: str = "") -> str:
    """Return a verification token for the user's current address (``next_path``: where to go)."""
    return _serializer().dumps({"u": user.id, "e": user.email, "n": next_path})


def verification_for(db: Session, token: str) -> tuple[User, str] | None:
    """Return the user a token verifies and where to go after, or None (bad, expired, used)."""
    try:
        data: Any = _serializer().loads(token, max_age=services().settings.email_verification_ttl)
    except BadSignature:  # includes SignatureExpired
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in "uen"):
        return None
    user = db.get(User, data["u"])
    if user is None or not user.enabled or user.email != data["e"]:
        return None
    if user.email_verified_at is not None:
        return None  # used: the link works once
    return user, safe_next(data["n"]) or ""


def _first_lately(kind: str, user: User, seconds: int) -> bool:
    key = f"{services().settings.redis_prefix}:{kind}:{user.id}"
    return bool(services().stores.redis.set(key, b"1", nx=True, ex=seconds))


def send_verification(user: User, next_path: str = "") -> bool:
    """Send the user a link to confirm their address (at most once a minute); tell if sent."""
    if not _first_lately("verify", user, RESEND_INTERVAL):
        return False
    link = _link("verify.verify_email", token=verification_token(user, next_path))
    hours = services().settings.email_verification_ttl // 3600
    body = (
        f"Hello {user.name},\n\n"
        "Please confirm that this is your email address by opening this link within "
        f"{hours} hours. There you choose your password, and you are signed in:\n\n{link}\n\n"
        "If you did not ask for an account here, someone typed your address: nobody can use "
        "the account until the address is confirmed. Ignore this message, or open the link to "
        "make the account yours.\n"
    )
    _mailer().send_later(user.email, "Confirm your email address", body)
    return True


def send_sign_up_note(user: User) -> bool:
    """Tell an account's owner that someone tried to sign up with their address (once an hour)."""
    if not _first_lately("signup-note", user, NOTE_INTERVAL):
        return False
    body = (
        f"Hello {user.name},\n\n"
        "Someone tried to create an account with this email address, which already has one.\n\n"
        f"If it was you, sign in: {_link('session.sign_in')}\n"
        f"Forgot your password? Choose a new one: {_link('password.forgot')}\n\n"
        "If it was not you, nothing has changed and you can ignore this message. If you never "
        "created an account here, someone else did with your address: choosing a new password "
        "through the second link makes it yours and signs everyone else out.\n"
    )
    _mailer().send_later(user.email, "Someone tried to sign up with your address", body)
    return True


def verify_email() -> Response:
    """Ask for a password (GET, the emailed link), or confirm the address with it (POST).

    Confirming sets the password, ends everything issued before (tokens of every kind, codes,
    sessions, social links) and signs in.
    """
    if not mail_confirms():
        return error_page(400, EXPIRED_TITLE, NO_MAIL_MESSAGE)
    svc = services()
    form = ConfirmEmailForm(token=request.args.get("token", ""))
    with svc.stores.sessions() as db:
        found = verification_for(db, form.token.data or "")
        if found is None:
            return error_page(400, EXPIRED_TITLE, EXPIRED_MESSAGE)
        user, next_path = found
        if is_read():
            return page("verify_email.html", form=form, email=user.email)
        if not valid_with_password(form, form.password, email=user.email, name=user.name):
            return page("verify_email.html", 400, form=form, email=user.email)
        # The link works once, even for two posts at the same moment: one conditional UPDATE.
        claimed = db.execute(
            update(User)
            .where(User.id == user.id, User.email_verified_at.is_(None))
            .values(email_verified_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        if not getattr(claimed, "rowcount", 0):
            db.rollback()
            return error_page(400, EXPIRED_TITLE, EXPIRED_MESSAGE)
        db.refresh(user, ["email_verified_at"])
        take_over_with_password(db, user, form.password.data or "", "email.verified")
        start_session(user)
    flash("Your email address is confirmed and your password is set.")
    return redirect(next_path or DEFAULT_NEXT)


def resend_verification() -> Response:
    """Send the signed-in user a new confirmation link (POST from the account page)."""
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("account.home"))
        if user.email_verified_at is None and not mail_confirms():
            flash("This service sends no email, so it cannot confirm addresses.")
        elif user.email_verified_at is None:
            sent = send_verification(user)
            audit("email.verification_sent", user_id=user.id, sent=sent, ip=request.remote_addr)
            flash(f"A confirmation link is on its way to {user.email}.")
    return redirect(url_for("account.home"))


bp = Described("verify", __name__, tag="pages")
bp.declare(
    "/account/email/verify",
    verify_email,
    **pages("verify_email", "Confirm the email address", "get", "post"),
)
bp.declare(
    "/account/email/resend",
    resend_verification,
    endpoint="resend",
    **pages("resend_verification", "Send a new email confirmation link", "post"),
)
