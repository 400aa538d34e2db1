"""Text folding and query parsing shared by both search engines.

Every text that reaches an index, and every query, goes through ``fold`` first: accents and case
are removed in Python, so SQLite's FTS5 and PostgreSQL's tsvector see the very same words and
rank the same way. ``fold("Saint-Rémy, 1889")`` is ``"saint remy 1889"``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Letters that Unicode does not decompose into a base letter and an accent.
_SPECIAL = str.maketrans(
    {
        "ø": "o",
        "Ø": "o",
        "æ": "ae",
        "Æ": "ae",
        "œ": "oe",
        "Œ": "oe",
        "ł": "l",
        "Ł": "l",
        "đ": "d",
        "Đ": "d",
        "ð": "d",
        "Ð": "d",
        "þ": "th",
        "Þ": "th",
        "\u0131": "i",  # dotless i
        "ß": "ss",
    }
)
# Combining marks (accents) left by NFKD decomposition, and runs of anything but letters/digits.
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NON_WORD = re.compile(r"[\W_]+")
# The reference's in-query kind filter: ``more:pagemap:metatags-og_type:artist``.
_KIND_FILTER = re.compile(r"(?i)\bmore:pagemap:metatags-og_type:([a-z_]+)")
# Longest query accepted and most words searched (longer queries are cut, not refused).
MAX_QUERY_CHARS = 500
MAX_WORDS = 12
# The last word of a query also matches as a prefix ("warh" finds Warhol) from this length on.
PREFIX_MIN_CHARS = 3


def fold(text: str | None) -> str:
    """Return ``text`` as lower-case unaccented words separated by single spaces."""
    if not text:
        return ""
    if not text.isascii():
        text = _COMBINING.sub("", unicodedata.normalize("NFKD", text.translate(_SPECIAL)))
    return _NON_WORD.sub(" ", text.casefold()).strip()


@dataclass(frozen=True)
class ParsedQuery:
    """A search query: its folded words, whether the last is a prefix, and a kind filter."""

    words: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    prefix: bool = False
    # Document ids of the artists the query names (``people``): first, and left out of the
    # engines' tiers.
    people: tuple[int, ...] = ()
    # The folded names of the artists whose own works form tiers of their own (``people``),
    # about ``works`` of them, and the query's other words when only a part of it names them.
    makers: tuple[str, ...] = ()
    subject: tuple[str, ...] = ()
    works: int = 0

    @property
    def key(self) -> str:
        """Return the folded query as a whole, compared with folded titles for exact matches."""
        return " ".join(self.words)

    def with_words(self, words: tuple[str, ...]) -> ParsedQuery:
        """Return the same query with other words (a spelling correction)."""
        return ParsedQuery(words, self.kinds, self.prefix and len(words[-1]) >= PREFIX_MIN_CHARS)


def split_kind_filter(q: str) -> tuple[str, list[str]]:
    """Return ``q`` without its ``more:pagemap:metatags-og_type:<kind>`` terms, and the kinds."""
    kinds = [m.lower() for m in _KIND_FILTER.findall(q)]
    return _KIND_FILTER.sub(" ", q).strip(), kinds


def parse_query(q: str, kinds: tuple[str, ...] = ()) -> ParsedQuery:
    """Parse the text of a query (already stripped of filter terms) into words."""
    words = tuple(fold(q[:MAX_QUERY_CHARS]).split()[:MAX_WORDS])
    prefix = bool(words) and len(words[-1]) >= PREFIX_MIN_CHARS
    return ParsedQuery(words, kinds, prefix)
