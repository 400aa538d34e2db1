"""Request parameters from the query string, a form body or a JSON body."""

from __future__ import annotations

import json
from typing import Any

from flask import Request

from common.api.errors import ParamError, UnsupportedContentType

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
JSON = "application/json"


def json_body(req: Request) -> Any:
    """Return the parsed JSON body, or None when it is empty or not valid JSON.

    ``Request.get_json(silent=True)`` lets a RecursionError through: a body of 100,000 ``[``
    was a 500. And ``json.loads`` takes ``NaN`` and ``Infinity``, which are not JSON (a name
    of ``NaN`` became the text "nan"). Neither is valid JSON here.
    """
    data = req.get_data(cache=True)
    if not data:
        return None
    try:
        return json.loads(data, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def request_params(req: Request) -> dict[str, str]:
    """Merge query-string and body parameters (the body wins); reject other body types.

    Bodies are form-urlencoded or JSON, as the reference API's; anything else (multipart
    included) is a 406.
    """
    params: dict[str, str] = {k: v for k, v in req.args.items()}
    if req.method in ("GET", "HEAD", "OPTIONS", "DELETE") and not req.content_length:
        return params
    mimetype = req.mimetype or ""
    if not mimetype:
        if req.content_length:
            raise UnsupportedContentType(req.content_type or "")
        return params
    if mimetype == FORM:
        params.update({k: v for k, v in req.form.items()})
    elif mimetype == JSON or mimetype.endswith("+json"):
        body: Any = json_body(req)
        if body is None and req.content_length:
            raise ParamError("The request body is not valid JSON.", {"body": ["is not valid JSON"]})
        if body is not None and not isinstance(body, dict):
            raise ParamError(
                "The request body must be a JSON object.", {"body": ["must be an object"]}
            )
        for key, value in (body or {}).items():
            if isinstance(value, str | int | float | bool):
                params[str(key)] = str(value)
    else:
        raise UnsupportedContentType(req.content_type or mimetype)
    return params


# Never in a URL: query strings end up in access logs, proxies and browser history.
SECRET_PARAMS = (
    "client_secret",
    "password",
    "code",
    "code_verifier",
    "token",
    "oauth_token",
    "oauth_token_secret",
    "access_token",
)


def secrets_in_query(req: Request) -> list[str]:
    """Return the secret parameters a request carries in its query string (before decoding).

    Names are compared after percent-decoding (``client%5Fsecret`` is ``client_secret``), as
    werkzeug decodes them for every reader.
    """
    return [name for name in SECRET_PARAMS if name in req.args]
