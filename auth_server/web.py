"""What every HTML page of the auth server shares: CSRF, security headers, the browser session.

CSRF protection is switched on for the HTML pages only (``/account/...`` and the consent form at
``/oauth2/authorize``): the JSON/OAuth endpoints authenticate clients, not browser cookies.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749.errors import InvalidRequestError
from flask import (
    Flask,
    current_app,
    g,
    redirect,
    render_template,
    request,
    send_from_directory,
    session,
    url_for,
)
from flask_wtf.csrf import CSRFError, CSRFProtect
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from auth_server.accounts import end_sessions
from auth_server.audit import audit
from auth_server.context import services
from auth_server.forms import STRENGTH_HINT
from auth_server.inputs import undecodable_part
from auth_server.mail import Mailer
from common.api.errors import ParamError
from common.models import User

csrf = CSRFProtect()

STATIC_DIR = Path(__file__).resolve().parent / "static"
DEFAULT_NEXT = "/account"
MAX_NEXT_LENGTH = 2048
CSP = (
    "default-src 'self'; frame-ancestors 'none'; form-action 'self'{extra}; "
    "base-uri 'none'; object-src 'none'"
)
HTML_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
_SESSION_USER = "uid"
_SESSION_FINGERPRINT = "pwf"
_SESSION_STARTED = "at"
_SESSION_GENERATION = "gen"


def register(app: Flask) -> None:
    """Switch on CSRF for the HTML pages, the security headers and the mailer; refuse requests
    whose query string or form body is not valid UTF-8 (on every route, pages or not)."""
    app.config.update(
        WTF_CSRF_CHECK_DEFAULT=False,  # opt-in below: the API endpoints take no cookies
        # The strict https Referer check cannot work with Referrer-Policy: no-referrer (browsers
        # then send no Referer); the session-bound token and SameSite=Lax do the job.
        WTF_CSRF_SSL_STRICT=False,
    )
    csrf.init_app(app)
    app.before_request(_refuse_undecodable)
    app.before_request(_protect_forms)
    app.after_request(_security_headers)
    app.register_error_handler(CSRFError, _csrf_error)
    app.context_processor(
        lambda: {"signed_in": _SESSION_USER in session, "password_hint": STRENGTH_HINT}
    )
    app.extensions["artcat.mailer"] = Mailer(app.extensions["artcat"].settings)


def is_page_path(path: str) -> bool:
    """Tell whether a path is one of the HTML pages (which carry forms and cookies)."""
    return path in ("/account", "/oauth2/authorize", "/activate") or path.startswith("/account/")


def _refuse_undecodable() -> Response | None:
    """Refuse a query string or form body that is not valid UTF-8, before anything reads it."""
    part = undecodable_part(request)
    if part is None:
        return None
    what = "address" if part == "query" else "form"
    if is_page_path(request.path):
        return error_page(400, "This request could not be read", f"The {what} is not valid UTF-8.")
    message = f"The {'query string' if part == 'query' else 'request body'} is not valid UTF-8."
    if request.path.startswith("/oauth2/"):
        raise InvalidRequestError(description=message)
    raise ParamError(message, {part: ["is not valid UTF-8"]})


def _protect_forms() -> None:
    if not is_page_path(request.path):
        return
    if request.routing_exception is not None:
        # A method the page does not take is a 405 with Allow (no page at all, a 404): said
        # before the CSRF check, which only guards the forms a page does take.
        raise request.routing_exception
    csrf.protect()


def _security_headers(resp: Response) -> Response:
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    if resp.mimetype == "text/html":
        extra = g.get("form_action_extra", "")
        resp.headers["Content-Security-Policy"] = CSP.format(extra=f" {extra}" if extra else "")
        for name, value in HTML_HEADERS.items():
            resp.headers[name] = value
    return resp


def _csrf_error(ex: CSRFError) -> Response:
    return error_page(
        400,
        "This form has expired",
        "The form was too old or was not sent from this site, so nothing was changed. "
        "Go back, reload the page and try again.",
    )


def is_read() -> bool:
    """Tell whether a page request only reads (GET, or HEAD: a GET without its body).

    Everything else is a form submission, which the CSRF check covers; a HEAD must never be
    taken for one (it is not checked, and it would sign out or create things unasked).
    """
    return request.method in ("GET", "HEAD")


def allow_form_redirect_to(csp_source: str) -> None:
    """Let this page's form submission be redirected to a client (CSP form-action covers it)."""
    g.form_action_extra = csp_source


