"""Checks on URL-encoded input that both services apply before parsing it."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes


def is_utf8_urlencoded(data: bytes) -> bool:
    """Tell whether a query string or form body decodes to valid UTF-8 (escapes included).

    Falcon and Werkzeug decode ``%FF`` to U+FFFD without a word: bad bytes would be stored as
    replacement characters instead of being refused.
    """
    try:
        unquote_to_bytes(data.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
