"""``/oauth2/authorize``: the browser side of the authorization code flow, on Authlib's grant.

The client and its redirect URI are checked first: until both are known good the answer is an
error page, never a redirect (RFC 6749 4.1.2.1), and never a link to the URI either. Only then
do request errors go back to the client. The user is asked every time, on a page that names the
application, its owner and where they will be sent; the decision is a CSRF-protected POST.
The one exception is OpenID Connect's ``prompt=none``, answered at once: with a code when the
application holds a live grant of the signed-in user covering the scope
(``auth_server.consents``), with ``consent_required`` otherwise. Every redirect to the client
carries ``iss`` (RFC 9207).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from authlib.oauth2.rfc6749.errors import (
    InvalidRequestError,
    OAuth2Error,
    UnsupportedResponseTypeError,
)
from authlib.oidc.core.errors import ConsentRequiredError, LoginRequiredError
from flask import request
from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from auth_server.audit import audit
from auth_server.consents import holds_grant
from auth_server.context import services
from auth_server.forms import ButtonForm, ConsentForm
from auth_server.oidc import NONCE_MAX, hinted_subject, is_openid
from auth_server.redirects import Target, check_redirect_uri
from auth_server.server import Issuer, authorization_server
from auth_server.token_params import AUTHORIZE_PARAMS
from auth_server.views.described import Described, pages
from auth_server.web import (
    allow_form_redirect_to,
    current_user,
    error_page,
    is_read,
    page,
    sign_in_redirect,
    signed_in_at,
)
from common.models import Application, User
from common.openapi.parts import URL_TEXT

STATE_MAX = 1024
YEAR = 365 * 86_400
DAY = 86_400
PROMPTS = frozenset({"none", "login", "consent", "select_account"})


class PageError(Exception):
    """The client or redirect URI cannot be trusted: answer with an error page."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title
        self.message = message


def check_client(db: Session, values: MultiDict[str, str]) -> tuple[Application, Target]:
    """Return the enabled application and its registered redirect URI; raise PageError."""
    for name in ("client_id", "redirect_uri"):
        if len(values.getlist(name)) > 1:
            raise PageError("Invalid request", f"The {name} parameter is repeated.")
    client_id = values.get("client_id", "")
    if not client_id:
        raise PageError("Invalid request", "The client_id parameter is missing.")
    app = None
    if len(client_id) <= 64 and client_id.isprintable():
        app = db.scalar(select(Application).where(Application.client_id == client_id))
    if app is None or not app.enabled:
        raise PageError(
            "Unknown application",
            "No application with this client_id can sign you in here. "
            "Tell the site that sent you here that its sign-in link is wrong.",
        )
    target, reason = check_redirect_uri(
        values.get("redirect_uri", ""), list(app.redirect_uris or [])
    )
    if target is None:
        raise PageError(
            "Invalid redirect URI",
            f"The redirect_uri {reason}. For your safety you were not sent anywhere.",
        )
    return app, target


def check_request(values: MultiDict[str, str], target: Target) -> None:
    """Refuse what Authlib's grant does not check, or would answer without the client's URI."""
    uri = target.uri
    repeated = [n for n in AUTHORIZE_PARAMS if len(values.getlist(n)) > 1]
    if repeated:
        description = f"Repeated parameter: {', '.join(repeated)}."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    state = values.get("state")
    if state and len(state) > STATE_MAX:
        description = f"state is longer than {STATE_MAX} characters."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    response_type = values.get("response_type")
    if not response_type:
        raise InvalidRequestError(description="response_type is missing.", redirect_uri=uri)
    if response_type != "code":
        description = "Only response_type=code is supported."
        raise UnsupportedResponseTypeError("", description=description, redirect_uri=uri)


def authorize() -> Response:
    """Show the consent page (GET) or act on the user's decision (POST)."""
    values = request.args if is_read() else request.form
    server = authorization_server()
    with services().stores.sessions() as db:
        try:
            app, target = check_client(db, values)
        except PageError as ex:
            return error_page(400, ex.title, ex.message)
        user = current_user(db)
        try:
            check_request(values, target)
            grant = server.get_consent_grant(end_user=user)
            sign_in_again = check_openid(db, grant, user, target.uri)
        except OAuth2Error as error:
            if not error.redirect_uri:
                description = error.description or str(error.error)
                return error_page(400, "This sign-in link is not valid", description)
            state = values.get("state")
            if error.state is None and state and len(state) <= STATE_MAX:
                error.state = state
            return with_issuer(server.handle_error_response(None, error))
        params = {n: grant.request.payload.data.get(n, "") for n in AUTHORIZE_PARAMS}
        if is_openid(params["scope"]) and (user is None or sign_in_again):
            # Back from the sign-in, the request is answered: it asks for no further sign-in.
            # The session is not ended here (a GET any site can send); the sign-in replaces it.
            return sign_in_redirect(authorize_path(signed_in(params)), again=user is not None)
        if user is None:
            return sign_in_redirect(request.full_path if is_read() else authorize_path(params))
        if is_read() and is_openid(params["scope"]) and "none" in params["prompt"].split():
            return answer_silently(grant, params, target, user)  # check_openid found the grant
        if is_read():
            return consent_page(db, grant, params, app, target, user)
        return decide(grant, params, target, user)


