"""Spelling correction from the indexed vocabulary, for queries that find nothing.

Each word of the query that the index does not know is replaced by a known word that looks like
it: candidates are the known words one edit away (looked up directly: trigrams miss swapped
letters) and the words sharing the most trigrams (FTS5 trigrams on SQLite, pg_trgm on
PostgreSQL). They are ranked here, the same way on both engines: fewest edits first, then the
word used by more documents. Combinations are tried best first until one finds results.

Anyone may send a query of unknown words, so the work one correction does is bounded: a word
longer than ``MAX_WORD_CHARS`` is not corrected, nor is a query with more than
``MAX_CORRECTED_WORDS`` unknown words (both settled by one lookup of the query's words, before
any candidate is looked for), and the one-edit variants looked up are at most
``MAX_VARIANTS_PER_WORD`` for a word and ``MAX_VARIANTS_PER_QUERY`` for the query. Without
these a 500-letter word built some 26,000 variants into one statement. Misspelt words are
short and few: the bounds keep every correction of a real name or title word.
``artcat_search_spelling_variants_total`` counts the variants looked up, and
``artcat_search_spelling_skipped_total`` the queries left uncorrected by the bounds.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from sqlalchemy import Connection, bindparam, select, text

from common.api.prepared import Prepared
from common.metrics import counter
from common.search.models import SearchWord
from common.search.plan import SearchEngine
from common.search.text import ParsedQuery, fold

CANDIDATES = 24
CHOICES_PER_WORD = 3
# Corrected queries tried (each one a count) before giving up.
ATTEMPTS = 6
_WORD_RUN = re.compile(r"[^\W_]+")
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
# The bounds of one query's correction (see the module). A word of MAX_WORD_CHARS ASCII
# letters has at most 1,297 one-edit variants, all within MAX_VARIANTS_PER_WORD; a word of
# other letters may have more, and those past the bound (the last substitutions and
# insertions) are not looked up.
MAX_WORD_CHARS = 24
MAX_CORRECTED_WORDS = 3
MAX_VARIANTS_PER_WORD = 1_500
MAX_VARIANTS_PER_QUERY = 3_000
VARIANTS = counter(
    "artcat_search_spelling_variants",
    "One-edit variants of unknown query words looked up by spelling correction.",
)
SKIPPED = counter(
    "artcat_search_spelling_skipped",
    "Queries left uncorrected because a word is too long or too many words are unknown.",
    ("reason",),
)


def edit_distance(a: str, b: str) -> int:
    """Return the optimal string alignment distance (insert, delete, substitute, transpose)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def max_edits(word: str) -> int:
    """Return how many edits a correction of ``word`` may make: more for longer words."""
    return 1 if len(word) <= 4 else 2 if len(word) <= 8 else 3


# A word of the vocabulary and its document count, by the word (built and compiled once).
_WORD = Prepared(select(SearchWord.documents).where(SearchWord.word == bindparam("word")))


# The words of a query the vocabulary knows, in one statement.
_KNOWN = select(SearchWord.word).where(SearchWord.word.in_(bindparam("words", expanding=True)))


def unknown_words(conn: Connection, words: tuple[str, ...]) -> list[str]:
    """Return the distinct words of ``words`` the vocabulary does not know, in their order,
    in one statement (a word with digits or of one letter counts as known: none is ever
    suggested)."""
    asked = list(dict.fromkeys(w for w in words if len(w) >= 2 and not any(c.isdigit() for c in w)))
    if not asked:
        return []
    known = {str(w) for (w,) in conn.execute(_KNOWN, {"words": asked})}
    return [w for w in asked if w not in known]


def documents_using(conn: Connection, word: str) -> int:
    """Return the vocabulary's count of the documents using ``word`` (0 when it has none).

    Never more than the number of documents the word matches in their titles or bodies (the
    ``ANY`` tier), on either engine: PostgreSQL's is that number (``ts_stat``'s document count
    over the documents' tsvector), SQLite's the larger of its title and body counts
    (fts5vocab), each a part of the documents matching in either. The vocabulary is rebuilt
    with the index, in the same transaction (``sync``). Only a word of lowercase ASCII
    letters is looked up: both engines index it as itself.
    """
    if not (word.isascii() and word.isalpha() and word.islower()):
        return 0
    found = _WORD.scalar(conn, {"word": word})
    return int(found or 0)


