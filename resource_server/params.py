"""Declared query parameters: one definition drives both parsing and the root's link templates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.ids import is_id
from resource_server.errors import ParamError

TRUE = {"true", "1", "yes"}
FALSE = {"false", "0", "no"}


@dataclass(frozen=True)
class Param:
    """A query parameter a route accepts: ``kind`` is id, bool, int, str or enum.

    ``required`` documents a parameter the route answers 400 without (its responder checks it);
    ``description`` states, in the OpenAPI document, a rule a schema cannot (one parameter
    needing another, say).
    """

    name: str
    kind: str = "id"
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False
    description: str = ""

    def parse(self, raw: str) -> Any:
        """Parse and validate a raw value, raising a ParamError naming the parameter."""
        if self.kind == "id":
            if not is_id(raw):
                raise ParamError.invalid(self.name)
            return raw
        if self.kind == "bool":
            return parse_bool(self.name, raw)
        if self.kind == "int":
            return parse_int(self.name, raw, minimum=0)
        if self.kind == "enum":
            if raw not in self.choices:
                raise ParamError.invalid(self.name, f"must be one of {', '.join(self.choices)}")
            return raw
        if len(raw) > 500:
            raise ParamError.invalid(self.name, "is too long")
        return raw


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean parameter (true/false, 1/0, yes/no)."""
    value = raw.lower()  # exactly the word: a control character around it is no flag
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ParamError.invalid(name, "must be true or false")


def parse_int(name: str, raw: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    """Parse a bounded integer parameter."""
    try:
        if len(raw) > 12:
            raise ValueError
        value = int(raw)
    except ValueError:
        raise ParamError.invalid(name, "must be an integer") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ParamError.invalid(name, f"must be {bound}")
    return value


def single(params: Mapping[str, Any], name: str) -> str | None:
    """Return the one value of a query parameter; a parameter given twice is a 400.

    Which of two values a server takes is anybody's guess (the first, the last, a list): the
    request is refused rather than half-read. The same value repeated is that value.
    """
    value = params.get(name)
    if isinstance(value, list):
        if len(set(value)) > 1:
            raise ParamError.invalid(name, "is given more than once")
        value = value[-1] if value else None
    return None if value is None else str(value)


def parse_filters(params: Mapping[str, Any], declared: Sequence[Param]) -> dict[str, Any]:
    """Parse the declared filters present in ``params``; unknown parameters are ignored."""
    values: dict[str, Any] = {}
    for p in declared:
        raw = single(params, p.name)
        if raw is None or raw == "":
            if p.default is not None:
                values[p.name] = p.default
            continue
        values[p.name] = p.parse(raw)
    return values
