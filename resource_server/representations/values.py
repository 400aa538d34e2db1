"""Field formats every representation shares, at the cost of the bytes they produce."""

from __future__ import annotations

from datetime import UTC, datetime

from common.ids import format_ts


def ts(value: datetime | None) -> str | None:
    """Format a timestamp as ``common.ids.format_ts`` does (``...T12:00:00+00:00``), faster.

    ``isoformat`` is several times cheaper than ``strftime`` and writes the same text for
    every year from 1000 on; earlier years (never a row's own timestamps) take the slow path.
    """
    if value is None:
        return None
    aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if aware.year < 1000:
        return format_ts(aware)
    return aware.isoformat(timespec="seconds")