def check_openid(db: Session, grant: Any, user: User | None, uri: str) -> bool:
    """Check an OpenID Connect request's own parameters; tell whether the user must sign in
    again (``prompt=login``, or a sign-in older than ``max_age``) before the consent page.

    ``prompt=none`` without a session is Authlib's ``login_required``; with one, it is
    ``login_required`` too for a sign-in older than ``max_age``, and ``consent_required`` unless
    the application holds a live grant of the user covering the scope (then it goes on, to be
    answered without a page). An ``id_token_hint`` must be
    an ID token of this server for this client; naming another user than the one signed in, it
    asks for a sign-in (``login_required`` with ``prompt=none``). The decision (a POST from
    the consent page) is checked the same way, but asks for nothing more.
    """
    data = grant.request.payload.data
    if not is_openid(grant.request.payload.scope):
        return False
    nonce = data.get("nonce")
    if nonce and len(nonce) > NONCE_MAX:
        description = f"nonce is longer than {NONCE_MAX} characters."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    max_age = data.get("max_age")
    if max_age is not None and not (max_age.isascii() and max_age.isdigit() and len(max_age) < 10):
        description = "max_age must be a number of seconds."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    prompts = set(data.get("prompt", "").split())
    if prompts - PROMPTS:
        description = f"prompt takes {', '.join(sorted(PROMPTS))}."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    hint = data.get("id_token_hint")
    hinted = hinted_subject(hint, grant.request.client.get_client_id()) if hint else None
    if hint and hinted is None:
        description = "id_token_hint is not an ID token this server issued to this client."
        raise InvalidRequestError(description=description, redirect_uri=uri)
    if user is None or not is_read():
        return False
    if hinted is not None and hinted != user.id:
        # Someone else is signed in here: the hinted user must sign in.
        if "none" in prompts:
            raise LoginRequiredError(redirect_uri=uri)
        return True
    started = signed_in_at()
    too_old = max_age is not None and (started is None or time.time() - started > int(max_age))
    if "none" in prompts:
        if too_old:
            raise LoginRequiredError(redirect_uri=uri)
        app_id = grant.request.client.app.id
        scope = grant.request.payload.scope or ""
        if not holds_grant(db, user_id=user.id, application_id=app_id, scope=scope):
            raise ConsentRequiredError(redirect_uri=uri)
        return False
    return "login" in prompts or too_old


def signed_in(params: dict[str, str]) -> dict[str, str]:
    """Return the request without what asked for a sign-in (``prompt=login``, ``max_age``)."""
    prompts = [p for p in params["prompt"].split() if p != "login"]
    return {**params, "prompt": " ".join(prompts), "max_age": ""}


def consent_page(
    db: Session, grant: Any, params: dict[str, str], app: Application, target: Target, user: User
) -> Response:
    """Ask the user, naming the application, its owner and where they will be sent."""
    owner = db.get(User, app.user_id) if app.user_id else None
    settings = services().settings
    # Chromium applies form-action to the redirect that follows the POST: allow the client.
    allow_form_redirect_to(target.csp_source)
    return page(
        "consent.html",
        form=ConsentForm(data=params),
        sign_out_form=ButtonForm(),
        next_path=authorize_path(params),
        app=app,
        owner=owner,
        user=user,
        target=target,
        offline="offline_access" in (grant.request.scope or "").split(),
        offline_years=settings.offline_token_ttl // YEAR,
        default_days=settings.access_token_ttl // DAY,
    )


def decide(grant: Any, params: dict[str, str], target: Target, user: User) -> Response:
    """Issue a code (Allow) or an access_denied error (Deny), back to the client."""
    form = ConsentForm()
    if not (form.approve.data or form.deny.data):
        return error_page(400, "No decision", "Choose Allow or Deny on the consent page.")
    approved = bool(form.approve.data)
    response: Response = authorization_server().create_authorization_response(
        grant=grant, grant_user=user if approved else None
    )
    audit_consent("consent.approved" if approved else "consent.denied", grant, params, target, user)
    return response


def answer_silently(grant: Any, params: dict[str, str], target: Target, user: User) -> Response:
    """Issue a code without a page (``prompt=none``, the scope already granted)."""
    response: Response = authorization_server().create_authorization_response(
        grant=grant, grant_user=user
    )
    audit_consent("consent.remembered", grant, params, target, user)
    return response


def audit_consent(
    event: str, grant: Any, params: dict[str, str], target: Target, user: User
) -> None:
    """Record a consent decision: who, for which application, scope and redirect host."""
    audit(
        event,
        application_id=grant.request.client.app.id,
        user_id=user.id,
        scope=grant.request.scope or "",
        redirect_host=target.display,
        pkce=bool(params["code_challenge"]),
        ip=request.remote_addr,
    )


def with_issuer(response: Response) -> Response:
    """Add ``iss`` to an error redirect that did not go through the grant (RFC 9207)."""
    Issuer().add_issuer_parameter(authorization_server(), response)
    return response


def authorize_path(params: dict[str, str]) -> str:
    """Return the authorize path that repeats a request (for sign-in's ``next``)."""
    return "/oauth2/authorize?" + urlencode({k: v for k, v in params.items() if v})


# The sign-in of an OAuth client's user (and the docs' "Authorize" button): a page.
AUTHORIZE_SUMMARY = "Authorization: sign-in, consent, redirect with a code"
AUTHORIZE_QUERY = [{"name": name, "in": "query", "schema": URL_TEXT} for name in AUTHORIZE_PARAMS]

bp = Described("authorize", __name__, tag="pages")
bp.declare(
    "/oauth2/authorize",
    authorize,
    **pages("authorize", AUTHORIZE_SUMMARY, "get", parameters=AUTHORIZE_QUERY),
    **pages("authorize", AUTHORIZE_SUMMARY, "post"),
)
