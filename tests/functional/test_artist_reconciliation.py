"""One artist, one record: the museums' artists reconciled, whatever the order of the imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text

from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.tate import load_tate
from common.ids import stable_id
from tests.db_state import truncate_all

pytestmark = [pytest.mark.functional, pytest.mark.data]

# Described by both museums' slices (tests/data/cmoa/README.md names the records added).
SHARED = ("Joseph Mallord William Turner", "Thomas Gainsborough", "William Blake")
# Not the slug: when two artists share a name and are not reconciled (two people of one name),
# the first to arrive gets the bare slug.
ARTIST_COLUMNS = (
    "id, name, sortable_name, gender, birthday, deathday, hometown, location, "
    "nationality, birth_year, artworks_count, published_artworks_count"
)


def state(engine: Engine) -> dict[str, Any]:
    """Return the artists, their identifiers and the artwork links, comparable across runs."""
    with engine.connect() as conn:
        return {
            "artists": sorted(
                tuple(r) for r in conn.execute(text(f"SELECT {ARTIST_COLUMNS} FROM artists"))
            ),
            "sources": sorted(tuple(r) for r in conn.execute(text("SELECT * FROM artist_sources"))),
            "links": sorted(
                tuple(r)
                for r in conn.execute(
                    text("SELECT artwork_id, artist_id, position, role FROM artwork_artists")
                )
            ),
        }


def load(engine: Engine, sample_dir: Path, order: tuple[str, ...]) -> None:
    """Load the museums' slices in the order given."""
    loaders = {"tate": load_tate, "cmoa": load_cmoa}
    for museum in order:
        report = loaders[museum](engine, sample_dir / museum, progress=False)
        assert report.ok, report.summary()


def test_order_of_imports_does_not_change_the_result(clean_db: Engine, sample_dir: Path) -> None:
    load(clean_db, sample_dir, ("tate", "cmoa"))
    tate_first = state(clean_db)
    truncate_all(clean_db)
    load(clean_db, sample_dir, ("cmoa", "tate"))
    assert state(clean_db) == tate_first
    # And again, in either order: nothing changes.
    load(clean_db, sample_dir, ("tate", "cmoa", "tate"))
    assert state(clean_db) == tate_first


def test_an_artist_both_museums_hold_is_one_artist_with_every_work(
    clean_db: Engine, sample_dir: Path
) -> None:
    load(clean_db, sample_dir, ("cmoa", "tate"))
    with clean_db.connect() as conn:
        for name in SHARED:
            [(artist_id, count, nationality, sortable)] = conn.execute(
                text(
                    "SELECT id, artworks_count, nationality, sortable_name FROM artists "
                    "WHERE name = :name"
                ),
                {"name": name},
            ).all()
            sources = {
                r.source
                for r in conn.execute(
                    text("SELECT source FROM artist_sources WHERE artist_id = :a"),
                    {"a": artist_id},
                )
            }
            assert sources == {"tate", "cmoa"}, name
            partners = {
                r.handle
                for r in conn.execute(
                    text(
                        "SELECT DISTINCT p.handle FROM artwork_artists l "
                        "JOIN artworks w ON w.id = l.artwork_id "
                        "JOIN profiles p ON p.owner_id = w.partner_id "
                        "WHERE l.artist_id = :a"
                    ),
                    {"a": artist_id},
                )
            }
            assert partners == {"tate", "cmoa"}, name
            assert count >= 2
            # Tate outranks CMoA where both say something; CMoA fills what Tate leaves empty.
            assert sortable.count(",") == 1 and not sortable.endswith(".")
            assert nationality in ("British", "English")
        # "after Gainsborough" is a link with its role, on the one Gainsborough.
        roles = {
            r.role
            for r in conn.execute(
                text(
                    "SELECT l.role FROM artwork_artists l JOIN artists a ON a.id = l.artist_id "
                    "WHERE a.name = 'Thomas Gainsborough'"
                )
            )
        }
        assert "after" in roles


