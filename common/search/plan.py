"""The ranking tiers and the interface the two engine modules implement.

A query's matches fall into nested sets, best first: the artists the query names
(``PERSON``, see ``people``; only when there are some, and left out of every other tier), the
title IS the query (``EXACT``), the title starts with the query's words, maybe after an
article ("Water Lilies (Nymphéas)", "The Lady of Shalott": ``STARTS``, for two words or more:
a known work before later works whose titles mention it), the
title contains the query's words as a phrase (``PHRASE``), or as a phrase whose last word is a
prefix ("Dix" finds "Otto Dix" before "William Dixon": ``PREFIX``), the title contains all the
words in any order (``TITLE``), the words are all somewhere in the document: title, description
or other text such as an artwork's artists (``ANY``). A query that names artists (``people``)
puts their own works after them (``WORKS``: artworks listing one of ``makers`` as a maker) and
the other artists of the name after those (``NAMESAKES``), before the other tiers. A query of
a name and a subject ("turner venice") puts the named artists' works with the subject in the
title (``WORKS``), then with it anywhere (``WORKS_ANY``), right after the titles that are the
query: a title holding it as a phrase may be another's ("From Constable: Salisbury
Cathedral"). Tiers do not nest then: a tier's own matches are its set less the sets of the
tiers before it (``before``). Results come tier by tier; inside a tier by
popularity, which the document ids encode (the most popular document has the smallest id), so
an engine returns a tier's best matches in id order without ranking every match.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, Row, bindparam, text

from common.api.prepared import BOUND_PARAMETER, Prepared
from common.search.models import TITLE_KEY_CHARS
from common.search.text import ParsedQuery

EXACT, PHRASE, PREFIX, TITLE, ANY, PERSON, WORKS, WORKS_ANY, NAMESAKES, STARTS = range(10)
TIERS = (EXACT, STARTS, PHRASE, PREFIX, TITLE, ANY)
# Articles a title may start with before the words of a query ("The Lady of Shalott").
ARTICLES = ("the", "a", "an")
# The tiers read from memory (the named artists, read with their lookup), not by an engine.
IN_MEMORY = frozenset({PERSON, NAMESAKES})
# The works tiers: WORKS holds a subject in the title, WORKS_ANY anywhere (WORKS is in it).
WORKS_TIERS = frozenset({WORKS, WORKS_ANY})


def tiers_for(query: ParsedQuery) -> tuple[int, ...]:
    """Return the tiers that differ for this query (no PREFIX without a prefix word, no TITLE
    for one word: their sets equal the tier's before; no STARTS for one word, whose title is
    then mostly the word itself), in order."""
    skip = {PREFIX} if not query.prefix else set()
    if len(query.words) == 1:
        skip |= {TITLE, STARTS}
    usual = tuple(t for t in TIERS if t not in skip)
    if not query.makers:
        return ((PERSON,) if query.people else ()) + usual
    if query.subject:
        return (usual[0], WORKS, WORKS_ANY, *usual[1:])
    return (PERSON, WORKS, NAMESAKES, *usual)


def cover(query: ParsedQuery, tier: int) -> tuple[int, ...]:
    """Return the fewest engine tiers whose sets together make the sets of ``tier`` and of
    every engine tier before it: the last of the usual tiers (each holds those before it) and
    the last works tier (WORKS_ANY holds WORKS), among those up to ``tier``."""
    upto = [t for t in tiers_for(query) if t not in IN_MEMORY]
    upto = upto[: upto.index(tier) + 1]
    usual = [t for t in upto if t in TIERS]
    works = [t for t in upto if t in WORKS_TIERS]
    return tuple(found[-1] for found in (usual, works) if found)


def before(query: ParsedQuery, tier: int) -> tuple[int, ...]:
    """Return ``cover`` of the engine tier before ``tier`` (nothing for the first)."""
    engine_tiers = [t for t in tiers_for(query) if t not in IN_MEMORY]
    at = engine_tiers.index(tier)
    return cover(query, engine_tiers[at - 1]) if at else ()


# What a result shows of its document, read with the ids of a page (``with_fields``).
HIT_FIELDS = ("id", "kind", "resource_id", "title", "description", "thumbnail", "permalink")
HIT_COLUMNS = ", ".join(f"d.{name}" for name in HIT_FIELDS)


def with_fields(ids: str) -> str:
    """Wrap a SELECT of an ``id`` column (in id order) so that its rows come with the fields a
    result shows: one statement for a page's hits and their fields."""
    return (
        f"SELECT {HIT_COLUMNS} FROM ({ids}) AS page "  # noqa: S608  # nosec B608 # constant fragments
        "JOIN search_documents d ON d.id = page.id ORDER BY d.id"
    )


@lru_cache(maxsize=512)
def statement(sql: str, kinds: bool = False, people: bool = False) -> Prepared:
    """Return the text statement of ``sql``, built once and ``Prepared``: a query's
    statements differ only in their bound values, and building one anew (parsing it for its
    parameters, computing its cache key) costs more than running it, as SQLAlchemy's
    execution of it does on SQLite. The ``kinds`` and ``people`` lists, when the SQL has
    them, are list parameters bound at execution (``with_lists``), the statement written out
    once for each length of them (``Prepared``)."""
    stmt = text(sql)
    if kinds:
        stmt = stmt.bindparams(bindparam("kinds", expanding=True))
    if people:
        stmt = stmt.bindparams(bindparam("people", expanding=True))
    return Prepared(stmt)


