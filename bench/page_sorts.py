"""The sorted list pages' statements on a database as it is: a first, a deep and a last page of
each order, and the count, in milliseconds (the mean of five runs after one).

    python -m bench.page_sorts sqlite:///instance/artcat.sqlite3
    python -m bench.page_sorts postgresql+psycopg://root@127.0.0.1/artcat

A deep page is the page after the middle row of the order (found by its position, once): it
should cost what the first costs, since each is one index seek (migration 0014).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from resource_server.queries import artists as artist_q
from resource_server.web import browse, data

RUNS = 5
SIZE = 24


def timed(run: Callable[[], Any]) -> float:
    """Return the mean time of ``run`` in milliseconds, after one run to warm up."""
    run()
    start = time.perf_counter()
    for _ in range(RUNS):
        run()
    return (time.perf_counter() - start) / RUNS * 1000


def main(url: str) -> None:
    """Print a Markdown table of the orders' page and count times."""
    engine = create_engine(url)
    lists = (
        ("artists", artist_q.ARTISTS.filtered({}), browse.ARTIST_SORTING),
        ("artworks", data.public_artworks({}), browse.ARTWORK_SORTING),
    )
    print("| list | order | rows | first page | deep page | last page | count |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with Session(engine) as session:
        conn = session.connection()
        for name, stmt, sorting in lists:
            count = select(func.count()).select_from(stmt.order_by(None).subquery())
            total = conn.execute(count).scalar_one()
            for order in sorting.orders:
                keyed = stmt.add_columns(*browse.sort_columns(order))
                first = keyed.order_by(*browse.ordered(order)).limit(SIZE)
                last = keyed.order_by(*browse.ordered(order, reverse=True)).limit(SIZE)
                width = len(order.keys)
                middle = conn.execute(
                    keyed.order_by(*browse.ordered(order)).offset(total // 2).limit(1)
                ).first()
                deep = first
                if middle is not None:
                    cursor = list(middle[-width:])
                    deep = (
                        keyed.where(browse.beyond(order, cursor, backwards=False))
                        .order_by(*browse.ordered(order))
                        .limit(SIZE)
                    )
                figures = [
                    timed(lambda s=s: conn.execute(s).all())  # type: ignore[misc]
                    for s in (first, deep, last)
                ]
                counted = timed(lambda c=count: conn.execute(c).scalar_one())  # type: ignore[misc]
                cells = " | ".join(f"{f:.1f}" for f in (*figures, counted))
                print(f"| {name} | {order.name} | {total:,} | {cells} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///instance/artcat.sqlite3")
