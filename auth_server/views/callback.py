"""``/oauth2/callback``: a redirect URI that exists, for trying the browser flow by hand.

The demo application registers it, so that signing in through ``/oauth2/authorize`` ends on a
page rather than a 404: it shows the authorization code (or the error) and how to exchange the
code for a token. It is an ordinary page: no cookie is read, nothing is stored, and like every
page it sends no ``Referer`` and is never cached; the access log redacts the code.
"""

from __future__ import annotations

from flask import request
from werkzeug.wrappers import Response

from auth_server.context import issuer, services
from auth_server.views.described import Described, pages
from auth_server.web import page

CALLBACK_PATH = "/oauth2/callback"


def callback() -> Response:
    """Show the code (or the error) the authorization endpoint sent here."""
    args = request.args
    return page(
        "callback.html",
        code=args.get("code", ""),
        state=args.get("state", ""),
        error=args.get("error", ""),
        error_description=args.get("error_description", ""),
        token_url=f"{issuer()}/oauth2/access_token",
        redirect_uri=f"{issuer()}{CALLBACK_PATH}",
        minutes=max(1, services().settings.code_ttl // 60),
    )


bp = Described("callback", __name__, tag="pages")
bp.declare(CALLBACK_PATH, callback, **pages("oauth_callback", "Authorization code", "get"))
