"""The query interface: one page of ranked results, or a spelling correction, for a query.

Ranking (see ``plan``): the artists the query names (``people``) and their own works, then exact
title match, then phrase (and prefix) matches in the title, then the other title matches, then
matches anywhere in the document; popularity orders each tier.
Only the tiers the requested window overlaps are read, each tier's hits with their fields in one
statement: a page costs at most one statement per tier, whatever its number of hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection

from common.api.errors import ParamError
from common.search import spelling
from common.search.documents import KINDS
from common.search.people import Named, find_named
from common.search.plan import (
    ANY,
    NAMESAKES,
    PERSON,
    WORKS_TIERS,
    SearchEngine,
    TierPage,
    count_whole_first,
    tiers_for,
)
from common.search.registry import engine_for
from common.search.text import ParsedQuery, parse_query, split_kind_filter

DEFAULT_SIZE = 10
MAX_SIZE = 50
MAX_OFFSET = 1_000_000
# The results a query serves: its best WINDOW matches. Counting stops there, so a query that
# matches half the catalog costs what one matching a thousand documents costs; its
# ``total_count`` says WINDOW and pages past it are empty (as a search engine's result window
# ends: Elasticsearch's at 10,000, Google Custom Search's at 100).
WINDOW = 1_000


@dataclass(frozen=True)
class SearchRequest:
    """What was asked: the raw ``q``, the window, and the kinds of the ``type`` parameter."""

    q: str
    size: int = DEFAULT_SIZE
    offset: int = 0
    types: tuple[str, ...] = ()
    # Offer a spelling correction when nothing matches ("search instead for" asks without).
    correct: bool = True


@dataclass(frozen=True)
class Hit:
    """One result: what the index says about a resource (which may since have changed)."""

    kind: str
    resource_id: str
    title: str
    description: str | None
    thumbnail: str | None
    permalink: str | None


@dataclass(frozen=True)
class SearchPage:
    """The results of one window of a query, or the corrected ``q`` to search instead."""

    total_count: int
    hits: list[Hit] = field(default_factory=list)
    correction: str | None = None

    @property
    def capped(self) -> bool:
        """Tell whether the count stopped at the window: there are more matches than it says."""
        return self.total_count >= WINDOW


def parse_request_kinds(q: str, types: tuple[str, ...]) -> tuple[str, tuple[str, ...] | None]:
    """Split ``q`` into its text and kinds (filter terms and ``type`` combined; None: any)."""
    text, in_query = split_kind_filter(q)
    unknown = sorted(set(in_query) - set(KINDS))
    if unknown:
        reason = f"has an unknown og_type filter: {', '.join(unknown)}"
        raise ParamError.invalid("q", reason)
    if not text.strip():
        raise ParamError("Q can't be blank.", {"q": ["can't be blank"]})
    kinds: set[str] | None = None
    for given in (in_query, types):
        if given:
            kinds = set(given) if kinds is None else kinds & set(given)
    return text, None if kinds is None else tuple(k for k in KINDS if k in kinds)


def window(
    conn: Connection,
    engine: SearchEngine,
    query: ParsedQuery,
    total: int,
    size: int,
    offset: int,
    named: Named | None = None,
) -> list[Hit]:
    """Return results ``offset`` to ``offset + size``, tier by tier, each tier's with their
    fields in one statement.

    A tier is counted only when the window starts past it (a deep page), its own matches up
    to the window's start; the first page reads the best tiers until it is full, and learns a
    tier's size from a fetch that runs out. So a page costs at most one statement per tier,
    whatever its number of hits. The named artists' tiers are read from memory: ``named``,
    their documents as ``find_named`` read them.
    """
    named = named or Named()
    in_memory = {PERSON: named.leads, NAMESAKES: named.namesakes}
    hits: list[Hit] = []
    skip = offset
    before = 0  # matches in the tiers already passed
    for tier in tiers_for(query):
        if len(hits) >= size:
            break
        own: int | None = None  # the tier's own matches, when known
        if tier in in_memory:
            own = len(in_memory[tier])
        elif tier == ANY:
            own = max(0, total - before)
        elif skip:
            # Counted to one past the window's start: the window starts inside it, or after.
            own = engine.count_own(conn, query, tier, min(skip, WINDOW) + 1)
        if own is not None and skip >= own:
            skip -= own
            before += own
            continue
        if own is not None:
            estimate = own
        elif tier in WORKS_TIERS:
            estimate = max(query.works, 1)
        else:
            estimate = max(total - before, 1)
        need = size - len(hits)
        if tier in in_memory:
            found = list(in_memory[tier][skip : skip + need])
        else:
            found = engine.fetch(conn, query, TierPage(tier, need, skip, estimate))
        hits += [_hit(row) for row in found]
        before += own if own is not None else skip + len(found)
        skip = 0
    return hits


def _hit(row: Any) -> Hit:
    """Return the result a row of ``HIT_COLUMNS`` describes."""
    return Hit(row.kind, row.resource_id, row.title, row.description, row.thumbnail, row.permalink)


def count_matches(conn: Connection, engine: SearchEngine, query: ParsedQuery) -> int:
    """Return the number of matches, counting no further than ``WINDOW``.

    A query of one word that the vocabulary says is in at least ``WINDOW`` documents fills
    the window: that count is never more than the word's matches (``documents_using``), and a
    prefix's matches hold the word's. One indexed lookup then settles it where counting the
    first thousand matches read 2 to 3 ms of PostgreSQL's time ("turner", "portrait").

    When the last word is also a prefix, its whole word is counted first: the prefix's
    matches hold the word's, so a word that fills the window settles the count without the
    prefix, whose posting lists (every word it starts) both engines merge in full: 0.1 against
    2.3 ms for "turner" on the full import. Both counts are one statement, whose prefix
    count runs only when needed (``count_whole_first``).

    The named artists shown (``query.people``) are counted apart: they may not match the
    query's words ("J.M.W. Turner"), and the engines leave them out.
    """
    if (
        len(query.words) == 1
        and not query.kinds
        and spelling.documents_using(conn, query.words[0]) >= WINDOW
    ):
        return WINDOW
    named = len(query.people)
    if query.makers and all(
        set(query.words) <= {*maker.split(), *query.subject} for maker in query.makers
    ):
        # Every word is in the makers' names or the subject: their works match the words
        # anyway, and the words alone count them (one posting list each, not two merged).
        query = replace(query, makers=(), subject=())
    if query.prefix and not query.makers:
        return min(WINDOW, named + count_whole_first(engine, conn, query, WINDOW))
    return min(WINDOW, named + engine.count(conn, query, ANY, WINDOW))


def search(conn: Connection, request: SearchRequest) -> SearchPage:
    """Answer a search: a page of hits, or a correction when nothing matches and one would.

    A correction is offered only when the query as typed finds nothing at all: neither a
    document nor an artist it names ("JMW Turner" is not "corrected" to other words).
    """
    text, kinds = parse_request_kinds(request.q, request.types)
    query = parse_query(text, kinds or ())
    if not query.words or kinds == ():
        return SearchPage(0)
    engine = engine_for(conn)
    named = find_named(conn, query)
    query = replace(
        query,
        people=tuple(int(row.id) for row in named.shown),
        makers=named.makers,
        subject=named.subject,
        works=named.works,
    )
    total = count_matches(conn, engine, query)
    if total == 0:
        if not request.correct:
            return SearchPage(0)
        corrected = spelling.suggest(conn, engine, replace(query, people=(), makers=()))
        if corrected is None:
            return SearchPage(0)
        new_q = spelling.rewrite(text, query, corrected)
        filters = "".join(
            f" more:pagemap:metatags-og_type:{k}" for k in split_kind_filter(request.q)[1]
        )
        return SearchPage(0, correction=new_q + filters)
    size = max(0, min(request.size, total - request.offset))  # nothing past the window
    if not size:
        return SearchPage(total)
    return SearchPage(total, window(conn, engine, query, total, size, request.offset, named))
