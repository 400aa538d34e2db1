"""Sorted, counted pages for people: a list in name, date or recently-added order, with first,
previous, next and last links.

The pages page by keyset in both directions: a page after a row (``after``), a page before a
row (``before``, read backwards then turned round) or the last page (``last``), each one
indexed seek and one count. Every order ends on the id, so it is total, and every key is
never NULL (dates are coalesced), so one row comparison seeks it; the indexes of migration
0014 serve each order on PostgreSQL and SQLite alike, however deep the page.

The page's number travels in its links (``page``) only to be shown: it is clamped to the
page count, and a forged one changes nothing but the number on the page.

The API keeps its own order and parameters (id order, ``cursor``); these are the pages'.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    case,
    func,
    literal,
    literal_column,
    select,
    tuple_,
)
from sqlalchemy.orm import Session

from common.api.errors import ParamError
from common.api.paging import decode_cursor, encode_cursor
from common.api.params import parse_int, single
from common.models import Artist, Artwork, Gene, Partner, Show

MAX_PAGE_NUMBER = 10_000_000
# A date-less row sorts after every dated one. The constants of the sort expressions are
# written into the SQL, not bound: an index on an expression serves only that same expression.
NO_YEAR: ColumnElement[int] = literal_column("9999")
# Titles are compared on their first 200 characters: an index entry has a size limit.
TITLE_CHARS = 200


@dataclass(frozen=True)
class Key:
    """One sort key: its expression and the Python type a cursor holds for it."""

    expr: Any  # a column or an SQL expression
    kind: type


@dataclass(frozen=True)
class Order:
    """One way to sort a list: its parameter value, its label and its keys (the last unique)."""

    name: str
    label: str
    keys: tuple[Key, ...]
    descending: bool = False


def name_order(label: str, column: Any, id_column: Any) -> Order:
    """Return the A-Z order on ``lower(column)``, then id."""
    return Order("name", label, (Key(func.lower(column), str), Key(id_column, str)))


def title_order(label: str, column: Any, id_column: Any) -> Order:
    """Return the A-Z order on the lower-cased start of a long text, then id."""
    start = func.substr(column, literal_column("1"), literal_column(str(TITLE_CHARS)))
    return Order("name", label, (Key(func.lower(start), str), Key(id_column, str)))


def year_order(label: str, column: Any, id_column: Any) -> Order:
    """Return the oldest-first order on a year (undated last), then id."""
    return Order("date", label, (Key(func.coalesce(column, NO_YEAR), int), Key(id_column, str)))


def recent_order(created: Any, id_column: Any) -> Order:
    """Return the recently-added order: newest first, on the creation time, then id."""
    return Order(
        "recent", "Recently added", (Key(created, datetime), Key(id_column, str)), descending=True
    )


@dataclass(frozen=True)
class Sorting:
    """The orders a list page offers, the first one its default."""

    orders: tuple[Order, ...]

    @property
    def default(self) -> Order:
        """Return the order a page without ``sort`` shows."""
        return self.orders[0]

    def pick(self, params: Mapping[str, Any]) -> Order:
        """Return the order ``sort`` names (the default when absent); an unknown one is a 400."""
        raw = single(params, "sort")
        if raw in (None, ""):
            return self.default
        for order in self.orders:
            if order.name == raw:
                return order
        names = ", ".join(o.name for o in self.orders)
        raise ParamError(f"sort must be one of: {names}.", {"sort": [f"must be one of: {names}"]})


ARTIST_SORTING = Sorting(
    (
        name_order("Name A\u2013Z", Artist.sortable_name, Artist.id),
        year_order("Birth year", Artist.birth_year, Artist.id),
        recent_order(Artist.created_at, Artist.id),
    )
)
ARTWORK_SORTING = Sorting(
    (
        year_order("Date", Artwork.year_start, Artwork.id),
        title_order("Title A\u2013Z", Artwork.title, Artwork.id),
        recent_order(Artwork.created_at, Artwork.id),
    )
)
GENE_SORTING = Sorting(
    (name_order("Name A\u2013Z", Gene.name, Gene.id), recent_order(Gene.created_at, Gene.id))
)
PARTNER_SORTING = Sorting(
    (
        name_order("Name A\u2013Z", Partner.name, Partner.id),
        recent_order(Partner.created_at, Partner.id),
    )
)

SHOW_SORTING = Sorting(
    (name_order("Name A\u2013Z", Show.name, Show.id), recent_order(Show.created_at, Show.id))
)


@dataclass(frozen=True)
class Position:
    """Where a page starts: after a row, before a row, the last page or the first."""

    after: list[Any] | None = None
    before: list[Any] | None = None
    last: bool = False
    number: int = 1


def read_position(params: Mapping[str, Any], order: Order) -> Position:
    """Read ``after``, ``before``, ``last`` and ``page``; a forged cursor is a 400."""
    raw_after, raw_before = single(params, "after"), single(params, "before")
    raw_last = single(params, "last")
    if sum(bool(v) for v in (raw_after, raw_before, raw_last)) > 1:
        raise ParamError(
            "Only one of after, before and last may be given.",
            {"after": ["only one of after, before, last"]},
        )
    raw_page = single(params, "page")
    number = 1
    if raw_page not in (None, ""):
        number = parse_int("page", raw_page or "", minimum=1, maximum=MAX_PAGE_NUMBER)
    after = _cursor(order, raw_after, "after") if raw_after else None
    before = _cursor(order, raw_before, "before") if raw_before else None
    return Position(after, before, bool(raw_last), number)


def _cursor(order: Order, raw: str, name: str) -> list[Any]:
    """Decode a page cursor and check each value against its key's type."""
    try:
        values = decode_cursor(raw)
    except ParamError:
        raise ParamError.invalid(name) from None
    if len(values) != len(order.keys):
        raise ParamError.invalid(name)
    out: list[Any] = []
    for key, value in zip(order.keys, values, strict=True):
        if key.kind is int and isinstance(value, int) and not isinstance(value, bool):
            if -(2**63) <= value < 2**63:
                out.append(value)
                continue
        elif key.kind is str and isinstance(value, str):
            out.append(value)
            continue
        elif key.kind is datetime and isinstance(value, str):
            with contextlib.suppress(ValueError):
                out.append(datetime.fromisoformat(value))
                continue
        raise ParamError.invalid(name)
    return out


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