def with_lists(query: ParsedQuery, params: dict[str, Any]) -> dict[str, Any]:
    """Return ``params`` with the query's kinds and named artists, the lists ``statement``
    binds at execution."""
    out = dict(params)
    if query.kinds:
        out["kinds"] = list(query.kinds)
    if query.people:
        out["people"] = list(query.people)
    return out


# The parameters both counts of ``count_whole_first`` share.
_SHARED = frozenset(("cap", "kinds", "people"))


def count_whole_first(engine: SearchEngine, conn: Connection, query: ParsedQuery, cap: int) -> int:
    """Return the size of the ``ANY`` tier up to ``cap`` for a query whose last word is a
    prefix: its whole last word counted first, the prefix only when the word falls short of
    ``cap`` (the prefix's matches hold the word's). One statement, one round trip::

        SELECT CASE WHEN (<the word's count>) >= :cap THEN :cap ELSE (<the prefix's>) END

    A CASE evaluates the branch it takes and no other, and so the subqueries in it: SQLite
    runs a scalar subquery where its expression is evaluated, PostgreSQL an uncorrelated one
    (an InitPlan) on the first use of its value. The prefix's posting lists (every word it
    starts) are merged only when the word alone does not fill ``cap``.
    """
    whole_sql, whole_values = engine.count_sql(replace(query, prefix=False), ANY)
    sql, values = engine.count_sql(query, ANY)

    def renamed(bound: re.Match[str]) -> str:
        name = bound.group(1)
        return bound.group(0) if name in _SHARED else f":whole_{name}"

    whole_sql = BOUND_PARAMETER.sub(renamed, whole_sql)
    values = {**values, **{f"whole_{k}": v for k, v in whole_values.items() if k not in _SHARED}}
    combined = f"SELECT CASE WHEN ({whole_sql}) >= :cap THEN :cap ELSE ({sql}) END"
    return run_count(conn, combined, values, cap)


def run_count(conn: Connection, sql: str, values: dict[str, Any], cap: int) -> int:
    """Run a count statement (``count_sql``'s, or a combination of them) with ``:cap`` bound."""
    stmt = statement(sql, ":kinds" in sql, ":people" in sql)
    return int(stmt.scalar(conn, {**values, "cap": cap}))


def starts_keys(query: ParsedQuery) -> tuple[str, str]:
    """Return the folded query, and the same after an article unless it starts with one: the
    beginnings of the titles of the ``STARTS`` tier."""
    article = "" if query.words[0] in ARTICLES else "the "
    return query.key, f"{article}{query.key}"


def title_key(query: ParsedQuery) -> str:
    """Return the indexed prefix of the folded query, looked up for exact title matches."""
    return query.key[:TITLE_KEY_CHARS]


class TierPage(NamedTuple):
    """Which of a tier's own matches to fetch: ``limit`` of them after the first ``offset``.

    ``estimate`` is the number of the tier's own matches, or an upper bound of it, for the
    engine to choose how to read them.
    """

    tier: int
    limit: int
    offset: int
    estimate: int


class SearchEngine(ABC):
    """What the query interface needs from a full-text engine, and what both engines do alike:
    a count runs the engine's ``count_sql``, a sync runs its ``SYNC`` statements in order."""

    SYNC: tuple[str, ...] = ()

    def count(self, conn: Connection, query: ParsedQuery, tier: int, cap: int) -> int:
        """Return the size of the sets of a tier and of the tiers before it (``ANY``: every
        match), ``query.people`` left out, counting no further than ``cap``."""
        return run_count(conn, *self.count_sql(query, tier), cap)

    @abstractmethod
    def count_sql(self, query: ParsedQuery, tier: int) -> tuple[str, dict[str, Any]]:
        """Return the SQL of :meth:`count` (``:cap`` left unbound) and its values, the
        query's lists among them (``with_lists``)."""

    @abstractmethod
    def count_own(self, conn: Connection, query: ParsedQuery, tier: int, cap: int) -> int:
        """Return the number of a tier's own matches (those ``fetch`` pages through), counting
        no further than ``cap``."""

    @abstractmethod
    def exists(self, conn: Connection, query: ParsedQuery) -> bool:
        """Tell whether anything matches the query at all."""

    @abstractmethod
    def fetch(self, conn: Connection, query: ParsedQuery, page: TierPage) -> list[Row[Any]]:
        """Return a page of the tier's own matches (not in the tier before, nor
        ``query.people``) in id order, each with its fields (``with_fields``), in one
        statement."""

    @abstractmethod
    def similar_words(self, conn: Connection, word: str, limit: int) -> list[tuple[str, int]]:
        """Return indexed words that look like ``word``, with their document counts."""

    def sync(self, conn: Connection) -> None:
        """Bring the full-text index and the vocabulary up to date with the documents table."""
        for sql in self.SYNC:
            conn.execute(text(sql))

    @abstractmethod
    def compact(self, engine: Engine) -> None:
        """Reclaim the space of rewritten documents (after a large reindex, outside it)."""
