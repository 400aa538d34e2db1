"""The SQLite engine: FTS5 over the documents' folded text, an FTS5 trigram index for spelling.

FTS5 returns matches in rowid (document id) order at no cost and evaluates AND, NOT, phrases and
prefixes on its posting lists, so each tier is one MATCH with ``ORDER BY rowid LIMIT/OFFSET``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, Row, text

from common.api.prepared import Prepared
from common.search.models import TITLE_KEY_CHARS
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
from common.search.text import ParsedQuery

_EXACT_WHERE = "title_key = :tkey AND title_terms = :key"
# A title starting with the query's words, maybe after an article: two ranges of the title key
# (its words are letters and digits, so "k" up to "k!" holds "k" and every key that starts
# "k ", and no "kx"). Read on the B-tree of the title key: FTS5's first-token queries (^"k")
# read the positions of every phrase match, 1.5 ms for "river thames" against 0.05 here.
_STARTS_WHERE = "((title_key >= :s0 AND title_key < :e0) OR (title_key >= :s1 AND title_key < :e1))"
_BTREE = {EXACT: _EXACT_WHERE, STARTS: _STARTS_WHERE}
# "{people}" is where the artists the query names are left out (``_stmt``).
_COUNT = (
    "SELECT count(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH :m{people} LIMIT :cap)"
)
_FETCH = (
    "SELECT rowid FROM search_fts WHERE search_fts MATCH :m{people} "
    "ORDER BY rowid LIMIT :n OFFSET :o"
)
_SIMILAR = text(
    "SELECT w.word, w.documents FROM search_words_trigram t "
    "JOIN search_words w ON w.id = t.rowid "
    "WHERE search_words_trigram MATCH :m ORDER BY t.rank LIMIT :n"
)
_SYNC = (
    "INSERT INTO search_fts(search_fts) VALUES ('rebuild')",
    "DELETE FROM search_words",
    # A word's document count: the larger of its title and body counts (fts5vocab counts per
    # column); words with digits are never suggested.
    """INSERT INTO search_words (id, word, documents)
       SELECT row_number() OVER (ORDER BY term), term, max(doc) FROM search_fts_vocab
       WHERE col IN ('title_terms', 'body_terms') AND length(term) BETWEEN 2 AND 100
         AND term NOT GLOB '*[0-9]*'
       GROUP BY term""",
    "INSERT INTO search_words_trigram (search_words_trigram) VALUES ('delete-all')",
    """INSERT INTO search_words_trigram (rowid, word)
       SELECT id, ' ' || word || ' ' FROM search_words""",
)


def _term(word: str, prefix: bool = False) -> str:
    # Folded words hold letters and digits only, so quoting is enough to make them literal.
    return f'"{word}"' + ("*" if prefix else "")


def _terms(query: ParsedQuery) -> list[str]:
    last = len(query.words) - 1
    return [_term(w, query.prefix and i == last) for i, w in enumerate(query.words)]


def _with_kinds(expr: str, query: ParsedQuery) -> str:
    if not query.kinds:
        return expr
    kinds = " OR ".join(_term(k) for k in query.kinds)
    return f"(kind : ({kinds})) AND ({expr})"


def expressions(query: ParsedQuery) -> dict[int, str]:
    """Return the FTS5 MATCH expression of each tier's set (without the kind filter)."""
    phrase = f'"{" ".join(query.words)}"'
    conj = " AND ".join(_terms(query))
    out = {
        PHRASE: f"title_terms : {phrase}",
        PREFIX: f"title_terms : {phrase}" + ("*" if query.prefix else ""),
        TITLE: f"title_terms : ({conj})",
        ANY: f"{{title_terms body_terms}} : ({conj})",
    }
    if query.makers:
        # An artwork listing one of the makers' whole names among its makers (its body).
        names = " OR ".join(f'"{name}"' for name in query.makers)
        works = f'kind : "artwork" AND body_terms : ({names})'
        subject = " AND ".join(_term(w) for w in query.subject)
        out[WORKS] = f"{works} AND title_terms : ({subject})" if subject else works
        if subject:
            out[WORKS_ANY] = f"{works} AND {{title_terms body_terms}} : ({subject})"
    return out


def _union(exprs: dict[int, str], tiers: tuple[int, ...]) -> str:
    """Return the MATCH expression of the union of some tiers' sets."""
    return " OR ".join(f"({exprs[t]})" for t in tiers)


def _people_left_out(template: str, query: ParsedQuery, column: str = "rowid") -> str:
    """Return the SQL of a constant template, leaving out ``query.people`` (its values and the
    kinds' travel with the parameters: ``with_lists``)."""
    people = f" AND {column} NOT IN :people" if query.people else ""
    return template.format(people=people)


def _stmt(template: str, query: ParsedQuery, column: str = "rowid") -> Prepared:
    """Return the statement of :func:`_people_left_out`, built once."""
    kinds = bool(query.kinds) and ":kinds" in template
    return statement(_people_left_out(template, query, column), kinds, bool(query.people))


def _btree_params(query: ParsedQuery) -> dict[str, object]:
    """Return the values of the B-tree tiers' conditions (``_BTREE``)."""
    params: dict[str, object] = {"tkey": title_key(query), "key": query.key}
    for i, start in enumerate(starts_keys(query)):
        params.update({f"s{i}": start[:TITLE_KEY_CHARS], f"e{i}": f"{start}!"})
    return params


