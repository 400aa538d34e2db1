"""Domain errors of the auth server and their one mapping to HTTP responses."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from common.db import describe_failure

log = logging.getLogger("artcat.auth")


class APIError(Exception):
    """An error answered with ``{type, message[, detail]}``."""

    status = 400
    type = "other_error"

    def __init__(
        self,
        message: str,
        detail: dict[str, list[str]] | None = None,
        *,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.retry_after = retry_after  # seconds, for a 429 or 503

    def body(self) -> dict[str, Any]:
        """Return the JSON body of the error."""
        body: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.detail:
            body["detail"] = self.detail
        return body


class AuthError(APIError):
    """Bad credentials or an invalid token (401)."""

    status = 401
    type = "auth_error"


class ParamError(APIError):
    """Missing or malformed parameters (400) with a ``detail`` per field."""

    type = "param_error"

    @classmethod
    def missing(cls, *fields: str) -> ParamError:
        """Return the error for blank required fields."""
        message = ", ".join(f"{f.replace('_', ' ').capitalize()} can't be blank" for f in fields)
        return cls(message + ".", {f: ["can't be blank"] for f in fields})


class UnsupportedContentType(Exception):
    """A request body in a content type other than form-urlencoded or JSON (406)."""

    def __init__(self, content_type: str) -> None:
        super().__init__(content_type)
        self.content_type = content_type


def register(app: Flask) -> None:
    """Register the error mapping on the app."""

    @app.errorhandler(APIError)
    def _api_error(ex: APIError) -> tuple[Response, int, dict[str, str]]:
        headers = {"Retry-After": str(ex.retry_after)} if ex.retry_after is not None else {}
        return jsonify(ex.body()), ex.status, headers

    @app.errorhandler(UnsupportedContentType)
    def _content_type(ex: UnsupportedContentType) -> tuple[Response, int]:
        message = f"The requested content-type '{ex.content_type}' is not supported."
        return jsonify({"error": message}), 406

    @app.errorhandler(HTTPException)
    def _http(ex: HTTPException) -> tuple[Response, int, dict[str, str]]:
        code = ex.code or 500
        kind = "param_error" if code == 400 else "other_error"
        # Keep the exception's own headers (a 405's Allow, RFC 9110 15.5.6), not its HTML type.
        headers = {k: v for k, v in ex.get_headers() if k.lower() != "content-type"}
        return jsonify({"type": kind, "message": ex.description or ex.name}), code, headers

    @app.errorhandler(RedisError)
    @app.errorhandler(OperationalError)
    def _unavailable(ex: Exception) -> tuple[Response, int, dict[str, str]]:
        log.warning("store unavailable: %s", describe_failure(ex))
        body = {"type": "other_error", "message": "Service temporarily unavailable."}
        return jsonify(body), 503, {"Retry-After": "1"}

    @app.errorhandler(Exception)
    def _unexpected(ex: Exception) -> tuple[Response, int] | tuple[Response, int, dict[str, str]]:
        if isinstance(ex, HTTPException):
            return _http(ex)
        log.exception("unhandled error")
        return jsonify({"type": "other_error", "message": "Internal server error."}), 500
