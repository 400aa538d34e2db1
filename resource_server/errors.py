"""Domain errors of the catalog API and their one mapping to HTTP responses."""

from __future__ import annotations

import logging
from typing import Any

import falcon
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError

from common.db import describe_failure

log = logging.getLogger("artcat.resource")

INVALID_TOKEN = "The access token is invalid or has expired."  # noqa: S105  # nosec B105 # a message


class APIError(Exception):
    """An error answered with ``{type, message[, detail]}``."""

    status = falcon.HTTP_400
    type = "other_error"

    def __init__(self, message: str, detail: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def body(self) -> dict[str, Any]:
        """Return the JSON body of the error."""
        body: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.detail:
            body["detail"] = self.detail
        return body


class AuthError(APIError):
    """A missing, unknown or expired token (401)."""

    status = falcon.HTTP_401
    type = "auth_error"

    def __init__(self, message: str = INVALID_TOKEN) -> None:
        super().__init__(message)


class ParamError(APIError):
    """A malformed value of a known parameter (400), naming the parameter."""

    type = "param_error"

    @classmethod
    def invalid(cls, name: str, reason: str = "is invalid") -> ParamError:
        """Return the error for one parameter."""
        return cls(f"{name.replace('_', ' ').capitalize()} {reason}.", {name: [reason]})


class TooLarge(APIError):
    """A request body over the limit (413): waitress answers it first; other servers get this."""

    status = falcon.HTTP_413


class NotFound(APIError):
    """An unknown resource (404 ``<Model> Not Found``)."""

    status = falcon.HTTP_404

    def __init__(self, model: str) -> None:
        super().__init__(f"{model} Not Found")


def handle_api_error(req: falcon.Request, resp: falcon.Response, ex: APIError, _p: Any) -> None:
    """Render a domain error."""
    resp.status = ex.status
    resp.media = ex.body()


def handle_http_error(
    req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError, _p: Any
) -> None:
    """Render falcon's own errors (unknown route, bad method, ...) in the API's envelope."""
    resp.status = ex.status
    if ex.headers:
        resp.set_headers(ex.headers)
    if ex.status_code == 406 or ex.status_code == 415:
        resp.status = falcon.HTTP_406
        resp.media = {"error": ex.description or "Not Acceptable"}
        return
    kind = "param_error" if ex.status_code == 400 else "other_error"
    resp.media = {"type": kind, "message": ex.description or ex.title.partition(" ")[2]}


def handle_unavailable(req: falcon.Request, resp: falcon.Response, ex: Exception, _p: Any) -> None:
    """Answer 503 when a store is unreachable: never serve a request without its token check."""
    log.warning("store unavailable: %s", describe_failure(ex))
    resp.status = falcon.HTTP_503
    resp.set_header("Retry-After", "1")
    resp.media = {"type": "other_error", "message": "Service temporarily unavailable."}


def handle_unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception, _p: Any) -> None:
    """Log an unexpected failure and answer a JSON 500 without internals."""
    if isinstance(ex, falcon.HTTPError):
        handle_http_error(req, resp, ex, _p)
        return
    log.exception("unhandled error on %s %s", req.method, req.path)
    resp.status = falcon.HTTP_500
    resp.media = {"type": "other_error", "message": "Internal server error."}


def register(app: falcon.App) -> None:
    """Register the error mapping (most general first: falcon picks the most specific)."""
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(RedisError, handle_unavailable)
    app.add_error_handler(OperationalError, handle_unavailable)
    app.add_error_handler(APIError, handle_api_error)
