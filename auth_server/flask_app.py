"""The auth server's Flask class: Flask's own request handling, with what an API request does
not need left out of it.

Most requests here come from programs (token requests, the JSON API), with no cookie and a
short JSON answer; on a token refresh Flask's share of the CPU was as large as the database's.
Three parts of it are done more cheaply, with the same outcome:

- the session is opened from a cookie only when there is one (a request without one gets an
  empty session without the signing serializer being built), and saved only when it was used;
- each hook is checked for being a coroutine function once, not on every request;
- a response held in memory (not streamed) is handed to the server as a list of one body, as
  PEP 3333 allows: the server writes it at once, where an iterator is stepped through in
  Python (and the access log's middleware wraps it in a generator of its own). A response
  given a callback to call once it is closed (``call_on_close``) is handed over as Flask hands
  it, an iterable the server closes once it wrote the body: a list has no ``close``, and its
  callbacks would run before the client had the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin

# The functions whose answer is kept: every hook, view and error handler of the app (a
# callable made for one request would otherwise stay).
_SYNCED_MAX = 512


class CookieSessions(SecureCookieSessionInterface):
    """Flask's signed cookie sessions, opened and saved only when there is something to do."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """Return the request's session (an empty one without a session cookie)."""
        if app.secret_key and not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Write the session's cookie when it changed (as Flask does), nothing when it was not
        used at all."""
        if not session and not session.modified and not session.accessed:
            return  # Flask would do nothing either
        super().save_session(app, session, response)


class WholeResponse(Response):
    """A response whose body, when it is held in memory, reaches the server as a list."""

    closes_later = False  # a callback waits for the response's close (``call_on_close``)

    def call_on_close(self, func: Callable[[], Any]) -> Callable[[], Any]:
        """Call ``func`` once the server closed the response (as Flask does)."""
        self.closes_later = True
        return super().call_on_close(func)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Answer as WSGI: the whole body at once when there is one in memory."""
        if not self.is_sequence or self.closes_later:
            return super().__call__(environ, start_response)  # streamed, a file, or callbacks
        body, status, headers = self.get_wsgi_response(environ)
        start_response(status, headers)
        try:
            return [b"".join(body)]
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()  # the response's own close (as the server would call it after)


class AuthFlask(Flask):
    """Flask, with the request handling above."""

    response_class = WholeResponse
    session_interface = CookieSessions()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._synced: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``func`` ready to call (Flask's answer, worked out once per function)."""
        synced = self._synced.get(func)
        if synced is None:
            synced = super().ensure_sync(func)
            if len(self._synced) >= _SYNCED_MAX:  # a request's own callables (after_this_request)
                self._synced.clear()
            self._synced[func] = synced
        return synced