def page(template: str, status: int = 200, **context: object) -> Response:
    """Render an HTML page."""
    return current_app.make_response((render_template(template, **context), status))


def error_page(
    status: int, title: str, message: str, link: tuple[str, str] | None = None
) -> Response:
    """Render an HTML error page (never a redirect), with an optional way on: (href, text)."""
    return page("error.html", status, title=title, message=message, link=link)


def static_file(filename: str) -> Response:
    """Serve the pages' CSS from under /account/ (the path the proxy sends to this server)."""
    return send_from_directory(STATIC_DIR, filename, max_age=3600)


# -- the browser session --------------------------------------------------------------------


def password_fingerprint(password_hash: str | None) -> str:
    """Return a keyed fingerprint of a password hash: sessions and reset links are bound to it."""
    key = services().settings.secret_key.encode()
    return hmac.new(key, (password_hash or "").encode(), hashlib.sha256).hexdigest()[:32]


def start_session(user: User) -> None:
    """Sign a user in on a fresh session (nothing from the earlier session is kept)."""
    session.clear()
    session[_SESSION_USER] = user.id
    session[_SESSION_FINGERPRINT] = password_fingerprint(user.password_hash)
    session[_SESSION_STARTED] = int(time.time())
    # The cookie is signed, not stored: a copy of it stays valid until the user's generation
    # moves on (sign-out, password change or reset), which ends every session at once.
    session[_SESSION_GENERATION] = user.session_generation


# The sign-in page's query parameter asking a signed-in user to sign in again.
AGAIN = "again"


def end_session() -> None:
    """Forget the session in this browser (other copies of the cookie: see ``end_sessions``)."""
    session.clear()


def sign_out_everywhere() -> str | None:
    """Sign this browser's user out of every session (this one, other devices', any copied
    cookie) and forget this browser's; return the user's id (None: nobody was signed in)."""
    user_id = None
    with services().stores.sessions() as db:
        user = current_user(db)
        if user is not None:
            end_sessions(db, user)
            user_id = user.id
            db.commit()
    end_session()
    if user_id is not None:
        audit("sign_out", user_id=user_id, ip=request.remote_addr)
    return user_id


def current_user(db: Session) -> User | None:
    """Return the signed-in user, or None when signed out, expired, disabled or re-passworded."""
    user_id = session.get(_SESSION_USER)
    started = session.get(_SESSION_STARTED)
    generation = session.get(_SESSION_GENERATION)
    if not isinstance(user_id, str) or not isinstance(started, int):
        return None
    if not isinstance(generation, int) or isinstance(generation, bool):
        return None
    if time.time() - started > services().settings.signed_in_ttl:
        return None
    user = db.get(User, user_id)
    if user is None or not user.enabled:
        return None
    # Sign-out, a password change or a reset moved the generation on: this session has ended
    # (a replayed cookie included).
    if generation != user.session_generation:
        return None
    # A password set by any other way (a rehash, the command line) ends the sessions too.
    if not hmac.compare_digest(
        str(session.get(_SESSION_FINGERPRINT, "")), password_fingerprint(user.password_hash)
    ):
        return None
    return user


def signed_in_at() -> int | None:
    """Return when this browser's session started (Unix seconds), None when signed out."""
    started = session.get(_SESSION_STARTED)
    return started if isinstance(started, int) and not isinstance(started, bool) else None


def safe_next(value: str | None) -> str | None:
    """Return ``value`` when it is a relative path on this site, else None (no open redirect)."""
    if not value or len(value) > MAX_NEXT_LENGTH:
        return None
    if not value.startswith("/") or value.startswith("//"):
        return None
    if "\\" in value or any(ord(c) < 0x21 or ord(c) == 0x7F for c in value):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme or parts.netloc:
        return None
    return value


def sign_in_redirect(next_path: str | None = None, *, again: bool = False) -> Response:
    """Send a browser to the sign-in page, coming back to ``next_path`` after; ``again`` shows
    the form to a signed-in user too (a fresh sign-in asked for), without ending the session:
    a link that signed people out would let any site do it."""
    target = safe_next(next_path or request.full_path.rstrip("?"))
    args: dict[str, Any] = {"next": target} if target else {}
    if again:
        args[AGAIN] = "1"
    return redirect(url_for("session.sign_in", **args))
