"""Fields of write requests (query string, form or JSON body) and their validation errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import falcon

from common.api.constants import BLANK, INVALID
from common.api.errors import ParamError, humanize
from common.api.params import FALSE, TRUE, single
from common.ids import is_id
from common.urlencoding import is_utf8_urlencoded
from resource_server.negotiation import NOT_UTF8


def query_fields(req: falcon.Request) -> dict[str, str | None]:
    """Return the query string parameters, one value per name (the last when repeated)."""
    return {name: single(req.params, name) for name in req.params}


class Fields(dict[str, Any]):
    """Request fields by name; ``typed`` names the ones a JSON body gave (a JSON type each)."""

    typed: frozenset[str] = frozenset()


def typed(fields: Mapping[str, Any], name: str) -> bool:
    """Tell whether a field came from a JSON body, where its JSON type must be the right one."""
    return name in getattr(fields, "typed", ())


def request_fields(req: falcon.Request) -> Fields:
    """Merge the query string with a form or JSON body (the body wins); one value per name.

    A JSON body's values keep their JSON types: a number is never taken for a name, nor a
    string for a number (``{"name": -1.1}`` is a 400, not the name "-1.1").
    """
    fields = Fields(query_fields(req))
    if not (req.content_length or req.content_type):
        return fields
    is_form = (req.content_type or "").lower().startswith("application/x-www-form-urlencoded")
    try:
        body = form_fields(req) if is_form else req.get_media(default_when_empty=None)
    except (falcon.MediaMalformedError, falcon.MediaNotFoundError):
        raise ParamError("The request body is malformed.", {"body": ["is malformed"]}) from None
    if body is None:
        return fields
    if not isinstance(body, Mapping):
        raise ParamError("The request body must be an object.", {"body": ["must be an object"]})
    for name, value in body.items():
        # A repeated form field arrives as a list: the last value counts, as in the query.
        fields[str(name)] = value[-1] if is_form and isinstance(value, list) and value else value
    if not is_form:
        fields.typed = frozenset(str(name) for name in body)
    return fields


def form_fields(req: falcon.Request) -> dict[str, Any] | None:
    """Parse a form body, refusing one that is not ASCII or whose escapes are not UTF-8."""
    raw = req.bounded_stream.read()
    if not raw:
        return None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ParamError("The request body is malformed.", {"body": ["is malformed"]}) from None
    if not is_utf8_urlencoded(raw):
        raise ParamError("The request body is not valid UTF-8.", {"body": [NOT_UTF8]})
    return falcon.uri.parse_query_string(text, keep_blank=True, csv=False)


class FieldErrors:
    """Collect validation failures per field, then raise them as one ``param_error``."""

    def __init__(self) -> None:
        self.detail: dict[str, list[str]] = {}

    def add(self, name: str, reason: str) -> None:
        """Record one failure of a field."""
        self.detail.setdefault(name, []).append(reason)

    def raise_if_any(self) -> None:
        """Raise a ParamError naming every failure (``Name can't be blank, ...``)."""
        if self.detail:
            parts = [f"{humanize(n)} {r}" for n, reasons in self.detail.items() for r in reasons]
            raise ParamError(", ".join(parts) + ".", self.detail)

    def text(
        self, fields: Mapping[str, Any], name: str, *, required: bool = False, max_length: int
    ) -> str | None:
        """Return a stripped text field (None when absent), recording blank or malformed ones."""
        value = fields.get(name)
        if value is None:
            if required:
                self.add(name, BLANK)
            return None
        if not isinstance(value, str):
            self.add(name, "must be a string")
            return None
        text = value.strip()
        if "\x00" in text:  # PostgreSQL text cannot hold it
            self.add(name, "contains a NUL byte")
            return None
        if required and not text:
            self.add(name, BLANK)
            return None
        if len(text) > max_length:
            self.add(name, f"is too long (maximum is {max_length} characters)")
            return None
        return text

    def flag(self, fields: Mapping[str, Any], name: str) -> bool | None:
        """Return a boolean field (None when absent)."""
        value = fields.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return value
        # The reference's clients send "true"/"false" in JSON too; a number is refused, and so
        # is text around the word (a control character or space is not part of a flag).
        if isinstance(value, str) and value.lower() in TRUE | FALSE:
            return value.lower() in TRUE
        self.add(name, "must be true or false")
        return None

    def integer(self, fields: Mapping[str, Any], name: str) -> int | None:
        """Return an integer field (None when absent)."""
        value = fields.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        # JSON has one number type: 3.0 is the integer 3 (as JSON Schema's ``integer`` says).
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return int(value)
        if isinstance(value, str) and not typed(fields, name) and 0 < len(value.strip()) <= 12:
            try:
                return int(value.strip())
            except ValueError:
                pass
        self.add(name, "must be an integer")
        return None

    def ident(self, fields: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
        """Return an id field (24 hex characters; None when absent)."""
        value = fields.get(name)
        if value is None or value == "":
            if required:
                self.add(name, BLANK)
            return None
        if not isinstance(value, str) or not is_id(value):
            self.add(name, INVALID)
            return None
        return value


def query_ids(req: falcon.Request, *names: str, required: bool = False) -> dict[str, str]:
    """Return the id query parameters present (``required``: all of them), raising one
    ParamError for the missing or malformed ones."""
    params = query_fields(req)
    errors = FieldErrors()
    values = {name: errors.ident(params, name, required=required) for name in names}
    errors.raise_if_any()
    return {name: value for name, value in values.items() if value is not None}
