"""The PostgreSQL engine: generated tsvector columns with GIN indexes, pg_trgm for spelling.

GIN finds the matching rows but cannot return them in id order. A tier's page is therefore read
one of two ways: when its matches are likely dense among the most popular documents, a bounded
walk of the primary key (at most ``WALK_BUDGET`` rows in id order, then the page is complete or
the walk gives up); otherwise, or when the walk gives up, a bitmap scan of the tier's candidates
and a top-N sort, whose cost is bounded by the number of matches. The choice is written into
the statement (the walk's bounded subquery; ``ORDER BY id + 0``, which no index gives, for the
bitmap), not into planner settings: the catalog's reads run on autocommit connections, where
``SET LOCAL`` has no effect. A tier is counted on its own index, and only when a deep page
needs it.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Connection, Engine, Row, text

from common.api.prepared import Prepared
from common.search.plan import (
    ANY,
    EXACT,
    PHRASE,
    PREFIX,
    STARTS,
    TITLE,
    WORKS,
    WORKS_ANY,
    SearchEngine,
    TierPage,
    before,
    cover,
    starts_keys,
    statement,
    title_key,
    with_fields,
    with_lists,
)
from common.search.schema import TS_CONFIG
from common.search.text import ParsedQuery

# Rows a walk may read before it gives up; it is tried when it should need under half of them.
WALK_BUDGET = 4000
# How long the table's size (the planner's estimate) is reused before it is read again.
SIZE_TTL = 60.0
_size: list[float] = [0.0, -SIZE_TTL]  # the size, and when it was read (monotonic)

_Q = f"to_tsquery('{TS_CONFIG}'::regconfig, :%s)"
_MATCH = {
    EXACT: "title_key = :tkey AND title_terms = :key",
    # The phrase's titles, their beginning read from the short title key.
    STARTS: f"title_tsv @@ {_Q % 'phrase'} AND (title_key || ' ' LIKE :starts "
    "OR title_key || ' ' LIKE :starts_article)",
    PHRASE: f"title_tsv @@ {_Q % 'phrase'}",
    PREFIX: f"title_tsv @@ {_Q % 'prefixed'}",
    TITLE: f"title_tsv @@ {_Q % 'conj'}",
    ANY: f"tsv @@ {_Q % 'conj'}",
}
# The most popular documents, which a walk reads in id order.
_HEAD = (
    "(SELECT id, kind, title_key, title_terms, body_terms, title_tsv, tsv FROM search_documents "
    "ORDER BY id LIMIT :scan) AS head"
)


def _matches(query: ParsedQuery) -> dict[int, str]:
    """Return the condition of each tier's set. A work of the named artists (``makers``) is
    an artwork whose body holds one of their whole names: the GIN index finds the documents
    with the name's words, the body's text tells which list it among their makers (the
    tsvector has no positions to tell a phrase)."""
    if not query.makers:
        return _MATCH
    likes = " OR ".join(
        f"' ' || body_terms || ' ' LIKE :maker{i}" for i in range(len(query.makers))
    )
    works = f"kind = 'artwork' AND tsv @@ {_Q % 'makers'} AND ({likes})"
    out = dict(_MATCH)
    if query.subject:
        out[WORKS] = f"{works} AND title_tsv @@ {_Q % 'subject'}"
        out[WORKS_ANY] = f"{works} AND tsv @@ {_Q % 'subject'}"
    else:
        out[WORKS] = works
    return out


def _own(query: ParsedQuery, tier: int) -> str:
    """Return the condition of a tier's own rows: its set less the sets of the tiers before
    it. The short title key is tested first so that long titles are not read (detoasted) for
    the exact-match test."""
    conditions = _matches(query)
    return " AND NOT ".join(f"({conditions[t]})" for t in (tier, *before(query, tier)))


_SIZE = text("SELECT greatest(reltuples, 1) FROM pg_class WHERE oid = 'search_documents'::regclass")
_SIMILAR = text(
    "SELECT word, documents FROM search_words WHERE word % :w "
    "ORDER BY similarity(word, :w) DESC, documents DESC, word LIMIT :n"
)
_SYNC = (
    "DELETE FROM search_words",
    # ts_stat counts the documents holding each word; words with digits are never suggested.
    """INSERT INTO search_words (id, word, documents)
       SELECT row_number() OVER (ORDER BY word COLLATE "C"), word, ndoc
       FROM ts_stat('SELECT tsv FROM search_documents')
       WHERE length(word) BETWEEN 2 AND 100 AND word !~ '[0-9]'""",
    # New rows wait in the GIN indexes' pending lists, which every query reads: merge them now.
    """SELECT gin_clean_pending_list(i::regclass) FROM unnest(ARRAY[
       'ix_search_documents_tsv', 'ix_search_documents_title_tsv', 'ix_search_words_word_trgm'
       ]) AS i""",
    "ANALYZE search_documents",
    "ANALYZE search_words",
    "ANALYZE search_names",
)


def _documents(conn: Connection) -> float:
    """Return the number of documents, as the planner estimates it (read once a minute)."""
    now = time.monotonic()
    if now - _size[1] >= SIZE_TTL:
        _size[:] = [float(conn.execute(_SIZE).scalar_one()), now]
    return _size[0]


def _lexeme(word: str, prefix: bool = False) -> str:
    # Folded words hold letters and digits only, so quoting is enough to make them literal.
    return f"'{word}'" + (":*" if prefix else "")


def _params(query: ParsedQuery) -> dict[str, object]:
    last = len(query.words) - 1
    lexemes = [_lexeme(w, query.prefix and i == last) for i, w in enumerate(query.words)]
    params: dict[str, object] = {
        "tkey": title_key(query),
        "key": query.key,
        "phrase": " <-> ".join(_lexeme(w) for w in query.words),
        "prefixed": " <-> ".join(lexemes),
        "conj": " & ".join(lexemes),
    }
    plain, article = starts_keys(query)
    params.update(starts=f"{plain} %", starts_article=f"{article} %")
    if query.makers:
        names = (" & ".join(_lexeme(w) for w in name.split()) for name in query.makers)
        params["makers"] = " | ".join(f"({name})" for name in names)
        params.update({f"maker{i}": f"% {name} %" for i, name in enumerate(query.makers)})
        if query.subject:
            params["subject"] = " & ".join(_lexeme(w) for w in query.subject)
    return with_lists(query, params)


def _sql(
    what: str,
    source: str,
    where: str,
    query: ParsedQuery,
    tail: str = "",
    page: bool = False,
    capped_count: bool = False,
) -> str:
    """Return ``SELECT what FROM source WHERE where`` with the kind filter and a tail, leaving
    out the artists the query names (``query.people``); a ``page`` of ids comes with its
    fields (``with_fields``)."""
    kinds = " AND kind IN :kinds" if query.kinds else ""
    people = " AND id NOT IN :people" if query.people else ""
    sql = f"SELECT {what} FROM {source} WHERE {where}{kinds}{people} {tail}"  # noqa: S608  # nosec B608 # constant fragments, bound values
    if capped_count:  # the matches up to :cap, counted
        sql = f"SELECT count(*) FROM ({sql} LIMIT :cap) AS capped"  # noqa: S608  # nosec B608 # constant fragments, bound values
    return with_fields(sql) if page else sql


def _select(
    what: str, source: str, where: str, query: ParsedQuery, tail: str = "", page: bool = False
) -> Prepared:
    """Return the statement of :func:`_sql`, built once."""
    sql = _sql(what, source, where, query, tail, page)
    return statement(sql, bool(query.kinds), bool(query.people))


class PostgresEngine(SearchEngine):
    """Search through tsvector columns and GIN indexes."""

    # A sync refreshes the vocabulary and the planner's statistics (the GIN indexes keep up
    # alone).
    SYNC = _SYNC

    def count_sql(self, query: ParsedQuery, tier: int) -> tuple[str, dict[str, object]]:
        """Return the statement of :meth:`count` (``:cap`` unbound) and its values: a count
        on the tier's own index (B-tree or GIN), which reads the heap for ``cap`` matches at
        most, not for every match."""
        conditions = _matches(query)
        union = "(" + " OR ".join(f"({conditions[t]})" for t in cover(query, tier)) + ")"
        sql = _sql("1", "search_documents", union, query, capped_count=True)
        return sql, _params(query)

    def count_own(self, conn: Connection, query: ParsedQuery, tier: int, cap: int) -> int:
        """Return the number of a tier's own matches, up to ``cap``."""
        sql = _sql("1", "search_documents", _own(query, tier), query, capped_count=True)
        stmt = statement(sql, bool(query.kinds), bool(query.people))
        return int(stmt.scalar(conn, {**_params(query), "cap": cap}))

    def exists(self, conn: Connection, query: ParsedQuery) -> bool:
        """Tell whether anything matches, stopping at the first match."""
        stmt = _select("1", "search_documents", _MATCH[ANY], query, "LIMIT 1")
        return bool(stmt.rows(conn, _params(query)))

    def fetch(self, conn: Connection, query: ParsedQuery, page: TierPage) -> list[Row[Any]]:
        """Return the tier's own matches in id order with their fields: a bounded walk of the
        primary key where they should be dense, else (or when the walk gives up) a bitmap."""
        tier, limit, offset, estimate = page
        params = {**_params(query), "n": limit, "o": offset, "scan": WALK_BUDGET}
        limits = "LIMIT :n OFFSET :o"
        if tier != EXACT and estimate > WALK_BUDGET / 2:
            documents = _documents(conn)
            # Rows a walk should read if the tier's matches were spread evenly over the ids.
            if (offset + limit) * documents / estimate < WALK_BUDGET / 2:
                own = _own(query, tier)
                walk = _select("id", _HEAD, own, query, f"ORDER BY id {limits}", page=True)
                found = walk.rows(conn, params)
                if len(found) == limit or documents <= WALK_BUDGET:
                    return found
        # ``id + 0`` is the same order, but no index gives it: the planner reads the tier's
        # GIN candidates and sorts the top N, it cannot walk the whole primary key through
        # sparse matches. The exact tier's B-tree (title_key, id) gives the order itself.
        order = "id" if tier == EXACT else "id + 0"
        tail = f"ORDER BY {order} {limits}"
        stmt = _select("id", "search_documents", _own(query, tier), query, tail, page=True)
        return stmt.rows(conn, params)

    def similar_words(self, conn: Connection, word: str, limit: int) -> list[tuple[str, int]]:
        """Return the words most similar to ``word`` by trigrams (pg_trgm)."""
        rows = conn.execute(_SIMILAR, {"w": word, "n": limit})
        return [(str(w), int(d)) for w, d in rows]

    def compact(self, engine: Engine) -> None:
        """VACUUM the documents: dead rows otherwise stay in every GIN match until autovacuum."""
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM (ANALYZE) search_documents")
