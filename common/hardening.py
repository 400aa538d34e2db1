"""Response hardening for both services: one WSGI middleware around each app.

- **Host header.** Without PUBLIC_URL the services build their links and the OAuth issuer from
  the request's ``Host``, which the client chooses. Then only a loopback ``Host`` (``localhost``,
  ``127.0.0.0/8``, ``[::1]``) is served: any other is answered 400 before the app runs, so a
  forged ``Host: evil.example`` can never steer a link (nor can a DNS-rebinding page reach a
  development server). A request without ``Host`` (HTTP/1.0) is served: the framework then uses
  the server's own address. With PUBLIC_URL set, links come from it and ``Host`` is not read.
- **HSTS.** When PUBLIC_URL is https, every response carries ``Strict-Transport-Security``
  (``HSTS_MAX_AGE``; 0 sends none).
- **Cache-Control.** An app may name a default for responses that set none (the auth server:
  ``private, no-store``, since all it serves is about accounts, applications and tokens).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import orjson

from common.settings import Settings, is_loopback_host

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

PRIVATE = "private, no-store"
log = logging.getLogger("artcat.hardening")

_REFUSED_BODY = orjson.dumps(
    {
        "type": "param_error",
        "message": "This server answers only to a loopback Host until PUBLIC_URL is set.",
    }
)


# A client sends the same few Host values on every request; parsing one costs about 20 us.
@functools.lru_cache(maxsize=1024)
def loopback_host_header(value: str) -> bool:
    """Tell whether a ``Host`` header value names a loopback host (with a valid port, if any)."""
    if not value or any(c in value for c in "/?#@\\ "):
        return False
    try:
        parts = urlsplit(f"//{value}")
        _ = parts.port  # a port that is not a number in range raises here
    except ValueError:
        return False
    return is_loopback_host(parts.hostname or "")


def hsts_value(settings: Settings) -> str | None:
    """Return the Strict-Transport-Security header value, or None when none is sent."""
    if not settings.https or settings.hsts_max_age <= 0:
        return None
    return f"max-age={settings.hsts_max_age}; includeSubDomains"


class Hardening:
    """Refuse a forged Host when links would follow it; add HSTS and a default Cache-Control."""

    def __init__(
        self, app: WSGIApp, settings: Settings, *, default_cache_control: str | None = None
    ) -> None:
        self.app = app
        self.check_host = not settings.public_url
        extra = []
        hsts = hsts_value(settings)
        if hsts:
            extra.append(("Strict-Transport-Security", hsts))
        self.extra: tuple[tuple[str, str], ...] = tuple(extra)
        self.default_cache_control = default_cache_control

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """Serve one request through the app (or refuse its Host header)."""
        if self.check_host:
            host = environ.get("HTTP_HOST")
            if host is not None and not loopback_host_header(host):
                log.warning("refused a request for a non-loopback Host (PUBLIC_URL is unset)")
                start_response(
                    "400 Bad Request",
                    [
                        ("Content-Type", "application/json"),
                        ("Content-Length", str(len(_REFUSED_BODY))),
                        ("Cache-Control", "no-store"),
                    ],
                )
                return [_REFUSED_BODY]
        if not self.extra and self.default_cache_control is None:
            return self.app(environ, start_response)

        def add_headers(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers.extend(self.extra)
            if self.default_cache_control is not None and not any(
                name.lower() == "cache-control" for name, _ in headers
            ):
                headers.append(("Cache-Control", self.default_cache_control))
            return start_response(status, headers, exc_info)

        return self.app(environ, add_headers)
