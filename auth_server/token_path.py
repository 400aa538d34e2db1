"""Refresh grants at the token endpoint, answered before Flask dispatches them.

A refresh is the one request a client makes every hour per user, and Flask's request handling
(the request context, its hooks, the response object) cost a tenth of one. A refresh grant's
form POST is therefore taken here, before Flask, and answered by the same Authlib server,
grant, client checks and token code as through the Flask view (``auth_server.views.oauth``):
only the way the request reaches them and the answer leaves them differ.

What Flask does for the token endpoint, and where it happens here:

- the request id, access log, metrics and response hardening: the middlewares around the app
  (``common.observability``, ``common.hardening``), which this sits inside of; the route's
  label for them (``_label_route``) is set here;
- the before-request hooks of ``auth_server.app`` and ``auth_server.web``: the storage
  cleanup's start (called here); secrets in the query string and an undecodable query or body
  refused (a request with a query string, or a body that is not valid UTF-8 once decoded, is
  left to Flask, which refuses it); the pages' CSRF check and form protection (not this route);
  ``BARE_HOOKS`` lists them, and a test fails when the app has another;
- the after-request hook of ``auth_server.web`` (``X-Content-Type-Options: nosniff``), and
  Flask's response (status line, JSON body, Content-Length): rendered here, header for header;
- the teardown (the request's database session closed): here, after the answer;
- ``flask.request``: a Flask ``Request`` over the same environ, reached through
  ``auth_server.context.current_request`` (``g`` and ``current_app`` are those of an app
  context pushed here);
- errors: an OAuth error the grant raises is answered by Authlib as through Flask; anything
  else raised (a store down, a malformed request) is handed to Flask's own error handling, in
  a request context pushed for it, so its answer is the Flask path's.

Everything else (other grants, a query string, a JSON body, GET) goes to Flask untouched.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask
from flask.ctx import RequestContext
from werkzeug.http import HTTP_STATUS_CODES

from auth_server.context import bare_request
from auth_server.params import EXCHANGE_PATH, FORM, FORM_PAIRS, parse_form
from auth_server.server import EXTENSION_KEY, OAuthRequest, Server, close_request_db
from common.observability import ROUTE_KEY
from common.urlencoding import is_utf8_urlencoded

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

GRANT = "refresh_token"
# A refresh's body is a few hundred bytes; anything much longer goes the usual way.
MAX_BODY = 16 * 1024
# The before-request hooks of the app, by name, each covered here (see the module).
BARE_HOOKS = frozenset(
    {
        "_label_route",
        "_refuse_secrets_in_query",
        "ensure_started",
        "_refuse_undecodable",
        "_protect_forms",
        "csrf_protect",
    }
)
# The after-request hooks, each rendered here.
BARE_AFTER_HOOKS = frozenset({"_security_headers"})
NOSNIFF = ("X-Content-Type-Options", "nosniff")


def taken(environ: dict[str, Any]) -> bool:
    """Tell whether a request may be a refresh grant's form POST (its body decides)."""
    if environ.get("PATH_INFO") != EXCHANGE_PATH or environ.get("REQUEST_METHOD") != "POST":
        return False
    if environ.get("QUERY_STRING"):
        return False
    mimetype = environ.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    if mimetype != FORM:
        return False
    length: str = environ.get("CONTENT_LENGTH") or ""
    return length.isdigit() and 0 < int(length) <= MAX_BODY


class TokenPath:
    """The WSGI app in front of Flask's: refresh grants here, every other request to Flask."""

    def __init__(self, app: Flask, wsgi_app: WSGIApp) -> None:
        self.app = app
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Answer a refresh grant, or hand the request to Flask."""
        if not taken(environ):
            return self.wsgi_app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
        environ["wsgi.input"] = io.BytesIO(body)  # for Flask, should it read it after all
        if not is_utf8_urlencoded(body):
            return self.wsgi_app(environ, start_response)  # refused there (_refuse_undecodable)
        # Parsed as werkzeug parses a form (``auth_server.params.form_pairs``, which reads them
        # from here).
        pairs = parse_form(body)
        if pairs is None:
            return self.wsgi_app(environ, start_response)
        grant = next((value for name, value in pairs if name == "grant_type"), None)
        if grant != GRANT:
            return self.wsgi_app(environ, start_response)
        environ[FORM_PAIRS] = pairs
        environ[ROUTE_KEY] = EXCHANGE_PATH
        return self.answer(environ, start_response)

    def answer(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        """Answer the refresh grant (see the module)."""
        app = self.app
        with app.app_context():
            try:
                req = app.request_class(environ)
                req.json_module = app.json
                mark = bare_request.set(req)
                try:
                    app.extensions["artcat.cleanup"].ensure_started()
                    server: Server = app.extensions[EXTENSION_KEY]
                    status, payload, headers = server.create_token_response(OAuthRequest(req))
                except Exception as ex:  # every error goes to Flask's handling (logged in here)
                    failure: Exception | None = ex
                else:
                    failure = None
                finally:
                    bare_request.reset(mark)  # Flask's request answers from here on
                if failure is not None:
                    return self.failed(environ, start_response, failure)
                return self.render(start_response, status, payload, headers)
            finally:
                close_request_db()

    def render(
        self,
        start_response: Callable[..., Any],
        status: int,
        payload: Any,
        headers: list[tuple[str, str]],
    ) -> list[bytes]:
        """Write the answer as Flask writes Authlib's (``handle_response``), after-request hook
        included."""
        data = (self.app.json.dumps(payload) if isinstance(payload, dict) else payload).encode()
        out = [*headers, ("Content-Length", str(len(data)))]
        if not any(name.lower() == NOSNIFF[0].lower() for name, _ in out):
            out.append(NOSNIFF)
        start_response(f"{status} {HTTP_STATUS_CODES.get(status, 'UNKNOWN').upper()}", out)
        return [data]

    def failed(
        self, environ: dict[str, Any], start_response: Callable[..., Any], ex: Exception
    ) -> Any:
        """Answer an error as Flask answers it: its error handlers and after-request hooks, in
        a request context of its own (the app context and its ``g`` stay this request's)."""
        app = self.app
        ctx = RequestContext(app, environ)
        error: BaseException | None = ex
        ctx.push()
        try:
            try:
                response = app.process_response(app.make_response(app.handle_user_exception(ex)))
            except Exception as again:
                error = again
                response = app.handle_exception(again)
            return response(environ, start_response)
        finally:
            if error is not None and app.should_ignore_error(error):
                error = None
            ctx.pop(error)
