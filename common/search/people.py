"""Search that knows who people are: a query that names an artist puts that artist first.

The rule. A query *names* an artist when its words, in any order and ignoring case, accents
and punctuation, are one of the artist's name keys:

- the surname (the last word of the name before any comma: "Gainsborough", "Millais" for
  "Sir John Everett Millais, Bt"), alone or with any of the other words of the name
  ("Thomas Gainsborough", "William Turner", "Turner Joseph");
- a known-as name in quotes, alone or with the surname ("Teenie", "Teenie Harris" for
  ``Charles "Teenie" Harris``), and an alias in brackets, as a name of its own ("Hans Arp"
  for "Jean Arp (Hans Arp)");
- the whole name;
- any of these with forenames given as initials, as museums and people write them: "J.M.W.
  Turner", "J. M. W. Turner", "JMW Turner", "Turner, J.M.W.", "D.G. Rossetti", "W. Turner".

Honours after the name ("Henry Moore OM, CH", "Millais, Bt") are not its surname. A forename
alone ("Thomas") names nobody: too many people share it. Names that are not a person's
("British School 18th century", "unknown American", with digits or such words) have only the
whole name as a key.

The artists a query names come first, most popular first, ahead of everything else, even a
work whose title is exactly the query. So "Gainsborough" gives Thomas Gainsborough before
"Portrait of Thomas Gainsborough" by someone else, and "Teenie" gives the photographer before
the photographs titled with his name.

The artists a query names lead when they are about as popular as the most popular of them
(``LEAD_GAP``: within about ten times fewer works); their own works follow them, before the
other artists of the name and before any work whose title merely mentions the name ("warhol"
gives Andy Warhol, then his works, then the posters titled "Beuys by Warhol"). A work is the
artist's own when its document lists the artist's whole name among its makers.

A query whose first or last words name an artist and whose other words do not ("turner
venice", "monet waterloo bridge") asks for the artist's works on that subject: those works
come first after the titles that are the whole query (``Named.subject``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, delete, select, text

from common.api.prepared import Prepared
from common.bulk import Row, chunks, upsert
from common.search.models import TITLE_KEY_CHARS, SearchName
from common.search.plan import HIT_FIELDS
from common.search.text import ParsedQuery, fold

NAMES = cast(Table, SearchName.__table__)
# Most artists put first for one query: a key as common as "smith" names a few hundred.
MAX_PEOPLE = 50
# Names longer than this get only their surname and whole-name keys (2^words keys otherwise).
MAX_NAME_WORDS = 6
# Words that a person's name is not made of: such a name keeps only its whole-name key.
NOT_PERSON = frozenset(
    {"unknown", "anonymous", "school", "workshop", "circle", "follower", "manner", "studio"}
    | {"attributed", "after", "style", "company", "inc", "ltd", "and", "group", "collective"}
)
# Honours after a name: not its surname ("Henry Moore OM, CH", "John Smith Jr").
SUFFIXES = frozenset(
    {"om", "ch", "ra", "ara", "pra", "cbe", "obe", "mbe", "kbe", "dbe", "bt", "rba", "rsa"}
    | {"frs", "cvo", "kcvo", "jr", "jnr", "sr", "snr"}
)
# Titles before a name: optional words of it, never given as an initial.
TITLES = frozenset({"sir", "dame", "lord", "lady", "dr", "rev", "revd", "mrs", "mr", "miss"})
# Forenames given in full, as initials or left out: 3^n keys, so only for the first few.
MAX_INITIALLED = 4
# A named artist leads when this close to the most popular one's popularity (0.15 is ten
# times fewer works: ``documents.artists``).
LEAD_GAP = 0.15
# Most artists whose works form a tier of their own.
MAX_LEADS = 5
# Longest name part of a query with a subject ("turner venice"), in words.
MAX_NAME_PART = 4
# Words that alone make no subject ("the turner", "turner and").
STOPWORDS = frozenset(
    {"the", "a", "an", "of", "and", "by", "in", "on", "at", "to", "for", "with", "from", "de"}
    | {"la", "le", "les", "du", "van", "von", "der", "den", "di", "da", "y", "et", "or"}
)
_QUOTED = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]+)[\"\u201c\u201d]|`([^`']+)'")
_BRACKETED = re.compile(r"\(([^)]*)\)?")


def _key(words: list[str] | tuple[str, ...] | set[str]) -> str:
    return " ".join(sorted(set(words)))[:TITLE_KEY_CHARS]


def _forename_forms(word: str) -> tuple[str | None, ...]:
    """Return how a forename may be written in a key: in full, as its initial, or left out."""
    if word in TITLES or len(word) == 1:
        return (word, None)
    return (word, word[0], None)


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
    while len(words) > 1 and words[-1] in SUFFIXES:
        words.pop()
    if not words or any(w in NOT_PERSON or not w.isalpha() for w in whole):
        return keys
    surname, others = words[-1], words[:-1]
    if len(words) > MAX_NAME_WORDS:
        others = []
    for size in range(len(others) + 1):
        keys.update(_key([*subset, surname]) for subset in itertools.combinations(others, size))
    forenames = [w for w in others if w not in TITLES]
    if len(others) <= MAX_INITIALLED:
        for forms in itertools.product(*map(_forename_forms, others)):
            keys.add(_key([*filter(None, forms), surname]))
    for size in range(2, len(forenames) + 1):  # run together: "JMW Turner", "DG Rossetti"
        for subset in itertools.combinations(forenames, size):
            keys.add(_key(["".join(w[0] for w in subset), surname]))
    for nickname in filter(None, nicknames):
        keys.update((_key(nickname), _key([*nickname, surname])))
    for alias in aliases:
        keys.update(name_keys(alias))
    return keys


def query_key(query: ParsedQuery) -> str:
    """Return the key a query is looked up by."""
    return _key(query.words)


# The artist documents some keys name, with what a result shows of them, their folded name,
# popularity and number of works, built once (run with the keys bound). Written with CROSS
# JOIN, which SQLite reads in the order written: from the keys (a few index lookups), where
# its planner otherwise starts from every artist document; PostgreSQL plans it as a join. No
# ORDER BY/LIMIT in SQL for the same reason: the few named artists are sorted in Python.
_NAMED = Prepared(
    text(
        f"SELECT {', '.join(f'd.{name}' for name in HIT_FIELDS)}, d.title_terms, d.popularity, "  # noqa: S608  # nosec B608 # constant fragments
        "n.key, a.artworks_count FROM search_names AS n CROSS JOIN search_documents AS d "
        "LEFT OUTER JOIN artists AS a ON a.id = n.resource_id "
        "WHERE n.key IN :keys AND d.kind = 'artist' AND d.resource_id = n.resource_id"
    ).bindparams(bindparam("keys", expanding=True))
)


@dataclass(frozen=True)
class Named:
    """The artists a query names and what follows from it.

    ``leads`` come first (unless the query has a ``subject``), then the works of ``makers``
    (the leads' folded names; ``works`` of them at most), then the other ``namesakes``.
    ``subject``: the query's words besides the name, when only a part of it names the leads.
    """

    leads: tuple[Any, ...] = ()
    namesakes: tuple[Any, ...] = ()
    makers: tuple[str, ...] = ()
    subject: tuple[str, ...] = ()
    works: int = 0

    @property
    def shown(self) -> tuple[Any, ...]:
        """Return the artist documents shown as results of their own, in order."""
        return () if self.subject else self.leads + self.namesakes


def split_keys(words: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Return the keys of a query's name parts (its first or last words) with the subject the
    other words make: a name of at most ``MAX_NAME_PART`` words and a subject with a word of
    three letters or more that is no stopword."""
    out: dict[str, tuple[str, ...]] = {}
    for cut in range(1, len(words)):
        for name, subject in ((words[:cut], words[cut:]), (words[cut:], words[:cut])):
            if len(name) > MAX_NAME_PART:
                continue
            if any(len(w) >= 3 and w not in STOPWORDS for w in subject):
                out.setdefault(_key(name), subject)
    return out


def split_leads(found: list[Any]) -> tuple[list[Any], list[Any]]:
    """Split named artists (most popular first) into the leads and the others."""
    top = float(found[0].popularity)
    leads = [r for r in found if float(r.popularity) >= top - LEAD_GAP][:MAX_LEADS]
    return leads, [r for r in found if r not in leads]


def find_named(conn: Connection, query: ParsedQuery) -> Named:
    """Return the artists the query names, or whose works on a subject it asks for, in one
    statement: the whole query's key and the keys of its name parts."""
    if not query.words or (query.kinds and not {"artist", "artwork"} & set(query.kinds)):
        return Named()
    whole = query_key(query)
    parts = split_keys(query.words) if len(query.words) > 1 else {}
    rows = _NAMED.rows(conn, {"keys": [whole, *parts]})
    by_key: dict[str, dict[int, Any]] = {}
    for row in rows:
        by_key.setdefault(str(row.key), {})[int(row.id)] = row
    if whole in by_key:
        found = sorted(by_key[whole].values(), key=attrgetter("id"))[:MAX_PEOPLE]
        leads, namesakes = split_leads(found)
        makers = leads if not query.kinds or "artwork" in query.kinds else []
        if query.kinds and "artist" not in query.kinds:  # their works only
            leads, namesakes = [], []
        return Named(
            tuple(leads),
            tuple(namesakes),
            tuple(str(r.title_terms) for r in makers),
            (),
            sum(int(r.artworks_count or 0) for r in makers),
        )
    # The part naming the most words, then the most popular artist.
    best = min(
        (key for key in parts if key in by_key),
        key=lambda k: (-len(k.split()), min(by_key[k])),
        default=None,
    )
    if best is None or (query.kinds and "artwork" not in query.kinds):
        return Named()
    leads, _ = split_leads(sorted(by_key[best].values(), key=attrgetter("id")))
    return Named(
        tuple(leads),
        (),
        tuple(str(r.title_terms) for r in leads),
        parts[best],
        sum(int(r.artworks_count or 0) for r in leads),
    )


def find_people(conn: Connection, query: ParsedQuery) -> list[Any]:
    """Return the documents of the artists the query names, most popular first, each with
    the fields a result shows (``HIT_FIELDS``)."""
    return list(find_named(conn, query).shown)


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
