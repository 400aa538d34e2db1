"""Request parameters from the query string, a form body or a JSON body."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from flask import Request

from common.api.errors import ParamError, UnsupportedContentType

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
JSON = "application/json"
# Where ``form_pairs`` keeps a request's pairs (the request's environ: they are read twice).
FORM_PAIRS = "artcat.form_pairs"


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


def form_pairs(req: Request) -> list[tuple[str, str]]:
    """Return the pairs of a form-urlencoded body, in order, repeated names included.

    What werkzeug's form parser makes ``req.form`` of (the same ``parse_qsl`` call on the same
    body, under the same size limit), without its parser's and ``MultiDict``'s machinery: on a
    token request that machinery cost more than the parsing.
    """
    found: list[tuple[str, str]] | None = req.environ.get(FORM_PAIRS)
    if found is None:
        found = parse_form(req.get_data())
        if found is None:  # refused before (``auth_server.web._refuse_undecodable``): kept so
            raise ParamError(
                "The request body is not valid UTF-8.", {"form": ["is not valid UTF-8"]}
            )
        req.environ[FORM_PAIRS] = found
    return found


def parse_form(body: bytes) -> list[tuple[str, str]] | None:
    """Return the pairs of a form-urlencoded body as werkzeug's form parser makes them of a body
    that is valid UTF-8, escapes included (the only ones the services read:
    ``common.urlencoding``); None for any other body. Python's own codec handlers only: where
    werkzeug's parser differs (its handler for undecodable escapes), the body is refused."""
    try:
        return parse_qsl(body.decode(), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        return None


def request_params(req: Request) -> dict[str, str]:
    """Merge query-string and body parameters; reject other body types, and a parameter given
    two different values there.

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
        form: dict[str, str] = {}
        for name, value in form_pairs(req):
            form.setdefault(name, value)  # the first value of a name, as ``req.form`` gives it
        params.update(form)
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
    _refuse_two_values(req, params)
    return params


def _refuse_two_values(req: Request, params: dict[str, str]) -> None:
    """Refuse a parameter whose query-string and body values differ: which one the request
    means is ambiguous (RFC 6749 3.1 allows a parameter once), and a check of one of them would
    not hold for the other."""
    twice = sorted(name for name, value in req.args.items() if params.get(name, value) != value)
    if twice:
        raise ParamError(
            f"{', '.join(twice)}: sent in the query string and the body with different values.",
            {name: ["is in the query string and the body with different values"] for name in twice},
        )


# Secrets that a URL exposes: query strings end up in access logs, proxies, browser history and
# Referer headers. With URL_CREDENTIALS=refuse, none of them is taken from a query string.
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
# Never taken from a URL, whatever URL_CREDENTIALS says: a user's password (the reference API
# itself tells clients not to put it there).
ALWAYS_REFUSED = ("password",)
# The routes on which the reference API documents its URL forms: every parameter of an API POST
# or PUT may be in the query string, and the token endpoint answers GET as well as POST. With
# URL_CREDENTIALS=accept (the default) they take every parameter but a password from the URL.
# Routes the reference never had (RFC 7009 revocation, RFC 7662 introspection, the HTML pages)
# keep refusing secrets in the URL: their standards and forms send them in the body.
EXCHANGE_PATH = "/oauth2/access_token"  # the token endpoint


def reference_url_form(path: str) -> bool:
    """Tell whether the reference API documents secrets in the query string on this path."""
    return path == EXCHANGE_PATH or path.startswith("/api/")


def secrets_in_query(req: Request) -> list[str]:
    """Return the secret parameters a request carries in its query string (before decoding).

    Names are compared after percent-decoding (``client%5Fsecret`` is ``client_secret``), as
    werkzeug decodes them for every reader.
    """
    if not req.query_string:
        return []
    args = req.args
    return [name for name in SECRET_PARAMS if name in args]


def refused_in_query(req: Request, accept: bool) -> list[str]:
    """Return the secret parameters this request may not carry in its query string.

    ``accept`` is URL_CREDENTIALS=accept: on the reference API's routes only a password is
    refused; elsewhere, and with URL_CREDENTIALS=refuse, every secret is.
    """
    found = secrets_in_query(req)
    if accept and reference_url_form(req.path):
        return [name for name in found if name in ALWAYS_REFUSED]
    return found
