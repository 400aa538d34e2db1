"""Paging parameters of a list request and its one opaque cursor format.

A cursor is the base64url (unpadded) of a JSON list: the sort key values of the last item of a
page. Both services issue and read this one format.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from common.api.errors import ParamError
from common.api.params import optional_bool, parse_int, single
from common.ids import is_id

MAX_OFFSET = 10_000_000
MAX_CURSOR = 1000  # characters: longer is no cursor of ours


@dataclass(frozen=True)
class PageParams:
    """The paging parameters of a list request."""

    size: int
    cursor: list[Any] | None = None
    offset: int = 0
    total_count: bool = False
    sample: bool = False
    size_given: bool = False

    def echo(self) -> dict[str, Any]:
        """Return the paging parameters to keep in ``self`` and ``next`` links."""
        out: dict[str, Any] = {}
        if self.size_given:
            out["size"] = self.size
        if self.total_count:
            out["total_count"] = 1
        return out


def parse_page_params(
    params: Mapping[str, Any], *, default_size: int, max_size: int, extras: bool = True
) -> PageParams:
    """Parse ``size``, ``cursor``, ``total_count``; with ``extras`` ``offset`` and ``sample``."""
    raw_size = single(params, "size")
    size = default_size
    if raw_size not in (None, ""):
        size = parse_int("size", raw_size or "", minimum=1, maximum=max_size)
    raw_cursor = single(params, "cursor")
    raw_offset = single(params, "offset") if extras else None
    if raw_cursor and raw_offset:
        raise ParamError(
            "Cursor and offset can't be used together.",
            {"cursor": ["can't be used with offset"], "offset": ["can't be used with cursor"]},
        )
    cursor = decode_cursor(raw_cursor) if raw_cursor else None
    offset = parse_int("offset", raw_offset, minimum=0, maximum=MAX_OFFSET) if raw_offset else 0
    return PageParams(
        size=size,
        cursor=cursor,
        offset=offset,
        total_count=optional_bool(params, "total_count"),
        sample=extras and optional_bool(params, "sample"),
        size_given=raw_size not in (None, ""),
    )


def encode_cursor(values: Sequence[Any]) -> str:
    """Return an opaque cursor for the sort key values of the last item of a page."""
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


def decode_cursor(raw: str) -> list[Any]:
    """Decode a cursor, raising a ParamError for anything that is not one of ours."""
    try:
        if len(raw) > MAX_CURSOR or "\x00" in raw:
            raise ValueError
        values = orjson.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        if not isinstance(values, list) or not values:
            raise ValueError
        if not all(isinstance(v, str | int | float) or v is None for v in values):
            raise ValueError
        if any(isinstance(v, str) and "\x00" in v for v in values):
            raise ValueError
        return values
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        raise ParamError.invalid("cursor") from None


def id_cursor(params: PageParams) -> PageParams:
    """Return ``params`` when its cursor is absent or one id, else raise a ParamError.

    A list paged by id alone takes no other cursor: anything else was never issued.
    """
    values = params.cursor
    if values is not None and not (
        len(values) == 1 and isinstance(values[0], str) and is_id(values[0])
    ):
        raise ParamError.invalid("cursor")
    return params
