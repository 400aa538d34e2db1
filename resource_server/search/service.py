"""The query interface: one page of ranked results, or a spelling correction, for a query.

Ranking (see ``plan``): the artists the query names (``people``), then exact title match, then
phrase (and prefix) matches in the title, then the other title matches, then matches anywhere in
the document; popularity orders each tier.
Only the tiers the requested window overlaps are read, and a page's hits come with their fields
from one statement, whatever the number of hits or tiers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlalchemy import Connection, bindparam, text

from common.search import spelling
from common.search.documents import KINDS
from common.search.people import find_people
from common.search.plan import ANY, PERSON, SearchEngine, tiers_for
from common.search.registry import engine_for
from common.search.text import ParsedQuery, parse_query, split_kind_filter
from resource_server.errors import ParamError

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


# One part of a page: ``limit`` of a tier's own matches from ``offset``, and an upper bound of
# their number (for the engine's choice of plan).
Segment = tuple[int, int, int, int]
_HIT_COLUMNS = "d.kind, d.resource_id, d.title, d.description, d.thumbnail, d.permalink"


def window(
    conn: Connection, engine: SearchEngine, query: ParsedQuery, total: int, size: int, offset: int
) -> list[Segment]:
    """Return the tiers that results ``offset`` to ``offset + size`` may come from, each with the
    window into it: ``(tier, limit, offset, estimate)``.

    A tier is counted only when the window starts past it (a deep page); from the tier the
    window starts in, every later tier may be needed, as the tiers' sizes are not counted.
    """
    skip = offset
    before = 0  # matches in the tiers already passed
    people = len(query.people)  # in every tier's set, counted apart from the engine's
    segments: list[Segment] = []
    for tier in tiers_for(query):
        whole = total if tier == ANY else people if tier == PERSON else None
        if skip and whole is None:
            whole = engine.count(conn, query, tier) + people
        if whole is not None and skip >= whole - before:
            skip -= whole - before
            before = whole
            continue
        estimate = total - before if whole is None else whole - before
        segments.append((tier, size, skip, estimate))
        if whole is not None:
            before = whole
        skip = 0
    return segments


def read_hits(
    conn: Connection, engine: SearchEngine, query: ParsedQuery, segments: list[Segment], size: int
) -> list[Hit]:
    """Read the page in one statement: every segment's ids, tier by tier, with their fields."""
    if not segments:
        return []
    parts: list[str] = []
    params: dict[str, object] = {"size": size}
    for rank, (tier, limit, skip, estimate) in enumerate(segments):
        tag = str(rank)
        if tier == PERSON:
            sql = f"SELECT id FROM search_documents WHERE id IN :people ORDER BY id LIMIT :n{tag} OFFSET :o{tag}"  # noqa: S608, E501  # nosec B608 # constant fragments, bound values
            part: dict[str, object] = {f"n{tag}": limit, f"o{tag}": skip}
        else:
            sql, part = engine.page(conn, query, tier, limit, skip, estimate, tag)
        params.update(part)
        parts.append(f"SELECT {rank} AS tier, id FROM ({sql}) AS t{tag}")  # noqa: S608  # nosec B608 # constant fragments, bound values
    stmt = text(
        f"SELECT d.id, {_HIT_COLUMNS} FROM ({' UNION ALL '.join(parts)}) AS c "  # noqa: S608  # nosec B608 # constant fragments, bound values
        "JOIN search_documents d ON d.id = c.id ORDER BY c.tier, c.id LIMIT :size"
    )
    if query.people:
        stmt = stmt.bindparams(bindparam("people", list(query.people), expanding=True))
    if query.kinds and "kinds" in params:
        stmt = stmt.bindparams(bindparam("kinds", expanding=True))
    return [Hit(*row[1:]) for row in conn.execute(stmt, params)]


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
    segments = window(conn, engine, query, total, request.size, request.offset)
    return SearchPage(total, read_hits(conn, engine, query, segments, request.size))
