"""Signing in, signing up and signing out in the browser (``/account/sign_in`` and friends)."""

from __future__ import annotations

import secrets
from urllib.parse import parse_qs, urlsplit

from argon2 import PasswordHasher
from flask import flash, redirect, request, url_for
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from auth_server.accounts import (
    AccountError,
    create_user,
    find_user_by_email,
    normalise_email,
    verify_password,
)
from auth_server.audit import audit
from auth_server.context import services
from auth_server.devices import remember_device, trusted_device
from auth_server.forms import ButtonForm, SignInForm, SignUpForm
from auth_server.inputs import is_clean
from auth_server.ownership import mail_confirms, password_may_sign_in
from auth_server.throttles import SIGN_UP, login_throttle, throttle
from auth_server.views.described import Described, pages
from auth_server.views.verify import send_sign_up_note, send_verification
from auth_server.web import (
    AGAIN,
    DEFAULT_NEXT,
    current_user,
    is_read,
    page,
    safe_next,
    sign_out_everywhere,
    start_session,
)
from common.models import Application, User

BAD_CREDENTIALS = "The email or password is incorrect."
TOO_MANY = "Too many failed sign-ins. Wait a few minutes, then try again."
TOO_MANY_SIGN_UPS = "Too many accounts were created from your address. Try again later."

_dummy_hashes: dict[tuple[int, int, int], str] = {}


def _dummy_hash(hasher: PasswordHasher) -> str:
    """Return a hash to verify against when there is no account, so timing does not tell."""
    key = (hasher.time_cost, hasher.memory_cost, hasher.parallelism)
    if key not in _dummy_hashes:
        _dummy_hashes[key] = hasher.hash(secrets.token_urlsafe(16))
    return _dummy_hashes[key]


def _next_from_request() -> str:
    return safe_next(request.values.get("next")) or ""


def asking_application(db: Session, next_path: str) -> str | None:
    """Return the name of the application whose authorization request ``next_path`` is, if any.

    Only an enabled application that the client_id names: an unknown one gets no mention, so
    the page cannot be made to show a name of the requester's choosing.
    """
    parts = urlsplit(next_path)
    if parts.path != "/oauth2/authorize":
        return None
    client_ids = parse_qs(parts.query).get("client_id", [])
    if len(client_ids) != 1 or not is_clean(client_ids[0], 200):
        return None
    app = db.scalar(select(Application).where(Application.client_id == client_ids[0]))
    return app.name if app is not None and app.enabled else None


def sign_in() -> Response:
    """Show the sign-in form (GET) or sign in with email and password (POST)."""
    svc = services()
    form = SignInForm(next=_next_from_request())
    with svc.stores.sessions() as db:
        asking = asking_application(db, safe_next(form.next.data) or "")
        if is_read():
            if current_user(db) is not None and request.args.get(AGAIN) != "1":
                return redirect(_next_from_request() or DEFAULT_NEXT)
            return page("sign_in.html", form=form, asking=asking)
        if not form.validate():
            return page("sign_in.html", 400, form=form, asking=asking)
        email = normalise_email(form.email.data or "")
        password = form.password.data or ""
        ip = request.remote_addr or ""
        # Counted before any hashing (argon2 is the expensive part of a guess), in the budgets
        # the credentials and password grants share, or in this browser's own (device cookie).
        logins = login_throttle()
        attempt = logins.attempt(ip=ip, account=email, device=trusted_device(email))
        if attempt.wait is not None:
            audit("sign_in.throttled", ip=ip, retry_after=attempt.wait)
            throttled = page("sign_in.html", 429, form=form, form_error=TOO_MANY, asking=asking)
            throttled.headers["Retry-After"] = str(attempt.wait)
            return throttled
        with logins.unless_unchecked(attempt):
            user = find_user_by_email(db, email)
        stored = user.password_hash if user is not None and user.password_hash else None
        ok = verify_password(svc.hasher, stored or _dummy_hash(svc.hasher), password)
        # An unconfirmed account's password may be a squatter's: where mail confirms addresses
        # it signs nothing in, and the answer is a wrong password's (the attempt is not given
        # back either).
        reason = "bad"
        if user is not None and stored is not None and ok:
            if not user.enabled:
                reason = "disabled"
            elif not password_may_sign_in(user):
                reason = "unconfirmed"
            else:
                reason = ""
        if reason or user is None or stored is None:
            audit(
                "sign_in.failed",
                user_id=user.id if user is not None else None,
                reason=reason,
                ip=ip,
            )
            return page("sign_in.html", 400, form=form, form_error=BAD_CREDENTIALS, asking=asking)
        logins.forgive(attempt)
        if svc.hasher.check_needs_rehash(stored):
            # Cost parameters were raised since this hash was made: upgrade it now.
            user.password_hash = svc.hasher.hash(password)
            db.commit()
        start_session(user)
        audit("sign_in", user_id=user.id, ip=ip)
        signed_in = redirect(safe_next(form.next.data) or DEFAULT_NEXT)
        remember_device(signed_in, email)
        return signed_in


