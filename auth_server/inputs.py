"""Checks on request text before it reaches SQL, and list/boolean parameters of the JSON API."""

from __future__ import annotations

from typing import Any

from flask import Request

from auth_server.errors import ParamError
from auth_server.params import FORM, JSON, MULTIPART

MAX_TEXT = 4096
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def is_clean(value: str, max_length: int = MAX_TEXT) -> bool:
    """Tell whether text is safe to store or compare in SQL: bounded, no NUL, valid UTF-8."""
    if len(value) > max_length or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a JSON body
        return False
    return True


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean parameter, raising a ParamError naming it."""
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ParamError(f"{name.replace('_', ' ').capitalize()} is invalid.", {name: ["is invalid"]})


def request_list(req: Request, name: str) -> list[str] | None:
    """Return a list parameter from a JSON array or repeated form/query keys; None when absent."""
    mimetype = req.mimetype or ""
    if mimetype == JSON or mimetype.endswith("+json"):
        body: Any = req.get_json(silent=True)
        if isinstance(body, dict) and name in body:
            value = body[name]
            if value is None:
                return []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ParamError(
                    f"{name.replace('_', ' ').capitalize()} must be an array of strings.",
                    {name: ["must be an array of strings"]},
                )
            return list(value)
    sources = [req.args]
    if mimetype in (FORM, MULTIPART):
        sources.append(req.form)
    found: list[str] | None = None
    for source in sources:
        for key in (name, f"{name}[]"):
            if key in source:
                found = (found or []) + [v for v in source.getlist(key) if v != ""]
    return found
