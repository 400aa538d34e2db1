"""Status of dated events (shows, fairs, sales) from their start and end times.

One definition serves both the SQL filters and the rendered ``status`` field, so a filtered list
never disagrees with the statuses it shows: an event is ``closed`` once its end has passed,
``upcoming`` while its start is in the future, and ``running`` otherwise (a missing start means
"already open", a missing end "open-ended"). ``current`` is running or upcoming.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, not_, or_
from sqlalchemy.orm import InstrumentedAttribute

STATUSES = ("upcoming", "running", "closed", "current")

Column = InstrumentedAttribute[Any]


def status_of(start: datetime | None, end: datetime | None, now: datetime) -> str:
    """Return ``closed``, ``upcoming`` or ``running`` for an event at ``now``."""
    if end is not None and end < now:
        return "closed"
    if start is not None and start > now:
        return "upcoming"
    return "running"


def status_condition(start: Column, end: Column, status: str, now: datetime) -> ColumnElement[bool]:
    """Return the SQL condition selecting the events with ``status`` at ``now``."""
    not_closed = or_(end.is_(None), end >= now)
    if status == "closed":
        return and_(end.is_not(None), end < now)
    if status == "upcoming":
        return and_(start.is_not(None), start > now, not_closed)
    if status == "running":
        return and_(or_(start.is_(None), start <= now), not_closed)
    if status == "current":
        return not_closed
    raise ValueError(f"unknown status {status!r}")


def not_running(start: Column, end: Column, now: datetime) -> ColumnElement[bool]:
    """Return the SQL condition selecting the events that are not running at ``now``."""
    return not_(status_condition(start, end, "running", now))
