"""The judged query set and the nDCG of its runner (``bench.relevance``)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from bench.relevance.run import dcg, load, ndcg

ARTIST = ("artist", "a")
WORK = ("artwork", "w")
OTHER = ("artwork", "o")


def test_dcg_discounts_by_rank() -> None:
    assert dcg([3, 0, 1]) == pytest.approx(7 + 1 / 2)
    assert dcg([]) == 0


def test_ndcg_is_one_for_the_ideal_order_and_less_for_another() -> None:
    judged = {ARTIST: 3, WORK: 2, OTHER: 1}
    assert ndcg([ARTIST, WORK, OTHER], judged) == pytest.approx(1.0)
    worse = ndcg([OTHER, WORK, ARTIST], judged)
    assert 0 < worse < 1
    ideal = 7 + 3 / math.log2(3) + 1 / 2
    assert worse == pytest.approx((1 + 3 / math.log2(3) + 7 / 2) / ideal)
    # Unjudged results gain nothing; a query judging nothing scores 0.
    assert ndcg([("gene", "x")], judged) == 0
    assert ndcg([ARTIST], {}) == 0


def test_only_the_first_ten_count() -> None:
    judged = {WORK: 3}
    unjudged = [("artwork", str(i)) for i in range(10)]
    assert ndcg([*unjudged, WORK], judged) == 0


def test_the_judged_set() -> None:
    queries = load()
    assert len(queries) >= 60
    categories = Counter(q["category"] for q in queries)
    assert set(categories) == {
        "artist",
        "work",
        "artist+subject",
        "misspelling",
        "initials",
        "museum",
    }
    assert min(categories.values()) >= 10
    for q in queries:
        assert q["q"].strip() and q["judgements"], q["q"]
        for j in q["judgements"]:
            assert 0 <= j["grade"] <= 3
            assert {"artist", "artwork", "works_by"} & set(j), j
        assert max(j["grade"] for j in q["judgements"]) == 3, q["q"]
