"""The auth server's one mapping of errors to Flask responses."""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from common.api.errors import APIError, UnsupportedContentType
from common.db import describe_failure

log = logging.getLogger("artcat.auth")


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
