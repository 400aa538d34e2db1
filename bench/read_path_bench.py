"""The catalog read path alone: CPU time per request of the query, rows, representation and JSON.

No HTTP, no gate: what one request costs the resource server process between the SQL it sends
and the bytes it answers, measured as process CPU time (so that a loaded shared machine
inflates it less than wall time). The code measured is the checkout in the current directory:
to compare with another tree (the code before a change), run the same command from its folder.

    DATABASE_URL=postgresql://... python -m bench.read_path_bench

Data: the museums' import (the page after row 100,000 needs that many artworks).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from sqlalchemy import select

from common.api.paging import PageParams
from common.hal import Urls
from common.models import Artwork
from common.settings import ResourceSettings
from common.stores import Stores
from resource_server.queries import artists as artist_queries
from resource_server.queries import artworks as artwork_queries
from resource_server.representations.artists import artist
from resource_server.representations.artworks import artwork

REQUESTS = 300  # per run; the median and the best of 5 runs are printed
URLS = Urls("http://127.0.0.1:8000")


def cases(stores: Stores) -> dict[str, Callable[[int], bytes]]:
    """Return the measured reads, each taking a request number."""
    with stores.reads() as s:
        visible = select(Artwork.id).where(Artwork.published.is_(True)).order_by(Artwork.id)
        ids = s.scalars(visible).all()
    deep = [ids[100_000]]
    sample = list(ids[:: max(1, len(ids) // 500)])

    def item(n: int) -> bytes:
        with stores.reads() as s:
            found, _ = artwork_queries.find_artwork(s, sample[n % len(sample)])
            assert found is not None
            editions = artwork_queries.editions_for(s, [found.id])
        return orjson.dumps(artwork(found, editions.get(found.id, []), URLS))

    def artworks(cursor: list[Any] | None) -> bytes:
        with stores.reads() as s:
            page = artwork_queries.list_artworks(s, {}, PageParams(size=20, cursor=cursor))
            editions = artwork_queries.editions_for(s, [a.id for a in page.rows])
        return orjson.dumps([artwork(a, editions.get(a.id, []), URLS) for a in page.rows])

    def artists(_n: int) -> bytes:
        with stores.reads() as s:
            page = artist_queries.ARTISTS.page(s, {}, PageParams(size=20))
        return orjson.dumps([artist(a, URLS) for a in page.rows])

    return {
        "artwork item": item,
        "artworks page, size=20": lambda _n: artworks(None),
        "artworks page after row 100,000, size=20": lambda _n: artworks(deep),
        "artists page, size=20": artists,
    }


def main() -> None:
    """Print a markdown table of CPU microseconds per request."""
    stores = Stores.connect(ResourceSettings.from_env())
    print("| read | best us | median us |")
    print("|---|---:|---:|")
    for name, read in cases(stores).items():
        for n in range(30):  # warm-up: connections, compiled statements
            read(n)
        runs = []
        for _ in range(5):
            start = time.process_time()
            for n in range(REQUESTS):
                read(n)
            runs.append((time.process_time() - start) / REQUESTS * 1e6)
        print(f"| {name} | {min(runs):,.0f} | {statistics.median(runs):,.0f} |")


if __name__ == "__main__":
    main()
