"""Serving: the WSGI path dispatcher of ``serve all`` and the waitress runner."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from common.settings import Settings

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# Paths the authorization server owns; everything else goes to the catalog (the API, and its
# pages: the front door at /, the API docs at /docs, the artist, artwork... pages).
AUTH_PREFIXES = ("/oauth2/", "/api/tokens/", "/api/applications", "/account/", "/.well-known/")


def is_auth_path(path: str) -> bool:
    """Tell whether a request path belongs to the authorization server."""
    return path.startswith(AUTH_PREFIXES) or path in ("/oauth2", "/account", "/api/tokens")


class PathDispatcher:
    """Send each request to the auth server or the catalog by its path (as the proxy does)."""

    def __init__(self, auth_app: WSGIApp, resource_app: WSGIApp) -> None:
        self.auth_app = auth_app
        self.resource_app = resource_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Dispatch one request."""
        path = environ.get("PATH_INFO", "")
        app = self.auth_app if is_auth_path(path) else self.resource_app
        return app(environ, start_response)


# Limits every waitress server applies before the app sees a request: a larger body is answered
# 413 by waitress itself (chunked bodies included), so nothing is buffered past it.
MAX_REQUEST_BODY = 1024 * 1024
WAITRESS_OPTIONS: dict[str, Any] = {
    "max_request_body_size": MAX_REQUEST_BODY,
    "max_request_header_size": 64 * 1024,
    "ident": "artcat",
}


PROXY_HEADERS = frozenset({"x-forwarded-for", "x-forwarded-proto"})


def proxy_options(settings: Settings) -> dict[str, Any]:
    """Return waitress's options for the reverse proxy in front (TRUSTED_PROXY).

    Forwarding headers from anyone else are dropped before the app sees the request, so a
    client cannot choose the address the sign-in throttle counts against.
    """
    options: dict[str, Any] = {"clear_untrusted_proxy_headers": True}
    if settings.trusted_proxy:
        options.update(
            trusted_proxy=settings.trusted_proxy,
            trusted_proxy_count=settings.trusted_proxy_count,
            trusted_proxy_headers=set(PROXY_HEADERS),
        )
    return options


def quiet_waitress_logs() -> None:
    """Silence waitress's per-request "Task queue depth" warning (it costs about 6%)."""
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def run_waitress(
    app: WSGIApp, host: str, port: int, *, threads: int = 4, grace: float = 10.0, **kw: Any
) -> None:
    """Serve ``app`` with waitress until SIGTERM or Ctrl-C, then stop gracefully."""
    from common.graceful import build_server, serve_until_stopped

    quiet_waitress_logs()
    server = build_server(app, host=host, port=port, threads=threads, **{**WAITRESS_OPTIONS, **kw})
    serve_until_stopped(server, grace=grace)
