"""Edit distances, one-edit neighbours, rewriting the user's query, and the bounds of the work
one correction may do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from common.search import spelling
from common.search.spelling import edit_distance, max_edits, one_edit, rewrite, variants
from common.search.text import ParsedQuery, parse_query


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("turner", "turner", 0),
        ("tunrer", "turner", 1),  # a transposition is one edit
        ("picaso", "picasso", 1),
        ("cezzane", "cezanne", 2),
        ("orbach", "auerbach", 3),
        ("", "abc", 3),
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance == edit_distance(b, a)


def test_one_edit_neighbours() -> None:
    found = one_edit("tunrer")
    assert {"turner", "tuner", "tunrers", "tunner"} <= found
    assert "tunrer" not in found
    assert all(edit_distance("tunrer", w) == 1 for w in found)
    assert "\u00e9te" in one_edit("\u00e9t")  # the word's own letters are used too


def test_longer_words_may_take_more_edits() -> None:
    assert [max_edits(w) for w in ("monet", "mone", "rembrant", "gainsborugh")] == [2, 1, 2, 3]


def test_rewrite_keeps_the_users_text_and_case() -> None:
    original = parse_query("Pablo Picaso, 1937")
    corrected = original.with_words(("pablo", "picasso", "1937"))
    assert rewrite("Pablo Picaso, 1937", original, corrected) == "Pablo Picasso, 1937"
    shout = parse_query("TUNRER")
    assert rewrite("TUNRER", shout, shout.with_words(("turner",))) == "TURNER"
    low = parse_query("honore daumeir")
    assert rewrite("honore daumeir", low, low.with_words(("honore", "daumier"))) == (
        "honore daumier"
    )


# -- the bounds of one query's correction --------------------------------------------------


class Vocabulary:
    """Known words and an engine over them, recording the work a correction asks for."""

    def __init__(self, *words: str, finds: tuple[str, ...] = ()) -> None:
        self.words = {w: 10 for w in words}
        self.finds = finds  # the one query that finds something
        self.looked_up: list[int] = []  # the variants of each lookup
        self.similar: list[str] = []  # the words whose trigram neighbours were asked for

    def unknown_words(self, _conn: Any, words: tuple[str, ...]) -> list[str]:
        return [w for w in dict.fromkeys(words) if w not in self.words]

    def look_up(self, _conn: Any, near: list[str]) -> dict[str, int]:
        self.looked_up.append(len(near))
        return {w: self.words[w] for w in near if w in self.words}

    def similar_words(self, _conn: Any, word: str, limit: int) -> list[tuple[str, int]]:
        self.similar.append(word)
        return []

    def exists(self, _conn: Any, query: ParsedQuery) -> bool:
        return query.words == self.finds

    def suggest(self, q: str) -> tuple[str, ...] | None:
        found = spelling.suggest(None, self, parse_query(q))  # type: ignore[arg-type]
        return None if found is None else found.words


@pytest.fixture
def vocabulary(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Vocabulary]]:
    """Make a vocabulary the correction reads (through the module's two lookups)."""

    def make(*words: str, finds: tuple[str, ...] = ()) -> Vocabulary:
        made = Vocabulary(*words, finds=finds)
        monkeypatch.setattr(spelling, "unknown_words", made.unknown_words)
        monkeypatch.setattr(spelling, "look_up", made.look_up)
        return made

    yield make


LONGEST = "abcdefghijklmnopqrstuvwx"  # MAX_WORD_CHARS letters


def test_variants_come_deletions_first_and_stop_at_the_limit() -> None:
    deletions = ["unrer", "tnrer", "turer", "tuner", "tunrr", "tunre"]
    assert variants("tunrer", 7) == [*deletions, "utnrer"]  # then the transpositions
    assert set(variants("tunrer")) == one_edit("tunrer")
    assert len(variants("tunrer", 40)) == 40
    assert len(variants("\u0436" * 30, spelling.MAX_VARIANTS_PER_WORD)) == (
        spelling.MAX_VARIANTS_PER_WORD
    )


def test_every_variant_of_the_longest_corrected_ascii_word_is_looked_up() -> None:
    assert len(LONGEST) == spelling.MAX_WORD_CHARS
    for word in (LONGEST, "a" * spelling.MAX_WORD_CHARS, "ab" * (spelling.MAX_WORD_CHARS // 2)):
        assert len(variants(word)) <= spelling.MAX_VARIANTS_PER_WORD


def test_a_word_up_to_the_longest_is_corrected(vocabulary: Callable[..., Vocabulary]) -> None:
    misspelt = LONGEST[:5] + LONGEST[6] + LONGEST[5] + LONGEST[7:]  # two letters swapped
    vocab = vocabulary(LONGEST, finds=(LONGEST,))
    assert vocab.suggest(misspelt) == (LONGEST,)
    assert vocab.looked_up == [len(variants(misspelt))]


def test_a_longer_unknown_word_is_not_corrected_nor_its_query(
    vocabulary: Callable[..., Vocabulary],
) -> None:
    longer = LONGEST + "y"
    vocab = vocabulary(LONGEST, "turner", finds=("turner", LONGEST))
    for q in (longer, "x" * 200, f"tunrer {longer}"):
        assert vocab.suggest(q) is None, q
    assert vocab.looked_up == [] and vocab.similar == []


def test_a_known_long_word_does_not_stop_the_correction(
    vocabulary: Callable[..., Vocabulary],
) -> None:
    long_known = "x" * 60
    vocab = vocabulary(long_known, "turner", finds=(long_known, "turner"))
    assert vocab.suggest(f"{long_known} tunrer") == (long_known, "turner")


def test_at_most_so_many_unknown_words_are_corrected(
    vocabulary: Callable[..., Vocabulary],
) -> None:
    known = ("turner", "monet", "degas", "goya")
    right = known[: spelling.MAX_CORRECTED_WORDS]
    wrong = ("tunrer", "mnoet", "dgeas", "gyoa")
    vocab = vocabulary(*known, finds=right)
    assert vocab.suggest(" ".join(wrong[: spelling.MAX_CORRECTED_WORDS])) == right
    assert len(vocab.looked_up) == spelling.MAX_CORRECTED_WORDS
    vocab = vocabulary(*known, finds=known)
    assert vocab.suggest(" ".join(wrong[: spelling.MAX_CORRECTED_WORDS + 1])) is None
    assert vocab.looked_up == [] and vocab.similar == []


def swapped(word: str) -> str:
    """Return ``word`` with its sixth and seventh letters swapped (one edit)."""
    return word[:5] + word[6] + word[5] + word[7:]


def test_the_query_shares_one_budget_of_variants(vocabulary: Callable[..., Vocabulary]) -> None:
    right = tuple(LONGEST[i:] + LONGEST[:i] for i in range(spelling.MAX_CORRECTED_WORDS))
    vocab = vocabulary(*right, finds=right)
    assert vocab.suggest(" ".join(swapped(w) for w in right)) == right
    assert all(n <= spelling.MAX_VARIANTS_PER_WORD for n in vocab.looked_up)
    assert sum(vocab.looked_up) == spelling.MAX_VARIANTS_PER_QUERY  # the last word's cut
    assert vocab.looked_up[-1] < len(variants(swapped(right[-1])))


def test_a_word_of_other_letters_is_cut_at_the_bound(
    vocabulary: Callable[..., Vocabulary],
) -> None:
    other = "\u0436\u0449\u044e\u0434\u0444\u044f" * 4  # more variants than an ASCII word
    assert len(other) == spelling.MAX_WORD_CHARS
    assert len(variants(other)) > spelling.MAX_VARIANTS_PER_WORD
    vocab = vocabulary(swapped(other), finds=(swapped(other),))
    assert vocab.suggest(other) == (swapped(other),)  # a transposition comes before the cut
    assert vocab.looked_up == [spelling.MAX_VARIANTS_PER_WORD]


def test_a_repeated_word_is_looked_up_once(vocabulary: Callable[..., Vocabulary]) -> None:
    vocab = vocabulary("turner", "and", finds=("turner", "and", "turner"))
    assert vocab.suggest("tunrer and tunrer") == ("turner", "and", "turner")
    assert vocab.looked_up == [len(variants("tunrer"))]
