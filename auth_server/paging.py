"""Keyset paging for the auth server's JSON lists: ``size``, opaque ``cursor``, ``total_count``."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from auth_server.errors import ParamError
from auth_server.inputs import parse_bool
from common.ids import is_id

DEFAULT_SIZE = 5
MAX_SIZE = 100


@dataclass(frozen=True)
class PageParams:
    """The paging parameters of a list request."""

    size: int = DEFAULT_SIZE
    cursor: str | None = None
    total_count: bool = False
    size_given: bool = False

    def echo(self) -> dict[str, Any]:
        """Return the paging parameters to keep in ``self`` and ``next`` links."""
        out: dict[str, Any] = {}
        if self.size_given:
            out["size"] = self.size
        if self.total_count:
            out["total_count"] = 1
        return out


def parse_page_params(params: Mapping[str, str]) -> PageParams:
    """Parse ``size`` (1..100), ``cursor`` and ``total_count``; malformed values are a 400."""
    raw_size = params.get("size") or ""
    size = DEFAULT_SIZE
    if raw_size:
        if not raw_size.isdigit() or not 1 <= int(raw_size) <= MAX_SIZE:
            raise ParamError(f"Size must be between 1 and {MAX_SIZE}.", {"size": ["is invalid"]})
        size = int(raw_size)
    raw_cursor = params.get("cursor") or None
    cursor = decode_cursor(raw_cursor) if raw_cursor else None
    raw_total = params.get("total_count") or ""
    total = bool(raw_total) and parse_bool("total_count", raw_total)
    return PageParams(size, cursor, total, bool(raw_size))


def encode_cursor(last_id: str) -> str:
    """Return the opaque cursor that follows ``last_id``."""
    return base64.urlsafe_b64encode(bytes.fromhex(last_id)).decode().rstrip("=")


def decode_cursor(raw: str) -> str:
    """Return the id a cursor points after, raising a ParamError for anything else."""
    try:
        value = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
    except (ValueError, binascii.Error):
        value = ""
    if not is_id(value):
        raise ParamError("Cursor is invalid.", {"cursor": ["is invalid"]})
    return value


def paginate(
    session: Session, stmt: Select[Any], id_col: InstrumentedAttribute[str], params: PageParams
) -> tuple[list[Any], str | None, int | None]:
    """Return one page of ``stmt`` in id order, the next cursor, and the total when asked."""
    page = stmt.order_by(id_col.asc())
    if params.cursor:
        page = page.where(id_col > params.cursor)
    rows = list(session.scalars(page.limit(params.size + 1)))
    next_cursor = None
    if len(rows) > params.size:
        rows = rows[: params.size]
        next_cursor = encode_cursor(rows[-1].id)
    total = None
    if params.total_count:
        total = session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery()))
    return rows, next_cursor, total
