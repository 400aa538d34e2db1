"""The account area: the overview, authorized applications, and the user's own applications."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from flask import flash, redirect, request, url_for
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from auth_server.accounts import create_application, rotate_secret
from auth_server.audit import audit
from auth_server.context import services
from auth_server.forms import ApplicationForm, ButtonForm
from auth_server.ownership import mail_confirms
from auth_server.refresh import holders_of, revoke_families
from auth_server.revocation import end_device_grants
from auth_server.throttles import APPLICATION_CREATION, throttle
from auth_server.views.described import Described, pages
from auth_server.web import (
    current_user,
    error_page,
    is_read,
    page,
    sign_in_redirect,
    static_file,
)
from common.ids import is_id, utcnow
from common.models import Application, AuthorizationCode, RefreshFamily, Token, User

LIST_LIMIT = 100


@dataclass(frozen=True)
class Authorization:
    """An application holding live access tokens for the user."""

    application: Application
    owner_name: str | None
    tokens: int
    last_authorized: datetime
    expires: datetime


def authorizations_of(db: Session, user: User) -> list[Authorization]:
    """Return the applications with live access tokens for ``user``, latest first (two queries)."""
    now = utcnow()
    latest = func.max(Token.created_at)
    rows = db.execute(
        select(Application, func.count(Token.id), latest, func.max(Token.expires_at))
        .join(Token, Token.application_id == Application.id)
        .where(
            Token.user_id == user.id,
            Token.kind == "access",
            Token.expired_at.is_(None),
            Token.expires_at > now,
        )
        .group_by(Application.id)
        .order_by(latest.desc())
        .limit(LIST_LIMIT)
    ).all()
    owner_ids = {app.user_id for app, *_ in rows if app.user_id}
    owners: dict[str, str] = {}
    if owner_ids:
        found = db.execute(select(User.id, User.name).where(User.id.in_(owner_ids)))
        owners = {user_id: name for user_id, name in found}
    return [
        Authorization(app, owners.get(app.user_id or ""), count, last, expires)
        for app, count, last, expires in rows
    ]


def account_home() -> Response:
    """Show the signed-in user's account overview."""
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect()
        return page(
            "account.html",
            user=user,
            mail=mail_confirms(),
            refresh_holders=holders_of(db, user.id, limit=LIST_LIMIT),
            button=ButtonForm(),
        )


def authorizations() -> Response:
    """List the applications the user has let act for them, each with a revoke button."""
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect()
        items = authorizations_of(db, user)
        return page("authorizations.html", user=user, items=items, form=ButtonForm())


def revoke_authorization(application_id: str) -> Response:
    """Expire every token the application holds for the user (its refresh token families, and
    its pending codes)."""
    svc = services()
    with svc.stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("account.authorizations"))
        app = db.get(Application, application_id) if is_id(application_id) else None
        if app is None:
            return error_page(404, "Not found", "There is no such application.")
        rows = revoke_families(
            db,
            svc.stores.tokens,
            RefreshFamily.user_id == user.id,
            RefreshFamily.application_id == app.id,
        )
        rows += svc.stores.tokens.expire_where(
            db, Token.user_id == user.id, Token.application_id == app.id
        )
        # A code approved but not yet redeemed would bring the access straight back.
        now = utcnow()
        db.execute(
            update(AuthorizationCode)
            .where(
                AuthorizationCode.user_id == user.id,
                AuthorizationCode.application_id == app.id,
                AuthorizationCode.used_at.is_(None),
                AuthorizationCode.expires_at > now,
            )
            .values(expires_at=now)
        )
        end_device_grants(db, user_id=user.id, application_id=app.id)
        user_id, app_name = user.id, app.name
        db.commit()
    svc.stores.tokens.tombstone(rows)
    audit(
        "authorization.revoked",
        user_id=user_id,
        application_id=application_id,
        tokens_expired=len(rows),
        ip=request.remote_addr,
    )
    flash(f"{app_name} can no longer use your account.")
    return redirect(url_for("account.authorizations"))


def _own_applications(db: Session, user: User) -> list[Application]:
    return list(
        db.scalars(
            select(Application)
            .where(Application.user_id == user.id)
            .order_by(Application.created_at.desc(), Application.id)
            .limit(LIST_LIMIT)
        )
    )


def applications() -> Response:
    """List the user's applications (GET) or register a new one and show its secret (POST)."""
    svc = services()
    form = ApplicationForm()
    with svc.stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("account.applications"))
        if is_read() or not form.validate():
            status = 200 if is_read() else 400
            return page(
                "applications.html",
                status,
                user=user,
                form=form,
                apps=_own_applications(db, user),
                button=ButtonForm(),
            )
        wait = throttle(APPLICATION_CREATION).hit(user.id)
        if wait is not None:
            ip = request.remote_addr
            audit("application.throttled", user_id=user.id, retry_after=wait, ip=ip)
            return page(
                "applications.html",
                429,
                user=user,
                form=form,
                apps=_own_applications(db, user),
                button=ButtonForm(),
                form_error=too_many_applications(wait),
            )
        new = create_application(
            db,
            name=form.name.data or "",
            owner=user,
            redirect_uris=getattr(form, "parsed_redirect_uris", []),
            standard_token_response=not form.reference_token_response.data,
        )
        new.application.post_logout_redirect_uris = getattr(
            form, "parsed_post_logout_redirect_uris", []
        )
        db.commit()
        audit(
            "application.created",
            application_id=new.application.id,
            user_id=user.id,
            ip=request.remote_addr,
        )
        # Shown in this response only (never stored in the session cookie), and never again.
        return page("application_secret.html", 201, app=new.application, secret=new.client_secret)


def too_many_applications(wait: int) -> str:
    """Return the form error of a user over the application-creation limit."""
    if wait >= 3600:
        later = f"{math.ceil(wait / 3600)} hour(s)"
    else:
        later = f"{math.ceil(wait / 60)} minute(s)"
    return f"You have registered too many applications lately. Try again in {later}."


def rotate_application_secret(application_id: str) -> Response:
    """Give one of the user's applications a new secret and show it once."""
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("account.applications"))
        app = db.get(Application, application_id) if is_id(application_id) else None
        if app is None or app.user_id != user.id:
            # Someone else's application is not acknowledged to exist.
            return error_page(404, "Not found", "You have no application with this id.")
        secret = rotate_secret(db, app)
        db.commit()
        audit(
            "application.secret_rotated",
            application_id=app.id,
            user_id=user.id,
            ip=request.remote_addr,
        )
        return page("application_secret.html", app=app, secret=secret, rotated=True)


bp = Described("account", __name__, tag="pages")
bp.declare("/account", account_home, endpoint="home", **pages("account", "Account home", "get"))
bp.declare(
    "/account/authorizations",
    authorizations,
    **pages("authorizations", "Authorized applications", "get"),
)
bp.declare(
    "/account/authorizations/<application_id>/revoke",
    revoke_authorization,
    **pages("revoke_authorization", "Revoke an authorization", "post"),
)
bp.declare(
    "/account/applications",
    applications,
    **pages("applications", "Your applications", "get", "post"),
)
bp.declare(
    "/account/applications/<application_id>/rotate",
    rotate_application_secret,
    **pages("rotate_secret", "Rotate a client secret", "post"),
)
bp.declare(
    "/account/static/<path:filename>",
    static_file,
    endpoint="static",
    **pages("account_static", "Stylesheet", "get"),
)