@dataclass
class Window:
    """One page of a sorted list: its rows, the total, its number and its neighbours' cursors."""

    rows: list[Any]
    total: int
    number: int
    pages: int
    size: int
    order: Order
    sorting: Sorting
    next_after: str | None = None
    prev_before: str | None = None

    @property
    def first_index(self) -> int:
        """Return the 1-based position of the page's first row in the list (0 when empty)."""
        return (self.number - 1) * self.size + 1 if self.rows else 0

    @property
    def last_index(self) -> int:
        """Return the position of the page's last row."""
        return self.first_index + len(self.rows) - 1 if self.rows else 0

    def sort_query(self, order: Order, size: int | None) -> dict[str, Any]:
        """Return the query of the first page in ``order`` (no ``sort`` for the default)."""
        return {"sort": None if order is self.sorting.default else order.name, "size": size}

    def query(self, **changes: Any) -> dict[str, Any]:
        """Return the query of a link from this page: its sort (unless the default), ``changes``."""
        base: dict[str, Any] = {}
        if self.order is not self.sorting.default:
            base["sort"] = self.order.name
        return {**base, **changes}


def sort_columns(order: Order) -> list[ColumnElement[Any]]:
    """Return the order's keys as labelled columns (``sort_0``...), to add to a select."""
    return [key.expr.label(f"sort_{n}") for n, key in enumerate(order.keys)]


def ordered(order: Order, *, reverse: bool = False) -> list[ColumnElement[Any]]:
    """Return the ORDER BY of an order (turned round with ``reverse``)."""
    down = order.descending != reverse
    return [key.expr.desc() if down else key.expr.asc() for key in order.keys]


def beyond(order: Order, values: Sequence[Any], *, backwards: bool) -> ColumnElement[bool]:
    """Return the seek condition: rows after ``values`` in the order (before, ``backwards``).

    The row comparison says it exactly; the range on the first key beside it is what SQLite
    seeks an expression index by (it reads a row comparison on one only by scanning the index
    from its start: a deep page would cost its depth). PostgreSQL seeks by either.
    """
    bound = [literal(v, key.expr.type) for key, v in zip(order.keys, values, strict=True)]
    left, right = tuple_(*(key.expr for key in order.keys)), tuple_(*bound)
    lead = order.keys[0].expr
    if order.descending != backwards:
        return and_(lead <= bound[0], left < right)
    return and_(lead >= bound[0], left > right)


