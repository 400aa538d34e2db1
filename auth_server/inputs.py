"""Checks on request text before it reaches SQL, and list parameters of the JSON API."""

from __future__ import annotations

from typing import Any

from flask import Request

from auth_server.params import FORM, JSON, MULTIPART, json_body
from common.api.errors import ParamError
from common.urlencoding import is_utf8_urlencoded

MAX_TEXT = 4096


def is_clean(value: str, max_length: int = MAX_TEXT) -> bool:
    """Tell whether text is safe to store or compare in SQL: bounded, no NUL, valid UTF-8."""
    if len(value) > max_length or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a JSON body
        return False
    return True


def undecodable_part(req: Request) -> str | None:
    """Return "query" or "body" when that part of a request is not valid UTF-8, else None."""
    if not is_utf8_urlencoded(req.query_string):
        return "query"
    if req.mimetype == FORM and req.content_length and not is_utf8_urlencoded(req.get_data()):
        return "body"
    if req.mimetype == MULTIPART and any("\ufffd" in v for v in req.form.values()):
        return "body"  # the pages' forms: werkzeug left U+FFFD where the bytes were not UTF-8
    return None


def request_list(req: Request, name: str) -> list[str] | None:
    """Return a list parameter from a JSON array or repeated form/query keys; None when absent."""
    mimetype = req.mimetype or ""
    if mimetype == JSON or mimetype.endswith("+json"):
        body: Any = json_body(req)
        if isinstance(body, dict) and name in body:
            value = body[name]
            if value is None:
                return []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ParamError.invalid(name, "must be an array of strings")
            return list(value)
    sources = [req.args]
    if mimetype == FORM:
        sources.append(req.form)
    found: list[str] | None = None
    for source in sources:
        for key in (name, f"{name}[]"):
            if key in source:
                found = (found or []) + [v for v in source.getlist(key) if v != ""]
    return found
