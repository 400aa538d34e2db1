"""The catalog API's one mapping of errors to Falcon responses."""

from __future__ import annotations

import logging
from typing import Any

import falcon
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError

from common.api.errors import APIError
from common.db import describe_failure

log = logging.getLogger("artcat.resource")


def handle_api_error(req: falcon.Request, resp: falcon.Response, ex: APIError, _p: Any) -> None:
    """Render a domain error."""
    resp.status = falcon.code_to_http_status(ex.status)
    if ex.retry_after is not None:
        resp.set_header("Retry-After", str(ex.retry_after))
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
