"""Serving: the WSGI path dispatcher of ``serve all`` and the waitress runner."""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Callable, Iterable
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# Paths the authorization server owns; everything else goes to the catalog.
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


def quiet_waitress_logs() -> None:
    """Silence waitress's per-request "Task queue depth" warning (it costs about 6%)."""
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def run_waitress(app: WSGIApp, host: str, port: int, *, threads: int = 4, **kw: Any) -> None:
    """Serve ``app`` with waitress until interrupted."""
    import waitress

    quiet_waitress_logs()
    # SIGTERM exits like Ctrl-C, so the embedded Redis and the pools are shut down cleanly.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    with contextlib.suppress(KeyboardInterrupt):
        waitress.serve(app, host=host, port=port, threads=threads, **{**WAITRESS_OPTIONS, **kw})


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(0)