def variants(word: str, limit: int | None = None) -> list[str]:
    """Return the distinct strings one edit away from ``word``, at most ``limit`` of them.

    Deletions first, then transpositions, substitutions and insertions, the ASCII letters
    before the word's own other letters: the order in which they are cut by ``limit``.
    """
    letters = ALPHABET if word.isascii() else ALPHABET + "".join(sorted(set(word) - set(ALPHABET)))
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = itertools.chain(
        (a + b[1:] for a, b in splits if b),
        (a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1),
        (a + c + b[1:] for c in letters for a, b in splits if b),
        (a + c + b for c in letters for a, b in splits),
    )
    found: dict[str, None] = {}
    for edit in edits:
        if limit is not None and len(found) >= limit:
            break
        if edit != word:
            found[edit] = None
    return list(found)


def one_edit(word: str) -> set[str]:
    """Return the strings one deletion, transposition, substitution or insertion away."""
    return set(variants(word))


# Known words among a list of strings, with their document counts. PostgreSQL takes the list
# as one array: planning an IN of 800 values took it 15 ms, the array 4.
_NEAR = select(SearchWord.word, SearchWord.documents).where(
    SearchWord.word.in_(bindparam("near", expanding=True))
)
_NEAR_ARRAY = text("SELECT word, documents FROM search_words WHERE word = ANY(:near)")


def look_up(conn: Connection, near: list[str]) -> dict[str, int]:
    """Return the strings of ``near`` that are known words, with their document counts
    (one statement, counted in ``artcat_search_spelling_variants_total``)."""
    if not near:
        return {}
    VARIANTS.inc(by=len(near))
    stmt = _NEAR_ARRAY if conn.dialect.name == "postgresql" else _NEAR
    return {str(w): int(d) for w, d in conn.execute(stmt, {"near": sorted(near)})}


def candidates(
    conn: Connection, engine: SearchEngine, word: str, limit: int = MAX_VARIANTS_PER_WORD
) -> tuple[dict[str, int], int]:
    """Return known words that may be what ``word`` meant, with their document counts, and
    the number of one-edit variants looked up (at most ``limit``)."""
    found = dict(engine.similar_words(conn, word, CANDIDATES))
    near = variants(word, max(0, min(limit, MAX_VARIANTS_PER_WORD)))
    found.update(look_up(conn, near))
    return found, len(near)


def corrections(
    conn: Connection, engine: SearchEngine, word: str, limit: int = MAX_VARIANTS_PER_WORD
) -> tuple[list[str], int]:
    """Return known words ``word`` was probably meant to be, best first, and the number of
    variants looked up to find them (at most ``limit``)."""
    most = max_edits(word)
    scored = []
    found, looked_up = candidates(conn, engine, word, limit)
    for candidate, documents in found.items():
        distance = edit_distance(word, candidate)
        if candidate != word and distance <= most:
            scored.append((distance, -documents, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:CHOICES_PER_WORD]], looked_up


def suggest(conn: Connection, engine: SearchEngine, query: ParsedQuery) -> ParsedQuery | None:
    """Return the closest corrected query that finds something, or None (also when the
    query is past the bounds of a correction: see the module)."""
    unknown = unknown_words(conn, query.words)
    if not unknown:
        return None
    if any(len(word) > MAX_WORD_CHARS for word in unknown):
        SKIPPED.inc("long_word")
        return None
    if len(unknown) > MAX_CORRECTED_WORDS:
        SKIPPED.inc("many_words")
        return None
    budget = MAX_VARIANTS_PER_QUERY
    fixes: dict[str, list[str]] = {}
    for word in unknown:
        found, looked_up = corrections(conn, engine, word, budget)
        budget -= looked_up
        if not found:
            return None
        fixes[word] = found
    options = [fixes.get(word, [word]) for word in query.words]
    for words in itertools.islice(itertools.product(*options), ATTEMPTS):
        candidate = query.with_words(tuple(words))
        if candidate.words != query.words and engine.exists(conn, candidate):
            return candidate
    return None


def _same_case(model: str, word: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word.capitalize()
    return word


def rewrite(text: str, original: ParsedQuery, corrected: ParsedQuery) -> str:
    """Return the user's query text with the corrected words put in, in the user's case."""
    text = unicodedata.normalize("NFC", text)
    replacements = dict(zip(original.words, corrected.words, strict=True))
    out: list[str] = []
    last = 0
    for match in _WORD_RUN.finditer(text):
        token = match.group()
        folded = fold(token)
        new = replacements.get(folded)
        out.append(text[last : match.start()])
        out.append(_same_case(token, new) if new and new != folded else token)
        last = match.end()
    out.append(text[last:])
    return "".join(out).strip()
