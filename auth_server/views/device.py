"""The device flow's routes (RFC 8628): the device authorization endpoint, the ``/activate``
page where a signed-in user enters a device's code and answers it, and the revocation of a
device grant from the account page.

``/activate`` takes the code (prefilled from ``verification_uri_complete``), checks it under
the user-code throttle, then asks the user, naming the application and what it may do; the
answer is a CSRF-protected POST that repeats the code (checked again, never trusted from the
first step). Approved, the page says the user can return to their device.
"""

from __future__ import annotations

import math

from flask import flash, redirect, request, url_for
from flask_wtf import FlaskForm
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response
from wtforms import StringField, SubmitField
from wtforms.validators import DataRequired, Length

from auth_server import device_flow
from auth_server.audit import audit
from auth_server.context import services
from auth_server.device_throttles import user_code_throttle
from auth_server.grants.device_code import ACTIVATE_PATH
from auth_server.server import authorization_server
from auth_server.token_params import CLIENT_PARAMS, TEXT, Kind
from auth_server.views.described import (
    OAUTH_ERRORS,
    Described,
    oauth_body,
    pages,
    properties,
)
from auth_server.web import current_user, error_page, is_read, page, sign_in_redirect, signed_in_at
from common.ids import is_id
from common.models import Application, DeviceAuthorization, User
from common.openapi.parts import INT, STR, URL_TEXT, json_response, obj, op

DEVICE_PATH = "/oauth2/device_authorization"


class UserCodeForm(FlaskForm):
    """The code a device shows, and (on the second step) the user's answer."""

    user_code = StringField(
        "Code", [DataRequired("Enter the code your device shows."), Length(max=40)]
    )
    approve = SubmitField("Approve")
    deny = SubmitField("Deny")


WRONG_CODE = "This code is not right, or it has expired. Check the code your device shows."


def device_authorization() -> Response:
    """RFC 8628 3.1: give an authenticated client a device code and a user code."""
    response: Response = authorization_server().create_endpoint_response("device_authorization")
    return response


def activate() -> Response:
    """Take a device's user code (GET: the form), then the user's answer (POST)."""
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is None:
            back = request.full_path.rstrip("?") if is_read() else ACTIVATE_PATH
            return sign_in_redirect(back)
        if is_read():
            form = UserCodeForm(data={"user_code": request.args.get("user_code", "")[:40]})
            return page("activate.html", form=form, user=user)
        form = UserCodeForm()
        if not form.validate():
            return page("activate.html", 400, form=form, user=user)
        code = device_flow.normalise_user_code(form.user_code.data or "")
        if code is None:
            return code_refused(form, user, WRONG_CODE)
        throttle = user_code_throttle()
        ip = request.remote_addr or ""
        attempt = throttle.attempt(ip=ip, user_id=user.id)
        if attempt.wait is not None:
            audit("device.code_throttled", user_id=user.id, retry_after=attempt.wait, ip=ip)
            return error_page(429, "Too many wrong codes", too_many(attempt.wait))
        with throttle.unless_unchecked(attempt):
            grant = device_flow.find_pending(db, device_flow.user_code_digest(code))
        if grant is None:
            audit("device.code_wrong", user_id=user.id, ip=ip)
            return code_refused(form, user, WRONG_CODE)
        throttle.right(attempt)
        app = db.get_one(Application, grant.application_id)
        if not (form.approve.data or form.deny.data):
            return consent_page(db, form, user, grant, app, code)
        return answer(db, grant, app, user, approved=bool(form.approve.data))


def code_refused(form: UserCodeForm, user: User, message: str) -> Response:
    """Show the code form again with what was wrong (400)."""
    return page("activate.html", 400, form=form, user=user, form_error=message)


def too_many(wait: int) -> str:
    """Return the page's text for a user over the wrong-code limits."""
    later = f"{math.ceil(wait / 60)} minute(s)" if wait >= 60 else f"{wait} second(s)"
    return f"Too many wrong codes were entered. Try again in {later}."


def consent_page(
    db: Session,
    form: UserCodeForm,
    user: User,
    grant: DeviceAuthorization,
    app: Application,
    code: str,
) -> Response:
    """Ask the user, naming the application, its owner and what it may do."""
    owner = db.get(User, app.user_id) if app.user_id else None
    form.user_code.data = device_flow.display_user_code(code)
    scopes = [device_flow.SCOPE_TEXT[s] for s in grant.scope.split() if s in device_flow.SCOPE_TEXT]
    return page(
        "device_consent.html",
        form=form,
        user=user,
        app=app,
        owner=owner,
        scopes=scopes,
        scope=grant.scope,
        code=form.user_code.data,
    )


def answer(
    db: Session, grant: DeviceAuthorization, app: Application, user: User, *, approved: bool
) -> Response:
    """Record the user's answer and say what happens next."""
    grant_id, app_name, scope = grant.id, app.name, grant.scope
    done = device_flow.decide(db, grant, user, approved=approved, auth_time=signed_in_at())
    if not done:
        return error_page(400, "This code was already answered", WRONG_CODE)
    audit(
        "device.approved" if approved else "device.denied",
        device_id=grant_id,
        application_id=app.id,
        user_id=user.id,
        scope=scope,
        ip=request.remote_addr,
    )
    return page("device_done.html", approved=approved, app_name=app_name)


def revoke_device_grant(grant_id: str) -> Response:
    """Withdraw one of the user's device grants; its token stops working at once."""
    svc = services()
    with svc.stores.sessions() as db:
        user = current_user(db)
        if user is None:
            return sign_in_redirect(url_for("account.home"))
        user_id = user.id
    # The CSRF token was checked before this view (every /account/ form is protected).
    if not is_id(grant_id) or not device_flow.revoke(svc.stores, user_id, grant_id):
        return error_page(404, "Not found", "You have no device grant with this id.")
    flash("The device can no longer use your account.")
    return redirect(url_for("account.home"))


DEVICE_REQUEST_PARAMS: dict[str, Kind] = {**CLIENT_PARAMS, "scope": TEXT}
DEVICE_RESPONSE = obj(
    {
        "device_code": STR,
        "user_code": STR,
        "verification_uri": STR,
        "verification_uri_complete": STR,
        "expires_in": INT,
        "interval": INT,
    }
)

bp = Described("device", __name__, tag="OAuth")
bp.declare(
    DEVICE_PATH,
    device_authorization,
    post=op(
        "device_authorization",
        "Ask for a device code and a user code (RFC 8628)",
        {
            "200": json_response(DEVICE_RESPONSE, "The codes, and where the user enters one"),
            **OAUTH_ERRORS,
        },
        requestBody=oauth_body(properties(DEVICE_REQUEST_PARAMS), []),
    ),
)
ACTIVATE_QUERY = [{"name": "user_code", "in": "query", "schema": URL_TEXT}]
bp.declare(
    ACTIVATE_PATH,
    activate,
    **pages(
        "activate",
        "A device's user code: enter, confirm, approve",
        "get",
        parameters=ACTIVATE_QUERY,
    ),
    **pages("activate", "A device's user code: enter, confirm, approve", "post"),
)
bp.declare(
    "/account/devices/<grant_id>/revoke",
    revoke_device_grant,
    **pages("revoke_device_grant", "Revoke a device grant", "post"),
)
# The account page lists the user's device grants (``_device_grants.html``).
bp.add_app_template_global(device_flow.approved_device_grants, "approved_device_grants")
