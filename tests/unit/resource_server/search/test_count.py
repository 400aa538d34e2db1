"""The total of a query: the vocabulary's count of a lone word first, then the whole word when
it is also a prefix, then the prefix."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

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


def count_whole_first(engine: Counts, conn: Any, query: ParsedQuery, cap: int) -> int:
    """What the engines' one statement does (tested on each engine in test_search)."""
    whole = engine.count(conn, replace(query, prefix=False), ANY, cap)
    return cap if whole >= cap else engine.count(conn, query, ANY, cap)


@pytest.fixture(autouse=True)
def vocabulary(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The vocabulary's document counts, by word (none unless a test sets one)."""
    counts: dict[str, int] = {}
    monkeypatch.setattr(service.spelling, "documents_using", lambda _c, w: counts.get(w, 0))
    monkeypatch.setattr(service, "count_whole_first", count_whole_first)
    return counts


def total(engine: Counts, prefix: bool = True, words: tuple[str, ...] = ("turner",)) -> int:
    return count_matches(None, engine, ParsedQuery(words, prefix=prefix))  # type: ignore[arg-type]


def test_a_lone_word_the_vocabulary_counts_past_the_window_is_not_counted(
    vocabulary: dict[str, int],
) -> None:
    vocabulary["turner"] = service.WINDOW
    engine = Counts(word=service.WINDOW + 5, prefix=service.WINDOW + 50)
    assert total(engine) == service.WINDOW
    assert total(engine, prefix=False) == service.WINDOW
    assert engine.asked == []


def test_the_vocabulary_short_of_the_window_or_a_second_word_is_counted(
    vocabulary: dict[str, int],
) -> None:
    vocabulary.update(turner=service.WINDOW - 1, william=service.WINDOW * 2)
    engine = Counts(word=service.WINDOW + 5, prefix=service.WINDOW + 50)
    assert total(engine) == service.WINDOW
    assert engine.asked == [False]
    two = Counts(word=40, prefix=70)
    assert total(two, words=("william", "turner")) == 70
    assert two.asked == [False, True]
    kinds = Counts(word=40, prefix=70)
    query = ParsedQuery(("william",), prefix=False, kinds=("artwork",))
    assert count_matches(None, kinds, query) == 40  # type: ignore[arg-type]
    assert kinds.asked == [False]


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


class Union(Counts):
    """An engine that counts the words' matches, and more when the works are merged in."""

    def __init__(self) -> None:
        super().__init__(word=40, prefix=70)
        self.makers: list[tuple[str, ...]] = []

    def count(self, conn: Any, query: ParsedQuery, tier: int, cap: int) -> int:
        self.makers.append(query.makers)
        return super().count(conn, query, tier, cap) + (500 if query.makers else 0)


def test_the_named_artists_works_are_counted_by_the_words_when_their_names_hold_them() -> None:
    # "teenie harris": every word is in the name, so the works are among the words' matches.
    engine = Union()
    query = ParsedQuery(
        ("teenie", "harris"), prefix=True, people=(1,), makers=("charles teenie harris",)
    )
    assert count_matches(None, engine, query) == 1 + 70  # type: ignore[arg-type]
    assert engine.makers == [(), ()]  # the whole word, then the prefix: the words alone
    # "jmw turner": the initials are no words of the works: the union is counted.
    engine = Union()
    query = ParsedQuery(
        ("jmw", "turner"), prefix=True, people=(1,), makers=("joseph mallord william turner",)
    )
    assert count_matches(None, engine, query) == 1 + 70 + 500  # type: ignore[arg-type]
    assert engine.makers == [("joseph mallord william turner",)]
