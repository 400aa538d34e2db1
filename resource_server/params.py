"""Declared query parameters: one definition drives both parsing and the root's link templates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.api.errors import ParamError
from common.api.params import parse_bool, parse_int, single
from common.ids import is_id


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


def require(filters: Mapping[str, Any], name: str) -> Any:
    """Return a filter that the route cannot do without, or raise a 400 naming it."""
    if name not in filters:
        label = name.replace("_", " ").capitalize()
        raise ParamError(f"{label} can't be blank.", {name: ["can't be blank"]})
    return filters[name]
