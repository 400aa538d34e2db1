"""Document ids, rows and the Alembic filter of the engine-specific objects."""

from __future__ import annotations

from types import SimpleNamespace

from common.search.documents import Doc, _clip
from common.search.indexer import HASH_BITS, assign_ids, doc_id, document_row
from common.search.schema import include_object


def test_ids_sort_by_popularity_and_stay_put() -> None:
    popular, obscure = doc_id("artist", "a" * 24, 0.9), doc_id("artwork", "b" * 24, 0.1)
    assert popular < obscure
    assert doc_id("artist", "a" * 24, 0.9) == popular
    assert doc_id("artist", "a" * 24, 5.0) >> HASH_BITS == 0  # clamped to the most popular
    assert doc_id("artist", "a" * 24, -1.0) < 2**63


def test_assign_ids_resolves_collisions_and_orders_rows() -> None:
    rows = [{"id": 7, "kind": "gene", "resource_id": r} for r in ("c", "a", "b")]
    rows.append({"id": 3, "kind": "artist", "resource_id": "z"})
    assert [(r["id"], r["resource_id"]) for r in assign_ids(rows)] == [
        (3, "z"),
        (7, "a"),
        (8, "b"),
        (9, "c"),
    ]


def test_document_row_folds_the_text() -> None:
    doc = Doc("artist", "a" * 24, "Paul C\u00e9zanne", "French", "Cezanne, Paul French", 0.7)
    row = document_row(doc)
    assert (row["title"], row["title_terms"], row["title_key"]) == (
        "Paul C\u00e9zanne",
        "paul cezanne",
        "paul cezanne",
    )
    assert row["body_terms"] == "cezanne paul french"


def test_descriptions_are_plain_text() -> None:
    assert _clip("**Bold** and [a link](/gene/x), *nice*") == "Bold and a link, nice"
    assert _clip("  ") is None
    long = _clip("word " * 100)
    assert long is not None and len(long) <= 301 and long.endswith("\u2026")


def test_alembic_skips_only_the_engine_specific_objects() -> None:
    table = SimpleNamespace(name="search_documents")
    column = SimpleNamespace(table=table)
    assert not include_object(None, "search_fts", "table", True, None)
    assert not include_object(None, "search_fts_data", "table", True, None)
    assert not include_object(None, "search_words_trigram_idx", "table", True, None)
    assert include_object(None, "search_documents", "table", True, None)
    assert not include_object(column, "tsv", "column", True, None)
    assert include_object(column, "title", "column", True, None)
    assert not include_object(None, "ix_search_documents_tsv", "index", True, None)
    assert include_object(None, "ix_search_documents_title_key_id", "index", True, None)
