"""The runner of the judged query set (see the package's docstring)."""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, select

from common.db import make_engine
from common.models import Artwork, ArtworkArtist
from common.search.text import fold
from common.settings import ResourceSettings
from resource_server.search.service import SearchRequest, search

QUERIES = Path(__file__).with_name("queries.json")
DEPTH = 10
Key = tuple[str, str]  # (kind, resource id)


def load(path: Path = QUERIES) -> list[dict[str, Any]]:
    """Return the judged queries of a file."""
    queries: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["queries"]
    return queries


def works_of(conn: Connection, artist_id: str, title_has: str = "") -> list[tuple[str, str]]:
    """Return (artwork id, title) of an artist's works, only those whose folded title or
    series holds every word of ``title_has``."""
    rows = conn.execute(
        select(Artwork.id, Artwork.title, Artwork.series)
        .join(ArtworkArtist, ArtworkArtist.artwork_id == Artwork.id)
        .where(ArtworkArtist.artist_id == artist_id)
    )
    wanted = set(fold(title_has).split())
    return [
        (str(i), str(t or ""))
        for i, t, series in rows
        if wanted <= set(fold(f"{t or ''} {series or ''}").split())
    ]


def gains(conn: Connection, judgements: Iterable[Mapping[str, Any]]) -> dict[Key, int]:
    """Return the grade of every judged resource (the highest given to it)."""
    out: dict[Key, int] = {}

    def give(key: Key, grade: int) -> None:
        out[key] = max(grade, out.get(key, 0))

    for j in judgements:
        grade = int(j["grade"])
        if "artist" in j:
            give(("artist", j["artist"]), grade)
        elif "artwork" in j:
            give(("artwork", j["artwork"]), grade)
        elif "works_by" in j:
            for artwork_id, _title in works_of(conn, j["works_by"], j.get("title_has", "")):
                give(("artwork", artwork_id), grade)
        else:
            raise ValueError(f"a judgement names nothing: {j}")
    return out


def dcg(grades: Iterable[int]) -> float:
    """Return the discounted cumulative gain of grades in rank order (gain 2^g - 1)."""
    return sum((2**g - 1) / math.log2(rank + 2) for rank, g in enumerate(grades))


def ndcg(ranked: list[Key], judged: Mapping[Key, int], depth: int = DEPTH) -> float:
    """Return nDCG@depth of a ranking against graded judgements."""
    ideal = dcg(sorted(judged.values(), reverse=True)[:depth])
    if not ideal:
        return 0.0
    return dcg(judged.get(key, 0) for key in ranked[:depth]) / ideal


def ranking(conn: Connection, q: str) -> tuple[list[Key], str | None]:
    """Return the first page of a query as (kind, id) pairs, and the correction followed."""
    page = search(conn, SearchRequest(q, size=DEPTH))
    corrected = page.correction
    if corrected is not None:
        page = search(conn, SearchRequest(corrected, size=DEPTH))
    return [(h.kind, h.resource_id) for h in page.hits], corrected


def main() -> None:
    """Run the judged set and print nDCG@10 per category and overall."""
    parser = argparse.ArgumentParser(description="nDCG@10 of the judged search queries")
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--verbose", action="store_true", help="every query's score and top 10")
    parser.add_argument("--only", help="one category")
    args = parser.parse_args()
    settings = ResourceSettings.from_env()
    engine = make_engine(settings)
    scores: dict[str, list[float]] = defaultdict(list)
    with engine.connect() as conn:
        titles: dict[Key, str] = {}
        for item in load(args.queries):
            if args.only and item["category"] != args.only:
                continue
            judged = gains(conn, item["judgements"])
            ranked, corrected = ranking(conn, item["q"])
            score = ndcg(ranked, judged)
            scores[item["category"]].append(score)
            if args.verbose:
                page = search(conn, SearchRequest(corrected or item["q"], size=DEPTH))
                titles = {(h.kind, h.resource_id): h.title for h in page.hits}
                fixed = f" -> {corrected!r}" if corrected else ""
                print(f"{score:.3f}  {item['q']!r}{fixed} [{item['category']}]")
                for key in ranked:
                    print(f"        {judged.get(key, 0)} {key[0]:<8} {titles.get(key, '')[:70]}")
    every = [s for values in scores.values() for s in values]
    print(f"{engine.dialect.name}: nDCG@{DEPTH} of {len(every)} queries")
    for category in sorted(scores):
        values = scores[category]
        print(f"  {category:<15} {statistics.mean(values):.3f}  ({len(values)} queries)")
    if every:
        print(f"  {'overall':<15} {statistics.mean(every):.3f}")
