"""The ``Authorization: Bearer`` credential (RFC 6750, section 2.1), read one way by both
services."""

from __future__ import annotations

from common.api.errors import AuthError


def bearer_credential(header: str | None) -> str | None:
    """Return the token of an ``Authorization`` header of the Bearer scheme, else None.

    ``Bearer`` with nothing after it is a malformed credential (RFC 6750's ``b64token`` is at
    least one character), not an absent one: it raises the 401 ``auth_error`` every other bad
    credential gets, so a request carrying it beside a valid token is refused, not served.
    Other schemes present no token here.
    """
    scheme, _, value = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    value = value.strip()
    if not value:
        raise AuthError()
    return value
