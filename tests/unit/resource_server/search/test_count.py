"""The total of a query whose last word is a prefix: the whole word first, then the prefix."""

from __future__ import annotations

from typing import Any

from common.search.plan import ANY
from common.search.text import ParsedQuery
from resource_server.search import service
from resource_server.search.service import count_matches


class Counts:
    """An engine that knows how many documents match each form of a query."""

    def __init__(self, word: int, prefix: int) -> None:
        self.sizes = {False: word, True: prefix}
        self.asked: list[bool] = []

    def count(self, _conn: Any, query: ParsedQuery, tier: int, cap: int) -> int:
        assert tier == ANY
        self.asked.append(query.prefix)
        return min(cap, self.sizes[query.prefix])


def total(engine: Counts, prefix: bool = True) -> int:
    return count_matches(None, engine, ParsedQuery(("turner",), prefix=prefix))  # type: ignore[arg-type]


def test_a_word_that_fills_the_window_settles_the_count() -> None:
    engine = Counts(word=service.WINDOW + 5, prefix=service.WINDOW + 50)
    assert total(engine) == service.WINDOW
    assert engine.asked == [False]


def test_otherwise_the_prefix_is_counted() -> None:
    engine = Counts(word=40, prefix=70)
    assert total(engine) == 70
    assert engine.asked == [False, True]


def test_a_query_without_a_prefix_is_counted_once() -> None:
    engine = Counts(word=40, prefix=70)
    assert total(engine, prefix=False) == 40
    assert engine.asked == [False]
