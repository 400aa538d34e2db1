"""Each museum import names the resource types it writes, so the others stay cached."""

from __future__ import annotations

from artcat.cli.load import MUSEUMS, WRITES
from common.catalog_version import CATALOG_TYPES


def test_every_museum_names_what_it_writes() -> None:
    assert set(WRITES) == set(MUSEUMS)
    for kinds in WRITES.values():
        assert kinds is None or set(kinds) <= set(CATALOG_TYPES)


def test_the_moma_artist_list_writes_artists_and_the_search_index() -> None:
    """It adds to artists only, then reindexes search as every import does (their documents
    show the details it adds): cached search pages must be read afresh too."""
    assert WRITES["moma-artists"] == ("artists", "search")
    assert WRITES["tate"] is None and WRITES["cmoa"] is None  # whole catalogs
