"""Search that knows who people are: a query that names an artist puts that artist first.

The rule. A query *names* an artist when its words, in any order and ignoring case, accents
and punctuation, are one of the artist's name keys:

- the surname (the last word of the name before any comma: "Gainsborough", "Millais" for
  "Sir John Everett Millais, Bt"), alone or with any of the other words of the name
  ("Thomas Gainsborough", "William Turner", "Turner Joseph");
- a known-as name in quotes, alone or with the surname ("Teenie", "Teenie Harris" for
  ``Charles "Teenie" Harris``), and an alias in brackets, as a name of its own ("Hans Arp"
  for "Jean Arp (Hans Arp)");
- the whole name.

A forename alone ("Thomas") names nobody: too many people share it. Names that are not a
person's ("British School 18th century", "unknown American", with digits or such words) have
only the whole name as a key. The artists a query names come first, most popular first, ahead
of everything else, even a work whose title is exactly the query; then the usual tiers follow
without them. So "Gainsborough" gives Thomas Gainsborough before "Portrait of Thomas
Gainsborough" by someone else, and "Teenie" gives the photographer before the photographs
titled with his name. A query with other words ("portrait of thomas gainsborough") names no
one and ranks as before.

Every key's words are words of the artist's title, so the named artists are also matches of
the query: the total count does not change.
"""

from __future__ import annotations

import itertools
import re
from operator import attrgetter
from typing import Any, cast

from sqlalchemy import Connection, Table, and_, bindparam, delete, select

from common.api.prepared import Prepared
from common.bulk import Row, chunks, upsert
from common.search.models import TITLE_KEY_CHARS, SearchDocument, SearchName
from common.search.plan import HIT_FIELDS
from common.search.text import ParsedQuery, fold

NAMES = cast(Table, SearchName.__table__)
_DOCUMENTS = cast(Table, SearchDocument.__table__)
# Most artists put first for one query: a key as common as "smith" names a few hundred.
MAX_PEOPLE = 50
# Names longer than this get only their surname and whole-name keys (2^words keys otherwise).
MAX_NAME_WORDS = 6
# Words that a person's name is not made of: such a name keeps only its whole-name key.
NOT_PERSON = frozenset(
    {"unknown", "anonymous", "school", "workshop", "circle", "follower", "manner", "studio"}
    | {"attributed", "after", "style", "company", "inc", "ltd", "and", "group", "collective"}
)
_QUOTED = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]+)[\"\u201c\u201d]|`([^`']+)'")
_BRACKETED = re.compile(r"\(([^)]*)\)?")


def _key(words: list[str] | tuple[str, ...] | set[str]) -> str:
    return " ".join(sorted(set(words)))[:TITLE_KEY_CHARS]


def name_keys(name: str) -> set[str]:
    """Return the keys of a name: the sorted folded words a query must be to name it."""
    whole = fold(name).split()
    if not whole:
        return set()
    keys = {_key(whole)}
    nicknames = [fold(a or b).split() for a, b in _QUOTED.findall(name)]
    aliases = _BRACKETED.findall(name)
    main = _BRACKETED.sub(" ", _QUOTED.sub(" ", name)).split(",")[0]
    words = fold(main).split()
    if not words or any(w in NOT_PERSON or not w.isalpha() for w in whole):
        return keys
    surname, others = words[-1], words[:-1]
    if len(words) > MAX_NAME_WORDS:
        others = []
    for size in range(len(others) + 1):
        keys.update(_key([*subset, surname]) for subset in itertools.combinations(others, size))
    for nickname in filter(None, nicknames):
        keys.update((_key(nickname), _key([*nickname, surname])))
    for alias in aliases:
        keys.update(name_keys(alias))
    return keys


def query_key(query: ParsedQuery) -> str:
    """Return the key a query is looked up by."""
    return _key(query.words)


# The artist documents a key names, with what a result shows of them, built once (run with
# the key bound). No ORDER BY/LIMIT in SQL: with them SQLite walks every artist document in id
# order instead of starting from the key; the few named artists are sorted in Python.
_NAMED = Prepared(
    select(*(_DOCUMENTS.c[name] for name in HIT_FIELDS))
    .select_from(NAMES)
    .join(
        _DOCUMENTS,
        and_(_DOCUMENTS.c.kind == "artist", _DOCUMENTS.c.resource_id == NAMES.c.resource_id),
    )
    .where(NAMES.c.key == bindparam("key"))
)


def find_people(conn: Connection, query: ParsedQuery) -> list[Any]:
    """Return the documents of the artists the query names, most popular first, each with
    the fields a result shows (``HIT_FIELDS``): their tier's hits, read with the lookup."""
    if not query.words or (query.kinds and "artist" not in query.kinds):
        return []
    found = sorted(_NAMED.rows(conn, {"key": query_key(query)}), key=attrgetter("id"))
    return found[:MAX_PEOPLE]


def write_names(conn: Connection, documents: list[Row]) -> int:
    """Make the name keys those of the artist documents given; return rows written or deleted."""
    wanted = {
        (key, str(row["resource_id"]))
        for row in documents
        if row["kind"] == "artist"
        for key in name_keys(str(row["title"]))
    }
    stored = {(k, r) for k, r in conn.execute(select(NAMES.c.key, NAMES.c.resource_id))}
    stale = [{"k": k, "r": r} for k, r in sorted(stored - wanted)]
    where = (NAMES.c.key == bindparam("k")) & (NAMES.c.resource_id == bindparam("r"))
    for part in chunks(stale):
        conn.execute(delete(NAMES).where(where), list(part))
    new = [{"key": k, "resource_id": r} for k, r in sorted(wanted - stored)]
    return len(stale) + upsert(conn, NAMES, new, key=("key", "resource_id"))
