"""Redaction of the secrets a request line may carry, before it is written to a log.

The values of query parameters whose names may carry a secret are replaced by ``[redacted]``,
and so is the token of a password reset link's path. Names and paths are percent-decoded
first, so no encoding of ``code`` or ``client_secret`` slips past.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, unquote, unquote_plus

REDACTED = "[redacted]"
MAX_FIELD = 512  # longer paths, queries and user agents are cut: a line stays under PIPE_BUF

# A query parameter whose name contains one of these has its value redacted in the log.
_SECRET_PARAM_PARTS = (
    "token",
    "secret",
    "password",
    "code",
    "state",
    "key",
    "assertion",
    "signature",
    "verifier",
    "credential",
    "session",
    "auth",
    "email",
)
# A path whose rest, after this, is a secret (the token of a password reset link). Matched on
# the path with its case folded and its empty and "." segments removed, so that a spelling
# the router would refuse or redirect still has its token redacted.
_RESET_LINK_PATH = "/password/reset/"
# Percent-decodings tried on a parameter name; a name still encoded after as many is redacted.
_MAX_DECODES = 4
_SEPARATORS = re.compile(r"[&;]")
_EMPTY_SEGMENTS = re.compile(r"/(?:\.?/)+")


def _decoded(text: str, unquote: Callable[[str], str]) -> str | None:
    """Return ``text`` percent-decoded until it stops changing (None: still encoded after
    ``_MAX_DECODES`` rounds, which nobody sends by mistake)."""
    for _ in range(_MAX_DECODES):
        decoded = unquote(text)
        if decoded == text:
            return text
        text = decoded
    return None if unquote(text) != text else text


def secret_param_name(name: str) -> bool:
    """Tell whether a raw (still encoded) query parameter name may carry a secret.

    The name is decoded first (``+`` and ``%XX``, repeatedly: ``%2561ccess_token`` is
    ``access_token``), so no encoding of ``code`` or ``client_secret`` slips past.
    """
    decoded = _decoded(name, unquote_plus)
    if decoded is None:
        return True
    lowered = decoded.lower()
    return any(part in lowered for part in _SECRET_PARAM_PARTS)


def redact_query(query: str) -> str:
    """Return a query string with the values of secret-looking parameters replaced.

    Pairs are split on ``&`` and ``;`` (some parsers take either) and names are decoded before
    they are compared.
    """
    if "%" not in query:
        lowered = query.lower()
        for part in _SECRET_PARAM_PARTS:  # a plain loop: the cheapest check when nothing matches
            if part in lowered:
                break
        else:
            return query[:MAX_FIELD]
    out = []
    start = 0
    for sep in (*_SEPARATORS.finditer(query), None):
        end = sep.start() if sep is not None else len(query)
        name, eq, value = query[start:end].partition("=")
        if eq and secret_param_name(name):
            out.append(f"{name}={REDACTED}")
        elif eq and value:
            out.append(f"{name}={redact_nested(value)}")
        else:
            out.append(query[start:end])
        if sep is not None:
            out.append(sep.group())
            start = sep.end()
    return "".join(out)[:MAX_FIELD]


def redact_nested(value: str) -> str:
    """Return a parameter's value with the secrets of a URL it carries redacted.

    A sign-in link's ``next`` carries the page to come back to, query included (the user code
    of ``/activate?user_code=...``, say): its secret parameters are redacted as the request's
    own are. A value that is no URL with a query is returned as it is.
    """
    if "?" not in value and "%" not in value:
        return value
    decoded = _decoded(value, unquote_plus)
    if decoded is None:
        return REDACTED
    path, mark, nested = decoded.partition("?")
    if not mark:
        return value
    redacted = redact_query(nested)
    if redacted == nested[:MAX_FIELD]:
        return value
    return quote(f"{path}?{redacted}", safe="/=[]")


def redact_path(path: str) -> str:
    """Return a path with a secret segment (a password reset token) replaced."""
    if "%" not in path and "reset" not in path.lower():
        return path[:MAX_FIELD]
    decoded = _decoded(path, unquote)
    if decoded is None:
        return REDACTED
    normal = _EMPTY_SEGMENTS.sub("/", decoded)
    at = normal.lower().find(_RESET_LINK_PATH)
    if at < 0:
        return path[:MAX_FIELD]
    return normal[: at + len(_RESET_LINK_PATH)][:MAX_FIELD] + REDACTED
