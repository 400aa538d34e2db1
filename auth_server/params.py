"""Request parameters from the query string, a form body or a JSON body."""

from __future__ import annotations

from typing import Any

from flask import Request

from auth_server.errors import APIError, UnsupportedContentType

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
JSON = "application/json"


def request_params(req: Request) -> dict[str, str]:
    """Merge query-string and body parameters (the body wins); reject other body types."""
    params: dict[str, str] = {k: v for k, v in req.args.items()}
    if req.method in ("GET", "HEAD", "OPTIONS", "DELETE") and not req.content_length:
        return params
    mimetype = req.mimetype or ""
    if not mimetype:
        if req.content_length:
            raise UnsupportedContentType(req.content_type or "")
        return params
    if mimetype in (FORM, MULTIPART):
        params.update({k: v for k, v in req.form.items()})
    elif mimetype == JSON or mimetype.endswith("+json"):
        body: Any = req.get_json(silent=True)
        if body is None and req.content_length:
            raise APIError("The request body is not valid JSON.")
        if body is not None and not isinstance(body, dict):
            raise APIError("The request body must be a JSON object.")
        for key, value in (body or {}).items():
            if isinstance(value, str | int | float | bool):
                params[str(key)] = str(value)
    else:
        raise UnsupportedContentType(req.content_type or mimetype)
    return params
