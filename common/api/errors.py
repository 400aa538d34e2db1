"""Domain errors answered as ``{type, message[, detail]}``; ``status`` is the HTTP code."""

from __future__ import annotations

from typing import Any

from common.api.constants import BLANK, INVALID, INVALID_TOKEN


def humanize(name: str) -> str:
    """Return a field name as it reads in a message (``user_id`` -> ``User id``)."""
    return name.replace("_", " ").capitalize()


class APIError(Exception):
    """An error answered with ``{type, message[, detail]}`` and the HTTP status ``status``."""

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
    """Bad credentials, or a missing, unknown or expired token (401)."""

    status = 401
    type = "auth_error"

    def __init__(self, message: str = INVALID_TOKEN) -> None:
        super().__init__(message)


class ParamError(APIError):
    """Missing or malformed parameters (400) with a ``detail`` per field."""

    type = "param_error"

    @classmethod
    def missing(cls, *fields: str) -> ParamError:
        """Return the error for blank required fields."""
        message = ", ".join(f"{humanize(f)} {BLANK}" for f in fields)
        return cls(message + ".", {f: [BLANK] for f in fields})

    @classmethod
    def invalid(cls, name: str, reason: str = INVALID) -> ParamError:
        """Return the error for one malformed parameter."""
        return cls(f"{humanize(name)} {reason}.", {name: [reason]})


class Forbidden(APIError):
    """A valid credential that may not do this (403)."""

    status = 403


class NotFound(APIError):
    """An unknown resource, or one that is not the caller's (404 ``<Model> Not Found``)."""

    status = 404

    def __init__(self, model: str) -> None:
        super().__init__(f"{model} Not Found")


class Conflict(APIError):
    """A write that kept conflicting with concurrent writes (409)."""

    status = 409


class TooLarge(APIError):
    """A request body over the limit (413)."""

    status = 413


class TooManyRequests(APIError):
    """Over a rate limit (429); the mapping sends ``Retry-After`` when ``retry_after`` is set."""

    status = 429
    type = "rate_limit_error"


class UnsupportedContentType(Exception):
    """A request body in a content type other than form-urlencoded or JSON (406)."""

    def __init__(self, content_type: str) -> None:
        super().__init__(content_type)
        self.content_type = content_type
