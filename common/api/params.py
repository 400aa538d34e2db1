"""Query and body parameter parsing: one value per name, booleans and bounded integers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from common.api.errors import ParamError

# The words a boolean parameter takes (compared lower-cased), as the OpenAPI document lists them.
TRUE = frozenset({"true", "1", "yes"})
FALSE = frozenset({"false", "0", "no"})
MAX_INT_DIGITS = 12


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean parameter (true/false, 1/0, yes/no), raising a ParamError naming it."""
    value = raw.lower()  # exactly the word: a control character around it is no flag
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ParamError.invalid(name, "must be true or false")


def parse_int(name: str, raw: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    """Parse a bounded integer parameter, raising a ParamError naming it."""
    try:
        if len(raw) > MAX_INT_DIGITS:
            raise ValueError
        value = int(raw)
    except ValueError:
        raise ParamError.invalid(name, "must be an integer") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ParamError.invalid(name, f"must be {bound}")
    return value


def single(params: Mapping[str, Any], name: str) -> str | None:
    """Return the one value of a parameter; a parameter given twice is a 400.

    Which of two values a server takes is anybody's guess (the first, the last, a list): the
    request is refused rather than half-read. The same value repeated is that value.
    """
    value = params.get(name)
    if isinstance(value, list):
        if len(set(value)) > 1:
            raise ParamError.invalid(name, "is given more than once")
        value = value[-1] if value else None
    return None if value is None else str(value)


def optional_bool(params: Mapping[str, Any], name: str) -> bool:
    """Return a boolean parameter that is false when absent or blank."""
    raw = single(params, name)
    return bool(raw) and parse_bool(name, raw or "")