def window(
    session: Session,
    stmt: Select[Any],
    sorting: Sorting,
    order: Order,
    position: Position,
    size: int,
    *,
    total: int | None = None,
) -> Window:
    """Return one page of ``stmt`` in ``order`` at ``position``, with the total count (counted
    here unless given: a list's count kept from an earlier page).

    ``stmt`` selects the rows (plain columns); the order's keys are added to it, so each row
    ends with its sort values (``sort_0``...), which the neighbours' cursors are made of.
    """
    if total is None:
        total = count(session, stmt)
    pages = max(1, math.ceil(total / size))
    keyed = stmt.add_columns(*sort_columns(order))
    width = len(order.keys)
    number = min(position.number, pages)
    if position.last:
        number = pages
        tail = total - (pages - 1) * size if total else 0
        rows = list(_run(session, keyed.order_by(*ordered(order, reverse=True)).limit(tail)))
        rows.reverse()
        has_prev, has_next = pages > 1, False
    elif position.before is not None:
        seek = keyed.where(beyond(order, position.before, backwards=True))
        rows = list(_run(session, seek.order_by(*ordered(order, reverse=True)).limit(size + 1)))
        has_prev = len(rows) > size
        rows = rows[:size]
        rows.reverse()
        has_next = True
        number = _clamp(number, 2, pages - 1) if has_prev else 1
    else:
        seek = keyed
        if position.after is not None:
            seek = keyed.where(beyond(order, position.after, backwards=False))
        rows = list(_run(session, seek.order_by(*ordered(order)).limit(size + 1)))
        has_next = len(rows) > size
        rows = rows[:size]
        has_prev = position.after is not None
        if not has_prev:
            number = 1
        elif not has_next:
            number = pages
        else:
            number = _clamp(number, 2, pages - 1)
    out = Window(rows, total, number, pages, size, order, sorting)
    if rows and has_next:
        out.next_after = encode_cursor([_plain(v) for v in rows[-1][-width:]])
    if rows and has_prev:
        out.prev_before = encode_cursor([_plain(v) for v in rows[0][-width:]])
    return out


def count(session: Session, stmt: Select[Any]) -> int:
    """Return the number of rows ``stmt`` selects."""
    counted = select(func.count()).select_from(stmt.order_by(None).subquery())
    return int(session.connection().execute(counted).scalar_one())


def _clamp(number: int, low: int, high: int) -> int:
    """Return ``number`` within ``low``..``high`` (``low`` when the range is empty)."""
    return max(low, min(number, high))


def _run(session: Session, stmt: Select[Any]) -> Sequence[Any]:
    return session.connection().execute(stmt).all()


# -- an artist's works: the ones worth seeing first ---------------------------------------------

# Titles that say there is none: shown as "Untitled", listed after the titled works.
BLANK_TITLES = (
    "",
    "[blank]",
    "blank",
    "untitled",
    "[untitled]",
    "(untitled)",
    "[no title]",
    "no title",
    "[title not known]",
    "title not known",
)
# Major media first: paintings and sculpture, then installations and film, works on paper and
# photographs, prints, and last whatever else (archive material, ephemera, tools...).
MEDIA_RANK = {
    "Painting": 0,
    "Sculpture": 1,
    "Installation": 2,
    "Video/Film": 2,
    "Drawing, Collage or other Work on Paper": 3,
    "Photography": 3,
    "Architecture": 3,
    "Print": 4,
}
OTHER_MEDIA = 5


def is_blank_title(title: str | None) -> bool:
    """Tell whether a title says the work has none (shown as "Untitled")."""
    return (title or "").strip().lower() in BLANK_TITLES


def _works_order() -> Order:
    blank = case((func.lower(func.trim(func.coalesce(Artwork.title, ""))).in_(BLANK_TITLES), 1),
                 else_=0)  # fmt: skip
    no_image = case((func.coalesce(Artwork.image_url, "") == "", 1), else_=0)
    media = case(
        *((Artwork.category == name, rank) for name, rank in MEDIA_RANK.items()),
        else_=OTHER_MEDIA,
    )
    return Order(
        "best",
        "Best first",
        (
            Key(blank, int),
            Key(no_image, int),
            Key(media, int),
            Key(func.coalesce(Artwork.year_start, NO_YEAR), int),
            Key(Artwork.id, str),
        ),
    )


# An artist's works: titled works with images of major media first, by date; blank titles last.
WORKS_SORTING = Sorting((_works_order(), *ARTWORK_SORTING.orders))
