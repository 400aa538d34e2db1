"""Spelling correction from the indexed vocabulary, for queries that find nothing.

Each word of the query that the index does not know is replaced by a known word that looks like
it: candidates are the known words one edit away (looked up directly: trigrams miss swapped
letters) and the words sharing the most trigrams (FTS5 trigrams on SQLite, pg_trgm on
PostgreSQL). They are ranked here, the same way on both engines: fewest edits first, then the
word used by more documents. Combinations are tried best first until one finds results.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from sqlalchemy import Connection, bindparam, select

from common.api.prepared import Prepared
from common.search.models import SearchWord
from common.search.plan import SearchEngine
from common.search.text import ParsedQuery, fold

CANDIDATES = 24
CHOICES_PER_WORD = 3
# Corrected queries tried (each one a count) before giving up.
ATTEMPTS = 6
_WORD_RUN = re.compile(r"[^\W_]+")
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


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


def is_known(conn: Connection, word: str) -> bool:
    """Tell whether a word is in the vocabulary (words with digits or one letter always are)."""
    if len(word) < 2 or any(ch.isdigit() for ch in word):
        return True
    return bool(_WORD.rows(conn, {"word": word}))


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


def one_edit(word: str) -> set[str]:
    """Return the strings one deletion, transposition, substitution or insertion away."""
    letters = ALPHABET if word.isascii() else ALPHABET + "".join(set(word) - set(ALPHABET))
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    found = {a + b[1:] for a, b in splits if b}
    found |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    found |= {a + c + b[1:] for a, b in splits if b for c in letters}
    found |= {a + c + b for a, b in splits for c in letters}
    found.discard(word)
    return found


def candidates(conn: Connection, engine: SearchEngine, word: str) -> dict[str, int]:
    """Return known words that may be what ``word`` meant, with their document counts."""
    found = dict(engine.similar_words(conn, word, CANDIDATES))
    near = select(SearchWord.word, SearchWord.documents).where(
        SearchWord.word.in_(sorted(one_edit(word)))
    )
    found.update((str(w), int(d)) for w, d in conn.execute(near))
    return found


def corrections(conn: Connection, engine: SearchEngine, word: str) -> list[str]:
    """Return known words ``word`` was probably meant to be, best first."""
    limit = max_edits(word)
    scored = []
    for candidate, documents in candidates(conn, engine, word).items():
        distance = edit_distance(word, candidate)
        if candidate != word and distance <= limit:
            scored.append((distance, -documents, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:CHOICES_PER_WORD]]


def suggest(conn: Connection, engine: SearchEngine, query: ParsedQuery) -> ParsedQuery | None:
    """Return the closest corrected query that finds something, or None."""
    options: list[list[str]] = []
    for word in query.words:
        if is_known(conn, word):
            options.append([word])
            continue
        found = corrections(conn, engine, word)
        if not found:
            return None
        options.append(found)
    if all(len(o) == 1 and o[0] == w for o, w in zip(options, query.words, strict=True)):
        return None
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
