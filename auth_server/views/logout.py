"""``/oauth2/logout``: OpenID Connect RP-Initiated Logout (``auth_server.logout``).

The sign-out goes ahead at once when the ``id_token_hint`` names the user signed in (or nobody
is signed in); otherwise the user is asked, on a CSRF-protected form that posts back here.
A refused request (a forged hint, a client_id outside the hint's audience) gets an error page,
and an unregistered ``post_logout_redirect_uri`` the signed-out page: never a redirect.
"""

from __future__ import annotations

from authlib.oauth2.rfc6749.errors import OAuth2Error
from authlib.oidc.rpinitiated import EndSessionRequest
from flask import g, request
from joserfc.errors import JoseError
from werkzeug.wrappers import Response

from auth_server.context import services
from auth_server.forms import ButtonForm
from auth_server.logout import CONFIRMED, LOGOUT_PATH, client_of, hinted_subject
from auth_server.redirects import parse_target
from auth_server.server import authorization_server
from auth_server.views.described import Described, pages
from auth_server.web import allow_form_redirect_to, csrf, current_user, error_page, page

# The request's parameters the confirmation form carries back.
CARRIED = ("id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales")
CONFIRM = "confirm"


def logout() -> Response:
    """End the user's sessions at a relying party's request (GET or POST)."""
    confirmed = request.method == "POST" and CONFIRM in request.form
    head = request.method == "HEAD"
    if confirmed:
        csrf.protect()  # a forged confirmation gets the expired-form page
    g.setdefault(CONFIRMED, confirmed)
    server = authorization_server()
    try:
        req = server.validate_endpoint_request("end_session")
    except OAuth2Error as ex:
        return _refused(str(ex.description or "The request is malformed."))
    except (JoseError, ValueError, TypeError, KeyError):
        return _refused("The id_token_hint is not an ID token this service issued.")
    with services().stores.sessions() as db:
        user = current_user(db)
        user_id = user.id if user is not None else None
    # A HEAD only reads (a prefetch must sign nobody out): it gets the confirmation page.
    if user_id is not None and not confirmed and (hinted_subject(req) != user_id or head):
        return _confirm(req)
    response: Response | None = server.create_endpoint_response("end_session", req)
    return response or page("signed_out.html")


def _refused(reason: str) -> Response:
    return error_page(400, "This sign-out request was refused", reason)


def _confirm(req: EndSessionRequest) -> Response:
    """Ask the user to confirm; let the form's redirect go to a URI the client registered."""
    client = client_of(req)
    values = request.values
    uri = values.get("post_logout_redirect_uri", "")
    if client is not None and uri in client.client_metadata["post_logout_redirect_uris"]:
        target, _ = parse_target(uri)
        if target is not None:
            allow_form_redirect_to(target.csp_source)
    carried = {name: values[name] for name in CARRIED if values.get(name)}
    return page(
        "logout_confirm.html",
        form=ButtonForm(),
        carried=carried,
        app_name=client.app.name if client is not None else None,
    )


bp = Described("logout", __name__, tag="pages")
bp.declare(
    LOGOUT_PATH,
    logout,
    **pages(
        "end_session", "Sign out at an application's request (RP-initiated logout)", "get", "post"
    ),
)
