"""Messages and OAuth values both services answer with, written once."""

from __future__ import annotations

# The one answer to a missing, unknown, expired or revoked access token, on either service.
INVALID_TOKEN = "The access token is invalid or has expired."  # noqa: S105  # nosec B105 # a message
BAD_CLIENT = "The client id or secret is invalid."
OFFLINE_ACCESS = "offline_access"
SUPPORTED_SCOPES = frozenset({OFFLINE_ACCESS})
BLANK = "can't be blank"
INVALID = "is invalid"
