"""``/oauth2/authorize``: the browser side of the authorization code flow (RFC 6749, RFC 7636).

The client and its redirect URI are checked first; while either is in doubt the answer is an error
page, never a redirect (RFC 6749 4.1.2.1). Only then do request errors go back to the client. The
user is asked every time, on a page that names the application, its owner and where they will be
sent; the decision is a CSRF-protected POST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from flask import redirect, request
from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from auth_server.audit import audit
from auth_server.codes import issue_code
from auth_server.context import services
from auth_server.forms import ButtonForm, ConsentForm
from auth_server.redirects import Target, check_redirect_uri, with_params
from auth_server.web import (
    allow_form_redirect_to,
    current_user,
    error_page,
    is_read,
    page,
    sign_in_redirect,
)
from common.authorize_params import AUTHORIZE_PARAMS
from common.models import Application, User

ALLOWED_SCOPES = frozenset({"offline_access"})
STATE_MAX = 1024
# RFC 7636 4.2: BASE64URL(SHA256(verifier)) is exactly 43 characters.
S256_CHALLENGE_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")
YEAR = 365 * 86_400
DAY = 86_400


class PageError(Exception):
    """The client or redirect URI cannot be trusted: answer with an error page."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title
        self.message = message


class RedirectError(Exception):
    """A request error the client is told about, on its validated redirect URI."""

    def __init__(
        self, error: str, description: str, target: Target, state: str | None, *, trusted: bool
    ) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.target = target
        self.state = state
        self.trusted = trusted  # the URI was registered by the application

    def location(self) -> str:
        """Return the redirect URI carrying the error (and the state)."""
        params = {"error": self.error, "error_description": self.description}
        if self.state is not None:
            params["state"] = self.state
        return with_params(self.target.uri, params)


@dataclass(frozen=True)
class AuthorizationRequest:
    """A validated authorization request."""

    application: Application
    target: Target
    state: str | None
    scope: str
    code_challenge: str | None
    code_challenge_method: str | None

    def params(self) -> dict[str, str]:
        """Return the request's parameters, as the consent form carries them."""
        return {
            "client_id": self.application.client_id,
            "redirect_uri": self.target.uri,
            "response_type": "code",
            "state": self.state or "",
            "scope": self.scope,
            "code_challenge": self.code_challenge or "",
            "code_challenge_method": self.code_challenge_method or "",
        }

    def path(self) -> str:
        """Return the authorize path that repeats this request (for sign-in's ``next``)."""
        return "/oauth2/authorize?" + urlencode({k: v for k, v in self.params().items() if v})


def parse_request(db: Session, values: MultiDict[str, str]) -> AuthorizationRequest:
    """Validate an authorization request; raise PageError or RedirectError."""
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
    state = values.get("state") or None

    def fail(error: str, description: str) -> RedirectError:
        """Return the error to send back to the (now validated) redirect URI."""
        echo = state if state is not None and len(state) <= STATE_MAX else None
        return RedirectError(error, description, target, echo, trusted=bool(app.redirect_uris))

    repeated = [n for n in AUTHORIZE_PARAMS if len(values.getlist(n)) > 1]
    if repeated:
        raise fail("invalid_request", f"Repeated parameter: {', '.join(repeated)}.")
    if state is not None and len(state) > STATE_MAX:
        raise fail("invalid_request", f"state is longer than {STATE_MAX} characters.")
    response_type = values.get("response_type", "")
    if not response_type:
        raise fail("invalid_request", "response_type is missing.")
    if response_type != "code":
        raise fail("unsupported_response_type", "Only response_type=code is supported.")
    scopes = values.get("scope", "").split()
    unknown = [s for s in scopes if s not in ALLOWED_SCOPES]
    if unknown:
        raise fail("invalid_scope", "The only scope is offline_access.")
    challenge = values.get("code_challenge") or None
    method = values.get("code_challenge_method") or None
    if method is not None and challenge is None:
        raise fail("invalid_request", "code_challenge_method was sent without code_challenge.")
    if challenge is not None:
        # A missing method means "plain" (RFC 7636 4.3), which is not accepted.
        if method != "S256":
            raise fail("invalid_request", "Only code_challenge_method=S256 is supported.")
        if not S256_CHALLENGE_RE.match(challenge):
            raise fail("invalid_request", "code_challenge is not a S256 challenge.")
    return AuthorizationRequest(
        application=app,
        target=target,
        state=state,
        scope=" ".join(sorted(set(scopes))),
        code_challenge=challenge,
        code_challenge_method=method,
    )


def authorize() -> Response:
    """Show the consent page (GET) or act on the user's decision (POST)."""
    values = request.args if is_read() else request.form
    with services().stores.sessions() as db:
        try:
            req = parse_request(db, values)
        except PageError as ex:
            return error_page(400, ex.title, ex.message)
        except RedirectError as ex:
            if ex.trusted:
                return redirect(ex.location())
            # A URI the application never registered is not trusted enough for an automatic
            # redirect, or this endpoint would be an open redirector (RFC 9700 4.11.2): the
            # user is told, and may follow the link back to the application.
            return error_page(
                400,
                "This sign-in link is not valid",
                f"The application's request was refused ({ex.error}): {ex.description}",
                (ex.location(), f"Return to {ex.target.display}"),
            )
        user = current_user(db)
        if user is None:
            return sign_in_redirect(request.full_path if is_read() else req.path())
        if is_read():
            return _consent_page(db, req, user)
        return _decide(db, req, user)


def _consent_page(db: Session, req: AuthorizationRequest, user: User) -> Response:
    app = req.application
    owner = db.get(User, app.user_id) if app.user_id else None
    settings = services().settings
    form = ConsentForm(data=req.params())
    # Chromium applies form-action to the redirect that follows the POST: allow the client.
    allow_form_redirect_to(req.target.csp_source)
    return page(
        "consent.html",
        form=form,
        sign_out_form=ButtonForm(),
        next_path=req.path(),
        app=app,
        owner=owner,
        user=user,
        target=req.target,
        offline="offline_access" in req.scope.split(),
        offline_years=settings.offline_token_ttl // YEAR,
        default_days=settings.access_token_ttl // DAY,
        registered=bool(app.redirect_uris),
    )


def _decide(db: Session, req: AuthorizationRequest, user: User) -> Response:
    form = ConsentForm()
    fields = {
        "application_id": req.application.id,
        "user_id": user.id,
        "scope": req.scope,
        "redirect_host": req.target.display,
        "pkce": req.code_challenge is not None,
        "ip": request.remote_addr,
    }
    if form.approve.data:
        code = issue_code(
            db,
            application=req.application,
            user=user,
            redirect_uri=req.target.uri,
            scope=req.scope,
            code_challenge=req.code_challenge,
            code_challenge_method=req.code_challenge_method,
            ttl=services().settings.code_ttl,
        )
        db.commit()
        audit("consent.approved", **fields)
        params = {"code": code}
    elif form.deny.data:
        audit("consent.denied", **fields)
        params = {"error": "access_denied", "error_description": "The user denied access."}
    else:
        return error_page(400, "No decision", "Choose Allow or Deny on the consent page.")
    if req.state is not None:
        params["state"] = req.state
    return redirect(with_params(req.target.uri, params))