def test_the_same_name_with_other_dates_is_another_artist(
    clean_db: Engine, sample_dir: Path, tmp_path: Path
) -> None:
    # A CMoA "William Blake" born a century later: same name, not the same person.
    record = (
        sample_dir / "cmoa" / "cmoa" / "3e5aaa10-2375-4b5e-9531-cad8d9807a64.json"
    ).read_text()
    other = (
        record.replace("1757-01-01", "1857-01-01")
        .replace("1827-01-01", "1927-01-01")
        .replace("3e5aaa10-2375-4b5e-9531-cad8d9807a64", "00000000-0000-4000-8000-000000000001")
    )
    assert other != record
    creator = '"artist_id": "cmoa:parties/'
    start = other.index(creator) + len(creator)
    other = other[:start] + "00000000-0000-4000-8000-00000000000b" + other[start + 36 :]
    folder = tmp_path / "cmoa"
    folder.mkdir()
    (folder / "other.json").write_text(other)
    load(clean_db, sample_dir, ("tate",))
    assert load_cmoa(clean_db, folder, progress=False).ok
    with clean_db.connect() as conn:
        blakes = conn.execute(
            text("SELECT birth_year FROM artists WHERE name = 'William Blake' ORDER BY 1")
        ).scalars()
        assert list(blakes) == [1757, 1857]


def test_a_catalog_loaded_before_reconciliation_is_merged_on_the_next_import(
    clean_db: Engine, sample_dir: Path
) -> None:
    load(clean_db, sample_dir, ("tate",))
    # As the importer left it before artists were reconciled: Gainsborough under Tate's own id.
    legacy = stable_id("tate", "artist", "199")
    with clean_db.begin() as conn:
        current = conn.execute(text("SELECT id FROM artists WHERE name = 'Thomas Gainsborough'"))
        [artist_id] = current.scalars()
        conn.execute(
            text(
                "INSERT INTO artists (id, slug, name, sortable_name, birthday, deathday, "
                "target_supply, artworks_count, published_artworks_count, image_versions, "
                "created_at, updated_at) SELECT :legacy, 'thomas-gainsborough-old', name, "
                "sortable_name, birthday, deathday, target_supply, artworks_count, "
                "published_artworks_count, image_versions, created_at, updated_at "
                "FROM artists WHERE id = :a"
            ),
            {"legacy": legacy, "a": artist_id},
        )
        conn.execute(
            text("UPDATE artwork_artists SET artist_id = :legacy WHERE artist_id = :a"),
            {"legacy": legacy, "a": artist_id},
        )
    report = load_tate(clean_db, sample_dir / "tate", progress=False)
    assert report.changed["artists merged away"] == 1, report.summary()
    with clean_db.connect() as conn:
        names = conn.execute(text("SELECT id FROM artists WHERE name = 'Thomas Gainsborough'"))
        assert list(names.scalars()) == [artist_id]
        links = conn.execute(
            text("SELECT count(*) FROM artwork_artists WHERE artist_id = :a"), {"a": artist_id}
        )
        assert links.scalar_one() > 0


def test_namesakes_with_other_death_years_are_told_apart_in_any_order(
    clean_db: Engine, sample_dir: Path, tmp_path: Path
) -> None:
    # A CMoA "William Blake" born the same year as Tate's but dying later: the better-ranked
    # museum (Tate) keeps the reconciled artist whichever is imported first.
    record = (
        sample_dir / "cmoa" / "cmoa" / "3e5aaa10-2375-4b5e-9531-cad8d9807a64.json"
    ).read_text()
    other = record.replace("1827-01-01", "1840-01-01").replace(
        "3e5aaa10-2375-4b5e-9531-cad8d9807a64", "00000000-0000-4000-8000-000000000002"
    )
    creator = '"artist_id": "cmoa:parties/'
    start = other.index(creator) + len(creator)
    other = other[:start] + "00000000-0000-4000-8000-00000000000c" + other[start + 36 :]
    folder = tmp_path / "cmoa"
    folder.mkdir()
    (folder / "other.json").write_text(other)

    load(clean_db, sample_dir, ("tate",))
    assert load_cmoa(clean_db, folder, progress=False).ok
    tate_first = state(clean_db)
    truncate_all(clean_db)
    assert load_cmoa(clean_db, folder, progress=False).ok
    report = load_tate(clean_db, sample_dir / "tate", progress=False)
    assert report.changed["artists moved off a namesake's record"] == 1, report.summary()
    assert state(clean_db) == tate_first
    with clean_db.connect() as conn:
        blakes = conn.execute(
            text("SELECT deathday, artworks_count FROM artists WHERE name = 'William Blake'")
        )
        assert sorted(blakes.all()) == [("1827", 2), ("1840", 1)]
