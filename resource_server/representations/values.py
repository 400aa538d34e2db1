"""Field formats and document shapes every representation shares, at the cost of the bytes
they produce."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

import orjson

from common.hal import Link, Urls, image_links
from common.ids import as_utc, format_ts
from resource_server.queries.rows import select_rows
from resource_server.schedule import status_of


def ts(value: datetime | None) -> str | None:
    """Format a timestamp as ``common.ids.format_ts`` does (``...T12:00:00+00:00``), faster.

    ``isoformat`` is several times cheaper than ``strftime`` and writes the same text for
    every year from 1000 on; earlier years (never a row's own timestamps) take the slow path.
    """
    if value is None:
        return None
    aware = as_utc(value)
    if aware.year < 1000:
        return format_ts(aware)
    return aware.isoformat(timespec="seconds")


# Every catalog document is written by ``document_bytes``: a datetime left in it (``stamp``) is
# written by orjson, in C, as ``ts`` writes it in Python at ten times the cost.
DOCUMENT_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_OMIT_MICROSECONDS


def document_bytes(document: Any) -> bytes:
    """Return a document's JSON (its timestamps as ``ts`` formats them)."""
    return orjson.dumps(document, option=DOCUMENT_OPTIONS)


def stamp(value: datetime | None) -> datetime | str | None:
    """Return a timestamp for a document written by ``document_bytes``: an aware UTC one as
    it is (orjson writes ``...T12:00:00+00:00``), any other formatted by ``ts``."""
    if value is None or (value.tzinfo is UTC and value.year >= 1000):
        return value
    return ts(value)


def by_position(model: Any, *names: str) -> Callable[[Any], Any]:
    """Return a getter of these columns from a row of ``select_rows(model)`` (or of a select
    that starts with its columns), by position: a row's attribute access costs several times
    its index, and a document reads twenty to thirty of them, a page twenty documents. One
    name gets its value, several a tuple of theirs."""
    fields = tuple(select_rows(model).selected_columns.keys())
    return itemgetter(*(fields.index(name) for name in names))


def image_and_self(
    row: Any, urls: Urls, path: str, preferred: Iterable[str] = ()
) -> dict[str, Link]:
    """Return the links every catalog row with an image starts with: its ``thumbnail`` and
    ``image`` (``common.hal.image_links``, ``preferred`` versions first), then ``self``."""
    links = image_links(row.image_url, row.image_versions or [], preferred, urls.base)
    links["self"] = {"href": f"{urls.root}{path}/{row.id}"}
    return links


def imaged(row: Any, links: dict[str, Link], *parts: Mapping[str, Any]) -> dict[str, Any]:
    """Return the document of a catalog row with an image: its id and timestamps, the fields of
    ``parts`` in their order, its image versions, then ``links``."""
    doc = {"id": row.id, "created_at": stamp(row.created_at), "updated_at": stamp(row.updated_at)}
    for part in parts:
        doc.update(part)
    doc["image_versions"] = list(row.image_versions or [])
    doc["_links"] = links
    return doc


def fields(row: Any, names: Iterable[str]) -> dict[str, Any]:
    """Return these attributes of a row, by name, in their order."""
    return {name: getattr(row, name) for name in names}


def schedule(row: Any, now: datetime) -> dict[str, Any]:
    """Return a dated event's (a show's, a fair's) dates, and its status at ``now``."""
    return {
        "start_at": stamp(row.start_at),
        "end_at": stamp(row.end_at),
        "status": status_of(row.start_at, row.end_at, now),
    }