def sign_up() -> Response:
    """Show the sign-up form (GET) or create an account (POST).

    The answer is the same whether the address is new or already has an account, costs the
    same, and nothing that follows tells them apart. Where mail confirms addresses the form
    asks for no password: a new address gets a link to confirm it and choose one, the owner of
    a known address a note that someone tried (or, while it is unconfirmed, a new link), and
    nobody is signed in here. Where no mail is sent, the account keeps the password typed here
    and stays unconfirmed (``auth_server/ownership.py``).
    """
    svc = services()
    confirms = mail_confirms()
    form = SignUpForm(next=_next_from_request())
    if confirms:
        del form.password  # chosen on the confirmation page, by whoever reads the mail
    with svc.stores.sessions() as db:
        if is_read():
            if current_user(db) is not None and request.args.get(AGAIN) != "1":
                return redirect(_next_from_request() or DEFAULT_NEXT)
            return page("sign_up.html", form=form)
        if not form.validate():
            return page("sign_up.html", 400, form=form)
        ip = request.remote_addr or ""
        wait = throttle(SIGN_UP).hit(ip)
        if wait is not None:
            audit("sign_up.throttled", ip=ip, retry_after=wait)
            throttled = page("sign_up.html", 429, form=form, form_error=TOO_MANY_SIGN_UPS)
            throttled.headers["Retry-After"] = str(wait)
            return throttled
        email = normalise_email(form.email.data or "")
        next_path = safe_next(form.next.data) or ""
        password = None if confirms else (form.password.data or "")
        try:
            user, created = _new_user(db, form, email, password)
        except AccountError as ex:
            field = getattr(form, ex.field, form.email)
            field.errors = [str(ex)]
            return page("sign_up.html", 400, form=form)
        if created:
            audit("user.created", user_id=user.id, via="sign_up", ip=ip)
        else:
            audit("sign_up.existing_email", user_id=user.id, ip=ip)
        if confirms and (created or user.email_verified_at is None):
            send_verification(user, next_path)
        elif confirms:
            send_sign_up_note(user)
    ttl_hours = svc.settings.email_verification_ttl // 3600
    return page(
        "sign_up_sent.html", email=email, ttl_hours=ttl_hours, next_path=next_path, mail=confirms
    )


def _new_user(db: Session, form: SignUpForm, email: str, password: str | None) -> tuple[User, bool]:
    """Create the account and commit; or return the one that has the address (created: False).

    A known address costs the same argon2 hash as a new one (none where there is no password
    to keep), so timing does not tell them apart.
    """
    svc = services()
    existing = find_user_by_email(db, email)
    if existing is None:
        try:
            user = create_user(
                db, svc.hasher, email=email, name=form.name.data or "", password=password
            )
            db.commit()
            return user, True
        except IntegrityError:
            db.rollback()  # the same email signed up at the same moment
        except AccountError as ex:
            db.rollback()
            if ex.reason != "has already been taken":
                raise
        existing = find_user_by_email(db, email)
        if existing is None:
            raise AccountError("email", "could not be registered: try again")
    elif password:
        svc.hasher.hash(password)
    return existing, False


def sign_out() -> Response:
    """Ask to confirm (GET) or sign out everywhere (POST), then go to the sign-in page.

    Signing out moves the user's session generation on, so every session of the user ends:
    this browser's, other devices', and any copy of the cookie someone kept.
    """
    form = ButtonForm()
    if is_read():
        return page("sign_out.html", form=form, next_path=_next_from_request())
    sign_out_everywhere()
    flash("You are signed out. Every session of your account has ended.")
    target = _next_from_request()
    return redirect(
        url_for("session.sign_in", next=target) if target else url_for("session.sign_in")
    )


bp = Described("session", __name__, tag="pages")
bp.declare("/account/sign_in", sign_in, **pages("sign_in", "Sign in", "get", "post"))
bp.declare("/account/sign_up", sign_up, **pages("sign_up", "Sign up", "get", "post"))
bp.declare("/account/sign_out", sign_out, **pages("sign_out", "Sign out", "get", "post"))