def _exact_params(query: ParsedQuery) -> tuple[str, dict[str, object]]:
    params: dict[str, object] = {"tkey": title_key(query), "key": query.key}
    if not query.kinds:
        return _EXACT_WHERE, params
    params["kinds"] = list(query.kinds)
    return f"{_EXACT_WHERE} AND kind IN :kinds", params


class SqliteEngine(SearchEngine):
    """Search through FTS5."""

    # A sync rebuilds the FTS5 index from the documents, then the vocabulary and its trigrams.
    SYNC = _SYNC

    def count_sql(self, query: ParsedQuery, tier: int) -> tuple[str, dict[str, object]]:
        """Return the statement of :meth:`count` (``:cap`` unbound) and its values: a B-tree
        count, or an FTS5 count of postings, reading ``cap`` matches at most."""
        tiers = cover(query, tier)
        if tiers == (EXACT,):
            where, params = _exact_params(query)
            found = f"SELECT 1 FROM search_documents WHERE {where}{{people}} LIMIT :cap"  # noqa: S608  # nosec B608 # constant fragments, bound values
            template = f"SELECT count(*) FROM ({found})"  # noqa: S608  # nosec B608 # as above
            return _people_left_out(template, query, "id"), with_lists(query, params)
        if any(t in _BTREE for t in tiers):  # a title tier after the works: ``count_own``
            raise ValueError(f"tier {tier} is counted by its own matches")
        match = _with_kinds(_union(expressions(query), tiers), query)
        return _people_left_out(_COUNT, query), with_lists(query, {"m": match})

    def count_own(self, conn: Connection, query: ParsedQuery, tier: int, cap: int) -> int:
        """Return the number of the tier's own matches, up to ``cap``."""
        sql, params = self._page(query, tier, cap, 0)
        counted = f"SELECT count(*) FROM ({sql})"  # noqa: S608  # nosec B608 # constant fragments, bound values
        return int(_stmt(counted, query).scalar(conn, with_lists(query, params)))

    def exists(self, conn: Connection, query: ParsedQuery) -> bool:
        """Tell whether anything matches, reading one posting."""
        match = _with_kinds(expressions(query)[ANY], query)
        return bool(
            _stmt(_FETCH, query).rows(conn, with_lists(query, {"m": match, "n": 1, "o": 0}))
        )

    def fetch(self, conn: Connection, query: ParsedQuery, page: TierPage) -> list[Row[Any]]:
        """Return the tier's own matches in id order with their fields (FTS5 needs no plan
        choice)."""
        sql, params = self._page(query, page.tier, page.limit, page.offset)
        return _stmt(with_fields(sql), query).rows(conn, with_lists(query, params))

    def _page(
        self, query: ParsedQuery, tier: int, limit: int, offset: int
    ) -> tuple[str, dict[str, object]]:
        """Return a SELECT of the ids of the tier's own matches in id order, and its values:
        its set less the sets of the tiers before it (``before``). The exact and starting
        titles are read on the title key's B-tree, the others through FTS5."""
        params: dict[str, object] = {"n": limit, "o": offset, **_btree_params(query)}
        exprs = expressions(query)
        earlier = before(query, tier)
        fts_earlier = tuple(t for t in earlier if t not in _BTREE)
        btree_earlier = [_BTREE[t] for t in earlier if t in _BTREE]
        if tier in _BTREE:
            where = _BTREE[tier] + "".join(f" AND NOT ({b})" for b in btree_earlier)
            if query.kinds:
                where += " AND kind IN :kinds"
            if fts_earlier:  # the works before it: tested row by row on the few title matches
                params["x"] = _union(exprs, fts_earlier)
                where += (
                    " AND NOT EXISTS (SELECT 1 FROM search_fts WHERE search_fts MATCH :x"
                    " AND search_fts.rowid = search_documents.id)"
                )
            people = " AND id NOT IN :people" if query.people else ""
            sql = f"SELECT id FROM search_documents WHERE {where}{people} ORDER BY id"  # noqa: S608  # nosec B608 # constant fragments, bound values
            return f"{sql} LIMIT :n OFFSET :o", params
        match = _with_kinds(exprs[tier], query)
        if fts_earlier:
            match = f"({match}) NOT ({_union(exprs, fts_earlier)})"
        params["m"] = match
        where = "search_fts MATCH :m"
        for condition in btree_earlier:
            where += f" AND rowid NOT IN (SELECT id FROM search_documents WHERE {condition})"  # noqa: S608  # nosec B608 # constant fragments
        people = " AND rowid NOT IN :people" if query.people else ""
        sql = f"SELECT rowid AS id FROM search_fts WHERE {where}{people} ORDER BY rowid"  # noqa: S608  # nosec B608 # constant fragments, bound values
        return f"{sql} LIMIT :n OFFSET :o", params

    def similar_words(self, conn: Connection, word: str, limit: int) -> list[tuple[str, int]]:
        """Return the words sharing the most trigrams with ``word`` (padded like pg_trgm)."""
        padded = f" {word} "
        grams = {padded[i : i + 3] for i in range(len(padded) - 2)}
        if not grams:
            return []
        match = " OR ".join(f'"{g}"' for g in sorted(grams))
        rows = conn.execute(_SIMILAR, {"m": match, "n": limit})
        return [(str(w), int(d)) for w, d in rows]

    def compact(self, engine: Engine) -> None:
        """Do nothing: the rebuild in ``sync`` leaves the FTS5 index compact."""
