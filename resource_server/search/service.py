"""The query interface: one page of ranked results, or a spelling correction, for a query.

Ranking (see ``plan``): the artists the query names (``people``), then exact title match, then
phrase (and prefix) matches in the title, then the other title matches, then matches anywhere in
the document; popularity orders each tier.
Only the tiers the requested window overlaps are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

from sqlalchemy import Connection, Table, select

from common.api.errors import ParamError
from common.search import spelling
from common.search.documents import KINDS
from common.search.models import SearchDocument
from common.search.people import find_people
from common.search.plan import ANY, PERSON, SearchEngine, tiers_for
from common.search.registry import engine_for
from common.search.text import ParsedQuery, parse_query, split_kind_filter

DOCUMENTS = cast(Table, SearchDocument.__table__)
DEFAULT_SIZE = 10
MAX_SIZE = 50
MAX_OFFSET = 1_000_000


@dataclass(frozen=True)
class SearchRequest:
    """What was asked: the raw ``q``, the window, and the kinds of the ``type`` parameter."""

    q: str
    size: int = DEFAULT_SIZE
    offset: int = 0
    types: tuple[str, ...] = ()


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
    conn: Connection, engine: SearchEngine, query: ParsedQuery, total: int, size: int, offset: int
) -> list[int]:
    """Return the ids of results ``offset`` to ``offset + size``, tier by tier.

    A tier is counted only when the window starts past it (a deep page); the first page reads
    the best tiers until it is full, and learns a tier's size from a fetch that runs out.
    """
    ids: list[int] = []
    skip = offset
    before = 0  # matches in the tiers already passed
    people = len(query.people)  # in every tier's set, counted apart from the engine's
    for tier in tiers_for(query):
        if len(ids) >= size:
            break
        whole = total if tier == ANY else people if tier == PERSON else None
        if skip and whole is None:
            whole = engine.count(conn, query, tier) + people
        if whole is not None and skip >= whole - before:
            skip -= whole - before
            before = whole
            continue
        estimate = total - before if whole is None else whole - before
        need = size - len(ids)
        if tier == PERSON:
            found = list(query.people[skip : skip + need])
        else:
            found = engine.fetch(conn, query, tier, need, skip, estimate)
        ids += found
        before = whole if whole is not None else before + len(found)
        skip = 0
    return ids


def load_hits(conn: Connection, ids: list[int]) -> list[Hit]:
    """Return the documents of ``ids``, in that order."""
    if not ids:
        return []
    cols = (DOCUMENTS.c.id, DOCUMENTS.c.kind, DOCUMENTS.c.resource_id, DOCUMENTS.c.title,
            DOCUMENTS.c.description, DOCUMENTS.c.thumbnail, DOCUMENTS.c.permalink)  # fmt: skip
    found = {row.id: Hit(*row[1:]) for row in conn.execute(select(*cols).where(cols[0].in_(ids)))}
    return [found[i] for i in ids if i in found]


def search(conn: Connection, request: SearchRequest) -> SearchPage:
    """Answer a search: a page of hits, or a correction when nothing matches and one would."""
    text, kinds = parse_request_kinds(request.q, request.types)
    query = parse_query(text, kinds or ())
    if not query.words or kinds == ():
        return SearchPage(0)
    engine = engine_for(conn)
    total = engine.count(conn, query, ANY)
    if total == 0:
        corrected = spelling.suggest(conn, engine, query)
        if corrected is None:
            return SearchPage(0)
        new_q = spelling.rewrite(text, query, corrected)
        filters = "".join(
            f" more:pagemap:metatags-og_type:{k}" for k in split_kind_filter(request.q)[1]
        )
        return SearchPage(0, correction=new_q + filters)
    query = replace(query, people=find_people(conn, query))
    ids = window(conn, engine, query, total, request.size, request.offset)
    return SearchPage(total, load_hits(conn, ids))
